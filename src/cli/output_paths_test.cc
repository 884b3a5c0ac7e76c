#include "cli/output_paths.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_output_paths_test {

using namespace jobviz;
namespace fs = std::filesystem;

namespace {

// A scratch directory with one log in it, removed afterwards.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("jobviz_paths_" + std::to_string(::getpid()));
  Scratch() {
    fs::create_directories(dir / "sub");
    std::ofstream(dir / "workerlog.0") << "log\n";
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string at(const std::string& name) const { return (dir / name).string(); }
};

OutputRequest Out(const std::string& path, const char* flag = "-o") {
  return {OutputFormat::kPerfettoJson, path, false, flag};
}

}  // namespace

TEST_CASE("File identity sees through spelling, '..' and symlinks") {
  Scratch s;
  const std::string log = s.at("workerlog.0");
  CHECK(FileIdentity(log) == FileIdentity(s.at("sub/../workerlog.0")));
  CHECK(FileIdentity(log) == FileIdentity(s.at("./workerlog.0")));
  fs::create_symlink(log, s.at("link"));
  CHECK(FileIdentity(log) == FileIdentity(s.at("link")));
  CHECK(FileIdentity(log) != FileIdentity(s.at("sub/workerlog.0")));
  // Files that do not exist yet: the same directory and name.
  CHECK(FileIdentity(s.at("new.json")) == FileIdentity(s.at("sub/../new.json")));
  CHECK(FileIdentity(s.at("new.json")) != FileIdentity(s.at("sub/new.json")));
}

TEST_CASE("Outputs that share a file or standard output clash") {
  Scratch s;
  CHECK(OutputClash({Out(s.at("a.json")), Out(s.at("b.json"), "--chrome-output")}).empty());
  CHECK(OutputClash({Out(s.at("a.json")), Out(s.at("sub/../a.json"), "--chrome-output")}) ==
        "-o " + s.at("a.json") + " and --chrome-output " + s.at("sub/../a.json") + " are the same file");
  CHECK(OutputClash({Out("-"), Out("-", "--summary-json")}) == "-o - and --summary-json - both want standard output");
  // Through a directory that does not exist yet: the writer makes nodir and climbs out of it.
  CHECK(OutputClash({Out(s.at("nodir/../same.json")), Out(s.at("same.json"), "--html")}) ==
        "-o " + s.at("nodir/../same.json") + " and --html " + s.at("same.json") + " are the same file");
  CHECK(OutputClash({Out(s.at("nodir/../../same.json")), Out(s.at("same.json"), "--html")}).empty());
  // A link of one's own to standard output is standard output.
  fs::create_symlink("/dev/stdout", s.at("to_stdout"));
  CHECK(OutputClash({Out(s.at("to_stdout")), Out("-", "--summary-json")}) ==
        "-o " + s.at("to_stdout") + " and --summary-json - both want standard output");
  CHECK(OutputClash({Out("/proc/self/fd/1"), Out("/dev/stdout", "--html")}) ==
        "-o /proc/self/fd/1 and --html /dev/stdout both want standard output");
  // Two writes into one device do no harm.
  CHECK(OutputClash({Out("/dev/null"), Out("/dev/null", "--html")}).empty());
  OutputRequest tables{OutputFormat::kSummaryTables, "-", true, "--summary"};
  CHECK(OutputClash({Out("-"), tables}).empty());  // the tables go to stderr then
}

TEST_CASE("An output that is an input is named, however it is spelt") {
  Scratch s;
  const std::vector<std::string> inputs = {s.at("workerlog.0"), "-"};
  CHECK(OutputOverwritesInput({Out(s.at("trace.json")), Out("-")}, inputs).empty());
  CHECK(OutputOverwritesInput({Out(s.at("sub/../workerlog.0"))}, inputs) ==
        "-o " + s.at("sub/../workerlog.0") + " would overwrite the input " + s.at("workerlog.0"));
  fs::create_symlink(s.at("workerlog.0"), s.at("link"));
  CHECK_FALSE(OutputOverwritesInput({Out(s.at("link"))}, inputs).empty());
}

TEST_CASE("Follow's outputs: none is a followed log, now or once it comes") {
  Scratch s;
  fs::create_directories(s.dir / "tree/machine0");
  std::ofstream(s.dir / "tree/machine0/workerlog.0") << "log\n";
  const std::string tree = s.at("tree");
  CHECK(FollowedOutputClash({Out(s.at("trace.json")), Out(s.at("tree/trace.json"))}, tree, {}).empty());
  // The job's own log, spelt otherwise.
  CHECK(FollowedOutputClash({Out(s.at("tree/machine0/../machine0/workerlog.0"))}, tree, {}).find(
            "would overwrite the input") != std::string::npos);
  // A name the tree's discovery would take as a worker's log: a machine's
  // directory, one to come, or the tree itself.
  for (const char* name : {"tree/machine0/workerlog.9", "tree/machine7/workerlog.1", "tree/workerlog.3.gz"}) {
    INFO(name);
    CHECK(FollowedOutputClash({Out(s.at(name), "--html")}, tree, {}).find("lies in the followed tree") != std::string::npos);
  }
  CHECK(FollowedOutputClash({Out(s.at("tree/machine0/deep/workerlog.9"))}, tree, {}).empty());  // not read
  // Named files: one that is there, and one not there yet.
  const std::vector<std::string> files = {s.at("workerlog.0"), s.at("later/workerlog.5")};
  CHECK_FALSE(FollowedOutputClash({Out(s.at("sub/../workerlog.0"))}, "", files).empty());
  CHECK_FALSE(FollowedOutputClash({Out(s.at("later/../later/workerlog.5"))}, "", files).empty());
  CHECK(FollowedOutputClash({Out(s.at("later/trace.json"))}, "", files).empty());
}

TEST_CASE("Standard output by any name") {
  for (const char* name : {"-", "/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"}) {
    INFO(name);
    CHECK(IsStandardOutput(name));
  }
  Scratch s;
  CHECK_FALSE(IsStandardOutput(s.at("trace.json")));
  CHECK_FALSE(IsStandardOutput("/dev/stderr"));
}

}  // namespace unit_output_paths_test
