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
// checked against the table.
struct RecentNames {
  static constexpr size_t kSlots = 1024;
  struct Slot {
    std::uint64_t head = 0, tail = 0;  // short: the key; long: the hash in head
    std::uint32_t size = 0;            // of the text; 0 when the slot is empty
    std::uint32_t index = 0;
  };
  std::array<Slot, kSlots> slots{};
};

size_t SlotOf(std::uint64_t head, std::uint64_t tail, size_t size) {
  const std::uint64_t mixed = (head ^ (tail * 0x9e3779b97f4a7c15) ^ size) * 0xbf58476d1ce4e5b9;
  return static_cast<size_t>(mixed >> 54) % RecentNames::kSlots;  // the top 10 bits
}

}  // namespace

Name::Name(std::string_view text) {
  if (text.empty()) return;
  thread_local RecentNames recent;
  const auto size = static_cast<std::uint32_t>(text.size());
  if (text.size() <= kShortKeyMax) {
    const ShortKey key = KeyOf(text);
    RecentNames::Slot& slot = recent.slots[SlotOf(key.head, key.tail, size)];
    if (slot.size == size && slot.head == key.head && slot.tail == key.tail) {
      index_ = slot.index;
      return;
    }
    index_ = Table().Intern(text);
    slot = {key.head, key.tail, size, index_};
    return;
  }
  const size_t hash = std::hash<std::string_view>()(text);
  RecentNames::Slot& slot = recent.slots[SlotOf(hash, 0, size)];
  if (slot.size == size && slot.head == hash && Table().At(slot.index) == text) {
    index_ = slot.index;
    return;
  }
  index_ = Table().Intern(text);
  slot = {hash, 0, size, index_};
}

const std::string& Name::str() const { return Table().At(index_); }

size_t Name::TableSize() { return Table().Size(); }

}  // namespace jobviz
