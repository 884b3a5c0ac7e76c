#include "model/name.h"

#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace jobviz {

namespace {

// Texts live in fixed chunks that never move, so a reader needs no lock: it
// got its index from Intern (under the lock) or from a job built before it.
constexpr std::uint32_t kChunkBits = 12;
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::uint32_t kMaxChunks = 1u << 16;  // 268 M distinct texts

class NameTable {
 public:
  NameTable() {
    chunks_[0].store(new std::string[kChunkSize], std::memory_order_release);
    index_.emplace(std::string_view(), 0);  // entry 0: ""
  }
  ~NameTable() {
    for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_acquire);
  }
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  std::uint32_t Intern(std::string_view text) {
    const std::lock_guard lock(mutex_);
    if (const auto it = index_.find(text); it != index_.end()) return it->second;
    const std::uint32_t index = count_;
    if (index / kChunkSize >= kMaxChunks) throw std::length_error("more than 268 million distinct job names");
    std::string* chunk = chunks_[index / kChunkSize].load(std::memory_order_relaxed);
    if (chunk == nullptr) {
      chunk = new std::string[kChunkSize];
      chunks_[index / kChunkSize].store(chunk, std::memory_order_release);
    }
    std::string& slot = chunk[index % kChunkSize];
    slot.assign(text);
    index_.emplace(std::string_view(slot), index);
    ++count_;
    return index;
  }

  const std::string& At(std::uint32_t index) const {
    return chunks_[index >> kChunkBits].load(std::memory_order_acquire)[index & (kChunkSize - 1)];
  }

  size_t Size() {
    const std::lock_guard lock(mutex_);
    return count_;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string_view, std::uint32_t> index_;
  std::array<std::atomic<std::string*>, kMaxChunks> chunks_{};
  std::uint32_t count_ = 1;
};

NameTable& Table() {
  static NameTable table;
  return table;
}

// A text of at most 16 bytes as two words that hold all its bytes (with
// its size, exactly the text): the first and the last eight, overlapping
// when it is shorter; four and four below eight; three picks below four.
struct ShortKey {
  std::uint64_t head = 0, tail = 0;
};
constexpr size_t kShortKeyMax = 16;

ShortKey KeyOf(std::string_view text) {
  const char* p = text.data();
  const size_t n = text.size();
  auto load = [](const char* at, auto word) {
    std::memcpy(&word, at, sizeof word);
    return static_cast<std::uint64_t>(word);
  };
  if (n >= 8) return {load(p, std::uint64_t{}), load(p + n - 8, std::uint64_t{})};
  if (n >= 4) return {load(p, std::uint32_t{}) | load(p + n - 4, std::uint32_t{}) << 32, 0};
  return {static_cast<std::uint64_t>(static_cast<unsigned char>(p[0])) |
              static_cast<std::uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
              static_cast<std::uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16,
          0};
}

// The last texts this thread named: a file's jobs use a handful of types
// and a few thousand ids. Short texts (job ids, types) are found by their
// bytes alone, without hashing or reading the table; longer ones by hash,
// checked against the table. Two ways a set, the latest first: with one,
// two of a step's ids that fell on the same slot pushed each other out
// every step, and each miss takes the table's lock and hash (7% of the
// names of a job-dense log, 3% of its parse).
struct RecentNames {
  static constexpr size_t kSets = 512;
  struct Slot {
    std::uint64_t head = 0, tail = 0;  // short: the key; long: the hash in head
    std::uint32_t size = 0;            // of the text; 0 when the slot is empty
    std::uint32_t index = 0;
  };
  std::array<std::array<Slot, 2>, kSets> sets{};
};

std::array<RecentNames::Slot, 2>& SetOf(RecentNames& recent, std::uint64_t head, std::uint64_t tail, size_t size) {
  const std::uint64_t mixed = (head ^ (tail * 0x9e3779b97f4a7c15) ^ size) * 0xbf58476d1ce4e5b9;
  return recent.sets[static_cast<size_t>(mixed >> 55) % RecentNames::kSets];  // the top 9 bits
}

// The slot's index when it holds the text (`same` checks a long text's bytes).
template <typename Same>
bool FindIn(std::array<RecentNames::Slot, 2>& set, std::uint64_t head, std::uint64_t tail, std::uint32_t size,
            const Same& same, std::uint32_t* index) {
  for (size_t way = 0; way < 2; ++way) {
    const RecentNames::Slot& slot = set[way];
    if (slot.size == size && slot.head == head && slot.tail == tail && same(slot.index)) {
      *index = slot.index;
      if (way == 1) std::swap(set[0], set[1]);  // the latest first
      return true;
    }
  }
  return false;
}

void Remember(std::array<RecentNames::Slot, 2>& set, RecentNames::Slot slot) {
  set[1] = set[0];
  set[0] = slot;
}

}  // namespace

Name::Name(std::string_view text) {
  if (text.empty()) return;
  thread_local RecentNames recent;
  const auto size = static_cast<std::uint32_t>(text.size());
  if (text.size() <= kShortKeyMax) {
    const ShortKey key = KeyOf(text);
    auto& set = SetOf(recent, key.head, key.tail, size);
    if (FindIn(set, key.head, key.tail, size, [](std::uint32_t) { return true; }, &index_)) return;
    index_ = Table().Intern(text);
    Remember(set, {key.head, key.tail, size, index_});
    return;
  }
  const size_t hash = std::hash<std::string_view>()(text);
  auto& set = SetOf(recent, hash, 0, size);
  if (FindIn(set, hash, 0, size, [&](std::uint32_t index) { return Table().At(index) == text; }, &index_)) return;
  index_ = Table().Intern(text);
  Remember(set, {hash, 0, size, index_});
}

const std::string& Name::str() const { return Table().At(index_); }

size_t Name::TableSize() { return Table().Size(); }

}  // namespace jobviz
