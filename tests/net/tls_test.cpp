// SPDX-License-Identifier: MIT
// rpc::net::Server with TLS on every protocol: HTTPS, WSS, and framed streams inside TLS over TCP
// and Unix sockets, with a certificate the test makes; a client that does not speak TLS, or
// never finishes its handshake, is closed without disturbing the others.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/net.hpp>
#include <batchrpc/net_client.hpp>
#include <batchrpc/detail/net/http_reads.hpp>

#include <unistd.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "net_client.hpp"
#include "support/replies.hpp"
#include "tls_credentials.hpp"

using namespace std::chrono_literals;
using namespace replies;
namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace http = boost::beast::http;

namespace {

const std::string kPing = R"({"jsonrpc":"2.0","method":"ping","id":1})";
const std::string kPong = result("1", "{}");

struct TlsFixture {
  explicit TlsFixture(rpc::net::ServerOptions options = {})
      : credentials(tlstest::make_self_signed()),
        server_tls(tlstest::server_context(credentials)),
        client_tls(tlstest::client_context(credentials)) {
    rpc::add_builtins(router, {.server_name = "tls_test", .server_version = "1"});
    options.handler_threads = 2;
    server.emplace(router, std::move(options));
  }

  // A TLS client stream on `socket`, handshake done, the server's name checked.
  template <class Socket>
  ssl::stream<Socket> secure(Socket socket) {
    ssl::stream<Socket> stream(std::move(socket), client_tls);
    stream.set_verify_callback(ssl::host_name_verification("localhost"));
    stream.handshake(ssl::stream_base::client);
    return stream;
  }

  // A ping over the HTTPS connection `https`.
  static netclient::Response https_ping(ssl::stream<netclient::tcp::socket>& https) {
    auto request = netclient::post(kPing);
    http::write(https, request);
    boost::beast::flat_buffer buffer;
    netclient::Response response;
    http::read(https, buffer, response);
    return response;
  }
  // A ping over a new HTTPS connection to `port`, closed after it.
  netclient::Response https_ping(int port) {
    auto https = secure(netclient::connect_tcp(io, port));
    return https_ping(https);
  }

  tlstest::Credentials credentials;
  ssl::context server_tls;
  ssl::context client_tls;
  rpc::Router router;
  std::optional<rpc::net::Server> server;
  asio::io_context io;
};

}  // namespace

TEST_SUITE("net: TLS") {
  TEST_CASE("HTTPS and WSS on one port, with a certificate the client verifies") {
    TlsFixture f;
    const int port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::http, &f.server_tls);
    f.server->start();

    const netclient::Response response = f.https_ping(port);
    CHECK(response.result_int() == 200);
    CHECK(response.body() == kPong);

    boost::beast::websocket::stream<ssl::stream<netclient::tcp::socket>> wss(f.secure(netclient::connect_tcp(f.io, port)));
    wss.handshake("localhost", "/");
    wss.text(true);
    wss.write(asio::buffer(kPing));
    boost::beast::flat_buffer message;
    wss.read(message);
    CHECK(boost::beast::buffers_to_string(message.data()) == kPong);
  }

  TEST_CASE("framed streams inside TLS, over TCP (lines) and a Unix socket (Content-Length)") {
    TlsFixture f;
    const int port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines, &f.server_tls);
    const auto path = (std::filesystem::temp_directory_path() /
                       ("batchrpc-tls-test-" + std::to_string(::getpid()) + ".sock")).string();
    f.server->listen_unix(path, rpc::net::Protocol::content_length, &f.server_tls);
    f.server->start();
    netclient::StreamClient<ssl::stream<netclient::tcp::socket>> lines(f.secure(netclient::connect_tcp(f.io, port)), false);
    CHECK(lines.call(kPing) == kPong);
    netclient::StreamClient<ssl::stream<netclient::unix_socket::socket>> framed(
        f.secure(netclient::connect_unix(f.io, path)), true);
    CHECK(framed.call(kPing) == kPong);
  }

  TEST_CASE("rpc::net::Client over TLS on every transport, checking the server's name") {
    TlsFixture f;
    const int http_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::http, &f.server_tls);
    const int lines_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::lines, &f.server_tls);
    const int framed_port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::content_length, &f.server_tls);
    f.server->start();
    using rpc::net::Transport;
    for (const auto& [transport, port] : {std::pair{Transport::http, http_port}, std::pair{Transport::websocket, http_port},
                                          std::pair{Transport::lines, lines_port},
                                          std::pair{Transport::content_length, framed_port}}) {
      CAPTURE(static_cast<int>(transport));
      rpc::net::Client client{{.transport = transport, .tls = &f.client_tls, .tls_server_name = "localhost"}};
      client.connect("127.0.0.1", port);
      rpc::BatchBuilder batch = client.batch();
      const auto id = batch.call("ping");
      const rpc::Replies replies = client.send(std::move(batch)).get();
      CHECK(replies.complete());
      CHECK(replies.result_json(id).text() == "{}");
    }
    // The certificate names localhost and 127.0.0.1, not this: the handshake fails.
    rpc::net::Client wrong_name{{.transport = Transport::lines, .tls = &f.client_tls, .tls_server_name = "example.org"}};
    CHECK_THROWS_AS(wrong_name.connect("127.0.0.1", lines_port), std::runtime_error);
    // Not TLS at all, against a TLS port: the first reply is not one, so it fails or times out.
    rpc::net::Client plain{{.transport = Transport::http, .connect_timeout = 500ms}};
    plain.connect("127.0.0.1", http_port);
    rpc::BatchBuilder batch = plain.batch();
    batch.call("ping");
    const rpc::Replies refused = plain.send(std::move(batch)).get();
    CHECK_FALSE(refused.complete());
  }

  TEST_CASE("HTTPS requests pipelined inside one TLS record are answered without waiting for the socket") {
    // One write makes one TLS record. The server's first read takes kTlsFirstRead bytes: with a
    // first request of exactly that size, the second is left decrypted inside the TLS layer and the
    // socket has nothing more to say. A connection that waited on the socket for its next
    // request would wait until its idle timeout.
    TlsFixture f({.request_timeout = 20s, .idle_timeout = 20s});
    const int port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::http, &f.server_tls);
    f.server->start();
    auto text_of = [](const http::request<http::string_body>& request) {
      std::ostringstream out;
      out << request;
      return out.str();
    };
    std::string first;
    constexpr std::size_t first_read = rpc::net::detail::kTlsFirstRead;
    for (std::size_t padding = 0; first.size() < first_read; ++padding) {
      first = text_of(netclient::post(kPing + std::string(padding, ' ')));  // JSON allows the spaces
    }
    REQUIRE(first.size() == first_read);
    const std::string second = text_of(netclient::post(R"({"jsonrpc":"2.0","method":"ping","id":2})"));
    auto https = f.secure(netclient::connect_tcp(f.io, port));
    const auto start = std::chrono::steady_clock::now();
    asio::write(https, asio::buffer(first + second));
    boost::beast::flat_buffer buffer;
    netclient::Response response;
    http::read(https, buffer, response);
    CHECK(response.body() == kPong);
    netclient::Response next;
    http::read(https, buffer, next);
    CHECK(next.body() == result("2", "{}"));
    CHECK(std::chrono::steady_clock::now() - start < 5s);
  }

  TEST_CASE("a client without TLS, or one that never finishes its handshake, is closed, and others are served") {
    TlsFixture f({.request_timeout = 300ms});
    const int port = f.server->listen("127.0.0.1", 0, rpc::net::Protocol::http, &f.server_tls);
    f.server->start();
    netclient::HttpClient plain(f.io, port);
    const auto refused = plain.call(kPing);  // not a TLS ClientHello: the handshake fails
    CHECK_FALSE(refused);
    netclient::HttpClient silent(f.io, port);  // connects, then says nothing
    const auto start = std::chrono::steady_clock::now();
    auto https = f.secure(netclient::connect_tcp(f.io, port));  // stays open, so stays counted
    CHECK(TlsFixture::https_ping(https).body() == kPong);
    CHECK(silent.closed_by_server());
    CHECK(std::chrono::steady_clock::now() - start >= 250ms);
    // The failed handshakes are uncounted right after their sockets close.
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (f.server->connections() != 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    CHECK(f.server->connections() == 1);
  }

  TEST_CASE("a TLS handshake still in progress when the server shuts down is closed at once, on every protocol") {
    for (const auto protocol : {rpc::net::Protocol::http, rpc::net::Protocol::lines}) {
      CAPTURE(static_cast<int>(protocol));
      TlsFixture f;  // the request deadline (10 s) would close it much later
      const int port = f.server->listen("127.0.0.1", 0, protocol, &f.server_tls);
      f.server->start();
      netclient::HttpClient silent(f.io, port);  // connects, then says nothing: no ClientHello
      const auto deadline = std::chrono::steady_clock::now() + 2s;
      while (f.server->connections() != 1 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(5ms);
      }
      REQUIRE(f.server->connections() == 1);  // admitted, its handshake waiting
      const auto start = std::chrono::steady_clock::now();
      f.server->shutdown();
      CHECK(std::chrono::steady_clock::now() - start < 1s);
      CHECK(silent.closed_by_server());  // now, not when the Server object goes
      CHECK(f.server->connections() == 0);
    }
  }
}
