#include "model/name.h"

#include <array>
#include <atomic>
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

// The last texts this thread named, by hash: a file's jobs use a handful.
struct RecentNames {
  static constexpr size_t kSlots = 256;
  struct Slot {
    size_t hash = 0;
    std::uint32_t index = 0;
    bool used = false;
  };
  std::array<Slot, kSlots> slots{};
};

}  // namespace

Name::Name(std::string_view text) {
  if (text.empty()) return;
  thread_local RecentNames recent;
  const size_t hash = std::hash<std::string_view>()(text);
  RecentNames::Slot& slot = recent.slots[hash % RecentNames::kSlots];
  if (slot.used && slot.hash == hash && Table().At(slot.index) == text) {
    index_ = slot.index;
    return;
  }
  index_ = Table().Intern(text);
  slot = {hash, index_, true};
}

const std::string& Name::str() const { return Table().At(index_); }

size_t Name::TableSize() { return Table().Size(); }

}  // namespace jobviz
