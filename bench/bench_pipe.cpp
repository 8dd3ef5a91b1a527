// SPDX-License-Identifier: MIT
// End to end over pipes: rpc::serve_stream (lines framing) serves the router and session
// BM_SessionPing uses on a thread of its own, while this thread, the client, writes 100,000
// pings in batches of 100 (a line each) and reads every reply. bench/report.py sets the
// figure beside BM_SessionPing/100's.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <batchrpc/batchrpc.hpp>

#include "measure.hpp"
#include "router_fixture.hpp"
#include "workloads.hpp"

namespace {

constexpr std::size_t kRequests = 100000;  // per iteration, in batches of state.range(0)
// No progress for this long fails the run instead of hanging it (a debug build makes steady
// progress far faster than this).
constexpr int kStallMs = 10000;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// serve_stream on one thread for the lifetime of the object, fed through two pipes whose
// client ends are non-blocking, so that one client thread can write and read by turns and
// neither side stalls on a full pipe.
class PipeServer {
 public:
  PipeServer() {
    int up[2] = {-1, -1};    // client -> server
    int down[2] = {-1, -1};  // server -> client
    if (::pipe2(up, O_CLOEXEC) != 0 || ::pipe2(down, O_CLOEXEC) != 0) {
      close_fd(up[0]);
      close_fd(up[1]);
      error_ = "pipe2 failed";
      return;
    }
    server_in_ = up[0];
    client_out_ = up[1];
    client_in_ = down[0];
    server_out_ = down[1];
    ::fcntl(client_out_, F_SETFL, ::fcntl(client_out_, F_GETFL) | O_NONBLOCK);
    ::fcntl(client_in_, F_SETFL, ::fcntl(client_in_, F_GETFL) | O_NONBLOCK);
    thread_ = std::thread([this] {
      try {
        rpc::serve_stream(session_, server_in_, server_out_, {.framing = rpc::Framing::lines});
      } catch (const std::exception& e) {
        server_error_ = e.what();
      }
    });
  }

  ~PipeServer() { stop(); }

  PipeServer(const PipeServer&) = delete;
  PipeServer& operator=(const PipeServer&) = delete;

  // Writes `requests` (`lines` lines) while reading until as many reply lines have come, and
  // checks that they came to `reply_bytes`. Once anything has failed, returns at once.
  void exchange(std::string_view requests, std::size_t lines, std::size_t reply_bytes) {
    if (!error_.empty()) return;
    std::size_t written = 0;
    std::size_t read = 0;
    std::size_t replies = 0;
    while (replies < lines) {
      pollfd fds[2] = {{client_in_, POLLIN, 0}, {written < requests.size() ? client_out_ : -1, POLLOUT, 0}};
      const int ready = ::poll(fds, 2, kStallMs);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return fail(ready == 0 ? "no progress for 10 s" : "poll failed");
      if (fds[1].revents != 0) {
        const ssize_t n = ::write(client_out_, requests.data() + written, requests.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        else if (errno != EAGAIN && errno != EINTR) return fail("writing requests failed");
      }
      if (fds[0].revents != 0) {
        const ssize_t n = ::read(client_in_, buffer_.data(), buffer_.size());
        if (n > 0) {
          read += static_cast<std::size_t>(n);
          replies += static_cast<std::size_t>(std::count(buffer_.data(), buffer_.data() + n, '\n'));
        } else if (n == 0) {
          return fail("the server closed its output");
        } else if (errno != EAGAIN && errno != EINTR) {
          return fail("reading replies failed");
        }
      }
    }
    if (read != reply_bytes) {
      fail("replies of " + std::to_string(read) + " bytes, expected " + std::to_string(reply_bytes));
    }
  }

  // End of input lets serve_stream return; closing the reply pipe's read end as well makes a
  // reply still being written fail rather than block, should a run have stopped midway.
  void stop() {
    close_fd(client_out_);
    close_fd(client_in_);
    if (thread_.joinable()) thread_.join();
    close_fd(server_in_);
    close_fd(server_out_);
    if (error_.empty()) error_ = server_error_;
  }

  // What failed, if anything; complete once stop() has returned.
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  void fail(std::string why) { error_ = std::move(why); }

  rpc::Session session_{bench::router()};
  int server_in_ = -1, server_out_ = -1, client_in_ = -1, client_out_ = -1;
  std::thread thread_;
  std::string error_;
  std::string server_error_;  // written by the server thread; read once it is joined
  std::vector<char> buffer_ = std::vector<char>(std::size_t{1} << 16);
};

// SIGPIPE set to SIG_IGN while it lives, as servers often set it, and put back after.
class SigpipeIgnored {
 public:
  SigpipeIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &saved_);
  }
  ~SigpipeIgnored() { ::sigaction(SIGPIPE, &saved_, nullptr); }
  SigpipeIgnored(const SigpipeIgnored&) = delete;
  SigpipeIgnored& operator=(const SigpipeIgnored&) = delete;

 private:
  struct sigaction saved_ {};
};

void pipe_ping(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  const std::size_t lines = kRequests / size;
  const std::string batch = bench::batch(size, bench::ping);
  std::string requests;
  for (std::size_t i = 0; i < lines; ++i) requests.append(batch).push_back('\n');
  // Every reply line is the router's reply to the batch: checks that all came back whole.
  const std::size_t expected = lines * (bench::router().handle(batch).value_or("").size() + 1);

  PipeServer server;
  bench::measure(state, static_cast<std::int64_t>(lines * size), [&] { server.exchange(requests, lines, expected); });
  server.stop();
  if (!server.error().empty()) state.SkipWithError(server.error().c_str());
}

void BM_PipePing(benchmark::State& state) { pipe_ping(state); }

// The same, in a process that ignores SIGPIPE: the server then writes without blocking it.
void BM_PipePingSigpipeIgnored(benchmark::State& state) {
  const SigpipeIgnored ignored;
  pipe_ping(state);
}

}  // namespace

// Wall time: the work is split between two threads.
BENCHMARK(BM_PipePing)->Arg(100)->UseRealTime();
BENCHMARK(BM_PipePingSigpipeIgnored)->Arg(100)->UseRealTime();
