// The HTTP server of `jobviz follow --serve`: it serves three things held in
// memory and nothing else. GET / is the live page, GET /report the latest
// HTML report, GET /events a stream of server-sent events (step, report,
// stall, resumed) to every page open. Any other path is 404, and no request
// ever opens a file: the paths are compared whole, never joined to a
// directory. Requests are read against a 5 s deadline by the accepting
// thread, so clients that dribble their headers hold nothing; a whole
// request is a thread of its own with a send timeout, so a browser that
// stops reading or goes away costs nobody else anything. Only requests
// whose Host is this server are answered (HostAllowed: DNS rebinding), and
// no response carries CORS headers: no other origin's script reads one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace jobviz {

class LiveServer {
 public:
  static constexpr int kMaxConnections = 64;  // served at once; more: 503
  static constexpr size_t kMaxPending = 256;  // requests still coming; more: the oldest let go
  static constexpr size_t kKeptEvents = 256;  // a page that connects late gets these first

  LiveServer() = default;
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  // Binds ADDR:PORT ("8080": 127.0.0.1) and starts serving. False with
  // `error` when the address is malformed or cannot be bound (taken).
  bool Start(const std::string& address, std::string* error);
  void Stop();
  int port() const { return port_; }
  const std::string& address() const { return bound_; }

  void SetPage(std::string html);    // GET /
  void SetReport(std::string html);  // GET /report
  // Sends `data` (one line of text, no newline) as an event of type `type`
  // to every /events stream, and keeps it for pages that connect later.
  void Publish(const std::string& type, const std::string& data);

  // What was served, for tests and the report on stderr.
  std::uint64_t requests() const { return requests_.load(); }
  std::uint64_t not_found() const { return not_found_.load(); }
  std::uint64_t refused() const { return refused_.load(); }  // a Host not ours

 private:
  struct Event {
    std::uint64_t id;
    std::string text;  // "event: TYPE\ndata: ...\n\n"
  };
  void AcceptLoop();
  void Dispatch(int fd, std::string request);
  void Serve(int fd, const std::string& request);
  void StreamEvents(int fd, std::uint64_t sent);  // `sent`: the last event id the page has

  int listen_fd_ = -1;
  int port_ = 0;
  std::string bound_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<std::uint64_t> requests_{0}, not_found_{0}, refused_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::shared_ptr<const std::string> page_, report_;
  std::deque<Event> events_;
  std::uint64_t next_event_ = 1;
  std::vector<int> open_fds_;  // shut down on Stop so their threads end
};

}  // namespace jobviz
