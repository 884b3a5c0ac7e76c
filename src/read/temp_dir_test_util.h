// A scratch directory for tests that touch the file system, removed at the
// end of the test; each one is new (the process id and a counter).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace jobviz {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("jobviz_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Creates `relative` (and its directories) holding one line.
  void Touch(const std::string& relative) const {
    std::filesystem::create_directories((path / relative).parent_path());
    std::ofstream(path / relative) << "x\n";
  }
  static inline int counter = 0;
};

}  // namespace jobviz
