// SPDX-License-Identifier: MIT
// What the load tools of bench/net/ share: the messages, a blocking keep-alive HTTP client for
// one connection, percentiles, the open-file limit, and a process's resident memory.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace netbench {

using Clock = std::chrono::steady_clock;

// A singleton ping (n == 1) or a batch of n pings with ids 1..n.
inline std::string ping_message(std::size_t n) {
  if (n <= 1) return R"({"jsonrpc":"2.0","method":"ping","id":1})";
  std::string out = "[";
  for (std::size_t i = 1; i <= n; ++i) {
    if (i > 1) out += ',';
    out += R"({"jsonrpc":"2.0","method":"ping","id":)" + std::to_string(i) + "}";
  }
  out += ']';
  return out;
}

inline std::string http_post(std::string_view body, std::string_view host_header) {
  std::string out = "POST / HTTP/1.1\r\nHost: ";
  out += host_header;
  out += "\r\nContent-Type: application/json\r\nContent-Length: ";
  out += std::to_string(body.size());
  out += "\r\n\r\n";
  out += body;
  return out;
}

// Occurrences of `needle` in `text`.
inline std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size()))
    ++n;
  return n;
}

// Raises the soft open-file limit to the hard one; returns the limit now in force.
inline rlim_t raise_nofile() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  getrlimit(RLIMIT_NOFILE, &files);
  return files.rlim_cur;
}

// VmRSS of a process in KiB (0 if it cannot be read).
inline long rss_kib(long pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

// The p-th percentile (0..100) of `values`, nearest rank; sorts them.
inline double percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(values.size()));
  return values[std::min(rank, values.size() - 1)];
}

// The result line of a load tool (run.sh reads it): requests answered in `elapsed` seconds,
// their latency percentiles, and the failures. Sorts `latencies_us`.
inline void print_load_result(std::vector<double>& latencies_us, double elapsed, std::size_t errors,
                              std::size_t bad_replies) {
  const std::size_t done = latencies_us.size();
  std::printf(
      "RESULT requests=%zu rps=%.0f p50_us=%.0f p99_us=%.0f max_us=%.0f errors=%zu "
      "bad_replies=%zu\n",
      done, static_cast<double>(done) / elapsed, percentile(latencies_us, 50), percentile(latencies_us, 99),
      percentile(latencies_us, 100), errors, bad_replies);
}

// A TCP connection to IPv4 address `host`:`port`, waiting at most `timeout` for it; -1 and
// errno on failure (ETIMEDOUT when it took too long).
inline int connect_tcp(const std::string& host, int port, bool nonblocking = false,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<unsigned short>(port));
  inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  int error = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    error = errno;
    if (error == EINPROGRESS) {
      pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
      if (::poll(&p, 1, static_cast<int>(timeout.count())) == 1) {
        socklen_t size = sizeof error;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
      } else {
        error = ETIMEDOUT;
      }
    }
  }
  if (error != 0) {
    ::close(fd);
    errno = error;
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!nonblocking) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Closes with a reset instead of FIN, so that the client side keeps no TIME_WAIT entry (ten
// thousand of them per run would use up the loopback's ephemeral ports).
inline void close_reset(int fd) {
  linger hard{.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

// One blocking keep-alive HTTP/1.1 connection that POSTs a message and reads the response.
class HttpClient {
 public:
  HttpClient(std::string host, int port) : host_(std::move(host)), port_(port) {}
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;
  ~HttpClient() { disconnect(); }

  bool connect() {
    disconnect();
    fd_ = connect_tcp(host_, port_);
    buffer_.clear();
    return fd_ >= 0;
  }
  void disconnect() {
    if (fd_ >= 0) close_reset(fd_);
    fd_ = -1;
  }
  [[nodiscard]] int fd() const { return fd_; }

  // Sends `request` (a whole HTTP request) and waits at most `timeout` for the response.
  // Returns the status (the body in `body`), or nullopt: the connection failed, closed or
  // timed out (then it is closed; connect() again).
  std::optional<int> exchange(std::string_view request, std::string& body,
                              std::chrono::milliseconds timeout) {
    if (fd_ < 0) return std::nullopt;
    const auto until = Clock::now() + timeout;
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return fail();
      sent += static_cast<std::size_t>(n);
    }
    return read_response(body, until);
  }

 private:
  std::optional<int> fail() {
    disconnect();
    return std::nullopt;
  }

  bool fill(Clock::time_point until) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  std::optional<int> read_response(std::string& body, Clock::time_point until) {
    std::size_t end = 0;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(until)) return fail();
    }
    const std::string head = buffer_.substr(0, end + 2);
    int status = 0;
    if (std::sscanf(head.c_str(), "HTTP/1.%*d %d", &status) != 1) return fail();
    std::size_t length = 0;
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (const auto at = lower.find("\r\ncontent-length:"); at != std::string::npos) {
      length = std::strtoul(lower.c_str() + at + 17, nullptr, 10);
    } else if (lower.find("\r\ntransfer-encoding: chunked") != std::string::npos) {
      return fail();  // not spoken by the servers measured here
    }
    while (buffer_.size() < end + 4 + length) {
      if (!fill(until)) return fail();
    }
    body.assign(buffer_, end + 4, length);
    buffer_.erase(0, end + 4 + length);
    if (lower.find("\r\nconnection: close") != std::string::npos) disconnect();
    return status;
  }

  std::string host_;
  int port_;
  int fd_ = -1;
  std::string buffer_;
};

// Pings over `client` for `seconds`, one request in flight; latencies in microseconds.
struct PingLoop {
  std::vector<double> latencies_us;
  std::size_t failures = 0;    // timeouts, resets, closes (each followed by a reconnect)
  std::size_t bad_status = 0;  // answered, but not 200 with a result
};

inline PingLoop ping_for(const std::string& host, int port, double seconds,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(2000)) {
  PingLoop out;
  HttpClient client(host, port);
  const std::string request = http_post(ping_message(1), host + ":" + std::to_string(port));
  std::string body;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (client.fd() < 0 && !client.connect()) {
      ++out.failures;
      usleep(10'000);
      continue;
    }
    const auto start = Clock::now();
    const auto status = client.exchange(request, body, timeout);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!status) {
      ++out.failures;
      continue;
    }
    if (*status != 200 || body.find("\"result\"") == std::string::npos) ++out.bad_status;
    out.latencies_us.push_back(us);
  }
  return out;
}

}  // namespace netbench
