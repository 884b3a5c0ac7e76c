#include "write/live_server.h"

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

bool SendAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // the peer went away, or stopped reading past the timeout
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}
bool SendAll(int fd, const std::string& text) { return SendAll(fd, text.data(), text.size()); }

std::string Response(const char* status, const char* type, size_t length) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type + "\r\nContent-Length: " +
         std::to_string(length) +
         "\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n";
}

void SendText(int fd, const char* status, const std::string& body, bool head) {
  SendAll(fd, Response(status, "text/plain; charset=utf-8", body.size()));
  if (!head) SendAll(fd, body);
}

// The request line and headers, up to the blank line; "" when there is none.
std::string ReadRequest(int fd) {
  std::string request;
  char buffer[1024];
  while (request.size() < kMaxRequest && request.find("\r\n\r\n") == std::string::npos) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    request.append(buffer, static_cast<size_t>(n));
  }
  return request;
}

std::string HeaderValue(const std::string& request, const std::string& name) {
  size_t at = 0;
  while ((at = request.find("\r\n", at)) != std::string::npos) {
    at += 2;
    if (request.size() - at > name.size() && strncasecmp(request.c_str() + at, name.c_str(), name.size()) == 0 &&
        request[at + name.size()] == ':') {
      const size_t begin = request.find_first_not_of(' ', at + name.size() + 1);
      const size_t end = request.find("\r\n", at);
      return begin < end ? request.substr(begin, end - begin) : "";
    }
  }
  return "";
}

void SetTimeouts(int fd) {
  const timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
}

}  // namespace

bool ParseServeAddress(const std::string& text, std::string* host, int* port) {
  std::string port_text = text;
  *host = "127.0.0.1";
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find("]:");
    if (close == std::string::npos) return false;
    *host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    *host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *port = std::stoi(port_text);
  if (*port > 65535 || host->empty()) return false;
  in6_addr v6{};
  in_addr v4{};
  return ::inet_pton(AF_INET, host->c_str(), &v4) == 1 || ::inet_pton(AF_INET6, host->c_str(), &v6) == 1;
}

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

void LiveServer::AcceptLoop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetTimeouts(fd);
    if (connections_.load() >= kMaxConnections) {
      SendText(fd, "503 Service Unavailable", "too many connections\n", false);
      ::close(fd);
      continue;
    }
    ++connections_;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_fds_.push_back(fd);
    }
    std::thread([this, fd] {
      Serve(fd);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        std::erase(open_fds_, fd);
      }
      ::close(fd);
      --connections_;
    }).detach();
  }
}

void LiveServer::Serve(int fd) {
  const std::string request = ReadRequest(fd);
  if (request.empty()) return;
  ++requests_;
  const size_t method_end = request.find(' ');
  const size_t target_end = method_end == std::string::npos ? std::string::npos : request.find(' ', method_end + 1);
  if (target_end == std::string::npos) return SendText(fd, "400 Bad Request", "bad request\n", false);
  const std::string method = request.substr(0, method_end);
  const std::string target = request.substr(method_end + 1, target_end - method_end - 1);
  const std::string path = target.substr(0, target.find('?'));
  const bool head = method == "HEAD";
  if (method != "GET" && !head) return SendText(fd, "405 Method Not Allowed", "GET only\n", false);
  // Whole paths only: nothing is looked up on disk, so no path can reach a file.
  if (path == "/events" && !head) {
    // A page that reconnects says the last event it had: it gets the rest.
    const std::string last = HeaderValue(request, "Last-Event-ID");
    const bool digits = !last.empty() && last.size() < 19 && last.find_first_not_of("0123456789") == std::string::npos;
    return StreamEvents(fd, digits ? std::stoull(last) : 0);
  }
  std::shared_ptr<const std::string> body;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body = path == "/" ? page_ : path == "/report" ? report_ : nullptr;
  }
  if (path != "/" && path != "/report" && path != "/events") {
    ++not_found_;
    return SendText(fd, "404 Not Found", "not found: jobviz serves /, /report and /events only\n", head);
  }
  if (!body) return SendText(fd, "503 Service Unavailable", "no step has finished yet\n", head);
  SendAll(fd, Response("200 OK", "text/html; charset=utf-8", body->size()));
  if (!head) SendAll(fd, *body);
}

void LiveServer::StreamEvents(int fd, std::uint64_t sent) {
  const std::string header =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
      "X-Content-Type-Options: nosniff\r\nConnection: keep-alive\r\n\r\nretry: 1000\n\n";
  if (!SendAll(fd, header)) return;
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
  for (char c : data) text += c == '\n' ? std::string("\ndata: ") : std::string(1, c);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t id = next_event_++;
    events_.push_back({id, "id: " + std::to_string(id) + "\n" + text + "\n\n"});
    while (events_.size() > kKeptEvents) events_.pop_front();
  }
  changed_.notify_all();
}

}  // namespace jobviz
