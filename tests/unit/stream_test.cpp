// SPDX-License-Identifier: MIT
// Stream transport: newline and Content-Length framing, over-long frames, end of input.
#include <batchrpc/stream.hpp>

#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "common/cancellable_sleep.hpp"

namespace {

rpc::Router make_router(std::atomic<int>& notes) {
  rpc::Router router;
  rpc::add_builtins(router);
  router.add("add", [](int a, int b) { return a + b; }, rpc::names("a", "b"));
  router.add("note", [&notes] { ++notes; });
  router.add("sleep", [](int ms, rpc::Context& ctx) {
    if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
    return ms;
  }, rpc::names("ms"));
  router.add("text", [](int n) { return std::string(static_cast<std::size_t>(n), 'x'); }, rpc::names("n"));
  return router;
}

// Feeds `input` in chunks of `chunk` bytes and collects every write.
struct Harness {
  std::atomic<int> notes{0};
  rpc::Router router = make_router(notes);
  std::vector<std::string> writes;

  std::vector<std::string> run(const std::string& input, rpc::StreamOptions options = {},
                               std::size_t chunk = 7, rpc::Executor* executor = nullptr) {
    rpc::Session session(router, {.executor = executor});
    std::size_t at = 0;
    std::mutex m;
    rpc::serve_stream(
        session,
        [&](char* data, std::size_t size) -> std::ptrdiff_t {
          const std::size_t n = std::min({size, chunk, input.size() - at});
          input.copy(data, n, at);
          at += n;
          return static_cast<std::ptrdiff_t>(n);
        },
        [&](std::string_view bytes) {
          std::lock_guard lock(m);
          writes.emplace_back(bytes);
          return true;
        },
        options);
    return writes;
  }
};

const std::string add_1 = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})";
const std::string add_2 = R"({"jsonrpc":"2.0","method":"add","params":{"a":5,"b":5},"id":2})";
const std::string note = R"({"jsonrpc":"2.0","method":"note"})";
const std::string three = R"({"jsonrpc":"2.0","id":1,"result":3})";
const std::string ten = R"({"jsonrpc":"2.0","id":2,"result":10})";

const std::string sleep_1 = R"({"jsonrpc":"2.0","method":"sleep","params":[20000],"id":1})";
const std::string cancelled_1 = R"({"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}})";

std::string framed(std::string_view body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string read_all(int fd) {
  std::string got;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) got.append(buffer, static_cast<std::size_t>(n));
  return got;
}

sigset_t sigpipe_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  return set;
}

// "pending=P blocked=B": SIGPIPE's state on the calling thread.
std::string sigpipe_state() {
  sigset_t pending;
  sigset_t mask;
  sigemptyset(&pending);
  sigpending(&pending);
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return "pending=" + std::to_string(sigismember(&pending, SIGPIPE)) +
         " blocked=" + std::to_string(sigismember(&mask, SIGPIPE));
}

// Runs `body` in a forked child with SIGPIPE at its default action and unblocked, so a write
// that raises it kills the child (not the test runner). Returns what `body` returned, or how
// the child ended when it did not get that far.
template <class Body>
std::string in_child(Body body) {
  int report[2];
  if (::pipe(report) != 0) return "no pipe";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return "no fork";
  if (pid == 0) {
    ::close(report[0]);
    std::signal(SIGPIPE, SIG_DFL);
    const sigset_t set = sigpipe_set();
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    alarm(60);  // a hang is a failure too
    const std::string text = body();
    ::_exit(write_all(report[1], text) ? 0 : 1);
  }
  ::close(report[1]);
  std::string got = read_all(report[0]);
  ::close(report[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "exited with " + std::to_string(WEXITSTATUS(status));
  return got;
}

enum class Reader { reads_after, gone };

// Serves `input` (already written, the peer's writing end closed) from a pipe, writing to a
// pipe that is read once serve_stream has returned (so the replies must fit in the pipe's
// buffer), or whose reading end is closed first (the peer is gone before the first reply).
// Returns what was written, or "returned" when the reader was gone.
std::string serve_through_pipes(const std::string& input, rpc::Session& session, Reader reader = Reader::reads_after) {
  int to_server[2];
  int from_server[2];
  if (::pipe(to_server) != 0 || ::pipe(from_server) != 0) return "no pipe";
  write_all(to_server[1], input);
  ::close(to_server[1]);
  if (reader == Reader::gone) ::close(from_server[0]);
  rpc::serve_stream(session, to_server[0], from_server[1]);
  ::close(to_server[0]);
  ::close(from_server[1]);
  if (reader == Reader::gone) return "returned";
  std::string written = read_all(from_server[0]);
  ::close(from_server[0]);
  return written;
}

// The writes serve_stream makes on a socket, one record each: a SOCK_SEQPACKET socket keeps
// each write apart. `input` is one record, so serve_stream reads it in one read. `during`
// runs on the peer's side with the record of each write as it arrives.
template <class Router, class During>
std::vector<std::string> writes_on_a_seqpacket(Router& router, std::string_view input, During during,
                                               rpc::Executor* executor = nullptr) {
  rpc::Session session(router, {.executor = executor});
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, fds) != 0) return {"no socketpair"};
  std::vector<std::string> records;
  std::thread peer([&] {
    write_all(fds[1], input);
    ::shutdown(fds[1], SHUT_WR);
    std::vector<char> buffer(std::size_t{1} << 20);
    for (ssize_t n; (n = ::recv(fds[1], buffer.data(), buffer.size(), 0)) > 0;) {
      records.emplace_back(buffer.data(), static_cast<std::size_t>(n));
      during(records.back());
    }
  });
  rpc::serve_stream(session, fds[0], fds[0]);
  ::shutdown(fds[0], SHUT_WR);
  peer.join();
  ::close(fds[0]);
  ::close(fds[1]);
  return records;
}

// Waits up to 10 s for `flag`: true if it came.
bool wait_for(const std::atomic<bool>& flag) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_SUITE("stream") {
  TEST_CASE("lines: one reply line per message that has one, none for notifications") {
    Harness h;
    for (const std::size_t chunk : {1u, 7u, 4096u}) {
      CAPTURE(chunk);
      h.writes.clear();
      CHECK(h.run(add_1 + "\n" + note + "\n[" + note + "," + note + "]\n" + add_2 + "\n", {}, chunk) ==
            std::vector<std::string>{three + "\n", ten + "\n"});
    }
    CHECK(h.notes == 9);
  }

  TEST_CASE("lines: CRLF, blank lines and a last line without newline") {
    Harness h;
    CHECK(h.run("\n\r\n   \n" + add_1 + "\r\n\n" + add_2) == std::vector<std::string>{three + "\n", ten + "\n"});
  }

  TEST_CASE("lines: invalid JSON and batch rules on a line") {
    Harness h;
    CHECK(h.run("{oops\n[]\n") ==
          std::vector<std::string>{
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":1,"reason":"Missing a name for object member."}}})" "\n",
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}}})" "\n"});
  }

  TEST_CASE("lines: an over-long line is answered -32090 and skipped, the next one is served") {
    Harness h;
    const std::string too_large =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":64}}})" "\n";
    for (const std::size_t chunk : {1u, 5u, 1u << 16}) {
      CAPTURE(chunk);
      h.writes.clear();
      CHECK(h.run("[" + std::string(500, ' ') + "]\n" + add_1 + "\n", {.max_message_bytes = 64}, chunk) ==
            std::vector<std::string>{too_large, three + "\n"});
    }
    SUBCASE("the limit defaults to the router's max_message_bytes") {
      h.writes.clear();
      h.router = rpc::Router(rpc::Limits{.max_message_bytes = 10});
      h.router.add("x", [] {});
      CHECK(h.run(std::string(20, ' ') + "1\n") ==
            std::vector<std::string>{
                R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":10}}})" "\n"});
    }
  }

  TEST_CASE("lines: a blank line longer than the limit is -32090 like any other, whatever its length") {
    // A line of only whitespace one byte past the limit used to be skipped as blank, while one
    // two bytes past it was answered -32090 (the early check allows one byte for a '\r').
    Harness h;
    const std::string too_large =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":64}}})" "\n";
    for (const std::size_t chunk : {1u, 3u, 4096u}) {
      CAPTURE(chunk);
      h.writes.clear();
      CHECK(h.run(std::string(65, '\t') + "\n" + std::string(66, ' ') + "\n" + std::string(64, ' ') + "\r\n" +
                      add_1 + "\n" + std::string(65, ' '),
                  {.max_message_bytes = 64}, chunk) ==
            std::vector<std::string>{too_large, too_large, three + "\n", too_large});
    }
  }

  TEST_CASE("content-length: frames in, framed replies out") {
    Harness h;
    for (const std::size_t chunk : {1u, 3u, 4096u}) {
      CAPTURE(chunk);
      h.writes.clear();
      CHECK(h.run(framed(add_1) + framed(note) + "content-length:  " + std::to_string(add_2.size()) +
                      " \r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + add_2,
                  {.framing = rpc::Framing::content_length}, chunk) ==
            std::vector<std::string>{framed(three), framed(ten)});
    }
  }

  TEST_CASE("content-length: an oversized frame is answered -32090 and its body skipped") {
    Harness h;
    const std::string big = "[" + std::string(300, ' ') + "]";
    CHECK(h.run(framed(big) + framed(add_1), {.framing = rpc::Framing::content_length, .max_message_bytes = 100}) ==
          std::vector<std::string>{
              framed(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":100}}})"),
              framed(three)});
  }

  TEST_CASE("content-length: an empty body is a parse error, and the next frame is served") {
    Harness h;
    for (const std::size_t chunk : {1u, 4096u}) {
      CAPTURE(chunk);
      h.writes.clear();
      CHECK(h.run("Content-Length: 0\r\n\r\n" + framed(add_1), {.framing = rpc::Framing::content_length}, chunk) ==
            std::vector<std::string>{
                framed(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":0,"reason":"The document is empty."}}})"),
                framed(three)});
    }
  }

  TEST_CASE("content-length: the largest length there is announces a body that never ends") {
    // 2^64 - 1: once mistaken for "reading headers", which read the body as headers.
    Harness h;
    CHECK(h.run("Content-Length: 18446744073709551615\r\n\r\n" + framed(add_1) + "garbage\r\n\r\n",
                {.framing = rpc::Framing::content_length, .max_message_bytes = 100}) ==
          std::vector<std::string>{framed(
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":100}}})")});
  }

  TEST_CASE("content-length: a frame that cannot be read ends the connection with -32700") {
    Harness h;
    const auto bad = [](std::string_view why) {
      return framed(std::string(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"reason":"invalid frame: )") +
                    std::string(why) + "\"}}}");
    };
    CHECK(h.run("Content-Type: x\r\n\r\n" + framed(add_1), {.framing = rpc::Framing::content_length}) ==
          std::vector<std::string>{bad("missing Content-Length")});
    h.writes.clear();
    CHECK(h.run("Content-Length: 12x\r\n\r\n" + framed(add_1), {.framing = rpc::Framing::content_length}) ==
          std::vector<std::string>{bad("invalid Content-Length")});
    h.writes.clear();
    CHECK(h.run("garbage\r\n\r\n", {.framing = rpc::Framing::content_length}) ==
          std::vector<std::string>{bad("header without a colon")});
    h.writes.clear();
    CHECK(h.run("X: " + std::string(10000, 'y'), {.framing = rpc::Framing::content_length}) ==
          std::vector<std::string>{bad("header too long")});
  }

  TEST_CASE("end of input finishes what is in flight before returning") {
    Harness h;
    rpc::ThreadPool pool(2);
    const auto start = std::chrono::steady_clock::now();
    CHECK(h.run(R"({"jsonrpc":"2.0","method":"sleep","params":[100],"id":1})" "\n", {}, 4096, &pool) ==
          std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"result":100})" "\n"});
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(100));
  }

  TEST_CASE("reading goes on while a handler runs, so a later cancel reaches it") {
    Harness h;
    rpc::ThreadPool pool(2);
    const auto start = std::chrono::steady_clock::now();
    CHECK(h.run(R"({"jsonrpc":"2.0","method":"sleep","params":[10000],"id":1})" "\n"
                R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}})" "\n",
                {}, 4096, &pool) ==
          std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}})" "\n"});
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  }

  TEST_CASE("a peer that stops reading ends the loop, and the rest of what was read is not handled") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::Session session(router);
    int reads = 0;
    rpc::serve_stream(
        session,
        [&](char* data, std::size_t) -> std::ptrdiff_t {
          ++reads;
          const std::string lines = add_1 + "\n" + note + "\n";
          lines.copy(data, lines.size());
          return static_cast<std::ptrdiff_t>(lines.size());
        },
        [](std::string_view) { return false; });
    CHECK(reads == 1);
    CHECK(notes == 0);
  }

  TEST_CASE("iostreams: Content-Length framing, a last line with no newline, lines past the read size") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::Session session(router);
    std::istringstream framed_in(framed(add_1) + framed(note) + framed(add_2));
    std::ostringstream framed_out;
    rpc::serve_stream(session, framed_in, framed_out, {.framing = rpc::Framing::content_length});
    CHECK(framed_out.str() == framed(three) + framed(ten));

    std::istringstream unterminated(add_1 + "\n" + add_2);
    std::ostringstream lines_out;
    rpc::serve_stream(session, unterminated, lines_out);
    CHECK(lines_out.str() == three + "\n" + ten + "\n");

    // A line longer than one read (the reader is asked for a few KiB at a time).
    const std::string padded = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1,"pad":")" + std::string(100'000, 'x') + R"("})";
    std::istringstream long_in(padded + "\n" + add_2 + "\n");
    std::ostringstream long_out;
    rpc::serve_stream(session, long_in, long_out);
    CHECK(long_out.str() == three + "\n" + ten + "\n");
    CHECK(notes == 1);
  }

  TEST_CASE("file descriptors and iostreams work the same") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::Session session(router);
    std::istringstream in(add_1 + "\n" + note + "\n" + add_2 + "\n");
    std::ostringstream out;
    rpc::serve_stream(session, in, out);
    CHECK(out.str() == three + "\n" + ten + "\n");

    int to_server[2];
    int from_server[2];
    REQUIRE(::pipe(to_server) == 0);
    REQUIRE(::pipe(from_server) == 0);
    const std::string input = framed(add_1) + framed(add_2);
    REQUIRE(::write(to_server[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    ::close(to_server[1]);
    rpc::serve_stream(session, to_server[0], from_server[1], {.framing = rpc::Framing::content_length});
    ::close(to_server[0]);
    ::close(from_server[1]);
    std::string got;
    char buffer[256];
    for (ssize_t n; (n = ::read(from_server[0], buffer, sizeof buffer)) > 0;) got.append(buffer, static_cast<std::size_t>(n));
    ::close(from_server[0]);
    CHECK(got == framed(three) + framed(ten));
  }

  TEST_CASE("once the peer is gone, a slow request in flight is cancelled, not waited for") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::ThreadPool pool(2);
    rpc::Session session(router, {.executor = &pool});
    std::vector<std::string> writes;
    std::mutex m;
    int reads = 0;
    const auto start = std::chrono::steady_clock::now();
    rpc::serve_stream(
        session,
        [&](char* data, std::size_t) -> std::ptrdiff_t {
          if (reads++ > 0) return 0;  // end of input right after: the requests are in flight
          const std::string lines = sleep_1 + "\n" + add_2 + "\n";
          lines.copy(data, lines.size());
          return static_cast<std::ptrdiff_t>(lines.size());
        },
        [&](std::string_view bytes) {
          std::lock_guard lock(m);
          writes.emplace_back(bytes);
          return false;  // the reply to add_2 finds the peer gone
        });
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));  // not the handler's 20 s
    CHECK(writes == std::vector<std::string>{ten + "\n"});  // nothing written after the failure
    CHECK(session.in_flight() == 0);
  }

  TEST_CASE("a writer that throws ends the connection, its exception comes out after the completions") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    for (const bool executor : {false, true}) {
      CAPTURE(executor);
      rpc::ThreadPool pool(2);
      rpc::Session session(router, {.executor = executor ? &pool : nullptr});
      std::atomic<int> writes{0};
      int reads = 0;
      const std::string input = add_1 + "\n" + (executor ? sleep_1 : note) + "\n";
      const auto start = std::chrono::steady_clock::now();
      CHECK_THROWS_WITH_AS(rpc::serve_stream(
                               session,
                               [&](char* data, std::size_t) -> std::ptrdiff_t {
                                 if (reads++ > 0) return 0;
                                 input.copy(data, input.size());
                                 return static_cast<std::ptrdiff_t>(input.size());
                               },
                               [&](std::string_view) -> bool {
                                 ++writes;
                                 throw std::runtime_error("connection reset");
                               }),
                           "connection reset", std::runtime_error);
      CHECK(writes == 1);  // none after the first failure, not even the cancelled request's
      CHECK(session.in_flight() == 0);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    }
    CHECK(notes == 0);  // the notification after the failed write was not handled
  }

  TEST_CASE("a reader that throws: what is in flight is cancelled and answered before the exception comes out") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::ThreadPool pool(2);
    rpc::Session session(router, {.executor = &pool});
    std::vector<std::string> writes;
    std::mutex m;
    bool returned = false;
    int late_writes = 0;
    int reads = 0;
    const auto start = std::chrono::steady_clock::now();
    try {
      rpc::serve_stream(
          session,
          [&](char* data, std::size_t) -> std::ptrdiff_t {
            if (reads++ > 0) throw std::runtime_error("read failed");
            const std::string line = sleep_1 + "\n";
            line.copy(data, line.size());
            return static_cast<std::ptrdiff_t>(line.size());
          },
          [&](std::string_view bytes) {
            std::lock_guard lock(m);
            if (returned) ++late_writes;
            writes.emplace_back(bytes);
            return true;
          });
      FAIL("serve_stream returned normally");
    } catch (const std::runtime_error& e) {
      std::lock_guard lock(m);
      returned = true;
      CHECK(std::string(e.what()) == "read failed");
      CHECK(writes == std::vector<std::string>{cancelled_1 + "\n"});
    }
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    session.drain();
    std::lock_guard lock(m);
    CHECK(late_writes == 0);
  }

  TEST_CASE("a reader that returns more than it was given room for is an error, not an overrun") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::Session session(router);
    int reads = 0;
    CHECK_THROWS_AS(rpc::serve_stream(
                        session,
                        [&](char*, std::size_t size) { return static_cast<std::ptrdiff_t>(reads++ == 0 ? size + 1 : 0); },
                        [](std::string_view) { return true; }),
                    std::length_error);
    CHECK(reads == 1);
  }

  TEST_CASE("fds: a peer gone from a pipe is a failed write, not SIGPIPE, and nothing more is handled") {
    // SIGPIPE at its default action, and ignored by the process (as serving begins: writes then
    // need no block).
    for (const auto disposition : {SIG_DFL, SIG_IGN}) {
      CAPTURE(disposition == SIG_IGN);
      CHECK(in_child([disposition] {
        std::signal(SIGPIPE, disposition);
        std::atomic<int> notes{0};
        rpc::Router router = make_router(notes);
        rpc::Session session(router);
        const std::string result = serve_through_pipes(add_1 + "\n" + note + "\n", session, Reader::gone);
        return result + " notes=" + std::to_string(notes.load()) + " " + sigpipe_state();
      }) == "returned notes=0 pending=0 blocked=0");
    }
  }

  TEST_CASE("fds: a peer gone from a socket is a failed write, not SIGPIPE") {
    CHECK(in_child([] {
      std::atomic<int> notes{0};
      rpc::Router router = make_router(notes);
      rpc::Session session(router);
      int fds[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return std::string("no socketpair");
      write_all(fds[1], add_1 + "\n" + note + "\n");
      ::close(fds[1]);  // what was sent can still be read; writing fails
      rpc::serve_stream(session, fds[0], fds[0]);
      ::close(fds[0]);
      return "returned notes=" + std::to_string(notes.load()) + " " + sigpipe_state();
    }) == "returned notes=0 pending=0 blocked=0");
  }

  TEST_CASE("fds: SIGPIPE blocked by the caller stays blocked, and a pending one stays pending") {
    CHECK(in_child([] {
      std::atomic<int> notes{0};
      rpc::Router router = make_router(notes);
      rpc::Session session(router);
      const sigset_t set = sigpipe_set();
      pthread_sigmask(SIG_BLOCK, &set, nullptr);
      std::string report = serve_through_pipes(add_1 + "\n", session, Reader::gone);
      report += " " + sigpipe_state();  // the write's own SIGPIPE is taken off
      ::raise(SIGPIPE);                  // the caller's own SIGPIPE is left for the caller
      report += "; " + serve_through_pipes(add_1 + "\n", session, Reader::gone) + " " + sigpipe_state();
      int taken = 0;
      sigwait(&set, &taken);
      return report;
    }) == "returned pending=0 blocked=1; returned pending=1 blocked=1");
  }

  TEST_CASE("fds: handlers see the signal mask as the caller left it, and what they change stays") {
    CHECK(in_child([] {
      rpc::Router router;
      router.add("state", [] {  // runs on the thread that called serve_stream
        const std::string seen = sigpipe_state();
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
        return seen;
      });
      rpc::Session session(router);
      const std::string replies = serve_through_pipes(R"({"jsonrpc":"2.0","method":"state","id":1})" "\n", session);
      sigset_t mask;
      pthread_sigmask(SIG_BLOCK, nullptr, &mask);
      return replies + "after: " + sigpipe_state() +
             " usr1_blocked=" + std::to_string(sigismember(&mask, SIGUSR1));
    }) == R"({"jsonrpc":"2.0","id":1,"result":"pending=0 blocked=0"})" "\nafter: pending=0 blocked=0 usr1_blocked=1");
  }

  TEST_CASE("fds: a SIGPIPE that no write of ours raised is left alone") {
    // Sent to the whole process from a handler, while replies are written to a pipe: it is
    // not taken for the reply's, so SIG_DFL ends the process as it would without batchrpc.
    CHECK(in_child([] {
      rpc::Router router;
      router.add("k", [] { return ::kill(::getpid(), SIGPIPE); });
      rpc::Session session(router);
      return "survived: " + serve_through_pipes(R"({"jsonrpc":"2.0","method":"k","id":1})" "\n", session);
    }) == "killed by signal " + std::to_string(SIGPIPE));
  }

  TEST_CASE("iostreams: std::cout on a pipe whose reader is gone is a failed write, not SIGPIPE") {
    CHECK(in_child([] {
      std::atomic<int> notes{0};
      rpc::Router router = make_router(notes);
      rpc::Session session(router);
      int out[2];
      if (::pipe(out) != 0 || ::dup2(out[1], STDOUT_FILENO) < 0) return std::string("no pipe");
      ::close(out[0]);
      ::close(out[1]);
      std::istringstream in(add_1 + "\n" + note + "\n");
      rpc::serve_stream(session, in, std::cout);
      return "returned notes=" + std::to_string(notes.load()) + " cout_failed=" + std::to_string(!std::cout) +
             " " + sigpipe_state();
    }) == "returned notes=0 cout_failed=1 pending=0 blocked=0");
  }

  TEST_CASE("fds: a socket peer gone while a slow request runs cancels it (one fd both ways)") {
    CHECK(in_child([] {
      std::atomic<int> notes{0};
      rpc::Router router = make_router(notes);
      rpc::ThreadPool pool(2);
      rpc::Session session(router, {.executor = &pool});
      int fds[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return std::string("no socketpair");
      write_all(fds[1], sleep_1 + "\n" + add_2 + "\n");
      ::close(fds[1]);
      const auto start = std::chrono::steady_clock::now();
      rpc::serve_stream(session, fds[0], fds[0]);
      const bool prompt = std::chrono::steady_clock::now() - start < std::chrono::seconds(5);
      ::close(fds[0]);
      return std::string(prompt ? "returned before the handler's 20 s" : "waited for the handler");
    }) == "returned before the handler's 20 s");
  }

  TEST_CASE("fds: a non-blocking input is waited on, not taken for end of input") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::Session session(router);
    int to_server[2];
    int from_server[2];
    REQUIRE(::pipe(to_server) == 0);
    REQUIRE(::pipe(from_server) == 0);
    REQUIRE(::fcntl(to_server[0], F_SETFL, O_NONBLOCK) == 0);
    std::thread peer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the first read finds nothing
      write_all(to_server[1], add_1.substr(0, 10));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // nor does a read mid-line
      write_all(to_server[1], add_1.substr(10) + "\n" + add_2 + "\n");
      ::close(to_server[1]);
    });
    rpc::serve_stream(session, to_server[0], from_server[1]);
    peer.join();
    ::close(to_server[0]);
    ::close(from_server[1]);
    CHECK(read_all(from_server[0]) == three + "\n" + ten + "\n");
    ::close(from_server[0]);
  }

  TEST_CASE("fds: a full non-blocking output is waited on, not taken for a gone peer") {
    std::atomic<int> notes{0};
    rpc::Router router = make_router(notes);
    rpc::Session session(router);
    int to_server[2];
    int from_server[2];
    REQUIRE(::pipe(to_server) == 0);
    REQUIRE(::pipe(from_server) == 0);
    REQUIRE(::fcntl(from_server[1], F_SETFL, O_NONBLOCK) == 0);
    // A reply larger than a pipe holds (64 KiB by default), read only after a pause.
    REQUIRE(write_all(to_server[1], R"({"jsonrpc":"2.0","method":"text","params":[300000],"id":3})" "\n" + add_1 + "\n"));
    ::close(to_server[1]);
    std::string got;
    std::thread peer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      got = read_all(from_server[0]);
    });
    rpc::serve_stream(session, to_server[0], from_server[1]);
    ::close(to_server[0]);
    ::close(from_server[1]);
    peer.join();
    ::close(from_server[0]);
    const std::string expected = R"({"jsonrpc":"2.0","id":3,"result":")" + std::string(300000, 'x') + "\"}\n" + three + "\n";
    CHECK(got.size() == expected.size());
    CHECK((got == expected));  // not printed: 300 KB
  }

  TEST_CASE("fds: the replies to one read's cheap messages go out in one write") {
    rpc::Router router;
    rpc::add_builtins(router);  // ping is inline_only
    router.add("twice", [](int n) { return 2 * n; }, rpc::names("n"), {.inline_only = true});
    const std::string input = R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n"
                              R"({"jsonrpc":"2.0","method":"twice","params":[21],"id":2})" "\n"
                              R"({"jsonrpc":"2.0","method":"missing","id":3})" "\n"
                              R"({"jsonrpc":"2.0","method":"twice","params":[1]})" "\n"
                              "not json\n";
    const auto records = writes_on_a_seqpacket(router, input, [](const std::string&) {});
    CHECK(records == std::vector<std::string>{
        R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n"
        R"({"jsonrpc":"2.0","id":2,"result":42})" "\n"
        R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}})" "\n"
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":1,"reason":"Invalid value."}}})" "\n"});
  }

  TEST_CASE("fds: a held reply is written before a handler that is not inline_only runs, and the rest as it comes") {
    rpc::Router router;
    rpc::add_builtins(router);
    std::atomic<bool> ping_answered{false};
    // Not inline_only: it may take long, so the ping's reply must not wait for it. It waits
    // (up to 10 s) for the peer to have the ping's reply. The rest of that read is then
    // written as it comes.
    router.add("slow", [&] { return wait_for(ping_answered); });
    const std::string input = R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n"
                              R"({"jsonrpc":"2.0","method":"slow","id":2})" "\n"
                              R"({"jsonrpc":"2.0","method":"ping","id":3})" "\n";
    const auto records = writes_on_a_seqpacket(router, input, [&](const std::string& record) {
      if (record.find(R"("id":1,)") != std::string::npos) ping_answered = true;
    });
    CHECK(records == std::vector<std::string>{
        R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n", R"({"jsonrpc":"2.0","id":2,"result":true})" "\n",
        R"({"jsonrpc":"2.0","id":3,"result":{}})" "\n"});
  }

  TEST_CASE("fds: the server's own message goes out at once, with the replies held before it") {
    rpc::Router router;
    rpc::add_builtins(router);
    router.add("announce", [](rpc::Context& ctx) { return ctx.peer().notify("announced"); },
               {.inline_only = true});
    const std::string input = R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n"
                              R"({"jsonrpc":"2.0","method":"announce","id":2})" "\n"
                              R"({"jsonrpc":"2.0","method":"ping","id":3})" "\n";
    const auto records = writes_on_a_seqpacket(router, input, [](const std::string&) {});
    CHECK(records == std::vector<std::string>{
        R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n" R"({"jsonrpc":"2.0","method":"announced"})" "\n",
        R"({"jsonrpc":"2.0","id":2,"result":true})" "\n" R"({"jsonrpc":"2.0","id":3,"result":{}})" "\n"});
  }

  TEST_CASE("fds: a reply made on another thread is written at once, with the replies held before it") {
    rpc::Router router;
    rpc::add_builtins(router);
    std::atomic<bool> awaiting{false};
    std::atomic<bool> work_answered{false};
    // Goes to the executor, and ends once the reading thread is in await_work, so that its
    // reply is made on the executor's thread.
    router.add("work", [&] { return wait_for(awaiting) ? 7 : 0; });
    // Cheap by its registration, but waits (up to 10 s) for the peer to have work's reply,
    // which the executor's thread must write without waiting for this read to be used up.
    router.add("await_work", [&] {
      awaiting = true;
      return wait_for(work_answered);
    }, {.inline_only = true});
    rpc::ThreadPool pool(1);
    const std::string input = R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n"
                              R"({"jsonrpc":"2.0","method":"work","id":2})" "\n"
                              R"({"jsonrpc":"2.0","method":"await_work","id":3})" "\n";
    const auto records = writes_on_a_seqpacket(router, input, [&](const std::string& record) {
      if (record.find(R"("id":2,)") != std::string::npos) work_answered = true;
    }, &pool);
    CHECK(records == std::vector<std::string>{
        R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n" R"({"jsonrpc":"2.0","id":2,"result":7})" "\n",
        R"({"jsonrpc":"2.0","id":3,"result":true})" "\n"});
  }

  TEST_CASE("fds: when held replies cannot be written, the peer is gone and the next handler is not run") {
    CHECK(in_child([] {
      std::atomic<int> notes{0};
      rpc::Router router = make_router(notes);
      rpc::Session session(router);
      const std::string ping = R"({"jsonrpc":"2.0","method":"ping","id":7})";
      // ping's reply is held (ping is inline_only); `note` is not inline_only, so the reply is
      // written first, which fails: neither note runs, nor the add between them.
      const std::string result = serve_through_pipes(ping + "\n" + note + "\n" + add_1 + "\n" + note + "\n",
                                                     session, Reader::gone);
      return result + " notes=" + std::to_string(notes.load());
    }) == "returned notes=0");
  }

  TEST_CASE("fds: a stream served inside a cheap handler first writes what the outer one holds") {
    rpc::Router router;
    rpc::add_builtins(router);
    std::atomic<bool> ping_answered{false};
    router.add("slow", [&] { return wait_for(ping_answered); });  // not inline_only
    // Registered cheap, but serves a stream of its own on this thread, whose `slow` call must
    // not keep the outer ping's reply waiting.
    router.add("relay", [&router] {
      std::istringstream in(R"({"jsonrpc":"2.0","method":"slow","id":9})" "\n");
      std::ostringstream out;
      rpc::Session inner(router);
      rpc::serve_stream(inner, in, out);
      return out.str();
    }, {.inline_only = true});
    const std::string input = R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n"
                              R"({"jsonrpc":"2.0","method":"relay","id":2})" "\n";
    const auto records = writes_on_a_seqpacket(router, input, [&](const std::string& record) {
      if (record.find(R"("id":1,)") != std::string::npos) ping_answered = true;
    });
    CHECK(records == std::vector<std::string>{
        R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n",
        R"({"jsonrpc":"2.0","id":2,"result":"{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":true}\n"})" "\n"});
  }

  TEST_CASE("fds: at most 64 KiB of replies is held, past that they are written at once") {
    rpc::Router router;
    router.add("text", [](int n) { return std::string(static_cast<std::size_t>(n), 'x'); }, rpc::names("n"),
               {.inline_only = true});
    const auto call = [](int id) {
      return R"({"jsonrpc":"2.0","method":"text","params":[40000],"id":)" + std::to_string(id) + "}\n";
    };
    const auto reply = [](int id) {
      return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":")" + std::string(40000, 'x') + "\"}\n";
    };
    const auto records = writes_on_a_seqpacket(router, call(1) + call(2) + call(3), [](const std::string&) {});
    REQUIRE(records.size() == 2);
    CHECK((records[0] == reply(1) + reply(2)));  // not printed: 80 KB
    CHECK((records[1] == reply(3)));
  }

  TEST_CASE("a writer of the caller's own gets one frame a call, as promised") {
    Harness h;
    const auto writes = h.run(R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n" + add_1 + "\n",
                              {}, 1 << 16);
    CHECK(writes == std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"result":{}})" "\n", three + "\n"});
  }
}
