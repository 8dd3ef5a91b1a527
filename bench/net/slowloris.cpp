// SPDX-License-Identifier: MIT
// Defence figure for bench/net/run.sh: N clients each sending one byte of an HTTP request
// header per second (a header that never ends) while another connection pings. Prints the
// ping latency and when the server cut the slow clients off (seconds after their first byte).
//
// usage: slowloris HOST PORT [N=1000] [SECONDS=16]
// Output: one line of key=value pairs, prefixed "RESULT".
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "net_common.hpp"

using namespace netbench;

namespace {

struct Slow {
  int fd = -1;
  std::size_t sent = 0;            // bytes of the header sent
  Clock::time_point first_byte{};  // when its first byte went out
  double cut_after_s = -1;         // when the server closed it (or answered), after the first byte
  bool answered = false;           // the server sent a response (a 408, say) before closing
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " HOST PORT [N] [SECONDS]\n";
    return 2;
  }
  const std::string host = argv[1];
  const int port = std::atoi(argv[2]);
  const std::size_t n = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
  const double seconds = argc > 4 ? std::atof(argv[4]) : 16.0;
  raise_nofile();

  // A header that does not end within the run: one byte a second.
  std::string header = "POST / HTTP/1.1\r\nHost: " + host + "\r\nX-Slow: ";
  header.append(256, 'a');

  // Ping latency without the slow clients, for comparison.
  PingLoop baseline = ping_for(host, port, 2.0);

  std::vector<Slow> slow(n);
  std::size_t connect_failures = 0;
  for (Slow& s : slow) {
    s.fd = connect_tcp(host, port, true);
    if (s.fd < 0) ++connect_failures;
  }
  // The pinger starts with the slow clients' first bytes.
  std::atomic<bool> go{false};
  PingLoop pings;
  std::thread pinger([&] {
    while (!go) std::this_thread::yield();
    pings = ping_for(host, port, seconds - 1.0);
  });

  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  go = true;
  for (auto tick = start; Clock::now() < end; tick += std::chrono::seconds(1)) {
    // One byte on each open connection.
    for (Slow& s : slow) {
      if (s.fd < 0 || s.cut_after_s >= 0 || s.sent >= header.size()) continue;
      if (::send(s.fd, header.data() + s.sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
        if (s.sent == 0) s.first_byte = Clock::now();
        ++s.sent;
      } else {
        s.cut_after_s = std::chrono::duration<double>(Clock::now() - s.first_byte).count();
      }
    }
    // Until the next tick, watch for the server closing them (or answering).
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            tick + std::chrono::seconds(1) - Clock::now())
                            .count();
      if (left <= 0) break;
      std::vector<pollfd> open;
      std::vector<Slow*> owners;
      for (Slow& s : slow) {
        if (s.fd < 0 || s.cut_after_s >= 0) continue;
        open.push_back({.fd = s.fd, .events = POLLIN | POLLRDHUP, .revents = 0});
        owners.push_back(&s);
      }
      if (open.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(left));
        break;
      }
      if (::poll(open.data(), open.size(), static_cast<int>(left)) <= 0) continue;
      for (std::size_t i = 0; i < open.size(); ++i) {
        if (open[i].revents == 0) continue;
        Slow& s = *owners[i];
        char chunk[1024];
        const ssize_t got = ::recv(s.fd, chunk, sizeof chunk, MSG_DONTWAIT);
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
        if (got > 0) s.answered = true;
        if (got > 0 && (open[i].revents & (POLLRDHUP | POLLHUP)) == 0)
          continue;  // the close comes next
        s.cut_after_s = std::chrono::duration<double>(Clock::now() - s.first_byte).count();
      }
    }
  }
  pinger.join();

  std::vector<double> cut;
  std::size_t answered = 0;
  for (Slow& s : slow) {
    if (s.cut_after_s >= 0) cut.push_back(s.cut_after_s);
    if (s.answered) ++answered;
    if (s.fd >= 0) close_reset(s.fd);
  }
  const std::size_t cut_count = cut.size();
  std::printf(
      "RESULT slow=%zu connect_failures=%zu cut=%zu answered_before_cut=%zu cut_min_s=%.1f "
      "cut_p50_s=%.1f "
      "cut_max_s=%.1f base_p50_us=%.0f base_p99_us=%.0f p50_us=%.0f p99_us=%.0f max_us=%.0f "
      "pings=%zu ping_failures=%zu ping_bad=%zu\n",
      n - connect_failures, connect_failures, cut_count, answered,
      cut.empty() ? -1.0 : percentile(cut, 0), cut.empty() ? -1.0 : percentile(cut, 50),
      cut.empty() ? -1.0 : percentile(cut, 100), percentile(baseline.latencies_us, 50),
      percentile(baseline.latencies_us, 99), percentile(pings.latencies_us, 50),
      percentile(pings.latencies_us, 99), percentile(pings.latencies_us, 100),
      pings.latencies_us.size(), pings.failures, pings.bad_status);
  return 0;
}
