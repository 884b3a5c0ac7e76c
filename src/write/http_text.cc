#include "write/http_text.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

namespace jobviz {

namespace {

bool IsAddress(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

bool SameName(const std::string& a, const std::string& b) { return a.size() == b.size() && strncasecmp(a.c_str(), b.c_str(), a.size()) == 0; }

}  // namespace

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

size_t HeaderEnd(const std::string& request) {
  for (size_t at = request.find('\n'); at != std::string::npos; at = request.find('\n', at + 1)) {
    if (at + 1 < request.size() && request[at + 1] == '\n') return at + 2;
    if (at + 2 < request.size() && request[at + 1] == '\r' && request[at + 2] == '\n') return at + 3;
  }
  return std::string::npos;
}

std::vector<std::string> RequestLines(const std::string& request) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t end = request.find('\n'); end != std::string::npos; begin = end + 1, end = request.find('\n', begin)) {
    std::string line = request.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string HeaderValue(const std::vector<std::string>& lines, const std::string& name) {
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.size() > name.size() && line[name.size()] == ':' && strncasecmp(line.c_str(), name.c_str(), name.size()) == 0) {
      const size_t begin = line.find_first_not_of(" \t", name.size() + 1);
      const size_t end = line.find_last_not_of(" \t");
      return begin == std::string::npos ? "" : line.substr(begin, end + 1 - begin);
    }
  }
  return "";
}

void SetSendTimeout(int fd) {
  const timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

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
  return IsAddress(*host);
}

bool HostAllowed(const std::string& host_header, int port) {
  std::string host = host_header, port_text;
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string::npos || (close + 1 < host.size() && host[close + 1] != ':')) return false;
    port_text = close + 1 < host.size() ? host.substr(close + 2) : "";
    host = host.substr(1, close - 1);
  } else if (const size_t colon = host.find(':'); colon != std::string::npos) {
    port_text = host.substr(colon + 1);
    host.resize(colon);
  }
  if (!port_text.empty() && port_text != std::to_string(port)) return false;
  if (host.empty()) return false;
  // A name in the Host header is one a page's script may have had resolved
  // to this address (DNS rebinding): only the loopback's own name and this
  // machine's name, as hostname prints it, are this server's. An address
  // written out is no name anybody else controls.
  char name[256] = {};
  const bool named = ::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0';
  return IsAddress(host) || SameName(host, "localhost") || (named && SameName(host, name));
}

}  // namespace jobviz
