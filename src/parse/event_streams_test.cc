#include "parse/event_streams.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "read/temp_dir_test_util.h"

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_event_streams_test {

using namespace jobviz;

namespace {

void Append(const std::filesystem::path& path, const std::string& text) { std::ofstream(path, std::ios::app) << text; }

std::string Header(const std::string& machine) {
  return R"({"files":[],"format":"jobviz-events","machine":")" + machine + R"(","stream":true,"version":2})" "\n";
}

}  // namespace

TEST_CASE("Steps wait for a named stream until it gives a log, ends, breaks or is deleted") {
  TempDir dir;
  const std::filesystem::path a = dir.path / "machine0.jsonl", b = dir.path / "machine1.jsonl";
  Append(a, Header("machine0") + R"({"w":0,"k":"file","file":"machine0/workerlog.0"})" "\n");
  EventStreams streams({a.string(), b.string()});
  LineParser parser;
  streams.PollAll(parser);
  CHECK(streams.size() == 1);
  CHECK(streams.Waited() == b.string());  // not there yet

  Append(b, Header("machine1"));
  streams.PollAll(parser);
  CHECK(streams.Waited() == b.string());  // there, its extract has found no log yet

  Append(b, R"({"w":3,"k":"file","file":"machine1/workerlog.3"})" "\n");
  streams.PollAll(parser);
  CHECK(streams.size() == 2);
  CHECK(streams.Waited().empty());
}

TEST_CASE("A stream that ends, breaks or is deleted without a log holds no step back") {
  TempDir dir;
  const std::filesystem::path path = dir.path / "machine0.jsonl";
  LineParser parser;
  SECTION("ended") {
    Append(path, Header("machine0") + R"({"end":"jobviz-events","records":0})" "\n");
  }
  SECTION("broken") {
    Append(path, "not an events stream\n");
  }
  SECTION("deleted") {
    Append(path, Header("machine0"));
    EventStreams streams({path.string()});
    streams.PollAll(parser);
    CHECK(streams.Waited() == path.string());
    std::filesystem::remove(path);
    streams.PollAll(parser);
    CHECK(streams.Waited().empty());
    streams.PollAll(parser);
    CHECK(streams.Waited().empty());  // still gone
    Append(path, Header("machine0"));  // back: a new file, read from its start
    streams.PollAll(parser);
    CHECK(streams.Waited() == path.string());
    return;
  }
  EventStreams streams({path.string()});
  streams.PollAll(parser);
  CHECK(streams.Waited().empty());
}

}  // namespace unit_event_streams_test
