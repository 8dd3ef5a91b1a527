// SPDX-License-Identifier: MIT
// rpc::net::Server speaking MCP Streamable HTTP (Protocol::mcp): a session made by initialize
// and named by Mcp-Session-Id, replies as JSON or, when the server talks to its client during a
// call, as an event stream ending with the reply; the listen stream (GET); DELETE; and the
// checks on path, method, Origin, MCP-Protocol-Version, Content-Type and Accept. Statuses,
// headers, bodies and events are compared byte for byte.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/net.hpp>

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "net/net_client.hpp"
#include "support/replies.hpp"

using namespace std::chrono_literals;
using namespace replies;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace {

using Clock = std::chrono::steady_clock;
using Headers = std::vector<std::pair<std::string, std::string>>;
using Request = http::request<http::string_body>;
using Response = netclient::Response;

constexpr std::string_view kSession = "Mcp-Session-Id";
constexpr std::string_view kAcceptBoth = "application/json, text/event-stream";
constexpr std::string_view kInitResult =
    R"({"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"mcp_http_test","version":"1"}})";

// ---- Messages ----------------------------------------------------------------------------------

std::string initialize_request(std::string_view id) {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) +
         R"(,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},)"
         R"("clientInfo":{"name":"mcp_http_test","version":"1"}}})";
}
std::string call(std::string_view method, std::string_view params, std::string_view id) {
  std::string s = R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":")" + std::string(method) + "\"";
  if (!params.empty()) s += R"(,"params":)" + std::string(params);
  return s + "}";
}
std::string notification(std::string_view method, std::string_view params = {}) {
  std::string s = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) s += R"(,"params":)" + std::string(params);
  return s + "}";
}
std::string log_message(std::string_view data) {
  return R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":")" +
         std::string(data) + R"("}})";
}

// One server message as an SSE event, without the blank line that ends it.
std::string event(std::string_view json) { return "event: message\ndata: " + std::string(json); }

// The body of an event stream carrying `messages` in this order.
std::string stream_of(std::initializer_list<std::string> messages) {
  std::string body;
  for (const std::string& message : messages) body += event(message) + "\n\n";
  return body;
}

// The data of each event of an event-stream body, in order (several `data:` lines of one event
// joined with newlines, as an SSE client does); an unfinished event at the end is left out.
std::vector<std::string> event_data(std::string_view body) {
  std::vector<std::string> data;
  for (std::size_t end = body.find("\n\n"); end != std::string_view::npos; end = body.find("\n\n")) {
    std::string_view block = body.substr(0, end + 1);  // each line with its newline
    body.remove_prefix(end + 2);
    std::string joined;
    bool any = false;
    for (std::size_t eol = block.find('\n'); eol != std::string_view::npos; eol = block.find('\n')) {
      const std::string_view line = block.substr(0, eol);
      block.remove_prefix(eol + 1);
      if (line.substr(0, 5) != "data:") continue;
      std::string_view value = line.substr(5);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
      if (any) joined += '\n';
      joined += value;
      any = true;
    }
    if (any) data.push_back(std::move(joined));
  }
  return data;
}

// ---- Requests ----------------------------------------------------------------------------------

// A request with `headers` (an empty value leaves that header out) and `body`.
Request make_request(http::verb verb, std::string_view target, const Headers& headers, std::string body = {}) {
  Request request{verb, target, 11};
  request.set(http::field::host, "127.0.0.1");
  for (const auto& [name, value] : headers) {
    if (value.empty()) {
      request.erase(name);
    } else {
      request.set(name, value);
    }
  }
  request.body() = std::move(body);
  request.prepare_payload();
  return request;
}

// What a conforming client's POST carries, then `extra` (which may replace or, empty, remove).
Headers post_headers(std::string_view session = {}, const Headers& extra = {}) {
  Headers headers{{"Content-Type", "application/json"}, {"Accept", std::string(kAcceptBoth)}};
  if (!session.empty()) headers.emplace_back(kSession, session);
  headers.insert(headers.end(), extra.begin(), extra.end());
  return headers;
}
// What a conforming client's GET (the listen stream) carries, then `extra`.
Headers get_headers(std::string_view session = {}, const Headers& extra = {}) {
  Headers headers{{"Accept", "text/event-stream"}};
  if (!session.empty()) headers.emplace_back(kSession, session);
  headers.insert(headers.end(), extra.begin(), extra.end());
  return headers;
}

Request mcp_post(std::string body, std::string_view session = {}, const Headers& extra = {}) {
  return make_request(http::verb::post, "/mcp", post_headers(session, extra), std::move(body));
}
Request mcp_get(std::string_view session = {}, const Headers& extra = {}) {
  return make_request(http::verb::get, "/mcp", get_headers(session, extra));
}
Request mcp_delete(std::string_view session = {}) {
  Headers headers;
  if (!session.empty()) headers.emplace_back(kSession, session);
  return make_request(http::verb::delete_, "/mcp", headers);
}

// A header's value, or "<absent>".
std::string header(const Response& response, std::string_view name) {
  const auto found = response.find(name);
  return found == response.end() ? std::string("<absent>") : std::string(found->value());
}
bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// ---- Client ------------------------------------------------------------------------------------

// One keep-alive HTTP/1.1 connection whose responses can be read whole or, for an event
// stream, event by event. Every read gives up at its timeout (poll() before each read), so a
// server that never sends fails the test instead of hanging it.
class McpConnection {
 public:
  McpConnection(asio::io_context& io, int port) : socket_(netclient::connect_tcp(io, port)) {}

  void send(const Request& request) { http::write(socket_, request); }

  // The rest of the next response (or of the one being read); nothing on timeout, at the end of
  // the connection, or for a response that cannot be parsed.
  std::optional<Response> receive(std::chrono::milliseconds timeout = 5s) {
    const auto deadline = Clock::now() + timeout;
    if (!read_header(deadline)) return std::nullopt;
    while (!parser_->is_done()) {
      if (!advance(deadline)) return std::nullopt;
    }
    Response response = parser_->release();
    parser_.reset();
    return response;
  }
  std::optional<Response> exchange(const Request& request, std::chrono::milliseconds timeout = 5s) {
    send(request);
    return receive(timeout);
  }

  // Reads the next response's header; false on timeout. Its body then comes with next_event.
  bool receive_header(std::chrono::milliseconds timeout = 5s) { return read_header(Clock::now() + timeout); }
  // The response being read: its header, and its body so far. Only after receive_header.
  [[nodiscard]] const Response& head() const { return parser_->get(); }

  // The next event of the response being read, without the blank line that ends it; "<no
  // event>" when the response ends first, or at the timeout.
  std::string next_event(std::chrono::milliseconds timeout = 5s) {
    const auto deadline = Clock::now() + timeout;
    if (!read_header(deadline)) return "<no event>";
    for (;;) {
      const std::string& body = parser_->get().body();
      const std::size_t end = body.find("\n\n", taken_);
      if (end != std::string::npos) {
        std::string one = body.substr(taken_, end - taken_);
        taken_ = end + 2;
        return one;
      }
      if (parser_->is_done() || !advance(deadline)) return "<no event>";
    }
  }

  // Waits for the response being read to end; returns its body after the events taken (empty
  // for a stream that ended after its last event); "<not ended>" at the timeout.
  std::string finish(std::chrono::milliseconds timeout = 5s) {
    const auto deadline = Clock::now() + timeout;
    if (!read_header(deadline)) return "<not ended>";
    while (!parser_->is_done()) {
      if (!advance(deadline)) return "<not ended>";
    }
    std::string rest = parser_->get().body().substr(taken_);
    parser_.reset();
    return rest;
  }

  // True when the server closes the connection within the timeout.
  bool closed_by_server(std::chrono::milliseconds timeout = 5s) {
    if (!pending_.empty()) return false;
    if (!readable(Clock::now() + timeout)) return false;
    char byte = 0;
    beast::error_code error;
    socket_.read_some(asio::buffer(&byte, 1), error);
    return error == asio::error::eof || error == asio::error::connection_reset;
  }

 private:
  bool read_header(Clock::time_point deadline) {
    if (!parser_) {
      parser_.emplace();
      parser_->eager(true);
      taken_ = 0;
    }
    while (!parser_->is_header_done()) {
      if (!advance(deadline)) return false;
    }
    return true;
  }

  // Hands the parser what has arrived, reading more when it needs it; false at the deadline,
  // at the end of the connection, or on a parse error.
  bool advance(Clock::time_point deadline) {
    if (!pending_.empty()) {
      beast::error_code error;
      const std::size_t used = parser_->put(asio::buffer(pending_), error);
      pending_.erase(0, used);
      if (used > 0 && (!error || error == http::error::need_more)) return true;  // some parsed
      if (error && error != http::error::need_more) {
        const std::string why = "cannot parse the response: " + error.message();
        MESSAGE(why);
        return false;
      }
    }
    if (!readable(deadline)) return false;
    char bytes[16384];
    beast::error_code error;
    const std::size_t n = socket_.read_some(asio::buffer(bytes), error);
    if (error) {  // the end of the connection ends a response that has no length
      if (!parser_->is_header_done() || !pending_.empty()) return false;
      beast::error_code eof_error;
      parser_->put_eof(eof_error);
      return !eof_error && parser_->is_done();
    }
    pending_.append(bytes, n);
    return true;
  }

  bool readable(Clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd fd{socket_.native_handle(), POLLIN, 0};
    return ::poll(&fd, 1, static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0))) > 0;
  }

  netclient::tcp::socket socket_;
  std::string pending_;  // bytes read and not parsed yet
  std::optional<http::response_parser<http::string_body>> parser_;
  std::size_t taken_ = 0;  // body bytes already returned as events
};

template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit = 5s) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// ---- Server ------------------------------------------------------------------------------------

// A server on Protocol::mcp with the methods the tests call.
struct Fixture {
  explicit Fixture(rpc::net::ServerOptions options = {}) {
    router.add("initialize", [](const rpc::Params&) { return rpc::json(kInitResult); });
    router.add("notifications/initialized", [] {});
    router.add("echo", [](std::string text) { return text; }, rpc::names("text"));
    // Two notifications to the client during the call, then the result.
    router.add("chatty", [](rpc::Context& ctx) {
      ctx.peer().notify("notifications/message", rpc::named("level", "info", "data", "one"));
      ctx.peer().notify("notifications/message", rpc::named("level", "info", "data", "two"));
      return 42;
    });
    // MCP progress for each step (when the client sent a progressToken), then a log message.
    router.add("work", [](int steps, rpc::Context& ctx) {
      const rpc::Progress progress(ctx);
      for (int i = 1; i <= steps; ++i) progress.report(static_cast<double>(i), static_cast<double>(steps));
      rpc::mcp::log(ctx.peer(), rpc::mcp::LogLevel::info, "done");
      return steps;
    }, rpc::names("steps"));
    // Asks the client for its roots (no params) and answers with what it said.
    // Waits, blocking its thread, for the client's roots/list answer, with no timeout.
    router.add("ask_and_wait", [this](rpc::Context& ctx) {
      const rpc::Reply reply = ctx.peer().request("roots/list").get();
      waited_code = reply.error() != nullptr ? reply.error()->code() : 0;
      if (!reply.ok()) throw *reply.error();
      return reply.result();
    });
    router.add("ask_roots", [](rpc::Context& ctx, rpc::Responder done) {
      ctx.peer().request("roots/list", rpc::Json{}, [done](rpc::Reply reply) {
        if (reply.ok()) {
          done.resolve(reply.result());
        } else {
          done.reject(*reply.error());
        }
      });
    });
    // Keeps the session's Peer for the test to use outside any call.
    router.add("remember", [this](rpc::Context& ctx) {
      std::lock_guard lock(mutex);
      kept = ctx.peer();
      return true;
    });
    // Keeps the session's own Peer (which belongs to no call).
    router.add("remember_session", [this](rpc::Context& ctx) {
      std::lock_guard lock(mutex);
      if (ctx.session() != nullptr) kept_session = ctx.session()->peer();
      return ctx.session() != nullptr;
    });
    // Stays in progress, ignoring its stop token: only the session can answer it then.
    router.add("stubborn", [this](rpc::Responder done) {
      std::lock_guard lock(mutex);
      stubborn.push_back(std::move(done));
    });
    // Stays in progress until the test answers it, or until it is cancelled (then -32800).
    router.add("hold", [this](rpc::Responder done) {
      auto on_cancel = std::make_unique<OnCancel>(done.stop_token(), [done] { done.reject(rpc::cancelled()); });
      std::lock_guard lock(mutex);
      held.push_back(std::move(done));
      cancel_callbacks.push_back(std::move(on_cancel));
    });
    options.handler_threads = 2;
    options.io_threads = 2;
    options.shutdown_grace = 1s;
    server.emplace(router, std::move(options));
    port = server->listen("127.0.0.1", 0, rpc::net::Protocol::mcp);
    server->start();
  }

  // One exchange on a connection of its own.
  std::optional<Response> fetch(const Request& request) {
    McpConnection connection(io, port);
    return connection.exchange(request);
  }

  // Starts a session on `connection`; returns its id.
  std::string initialize(McpConnection& connection, const Headers& extra = {}) {
    const auto reply = connection.exchange(mcp_post(initialize_request("1"), {}, extra));
    REQUIRE(reply);
    REQUIRE(reply->result_int() == 200);
    CHECK(reply->body() == result("1", kInitResult));
    const std::string id = header(*reply, kSession);
    REQUIRE(id != "<absent>");
    return id;
  }
  std::string initialize(const Headers& extra = {}) {
    McpConnection connection(io, port);
    return initialize(connection, extra);
  }

  rpc::Peer kept_peer() {
    std::lock_guard lock(mutex);
    REQUIRE(kept.has_value());
    return *kept;
  }
  rpc::Peer kept_session_peer() {
    std::lock_guard lock(mutex);
    REQUIRE(kept_session.has_value());
    return *kept_session;
  }
  std::size_t held_count() {
    std::lock_guard lock(mutex);
    return held.size();
  }
  rpc::Responder held_at(std::size_t i) {
    std::lock_guard lock(mutex);
    return held.at(i);
  }

  std::mutex mutex;
  std::optional<rpc::Peer> kept;          // guarded by `mutex`
  std::optional<rpc::Peer> kept_session;  // guarded by `mutex`
  std::vector<rpc::Responder> held;       // guarded by `mutex`
  std::vector<rpc::Responder> stubborn;   // guarded by `mutex`
  using OnCancel = std::stop_callback<std::function<void()>>;
  std::vector<std::unique_ptr<OnCancel>> cancel_callbacks;  // guarded by `mutex`
  rpc::Router router;
  std::optional<rpc::net::Server> server;
  std::atomic<int> waited_code{1};  // ask_and_wait's answer: 0, or the error's code
  int port = 0;
  asio::io_context io;  // for the clients' sockets
};

// The checks every error response passes: status, text/plain, the exact text.
void check_refusal(const std::optional<Response>& reply, int status, std::string_view body) {
  REQUIRE(reply);
  CHECK(reply->result_int() == status);
  CHECK(starts_with(header(*reply, "Content-Type"), "text/plain"));
  CHECK(reply->body() == body);
}

constexpr std::string_view kNeedSession = "Mcp-Session-Id header required\n";
constexpr std::string_view kUnknownSession = "Unknown session\n";
constexpr std::string_view kBadAccept = "Accept must allow application/json and text/event-stream\n";
constexpr std::string_view kBadListenAccept = "Accept must allow text/event-stream\n";

}  // namespace

TEST_SUITE("net: MCP Streamable HTTP") {
  TEST_CASE("initialize starts a session named by Mcp-Session-Id, and later requests need that id") {
    Fixture f;
    McpConnection client(f.io, f.port);
    const auto init = client.exchange(mcp_post(initialize_request("1")));
    REQUIRE(init);
    CHECK(init->result_int() == 200);
    CHECK(header(*init, "Content-Type") == "application/json");
    CHECK(init->body() == result("1", kInitResult));
    const std::string id = header(*init, kSession);
    REQUIRE(id != "<absent>");
    CHECK_FALSE(id.empty());
    CHECK(std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; }));

    const auto echo = client.exchange(mcp_post(call("echo", R"({"text":"hi"})", "2"), id));
    REQUIRE(echo);
    CHECK(echo->result_int() == 200);
    CHECK(header(*echo, "Content-Type") == "application/json");
    CHECK(header(*echo, kSession) == id);
    CHECK(echo->body() == result("2", R"("hi")"));

    check_refusal(f.fetch(mcp_post(call("echo", R"({"text":"hi"})", "3"))), 400, kNeedSession);
    check_refusal(f.fetch(mcp_post(call("echo", R"({"text":"hi"})", "4"), "no-such-session")), 404, kUnknownSession);

    // initialize inside a batch starts a session too: another one
    const auto batch = f.fetch(mcp_post("[" + initialize_request("7") + "]"));
    REQUIRE(batch);
    CHECK(batch->result_int() == 200);
    CHECK(header(*batch, "Content-Type") == "application/json");
    CHECK(batch->body() == "[" + result("7", kInitResult) + "]");
    const std::string other = header(*batch, kSession);
    CHECK(other != "<absent>");
    CHECK(other != id);
    const auto again = f.fetch(mcp_post(call("echo", R"({"text":"b"})", "8"), other));
    REQUIRE(again);
    CHECK(again->result_int() == 200);
    CHECK(again->body() == result("8", R"("b")"));
  }

  TEST_CASE("a message with nothing to answer is 202 with an empty body") {
    Fixture f;
    const std::string id = f.initialize();
    McpConnection client(f.io, f.port);
    auto reply = client.exchange(mcp_post(notification("notifications/initialized"), id));
    REQUIRE(reply);
    CHECK(reply->result_int() == 202);
    CHECK(reply->body() == "");
    CHECK(header(*reply, kSession) == id);

    reply = client.exchange(mcp_post("[" + notification("notifications/initialized") + "," +
                                     notification("echo", R"({"text":"x"})") + "]", id));
    REQUIRE(reply);
    CHECK(reply->result_int() == 202);
    CHECK(reply->body() == "");

    // a Response that no request of the server's waits for: dropped, nothing to answer
    reply = client.exchange(mcp_post(R"({"jsonrpc":"2.0","id":"srv-99","result":1})", id));
    REQUIRE(reply);
    CHECK(reply->result_int() == 202);
    CHECK(reply->body() == "");

    // still a request of the session: without the id it is refused
    check_refusal(f.fetch(mcp_post(notification("notifications/initialized"))), 400, kNeedSession);

    reply = client.exchange(mcp_post(call("echo", R"({"text":"after"})", "5"), id));  // the connection goes on
    REQUIRE(reply);
    CHECK(reply->body() == result("5", R"("after")"));
  }

  TEST_CASE("server messages during a call make the reply an event stream, the reply its last event") {
    Fixture f;
    McpConnection client(f.io, f.port);
    const std::string id = f.initialize(client);
    const auto reply = client.exchange(mcp_post(call("chatty", {}, "3"), id));
    REQUIRE(reply);
    CHECK(reply->result_int() == 200);
    CHECK(header(*reply, "Content-Type") == "text/event-stream");
    CHECK(header(*reply, "Transfer-Encoding") == "chunked");
    CHECK(header(*reply, kSession) == id);
    CHECK(reply->keep_alive());
    CHECK(reply->body() == stream_of({log_message("one"), log_message("two"), result("3", "42")}));
    CHECK(event_data(reply->body()) == std::vector<std::string>{log_message("one"), log_message("two"), result("3", "42")});

    // the same connection serves the next request, as plain JSON again
    const auto next = client.exchange(mcp_post(call("echo", R"({"text":"again"})", "4"), id));
    REQUIRE(next);
    CHECK(next->result_int() == 200);
    CHECK(header(*next, "Content-Type") == "application/json");
    CHECK(next->body() == result("4", R"("again")"));
  }

  TEST_CASE("progress and log messages of a call come as events before its reply") {
    Fixture f;
    McpConnection client(f.io, f.port);
    const std::string id = f.initialize(client);
    const auto reply = client.exchange(mcp_post(call("work", R"({"steps":2,"_meta":{"progressToken":"p"}})", "4"), id));
    REQUIRE(reply);
    CHECK(reply->result_int() == 200);
    CHECK(header(*reply, "Content-Type") == "text/event-stream");
    const std::string progress = R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p",)";
    CHECK(reply->body() == stream_of({progress + R"("progress":1,"total":2}})", progress + R"("progress":2,"total":2}})",
                                      log_message("done"), result("4", "2")}));
    CHECK(event_data(reply->body()).size() == 4);
  }

  TEST_CASE("a request of the server's goes out as an event, and the client POSTs its Response (202)") {
    Fixture f;
    McpConnection client(f.io, f.port);
    const std::string id = f.initialize(client);
    client.send(mcp_post(call("ask_roots", {}, "3"), id));
    REQUIRE(client.receive_header());
    CHECK(client.head().result_int() == 200);
    CHECK(header(client.head(), "Content-Type") == "text/event-stream");
    CHECK(header(client.head(), kSession) == id);
    CHECK(client.next_event() == event(R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list"})"));

    McpConnection answer(f.io, f.port);
    const auto accepted = answer.exchange(mcp_post(R"({"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}})", id));
    REQUIRE(accepted);
    CHECK(accepted->result_int() == 202);
    CHECK(accepted->body() == "");
    CHECK(header(*accepted, kSession) == id);

    CHECK(client.next_event() == event(result("3", R"({"roots":[]})")));
    CHECK(client.finish() == "");  // the response ends with the reply

    const auto next = client.exchange(mcp_post(call("echo", R"({"text":"on"})", "4"), id));
    REQUIRE(next);
    CHECK(next->body() == result("4", R"("on")"));
  }

  TEST_CASE("the GET stream carries the server's messages sent outside any call, one per session") {
    Fixture f;
    const std::string id = f.initialize();
    const auto remembered = f.fetch(mcp_post(call("remember", {}, "2"), id));
    REQUIRE(remembered);
    CHECK(remembered->body() == result("2", "true"));
    const rpc::Peer peer = f.kept_peer();

    // no call in progress and no stream: nowhere to send
    CHECK_FALSE(peer.notify("notifications/message", rpc::named("level", "info", "data", "lost")));
    auto unavailable = peer.request("roots/list");
    REQUIRE(unavailable.wait_for(5s) == std::future_status::ready);
    const rpc::Reply refused = unavailable.get();
    REQUIRE(refused.error() != nullptr);
    CHECK(refused.error()->code() == static_cast<int>(rpc::ErrorCode::client_unavailable));

    McpConnection stream(f.io, f.port);
    stream.send(mcp_get(id));
    REQUIRE(stream.receive_header());  // at once, before any event
    CHECK(stream.head().result_int() == 200);
    CHECK(header(stream.head(), "Content-Type") == "text/event-stream");
    CHECK(header(stream.head(), kSession) == id);

    CHECK(peer.notify("notifications/message", rpc::named("level", "info", "data", "later")));
    CHECK(stream.next_event() == event(log_message("later")));

    // a second stream for the session, one that does not accept events, none without an id
    check_refusal(f.fetch(mcp_get(id)), 409, "A stream is open for this session already\n");
    check_refusal(f.fetch(mcp_get(id, {{"Accept", "application/json"}})), 406, kBadListenAccept);
    check_refusal(f.fetch(mcp_get()), 400, kNeedSession);
    check_refusal(f.fetch(mcp_get("no-such-session")), 404, kUnknownSession);

    // a call's own messages go on its own response, not on the GET stream
    const auto chatty = f.fetch(mcp_post(call("chatty", {}, "3"), id));
    REQUIRE(chatty);
    CHECK(chatty->body() == stream_of({log_message("one"), log_message("two"), result("3", "42")}));
    CHECK(peer.notify("notifications/message", rpc::named("level", "info", "data", "after")));
    CHECK(stream.next_event() == event(log_message("after")));  // not "one" or "two"

    // a request of the server's outside any call goes on the stream; its Response is POSTed
    auto answered = std::make_shared<std::promise<rpc::Reply>>();
    auto reply = answered->get_future();
    const std::string srv = peer.request("roots/list", rpc::Json{}, [answered](rpc::Reply r) { answered->set_value(std::move(r)); });
    CHECK(stream.next_event() == event(R"({"jsonrpc":"2.0","id":")" + srv + R"(","method":"roots/list"})"));
    const auto accepted = f.fetch(mcp_post(R"({"jsonrpc":"2.0","id":")" + srv + R"(","result":{"roots":[1]}})", id));
    REQUIRE(accepted);
    CHECK(accepted->result_int() == 202);
    REQUIRE(reply.wait_for(5s) == std::future_status::ready);
    const rpc::Reply got = reply.get();
    CHECK(got.ok());
    CHECK(got.result().text() == R"({"roots":[1]})");
  }

  TEST_CASE("a call's messages go on its own response, the session's on its oldest call in progress") {
    Fixture f;
    const std::string id = f.initialize();
    const auto remembered = f.fetch(mcp_post(call("remember_session", {}, "2"), id));
    REQUIRE(remembered);
    CHECK(remembered->body() == result("2", "true"));
    const rpc::Peer session_peer = f.kept_session_peer();

    McpConnection first(f.io, f.port);
    first.send(mcp_post(call("hold", {}, "5"), id));
    REQUIRE(eventually([&] { return f.held_count() == 1; }));

    const auto second = f.fetch(mcp_post(call("chatty", {}, "6"), id));  // its own messages, on its own response
    REQUIRE(second);
    CHECK(second->result_int() == 200);
    CHECK(header(*second, "Content-Type") == "text/event-stream");
    CHECK(second->body() == stream_of({log_message("one"), log_message("two"), result("6", "42")}));

    // the session's own Peer belongs to no call: its message goes on the oldest call in progress
    CHECK(session_peer.notify("notifications/message", rpc::named("level", "info", "data", "oldest")));
    REQUIRE(first.receive_header());
    CHECK(first.head().result_int() == 200);
    CHECK(header(first.head(), "Content-Type") == "text/event-stream");
    CHECK(first.next_event() == event(log_message("oldest")));  // nothing of "chatty"'s before it
    CHECK(f.held_at(0).resolve(std::string("done")));
    CHECK(first.next_event() == event(result("5", R"("done")")));
    CHECK(first.finish() == "");

    // no call in progress and no GET stream: not sent
    CHECK_FALSE(session_peer.notify("notifications/message", rpc::named("level", "info", "data", "lost")));
  }

  TEST_CASE("DELETE ends the session: its GET stream ends, its calls are cancelled, its id is unknown") {
    Fixture f;
    const std::string id = f.initialize();
    McpConnection stream(f.io, f.port);
    stream.send(mcp_get(id));
    REQUIRE(stream.receive_header());
    CHECK(stream.head().result_int() == 200);
    McpConnection holding(f.io, f.port);
    holding.send(mcp_post(call("hold", {}, "9"), id));
    REQUIRE(eventually([&] { return f.held_count() == 1; }));
    McpConnection ignoring(f.io, f.port);
    ignoring.send(mcp_post(call("stubborn", {}, "11"), id));
    REQUIRE(eventually([&] {
      std::lock_guard lock(f.mutex);
      return f.stubborn.size() == 1;
    }));

    CHECK_FALSE(f.held_at(0).stop_requested());
    check_refusal(f.fetch(mcp_delete()), 400, kNeedSession);
    check_refusal(f.fetch(mcp_delete("no-such-session")), 404, kUnknownSession);
    const auto deleted = f.fetch(mcp_delete(id));
    REQUIRE(deleted);
    CHECK(deleted->result_int() == 200);
    CHECK(deleted->body() == "");

    CHECK(stream.finish() == "");  // the stream's response completes, with no event
    CHECK(eventually([&] { return f.held_at(0).stop_requested(); }));  // the call in flight is cancelled
    const auto cancelled_call = holding.receive();
    CHECK(cancelled_call.has_value());
    if (cancelled_call) {
      CHECK(cancelled_call->result_int() == 200);
      CHECK(cancelled_call->body() == cancelled("9"));
    }
    CHECK_FALSE(f.held_at(0).pending());  // answered -32800
    // One that ignores its stop token is answered -32800 by the session itself.
    const auto ignored_call = ignoring.receive();
    REQUIRE(ignored_call);
    CHECK(ignored_call->body() == cancelled("11"));

    check_refusal(f.fetch(mcp_post(call("echo", R"({"text":"x"})", "10"), id)), 404, kUnknownSession);
    check_refusal(f.fetch(mcp_get(id)), 404, kUnknownSession);
    check_refusal(f.fetch(mcp_delete(id)), 404, kUnknownSession);
  }

  TEST_CASE("the server shuts down while a handler waits for a client that never answers") {
    Fixture f;
    const std::string id = f.initialize();
    McpConnection waiting(f.io, f.port);
    waiting.send(mcp_post(call("ask_and_wait", {}, "12"), id));
    REQUIRE(waiting.receive_header());
    CHECK(waiting.next_event() == event(R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list"})"));
    const auto started = Clock::now();
    f.server.reset();  // the handler hears -32094 after the grace, and the server goes
    CHECK(Clock::now() - started < 10s);
    CHECK(f.waited_code == -32094);
  }

  TEST_CASE("Origin: loopback origins by default, else exactly those allowed") {
    SUBCASE("default: loopback hosts only, any scheme and port") {
      Fixture f;
      check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Origin", "http://evil.example"}})), 403,
                    "Origin not allowed\n");
      check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Origin", "http://localhost.evil.example"}})),
                    403, "Origin not allowed\n");
      for (const char* origin : {"http://localhost:1234", "https://localhost", "http://127.0.0.1:8080", "http://[::1]:99"}) {
        CAPTURE(origin);
        const auto reply = f.fetch(mcp_post(initialize_request("1"), {}, {{"Origin", origin}}));
        REQUIRE(reply);
        CHECK(reply->result_int() == 200);
        CHECK(reply->body() == result("1", kInitResult));
      }
      const std::string id = f.initialize();  // and no Origin at all is allowed
      check_refusal(f.fetch(mcp_post(call("echo", R"({"text":"x"})", "2"), id, {{"Origin", "http://evil.example"}})),
                    403, "Origin not allowed\n");
    }
    SUBCASE("allowed_origins: exact matches only") {
      rpc::net::ServerOptions options;
      options.mcp.allowed_origins = {"https://app.example"};
      Fixture f(std::move(options));
      const auto allowed = f.fetch(mcp_post(initialize_request("1"), {}, {{"Origin", "https://app.example"}}));
      REQUIRE(allowed);
      CHECK(allowed->result_int() == 200);
      CHECK(allowed->body() == result("1", kInitResult));
      for (const char* origin : {"http://localhost:1234", "http://app.example", "https://app.example:8443"}) {
        CAPTURE(origin);
        check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Origin", origin}})), 403, "Origin not allowed\n");
      }
    }
  }

  TEST_CASE("MCP-Protocol-Version: an unsupported one is 400, a supported one or none is served") {
    Fixture f;
    const std::string id = f.initialize();
    check_refusal(f.fetch(mcp_post(call("echo", R"({"text":"x"})", "2"), id, {{"MCP-Protocol-Version", "1999-01-01"}})),
                  400, "Unsupported MCP-Protocol-Version\n");
    for (const char* version : {"2025-06-18", "2024-11-05", "2025-11-25"}) {
      CAPTURE(version);
      const auto reply = f.fetch(mcp_post(call("echo", R"({"text":"x"})", "3"), id, {{"MCP-Protocol-Version", version}}));
      REQUIRE(reply);
      CHECK(reply->result_int() == 200);
      CHECK(reply->body() == result("3", R"("x")"));
    }
  }

  TEST_CASE("path, method, Content-Type and Accept are checked, and GET is 405 without a listen stream") {
    Fixture f;
    check_refusal(f.fetch(make_request(http::verb::post, "/other", post_headers(), initialize_request("1"))), 404,
                  "Not found\n");
    const auto with_query = f.fetch(make_request(http::verb::post, "/mcp?x=1", post_headers(), initialize_request("1")));
    REQUIRE(with_query);
    CHECK(with_query->result_int() == 200);
    CHECK(with_query->body() == result("1", kInitResult));

    const auto put = f.fetch(make_request(http::verb::put, "/mcp", post_headers(), initialize_request("1")));
    check_refusal(put, 405, "Method not allowed\n");
    CHECK(header(*put, "Allow") == "GET, POST, DELETE");

    check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Content-Type", "text/plain"}})), 415,
                  "Content-Type must be application/json\n");
    check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Accept", "text/html"}})), 406, kBadAccept);
    check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Accept", "application/json"}})), 406, kBadAccept);
    check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"Accept", "text/event-stream"}})), 406, kBadAccept);
    for (const char* accept : {"*/*", "application/*, text/*", "text/event-stream, application/json", ""}) {
      CAPTURE(accept);  // "": no Accept header at all
      const auto reply = f.fetch(mcp_post(initialize_request("1"), {}, {{"Accept", accept}}));
      REQUIRE(reply);
      CHECK(reply->result_int() == 200);
      CHECK(reply->body() == result("1", kInitResult));
    }

    rpc::net::ServerOptions options;
    options.mcp.listen_stream = false;
    Fixture no_stream(std::move(options));
    const std::string id = no_stream.initialize();
    const auto get = no_stream.fetch(mcp_get(id));
    check_refusal(get, 405, "Method not allowed\n");
    CHECK(header(*get, "Allow") == "POST, DELETE");
    const auto put_too = no_stream.fetch(make_request(http::verb::put, "/mcp", post_headers(id), "{}"));
    check_refusal(put_too, 405, "Method not allowed\n");
    CHECK(header(*put_too, "Allow") == "POST, DELETE");
  }

  TEST_CASE("on_session runs at initialize with the POST's headers, when it throws, 403") {
    struct Seen {
      std::mutex mutex;
      int calls = 0;
      rpc::net::Protocol protocol = rpc::net::Protocol::http;
      bool websocket = true;
      std::string client;
      std::string content_type;
      std::string peer;
    };
    auto seen = std::make_shared<Seen>();
    rpc::net::ServerOptions options;
    options.on_session = [seen](const rpc::net::ConnectionInfo& info, rpc::Session&) {
      if (info.header("X-Refuse") == "yes") throw std::runtime_error("refused");
      std::lock_guard lock(seen->mutex);
      ++seen->calls;
      seen->protocol = info.protocol;
      seen->websocket = info.websocket;
      seen->client = std::string(info.header("x-client"));
      seen->content_type = std::string(info.header("Content-Type"));
      seen->peer = info.peer;
    };
    Fixture f(std::move(options));
    const std::string id = f.initialize({{"X-Client", "mcp-test"}});
    const auto echo = f.fetch(mcp_post(call("echo", R"({"text":"x"})", "2"), id));
    REQUIRE(echo);
    CHECK(echo->body() == result("2", R"("x")"));
    {
      std::lock_guard lock(seen->mutex);
      CHECK(seen->calls == 1);  // at initialize only
      CHECK(seen->protocol == rpc::net::Protocol::mcp);
      CHECK_FALSE(seen->websocket);
      CHECK(seen->client == "mcp-test");
      CHECK(seen->content_type == "application/json");
      CHECK(starts_with(seen->peer, "127.0.0.1:"));
    }
    check_refusal(f.fetch(mcp_post(initialize_request("1"), {}, {{"X-Refuse", "yes"}})), 403, "Refused\n");
    std::lock_guard lock(seen->mutex);
    CHECK(seen->calls == 1);
  }
}
