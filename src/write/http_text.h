// HTTP/1.1 as the live page's server (write/live_server.h) speaks it: a
// request's header read, a response's head written, whole sends on a socket,
// and which addresses and Host headers are this server's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace jobviz {

// Sends all of it (retrying on EINTR); false when the peer went away or
// stopped reading past the socket's send timeout.
bool SendAll(int fd, const char* data, size_t size);
bool SendAll(int fd, const std::string& text);
// A response's head: status line and headers (no caching, no sniffing,
// Connection: close), for a body of `length` bytes of `type`.
std::string Response(const char* status, const char* type, size_t length);
// A plain-text response; its body left out for a HEAD request.
void SendText(int fd, const char* status, const std::string& body, bool head);
// Where the request's header ends (after its blank line), or npos while it
// has not come whole. Lines end with CRLF or a bare LF (RFC 9112 lets a
// server read a bare LF as a line's end): either way it is answered at once.
size_t HeaderEnd(const std::string& request);
// The request's lines, without their CR, up to the blank line.
std::vector<std::string> RequestLines(const std::string& request);
// The value of header `name` (any case) among `lines` (RequestLines), its
// spaces trimmed; "" when there is none.
std::string HeaderValue(const std::vector<std::string>& lines, const std::string& name);
// Sends on `fd` give up after 10 s of a peer not reading.
void SetSendTimeout(int fd);

// "8080" -> ("127.0.0.1", 8080); "0.0.0.0:8080"; "[::1]:8080". False when
// it is none of these.
bool ParseServeAddress(const std::string& text, std::string* host, int* port);

// Whether a request's Host header ("127.0.0.1:8080", "localhost:8080",
// "[::1]:8080", "node7:8080") names this server listening on `port`: an
// address, localhost or this machine's name, and our port if one is given.
bool HostAllowed(const std::string& host_header, int port);

}  // namespace jobviz
