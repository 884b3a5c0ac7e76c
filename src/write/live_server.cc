#include "write/live_server.h"

#include "write/http_text.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace jobviz {

namespace {

constexpr size_t kMaxRequest = 8192;
constexpr auto kHeartbeat = std::chrono::seconds(15);
constexpr auto kRequestDeadline = std::chrono::seconds(5);

std::string EventStreamHeader() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
         "X-Content-Type-Options: nosniff\r\nConnection: keep-alive\r\n\r\n";
}

}  // namespace

LiveServer::~LiveServer() { Stop(); }

bool LiveServer::Start(const std::string& address, std::string* error) {
  std::string host;
  int port = 0;
  if (!ParseServeAddress(address, &host, &port)) {
    *error = "'" + address + "' is not PORT, ADDR:PORT or [ADDR6]:PORT";
    return false;
  }
  sockaddr_storage storage{};
  socklen_t length = 0;
  const bool v6 = host.find(':') != std::string::npos;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
    length = sizeof *a;
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    length = sizeof *a;
  }
  listen_fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // a restart binds at once; a live listener still refuses
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    *error = "cannot listen on " + host + ":" + std::to_string(port) + ": " + std::strerror(errno);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&storage), &length);
  port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  bound_ = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port_);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return true;
}

void LiveServer::Stop() {
  if (listen_fd_ < 0) return;
  stopping_ = true;
  changed_.notify_all();
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  listen_fd_ = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  changed_.notify_all();
  // Each connection's thread ends within its send timeout at most.
  for (int i = 0; i < 1200 && connections_.load() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Requests are read here, by one thread, each against a deadline: a
// client that sends its header a byte at a time holds no serving thread,
// and when more such wait than kMaxPending the oldest is let go. Only a
// whole request gets a thread of its own.
void LiveServer::AcceptLoop() {
  struct Pending {
    int fd;
    std::string request;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<Pending> pending;
  std::vector<pollfd> polls;
  char buffer[4096];
  while (!stopping_) {
    polls.assign(1, pollfd{listen_fd_, POLLIN, 0});
    for (const Pending& p : pending) polls.push_back({p.fd, POLLIN, 0});
    if (::poll(polls.data(), polls.size(), 200) < 0 && errno != EINTR) break;
    const auto now = std::chrono::steady_clock::now();
    std::vector<Pending> waiting;
    for (size_t i = 0; i < pending.size(); ++i) {
      Pending& p = pending[i];
      bool gone = false;
      if (polls[i + 1].revents != 0) {
        const ssize_t n = ::recv(p.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) p.request.append(buffer, static_cast<size_t>(n));
        else gone = n == 0 || (errno != EAGAIN && errno != EINTR);
      }
      if (gone) {
        ::close(p.fd);
      } else if (HeaderEnd(p.request) != std::string::npos) {
        Dispatch(p.fd, std::move(p.request));
      } else if (p.request.size() > kMaxRequest) {
        SendText(p.fd, "431 Request Header Fields Too Large", "the request's header is over 8 KiB\n", false);
        ::close(p.fd);
      } else if (now >= p.deadline) {
        SendText(p.fd, "408 Request Timeout", "the request did not come whole within 5 s\n", false);
        ::close(p.fd);
      } else {
        waiting.push_back(std::move(p));
      }
    }
    pending = std::move(waiting);
    if ((polls[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetSendTimeout(fd);
    if (pending.size() >= kMaxPending) {
      ::close(pending.front().fd);
      pending.erase(pending.begin());
    }
    pending.push_back({fd, std::string(), now + kRequestDeadline});
  }
  for (const Pending& p : pending) ::close(p.fd);
}

// A whole request: served on a thread of its own, or 503 when
// kMaxConnections are being served (streams of events, mostly).
void LiveServer::Dispatch(int fd, std::string request) {
  if (connections_.load() >= kMaxConnections) {
    SendText(fd, "503 Service Unavailable", "too many connections\n", false);
    ::close(fd);
    return;
  }
  ++connections_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    open_fds_.push_back(fd);
  }
  std::thread([this, fd, request = std::move(request)] {
    Serve(fd, request);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::erase(open_fds_, fd);
    }
    ::close(fd);
    --connections_;
  }).detach();
}

void LiveServer::Serve(int fd, const std::string& request) {
  ++requests_;
  const std::vector<std::string> lines = RequestLines(request);
  const std::string first = lines.empty() ? "" : lines.front();
  const size_t method_end = first.find(' ');
  const size_t target_end = method_end == std::string::npos ? std::string::npos : first.find(' ', method_end + 1);
  if (target_end == std::string::npos) return SendText(fd, "400 Bad Request", "bad request\n", false);
  const std::string method = first.substr(0, method_end);
  const std::string target = first.substr(method_end + 1, target_end - method_end - 1);
  const std::string path = target.substr(0, target.find('?'));
  const bool head = method == "HEAD";
  if (method != "GET" && !head) return SendText(fd, "405 Method Not Allowed", "GET and HEAD only\n", false);
  if (!HostAllowed(HeaderValue(lines, "Host"), port_)) {
    ++refused_;
    return SendText(fd, "403 Forbidden",
                    "jobviz follow answers requests to 127.0.0.1, localhost, [::1], this machine's name or an address "
                    "of it only (a page elsewhere could otherwise read the report through a name of its own)\n",
                    head);
  }
  // Whole paths only: nothing is looked up on disk, so no path can reach a file.
  if (path == "/events") {
    if (head) return void(SendAll(fd, EventStreamHeader()));
    // A page that reconnects says the last event it had: it gets the rest.
    const std::string last = HeaderValue(lines, "Last-Event-ID");
    const bool digits = !last.empty() && last.size() < 19 && last.find_first_not_of("0123456789") == std::string::npos;
    return StreamEvents(fd, digits ? std::stoull(last) : 0);
  }
  std::shared_ptr<const std::string> body;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body = path == "/" ? page_ : path == "/report" ? report_ : nullptr;
  }
  if (path != "/" && path != "/report") {
    ++not_found_;
    return SendText(fd, "404 Not Found", "not found: jobviz serves /, /report and /events only\n", head);
  }
  if (!body) return SendText(fd, "503 Service Unavailable", "no step has finished yet\n", head);
  SendAll(fd, Response("200 OK", "text/html; charset=utf-8", body->size()));
  if (!head) SendAll(fd, *body);
}

void LiveServer::StreamEvents(int fd, std::uint64_t sent) {
  if (!SendAll(fd, EventStreamHeader() + "retry: 1000\n\n")) return;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    std::string out;
    for (const Event& event : events_)
      if (event.id > sent) {
        out += event.text;
        sent = event.id;
      }
    if (out.empty()) {
      if (changed_.wait_for(lock, kHeartbeat) == std::cv_status::timeout) out = ": alive\n\n";  // finds a peer gone
      else continue;
    }
    lock.unlock();
    const bool ok = SendAll(fd, out);
    lock.lock();
    if (!ok) return;
  }
}

void LiveServer::SetPage(std::string html) {
  auto page = std::make_shared<const std::string>(std::move(html));
  std::lock_guard<std::mutex> lock(mutex_);
  page_ = std::move(page);
}

void LiveServer::SetReport(std::string html) {
  auto report = std::make_shared<const std::string>(std::move(html));
  std::lock_guard<std::mutex> lock(mutex_);
  report_ = std::move(report);
}

void LiveServer::Publish(const std::string& type, const std::string& data) {
  std::string text = "event: " + type + "\ndata: ";
  // CR, LF and CRLF each end a line of an event stream (the HTML standard's
  // parser): each starts another data line, so no text (a directory's name)
  // can begin a field of its own, and the type is one of ours.
  for (size_t i = 0; i < data.size(); ++i) {
    if (data[i] == '\r' || data[i] == '\n') {
      text += "\ndata: ";
      i += data[i] == '\r' && i + 1 < data.size() && data[i + 1] == '\n';
    } else {
      text += data[i];
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t id = next_event_++;
    events_.push_back({id, "id: " + std::to_string(id) + "\n" + text + "\n\n"});
    while (events_.size() > kKeptEvents) events_.pop_front();
  }
  changed_.notify_all();
}

}  // namespace jobviz
