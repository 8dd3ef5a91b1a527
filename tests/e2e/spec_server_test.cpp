// SPDX-License-Identifier: MIT
// End to end: the built spec_server, run as a child process, over stdio (newline-delimited and
// Content-Length framing) and HTTP, checked against design.md §2–§5 with exact replies.
#include <batchrpc/version.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "child_process.hpp"
#include "support/printing.hpp"
#include "support/replies.hpp"

#if defined(BATCHRPC_TEST_HTTP)
#include "support/http_test_client.hpp"
#endif
#if defined(BATCHRPC_TEST_NET)
#include <filesystem>

#include "net/net_client.hpp"
#endif

#if !defined(BATCHRPC_E2E_SPEC_SERVER)
#error "BATCHRPC_E2E_SPEC_SERVER must name spec_server's path (tests/CMakeLists.txt sets it)"
#endif

using namespace std::chrono_literals;
using e2e::Clock;
using e2e::Millis;

namespace {

using namespace replies;

std::string too_large() {
  return error("null", -32090, "Message too large", R"({"max":16777216})");
}

constexpr const char* kServer = BATCHRPC_E2E_SPEC_SERVER;
// How long any single reply may take before the test fails (the server is hung).
constexpr Millis kTimeout = 5s;
constexpr std::size_t kMaxMessage = std::size_t{16} << 20;  // Limits::max_message_bytes default

// ---- Expected replies --------------------------------------------------------------------------


std::string info(std::string_view id, std::string_view capabilities) {
  return result(id, R"({"protocolVersion":1,"server":{"name":"spec_server","version":")" +
                        std::string(rpc::version_string) + R"("},"capabilities":)" +
                        std::string(capabilities) + "}");
}

// A ping padded with trailing spaces (still valid JSON) to exactly `size` bytes.
std::string padded_ping(std::string_view id, std::size_t size) {
  std::string message =
      R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":"big"},"id":)" + std::string(id) + "}";
  message.resize(size, ' ');
  return message;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- Transports --------------------------------------------------------------------------------

enum class Transport { lines, content_length, http, ws, tcp_lines, unix_content_length };

// One connection to a freshly started spec_server.
class Peer {
 public:
  virtual ~Peer() = default;
  /// Sends `message` and returns its reply, or nothing if the server sent nothing for it.
  /// `reply_expected` says which the test expects, so a stream peer knows whether to wait.
  virtual std::optional<std::string> exchange(std::string_view message, bool reply_expected) = 0;
  /// Ends the connection and checks the server is sound (nothing unexpected left behind).
  virtual void finish() = 0;
};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// spec_server --stdio as a child process.
class StdioServer final : public Peer {
 public:
  explicit StdioServer(Transport framing, const std::vector<std::string>& options = {})
      : framing_(framing),
        child_(kServer, with({"--stdio", "--framing",
                              framing == Transport::lines ? "lines" : "content-length"},
                             options)) {}

  [[nodiscard]] std::string frame(std::string_view message) const {
    if (framing_ == Transport::lines) return std::string(message) + "\n";
    return "Content-Length: " + std::to_string(message.size()) + "\r\n\r\n" + std::string(message);
  }

  void send_raw(std::string_view bytes) { REQUIRE(child_.write(bytes, kTimeout)); }
  void send(std::string_view message) { send_raw(frame(message)); }

  /// The next reply, or nothing when none comes within `timeout`.
  std::optional<std::string> receive(Millis timeout = kTimeout) {
    if (framing_ == Transport::lines) return child_.read_line(timeout);
    const auto deadline = Clock::now() + timeout;
    auto left = [&] { return std::chrono::ceil<Millis>(deadline - Clock::now()); };
    std::optional<std::size_t> length;
    for (;;) {
      std::optional<std::string> header = child_.read_line(left());
      if (!header) return std::nullopt;
      if (!header->empty() && header->back() == '\r') header->pop_back();
      if (header->empty()) break;
      constexpr std::string_view name = "Content-Length: ";
      if (header->rfind(name, 0) != 0) return "<unexpected header: " + *header + ">";
      std::size_t n = 0;
      const char* first = header->data() + name.size();
      const char* last = header->data() + header->size();
      if (const auto r = std::from_chars(first, last, n); r.ec != std::errc{} || r.ptr != last) {
        return "<invalid header: " + *header + ">";
      }
      length = n;
    }
    if (!length) return std::string("<frame without Content-Length>");
    return child_.read_bytes(*length, left());
  }

  std::optional<std::string> call(std::string_view message) {
    send(message);
    return receive();
  }

  // Without a reply expected, a ping sent right after must be answered next: nothing came for
  // `message` by then (finish() also checks that nothing comes later).
  std::optional<std::string> exchange(std::string_view message, bool reply_expected) override {
    send(message);
    if (reply_expected) return receive();
    const std::string probe_id = "\"probe-" + std::to_string(++probes_) + "\"";
    const auto next = call(R"({"jsonrpc":"2.0","method":"ping","id":)" + probe_id + "}");
    if (next == result(probe_id, "{}")) return std::nullopt;
    return next;
  }

  // End of input: the server finishes what is in flight, exits 0 and writes nothing more.
  void finish() override {
    child_.close_stdin();
    const std::optional<int> code = child_.wait_exit(kTimeout);
    INFO("stderr: ", child_.stderr_text());
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(child_.unread_stdout() == "");
  }

  e2e::ChildProcess& child() { return child_; }

 private:
  Transport framing_;
  e2e::ChildProcess child_;
  int probes_ = 0;
};

#if defined(BATCHRPC_TEST_HTTP)

struct HttpReply {
  int status = 0;
  std::string body;
  std::string content_type;
};

// spec_server --http --port 0 as a child process; the port is read from its stderr.
class HttpServer final : public Peer {
 public:
  explicit HttpServer(const std::vector<std::string>& options = {})
      : child_(kServer, with({"--http", "--host", "127.0.0.1", "--port", "0"}, options)) {
    constexpr std::string_view prefix = "spec_server: listening on http://127.0.0.1:";
    const std::optional<std::string> err = child_.wait_for_stderr("/\n", kTimeout);
    INFO("stderr: ", child_.stderr_text());
    REQUIRE(err);
    const auto at = err->find(prefix);
    REQUIRE(at != std::string::npos);
    const char* first = err->data() + at + prefix.size();
    const auto r = std::from_chars(first, err->data() + err->size(), port_);
    REQUIRE(r.ec == std::errc{});
    REQUIRE(*r.ptr == '/');
    REQUIRE(port_ > 0);
    client_.emplace(client());
  }

  [[nodiscard]] int port() const { return port_; }

  [[nodiscard]] httplib::Client client() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(kTimeout);
    client.set_read_timeout(kTimeout);
    client.set_write_timeout(kTimeout);
    return client;
  }

  static HttpReply post(httplib::Client& client, const std::string& body,
                        const std::string& content_type = "application/json") {
    const httplib::Result res = client.Post("/", body, content_type.c_str());
    INFO("httplib error: ", httplib::to_string(res.error()));
    REQUIRE(res);
    return {res->status, res->body, res->get_header_value("Content-Type")};
  }

  // 200 with the reply as application/json, or 204 with no body for nothing to send.
  std::optional<std::string> exchange(std::string_view message, bool) override {
    const HttpReply reply = post(*client_, std::string(message));
    if (reply.status == 204) {
      CHECK(reply.body == "");
      return std::nullopt;
    }
    CHECK(reply.status == 200);
    CHECK(reply.content_type == "application/json");
    return reply.body;
  }

  // The server must still be running (HTTP servers do not end with a connection).
  void finish() override {
    INFO("stderr: ", child_.stderr_text());
    CHECK_FALSE(child_.wait_exit(0ms));
  }

  e2e::ChildProcess& child() { return child_; }

 private:
  e2e::ChildProcess child_;
  int port_ = 0;
  std::optional<httplib::Client> client_;  // the connection exchange() uses
};

#endif  // BATCHRPC_TEST_HTTP

#if defined(BATCHRPC_TEST_NET)

// The port spec_server reports on stderr after `prefix` ("spec_server: listening on ws://...:").
int reported_port(e2e::ChildProcess& child, std::string_view prefix) {
  const std::optional<std::string> err = child.wait_for_stderr("/\n", kTimeout);
  INFO("stderr: ", child.stderr_text());
  REQUIRE(err);
  const auto at = err->find(prefix);
  REQUIRE(at != std::string::npos);
  int port = 0;
  const char* first = err->data() + at + prefix.size();
  const auto r = std::from_chars(first, err->data() + err->size(), port);
  REQUIRE(r.ec == std::errc{});
  REQUIRE(port > 0);
  return port;
}

// A connection that carries messages both ways (WebSocket, or a framed network stream) to a
// spec_server serving it on rpc::net.
class MessagePeer : public Peer {
 public:
  virtual void send(std::string_view message) = 0;
  virtual std::optional<std::string> receive() = 0;

  // As StdioServer's: without a reply expected, a ping sent right after must be answered next.
  std::optional<std::string> exchange(std::string_view message, bool reply_expected) override {
    send(message);
    if (reply_expected) return receive();
    const std::string probe_id = "\"probe-" + std::to_string(++probes_) + "\"";
    send(R"({"jsonrpc":"2.0","method":"ping","id":)" + probe_id + "}");
    const auto next = receive();
    if (next == result(probe_id, "{}")) return std::nullopt;
    return next;
  }

 private:
  int probes_ = 0;
};

// spec_server --ws: one WebSocket connection.
class WsServer final : public MessagePeer {
 public:
  explicit WsServer(const std::vector<std::string>& options = {})
      : child_(kServer, with({"--ws", "--host", "127.0.0.1", "--port", "0"}, options)),
        client_(io_, reported_port(child_, "spec_server: listening on ws://127.0.0.1:")) {}

  void send(std::string_view message) override { client_.send(message); }
  std::optional<std::string> receive() override { return client_.receive(); }
  [[nodiscard]] int close_code() const { return client_.close_code(); }
  void finish() override {
    INFO("stderr: ", child_.stderr_text());
    CHECK_FALSE(child_.wait_exit(0ms));
  }

 private:
  e2e::ChildProcess child_;
  netclient::asio::io_context io_;
  netclient::WsClient client_;
};

// spec_server --tcp --framing lines, or --unix PATH --framing content-length: one connection.
class NetStreamServer final : public MessagePeer {
 public:
  NetStreamServer(Transport transport, const std::vector<std::string>& options = {})
      : path_(transport == Transport::unix_content_length ? socket_path() : std::string()),
        child_(kServer, with(transport == Transport::tcp_lines
                                 ? std::vector<std::string>{"--tcp", "--framing", "lines", "--host", "127.0.0.1", "--port", "0"}
                                 : std::vector<std::string>{"--unix", path_, "--framing", "content-length"},
                             options)),
        client_(connect(transport)) {}

  void send(std::string_view message) override { client_->send(message); }
  std::optional<std::string> receive() override { return client_->receive(); }
  void finish() override {
    INFO("stderr: ", child_.stderr_text());
    CHECK_FALSE(child_.wait_exit(0ms));
  }

 private:
  // Hides which socket type is under the client.
  struct Client {
    virtual ~Client() = default;
    virtual void send(std::string_view message) = 0;
    virtual std::optional<std::string> receive() = 0;
  };
  template <class Socket>
  struct ClientOver final : Client {
    ClientOver(Socket socket, bool content_length) : stream(std::move(socket), content_length) {}
    void send(std::string_view message) override { stream.send(message); }
    std::optional<std::string> receive() override { return stream.receive(); }
    netclient::StreamClient<Socket> stream;
  };

  static std::string socket_path() {
    static int count = 0;
    const auto file = "batchrpc-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(++count) + ".sock";
    return (std::filesystem::temp_directory_path() / file).string();
  }

  std::unique_ptr<Client> connect(Transport transport) {
    if (transport == Transport::tcp_lines) {
      const int port = reported_port(child_, "spec_server: listening on tcp://127.0.0.1:");
      return std::make_unique<ClientOver<netclient::tcp::socket>>(netclient::connect_tcp(io_, port), false);
    }
    REQUIRE(child_.wait_for_stderr(path_ + "\n", kTimeout));
    return std::make_unique<ClientOver<netclient::unix_socket::socket>>(netclient::connect_unix(io_, path_), true);
  }

  std::string path_;
  e2e::ChildProcess child_;
  netclient::asio::io_context io_;
  std::unique_ptr<Client> client_;
};

// A network peer started for `transport`, as a MessagePeer.
std::unique_ptr<MessagePeer> start_messages(Transport transport, const std::vector<std::string>& options = {}) {
  if (transport == Transport::ws) return std::make_unique<WsServer>(options);
  return std::make_unique<NetStreamServer>(transport, options);
}

#endif  // BATCHRPC_TEST_NET

std::unique_ptr<Peer> start(Transport transport, const std::vector<std::string>& options = {}) {
#if defined(BATCHRPC_TEST_HTTP)
  if (transport == Transport::http) return std::make_unique<HttpServer>(options);
#endif
#if defined(BATCHRPC_TEST_NET)
  if (transport == Transport::ws || transport == Transport::tcp_lines || transport == Transport::unix_content_length) {
    return start_messages(transport, options);
  }
#endif
  return std::make_unique<StdioServer>(transport, options);
}

#if defined(BATCHRPC_TEST_HTTP)

// ---- Raw sockets, for what an HTTP client library will not do ---------------------------------

class Socket {
 public:
  explicit Socket(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  void send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      REQUIRE(n > 0);
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }

  // One HTTP/1.1 response (headers, then a body of Content-Length bytes), or nothing.
  std::optional<std::string> read_response(Millis timeout = kTimeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (const auto end = buffer_.find("\r\n\r\n"); end != std::string::npos) {
        std::size_t length = 0;
        constexpr std::string_view name = "\r\nContent-Length: ";
        if (const auto at = buffer_.find(name); at != std::string::npos && at < end) {
          const char* first = buffer_.data() + at + name.size();
          std::from_chars(first, buffer_.data() + end, length);
        }
        if (buffer_.size() >= end + 4 + length) {
          std::string response = buffer_.substr(0, end + 4 + length);
          buffer_.erase(0, end + 4 + length);
          return response;
        }
      }
      if (!fill(deadline)) return std::nullopt;
    }
  }

  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  bool fill(Clock::time_point deadline) {
    const auto left = std::chrono::ceil<Millis>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  std::string buffer_;
};

std::string http_post(std::string_view body) {
  return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
         "application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

#endif  // BATCHRPC_TEST_HTTP

}  // namespace

// Tag types: the tests that hold for every transport are templates run once per transport, each
// its own test case ("name<stdio, lines>", ...), so SUBCASEs inside them work as usual.
namespace {
template <Transport T>
struct Over {
  static constexpr Transport transport = T;
};
using StdioLines = Over<Transport::lines>;
using StdioContentLength = Over<Transport::content_length>;
using Http = Over<Transport::http>;
using WebSocket = Over<Transport::ws>;
using TcpLines = Over<Transport::tcp_lines>;
using UnixContentLength = Over<Transport::unix_content_length>;
}  // namespace
TYPE_TO_STRING_AS("stdio, lines", StdioLines);
TYPE_TO_STRING_AS("stdio, Content-Length", StdioContentLength);
TYPE_TO_STRING_AS("http", Http);
TYPE_TO_STRING_AS("websocket", WebSocket);
TYPE_TO_STRING_AS("tcp, lines", TcpLines);
TYPE_TO_STRING_AS("unix, Content-Length", UnixContentLength);

#define E2E_STDIO StdioLines, StdioContentLength
#if defined(BATCHRPC_TEST_NET)
#define E2E_NET_MESSAGES , WebSocket, TcpLines, UnixContentLength
#else
#define E2E_NET_MESSAGES
#endif
#if defined(BATCHRPC_TEST_HTTP)
#define E2E_ALL_TRANSPORTS StdioLines, StdioContentLength, Http E2E_NET_MESSAGES
#else
#define E2E_ALL_TRANSPORTS StdioLines, StdioContentLength E2E_NET_MESSAGES
#endif

// ---- §2 singletons, §3 batches: every transport ------------------------------------------------

TEST_SUITE("e2e") {
  TEST_CASE_TEMPLATE("single requests are answered with the id echoed", T, E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})",
                         true) == result("1", "19"));
    CHECK(
        peer->exchange(
            R"({"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":"a"})",
            true) == result(R"("a")", "19"));
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":[1,"x"]},"id":1.0})",
                         true) == result("1.0", R"({"nonce":[1,"x"]})"));
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":"foobar","id":"1"})", true) ==
          error(R"("1")", -32601, "Method not found"));
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":42},"id":5})",
                         true) ==
          error("5", -32602, "Invalid params",
                R"({"param":"subtrahend","reason":"missing required parameter"})"));
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":1,"params":"bar"})", true) ==
          invalid_request("\\\"method\\\" must be a string"));
    peer->finish();
  }

  TEST_CASE_TEMPLATE("notifications are never answered, not even for errors", T,
                     E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    CHECK_FALSE(
        peer->exchange(R"({"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]})", false));
    CHECK_FALSE(peer->exchange(R"({"jsonrpc":"2.0","method":"foobar"})", false));
    CHECK_FALSE(peer->exchange(R"({"jsonrpc":"2.0","method":"subtract","params":["a"]})", false));
    peer->finish();
  }

  TEST_CASE_TEMPLATE("a batch gets one response per request, in request order", T,
                     E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    // The specification's mixed batch: a notification, a malformed member, an unknown method.
    CHECK(peer->exchange(
              R"([{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},)"
              R"({"jsonrpc":"2.0","method":"notify_hello","params":[7]},)"
              R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"2"},)"
              R"({"foo":"boo"},)"
              R"({"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},)"
              R"({"jsonrpc":"2.0","method":"get_data","id":"9"}])",
              true) == "[" + result(R"("1")", "7") + "," + result(R"("2")", "19") + "," +
                           invalid_request("missing \\\"jsonrpc\\\"") + "," +
                           error(R"("5")", -32601, "Method not found") + "," +
                           result(R"("9")", R"(["hello",5])") + "]");
    SUBCASE("members run in parallel (spec_server has a pool) but the array keeps request order") {
      const auto start_time = Clock::now();
      CHECK(peer->exchange(R"([{"jsonrpc":"2.0","method":"sleep","params":{"ms":400},"id":"slow"},)"
                           R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":1},"id":"fast"},)"
                           R"({"jsonrpc":"2.0","method":"sleep","params":[400],"id":"also slow"}])",
                           true) == "[" + result(R"("slow")", "400") + "," +
                                        result(R"("fast")", R"({"nonce":1})") + "," +
                                        result(R"("also slow")", "400") + "]");
      CHECK(seconds_since(start_time) < 0.7);  // one after the other would take 0.8 s
    }
    SUBCASE("duplicate ids each get their own response") {
      CHECK(peer->exchange(R"([{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":7},)"
                           R"({"jsonrpc":"2.0","method":"subtract","params":[5,1],"id":7}])",
                           true) == "[" + result("7", "0") + "," + result("7", "4") + "]");
    }
    peer->finish();
  }

  TEST_CASE_TEMPLATE("notification members are processed and get no entry", T, E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    CHECK(peer->exchange(R"([{"jsonrpc":"2.0","method":"update","params":[1]},)"
                         R"({"jsonrpc":"2.0","method":"get_data","id":1},)"
                         R"({"jsonrpc":"2.0","method":"foobar"},)"
                         R"({"jsonrpc":"2.0","method":"notify_hello","params":[7]}])",
                         true) == "[" + result("1", R"(["hello",5])") + "]");
    peer->finish();
  }

  TEST_CASE_TEMPLATE("a batch of only notifications sends nothing (no line, HTTP 204)", T,
                     E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    CHECK_FALSE(peer->exchange(R"([{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},)"
                               R"({"jsonrpc":"2.0","method":"notify_hello","params":[7]}])",
                               false));
    CHECK_FALSE(peer->exchange(R"([{"jsonrpc":"2.0","method":"update"}])", false));
    peer->finish();
  }

  TEST_CASE_TEMPLATE("an empty batch is a single -32600, not an array", T, E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    CHECK(peer->exchange("[]", true) == invalid_request("empty batch"));
    CHECK(peer->exchange(" [ ] ", true) == invalid_request("empty batch"));
    peer->finish();
  }

  TEST_CASE_TEMPLATE("malformed members get -32600 entries and the well-formed ones still run", T,
                     E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    const std::string not_an_object = invalid_request("a request must be an object");
    CHECK(peer->exchange("[1]", true) == "[" + not_an_object + "]");
    CHECK(peer->exchange("[1,2,3]", true) ==
          "[" + not_an_object + "," + not_an_object + "," + not_an_object + "]");
    CHECK(peer->exchange(
              R"([1,{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1},{"foo":"boo"},)"
              R"({"jsonrpc":"2.0","method":"update"}])",
              true) == "[" + not_an_object + "," + result("1", "19") + "," +
                           invalid_request("missing \\\"jsonrpc\\\"") + "]");
    peer->finish();
  }

  TEST_CASE_TEMPLATE("more members than --max-batch rejects the whole batch with one -32602", T,
                     E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport, {"--max-batch", "3"});
    const std::string member = R"({"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":1})";
    const std::string too_many = error("null", -32602, "Batch too large", R"({"max":3})");
    CHECK(peer->exchange("[" + member + "," + member + "," + member + "]", true) ==
          "[" + result("1", "2") + "," + result("1", "2") + "," + result("1", "2") + "]");
    CHECK(peer->exchange("[" + member + "," + member + "," + member + "," + member + "]", true) ==
          too_many);
    CHECK(peer->exchange("[1,2,3,4]", true) == too_many);
    // The whole batch is rejected even when every member is a notification.
    const std::string note = R"({"jsonrpc":"2.0","method":"update"})";
    CHECK(peer->exchange("[" + note + "," + note + "," + note + "," + note + "]", true) ==
          too_many);
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":"info","id":1})", true) ==
          info("1", R"({"batching":{"maxBatch":3}})"));
    peer->finish();
  }

  TEST_CASE_TEMPLATE("invalid JSON anywhere is a single -32700", T, E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    CHECK(peer->exchange(R"({"jsonrpc":"2.0","method":"foobar,"params":"bar","baz])", true) ==
          error("null", -32700, "Parse error",
                R"({"offset":35,"reason":"Missing a comma or '}' after an object member."})"));
    CHECK(
        peer->exchange(
            R"([{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method"])",
            true) ==
        error("null", -32700, "Parse error",
              R"({"offset":85,"reason":"Missing a colon after a name of object member."})"));
    CHECK(
        peer->exchange(R"({"jsonrpc":"2.0","method":"ping","id":1} x)", true) ==
        error(
            "null", -32700, "Parse error",
            R"({"offset":41,"reason":"The document root must not be followed by other values."})"));
    // Invalid UTF-8 (the reason's wording is the parser's, pinned by the unit tests). WebSocket
    // text must be UTF-8: the protocol itself fails such a connection, with close code 1007.
#if defined(BATCHRPC_TEST_NET)
    if constexpr (T::transport == Transport::ws) {
      auto& ws = dynamic_cast<WsServer&>(*peer);
      ws.send("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{\"nonce\":\"\xff\"},\"id\":1}");
      CHECK_FALSE(ws.receive());
      CHECK(ws.close_code() == 1007);
      return;
    }
#endif
    const auto bad_utf8 = peer->exchange(
        "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{\"nonce\":\"\xff\"},\"id\":1}", true);
    REQUIRE(bad_utf8);
    CHECK(bad_utf8->rfind(
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error",)"
              R"("data":{"offset":52,"reason":")",
              0) == 0);
    peer->finish();
  }

  // ---- §4/§6 capabilities ----------------------------------------------------------------------

  TEST_CASE_TEMPLATE("info lists exactly the capabilities granted with --capabilities", T,
                     E2E_ALL_TRANSPORTS) {
    const std::string request = R"({"jsonrpc":"2.0","method":"info","id":1})";
    SUBCASE("a,b") {
      auto peer = start(T::transport, {"--capabilities", "a,b"});
      CHECK(peer->exchange(request, true) ==
            info("1", R"({"batching":{"maxBatch":1000},"a":{},"b":{}})"));
      peer->finish();
    }
    SUBCASE("none given: spec_server's methods need none") {
      auto peer = start(T::transport);
      CHECK(peer->exchange(request, true) == info("1", R"({"batching":{"maxBatch":1000}})"));
      peer->finish();
    }
    SUBCASE("an empty list") {
      auto peer = start(T::transport, {"--capabilities", ""});
      CHECK(peer->exchange(request, true) == info("1", R"({"batching":{"maxBatch":1000}})"));
      peer->finish();
    }
  }

  // ---- §5 cancellation -------------------------------------------------------------------------

  TEST_CASE_TEMPLATE("a cancel member applies before the other members of its batch start", T,
                     E2E_ALL_TRANSPORTS) {
    auto peer = start(T::transport);
    const auto start_time = Clock::now();
    CHECK(peer->exchange(R"([{"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":1},)"
                         R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}},)"
                         R"({"jsonrpc":"2.0","method":"ping","id":2}])",
                         true) == "[" + cancelled("1") + "," + result("2", "{}") + "]");
    CHECK(seconds_since(start_time) < 3.0);
    // An unknown id is ignored (asked as a request, it says so).
    CHECK(peer->exchange(
              R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":99},"id":3})",
              true) == result("3", R"({"cancelled":false})"));
    peer->finish();
  }

#if defined(BATCHRPC_TEST_NET)
  TEST_CASE_TEMPLATE("network: notifications/cancel in a later message cancels a running sleep", T,
                     WebSocket, TcpLines, UnixContentLength) {
    auto peer = start_messages(T::transport);
    const auto start_time = Clock::now();
    peer->send(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":1})");
    std::this_thread::sleep_for(100ms);  // let it start running
    peer->send(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}})");
    CHECK(peer->receive() == cancelled("1"));
    CHECK(seconds_since(start_time) < 3.0);
    peer->finish();
  }
#endif

  TEST_CASE_TEMPLATE("notifications/cancel in a later message cancels a running sleep", T,
                     E2E_STDIO) {
    StdioServer server(T::transport);
    const auto start_time = Clock::now();
    server.send(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":1})");
    std::this_thread::sleep_for(100ms);  // let it start running
    SUBCASE("as a notification") {
      server.send(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}})");
      CHECK(server.receive() == cancelled("1"));
    }
    SUBCASE("as a request, which says it cancelled something") {
      server.send(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1},"id":2})");
      std::vector<std::optional<std::string>> replies{server.receive(), server.receive()};
      // Replies of different messages come in completion order.
      if (replies[0] == cancelled("1")) std::swap(replies[0], replies[1]);
      CHECK(replies[0] == result("2", R"({"cancelled":true})"));
      CHECK(replies[1] == cancelled("1"));
    }
    CHECK(seconds_since(start_time) < 3.0);
    server.finish();
  }

  TEST_CASE_TEMPLATE("a queued request is cancelled without running (--threads 1)", T, E2E_STDIO) {
    StdioServer server(T::transport, {"--threads", "1"});
    const auto start_time = Clock::now();
    server.send(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":1})");
    server.send(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":2})");  // queued
    std::this_thread::sleep_for(100ms);
    server.send(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":2}})");
    CHECK(server.receive() == cancelled("2"));  // at once, not when a thread is free
    server.send(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}})");
    CHECK(server.receive() == cancelled("1"));
    CHECK(seconds_since(start_time) < 3.0);  // request 2 never slept
    server.finish();
  }

  TEST_CASE_TEMPLATE("the batch tool runs operations over stdio", T, E2E_STDIO) {
    StdioServer server(T::transport);
    server.send(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"batch","arguments":{"operations":)"
                R"([{"tool":"ping","arguments":{"nonce":1}},{"tool":"subtract","arguments":{"minuend":5,"subtrahend":2}},)"
                R"({"tool":"batch","arguments":{}}]}},"id":1})");
    const std::string report =
        R"({"success":false,"operationCount":3,"completedCount":2,"failedCount":1,"stoppedEarly":false,)"
        R"("results":[{"tool":"ping","result":{"nonce":1}},{"tool":"subtract","result":3},)"
        R"({"tool":"batch","error":{"code":-32602,"message":"Invalid params","data":{"param":"tool","reason":"the batch tool cannot run inside a batch"}}}],)"
        R"("meta":{"truncated":false,"totalOutputChars":12}})";
    std::string text;  // the report as a JSON string, for the MCP-style text content
    for (const char c : report) {
      if (c == '"') text += '\\';
      text += c;
    }
    CHECK(server.receive() == result("1", R"({"content":[{"type":"text","text":")" + text +
                                               R"("}],"structuredContent":)" + report + R"(,"isError":true})"));
    server.send(R"({"jsonrpc":"2.0","method":"tools/list","id":2})");
    const std::optional<std::string> list = server.receive();
    REQUIRE(list);
    for (const char* tool : {"ping", "info", "subtract", "sum", "update", "notify_hello", "get_data", "sleep", "batch"}) {
      CAPTURE(tool);
      CHECK(list->find(std::string(R"("name":")") + tool + '"') != std::string::npos);
    }
    server.finish();
  }

  TEST_CASE_TEMPLATE("a slow request does not hold up later messages", T, E2E_STDIO) {
    StdioServer server(T::transport);
    server.send(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":400},"id":"slow"})");
    server.send(R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":2},"id":"fast"})");
    CHECK(server.receive() ==
          result(R"("fast")", R"({"nonce":2})"));  // replies in completion order
    CHECK(server.receive() == result(R"("slow")", "400"));
    server.finish();
  }

  TEST_CASE_TEMPLATE("messages split across writes, or several in one write, are framed right", T,
                     E2E_STDIO) {
    StdioServer server(T::transport);
    std::string bytes;
    for (int i = 1; i <= 3; ++i) {
      bytes += server.frame(R"({"jsonrpc":"2.0","method":"subtract","params":[)" +
                            std::to_string(10 * i) + R"(,1],"id":)" + std::to_string(i) + "}");
    }
    for (std::size_t at = 0; at < bytes.size(); at += 7) {  // a few bytes at a time
      server.send_raw(std::string_view(bytes).substr(at, 7));
      std::this_thread::sleep_for(1ms);
    }
    std::vector<std::string> replies;
    for (int i = 0; i < 3; ++i) {
      const auto reply = server.receive();
      REQUIRE(reply);
      replies.push_back(*reply);
    }
    std::sort(replies.begin(), replies.end());  // completion order: correlate by id
    CHECK(replies ==
          std::vector<std::string>{result("1", "9"), result("2", "19"), result("3", "29")});
    SUBCASE("all at once") {
      server.send_raw(bytes);
      replies.clear();
      for (int i = 0; i < 3; ++i) {
        const auto reply = server.receive();
        REQUIRE(reply);
        replies.push_back(*reply);
      }
      std::sort(replies.begin(), replies.end());
      CHECK(replies ==
            std::vector<std::string>{result("1", "9"), result("2", "19"), result("3", "29")});
    }
    server.finish();
  }

  TEST_CASE("stdio, lines: CRLF endings are accepted and blank lines skipped") {
    StdioServer server(Transport::lines);
    server.send_raw("\n  \r\n\t\n");
    CHECK(server.call(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})"
                      "\r") == result("1", "19"));
    server.finish();
  }

  TEST_CASE("stdio, Content-Length: other headers are ignored, the name is case-insensitive") {
    StdioServer server(Transport::content_length);
    const std::string message = R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})";
    server.send_raw("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  " +
                    std::to_string(message.size()) + " \r\n\r\n" + message);
    CHECK(server.receive() == result("1", "19"));
    server.finish();
  }

  // ---- Message size ----------------------------------------------------------------------------

  TEST_CASE_TEMPLATE("a message over the limit is -32090 and the next one is still served", T,
                     E2E_STDIO) {
    StdioServer server(T::transport);
    CHECK(server.call(padded_ping("1", kMaxMessage)) == result("1", R"({"nonce":"big"})"));
    CHECK(server.call(padded_ping("2", kMaxMessage + 1)) == too_large());
    CHECK(server.call(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":3})") ==
          result("3", "19"));
    server.finish();
  }

  TEST_CASE("stdio, Content-Length: a frame that cannot be read is -32700 and ends the stream") {
    StdioServer server(Transport::content_length);
    CHECK(server.call(R"({"jsonrpc":"2.0","method":"ping","id":1})") == result("1", "{}"));
    server.send_raw("Content-Length: ten\r\n\r\n");
    CHECK(server.receive() == error("null", -32700, "Parse error",
                                    R"({"reason":"invalid frame: invalid Content-Length"})"));
    const std::optional<int> code = server.child().wait_exit(kTimeout);
    REQUIRE(code);
    CHECK(*code == 0);
  }

  // ---- Disconnects -----------------------------------------------------------------------------

  TEST_CASE_TEMPLATE("end of input while a request runs: it is finished and answered, then exit 0",
                     T, E2E_STDIO) {
    StdioServer server(T::transport);
    const auto start_time = Clock::now();
    server.send(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":300},"id":1})");
    server.child().close_stdin();
    CHECK(server.receive() == result("1", "300"));
    CHECK(seconds_since(start_time) >= 0.29);
    const std::optional<int> code = server.child().wait_exit(kTimeout);
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(server.child().unread_stdout() == "");
  }

  TEST_CASE_TEMPLATE("a client that stops reading: the server stops too and exits 0", T,
                     E2E_STDIO) {
    StdioServer server(T::transport);
    server.child().close_stdout();
    // Its first failed write ends the reading; keep sending until it has noticed (bounded).
    std::optional<int> code;
    for (int i = 0; i < 100 && !code; ++i) {
      if (!server.child().write(server.frame(R"({"jsonrpc":"2.0","method":"ping","id":1})"),
                                kTimeout))
        break;
      code = server.child().wait_exit(20ms);
    }
    if (!code) code = server.child().wait_exit(kTimeout);
    INFO("stderr: ", server.child().stderr_text());
    REQUIRE(code);
    CHECK(*code == 0);
  }

  TEST_CASE("stdio, lines: a last line without its newline is still served") {
    StdioServer server(Transport::lines);
    server.send_raw(R"({"jsonrpc":"2.0","method":"ping","id":1})");
    server.child().close_stdin();
    CHECK(server.receive() == result("1", "{}"));
    const std::optional<int> code = server.child().wait_exit(kTimeout);
    REQUIRE(code);
    CHECK(*code == 0);
  }

#if defined(BATCHRPC_TEST_HTTP)

  // ---- HTTP only -------------------------------------------------------------------------------

  TEST_CASE("http: a body over the limit is 413 and the server goes on serving") {
    HttpServer server;
    httplib::Client client = server.client();
    const HttpReply exact = HttpServer::post(client, padded_ping("1", kMaxMessage));
    CHECK(exact.status == 200);
    CHECK(exact.body == result("1", R"({"nonce":"big"})"));
    const HttpReply over = HttpServer::post(client, padded_ping("2", kMaxMessage + 1));
    CHECK(over.status == 413);
    CHECK(server.exchange(R"({"jsonrpc":"2.0","method":"ping","id":3})", true) ==
          result("3", "{}"));
    server.finish();
  }

  TEST_CASE("http: a chunked body is served") {
    HttpServer server;
    Socket socket(server.port());
    const std::string body = R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})";
    const std::string head =
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    auto chunk = [](std::string_view data) {
      char size[16];
      const auto r = std::to_chars(size, size + sizeof size, data.size(), 16);
      return std::string(size, r.ptr) + "\r\n" + std::string(data) + "\r\n";
    };
    socket.send(head + chunk(body.substr(0, 20)) + chunk(body.substr(20)) + "0\r\n\r\n");
    const auto response = socket.read_response();
    REQUIRE(response);
    CHECK(response->rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(response->ends_with("\r\n\r\n" + result("1", "19")));
    Socket big(server.port());
    big.send(head);
    const std::string piece = chunk(std::string(1 << 20, ' '));
    for (int i = 0; i < 17; ++i) big.send(piece);
    big.send("0\r\n\r\n");
    const auto refused = big.read_response();
    REQUIRE(refused);
    CHECK(refused->rfind("HTTP/1.1 413 ", 0) == 0);
    server.finish();
  }

  TEST_CASE("http: methods other than POST are 405, other content types 415") {
    HttpServer server;
    httplib::Client client = server.client();
    for (const httplib::Result& res :
         {client.Get("/"), client.Put("/", "{}", "application/json"), client.Delete("/"),
          client.Patch("/", "{}", "application/json"), client.Options("/")}) {
      REQUIRE(res);
      CHECK(res->status == 405);
      CHECK(res->get_header_value("Allow") == "POST");
    }
    CHECK(HttpServer::post(client, R"({"jsonrpc":"2.0","method":"ping","id":1})", "text/plain")
              .status == 415);
    CHECK(
        HttpServer::post(client, R"({"jsonrpc":"2.0","method":"ping","id":1})", "application/jsonx")
            .status == 415);
    const HttpReply with_charset = HttpServer::post(
        client, R"({"jsonrpc":"2.0","method":"ping","id":1})", "Application/JSON; charset=utf-8");
    CHECK(with_charset.status == 200);
    CHECK(with_charset.body == result("1", "{}"));
    server.finish();
  }

  TEST_CASE("http: keep-alive serves many requests on one connection") {
    HttpServer server;
    SUBCASE("httplib::Client opens one socket for all of them") {
      httplib::Client client = server.client();
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      int sockets = 0;
      client.set_socket_options([&sockets](socket_t) { ++sockets; });
      for (int i = 0; i < 5; ++i) {
        const std::string id = std::to_string(i);
        CHECK(HttpServer::post(client, R"({"jsonrpc":"2.0","method":"subtract","params":[10,)" +
                                           id + R"(],"id":)" + id + "}")
                  .body == result(id, std::to_string(10 - i)));
      }
      CHECK(HttpServer::post(client, R"({"jsonrpc":"2.0","method":"update"})").status == 204);
      CHECK(HttpServer::post(client, R"({"jsonrpc":"2.0","method":"ping","id":9})").body ==
            result("9", "{}"));
      CHECK(sockets == 1);
      const auto again = Clock::now();
      CHECK(HttpServer::post(client, R"({"jsonrpc":"2.0","method":"ping","id":10})").status == 200);
      CHECK(seconds_since(again) < 0.02);
    }
    SUBCASE("two requests, one after the other, on one raw socket") {
      Socket socket(server.port());
      socket.send(http_post(R"({"jsonrpc":"2.0","method":"ping","id":1})"));
      const auto first = socket.read_response();
      REQUIRE(first);
      CHECK(first->rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
      CHECK(first->ends_with("\r\n\r\n" + result("1", "{}")));
      socket.send(http_post(R"({"jsonrpc":"2.0","method":"ping","id":2})"));
      const auto second = socket.read_response();
      REQUIRE(second);
      CHECK(second->ends_with("\r\n\r\n" + result("2", "{}")));
    }
    server.finish();
  }

  TEST_CASE("http: a client that goes away mid-request does not stop the others") {
    HttpServer server;
    SUBCASE("it times out waiting for a slow reply") {
      httplib::Client impatient = server.client();
      impatient.set_read_timeout(50ms);
      const httplib::Result res =
          impatient.Post("/", R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":2000},"id":1})",
                         "application/json");
      CHECK_FALSE(res);
    }
    SUBCASE("it closes its socket right after sending a slow request") {
      Socket socket(server.port());
      socket.send(http_post(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":2000},"id":1})"));
      std::this_thread::sleep_for(50ms);
      socket.close();
    }
    SUBCASE("it closes its socket halfway through a body") {
      Socket socket(server.port());
      const std::string request = http_post(R"({"jsonrpc":"2.0","method":"ping","id":1})");
      socket.send(std::string_view(request).substr(0, request.size() - 10));
      std::this_thread::sleep_for(50ms);
      socket.close();
    }
    const auto start_time = Clock::now();
    CHECK(server.exchange(R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":"next"},"id":2})",
                          true) == result("2", R"({"nonce":"next"})"));
    CHECK(seconds_since(start_time) < 1.5);  // not after the abandoned 2 s sleep
    server.finish();
  }

  TEST_CASE(
      "http: each connection has its own session, so a cancel cannot reach another's request") {
    HttpServer server;
    std::optional<std::string> slow;
    std::thread first([&] {
      httplib::Client client = server.client();
      const httplib::Result res =
          client.Post("/", R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":500},"id":1})",
                      "application/json");
      if (res) slow = res->body;
    });
    std::this_thread::sleep_for(150ms);  // the sleep is running on the first connection
    CHECK(server.exchange(
              R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1},"id":2})",
              true) == result("2", R"({"cancelled":false})"));
    first.join();
    CHECK(slow == result("1", "500"));
    server.finish();
  }

  TEST_CASE("http: a request naming a session is served by it, so a cancel reaches another connection") {
    HttpServer server;
    httplib::Client first_client = server.client();
    const httplib::Result hello =
        first_client.Post("/", R"({"jsonrpc":"2.0","method":"ping","id":0})", "application/json");
    REQUIRE(hello);
    const std::string id = hello->get_header_value("Rpc-Session-Id");
    CHECK(id.size() == 32);
    std::optional<std::string> slow;
    std::thread first([&] {
      const httplib::Result res = first_client.Post(
          "/", httplib::Headers{{"Rpc-Session-Id", id}},
          R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":1})", "application/json");
      if (res) slow = res->body;
    });
    std::this_thread::sleep_for(150ms);  // the sleep is running on the first connection
    const auto start_time = Clock::now();
    httplib::Client second = server.client();
    const httplib::Result cancel =
        second.Post("/", httplib::Headers{{"Rpc-Session-Id", id}},
                    R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1},"id":2})",
                    "application/json");
    REQUIRE(cancel);
    CHECK(cancel->body == result("2", R"({"cancelled":true})"));
    CHECK(cancel->get_header_value("Rpc-Session-Id") == id);
    first.join();
    CHECK(seconds_since(start_time) < 3.0);  // the sleep would take 10 s
    CHECK(slow == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}})");
    const httplib::Result unknown = second.Post("/", httplib::Headers{{"Rpc-Session-Id", "nope"}},
                                                R"({"jsonrpc":"2.0","method":"ping","id":3})", "application/json");
    REQUIRE(unknown);
    CHECK(unknown->status == 404);
    server.finish();
  }

#endif  // BATCHRPC_TEST_HTTP
}
