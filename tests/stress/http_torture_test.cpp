// SPDX-License-Identifier: MIT
// HTTP server lifetime torture: rpc::net::Servers are started, shut down and destroyed over and
// over, in every way the API allows (listen() then start(), or start() then listen(); destroyed
// at once, after shutdown(), after shutdown() from several threads at once, or freed), while
// keep-alive clients (cpp-httplib's) keep sending requests: sums, batches, notifications,
// requests naming a session, and sleeps that a shutdown cancels. Every reply a client gets must be exactly right for its request;
// a failed connection is all that a stopping server may cause. Seeded (the environment
// variable BATCHRPC_TORTURE_SEED replaces the fixed seed) and bounded in time; fewer cycles
// under ThreadSanitizer and AddressSanitizer.
#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/net.hpp>
#include <batchrpc/router.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include "support/http_test_client.hpp"

#include "common/cancellable_sleep.hpp"

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int scale_down = 4;
#elif defined(__SANITIZE_ADDRESS__)
constexpr int scale_down = 2;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int scale_down = 4;
#elif __has_feature(address_sanitizer)
constexpr int scale_down = 2;
#else
constexpr int scale_down = 1;
#endif
#else
constexpr int scale_down = 1;
#endif

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Aborts the test binary if the torture makes no end: a server that never stops, or a
// destructor that never returns, would otherwise hang until CTest's timeout.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([limit](std::stop_token stop) {
          std::mutex m;
          std::condition_variable_any cv;
          std::unique_lock lock(m);
          if (!cv.wait_for(lock, stop, limit, [] { return false; }) && !stop.stop_requested()) {
            std::fprintf(stderr, "http torture: no end in %lld s: a server did not stop or was not destroyed\n",
                         static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}

 private:
  std::jthread thread_;
};

unsigned seed() {
  if (const char* text = std::getenv("BATCHRPC_TORTURE_SEED")) return static_cast<unsigned>(std::strtoul(text, nullptr, 10));
  return 20250611;
}

bool refused(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  const int error = errno;
  ::close(fd);
  return !connected && error == ECONNREFUSED;
}

// What the clients share with the loop that makes and destroys servers.
struct Shared {
  rpc::Router router;
  std::atomic<long> notes{0};
  std::atomic<int> port{-1};  // the newest server's; clients move to it when it changes
  std::atomic<bool> done{false};
  std::atomic<long> answered{0};       // replies checked
  std::atomic<long> failed{0};         // requests whose connection failed
  std::atomic<long> cancelled{0};      // requests a shutdown cancelled
  std::atomic<long> unknown{0};        // requests naming a session the server did not have
  std::mutex mutex;
  std::vector<std::string> problems;

  Shared() {
    rpc::add_builtins(router, {.server_name = "torture", .server_version = "1"});
    router.add("add", [](long a, long b) { return a + b; }, rpc::names("a", "b"));
    router.add("sleep", [](int ms, rpc::Context& ctx) {
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
    router.add("note", [this] { ++notes; });
  }

  void problem(std::string what) {
    std::lock_guard lock(mutex);
    if (problems.size() < 20) problems.push_back(std::move(what));
  }
};

// One client: a keep-alive connection to the newest server, requests one after another. Only
// the first client sends sleeps long enough that only a shutdown ends them, so the others keep
// the servers busy.
void client(Shared& shared, unsigned client_seed, bool long_sleeps) {
  std::mt19937 random(client_seed);
  std::unique_ptr<httplib::Client> connection;
  int connected_to = -1;
  std::string session;  // the last Rpc-Session-Id the server sent
  long id = 0;
  while (!shared.done) {
    const int port = shared.port;
    if (port < 0) {
      std::this_thread::sleep_for(1ms);
      continue;
    }
    if (connection == nullptr || port != connected_to) {
      connection = std::make_unique<httplib::Client>("127.0.0.1", port);
      connection->set_keep_alive(true);
      connection->set_tcp_nodelay(true);  // else each request waits for a delayed ACK
      connection->set_connection_timeout(10s);
      connection->set_read_timeout(30s);
      connection->set_write_timeout(10s);
      connected_to = port;
      session.clear();
    }
    ++id;
    const long a = static_cast<long>(random() % 100000);
    const long b = static_cast<long>(random() % 100000);
    const std::string sid = std::to_string(id);
    const std::string sum = R"({"jsonrpc":"2.0","id":)" + sid + R"(,"result":)" + std::to_string(a + b) + "}";
    const std::string add = R"({"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(a) + "," +
                            std::to_string(b) + R"(],"id":)" + sid + "}";
    const std::string cancelled = R"({"jsonrpc":"2.0","id":)" + sid +
                                  R"(,"error":{"code":-32800,"message":"Request cancelled"}})";
    // A shutdown cancels what is still running after its grace (-32800).
    std::string body;
    std::string expected;  // empty: 204, nothing to send
    std::string alternative = cancelled;
    bool named = false;
    const auto kind = static_cast<unsigned>(random() % 20);
    if (kind < 10) {
      body = add;
      expected = sum;
    } else if (kind < 13) {
      body = "[" + add + R"(,{"jsonrpc":"2.0","method":"note"}])";
      expected = "[" + sum + "]";
      alternative = "[" + cancelled + "]";
    } else if (kind < 14) {
      body = R"({"jsonrpc":"2.0","method":"note"})";
    } else if (kind < 17) {
      const int ms = long_sleeps && random() % 8 == 0 ? 60000 : static_cast<int>(random() % 5);
      body = R"({"jsonrpc":"2.0","method":"sleep","params":[)" + std::to_string(ms) + R"(],"id":)" + sid + "}";
      expected = R"({"jsonrpc":"2.0","id":)" + sid + R"(,"result":)" + std::to_string(ms) + "}";
    } else {
      body = add;
      expected = sum;
      named = !session.empty();
    }
    httplib::Headers headers;
    if (named) headers.emplace("Rpc-Session-Id", session);
    const httplib::Result res = connection->Post("/", headers, body, "application/json");
    if (!res) {
      ++shared.failed;
      std::this_thread::sleep_for(1ms);  // the server is stopping, or gone: wait for the next
      continue;
    }
    if (named && res->status == 404) {
      ++shared.unknown;  // evicted, or a new server on the same port
      session.clear();
      continue;
    }
    const int status = expected.empty() ? 204 : 200;
    if (res->status != status || (res->body != expected && (expected.empty() || res->body != alternative))) {
      shared.problem("request " + body + " got " + std::to_string(res->status) + " " + res->body);
    }
    if (!expected.empty() && res->body == alternative) ++shared.cancelled;
    if (res->has_header("Rpc-Session-Id")) session = res->get_header_value("Rpc-Session-Id");
    ++shared.answered;
  }
}

}  // namespace

TEST_SUITE("http torture") {
  TEST_CASE("http: servers started, shut down and destroyed over and over under live keep-alive clients") {
    const unsigned base_seed = seed();
    INFO("seed ", base_seed, " (set BATCHRPC_TORTURE_SEED to repeat or vary)");
    Watchdog watchdog(240s);
    rpc::ThreadPool pool{2};  // some servers' executor: outlives them all
    Shared shared;
    std::mt19937 random(base_seed);
    constexpr int clients = 4;
    const int cycles = 400 / scale_down;
    const auto stop_making_servers = Clock::now() + 120s;
    std::vector<std::jthread> threads;
    for (int c = 0; c < clients; ++c) threads.emplace_back([&shared, c, s = base_seed + 1 + static_cast<unsigned>(c)] { client(shared, s, c == 0); });

    int made = 0;
    for (int cycle = 0; cycle < cycles && Clock::now() < stop_making_servers; ++cycle, ++made) {
      const rpc::net::ServerOptions options{
          .executor = random() % 2 == 0 ? &pool : nullptr,
          .handler_threads = 2,
          .io_threads = 1 + random() % 2,
          .idle_timeout = 1s,
          .shutdown_grace = 200ms,
          .max_sessions = 1 + random() % 4,
      };
      const unsigned start_how = random() % 2;  // listen() then start(); start() then listen()
      const unsigned end_how = random() % 4;    // destroyed; shutdown() first; from threads; freed
      const auto requests = static_cast<unsigned>(10 + random() % 30);
      CAPTURE(cycle);
      CAPTURE(start_how);
      CAPTURE(end_how);
      int port = -1;
      {
        auto server = std::make_unique<rpc::net::Server>(shared.router, options);
        if (start_how == 0) {
          port = server->listen("127.0.0.1", 0);
          server->start();
        } else {
          server->start();
          port = server->listen("127.0.0.1", 0);
        }
        REQUIRE(port > 0);
        const long target = shared.answered + static_cast<long>(requests);
        shared.port = port;
        const auto deadline = Clock::now() + 60s;
        while (shared.answered < target && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
        CHECK(shared.answered >= target);  // the server served
        if (end_how == 1) {
          server->shutdown();
          server->shutdown();
        } else if (end_how == 2) {
          std::vector<std::jthread> stoppers;
          for (int s = 0; s < 3; ++s) stoppers.emplace_back([&server] { server->shutdown(); });
        } else if (end_how == 3) {
          server.reset();  // freed while clients still send
        }
      }  // destroyed (unless freed above) while clients still send
      CHECK(refused(port));
    }
    shared.done = true;
    threads.clear();
    CHECK(made >= 4);
    {
      std::lock_guard lock(shared.mutex);
      for (const std::string& problem : shared.problems) FAIL_CHECK(problem);
    }
    MESSAGE(made, " servers; ", shared.answered.load(), " replies checked (", shared.cancelled.load(),
             " cancelled); ", shared.failed.load(), " failed connections; ",
            shared.unknown.load(), " unknown sessions");
  }
}
