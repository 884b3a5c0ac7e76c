#include "write/live_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_live_server_test {

using namespace jobviz;

namespace {

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  const timeval timeout{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

// Up to `limit` bytes of the answer, or all of it when the server closes.
std::string Receive(int fd, size_t limit = 1 << 20) {
  std::string answer;
  char buffer[4096];
  while (answer.size() < limit) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  return answer;
}

void Send(int fd, const std::string& text) { REQUIRE(::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size())); }

std::string Ask(int port, const std::string& request) {
  const int fd = Connect(port);
  Send(fd, request);
  std::string answer = Receive(fd);
  ::close(fd);
  return answer;
}

std::string Status(const std::string& answer) { return answer.substr(0, answer.find("\r\n")); }

struct Served {
  LiveServer server;
  Served() {
    std::string error;
    REQUIRE(server.Start("127.0.0.1:0", &error));
    server.SetPage("<p>page</p>");
  }
  std::string Get(const std::string& path, const std::string& host) {
    return Ask(server.port(), "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
  }
};

}  // namespace

TEST_CASE("Only requests to this server's own names are answered") {
  Served s;
  const std::string port = std::to_string(s.server.port());
  for (const std::string& host : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LocalHost", "[::1]:" + port, "10.1.2.3"}) {
    INFO(host);
    const std::string answer = s.Get("/", host);
    CHECK(Status(answer) == "HTTP/1.1 200 OK");
    CHECK(answer.ends_with("<p>page</p>"));
  }
  // A page elsewhere that had its own name resolved to 127.0.0.1.
  for (const std::string& host : std::vector<std::string>{"evil.example:" + port, "evil.example", "localhost:1", "localhost.evil.example", "", "[::1"}) {
    INFO(host);
    const std::string answer = s.Get("/", host);
    CHECK(Status(answer) == "HTTP/1.1 403 Forbidden");
    CHECK(answer.find("<p>page</p>") == std::string::npos);
  }
  CHECK(Status(Ask(s.server.port(), "GET / HTTP/1.1\r\n\r\n")) == "HTTP/1.1 403 Forbidden");  // no Host at all
  CHECK(Status(s.Get("/events", "evil.example")) == "HTTP/1.1 403 Forbidden");
  CHECK(s.server.refused() == 8);
  CHECK(s.Get("/", "127.0.0.1").find("Access-Control") == std::string::npos);
}

TEST_CASE("HEAD, bare LF line ends and unknown paths are answered at once") {
  Served s;
  const int port = s.server.port();
  const std::string head = Ask(port, "HEAD /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  CHECK(Status(head) == "HTTP/1.1 200 OK");
  CHECK(head.find("text/event-stream") != std::string::npos);
  CHECK(head.ends_with("\r\n\r\n"));  // the header alone: no stream follows
  const std::string page = Ask(port, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  CHECK(Status(page) == "HTTP/1.1 200 OK");
  CHECK(page.find("<p>") == std::string::npos);
  CHECK(Status(Ask(port, "GET / HTTP/1.1\nHost: localhost\n\n")) == "HTTP/1.1 200 OK");  // not a 408 after 5 s
  CHECK(Status(s.Get("/report", "localhost")) == "HTTP/1.1 503 Service Unavailable");
  CHECK(Status(s.Get("/../etc/passwd", "localhost")) == "HTTP/1.1 404 Not Found");
  CHECK(Status(Ask(port, "POST / HTTP/1.1\r\nHost: localhost\r\n\r\n")) == "HTTP/1.1 405 Method Not Allowed");
  CHECK(Status(Ask(port, "GARBAGE\r\nHost: localhost\r\n\r\n")) == "HTTP/1.1 400 Bad Request");
  CHECK(Status(Ask(port, "GET / HTTP/1.1\r\nHost: localhost\r\nX: " + std::string(9000, 'x'))) ==
        "HTTP/1.1 431 Request Header Fields Too Large");
}

TEST_CASE("Clients that dribble their requests hold no slot") {
  Served s;
  const int port = s.server.port();
  // More slow clients than the server serves at once, each a header byte sent.
  std::vector<int> slow;
  for (int i = 0; i < LiveServer::kMaxConnections + 8; ++i) {
    slow.push_back(Connect(port));
    Send(slow.back(), "G");
  }
  CHECK(Status(s.Get("/", "127.0.0.1")) == "HTTP/1.1 200 OK");
  // The deadline ends them: 408, and the connection closed.
  CHECK(Status(Receive(slow.front())) == "HTTP/1.1 408 Request Timeout");
  for (int fd : slow) ::close(fd);
}

TEST_CASE("An event's text cannot start a field of its own") {
  Served s;
  // A directory named with CR and LF: each begins another data line.
  s.server.Publish("source", "logs\revent: finished\r\ndata: forged\nid: 99");
  const int fd = Connect(s.server.port());
  Send(fd, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string stream;
  while (stream.find("id: 99") == std::string::npos) {
    const std::string more = Receive(fd, 1);
    REQUIRE(!more.empty());
    stream += more;
  }
  ::close(fd);
  const std::string body = stream.substr(stream.find("\r\n\r\n") + 4);
  CHECK(body.find("\r") == std::string::npos);
  CHECK(body.find("event: source\ndata: logs\ndata: event: finished\ndata: data: forged\ndata: id: 99") != std::string::npos);
  CHECK(body.find("\nevent: finished") == std::string::npos);
}

}  // namespace unit_live_server_test
