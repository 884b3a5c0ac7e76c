#include "model/name.h"

#include <catch2/catch.hpp>
#include <set>
#include <thread>
#include <vector>

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
