#include "read/change_waker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

namespace jobviz {

namespace {

std::atomic<bool> stop_asked{false};
std::atomic<int> stop_signal{0};
int stop_pipe[2] = {-1, -1};

void OnStopSignal(int signal_number) {
  stop_signal.store(signal_number);
  stop_asked.store(true);
  if (stop_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(stop_pipe[1], &byte, 1);
  }
}

void Drain(int fd) {
  char buffer[4096];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
}

}  // namespace

ChangeWaker::ChangeWaker() : inotify_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}

ChangeWaker::~ChangeWaker() {
  if (inotify_ >= 0) ::close(inotify_);
}

void ChangeWaker::Watch(const std::string& directory) {
  if (inotify_ < 0 || !watched_.insert(directory).second) return;
  constexpr uint32_t kEvents = IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_CLOSE_WRITE | IN_DELETE_SELF;
  [[maybe_unused]] const int watch = ::inotify_add_watch(inotify_, directory.c_str(), kEvents);
}

bool ChangeWaker::Wait(double seconds) {
  if (stop_asked.load()) return true;
  pollfd fds[2];
  nfds_t count = 0;
  if (inotify_ >= 0) fds[count++] = {inotify_, POLLIN, 0};
  if (stop_pipe[0] >= 0) fds[count++] = {stop_pipe[0], POLLIN, 0};
  const int timeout_ms = static_cast<int>(std::lround(std::max(0.0, seconds) * 1000));
  const int ready = ::poll(fds, count, timeout_ms);
  if (ready <= 0) return stop_asked.load();  // the time passed (or a signal cut the wait short)
  for (nfds_t i = 0; i < count; ++i)
    if (fds[i].revents & POLLIN) Drain(fds[i].fd);
  return true;
}

void ChangeWaker::HandleStopSignals() {
  if (stop_pipe[0] < 0 && ::pipe2(stop_pipe, O_NONBLOCK | O_CLOEXEC) != 0) stop_pipe[0] = stop_pipe[1] = -1;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(signal_number, &action, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

bool ChangeWaker::StopAsked() { return stop_asked.load(); }

void ChangeWaker::AskStop() { OnStopSignal(0); }

std::string ChangeWaker::StopCause() {
  const int signal_number = stop_signal.load();
  const char* name = signal_number > 0 ? sigabbrev_np(signal_number) : nullptr;
  return name ? std::string(" by SIG") + name : "";
}

}  // namespace jobviz
