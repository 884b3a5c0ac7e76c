// Sleeps until a watched directory changes, a stop is asked for, or a time
// passes: inotify where the kernel offers it, so a local write wakes
// `jobviz follow` at once; a plain timed sleep elsewhere (the time is the
// poll interval: NFS and Lustre show other nodes' writes to no inotify).
// Never a busy wait.
#pragma once

#include <set>
#include <string>

namespace jobviz {

class ChangeWaker {
 public:
  ChangeWaker();
  ~ChangeWaker();
  ChangeWaker(const ChangeWaker&) = delete;
  ChangeWaker& operator=(const ChangeWaker&) = delete;

  // Watches a directory for files written, created, moved in or deleted
  // (once per directory; one that cannot be watched is polled).
  void Watch(const std::string& directory);
  // Waits up to `seconds`. True when a change or a stop woke it.
  bool Wait(double seconds);
  bool uses_inotify() const { return inotify_ >= 0; }

  // SIGINT, SIGTERM and SIGHUP (a closed ssh session) set StopAsked() and
  // wake Wait (async-signal-safe: the handler writes one byte to a pipe).
  // SIGPIPE is ignored: a reader of stdout that goes away is a failed write,
  // which the writer turns into AskStop, never a death with outputs unwritten.
  static void HandleStopSignals();
  static bool StopAsked();
  static void AskStop();
  // " by SIGHUP": the signal that asked to stop; "" when none did.
  static std::string StopCause();

 private:
  int inotify_ = -1;
  std::set<std::string> watched_;
};

}  // namespace jobviz
