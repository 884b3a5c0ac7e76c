// A one-line progress display on stderr while the logs are read, for runs
// long enough to need one: only on a terminal, never with -q, and silent for
// the first half second.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "parse/scan_logs.h"
#include "read/log_discovery.h"

namespace jobviz {

class Progress {
 public:
  Progress(const LogSet& logs, bool enabled);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // What ScanLogs reports into; empty when the display is off.
  ScanProgress hooks();

 private:
  void Run();

  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<size_t> files_done_{0};
  std::uint64_t total_ = 0;
  bool sized_ = true, shown_ = false, done_ = false;
  size_t files_ = 0;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

}  // namespace jobviz
