// Job types and ids repeat across millions of jobs ("forward", "3"), so each
// distinct text is stored once, in a table for the whole process, and a job
// holds a 4-byte Name: 40 bytes a job (model.h) instead of 104 with two std::strings.
// Names are made on the scan threads at once; a small per-thread cache keeps
// them off the table's lock. Two Names are equal exactly when their texts are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace jobviz {

class Name {
 public:
  Name() = default;  // ""
  Name(std::string_view text);  // NOLINT: a Name stands in for its text
  Name(const char* text) : Name(std::string_view(text)) {}
  Name(const std::string& text) : Name(std::string_view(text)) {}

  const std::string& str() const;
  operator const std::string&() const { return str(); }
  operator std::string_view() const { return str(); }
  bool empty() const { return index_ == 0; }
  // A number that only this text has (hashing, tables); not stable across runs.
  std::uint32_t index() const { return index_; }
  size_t size() const { return str().size(); }

  friend bool operator==(Name a, Name b) { return a.index_ == b.index_; }
  friend bool operator==(Name a, std::string_view b) { return a.str() == b; }
  friend bool operator==(Name a, const char* b) { return a.str() == b; }
  friend bool operator==(Name a, const std::string& b) { return a.str() == b; }

  // How many distinct texts the table holds (tests, reports).
  static size_t TableSize();

 private:
  std::uint32_t index_ = 0;  // 0 is ""
};

// Compute(text) for each distinct name, worked out once and then looked up
// by the name's index: millions of jobs share a handful of job types. The
// last few names asked are kept in front of the table: a worker's jobs take
// turns among three or four types, and a hash lookup a job was a tenth of
// the passes over every job that ask it.
template <typename T, T (*Compute)(const std::string&)>
class PerName {
 public:
  T Of(Name name) {
    for (const Recent& recent : recent_)
      if (recent.index == name.index() && recent.known) return recent.value;
    const auto [it, inserted] = known_.try_emplace(name.index());
    if (inserted) it->second = Compute(name.str());
    recent_[next_++ % kRecent] = {name.index(), true, it->second};
    return it->second;
  }

 private:
  struct Recent {
    std::uint32_t index = 0;
    bool known = false;
    T value{};
  };
  static constexpr size_t kRecent = 4;
  Recent recent_[kRecent];
  size_t next_ = 0;
  std::unordered_map<std::uint32_t, T> known_;  // by Name::index()
};

}  // namespace jobviz
