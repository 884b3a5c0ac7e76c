#include "read/log_discovery.h"

#include "read/temp_dir_test_util.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_log_discovery_test {

using namespace jobviz;
namespace fs = std::filesystem;

TEST_CASE("Natural order puts machine2 before machine10") {
  CHECK(NaturalLess("machine2", "machine10"));
  CHECK_FALSE(NaturalLess("machine10", "machine2"));
  CHECK(NaturalLess("machine9", "machine10"));
  CHECK(NaturalLess("a", "b"));
  CHECK(NaturalLess("machine", "machine0"));
  CHECK(NaturalLess("machine1", "machine01"));
  CHECK_FALSE(NaturalLess("machine3", "machine3"));
  CHECK(NaturalLess("machine99999999999999999999", "machine100000000000000000000"));
}

TEST_CASE("Worker index from the file name") {
  CHECK(WorkerIndexOf("workerlog.0") == 0);
  CHECK(WorkerIndexOf("workerlog.12") == 12);
  CHECK(WorkerIndexOf("workerlog.3.gz") == 3);
  CHECK_FALSE(WorkerIndexOf("workerlog."));
  CHECK_FALSE(WorkerIndexOf("workerlog.x"));
  CHECK_FALSE(WorkerIndexOf("workerlog.1.bak"));
  CHECK_FALSE(WorkerIndexOf("endpoints.log"));
  CHECK_FALSE(WorkerIndexOf("workerlog.99999999999"));
}

TEST_CASE("Single machine: every workerlog, in worker order") {
  TempDir dir;
  for (const char* f : {"workerlog.10", "workerlog.2", "workerlog.0", "endpoints.log"}) dir.Touch(f);
  DiscoveryError error;
  const auto set = DiscoverLogs(dir.path.string(), false, {}, &error);
  REQUIRE(set);
  REQUIRE(set->files.size() == 3);
  CHECK(set->files[0].worker == 0);
  CHECK(set->files[1].worker == 2);
  CHECK(set->files[2].worker == 10);
  CHECK(set->machine_names == std::vector<std::string>{dir.path.filename().string()});
}

TEST_CASE("Multi machine: machines in natural order, devices on every machine") {
  TempDir dir;
  for (int m : {0, 1, 2, 10})
    for (int w : {0, 1, 2, 3}) dir.Touch("machine" + std::to_string(m) + "/workerlog." + std::to_string(w));
  dir.Touch("notes/workerlog.0");
  DiscoveryError error;
  const auto set = DiscoverLogs(dir.path.string(), true, {2, 3}, &error);
  REQUIRE(set);
  CHECK(set->machine_names == std::vector<std::string>{"machine0", "machine1", "machine2", "machine10"});
  REQUIRE(set->files.size() == 8);
  CHECK(set->files[6].machine == 3);
  CHECK(set->files[6].worker == 2);
  CHECK(set->files[6].path == (dir.path / "machine10" / "workerlog.2").string());
}

TEST_CASE("A requested worker that does not exist names the path and what exists") {
  TempDir dir;
  dir.Touch("workerlog.0");
  dir.Touch("workerlog.1");
  DiscoveryError error;
  CHECK_FALSE(DiscoverLogs(dir.path.string(), false, {0, 5}, &error));
  CHECK(error.message.find("workerlog.5: no such file") != std::string::npos);
  CHECK(error.message.find("workerlog.0, workerlog.1") != std::string::npos);
}

TEST_CASE("Helpful errors for a wrong directory layout") {
  TempDir dir;
  dir.Touch("machine0/workerlog.0");
  DiscoveryError error;
  CHECK_FALSE(DiscoverLogs(dir.path.string(), false, {}, &error));
  CHECK(error.hint.find("--multi_machine") != std::string::npos);

  TempDir flat;
  flat.Touch("workerlog.0");
  CHECK_FALSE(DiscoverLogs(flat.path.string(), true, {}, &error));
  CHECK(error.hint.find("drop --multi_machine") != std::string::npos);

  CHECK_FALSE(DiscoverLogs((dir.path / "missing").string(), false, {}, &error));
  CHECK(error.message.find("no such directory") != std::string::npos);
}

TEST_CASE("Compressed logs are found, and a plain file wins over its .gz twin") {
  TempDir dir;
  dir.Touch("workerlog.0.gz");
  dir.Touch("workerlog.1");
  dir.Touch("workerlog.1.gz");
  DiscoveryError error;
  const auto set = DiscoverLogs(dir.path.string(), false, {}, &error);
  REQUIRE(set);
  REQUIRE(set->files.size() == 2);
  CHECK(fs::path(set->files[0].path).filename() == "workerlog.0.gz");
  CHECK(fs::path(set->files[1].path).filename() == "workerlog.1");
}

TEST_CASE("Named files not there yet: left out and listed, the others' indices kept") {
  TempDir dir;
  dir.Touch("workerlog.0");
  dir.Touch("b.log");
  const std::string a = (dir.path / "workerlog.0").string(), later = (dir.path / "workerlog.3").string();
  DiscoveryError error;
  CHECK_FALSE(LogSetFromFiles({a, later}, &error));  // a batch run: an error
  std::vector<std::string> missing;
  auto set = LogSetFromFiles({a, later}, &error, &missing);
  REQUIRE(set);
  REQUIRE(set->files.size() == 1);
  CHECK(set->files[0].worker == 0);
  CHECK(missing == std::vector<std::string>{later});
  // Positions: the second file keeps index 1 though the first is missing.
  missing.clear();
  set = LogSetFromFiles({(dir.path / "x.log").string(), (dir.path / "b.log").string()}, &error, &missing);
  REQUIRE(set);
  REQUIRE(set->files.size() == 1);
  CHECK(set->files[0].worker == 1);
  CHECK(missing.size() == 1);
}

TEST_CASE("Following a tree: a machine directory without logs yet is left out, the others found") {
  TempDir dir;
  dir.Touch("machine0/workerlog.0");
  std::filesystem::create_directories(dir.path / "machine1");  // its job not started yet
  dir.Touch("machine2/workerlog.0");
  DiscoveryError error;
  CHECK_FALSE(DiscoverLogs(dir.path.string(), true, {}, &error));  // a batch run: an error
  const auto set = DiscoverLogs(dir.path.string(), true, {}, &error, true);
  REQUIRE(set);
  CHECK(set->machine_names == std::vector<std::string>{"machine0", "machine2"});
  REQUIRE(set->files.size() == 2);
  CHECK(set->files[1].machine == 1);
  TempDir empty;
  std::filesystem::create_directories(empty.path / "machine0");
  CHECK_FALSE(DiscoverLogs(empty.path.string(), true, {}, &error, true));
  CHECK(error.message.find("no workerlog.N files") != std::string::npos);
}

}  // namespace unit_log_discovery_test
