// SPDX-License-Identifier: MIT
// rpc::net::Server: HTTP, WebSocket and framed streams over TCP and Unix sockets, with exact
// replies; and its defences: slow clients, idle connections, the connection cap,
// backpressure, and shutdown with work in flight.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/detail/checks.hpp>  // BATCHRPC_CHECKS_ENABLED
#include <batchrpc/detail/net/new_work.hpp>
#include <batchrpc/net.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include "common/cancellable_sleep.hpp"
#include "net_client.hpp"
#include "support/death.hpp"
#include "support/replies.hpp"

using namespace std::chrono_literals;
using namespace replies;
using netclient::HttpClient;
using netclient::StreamClient;
using netclient::WsClient;
namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

using Clock = std::chrono::steady_clock;

std::string call(std::string_view method, std::string_view params, std::string_view id) {
  return R"({"jsonrpc":"2.0","method":")" + std::string(method) + R"(","params":)" + std::string(params) +
         R"(,"id":)" + std::string(id) + "}";
}
std::string notification(std::string_view method, std::string_view params) {
  return R"({"jsonrpc":"2.0","method":")" + std::string(method) + R"(","params":)" + std::string(params) + "}";
}

// A gate handlers wait on until the test opens it; counts the handlers that reached it.
struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  int arrived = 0;

  void pass() {
    std::unique_lock lock(mutex);
    ++arrived;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  void release() {
    std::lock_guard lock(mutex);
    open = true;
    cv.notify_all();
  }
  // Waits until `n` handlers have arrived; false after two seconds.
  bool wait_arrived(int n) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, 2s, [&] { return arrived >= n; });
  }
  int count() {
    std::lock_guard lock(mutex);
    return arrived;
  }
};

// The methods every test serves: add, sleep (cancellable), gate (waits on the gate).
struct Fixture {
  explicit Fixture(rpc::net::ServerOptions options = {}, rpc::Limits limits = {}) : router(limits) {
    rpc::add_builtins(router, {.server_name = "net_test", .server_version = "1"});
    router.add("add", [](int a, int b) { return a + b; }, rpc::names("a", "b"));
    router.add("sleep", [](std::int64_t ms, rpc::Context& ctx) {
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
    router.add("gate", [this] {
      gate.pass();
      return true;
    });
    router.add("big", [this] {  // a 100 KB reply
      big_calls.fetch_add(1);
      return std::string(100'000, 'x');
    });
    // Asks the client for `method` (after a notification) and answers with what it said.
    router.add("ask_client", [this](std::string method, rpc::Context& ctx, rpc::Responder done) {
      ctx.peer().notify("notifications/message", rpc::named("level", "info", "data", "asking"));
      ctx.peer().request(method, rpc::json("{}"), [this, done](rpc::Reply reply) {
        if (reply.ok()) {
          done.resolve(reply.result());
        } else {
          if (reply.error()->code() == static_cast<int>(rpc::ErrorCode::client_unavailable)) ++client_gone;
          done.reject(*reply.error());
        }
      });
    }, rpc::names("method"));
    if (options.handler_threads == 0) options.handler_threads = 4;
    server.emplace(router, std::move(options));
  }

  int listen(rpc::net::Protocol protocol = rpc::net::Protocol::http) {
    const int port = server->listen("127.0.0.1", 0, protocol);
    if (!started) server->start();
    started = true;
    return port;
  }

  Gate gate;
  std::atomic<int> big_calls{0};
  std::atomic<int> client_gone{0};  // ask_client calls whose client went before answering
  rpc::Router router;
  std::optional<rpc::net::Server> server;
  bool started = false;
  asio::io_context io;  // for the clients' sockets
};

// A client of the protocol a test loops over: WebSocket for Protocol::http, otherwise a stream
// framed as the protocol says.
class ProtocolClient {
 public:
  ProtocolClient(asio::io_context& io, rpc::net::Protocol protocol, int port) {
    if (protocol == rpc::net::Protocol::http) {
      ws_.emplace(io, port);
    } else {
      stream_.emplace(netclient::connect_tcp(io, port), protocol == rpc::net::Protocol::content_length);
    }
  }
  void send(const std::string& message) { ws_ ? ws_->send(message) : stream_->send(message); }
  std::optional<std::string> receive() { return ws_ ? ws_->receive() : stream_->receive(); }
  // The stream client; nullptr over WebSocket.
  StreamClient<netclient::tcp::socket>* stream() { return stream_ ? &*stream_ : nullptr; }

 private:
  std::optional<WsClient> ws_;
  std::optional<StreamClient<netclient::tcp::socket>> stream_;
};

std::string unix_path(const char* name) {
  const auto file = "batchrpc-net-test-" + std::to_string(::getpid()) + "-" + name + ".sock";
  return (std::filesystem::temp_directory_path() / file).string();
}

}  // namespace

TEST_CASE("net: the README's example serves HTTP, WebSocket and a Unix socket, and shuts down") {
  rpc::Router router;
  router.add("add", [](int a, int b) { return a + b; }, rpc::names("a", "b"));
  const std::string path = unix_path("readme");
  int port = 0;
  asio::io_context io;
  {
    // snippet:begin net
    rpc::net::Server server{router, {.max_connections = 5000}};
    port = server.listen("127.0.0.1", 0);  // HTTP and WebSocket; 0: any free port
    server.listen_unix(path, rpc::net::Protocol::lines);
    server.start();  // serves on threads of its own; ~Server shuts down gracefully and joins them
    // snippet:end
    HttpClient http_client(io, port);
    const auto reply = http_client.call(call("add", "[1,2]", "1"));
    REQUIRE(reply);
    CHECK(reply->body() == result("1", "3"));
    WsClient ws(io, port);
    CHECK(ws.call(call("add", "[2,2]", "2")) == result("2", "4"));
    StreamClient lines(netclient::connect_unix(io, path), false);
    CHECK(lines.call(call("add", "[3,3]", "3")) == result("3", "6"));
  }
  CHECK_FALSE(std::filesystem::exists(path));  // removed at shutdown
}

namespace {

// The README's MCP server, defined in its own function as a user would write it.
void readme_mcp_server(rpc::Router& router, rpc::Tools& tools) {
  // snippet:begin mcp
  rpc::add_builtins(router, {.mcp_cancel = true});  // ping, notifications/cancelled
  router.add("initialize", [](rpc::Params) {  // a real server negotiates protocolVersion
    return rpc::json(R"({"protocolVersion":"2025-06-18","capabilities":{"tools":{}},)"
                     R"("serverInfo":{"name":"words","version":"1.0.0"}})");
  });
  router.add("notifications/initialized", [] {});
  router.add("count_words", [](const std::vector<std::string>& texts, rpc::Context& ctx) {
    const rpc::Progress progress(ctx);  // reports if the client sent a progressToken
    std::size_t words = 0;
    for (std::size_t i = 0; i < texts.size() && !ctx.stop_requested(); ++i) {
      std::istringstream in(texts[i]);
      words += static_cast<std::size_t>(std::distance(std::istream_iterator<std::string>(in), {}));
      progress.report(static_cast<double>(i + 1), static_cast<double>(texts.size()));
    }
    return rpc::json("{\"words\":" + std::to_string(words) + "}");
  }, rpc::names("texts"));
  tools.expose("count_words", {.description = "Counts the words in texts.",
      .input_schema = rpc::json(R"({"type":"object","required":["texts"],)"
                                R"("properties":{"texts":{"type":"array","items":{"type":"string"}}}})")});
  tools.add_batch_tool();  // several tool calls in one
  // snippet:end
}

http::request<http::string_body> mcp_post(std::string body, std::string_view session) {
  auto request = netclient::post(std::move(body));
  request.target("/mcp");
  request.set(http::field::accept, "application/json, text/event-stream");
  if (!session.empty()) request.set("Mcp-Session-Id", session);
  return request;
}

}  // namespace

TEST_CASE("net: MCP: an inline handler's messages come before its reply, on its own response") {
  rpc::Router router;
  router.add("initialize", [](rpc::Params) { return rpc::json("{}"); });
  router.add("quick", [](rpc::Context& ctx) {
    ctx.peer().notify("notifications/message", rpc::json(R"({"level":"info","data":"quick"})"));
    return 1;
  }, {.inline_only = true});
  rpc::net::Server server{router};
  const int port = server.listen("127.0.0.1", 0, rpc::net::Protocol::mcp);
  server.start();
  asio::io_context io;
  HttpClient client(io, port);
  auto initialize = mcp_post(call("initialize", "{}", "1"), "");
  client.send(initialize);
  const auto initialized = client.receive();
  REQUIRE(initialized);
  const std::string session(initialized->at("Mcp-Session-Id"));
  auto quick = mcp_post(call("quick", "{}", "2"), session);
  client.send(quick);
  const auto reply = client.receive();
  REQUIRE(reply);
  CHECK((*reply)[http::field::content_type] == "text/event-stream");
  CHECK(reply->body() == "event: message\ndata: "
                         R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"quick"}})"
                         "\n\nevent: message\ndata: "
                         R"({"jsonrpc":"2.0","id":2,"result":1})"
                         "\n\n");
}

TEST_CASE("net: the README's MCP server answers over Streamable HTTP, progress first") {
  rpc::Router router;
  rpc::Tools tools{router};
  readme_mcp_server(router, tools);
  asio::io_context io;
  int port = 0;
  {
    // snippet:begin mcp_http
    rpc::net::Server server{router};
    port = server.listen("127.0.0.1", 0, rpc::net::Protocol::mcp);  // http://127.0.0.1:port/mcp
    server.start();
    // snippet:end
    HttpClient client(io, port);
    auto initialize = mcp_post(call("initialize", R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                                                  R"("clientInfo":{"name":"t","version":"1"}})", "1"), "");
    client.send(initialize);
    const auto initialized = client.receive();
    REQUIRE(initialized);
    CHECK(initialized->result() == http::status::ok);
    CHECK(initialized->body() ==
          R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"words","version":"1.0.0"}}})");
    const std::string session(initialized->at("Mcp-Session-Id"));
    CHECK(session.size() == 32);

    auto confirm = mcp_post(notification("notifications/initialized", "{}"), session);
    client.send(confirm);
    const auto accepted = client.receive();
    REQUIRE(accepted);
    CHECK(accepted->result() == http::status::accepted);
    CHECK(accepted->body().empty());

    auto count = mcp_post(call("tools/call", R"({"name":"count_words","arguments":{"texts":["a b","c"]},"_meta":{"progressToken":7}})", "2"), session);
    client.send(count);
    const auto counted = client.receive();
    REQUIRE(counted);
    CHECK(counted->result() == http::status::ok);
    CHECK((*counted)[http::field::content_type] == "text/event-stream");
    CHECK((*counted)["Mcp-Session-Id"] == session);
    CHECK(counted->body() ==
          "event: message\ndata: "
          R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1,"total":2}})"
          "\n\nevent: message\ndata: "
          R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2,"total":2}})"
          "\n\nevent: message\ndata: "
          R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"words\":3}"}],"structuredContent":{"words":3},"isError":false}})"
          "\n\n");
  }
}

TEST_SUITE("net: HTTP") {
  TEST_CASE("a request is answered 200 with the reply and the session's id, a notification 204 with no body") {
    Fixture f;
    HttpClient client(f.io, f.listen());
    const auto reply = client.call(call("add", R"({"a":2,"b":3})", "1"));
    REQUIRE(reply);
    CHECK(reply->result_int() == 200);
    CHECK(reply->body() == result("1", "5"));
    CHECK((*reply)[http::field::content_type] == "application/json");
    CHECK((*reply)["Rpc-Session-Id"].size() == 32);
    const auto none = client.call(notification("add", "[1,2]"));
    REQUIRE(none);
    CHECK(none->result_int() == 204);
    CHECK(none->body() == "");
    CHECK(none->find(http::field::content_length) == none->end());
    const auto batch = client.call("[" + call("add", "[1,1]", "1") + "," + notification("add", "[1,1]") + "," +
                                   call("nope", "[]", "\"x\"") + "]");
    REQUIRE(batch);
    CHECK(batch->body() == "[" + result("1", "2") + "," + error("\"x\"", -32601, "Method not found") + "]");
  }

  TEST_CASE("session ids carry the configured prefix, for a load balancer to route on") {
    Fixture f({.session_id_prefix = "b7-"});
    HttpClient client(f.io, f.listen());
    const auto reply = client.call(call("add", "[1,1]", "1"));
    REQUIRE(reply);
    const std::string id((*reply)["Rpc-Session-Id"]);
    CHECK(id.size() == 35);
    CHECK(id.rfind("b7-", 0) == 0);
  }

  TEST_CASE("other methods are 405, other content types 415, a body past the limit 413 and closed") {
    Fixture f({}, rpc::Limits{.max_message_bytes = 1024});
    HttpClient client(f.io, f.listen());
    http::request<http::string_body> get{http::verb::get, "/", 11};
    get.set(http::field::host, "x");
    client.send(get);
    auto reply = client.receive();
    REQUIRE(reply);
    CHECK(reply->result_int() == 405);
    CHECK((*reply)[http::field::allow] == "POST");
    reply = client.call(call("add", "[1,2]", "1"), "text/plain");
    REQUIRE(reply);
    CHECK(reply->result_int() == 415);
    reply = client.call(call("add", "[1,2]", "1"), "application/json; charset=utf-8");  // still served
    REQUIRE(reply);
    CHECK(reply->body() == result("1", "3"));
    reply = client.call(std::string(2000, ' '));
    REQUIRE(reply);
    CHECK(reply->result_int() == 413);
    CHECK(reply->body() == "Request body larger than 1024 bytes\n");
    CHECK(client.closed_by_server());
  }

  TEST_CASE("a chunked body past the limit is answered 413 and closed: the rest is never read as a request") {
    Fixture f({}, rpc::Limits{.max_message_bytes = 64});
    HttpClient client(f.io, f.listen());
    const std::string inner_body = call("add", "[40,2]", R"("smuggled")");
    const std::string inner = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(inner_body.size()) + "\r\n\r\n" + inner_body;
    char size[16];
    const int digits = std::snprintf(size, sizeof size, "%zx", inner.size());
    client.write_raw("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n80\r\n" + std::string(128, ' ') + "\r\n" +
                     std::string(size, static_cast<std::size_t>(digits)) + "\r\n" + inner + "\r\n0\r\n\r\n");
    const auto received_or_timeout = client.read_until_closed();
    REQUIRE(received_or_timeout);  // closed, not timed out
    const std::string& received = *received_or_timeout;
    CHECK(received.rfind("HTTP/1.1 413 ", 0) == 0);
    CHECK(received.find("HTTP/1.1 ", 1) == std::string::npos);  // one response only
    CHECK(received.find("smuggled") == std::string::npos);
  }

  TEST_CASE("a chunked body that cannot be read is answered 400 and closed: what follows is never read") {
    Fixture f;
    HttpClient client(f.io, f.listen());
    const std::string inner_body = call("add", "[40,2]", R"("smuggled")");
    client.write_raw("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\nzz\r\n"
                     "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                     std::to_string(inner_body.size()) + "\r\n\r\n" + inner_body);
    const auto received_or_timeout = client.read_until_closed();
    REQUIRE(received_or_timeout);  // closed, not timed out
    const std::string& received = *received_or_timeout;
    CHECK(received.rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK(received.find("HTTP/1.1 ", 1) == std::string::npos);  // one response only
    CHECK(received.find("smuggled") == std::string::npos);
  }

  TEST_CASE("a chunked body and Expect: 100-continue are served") {
    Fixture f;
    HttpClient client(f.io, f.listen());
    const std::string body = call("add", "[20,22]", "7");
    client.write_raw("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                     [&] {
                       char size[16];
                       std::snprintf(size, sizeof size, "%zx", body.size());
                       return std::string(size);
                     }() + "\r\n" + body + "\r\n0\r\n\r\n");
    auto reply = client.receive();
    REQUIRE(reply);
    CHECK(reply->body() == result("7", "42"));
    client.write_raw("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                     "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n");
    char interim[64] = {};
    const std::size_t n = client.socket().read_some(asio::buffer(interim, 25));
    CHECK(std::string(interim, n) == "HTTP/1.1 100 Continue\r\n\r\n");
    client.write_raw(body);
    reply = client.receive();
    REQUIRE(reply);
    CHECK(reply->body() == result("7", "42"));
  }

  TEST_CASE("pipelined requests are answered in request order, a slow first one included") {
    Fixture f;
    HttpClient client(f.io, f.listen());
    auto first = netclient::post(call("sleep", "[200]", "1"));
    auto second = netclient::post(call("add", "[1,2]", "2"));
    client.send(first);
    client.send(second);
    const auto a = client.receive();
    const auto b = client.receive();
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->body() == result("1", "200"));
    CHECK(b->body() == result("2", "3"));
  }

  TEST_CASE("a request naming a session is served by it: a cancel on another connection reaches it") {
    Fixture f;
    const int port = f.listen();
    HttpClient first(f.io, port);
    const auto hello = first.call(call("ping", "{}", "0"));
    REQUIRE(hello);
    const std::string id(hello->at("Rpc-Session-Id"));
    auto slow = netclient::post(call("sleep", "[10000]", "1"));
    first.send(slow);
    std::this_thread::sleep_for(100ms);  // the sleep is running
    HttpClient second(f.io, port);
    auto cancel = netclient::post(notification("notifications/cancel", R"({"id":1})"));
    cancel.set("Rpc-Session-Id", id);
    second.send(cancel);
    const auto cancelled_reply = second.receive();
    REQUIRE(cancelled_reply);
    CHECK(cancelled_reply->result_int() == 204);
    const auto reply = first.receive();
    REQUIRE(reply);
    CHECK(reply->body() == cancelled("1"));
    auto unknown = netclient::post(call("ping", "{}", "2"));
    unknown.set("Rpc-Session-Id", "0123");
    second.send(unknown);
    const auto not_found = second.receive();
    REQUIRE(not_found);
    CHECK(not_found->result_int() == 404);
  }
}

// Sessions kept by id over HTTP (the server's SessionRegistry): bounded, least recently used
// out first, and never while in use.
namespace {
// One HTTP exchange on `client`, naming session `id` when not empty.
netclient::Response exchange(HttpClient& client, const std::string& body, const std::string& id = {}) {
  auto request = netclient::post(body);
  if (!id.empty()) request.set("Rpc-Session-Id", id);
  client.send(request);
  auto response = client.receive();
  REQUIRE(response);
  return *response;
}
std::string session_of(const netclient::Response& response) {
  const auto found = response.find("Rpc-Session-Id");
  return found == response.end() ? std::string() : std::string(found->value());
}
}  // namespace

TEST_SUITE("net: HTTP sessions") {
  const std::string add = call("add", "[1,2]", "1");
  const std::string sum = result("1", "3");

  TEST_CASE("connections that send nothing take no session slot") {
    Fixture f({.max_sessions = 2});
    const int port = f.listen();
    HttpClient hello_client(f.io, port);
    const auto hello = exchange(hello_client, add);
    const std::string id = session_of(hello);
    REQUIRE(id.size() == 32);
    std::vector<netclient::tcp::socket> bare;
    for (int i = 0; i < 6; ++i) bare.push_back(netclient::connect_tcp(f.io, port));  // left open
    for (int i = 0; i < 6; ++i) netclient::connect_tcp(f.io, port).close();           // opened and closed
    HttpClient other(f.io, port);
    const auto again = exchange(other, add, id);
    CHECK(again.result_int() == 200);
    CHECK(again.body() == sum);
    CHECK(session_of(again) == id);
  }

  TEST_CASE("sessions are evicted least recently used first, also within one second") {
    // Each step: a new connection's first request (a new session, which may evict the least
    // recently used), a request naming a kept session (now the most recently used), or one
    // naming an evicted session (404). A model predicts every status and id.
    constexpr std::size_t max_sessions = 3;
    Fixture f({.max_sessions = max_sessions});
    const int port = f.listen();
    HttpClient named(f.io, port);  // one kept connection for requests naming a session
    std::uint32_t random = 7;
    const auto next = [&random] { return random = random * 1664525u + 1013904223u, random >> 8; };
    std::deque<std::string> kept;  // least recently used first
    std::vector<std::string> evicted;
    for (int step = 0; step < 60; ++step) {
      CAPTURE(step);
      const std::uint32_t choice = next() % 8;
      if (kept.empty() || choice < 3) {
        HttpClient fresh(f.io, port);
        const auto reply = exchange(fresh, add);
        CHECK(reply.body() == sum);
        REQUIRE(session_of(reply).size() == 32);
        if (kept.size() == max_sessions) {
          evicted.push_back(kept.front());
          kept.pop_front();
        }
        kept.push_back(session_of(reply));
      } else if (choice < 7 || evicted.empty()) {
        const std::size_t at = next() % kept.size();
        const std::string id = kept[at];
        const auto reply = exchange(named, add, id);
        CHECK(reply.result_int() == 200);
        CHECK(session_of(reply) == id);
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(at));
        kept.push_back(id);
      } else {
        CHECK(exchange(named, add, evicted[next() % evicted.size()]).result_int() == 404);
      }
    }
    CHECK(evicted.size() >= 5);
  }

  TEST_CASE("a connection whose idle session was evicted gets it back with the same id") {
    Fixture f({.max_sessions = 1});
    const int port = f.listen();
    HttpClient kept(f.io, port);
    const std::string first = session_of(exchange(kept, add));
    REQUIRE(first.size() == 32);
    HttpClient other_client(f.io, port);
    const std::string other = session_of(exchange(other_client, add));  // takes the only slot
    REQUIRE(other.size() == 32);
    CHECK(other != first);
    HttpClient probe(f.io, port);
    CHECK(exchange(probe, add, first).result_int() == 404);
    const auto back = exchange(kept, add);  // the kept connection's own session comes back
    CHECK(back.body() == sum);
    CHECK(session_of(back) == first);
    CHECK(exchange(probe, add, first).result_int() == 200);
    CHECK(exchange(probe, add, other).result_int() == 404);
  }

  TEST_CASE("a session in use is not evicted, so a cancel from another connection reaches it") {
    Fixture f({.max_sessions = 1});
    const int port = f.listen();
    HttpClient first(f.io, port);
    const std::string id = session_of(exchange(first, add));
    REQUIRE(id.size() == 32);
    auto slow = netclient::post(call("gate", "[]", "5"));
    first.send(slow);
    REQUIRE(f.gate.wait_arrived(1));
    HttpClient second(f.io, port);
    const auto unkept = exchange(second, add);  // no room: served, but not kept
    CHECK(unkept.body() == sum);
    CHECK(session_of(unkept) == "");
    HttpClient third(f.io, port);
    const auto cancel = exchange(third, call("notifications/cancel", R"({"id":5})", "6"), id);
    CHECK(cancel.result_int() == 200);
    CHECK(cancel.body() == result("6", R"({"cancelled":true})"));
    f.gate.release();
    const auto reply = first.receive();
    REQUIRE(reply);
    CHECK(reply->body() == result("5", "true"));  // the gate takes no Context: it runs to its end
  }
}

TEST_SUITE("net: WebSocket") {
  TEST_CASE("each text message is one message, replies come as they complete, and notifications get none") {
    Fixture f;
    WsClient ws(f.io, f.listen());
    CHECK(ws.call(call("add", "[2,2]", "1")) == result("1", "4"));
    ws.send(notification("add", "[1,1]"));
    CHECK(ws.call(call("add", "[3,3]", "2")) == result("2", "6"));
    ws.send(call("sleep", "[300]", "\"slow\""));
    CHECK(ws.call(call("add", "[4,4]", "3")) == result("3", "8"));  // not held up by the sleep
    CHECK(ws.receive() == result("\"slow\"", "300"));
    ws.send(call("sleep", "[10000]", "9"));
    ws.send(notification("notifications/cancel", R"({"id":9})"));
    CHECK(ws.receive() == cancelled("9"));
    CHECK(ws.call("[" + call("add", "[1,1]", "1") + "]") == "[" + result("1", "2") + "]");
  }

  TEST_CASE("a binary message closes with 1003, one past the limit with 1009") {
    Fixture f({}, rpc::Limits{.max_message_bytes = 1024});
    const int port = f.listen();
    WsClient binary(f.io, port);
    binary.send_binary(call("add", "[1,1]", "1"));
    CHECK_FALSE(binary.receive());
    CHECK(binary.close_code() == 1003);
    WsClient large(f.io, port);
    large.send(std::string(2000, ' '));
    CHECK_FALSE(large.receive());
    CHECK(large.close_code() == 1009);
  }
}

TEST_SUITE("net: two-way") {
  // The server's own notification and request go out on the client's connection, whole and in
  // order; the client's Response comes back on it and completes the handler's answer.
  template <class Client>
  void ask_and_answer(Client& client) {
    client.send(call("ask_client", R"(["roots/list"])", "1"));
    CHECK(client.receive() == R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"asking"}})");
    CHECK(client.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    CHECK(client.call(call("add", "[1,2]", "2")) == result("2", "3"));  // served meanwhile
    client.send(R"({"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}})");
    CHECK(client.receive() == result("1", R"({"roots":[]})"));
  }

  TEST_CASE("WebSocket and both stream framings carry the server's messages and the client's answers") {
    Fixture f;
    SUBCASE("WebSocket") {
      WsClient ws(f.io, f.listen());
      ask_and_answer(ws);
    }
    SUBCASE("lines") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
      ask_and_answer(client);
    }
    SUBCASE("Content-Length") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::content_length)), true);
      ask_and_answer(client);
    }
  }

  // Every call in flight waits on the client, and requests come before the client's answers
  // (more of them than the cap): the connection still reads the answers; the requests wait,
  // then are served.
  template <class Client>
  void answer_at_the_cap(Client& client, int cap) {
    for (int i = 1; i <= cap; ++i) client.send(call("ask_client", R"(["roots/list"])", std::to_string(i)));
    for (int i = cap + 1; i <= cap + 3; ++i) client.send(call("add", "[1,2]", std::to_string(i)));  // held
    std::vector<std::string> asked;
    for (int i = 0; i < 2 * cap; ++i) asked.push_back(client.receive().value_or("<none>"));  // notes, requests
    std::sort(asked.begin(), asked.end());
    std::vector<std::string> expected;
    for (int i = 1; i <= cap; ++i) {
      expected.push_back(R"({"jsonrpc":"2.0","id":"srv-)" + std::to_string(i) + R"(","method":"roots/list","params":{}})");
    }
    for (int i = 1; i <= cap; ++i) {
      expected.push_back(R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"asking"}})");
    }
    CHECK(asked == expected);
    // The first answer alone, the rest in a batch with a request: a batch holding an answer
    // goes in at once too.
    client.send(R"({"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}})");
    std::string batch = "[";
    for (int i = 2; i <= cap; ++i) batch += R"({"jsonrpc":"2.0","id":"srv-)" + std::to_string(i) + R"(","result":{"roots":[]}},)";
    batch += call("add", "[2,2]", "99") + "]";
    client.send(batch);
    std::vector<std::string> replies;
    for (int i = 0; i < cap + 4; ++i) replies.push_back(client.receive().value_or("<none>"));
    std::sort(replies.begin(), replies.end());
    std::vector<std::string> want;
    for (int i = 1; i <= cap; ++i) want.push_back(result(std::to_string(i), R"({"roots":[]})"));
    for (int i = cap + 1; i <= cap + 3; ++i) want.push_back(result(std::to_string(i), "3"));
    want.push_back("[" + result("99", "4") + "]");
    std::sort(want.begin(), want.end());
    CHECK(replies == want);
  }

  TEST_CASE("at the in-flight cap the client's answers still reach the handlers waiting for them") {
    for (const int cap : {1, 2}) {
      CAPTURE(cap);
      Fixture f({.max_in_flight = static_cast<std::size_t>(cap)});
      SUBCASE("WebSocket") {
        WsClient ws(f.io, f.listen());
        answer_at_the_cap(ws, cap);
      }
      SUBCASE("lines") {
        StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
        answer_at_the_cap(client, cap);
      }
      SUBCASE("Content-Length") {
        StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::content_length)), true);
        answer_at_the_cap(client, cap);
      }
      CHECK(f.client_gone.load() == 0);
    }
  }

  TEST_CASE("at the in-flight cap a stream client that stops sending is still seen to go") {
    // Its answers will not come: the handler waiting hears -32094; what was held is served.
    Fixture f({.max_in_flight = 1});
    StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
    client.send(call("ask_client", R"(["roots/list"])", "1"));
    client.send(call("add", "[1,2]", "2"));
    client.send(call("add", "[2,2]", "3"));
    CHECK(client.receive());  // the note
    CHECK(client.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    client.shutdown_send();
    CHECK(client.receive() == error("1", -32094, "the client's input ended before it answered"));
    CHECK(client.receive() == result("2", "3"));
    CHECK(client.receive() == result("3", "4"));
    CHECK(client.closed_by_server());
    CHECK(f.client_gone.load() == 1);
  }

  TEST_CASE("at the in-flight cap a client that sends work past the hold, not its answers, is closed") {
    Fixture f({.max_in_flight = 1});
    StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
    client.send(call("ask_client", R"(["roots/list"])", "1"));
    CHECK(client.receive());  // the note
    CHECK(client.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    std::string flood;  // 6 MiB of requests, past the 4 MiB held while the server waits
    const std::string padded = call("add", "[1,2]", "\"" + std::string(1000, 'p') + "\"") + "\n";
    while (flood.size() < (std::size_t{6} << 20)) flood += padded;
    // Written without blocking, so that a server that stopped reading fails the test, not hangs it.
    client.socket().non_blocking(true);
    std::size_t written = 0;
    const auto deadline = Clock::now() + 5s;
    while (f.server->connections() > 0 && Clock::now() < deadline) {
      boost::system::error_code error;
      if (written < flood.size()) written += client.socket().write_some(asio::buffer(flood.data() + written, flood.size() - written), error);
      if (error && error != asio::error::would_block) break;  // the server closed the connection
      std::this_thread::sleep_for(1ms);
    }
    while (f.server->connections() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
    CHECK(f.server->connections() == 0);
    CHECK(f.client_gone.load() == 1);  // the handler heard -32094
  }

  TEST_CASE("a client that leaves with the server's request unanswered: the handler hears -32094") {
    Fixture f;
    SUBCASE("WebSocket") {
      WsClient ws(f.io, f.listen());
      ws.send(call("ask_client", R"(["roots/list"])", "1"));
      CHECK(ws.receive());
      CHECK(ws.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    }
    SUBCASE("lines") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
      client.send(call("ask_client", R"(["roots/list"])", "1"));
      CHECK(client.receive());
      CHECK(client.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    }
    const auto start = Clock::now();
    while (f.client_gone.load() == 0 && Clock::now() - start < 5s) std::this_thread::sleep_for(1ms);
    CHECK(f.client_gone.load() == 1);
  }

  // A shutdown's grace is for the work in flight, and a handler waiting for its client's answer
  // is such work: WebSocket and stream connections read on until the grace ends.
  template <class Client>
  void answer_during_shutdown(Fixture& f, Client& client) {
    client.send(call("ask_client", R"(["roots/list"])", "1"));
    CHECK(client.receive() == R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"asking"}})");
    CHECK(client.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    const auto start = Clock::now();
    std::thread stopping([&] { f.server->shutdown(); });
    std::this_thread::sleep_for(200ms);
    client.send(R"({"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}})");
    CHECK(client.receive() == result("1", R"({"roots":[]})"));
    if constexpr (std::is_same_v<Client, WsClient>) {
      CHECK_FALSE(client.receive());
      CHECK(client.close_code() == 1001);
    } else {
      CHECK(client.closed_by_server());
    }
    stopping.join();
    CHECK(Clock::now() - start < 5s);  // as soon as the handler was answered, not after the grace
    CHECK(f.client_gone.load() == 0);
  }

  TEST_CASE("during a shutdown's grace the client's answer still reaches the handler waiting for it") {
    Fixture f({.shutdown_grace = 10s});
    SUBCASE("WebSocket") {
      WsClient ws(f.io, f.listen());
      answer_during_shutdown(f, ws);
    }
    SUBCASE("lines") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
      answer_during_shutdown(f, client);
    }
    SUBCASE("Content-Length") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::content_length)), true);
      answer_during_shutdown(f, client);
    }
  }

  TEST_CASE("past a shutdown's grace a request to the client is answered -32094, and its call -32800") {
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f({.shutdown_grace = 200ms});
      ProtocolClient client(f.io, protocol, f.listen(protocol));
      StreamClient<netclient::tcp::socket>* lines = client.stream();
      client.send(call("ask_client", R"(["roots/list"])", "1"));
      CHECK(client.receive());
      CHECK(client.receive() == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
      if (lines) lines->write_raw(call("add", "[1,2]", "2"));  // a line never finished: not taken
      const auto start = Clock::now();
      f.server->shutdown();  // the client never answers
      const auto took = Clock::now() - start;
      CHECK(took >= 200ms);
      CHECK(took < 3s);
      CHECK(client.receive() == cancelled("1"));
      if (lines) CHECK(lines->closed_by_server());  // and nothing after it
      CHECK(f.client_gone.load() == 1);  // the handler heard -32094
    }
  }

  TEST_CASE("past a shutdown's grace, requests held at the in-flight cap are answered -32800 too") {
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines, rpc::net::Protocol::content_length}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f({.max_in_flight = 1, .shutdown_grace = 200ms});
      ProtocolClient client(f.io, protocol, f.listen(protocol));
      client.send(call("sleep", "[10000]", "1"));
      client.send(call("sleep", "[10000]", "2"));  // held
      std::this_thread::sleep_for(100ms);
      f.server->shutdown();
      std::vector<std::string> replies{client.receive().value_or("<none>"), client.receive().value_or("<none>")};
      std::sort(replies.begin(), replies.end());
      CHECK(replies == std::vector<std::string>{cancelled("1"), cancelled("2")});
    }
  }

  // Held messages never started: past the grace they run nothing, not even a method that runs
  // on the I/O thread, and each call in them hears -32800 unless its own checks answer it.
  TEST_CASE("past a shutdown's grace, messages held at the in-flight cap run nothing") {
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines, rpc::net::Protocol::content_length}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f({.max_in_flight = 1, .shutdown_grace = 200ms});
      std::atomic<int> ticks{0};
      f.router.add("tick", [&ticks] { return ticks.fetch_add(1) + 1; }, {.inline_only = true});
      ProtocolClient client(f.io, protocol, f.listen(protocol));
      client.send(call("sleep", "[10000]", "1"));
      client.send("[" + call("tick", "[]", "2") + "," + notification("tick", "[]") + "," + call("nosuch", "[]", "3") +
                  R"(,{"jsonrpc":"2.0","method":1,"id":4}])");  // held
      client.send(call("tick", "[]", "5"));            // held
      client.send(notification("tick", "[]"));         // held
      std::this_thread::sleep_for(100ms);
      f.server->shutdown();
      std::vector<std::string> replies;
      for (int i = 0; i < 3; ++i) replies.push_back(client.receive().value_or("<none>"));
      std::sort(replies.begin(), replies.end());
      const std::string batch = "[" + cancelled("2") + "," + error("3", -32601, "Method not found") + "," +
                                invalid_request(R"(\"method\" must be a string)") + "]";
      CHECK(replies == std::vector<std::string>{batch, cancelled("1"), cancelled("5")});
      CHECK(ticks.load() == 0);
    }
  }

  TEST_CASE("a stream client that stops sending still hears from a handler that is still running") {
    Fixture f;
    f.router.add("late", [](rpc::Context& ctx) {
      std::this_thread::sleep_for(200ms);  // the client's input ends meanwhile
      const bool told = ctx.peer().notify("late/progress");
      const bool refused = ctx.peer().request("late/question").get().error()->code() == -32094;  // at once
      return told && refused;
    });
    StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
    client.send(call("late", "[]", "1"));
    client.shutdown_send();
    CHECK(client.receive() == R"({"jsonrpc":"2.0","method":"late/progress"})");
    CHECK(client.receive() == result("1", "true"));
    CHECK(client.closed_by_server());
  }

  TEST_CASE("over HTTP POST there is no way to the client: a request to it fails at once") {
    Fixture f;
    HttpClient client(f.io, f.listen());
    const auto reply = client.call(call("ask_client", R"(["roots/list"])", "1"));
    REQUIRE(reply);
    CHECK(reply->body() == error("1", -32094, "the session has no connection to its client"));
    CHECK(f.client_gone.load() == 1);
  }
}

TEST_SUITE("net: on_session") {
  // Grants "admin" to a client that shows the token, refuses one that says so, and records
  // what it was told.
  struct Gatekeeper {
    std::mutex mutex;
    std::vector<std::string> seen;  // "<websocket> <peer is loopback> <tls>"
    rpc::net::ServerOptions options() {
      return {.on_session = [this](const rpc::net::ConnectionInfo& info, rpc::Session& session) {
        {
          std::lock_guard lock(mutex);
          seen.push_back(std::string(info.websocket ? "ws" : "plain") + (info.peer.rfind("127.0.0.1:", 0) == 0 ? " loopback" : " ?") +
                         (info.tls ? " tls" : ""));
        }
        if (info.header("x-refuse") == "yes") throw std::runtime_error("refused");
        if (info.header("Authorization") == "Bearer ok" || info.protocol == rpc::net::Protocol::lines) session.grant("admin");
      }};
    }
  };

  TEST_CASE("it decides what each session is granted, from the peer and the headers, or refuses it") {
    Gatekeeper keeper;
    Fixture f(keeper.options());
    f.router.add("secret", [] { return 42; }, {.capability = "admin"});
    const int lines_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
    const int port = f.listen();
    const std::string secret = call("secret", "[]", "1");
    const std::string refused = error("1", -32601, "Method not found", R"({"capability":"admin"})");
    HttpClient anonymous(f.io, port);
    CHECK(anonymous.call(secret)->body() == refused);
    HttpClient trusted(f.io, port);
    auto request = netclient::post(secret);
    request.set("Authorization", "Bearer ok");
    trusted.send(request);
    CHECK(trusted.receive()->body() == result("1", "42"));
    CHECK(trusted.call(secret)->body() == result("1", "42"));  // the connection's session, granted once
    HttpClient rejected(f.io, port);
    request.set("X-Refuse", "yes");
    rejected.send(request);
    const auto forbidden = rejected.receive();
    REQUIRE(forbidden);
    CHECK(forbidden->result_int() == 403);
    CHECK(rejected.closed_by_server());
    WsClient ws(f.io, port, {"Authorization", "Bearer ok"});
    CHECK(ws.call(secret) == result("1", "42"));
    WsClient ws_rejected(f.io, port, {"X-Refuse", "yes"});
    CHECK_FALSE(ws_rejected.receive());
    CHECK(ws_rejected.close_code() == 1008);
    StreamClient lines(netclient::connect_tcp(f.io, lines_port), false);
    CHECK(lines.call(secret) == result("1", "42"));
    std::lock_guard lock(keeper.mutex);
    CHECK(keeper.seen == std::vector<std::string>{"plain loopback", "plain loopback", "plain loopback", "ws loopback",
                                                  "ws loopback", "plain loopback"});
  }
}

TEST_SUITE("net: on_session greets") {
  TEST_CASE("a message on_session sends reaches the client first, on WebSocket after the handshake") {
    Fixture f({.on_session = [](const rpc::net::ConnectionInfo&, rpc::Session& session) {
      CHECK(session.peer().notify("welcome", rpc::json(R"({"server":"test"})")));
    }});
    const std::string welcome = R"({"jsonrpc":"2.0","method":"welcome","params":{"server":"test"}})";
    SUBCASE("WebSocket") {
      WsClient ws(f.io, f.listen());
      CHECK(ws.receive() == welcome);
      CHECK(ws.call(call("add", "[1,2]", "1")) == result("1", "3"));
    }
    SUBCASE("lines") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
      CHECK(client.receive() == welcome);
      CHECK(client.call(call("add", "[1,2]", "1")) == result("1", "3"));
    }
  }
}

TEST_SUITE("net: streams") {
  TEST_CASE_TEMPLATE("TCP and Unix sockets serve both framings, replies as they complete", T, std::true_type, std::false_type) {
    constexpr bool over_unix = T::value;
    for (const auto protocol : {rpc::net::Protocol::lines, rpc::net::Protocol::content_length}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f;
      const bool content_length = protocol == rpc::net::Protocol::content_length;
      auto check = [&](auto client) {
        CHECK(client.call(call("add", "[1,2]", "1")) == result("1", "3"));
        client.send(notification("add", "[1,1]"));
        client.send(call("sleep", "[300]", "2"));
        CHECK(client.call(call("add", "[5,5]", "3")) == result("3", "10"));
        CHECK(client.receive() == result("2", "300"));
        client.write_raw(content_length ? "Content-Length: 3\r\n\r\n[1," : "[1,\n");
        CHECK(client.receive() == error("null", -32700, "Parse error", R"({"offset":3,"reason":"Invalid value."})"));
        CHECK(client.call(call("add", "[2,2]", "4")) == result("4", "4"));
      };
      if (over_unix) {
        const std::string path = unix_path(content_length ? "cl" : "lines");
        f.server->listen_unix(path, protocol);
        f.server->start();
        check(StreamClient(netclient::connect_unix(f.io, path), content_length));
      } else {
        check(StreamClient(netclient::connect_tcp(f.io, f.listen(protocol)), content_length));
      }
    }
  }

  TEST_CASE("a Unix socket left by an earlier run is replaced, but a live server's is not taken") {
    Fixture f;
    const std::string path = unix_path("taken");
    {
      asio::local::stream_protocol::acceptor stale(f.io, asio::local::stream_protocol::endpoint(path));
    }  // closed: the file stays, nobody answers on it
    REQUIRE(std::filesystem::is_socket(path));
    f.server->listen_unix(path, rpc::net::Protocol::lines);
    f.server->start();
    Fixture other;
    CHECK_THROWS_WITH_AS(other.server->listen_unix(path, rpc::net::Protocol::lines),
                         ("batchrpc: cannot listen on " + path + ": a server is listening there").c_str(),
                         std::runtime_error);
    StreamClient client(netclient::connect_unix(f.io, path), false);
    CHECK(client.call(call("add", "[1,2]", "1")) == result("1", "3"));  // still the first server's
  }

  TEST_CASE("listen says what is wrong with a host name or a port out of range") {
    Fixture f;
    CHECK_THROWS_WITH_AS(
        f.server->listen("localhost", 0),
        R"(batchrpc: cannot listen on localhost:0: the host must be an IP address ("0.0.0.0", "::1"), not a name)",
        std::runtime_error);
    CHECK_THROWS_WITH_AS(f.server->listen("127.0.0.1", 70000), "batchrpc: cannot listen on 127.0.0.1:70000: no such port",
                         std::runtime_error);
  }

  TEST_CASE("a frame that cannot be read is -32700, then the connection ends") {
    Fixture f;
    StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::content_length)), true);
    client.write_raw("Content-Type: nothing\r\n\r\n");
    CHECK(client.receive() == error("null", -32700, "Parse error", R"({"reason":"invalid frame: missing Content-Length"})"));
    CHECK(client.closed_by_server());
  }
}

TEST_SUITE("net: defences") {
  TEST_CASE("a slow client is cut off at the request deadline and holds up nobody else") {
    Fixture f({.request_timeout = 300ms});
    const int port = f.listen();
    const int lines_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
    std::vector<std::unique_ptr<HttpClient>> slow;
    for (int i = 0; i < 20; ++i) {
      slow.push_back(std::make_unique<HttpClient>(f.io, port));
      slow.back()->write_raw("POST / HTTP/1.1\r\nHost: x\r\nContent-");  // and nothing more
    }
    StreamClient slow_stream(netclient::connect_tcp(f.io, lines_port), false);
    slow_stream.write_raw(R"({"jsonrpc":"2.0",)");
    const auto start = Clock::now();
    HttpClient other(f.io, port);
    const auto reply = other.call(call("add", "[1,2]", "1"));
    REQUIRE(reply);
    CHECK(reply->body() == result("1", "3"));
    CHECK(Clock::now() - start < 200ms);
    for (auto& client : slow) CHECK(client->closed_by_server());
    CHECK(slow_stream.closed_by_server());
    const auto waited = Clock::now() - start;
    CHECK(waited >= 250ms);
    CHECK(waited < 2s);
  }

  TEST_CASE("an idle connection is closed after the idle timeout, but one with a request running is not") {
    Fixture f({.idle_timeout = 300ms});
    const int port = f.listen();
    HttpClient idle(f.io, port);
    HttpClient busy(f.io, port);
    auto slow = netclient::post(call("sleep", "[600]", "1"));
    busy.send(slow);
    const auto start = Clock::now();
    CHECK(idle.closed_by_server());
    CHECK(Clock::now() - start >= 250ms);
    const auto reply = busy.receive();
    REQUIRE(reply);
    CHECK(reply->body() == result("1", "600"));
  }

  TEST_CASE("past the connection cap: HTTP 503 with Retry-After, WebSocket 1013, a stream -32093") {
    Fixture f({.max_connections = 2, .retry_after = 3s});
    const int port = f.listen();
    const int lines_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
    HttpClient one(f.io, port);
    REQUIRE(one.call(call("add", "[1,1]", "1")));
    WsClient two(f.io, port);
    REQUIRE(two.call(call("add", "[1,1]", "1")) == result("1", "2"));
    CHECK(f.server->connections() == 2);

    HttpClient refused(f.io, port);
    const auto reply = refused.call(call("add", "[1,1]", "1"));
    REQUIRE(reply);
    CHECK(reply->result_int() == 503);
    CHECK((*reply)[http::field::retry_after] == "3");
    CHECK(refused.closed_by_server());
    WsClient refused_ws(f.io, port);
    CHECK_FALSE(refused_ws.receive());
    CHECK(refused_ws.close_code() == 1013);
    StreamClient refused_stream(netclient::connect_tcp(f.io, lines_port), false);
    CHECK(refused_stream.receive() ==
          error("null", -32093, "Server overloaded", R"({"reason":"too many connections"})"));
    CHECK(refused_stream.closed_by_server());

    // A served connection that ends makes room.
    one.socket().close();
    const auto deadline = Clock::now() + 2s;
    while (f.server->connections() > 1 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
    HttpClient next(f.io, port);
    const auto served = next.call(call("add", "[2,2]", "2"));
    REQUIRE(served);
    CHECK(served->body() == result("2", "4"));
  }

  TEST_CASE("at the in-flight cap a connection takes no more requests until replies go out") {
    for (const auto protocol : {rpc::net::Protocol::lines, rpc::net::Protocol::http}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f({.max_in_flight = 2});
      const int port = f.listen(protocol);
      std::string burst;
      for (int i = 1; i <= 6; ++i) {
        const std::string message = call("gate", "[]", std::to_string(i));
        burst += protocol == rpc::net::Protocol::lines
                     ? message + "\n"
                     : "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                           std::to_string(message.size()) + "\r\n\r\n" + message;
      }
      HttpClient http_client(f.io, port);  // a raw connection for either protocol
      http_client.write_raw(burst);
      REQUIRE(f.gate.wait_arrived(2));
      std::this_thread::sleep_for(200ms);
      CHECK(f.gate.count() == 2);  // the other four wait unread
      f.gate.release();
      if (protocol == rpc::net::Protocol::http) {
        for (int i = 1; i <= 6; ++i) {
          const auto reply = http_client.receive();
          REQUIRE(reply);
          CHECK(reply->body() == result(std::to_string(i), "true"));
        }
      } else {
        StreamClient<netclient::tcp::socket> lines(std::move(http_client.socket()), false);
        std::vector<std::string> got;
        for (int i = 1; i <= 6; ++i) got.push_back(lines.receive().value_or("<none>"));
        std::sort(got.begin(), got.end());
        for (int i = 1; i <= 6; ++i) CHECK(got[static_cast<std::size_t>(i - 1)] == result(std::to_string(i), "true"));
      }
      CHECK(f.gate.count() == 6);
    }
  }

  // An answer nobody waits for does not carry a batch's requests past the cap.
  template <class Client>
  void mixed_batches_wait_at_the_cap(Fixture& f, Client& client) {
    for (int i = 1; i <= 6; ++i) {
      client.send("[" + call("gate", "[]", std::to_string(i)) + R"(,{"jsonrpc":"2.0","id":"srv-9","result":1}])");
    }
    REQUIRE(f.gate.wait_arrived(2));
    std::this_thread::sleep_for(200ms);
    CHECK(f.gate.count() == 2);  // the other four are held
    f.gate.release();
    std::vector<std::string> got;
    for (int i = 1; i <= 6; ++i) got.push_back(client.receive().value_or("<none>"));
    std::sort(got.begin(), got.end());
    for (int i = 1; i <= 6; ++i) CHECK(got[static_cast<std::size_t>(i - 1)] == "[" + result(std::to_string(i), "true") + "]");
    CHECK(f.gate.count() == 6);
  }

  TEST_CASE("at the in-flight cap a batch with an answer nobody waits for is held like any work") {
    Fixture f({.max_in_flight = 2});
    SUBCASE("WebSocket") {
      WsClient ws(f.io, f.listen());
      mixed_batches_wait_at_the_cap(f, ws);
    }
    SUBCASE("lines") {
      StreamClient client(netclient::connect_tcp(f.io, f.listen(rpc::net::Protocol::lines)), false);
      mixed_batches_wait_at_the_cap(f, client);
    }
  }

  TEST_CASE("at the in-flight cap a cancellation still reaches the request it names") {
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f({.max_in_flight = 1});
      ProtocolClient client(f.io, protocol, f.listen(protocol));
      const auto start = Clock::now();
      client.send(call("sleep", "[10000]", "1"));
      client.send(call("add", "[1,2]", "2"));  // held: the cap is full
      client.send(notification("notifications/cancel", R"({"id":1})"));
      CHECK(client.receive() == cancelled("1"));
      CHECK(client.receive() == result("2", "3"));
      CHECK(Clock::now() - start < 5s);
    }
  }

  TEST_CASE("at the in-flight cap a cancellation reaches a request held before it") {
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines, rpc::net::Protocol::content_length}) {
      CAPTURE(static_cast<int>(protocol));
      Fixture f({.max_in_flight = 1});
      ProtocolClient client(f.io, protocol, f.listen(protocol));
      const auto start = Clock::now();
      client.send(call("sleep", "[10000]", "1"));
      client.send(call("sleep", "[10000]", "2"));  // held: the cap is full
      client.send(notification("notifications/cancel", R"({"id":2})"));  // names the held one
      client.send(call("add", "[1,2]", "3"));  // held behind it
      client.send(notification("notifications/cancel", R"({"id":1})"));
      CHECK(client.receive() == cancelled("1"));
      CHECK(client.receive() == cancelled("2"));
      CHECK(client.receive() == result("3", "3"));
      CHECK(Clock::now() - start < 5s);
      // The replays sent nothing of their own, and the cap still holds one at a time.
      client.send(call("add", "[2,2]", "4"));
      CHECK(client.receive() == result("4", "4"));
    }
  }

  TEST_CASE("at the in-flight cap what carries no new work is told from what does") {
    Fixture f;
    struct Case {
      std::string message;
      bool new_work;
      bool answers;
      bool cancels = false;
    };
    const std::string add = call("add", "[1,2]", "1");
    const std::string cancel = notification("notifications/cancel", R"({"id":1})");
    const std::string answer = R"({"jsonrpc":"2.0","id":"srv-1","result":1})";
    const std::vector<Case> cases{
        // New work: held at the cap.
        {add, true, false},
        {notification("add", "[1,2]"), true, false},
        {"[" + add + "," + cancel + "]", true, false, true},
        {R"({"jsonrpc":"2.0","method":"add","result":[9],"params":{"method":5},"error":5,"id":3})", true, false},
        {R"({"jsonrpc":"2.0","m\u0065thod":"add","params":[1,2],"id":1})", true, false},
        {"[" + add + ",5]", true, false},  // an invalid member does not let the rest past
        {"[" + add + ",[]]", true, false},
        {"[" + add + ",{}]", true, false},  // no id: not an answer
        {R"({"jsonrpc":"2.0","method":"nope","id":1})", true, false},
        // New work with an answer: goes in while a handler waits on the client.
        {"[" + add + "," + answer + "]", true, true},
        // None: the client's answers (valid or broken), cancellations, invalid members, bad JSON.
        {R"({"jsonrpc":"2.0","id":"srv-1","result":{"method":"add"}})", false, true},
        {R"({"jsonrpc":"2.0","id":"srv-1","res\u0075lt":1})", false, true},
        {R"({"jsonrpc":"2.0","id":"srv-1"})", false, true},
        {"[" + answer + "," + cancel + "]", false, true, true},
        {cancel, false, false, true},
        {"[" + cancel + "," + call("notifications/cancel", R"({"id":2})", "3") + "]", false, false, true},
        {R"({"jsonrpc":"2.0","method":5,"id":1})", false, false},
        {R"({"jsonrpc":"2.0","method":{"name":"add"},"id":1})", false, false},
        {"[5,[]]", false, false},
        {"[]", false, false},
        {"5", false, false},
        {R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1)", false, false},
        {add + " trailing", false, false},
    };
    for (const Case& c : cases) {
      CAPTURE(c.message);
      const rpc::net::detail::MessageCarries carries = rpc::net::detail::what_it_carries(c.message, f.router);
      CHECK(carries.new_work == c.new_work);
      CHECK(carries.answers == c.answers);
      CHECK(carries.cancels == c.cancels);
    }
  }

  TEST_CASE("a client that stops reading is not read either, then closed at the write timeout") {
    // 400 requests for 100 KB replies (40 MB): with 4 unwritten replies at most, the server
    // runs only what the socket buffers can take, and never queues the rest.
    for (const auto protocol : {rpc::net::Protocol::lines, rpc::net::Protocol::http}) {
      for (const bool websocket : {false, true}) {
        if (websocket && protocol != rpc::net::Protocol::http) continue;
        CAPTURE(static_cast<int>(protocol));
        CAPTURE(websocket);
        Fixture f({.write_timeout = 1500ms, .max_in_flight = 4});
        const int port = f.listen(protocol);
        std::string burst;
        for (int i = 1; i <= 400; ++i) {
          const std::string message = call("big", "[]", std::to_string(i));
          burst += protocol == rpc::net::Protocol::lines
                       ? message + "\n"
                       : "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(message.size()) + "\r\n\r\n" + message;
        }
        std::optional<WsClient> ws;
        std::optional<HttpClient> raw;
        std::thread writer;
        if (websocket) {
          ws.emplace(f.io, port);
          writer = std::thread([&] {
            try {
              for (int i = 1; i <= 400; ++i) ws->send(call("big", "[]", std::to_string(i)));
            } catch (const boost::system::system_error&) {  // the server closed the connection
            }
          });
        } else {
          raw.emplace(f.io, port);
          writer = std::thread([&] {
            boost::system::error_code ignored;
            asio::write(raw->socket(), asio::buffer(burst), ignored);  // blocks when the server stops reading
          });
        }
        std::this_thread::sleep_for(700ms);
        const int ran = f.big_calls.load();
        CHECK(ran >= 4);
        CHECK(ran < 200);  // socket buffers hold some; 40 MB of replies are never made
        const auto deadline = Clock::now() + 5s;
        while (f.server->connections() > 0 && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
        CHECK(f.server->connections() == 0);  // closed at the write timeout
        writer.join();  // its blocked write failed when the server closed the connection
      }
    }
  }

  TEST_CASE("a client that does not read the server's own messages is closed once 16 MiB of them wait") {
    // Notifications are not backpressured as replies are: without the cap, 40 MiB of them
    // would wait in memory until the write timeout (120 s here; the wait below is generous
    // for sanitizer builds on a busy machine, and still far shorter).
    for (const bool websocket : {true, false}) {
      CAPTURE(websocket);
      Fixture f({.write_timeout = 120s});
      std::atomic<bool> stormed{false};
      f.router.add("storm", [&stormed](int n, rpc::Context& ctx) {
        const std::string blob(std::size_t{1} << 20, 'z');
        for (int i = 0; i < n; ++i) (void)ctx.peer().notify("blob", rpc::named("blob", blob));
        stormed = true;
        return n;
      }, rpc::names("n"));
      const int port = f.listen(websocket ? rpc::net::Protocol::http : rpc::net::Protocol::lines);
      std::optional<WsClient> ws;
      std::optional<StreamClient<netclient::tcp::socket>> lines;
      const std::string storm = call("storm", "[40]", "1");
      if (websocket) {
        ws.emplace(f.io, port);
        ws->send(storm);
      } else {
        lines.emplace(netclient::connect_tcp(f.io, port), false);
        lines->send(storm);
      }
      const auto deadline = Clock::now() + 30s;
      while ((!stormed || f.server->connections() > 0) && Clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
      }
      CHECK(stormed);
      CHECK(f.server->connections() == 0);  // closed at the cap, long before the write timeout
    }
  }

  TEST_CASE("shutdown finishes work in flight within the grace, then closes, and later work is cancelled") {
    Fixture f({.shutdown_grace = 2s});
    const int port = f.listen();
    const int lines_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
    HttpClient client(f.io, port);
    auto slow = netclient::post(call("sleep", "[300]", "1"));
    client.send(slow);
    WsClient ws(f.io, port);
    ws.send(call("sleep", "[300]", "2"));
    StreamClient stream(netclient::connect_tcp(f.io, lines_port), false);
    stream.send(call("sleep", "[300]", "3"));
    std::this_thread::sleep_for(100ms);
    const auto start = Clock::now();
    f.server->shutdown();
    CHECK(Clock::now() - start < 1500ms);
    const auto reply = client.receive();
    REQUIRE(reply);
    CHECK(reply->body() == result("1", "300"));
    CHECK(client.closed_by_server());
    CHECK(ws.receive() == result("2", "300"));
    CHECK_FALSE(ws.receive());
    CHECK(ws.close_code() == 1001);
    CHECK(stream.receive() == result("3", "300"));
    CHECK(stream.closed_by_server());
    CHECK_THROWS_AS(f.server->listen("127.0.0.1", 0), std::logic_error);
  }

  TEST_CASE("shutdown cancels what outlasts the grace: the clients are answered -32800") {
    Fixture f({.shutdown_grace = 200ms});
    const int port = f.listen();
    HttpClient client(f.io, port);
    auto slow = netclient::post(call("sleep", "[30000]", "1"));
    client.send(slow);
    WsClient ws(f.io, port);
    ws.send(call("sleep", "[30000]", "2"));
    std::this_thread::sleep_for(100ms);
    const auto start = Clock::now();
    f.server->shutdown();
    CHECK(Clock::now() - start < 2s);
    const auto reply = client.receive();
    REQUIRE(reply);
    CHECK(reply->body() == cancelled("1"));
    CHECK(ws.receive() == cancelled("2"));
  }

  TEST_CASE("destroying the server answers -32800 for a request waiting on a Responder that ignores its stop token") {
    Fixture f({.shutdown_grace = 200ms});
    std::mutex mutex;
    std::vector<rpc::Responder> held;  // only this would answer, and it never does
    f.router.add("hold", [&](rpc::Responder done) {
      std::lock_guard lock(mutex);
      held.push_back(std::move(done));
    });
    HttpClient client(f.io, f.listen());
    auto hold = netclient::post(call("hold", "[]", "7"));
    client.send(hold);
    const auto deadline = Clock::now() + 5s;
    const auto holding = [&] {
      std::lock_guard lock(mutex);
      return held.size() == 1;
    };
    while (!holding() && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
    REQUIRE(holding());
    const auto start = Clock::now();
    f.server.reset();
    CHECK(Clock::now() - start < 5s);
    const auto reply = client.receive();
    REQUIRE(reply);
    CHECK(reply->result_int() == 200);
    CHECK(reply->body() == cancelled("7"));
    std::lock_guard lock(mutex);
    CHECK_FALSE(held.front().resolve(1));  // answered by the server's end: refused quietly
  }

  TEST_CASE("a handler that ignores its stop token: shutdown waits for it, then the server goes safely") {
    // Its answer is posted from a handler thread after the connection was closed: the server
    // must outlive that post (under AddressSanitizer this was a use after free).
    rpc::Router router;
    router.add("stubborn", [](std::int64_t ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return ms;
    });
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines}) {
      CAPTURE(static_cast<int>(protocol));
      std::optional<rpc::net::Server> server;
      server.emplace(router, rpc::net::ServerOptions{.handler_threads = 2, .shutdown_grace = 50ms});
      const int port = server->listen("127.0.0.1", 0, protocol);
      server->start();
      asio::io_context io;
      std::optional<HttpClient> http_client;
      std::optional<WsClient> ws;
      std::optional<StreamClient<netclient::tcp::socket>> lines;
      if (protocol == rpc::net::Protocol::http) {
        http_client.emplace(io, port);
        auto request = netclient::post(call("stubborn", "[300]", "1"));
        http_client->send(request);
        ws.emplace(io, port);
        ws->send(call("stubborn", "[300]", "2"));
      } else {
        lines.emplace(netclient::connect_tcp(io, port), false);
        lines->send(call("stubborn", "[300]", "3"));
      }
      std::this_thread::sleep_for(50ms);
      const auto start = Clock::now();
      server.reset();  // shutdown: drain, cancel, close; waits for the handlers
      CHECK(Clock::now() - start >= 150ms);
      if (http_client) CHECK(http_client->closed_by_server());
      if (lines) CHECK(lines->closed_by_server());
    }
  }

  TEST_CASE("a server destroyed at once, never started, or with idle clients still connected") {
    {
      Fixture never_started;
      never_started.server->listen("127.0.0.1", 0);
    }
    Fixture f({.shutdown_grace = 5s});
    const int port = f.listen();
    HttpClient idle(f.io, port);
    WsClient ws(f.io, port);
    REQUIRE(ws.call(call("add", "[1,1]", "1")) == result("1", "2"));
    const auto start = Clock::now();
    f.server.reset();
    CHECK(Clock::now() - start < 1s);  // idle connections do not wait for the grace
    CHECK(idle.closed_by_server());
  }

  // A shutdown may meet a connection anywhere between its accept and its start. Every one must
  // be closed at once: its socket touched on its own I/O thread only (this test runs under the
  // thread sanitizer too), none left open until the server is destroyed, none waiting out the
  // grace for having been registered as the shutdown began.
  TEST_CASE("connections accepted as the server shuts down are closed at once, on every protocol") {
    for (int round = 0; round < 40; ++round) {
      CAPTURE(round);
      Fixture f({.io_threads = 2, .shutdown_grace = 5s});
      const int http_port = f.listen();
      const int lines_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
      const int framed_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::content_length);
      std::vector<HttpClient> http_clients;
      std::vector<StreamClient<asio::ip::tcp::socket>> stream_clients;
      for (int k = 0; k < 2; ++k) {
        http_clients.emplace_back(f.io, http_port);
        stream_clients.emplace_back(netclient::connect_tcp(f.io, lines_port), false);
        stream_clients.emplace_back(netclient::connect_tcp(f.io, framed_port), true);
      }
      std::this_thread::sleep_for(round * 25us);  // the shutdown meets the accepts at varied points
      const auto start = Clock::now();
      f.server->shutdown();
      CHECK(Clock::now() - start < 1s);  // nothing was in flight: no grace is waited out
      for (HttpClient& c : http_clients) CHECK(c.closed_by_server());
      for (auto& c : stream_clients) CHECK(c.closed_by_server());
    }
  }

#if BATCHRPC_CHECKS_ENABLED
  // shutdown() waits for every handler and connection, so from one of the server's own
  // threads it would wait for itself for ever: a debug build stops there, naming the rule.
  TEST_CASE("shutdown from a handler, a hook or an I/O thread stops a debug build with its rule") {
    const auto shut_from = [](auto&& configure) {
      return death::in_child([&] {
        ::alarm(10);  // a hang ends the child with SIGALRM, which the test reports
        rpc::Router router;
        std::optional<rpc::net::Server> server;
        rpc::net::ServerOptions options{.handler_threads = 1};
        configure(router, options, server);
        server.emplace(router, options);
        const int port = server->listen("127.0.0.1", 0, rpc::net::Protocol::lines);
        server->start();
        asio::io_context io;
        StreamClient client(netclient::connect_tcp(io, port), false);
        (void)client.call(call("stop", "[]", "1"));
      });
    };
    const auto stop_method = [](rpc::MethodOptions method_options) {
      return [method_options](rpc::Router& router, rpc::net::ServerOptions&, std::optional<rpc::net::Server>& server) {
        router.add("stop", [&server] { server->shutdown(); }, method_options);
      };
    };
    const std::string rule = "net::Server::shutdown (or ~Server) was called from one of the server's handlers";
    for (const death::Ending& ending :
         {shut_from(stop_method({})),                      // a handler on the server's pool
          shut_from(stop_method({.inline_only = true})),   // a handler on an I/O thread
          shut_from([](rpc::Router&, rpc::net::ServerOptions& options, std::optional<rpc::net::Server>& server) {
            options.on_session = [&server](const rpc::net::ConnectionInfo&, rpc::Session&) { server->shutdown(); };
          })}) {
      CAPTURE(ending.stderr_text);
      CHECK(ending.aborted);
      CHECK(ending.stderr_text.find(rule) != std::string::npos);
    }
  }

  TEST_CASE("shutdown from a handler of another server on a shared executor is fine") {
    const death::Ending ending = death::in_child([] {
      ::alarm(10);
      rpc::ThreadPool pool(2);
      rpc::Router main_router;
      rpc::Router admin_router;
      rpc::net::Server main_server(main_router, {.executor = &pool});
      rpc::net::Server admin(admin_router, {.executor = &pool});
      admin_router.add("stop_main", [&main_server] {
        main_server.shutdown();
        return true;
      });
      main_server.listen("127.0.0.1", 0);
      main_server.start();
      const int port = admin.listen("127.0.0.1", 0, rpc::net::Protocol::lines);
      admin.start();
      asio::io_context io;
      StreamClient client(netclient::connect_tcp(io, port), false);
      if (client.call(call("stop_main", "[]", "1")) != result("1", "true")) std::abort();
    });
    CAPTURE(ending.stderr_text);
    CHECK_FALSE(ending.aborted);
    CHECK(ending.stderr_text.empty());
  }
#endif
}

TEST_CASE("net: the test clients' reads end at their timeout, so a server that stays silent fails a test") {
  asio::io_context io;
  netclient::tcp::acceptor listener(io, {asio::ip::make_address("127.0.0.1"), 0});
  netclient::tcp::socket client = netclient::connect_tcp(io, listener.local_endpoint().port());
  netclient::tcp::socket server = listener.accept();
  char byte = 0;
  const auto read_one = [&](boost::beast::error_code& error, std::chrono::milliseconds timeout) {
    return netclient::read_within(
        client, error, [&](auto handler) { client.async_read_some(asio::buffer(&byte, 1), handler); }, timeout);
  };

  boost::beast::error_code error;
  const auto start = Clock::now();
  CHECK(read_one(error, 100ms) == 0);
  CHECK(error == asio::error::timed_out);
  CHECK(Clock::now() - start < 2s);

  asio::write(server, asio::buffer("x", 1));  // the socket still reads after a timeout
  CHECK(read_one(error, 5s) == 1);
  CHECK_FALSE(error);
  CHECK(byte == 'x');

  server.close();
  CHECK(netclient::read_sees_close(client));
}
