#include "write/http_text.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

// Every unit test file is one namespace: they compile as a unity build.
namespace unit_http_text_test {

using namespace jobviz;

TEST_CASE("Host names this server answers to") {
  CHECK(HostAllowed("127.0.0.1:8080", 8080));
  CHECK(HostAllowed("[::1]", 8080));
  CHECK_FALSE(HostAllowed("127.0.0.1:8081", 8080));
  CHECK_FALSE(HostAllowed("[::1]x", 8080));
  CHECK_FALSE(HostAllowed("attacker.example", 8080));
  CHECK_FALSE(HostAllowed(":8080", 8080));
}

TEST_CASE("--serve's address: a port, ADDR:PORT or [ADDR6]:PORT, addresses only") {
  std::string host;
  int port = 0;
  REQUIRE(ParseServeAddress("8080", &host, &port));
  CHECK((host == "127.0.0.1" && port == 8080));
  REQUIRE(ParseServeAddress("0.0.0.0:9000", &host, &port));
  CHECK((host == "0.0.0.0" && port == 9000));
  REQUIRE(ParseServeAddress("[::1]:8080", &host, &port));
  CHECK((host == "::1" && port == 8080));
  for (const char* bad : {"", "localhost:8080", "8080x", "65536", "[::1]8080", ":8080", "1.2.3.4:"})
    CHECK_FALSE(ParseServeAddress(bad, &host, &port));
}

TEST_CASE("A request's header: where it ends (CRLF or bare LF), its lines and a header's value") {
  CHECK(HeaderEnd("GET / HTTP/1.1\r\nHost: x\r\n") == std::string::npos);
  CHECK(HeaderEnd("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody") == 27);  // the body starts there
  CHECK(HeaderEnd("GET / HTTP/1.1\nHost: x\n\n") == 24);
  const std::vector<std::string> lines = RequestLines("GET / HTTP/1.1\r\nhost:  node7:8080 \r\n\r\nX-After: no\r\n");
  REQUIRE(lines == std::vector<std::string>{"GET / HTTP/1.1", "host:  node7:8080 "});
  CHECK(HeaderValue(lines, "Host") == "node7:8080");
  CHECK(HeaderValue(lines, "X-After").empty());
  CHECK(Response("200 OK", "text/plain", 5).find("Content-Length: 5\r\n") != std::string::npos);
}

}  // namespace unit_http_text_test
