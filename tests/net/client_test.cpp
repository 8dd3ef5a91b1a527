// SPDX-License-Identifier: MIT
// rpc::net::Client against rpc::net::Server on every transport (HTTP, WebSocket, lines and
// Content-Length over TCP and Unix sockets): exact results, messages in flight together, and
// every way a message can fail (timeout, the connection ending, close, ids that collide,
// no connection) completing it with the reason instead of hanging.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/net.hpp>
#include <batchrpc/net_client.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "common/cancellable_sleep.hpp"

using namespace std::chrono_literals;
using rpc::net::Transport;

namespace {

struct Served {
  Served() {
    rpc::add_builtins(router, {.server_name = "client_test", .server_version = "1"});
    router.add("add", [](int a, int b) { return a + b; }, rpc::names("a", "b"));
    router.add("echo", [](std::string s) { return s; }, rpc::names("s"));
    // Messages of the server's own in the middle of a call: a log, then a request whose
    // answer's error code it returns (0 for a result).
    router.add("log_then_add", [](int a, int b, rpc::Context& ctx) {
      ctx.peer().notify("notifications/message", rpc::json(R"({"level":"info","data":"working"})"));
      return a + b;
    }, rpc::names("a", "b"));
    router.add("ask", [](rpc::Context& ctx) {
      const rpc::Reply answer = ctx.peer().request("roots/list").get();
      return answer.error() != nullptr ? answer.error()->code() : 0;
    });
    router.add("sleep", [](std::int64_t ms, rpc::Context& ctx) {
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
    server.emplace(router, rpc::net::ServerOptions{.handler_threads = 4});
    http_port = server->listen("127.0.0.1", 0, rpc::net::Protocol::http);
    lines_port = server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
    framed_port = server->listen("127.0.0.1", 0, rpc::net::Protocol::content_length);
    const std::string stem = "batchrpc-client-test-" + std::to_string(::getpid());
    unix_lines = (std::filesystem::temp_directory_path() / (stem + "-lines.sock")).string();
    unix_http = (std::filesystem::temp_directory_path() / (stem + "-http.sock")).string();
    server->listen_unix(unix_lines, rpc::net::Protocol::lines);
    server->listen_unix(unix_http, rpc::net::Protocol::http);
    server->start();
  }

  int port_for(Transport transport) const {
    switch (transport) {
      case Transport::http:
      case Transport::websocket:
        return http_port;
      case Transport::lines:
        return lines_port;
      case Transport::content_length:
        return framed_port;
    }
    return 0;
  }

  rpc::Router router;
  std::optional<rpc::net::Server> server;
  int http_port = 0;
  int lines_port = 0;
  int framed_port = 0;
  std::string unix_lines;
  std::string unix_http;
};

const char* name_of(Transport transport) {
  switch (transport) {
    case Transport::http:
      return "http";
    case Transport::websocket:
      return "websocket";
    case Transport::lines:
      return "lines";
    case Transport::content_length:
      return "content_length";
  }
  return "?";
}

// The problems of a reply still to come (kept by value: Replies refuses to lend from a temporary).
std::vector<std::string> problems_of(std::future<rpc::Replies> reply) {
  const rpc::Replies replies = reply.get();
  return replies.problems();
}

constexpr Transport kTransports[] = {Transport::http, Transport::websocket, Transport::lines,
                                     Transport::content_length};

}  // namespace

TEST_CASE("net client: a batch, a single call and notifications on every transport") {
  Served served;
  for (const Transport transport : kTransports) {
    CAPTURE(name_of(transport));
    rpc::net::Client client{{.transport = transport}};
    client.connect("127.0.0.1", served.port_for(transport));

    rpc::BatchBuilder batch = client.batch();
    const auto sum = batch.call("add", rpc::positional(2, 3));
    batch.notify("add", rpc::positional(1, 1));
    const auto echo = batch.call("echo", rpc::named("s", "h\u00e9llo \"x\""));
    const auto missing = batch.call("nope");
    const rpc::Replies replies = client.send(std::move(batch)).get();
    CHECK(replies.problems().empty());
    CHECK(replies.missing().empty());
    CHECK(replies.result<int>(sum) == 5);
    CHECK(replies.result<std::string>(echo) == "h\u00e9llo \"x\"");
    REQUIRE(replies.error(missing) != nullptr);
    CHECK(replies.error(missing)->code() == -32601);

    rpc::BatchBuilder single = client.batch();
    const auto ping = single.call("ping");
    const rpc::Replies pong = client.send(std::move(single)).get();
    CHECK(pong.complete());
    CHECK(pong.result_json(ping).text() == "{}");

    rpc::BatchBuilder quiet = client.batch();
    quiet.notify("add", rpc::positional(1, 2));
    quiet.notify("ping");
    const rpc::Replies none = client.send(std::move(quiet)).get();
    CHECK(none.complete());
  }
}

TEST_CASE("net client: the server's own messages during a call fail nothing, and its requests are answered -32601") {
  Served served;
  for (const Transport transport : {Transport::websocket, Transport::lines, Transport::content_length}) {
    CAPTURE(name_of(transport));
    std::mutex mutex;
    std::vector<std::string> seen;
    rpc::net::Client client{{.transport = transport, .on_server_message = [&](std::string_view message) {
                               const std::lock_guard<std::mutex> lock(mutex);
                               seen.emplace_back(message);
                             }}};
    client.connect("127.0.0.1", served.port_for(transport));

    rpc::BatchBuilder batch = client.batch();
    const auto sum = batch.call("log_then_add", rpc::named("a", 1, "b", 2));
    const rpc::Replies first = client.send(std::move(batch)).get();
    CHECK(first.problems().empty());
    CHECK(first.result<int>(sum) == 3);

    rpc::BatchBuilder both = client.batch();
    const auto asked = both.call("ask");
    const auto added = both.call("add", rpc::named("a", 2, "b", 5));
    const rpc::Replies second = client.send(std::move(both)).get();
    CHECK(second.problems().empty());
    CHECK(second.result<int>(asked) == -32601);  // the client's answer, which the server waited for
    CHECK(second.result<int>(added) == 7);

    const std::lock_guard<std::mutex> lock(mutex);
    REQUIRE(seen.size() == 2);
    CHECK(seen[0] == R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}})");
    CHECK(seen[1] == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list"})");
  }
}

TEST_CASE("net client: the README's example") {
  Served served;
  const int port = served.http_port;
  // snippet:begin net_client
  rpc::net::Client client{{.transport = rpc::net::Transport::websocket}};
  client.connect("127.0.0.1", port);
  rpc::BatchBuilder batch = client.batch();
  const auto sum = batch.call("add", rpc::positional(2, 3));
  batch.notify("add", rpc::positional(0, 0));
  const rpc::Replies replies = client.send(std::move(batch)).get();  // or send(batch, callback)
  const int five = replies.result<int>(sum);
  // snippet:end
  CHECK(five == 5);
  CHECK(replies.complete());
}

TEST_CASE("net client: Unix-domain sockets, lines and HTTP") {
  Served served;
  for (const auto& [transport, path] : {std::pair{Transport::lines, served.unix_lines},
                                        std::pair{Transport::http, served.unix_http},
                                        std::pair{Transport::websocket, served.unix_http}}) {
    CAPTURE(name_of(transport));
    rpc::net::Client client{{.transport = transport}};
    client.connect_unix(path);
    rpc::BatchBuilder batch = client.batch(true);
    const auto sum = batch.call("add", rpc::named("a", 40, "b", 2));
    const rpc::Replies replies = client.send(std::move(batch)).get();
    CHECK(replies.complete());
    CHECK(replies.result<int>(sum) == 42);
  }
}

TEST_CASE("net client: many messages in flight at once get their own replies") {
  Served served;
  for (const Transport transport : kTransports) {
    CAPTURE(name_of(transport));
    rpc::net::Client client{{.transport = transport}};
    client.connect("127.0.0.1", served.port_for(transport));
    constexpr int kMessages = 200;
    std::vector<std::pair<std::int64_t, std::future<rpc::Replies>>> sent;
    // Later messages sleep less, so on WebSocket and streams replies come out of order.
    for (int i = 0; i < kMessages; ++i) {
      rpc::BatchBuilder batch = client.batch();
      const auto id = batch.call("add", rpc::positional(i, 1000));
      if (i % 10 == 0) batch.call("sleep", rpc::positional((kMessages - i) / 10));
      sent.emplace_back(id, client.send(std::move(batch)));
    }
    for (int i = 0; i < kMessages; ++i) {
      const rpc::Replies replies = sent[static_cast<std::size_t>(i)].second.get();
      CHECK(replies.complete());
      CHECK(replies.result<int>(sent[static_cast<std::size_t>(i)].first) == i + 1000);
    }
  }
}

TEST_CASE("net client: builders whose ids are in flight are refused where replies match by id") {
  Served served;
  rpc::net::Client client{{.transport = Transport::websocket}};
  client.connect("127.0.0.1", served.http_port);
  rpc::BatchBuilder first;  // ids 1, 2
  first.call("sleep", rpc::positional(200));
  first.call("ping");
  auto slow = client.send(std::move(first));
  rpc::BatchBuilder second;  // id 1 again
  second.call("ping");
  CHECK_THROWS_WITH_AS(static_cast<void>(client.send(std::move(second))),
                       "batchrpc: net::Client::send: ids 1 to 1 overlap a message in flight (or one that timed "
                       "out, whose reply has not come); make each builder with client.batch()",
                       std::invalid_argument);
  CHECK(slow.get().complete());
  rpc::BatchBuilder again;  // free once the first is answered
  const auto id = again.call("ping");
  CHECK(client.send(std::move(again)).get().ok(id));
  CHECK_THROWS_AS(static_cast<void>(client.send(rpc::BatchBuilder{})), std::invalid_argument);
}

TEST_CASE("net client: a whole message refused (no id in the reply) goes to its message only when that is certain") {
  rpc::Router router(rpc::Limits{.max_batch = 3});
  rpc::add_builtins(router, {.server_name = "client_test", .server_version = "1"});
  router.add("sleep", [](std::int64_t ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return ms;
  });
  rpc::net::Server server{router, {.handler_threads = 2}};
  const int http_port = server.listen("127.0.0.1", 0);
  const int lines_port = server.listen("127.0.0.1", 0, rpc::net::Protocol::lines);
  server.start();
  const auto too_long = [](rpc::BatchBuilder batch, bool calls) {
    for (int i = 0; i < 4; ++i) calls ? (void)batch.call("ping") : batch.notify("ping");
    return batch;
  };
  for (const Transport transport : {Transport::http, Transport::websocket, Transport::lines}) {
    CAPTURE(name_of(transport));
    rpc::net::Client client{{.transport = transport, .timeout = 500ms}};
    client.connect("127.0.0.1", transport == Transport::lines ? lines_port : http_port);
    // Alone: the refusal is its reply.
    const rpc::Replies alone = client.send(too_long(client.batch(), true)).get();
    REQUIRE(alone.message_error() != nullptr);
    CHECK(alone.message_error()->code() == -32602);
    CHECK(alone.missing().size() == 4);
    // Notifications refused while a request is in flight: the request still gets its result.
    rpc::BatchBuilder slow = client.batch();
    const auto slow_id = slow.call("sleep", rpc::positional(200));
    auto slow_reply = client.send(std::move(slow));
    const rpc::Replies quiet = client.send(too_long(client.batch(), false)).get();
    const rpc::Replies slow_replies = slow_reply.get();
    CHECK(slow_replies.complete());
    CHECK(slow_replies.result<int>(slow_id) == 200);
    if (transport == Transport::http) {
      REQUIRE(quiet.message_error() != nullptr);  // HTTP matches every response to its request
      CHECK(quiet.message_error()->code() == -32602);
    } else {
      CHECK(quiet.complete());  // completed once written; the refusal named nothing
    }
  }
}

TEST_CASE("net client: a reply that takes longer than the timeout fails the message, not the others") {
  Served served;
  for (const Transport transport : kTransports) {
    CAPTURE(name_of(transport));
    rpc::net::Client client{{.transport = transport, .timeout = 200ms}};
    client.connect("127.0.0.1", served.port_for(transport));
    rpc::BatchBuilder slow = client.batch();
    const auto slow_id = slow.call("sleep", rpc::positional(1000));
    auto late = client.send(std::move(slow));
    rpc::BatchBuilder fast = client.batch();
    const auto fast_id = fast.call("ping");
    auto quick = client.send(std::move(fast));
    const rpc::Replies timed_out = late.get();
    CHECK(timed_out.missing() == std::vector<std::int64_t>{slow_id});
    CHECK(timed_out.problems() == std::vector<std::string>{"no reply within 200 ms (the client's timeout)"});
    if (transport == Transport::http) {
      // HTTP answers in order: the ping waits behind the sleep and times out with it.
      CHECK_FALSE(quick.get().complete());
    } else {
      CHECK(quick.get().ok(fast_id));
    }
  }
}

TEST_CASE("net client: the ids of a message that timed out stay taken until its late reply comes") {
  Served served;
  rpc::net::Client client{{.transport = Transport::websocket, .timeout = 150ms}};
  client.connect("127.0.0.1", served.http_port);
  rpc::BatchBuilder first;  // id 1
  first.call("sleep", rpc::positional(500));
  const rpc::Replies timed_out = client.send(std::move(first)).get();
  CHECK(timed_out.problems() == std::vector<std::string>{"no reply within 150 ms (the client's timeout)"});
  rpc::BatchBuilder reuse;  // id 1 again, while the server still works on the first
  reuse.call("sleep", rpc::positional(10));
  CHECK_THROWS_AS(static_cast<void>(client.send(std::move(reuse))), std::invalid_argument);
  std::this_thread::sleep_for(900ms);  // the late reply (500) has come and was dropped
  rpc::BatchBuilder later;
  const auto id = later.call("sleep", rpc::positional(10));
  const rpc::Replies replies = client.send(std::move(later)).get();
  CHECK(replies.complete());
  CHECK(replies.result<int>(id) == 10);
}

TEST_CASE("net client: the connection ending, close() and destruction fail what is in flight") {
  SUBCASE("the server shuts down past its grace") {
    rpc::Router router;
    router.add("sleep", [](std::int64_t ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return ms;
    });
    rpc::net::Server server{router, {.handler_threads = 2, .shutdown_grace = 50ms}};
    const int port = server.listen("127.0.0.1", 0, rpc::net::Protocol::lines);
    server.start();
    rpc::net::Client client{{.transport = Transport::lines}};
    client.connect("127.0.0.1", port);
    rpc::BatchBuilder batch = client.batch();
    batch.call("sleep", rpc::positional(400));
    auto reply = client.send(std::move(batch));
    std::this_thread::sleep_for(50ms);
    server.shutdown();
    const rpc::Replies replies = reply.get();
    CHECK(replies.missing().size() == 1);
    REQUIRE(replies.problems().size() == 1);
    CHECK(replies.problems()[0].rfind("the connection ended: ", 0) == 0);
    rpc::BatchBuilder after = client.batch();
    after.call("ping");
    const rpc::Replies refused = client.send(std::move(after)).get();
    CHECK(refused.problems() == replies.problems());
  }
  SUBCASE("close() and the destructor") {
    Served served;
    std::promise<rpc::Replies> destroyed;
    {
      rpc::net::Client client{{.transport = Transport::websocket}};
      client.connect("127.0.0.1", served.http_port);
      rpc::BatchBuilder batch = client.batch();
      batch.call("sleep", rpc::positional(2000));
      auto closed = client.send(std::move(batch));
      client.close();
      CHECK(problems_of(std::move(closed)) == std::vector<std::string>{"the client closed the connection"});

      rpc::net::Client other{{.transport = Transport::content_length}};
      other.connect("127.0.0.1", served.framed_port);
      rpc::BatchBuilder slow = other.batch();
      slow.call("sleep", rpc::positional(2000));
      other.send(std::move(slow), [&](rpc::Replies r) { destroyed.set_value(std::move(r)); });
    }
    CHECK(problems_of(destroyed.get_future()) == std::vector<std::string>{"the client was destroyed"});
  }
  SUBCASE("a callback that sends again while the client is destroyed") {
    Served served;
    std::promise<rpc::Replies> retried;
    {
      rpc::net::Client client{{.transport = Transport::lines}};
      client.connect("127.0.0.1", served.lines_port);
      rpc::BatchBuilder slow = client.batch();
      slow.call("sleep", rpc::positional(2000));
      client.send(std::move(slow), [&](rpc::Replies) {
        rpc::BatchBuilder again = client.batch();
        again.call("ping");
        client.send(std::move(again), [&](rpc::Replies r) { retried.set_value(std::move(r)); });
      });
    }
    CHECK(problems_of(retried.get_future()) == std::vector<std::string>{"the client was destroyed"});
  }
}

TEST_CASE("net client: before connecting, and connecting where nobody listens") {
  rpc::net::Client client;
  rpc::BatchBuilder batch = client.batch();
  batch.call("ping");
  CHECK(problems_of(client.send(std::move(batch))) == std::vector<std::string>{"not connected"});

  int free_port = 0;
  {
    Served served;
    free_port = served.lines_port;
  }
  CHECK_THROWS_AS(client.connect("127.0.0.1", free_port), std::runtime_error);
  CHECK_THROWS_AS(client.connect_unix("/nonexistent/batchrpc.sock"), std::runtime_error);
  Served served;
  client.connect("127.0.0.1", served.http_port);  // a failed connect leaves it usable
  CHECK_THROWS_AS(client.connect("127.0.0.1", served.http_port), std::logic_error);
  rpc::BatchBuilder ping = client.batch();
  const auto id = ping.call("ping");
  CHECK(client.send(std::move(ping)).get().ok(id));
}

TEST_CASE("net client: a continuation may send, and one that throws does not stop the client") {
  Served served;
  rpc::net::Client client{{.transport = Transport::websocket}};
  client.connect("127.0.0.1", served.http_port);
  std::promise<int> chained;
  rpc::BatchBuilder first = client.batch();
  const auto a = first.call("add", rpc::positional(1, 2));
  client.send(std::move(first), [&](rpc::Replies r) {
    rpc::BatchBuilder next = client.batch();
    const auto b = next.call("add", rpc::positional(r.result<int>(a), 10));
    client.send(std::move(next), [&chained, b](rpc::Replies r2) { chained.set_value(r2.result<int>(b)); });
  });
  CHECK(chained.get_future().get() == 13);

  rpc::BatchBuilder thrower = client.batch();
  thrower.call("ping");
  client.send(std::move(thrower), [](rpc::Replies) { throw std::runtime_error("user code"); });
  rpc::BatchBuilder after = client.batch();
  const auto id = after.call("ping");
  CHECK(client.send(std::move(after)).get().ok(id));
}
