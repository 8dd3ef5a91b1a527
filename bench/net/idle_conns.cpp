// SPDX-License-Identifier: MIT
// Defence figure for bench/net/run.sh: N idle connections held open against an HTTP server
// while another connection pings. Prints the server's resident memory per idle connection
// (before and after one ping on each) and the ping latency with and without them.
//
// usage: idle_conns HOST PORT SERVER_PID [N=10000] [PING_SECONDS=10]
// Output: one line of key=value pairs, prefixed "RESULT".
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "net_common.hpp"

using namespace netbench;

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: " << argv[0] << " HOST PORT SERVER_PID [N] [PING_SECONDS]\n";
    return 2;
  }
  const std::string host = argv[1];
  const int port = std::atoi(argv[2]);
  const long pid = std::atol(argv[3]);
  const std::size_t n = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 10'000;
  const double seconds = argc > 5 ? std::atof(argv[5]) : 10.0;
  const rlim_t limit = raise_nofile();
  if (limit < n + 16) {
    std::cerr << "idle_conns: the open-file limit is " << limit << ", too few for " << n
              << " connections\n";
  }

  // Warm the server (its threads, buffers, a session), then the baseline.
  PingLoop baseline = ping_for(host, port, 2.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long rss_before = rss_kib(pid);

  std::cerr << "idle_conns: baseline " << baseline.latencies_us.size() << " pings; opening " << n
            << " connections\n";
  // Open the connections; none sends anything yet.
  std::vector<int> fds;
  fds.reserve(n);
  int connect_errno = 0;
  const auto open_start = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    const int fd = connect_tcp(host, port);
    if (fd < 0) {
      connect_errno = errno;
      break;
    }
    fds.push_back(fd);
  }
  const double open_seconds = std::chrono::duration<double>(Clock::now() - open_start).count();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the server accept them all
  const long rss_bare = rss_kib(pid);
  std::cerr << "idle_conns: " << fds.size() << " open in " << open_seconds
            << " s; one ping on each\n";

  // Check that they are served (a refused connection is answered and closed at once), and
  // one ping on each so that each has a session: all are written first, then all read.
  const std::string request = http_post(ping_message(1), host + ":" + std::to_string(port));
  std::size_t sent = 0;
  for (const int fd : fds) {
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size()))
      ++sent;
  }
  // The replies, within 10 s in all (a server that serves few connections at a time answers
  // few: the rest count as lost).
  std::size_t answered = 0, refused = 0;
  std::vector<pollfd> waiting;
  for (const int fd : fds) waiting.push_back({.fd = fd, .events = POLLIN, .revents = 0});
  std::string scratch(4096, '\0');
  const auto replies_until = Clock::now() + std::chrono::seconds(10);
  while (!waiting.empty() && Clock::now() < replies_until) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(replies_until - Clock::now()).count();
    if (::poll(waiting.data(), waiting.size(), static_cast<int>(std::max<long>(left, 1))) <= 0)
      break;
    std::vector<pollfd> still;
    for (const pollfd& p : waiting) {
      if (p.revents == 0) {
        still.push_back({.fd = p.fd, .events = POLLIN, .revents = 0});
        continue;
      }
      const ssize_t got = ::recv(p.fd, scratch.data(), scratch.size(), MSG_DONTWAIT);
      if (got > 0 && std::string_view(scratch.data(), static_cast<std::size_t>(got))
                             .rfind("HTTP/1.1 200", 0) == 0) {
        ++answered;
      } else {
        ++refused;  // another status, or closed
      }
    }
    waiting.swap(still);
  }
  const std::size_t lost = waiting.size();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const long rss_pinged = rss_kib(pid);
  std::cerr << "idle_conns: " << answered << " answered; pinging for " << seconds << " s\n";

  // Ping on another connection while the others stay idle.
  PingLoop loaded = ping_for(host, port, seconds);

  // Still open? A connection the server closed reads end-of-stream now.
  std::size_t closed_by_server = 0;
  for (const int fd : fds) {
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, 0) > 0) {
      char byte;
      if (::recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) ++closed_by_server;
    }
  }
  for (const int fd : fds) close_reset(fd);

  const double held = static_cast<double>(fds.size());
  std::printf(
      "RESULT opened=%zu connect_error=%s open_s=%.2f sent=%zu answered=%zu refused=%zu lost=%zu "
      "closed_by_server=%zu "
      "rss_before_kib=%ld rss_bare_kib=%ld rss_pinged_kib=%ld bare_per_conn_kib=%.2f "
      "pinged_per_conn_kib=%.2f "
      "base_p50_us=%.0f base_p99_us=%.0f base_n=%zu "
      "p50_us=%.0f p99_us=%.0f max_us=%.0f pings=%zu ping_failures=%zu ping_bad=%zu\n",
      fds.size(), connect_errno != 0 ? std::strerror(connect_errno) : "none", open_seconds, sent,
      answered, refused, lost, closed_by_server, rss_before, rss_bare, rss_pinged,
      held > 0 ? static_cast<double>(rss_bare - rss_before) / held : 0.0,
      held > 0 ? static_cast<double>(rss_pinged - rss_before) / held : 0.0,
      percentile(baseline.latencies_us, 50), percentile(baseline.latencies_us, 99),
      baseline.latencies_us.size(), percentile(loaded.latencies_us, 50),
      percentile(loaded.latencies_us, 99), percentile(loaded.latencies_us, 100),
      loaded.latencies_us.size(), loaded.failures, loaded.bad_status);
  return 0;
}
