// SPDX-License-Identifier: MIT
// The HTTP adapter in process: the server's lifetime (start, run, stop and destruction from
// any thread, in any order) and its session registry (who takes a slot, which one goes first).
// Requests go over loopback with httplib's client, or raw sockets for what it will not do.
#if defined(BATCHRPC_TEST_HTTP)
#include <batchrpc/builtins.hpp>
#include <batchrpc/http.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "common/cancellable_sleep.hpp"
#include "support/printing.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Generous: these bound waits that end in milliseconds unless something is broken.
constexpr auto kTimeout = 30s;

const std::string kAdd = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})";
const std::string kSum = R"({"jsonrpc":"2.0","id":1,"result":3})";

struct Methods {
  rpc::Router router;
  std::atomic<int> sleeping{0};  // "sleep" calls running now

  Methods() {
    rpc::add_builtins(router, {.server_name = "http-test", .server_version = "1"});
    router.add("add", [](int a, int b) { return a + b; });
    router.add("sleep", [this](int ms, rpc::Context& ctx) {
      ++sleeping;
      const bool slept = spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms));
      --sleeping;
      if (!slept) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
  }
};

bool wait_until(const std::function<bool()>& done, std::chrono::seconds timeout = kTimeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

struct Reply {
  int status = 0;
  std::string body;
  std::string session;  // the Rpc-Session-Id header, or empty
};

httplib::Client client_for(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_tcp_nodelay(true);  // else each request waits for a delayed ACK
  client.set_connection_timeout(kTimeout);
  client.set_read_timeout(kTimeout);
  client.set_write_timeout(kTimeout);
  return client;
}

std::optional<Reply> try_post(httplib::Client& client, const std::string& body, const std::string& session = {}) {
  httplib::Headers headers;
  if (!session.empty()) headers.emplace("Rpc-Session-Id", session);
  const httplib::Result res = client.Post("/", headers, body, "application/json");
  if (!res) return std::nullopt;
  return Reply{res->status, res->body, res->get_header_value("Rpc-Session-Id")};
}

Reply post(httplib::Client& client, const std::string& body, const std::string& session = {}) {
  const std::optional<Reply> reply = try_post(client, body, session);
  REQUIRE(reply);
  return *reply;
}

// On a connection of its own (httplib's client closes it after the reply).
Reply post(int port, const std::string& body, const std::string& session = {}) {
  httplib::Client client = client_for(port);
  return post(client, body, session);
}

// A TCP connection to 127.0.0.1:port, or -1 with errno set.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

// True when nothing listens on the port any more.
bool refused(int port) {
  const int fd = connect_to(port);
  if (fd >= 0) {
    ::close(fd);
    return false;
  }
  return errno == ECONNREFUSED;
}

void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    REQUIRE(n > 0);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Everything the peer sends, and whether it then closed the connection (within the timeout).
struct Received {
  std::string bytes;
  bool closed = false;
};

Received read_until_closed(int fd, std::chrono::seconds timeout = kTimeout) {
  Received received;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return received;
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) {
      received.closed = true;
      return received;
    }
    received.bytes.append(chunk, static_cast<std::size_t>(n));
  }
}

std::string raw_post(std::string_view content_type, std::string_view body) {
  return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + std::string(content_type) +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

int occurrences(std::string_view text, std::string_view part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string_view::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A server serving with run() on a thread of the test's, stopped and joined first thing when
// the test is done with it.
struct Running {
  rpc::http::Server server;
  std::thread thread;
  int port = -1;

  Running(const rpc::Router& router, rpc::http::ServerOptions options)
      : server(router, std::move(options)), thread([this] { server.run(); }) {
    REQUIRE(wait_until([this] { return server.port() > 0; }));
    port = server.port();
  }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  ~Running() {
    server.stop();
    thread.join();
  }
};

}  // namespace

TEST_SUITE("http") {
  // ---- Lifetime -------------------------------------------------------------------------------

  TEST_CASE("http: a server destroyed while run() returns on another thread waits for run()") {
    Methods methods;
    SUBCASE("the serving thread outlives the server's scope") {
      for (int round = 0; round < 3; ++round) {
        std::atomic<bool> returned{false};
        std::jthread serving;
        {
          rpc::http::Server server{methods.router, {.port = 0}};
          serving = std::jthread([&] {
            server.run();
            returned = true;
          });
          REQUIRE(wait_until([&] { return server.port() > 0; }));
          CHECK(post(server.port(), kAdd).body == kSum);
        }  // ~Server stops it and waits for run() to return
        serving.join();
        CHECK(returned);
      }
    }
    SUBCASE("the server is freed while run() is still returning") {
      auto server = std::make_unique<rpc::http::Server>(methods.router, rpc::http::ServerOptions{.port = 0});
      std::thread serving([s = server.get()] { s->run(); });
      REQUIRE(wait_until([&] { return server->port() > 0; }));
      const int port = server->port();
      CHECK(post(port, kAdd).body == kSum);
      server.reset();
      serving.join();
      CHECK(refused(port));
    }
  }

  TEST_CASE("http: start() serves on the server's own threads, and leaving the scope stops and joins them") {
    Methods methods;
    int port = -1;
    std::optional<httplib::Client> idle;  // a keep-alive connection left open after the server
    const auto begin = Clock::now();
    {
      rpc::http::Server server{methods.router, {.port = 0, .keep_alive_seconds = 1}};
      port = server.start();
      REQUIRE(port > 0);
      CHECK(server.port() == port);
      idle.emplace(client_for(port));
      idle->set_keep_alive(true);
      CHECK(post(*idle, kAdd).body == kSum);
      CHECK(post(port, kAdd).body == kSum);
    }
    CHECK(refused(port));
    CHECK(Clock::now() - begin < 20s);  // the idle connection is dropped after 1 s
  }

  TEST_CASE("http: stop() before, during and after serving, any number of times") {
    Methods methods;
    SUBCASE("before anything: nothing is bound and nothing serves") {
      rpc::http::Server server{methods.router, {.port = 0}};
      server.stop();
      server.stop();
      server.run();  // returns at once
      CHECK(server.port() == -1);
      CHECK(server.bind() == -1);
      CHECK(server.start() == -1);
      CHECK(server.port() == -1);
    }
    SUBCASE("after bind(): the port is let go at once") {
      rpc::http::Server server{methods.router, {.port = 0}};
      const int port = server.bind();
      REQUIRE(port > 0);
      CHECK(server.bind() == port);  // bound once
      server.stop();
      CHECK(refused(port));
      server.run();
      CHECK(server.start() == -1);
      rpc::http::Server again{methods.router, {.port = port}};
      CHECK(again.bind() == port);
    }
    SUBCASE("bound, never served, destroyed: the port is let go") {
      int port = -1;
      {
        rpc::http::Server server{methods.router, {.port = 0}};
        port = server.bind();
        REQUIRE(port > 0);
      }
      CHECK(refused(port));
      rpc::http::Server again{methods.router, {.port = port}};
      CHECK(again.start() == port);
      CHECK(post(port, kAdd).body == kSum);
    }
    SUBCASE("after run() has returned: stop() again, and run() returns at once") {
      rpc::http::Server server{methods.router, {.port = 0}};
      std::thread serving([&] { server.run(); });
      REQUIRE(wait_until([&] { return server.port() > 0; }));
      const int port = server.port();
      CHECK(post(port, kAdd).body == kSum);
      server.stop();
      serving.join();
      CHECK(refused(port));
      server.stop();
      server.run();
      CHECK(server.start() == -1);
      server.stop();
    }
  }

  TEST_CASE("http: stop() from other threads at any moment of bind(), start() or run() ends serving") {
    Methods methods;
    std::mt19937 random(20250611);
    for (int round = 0; round < 60; ++round) {
      const unsigned mode = random() % 3;  // run() on a thread of ours, start(), bind() then start()
      const int stoppers = 1 + static_cast<int>(random() % 3);
      std::vector<unsigned> delays;  // yields before each stopper stops
      for (int s = 0; s < stoppers; ++s) delays.push_back(random() % 2000);
      CAPTURE(round);
      CAPTURE(mode);
      int port = -1;
      {
        rpc::http::Server server{methods.router, {.port = 0, .connection_threads = 2}};
        std::jthread serving;  // may not have called run() yet when stopped: joined first
        {
          std::latch go(stoppers + 1);
          std::vector<std::jthread> threads;
          for (int s = 0; s < stoppers; ++s) {
            threads.emplace_back([&, delay = delays[static_cast<std::size_t>(s)]] {
              go.arrive_and_wait();
              for (unsigned i = 0; i < delay; ++i) std::this_thread::yield();
              server.stop();
            });
          }
          go.arrive_and_wait();
          if (mode == 0) {
            serving = std::jthread([&] { server.run(); });
          } else {
            if (mode == 2) port = server.bind();
            const int started = server.start();
            if (mode == 2 && started >= 0) CHECK(started == port);
          }
        }  // the stoppers are joined: stop() has been called
        if (serving.joinable()) serving.join();
        port = server.port();
      }
      if (port > 0) CHECK(refused(port));
    }
  }

  TEST_CASE("http: a second run() or start() while serving throws std::logic_error") {
    Methods methods;
    rpc::http::Server server{methods.router, {.port = 0}};
    const int port = server.start();
    REQUIRE(port > 0);
    CHECK_THROWS_AS(server.start(), std::logic_error);
    CHECK_THROWS_AS(server.run(), std::logic_error);
    CHECK(server.bind() == port);
    CHECK(post(port, kAdd).body == kSum);
  }

  TEST_CASE("http: destroying the server cancels the requests still being handled") {
    Methods methods;
    std::optional<Reply> slow;
    std::jthread client;
    const auto begin = Clock::now();
    {
      rpc::http::Server server{methods.router, {.port = 0}};
      const int port = server.start();
      REQUIRE(port > 0);
      client = std::jthread([&slow, port] {
        httplib::Client c = client_for(port);
        slow = try_post(c, R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":600000},"id":7})");
      });
      REQUIRE(wait_until([&] { return methods.sleeping == 1; }));
    }
    client.join();
    CHECK(Clock::now() - begin < 60s);
    REQUIRE(slow);
    CHECK(slow->status == 200);
    CHECK(slow->body == R"({"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}})");
  }

  TEST_CASE("http: destroying the server answers -32800 for a request waiting on a Responder that ignores its stop token") {
    Methods methods;
    std::mutex mutex;
    std::vector<rpc::Responder> registry;  // only the registry would answer, and it never does
    methods.router.add("hold", [&](rpc::Responder done) {
      std::lock_guard lock(mutex);
      registry.push_back(std::move(done));
    });
    std::optional<Reply> held;
    std::jthread client;
    std::optional<rpc::http::Server> server;
    server.emplace(methods.router, rpc::http::ServerOptions{.port = 0});
    const int port = server->start();
    REQUIRE(port > 0);
    client = std::jthread([&held, port] {
      httplib::Client c = client_for(port);
      held = try_post(c, R"({"jsonrpc":"2.0","method":"hold","id":7})");
    });
    REQUIRE(wait_until([&] {
      std::lock_guard lock(mutex);
      return registry.size() == 1;
    }));
    watchdog::must_finish("~Server with a request waiting on a Responder", [&] { server.reset(); });
    client.join();
    REQUIRE(held);
    CHECK(held->status == 200);
    CHECK(held->body == R"({"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}})");
    std::lock_guard lock(mutex);
    CHECK_FALSE(registry.front().resolve(1));  // answered by the server's end: refused quietly
  }

  TEST_CASE("http: options a careless caller may give") {
    Methods methods;
    SUBCASE("no connection threads: served on one") {
      Running running{methods.router, {.port = 0, .connection_threads = 0}};
      httplib::Client client = client_for(running.port);
      client.set_read_timeout(10s);
      const std::optional<Reply> reply = try_post(client, kAdd);
      REQUIRE(reply);
      CHECK(reply->body == kSum);
    }
    SUBCASE("a port out of range cannot be bound") {
      rpc::http::Server server{methods.router, {.port = 65536}};
      CHECK_THROWS_AS(server.bind(), std::runtime_error);
      CHECK(server.port() == -1);
    }
  }

  // ---- Requests -------------------------------------------------------------------------------

  TEST_CASE("http: a request whose body is not read to its end is answered, then its connection closed") {
    // What is left of such a body must not be read as the connection's next request. Each body
    // below ends with a whole request, placed where the rest of the body begins for httplib,
    // which reads 4096 bytes at a time: it must not be answered. Idle connections stay open
    // for a minute, so only a deliberate close ends them within the test's timeout.
    rpc::Router router{rpc::Limits{.max_message_bytes = 64}};
    router.add("add", [](int a, int b) { return a + b; });
    Running running{router, {.port = 0, .keep_alive_seconds = 60}};
    const std::string inner_body = R"({"jsonrpc":"2.0","method":"add","params":[40,2],"id":"smuggled"})";
    const std::string inner = raw_post("application/json", inner_body);
    std::string request;
    std::string status;
    SUBCASE("a content type other than JSON: the body is not read at all") {
      const std::string head = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ";
      std::size_t length = inner.size();  // head + padding == 4096 bytes, then the inner request
      while (head.size() + std::to_string(length).size() + 4 + (length - inner.size()) < 4096) ++length;
      REQUIRE(head.size() + std::to_string(length).size() + 4 + (length - inner.size()) == 4096);
      request = head + std::to_string(length) + "\r\n\r\n" + std::string(length - inner.size(), 'x') + inner;
      status = "HTTP/1.1 415 ";
    }
    SUBCASE("a chunked body past the limit: reading stops there") {
      request = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n\r\n80\r\n" + std::string(128, ' ') + "\r\n";
      char size[16];
      const auto end = std::to_chars(size, size + sizeof size, inner.size(), 16).ptr;
      request += std::string(size, end) + "\r\n" + inner + "\r\n0\r\n\r\n";
      status = "HTTP/1.1 413 ";
    }
    SUBCASE("a chunked body that cannot be read") {
      request = "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + inner;
      status = "HTTP/1.1 400 ";
    }
    CAPTURE(status);
    const int fd = connect_to(running.port);
    REQUIRE(fd >= 0);
    send_all(fd, request);
    const auto [received, closed] = read_until_closed(fd);
    ::close(fd);
    CHECK(closed);
    CHECK(received.rfind(status, 0) == 0);
    CHECK(occurrences(received, "HTTP/1.1 ") == 1);
    CHECK(received.find("smuggled") == std::string::npos);
    CHECK(received.find("\r\nConnection: close\r\n") != std::string::npos);
  }

  // ---- Sessions -------------------------------------------------------------------------------

  TEST_CASE("http: connections that send nothing take no session slot") {
    Methods methods;
    SUBCASE("opened and closed") {
      // One connection thread: connections are served in the order they came, one at a time.
      Running running{methods.router, {.port = 0, .connection_threads = 1, .max_sessions = 2}};
      const int port = running.port;
      const Reply hello = post(port, kAdd);
      REQUIRE(hello.session.size() == 32);
      for (int i = 0; i < 8; ++i) {
        const int fd = connect_to(port);
        REQUIRE(fd >= 0);
        ::close(fd);
      }
      const Reply again = post(port, kAdd, hello.session);
      CHECK(again.status == 200);
      CHECK(again.body == kSum);
      CHECK(again.session == hello.session);
    }
    SUBCASE("left open") {
      Running running{methods.router, {.port = 0, .connection_threads = 8, .max_sessions = 2}};
      const int port = running.port;
      const Reply hello = post(port, kAdd);
      REQUIRE(hello.session.size() == 32);
      std::vector<int> bare;
      for (int i = 0; i < 6; ++i) {
        bare.push_back(connect_to(port));
        REQUIRE(bare.back() >= 0);
      }
      const Reply again = post(port, kAdd, hello.session);
      CHECK(again.status == 200);
      CHECK(again.session == hello.session);
      for (const int fd : bare) ::close(fd);
    }
  }

  TEST_CASE("http: sessions are evicted least recently used first, also within one second") {
    // Each step: a new connection's first request (a new session, which may evict the least
    // recently used), a request naming a kept session (now the most recently used), or one
    // naming an evicted session (404). A model predicts every status and id.
    Methods methods;
    constexpr std::size_t max_sessions = 3;
    Running running{methods.router, {.port = 0, .connection_threads = 2, .max_sessions = max_sessions}};
    const int port = running.port;
    httplib::Client named = client_for(port);  // one kept connection for requests naming a session
    named.set_keep_alive(true);
    std::mt19937 random(7);
    std::deque<std::string> kept;  // least recently used first
    std::vector<std::string> evicted;
    for (int step = 0; step < 60; ++step) {
      CAPTURE(step);
      const unsigned choice = random() % 8;
      if (kept.empty() || choice < 3) {
        const Reply reply = post(port, kAdd);
        CHECK(reply.body == kSum);
        REQUIRE(reply.session.size() == 32);
        if (kept.size() == max_sessions) {
          evicted.push_back(kept.front());
          kept.pop_front();
        }
        kept.push_back(reply.session);
      } else if (choice < 7 || evicted.empty()) {
        const std::size_t at = random() % kept.size();
        const std::string id = kept[at];
        const Reply reply = post(named, kAdd, id);
        CHECK(reply.status == 200);
        CHECK(reply.session == id);
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(at));
        kept.push_back(id);
      } else {
        const Reply reply = post(named, kAdd, evicted[random() % evicted.size()]);
        CHECK(reply.status == 404);
      }
    }
    CHECK(evicted.size() >= 5);
  }

  TEST_CASE("http: a connection whose idle session was evicted gets it back with the same id") {
    Methods methods;
    Running running{methods.router, {.port = 0, .max_sessions = 1}};
    const int port = running.port;
    httplib::Client kept = client_for(port);
    kept.set_keep_alive(true);
    const Reply first = post(kept, kAdd);
    REQUIRE(first.session.size() == 32);
    const Reply other = post(port, kAdd);  // a new session takes the only slot
    REQUIRE(other.session.size() == 32);
    CHECK(other.session != first.session);
    CHECK(post(port, kAdd, first.session).status == 404);
    const Reply back = post(kept, kAdd);  // the kept connection's own session comes back
    CHECK(back.body == kSum);
    CHECK(back.session == first.session);
    CHECK(post(port, kAdd, first.session).status == 200);
    CHECK(post(port, kAdd, other.session).status == 404);
  }

  TEST_CASE("http: a session in use is not evicted, so a cancel from another connection reaches it") {
    Methods methods;
    Running running{methods.router, {.port = 0, .max_sessions = 1}};
    const int port = running.port;
    const std::string id = post(port, kAdd).session;
    REQUIRE(id.size() == 32);
    std::optional<Reply> slow;
    std::jthread sleeper([&] {
      httplib::Client c = client_for(port);
      slow = try_post(c, R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":600000},"id":5})", id);
    });
    REQUIRE(wait_until([&] { return methods.sleeping == 1; }));
    const Reply unkept = post(port, kAdd);  // no room: served, but not kept
    CHECK(unkept.body == kSum);
    CHECK(unkept.session == "");
    const Reply cancel =
        post(port, R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":5},"id":6})", id);
    CHECK(cancel.status == 200);
    CHECK(cancel.body == R"({"jsonrpc":"2.0","id":6,"result":{"cancelled":true}})");
    sleeper.join();
    REQUIRE(slow);
    CHECK(slow->body == R"({"jsonrpc":"2.0","id":5,"error":{"code":-32800,"message":"Request cancelled"}})");
  }
}

#endif  // BATCHRPC_TEST_HTTP
