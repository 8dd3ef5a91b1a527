// SPDX-License-Identifier: MIT
// The scaling-out recipe of deploy/nginx/, run for real: nginx with batchrpc.conf.in in front of
// two spec_servers (--session-prefix a- and b-), checked through nginx with exact replies. Above
// all, a cancel sent on another connection must reach the server running the request.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "e2e/child_process.hpp"
#include "net/net_client.hpp"
#include "support/printing.hpp"
#include "support/replies.hpp"

#if !defined(BATCHRPC_LB_SPEC_SERVER) || !defined(BATCHRPC_LB_NGINX) || \
    !defined(BATCHRPC_LB_NGINX_CONF)
#error \
    "tests/CMakeLists.txt must define BATCHRPC_LB_SPEC_SERVER, BATCHRPC_LB_NGINX and BATCHRPC_LB_NGINX_CONF"
#endif

using namespace std::chrono_literals;
using e2e::Clock;
using e2e::Millis;

namespace {

namespace fs = std::filesystem;

constexpr const char* kServer = BATCHRPC_LB_SPEC_SERVER;
constexpr const char* kNginx = BATCHRPC_LB_NGINX;
constexpr const char* kTemplate = BATCHRPC_LB_NGINX_CONF;
constexpr Millis kTimeout = 5s;  // any one step; a longer one means something hangs
constexpr std::string_view kHeader = "Rpc-Session-Id";

// Ends a child gracefully so nginx's workers go with their master (SIGKILL would orphan
// them); its exit status, -1 if it did not end in time. A child already reaped is not signalled
// (its pid may belong to another process by now).
int terminate(e2e::ChildProcess& child) {
  if (const auto code = child.wait_exit(0ms)) return *code;
  ::kill(child.pid(), SIGTERM);
  return child.wait_exit(10s).value_or(-1);
}

// A port nothing listens on now, for nginx (which cannot be told to pick one and report it).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                     ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  ::close(fd);
  REQUIRE(bound);
  return ntohs(address.sin_port);
}

// `text` with every `name` replaced by `value`: the template's @PLACEHOLDERS@.
std::string substitute(std::string text, std::string_view name, const std::string& value) {
  for (auto at = text.find(name); at != std::string::npos;
       at = text.find(name, at + value.size())) {
    text.replace(at, name.size(), value);
  }
  return text;
}

// A spec_server --http child on a port of its own choosing, read from its stderr.
struct Backend {
  explicit Backend(const std::string& prefix)
      : child(kServer,
              {"--http", "--host", "127.0.0.1", "--port", "0", "--session-prefix", prefix}) {
    constexpr std::string_view said = "spec_server: listening on http://127.0.0.1:";
    const std::optional<std::string> err = child.wait_for_stderr("/\n", kTimeout);
    INFO("spec_server stderr: ", child.stderr_text());
    REQUIRE(err);
    const auto at = err->find(said);
    REQUIRE(at != std::string::npos);
    const char* first = err->data() + at + said.size();
    const auto parsed = std::from_chars(first, err->data() + err->size(), port);
    REQUIRE(parsed.ec == std::errc{});
    REQUIRE(port > 0);
  }
  [[nodiscard]] std::string address() const { return "127.0.0.1:" + std::to_string(port); }

  e2e::ChildProcess child;
  int port = 0;
};

// A private prefix directory for nginx, removed afterwards. Others may traverse it: nginx
// started as root runs its workers as nobody, and they write temporary files in there.
struct PrefixDir {
  PrefixDir() {
    std::string pattern = (fs::temp_directory_path() / "batchrpc-lb-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    fs::create_directory(path / "logs");
  }
  PrefixDir(const PrefixDir&) = delete;
  PrefixDir& operator=(const PrefixDir&) = delete;
  ~PrefixDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

// Two spec_servers behind nginx, as deploy/nginx/README.md runs them. The destructor stops
// nginx first (no new requests), then the servers; ChildProcess kills what is left.
class Cluster {
 public:
  Cluster() : a_("a-"), b_("b-") {
    std::ifstream in(kTemplate);
    REQUIRE(in);
    const std::string conf_template{std::istreambuf_iterator<char>(in),
                                    std::istreambuf_iterator<char>()};
    // The port may be taken between free_port() and nginx's bind: then nginx exits; try again.
    for (int attempt = 0; attempt < 5 && !nginx_; ++attempt) {
      port_ = free_port();
      std::string conf =
          substitute(conf_template, "@LISTEN@", "127.0.0.1:" + std::to_string(port_));
      conf = substitute(conf, "@BACKEND_A@", a_.address());
      conf = substitute(conf, "@BACKEND_B@", b_.address());
      REQUIRE(conf.find('@') == std::string::npos);  // every placeholder was replaced
      std::ofstream(dir_.path / "batchrpc.conf") << conf;
      start_nginx();
    }
    REQUIRE(nginx_);
  }
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  ~Cluster() {
    if (nginx_) terminate(*nginx_);
    terminate(a_.child);
    terminate(b_.child);
  }

  [[nodiscard]] int port() const { return port_; }

  // Stops everything and checks each process ended cleanly on SIGTERM.
  void stop() {
    INFO("nginx stderr: ", nginx_->stderr_text());
    CHECK(terminate(*nginx_) == 0);
    CHECK(terminate(a_.child) == 0);
    CHECK(terminate(b_.child) == 0);
  }

 private:
  // Starts nginx on the config written; keeps it once it has started its workers (it listens
  // by then), drops it if it exits first (its port was taken).
  void start_nginx() {
    nginx_.emplace(kNginx,
                   std::vector<std::string>{"-p", dir_.path.string() + "/", "-c", "batchrpc.conf",
                                            "-g", "daemon off; error_log stderr notice;"});
    const auto started = nginx_->wait_for_stderr("start worker process", kTimeout);
    if (started && !nginx_->wait_exit(0ms)) return;
    terminate(*nginx_);
    MESSAGE("nginx did not start: ", nginx_->stderr_text());
    nginx_.reset();
  }

  Backend a_;
  Backend b_;
  PrefixDir dir_;
  std::optional<e2e::ChildProcess> nginx_;
  int port_ = 0;
};

// The session that served `response`, as the server named it (nginx passes the header on).
std::string session_of(const netclient::Response& response) {
  return std::string(response[kHeader]);
}

// POSTs `body` on `client`, naming `session` when given.
std::optional<netclient::Response> call(netclient::HttpClient& client, std::string body,
                                        const std::string& session = {}) {
  auto request = netclient::post(std::move(body));
  if (!session.empty()) request.set(kHeader, session);
  client.send(request);
  return client.receive();
}

// A session of the server whose ids start with `prefix`: a ping on fresh connections (round
// robin) until that server answers. Returns the connection too, for the next request.
std::string session_on(boost::asio::io_context& io, int port, std::string_view prefix,
                       std::optional<netclient::HttpClient>& connection) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    connection.emplace(io, port);
    const auto reply = call(*connection, R"({"jsonrpc":"2.0","method":"ping","id":1})");
    REQUIRE(reply);
    const std::string id = session_of(*reply);
    if (id.rfind(prefix, 0) == 0) return id;
  }
  FAIL("no session id starting with ", prefix, " in 10 connections");
  return {};
}

// True when `client` has bytes to read within `timeout` (a reply is on its way).
bool readable(netclient::HttpClient& client, Millis timeout) {
  pollfd fd{client.socket().native_handle(), POLLIN, 0};
  return ::poll(&fd, 1, static_cast<int>(timeout.count())) == 1;
}

constexpr const char* kPing = R"({"jsonrpc":"2.0","method":"ping","id":1})";
constexpr const char* kCancel =
    R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}})";

}  // namespace

TEST_SUITE("nginx in front of two spec_servers (deploy/nginx)") {
  TEST_CASE("a request and a batch are answered through nginx") {
    Cluster cluster;
    boost::asio::io_context io;
    netclient::HttpClient client(io, cluster.port());
    const auto ping = client.call(kPing);
    REQUIRE(ping);
    CHECK(ping->result_int() == 200);
    CHECK(ping->body() == replies::result("1", "{}"));
    const auto batch =
        client.call(R"([{"jsonrpc":"2.0","method":"ping","id":1},)"
                    R"({"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"two"}])");
    REQUIRE(batch);
    CHECK(batch->result_int() == 200);
    CHECK(batch->body() ==
          "[" + replies::result("1", "{}") + "," + replies::result(R"("two")", "7") + "]");
    cluster.stop();
  }

  TEST_CASE("a notification is answered 204 with no body") {
    Cluster cluster;
    boost::asio::io_context io;
    netclient::HttpClient client(io, cluster.port());
    const auto reply = client.call(R"({"jsonrpc":"2.0","method":"ping"})");
    REQUIRE(reply);
    CHECK(reply->result_int() == 204);
    CHECK(reply->body().empty());
    cluster.stop();
  }

  TEST_CASE("requests without the header go round robin, each to a session of its own") {
    Cluster cluster;
    boost::asio::io_context io;
    std::set<std::string> sessions;
    bool saw_a = false;
    bool saw_b = false;
    for (int i = 0; i < 10; ++i) {
      netclient::HttpClient client(io, cluster.port());
      const auto reply = client.call(kPing);
      REQUIRE(reply);
      CHECK(reply->body() == replies::result("1", "{}"));
      const std::string id = session_of(*reply);
      CHECK(id.size() == 2 + 32);
      saw_a = saw_a || id.rfind("a-", 0) == 0;
      saw_b = saw_b || id.rfind("b-", 0) == 0;
      sessions.insert(id);
    }
    CHECK(saw_a);
    CHECK(saw_b);
    // No kept-alive upstream connection hands one client's session to the next (see the
    // batchrpc_any upstream in the config).
    CHECK(sessions.size() == 10);
    cluster.stop();
  }

  TEST_CASE("a cancel on another connection reaches the server running the request") {
    Cluster cluster;
    boost::asio::io_context io;
    for (const std::string_view prefix : {"a-", "b-"}) {
      CAPTURE(prefix);
      std::optional<netclient::HttpClient> first;
      const std::string session = session_on(io, cluster.port(), prefix, first);
      auto sleep =
          netclient::post(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":10000},"id":1})");
      sleep.set(kHeader, session);
      first->send(sleep);
      const auto start = Clock::now();
      std::this_thread::sleep_for(200ms);  // let the sleep begin
      // A cancel that comes before the sleep has begun finds nothing to cancel: send it again
      // (each time on a new connection) until the reply to the sleep is on its way.
      for (int attempt = 0; attempt < 8 && !readable(*first, 0ms); ++attempt) {
        netclient::HttpClient other(io, cluster.port());
        const auto cancel = call(other, kCancel, session);
        REQUIRE(cancel);
        CHECK(cancel->result_int() == 204);
        CHECK(session_of(*cancel) == session);
        readable(*first, 500ms);
      }
      const auto reply = first->receive();
      REQUIRE(reply);
      CHECK(reply->result_int() == 200);
      CHECK(session_of(*reply) == session);
      CHECK(reply->body() == replies::cancelled("1"));
      CHECK(Clock::now() - start < 6s);  // the sleep would take 10 s
    }
    cluster.stop();
  }

  TEST_CASE("a request without the header cannot cancel another client's request") {
    Cluster cluster;
    boost::asio::io_context io;
    std::optional<netclient::HttpClient> first;
    const std::string session = session_on(io, cluster.port(), "a-", first);
    auto sleep =
        netclient::post(R"({"jsonrpc":"2.0","method":"sleep","params":{"ms":1000},"id":1})");
    sleep.set(kHeader, session);
    first->send(sleep);
    std::this_thread::sleep_for(200ms);  // the sleep is running
    for (int i = 0; i < 6; ++i) {        // over both servers and both of nginx's workers
      netclient::HttpClient other(io, cluster.port());
      const auto cancel = other.call(kCancel);
      REQUIRE(cancel);
      CHECK(cancel->result_int() == 204);
    }
    const auto reply = first->receive();
    REQUIRE(reply);
    CHECK(reply->body() == replies::result("1", "1000"));
    cluster.stop();
  }

  TEST_CASE("a WebSocket passes through nginx") {
    Cluster cluster;
    boost::asio::io_context io;
    netclient::WsClient ws(io, cluster.port());
    CHECK(ws.call(kPing) == replies::result("1", "{}"));
    CHECK(ws.call(R"({"jsonrpc":"2.0","method":"sum","params":[1,2],"id":2})") ==
          replies::result("2", "3"));
    cluster.stop();
  }
}
