#include "model/name.h"

#include <catch2/catch.hpp>
#include <set>
#include <thread>
#include <vector>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_name_test {

using namespace jobviz;

TEST_CASE("A Name is its text, and equal texts are equal Names") {
  const Name forward("forward"), again(std::string("for") + "ward"), backward("backward");
  CHECK(forward.str() == "forward");
  CHECK(forward == again);
  CHECK(forward != backward);
  CHECK(forward == "forward");
  CHECK(forward == std::string_view("forward"));
  CHECK(forward == std::string("forward"));
  CHECK(Name().empty());
  CHECK(Name("") == Name());
  CHECK(Name().str().empty());
  const std::string& text = backward;
  CHECK(text == "backward");
  CHECK(sizeof(Name) == 4);
}

TEST_CASE("Texts with the same hash slot stay apart") {
  // More distinct texts than the per-thread cache has slots, twice over.
  std::vector<Name> names;
  for (int i = 0; i < 2000; ++i) names.emplace_back("id" + std::to_string(i));
  for (int i = 0; i < 2000; ++i) {
    CHECK(names[i].str() == "id" + std::to_string(i));
    CHECK(Name("id" + std::to_string(i)) == names[i]);
  }
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == 2000);
}

TEST_CASE("Names made on several threads at once agree") {
  constexpr int kThreads = 4, kTexts = 20000;  // more than one chunk of the table
  std::vector<std::vector<Name>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kTexts; ++i) made[t].emplace_back("t" + std::to_string((i * (t + 1)) % kTexts));
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kTexts; i += 97) {
      const std::string text = "t" + std::to_string((i * (t + 1)) % kTexts);
      CHECK(made[t][i].str() == text);
      CHECK(made[t][i] == Name(text));
    }
}

// Short texts are found in the thread's cache by their bytes alone: texts
// of every length that differ in any one byte must stay apart, and each
// must come back as the same Name.
TEST_CASE("Texts that differ in one byte are different names, at every length") {
  for (size_t length = 1; length <= 24; ++length) {
    const std::string base(length, 'a');
    std::vector<std::pair<std::string, Name>> named;
    named.emplace_back(base, Name(base));
    for (size_t i = 0; i < length; ++i) {
      std::string other = base;
      other[i] = 'b';
      named.emplace_back(other, Name(other));
    }
    for (size_t a = 0; a < named.size(); ++a) {
      INFO("length " << length << ", text " << named[a].first);
      CHECK(named[a].second.str() == named[a].first);
      CHECK(Name(named[a].first) == named[a].second);
      for (size_t b = a + 1; b < named.size(); ++b) CHECK_FALSE(named[a].second == named[b].second);
    }
  }
}

}  // namespace unit_name_test
