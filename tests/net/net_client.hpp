// SPDX-License-Identifier: MIT
// Blocking clients for the network transport tests, on Asio and Beast (a client we did not
// write for the protocol itself): HTTP, WebSocket, and framed streams over TCP or Unix sockets.
// Every read gives up after five seconds, so a server that hangs fails the test.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace netclient {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

// Reads on `socket` fail after `timeout` instead of blocking for ever.
template <class Socket>
void limit_reads(Socket& socket, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

inline tcp::socket connect_tcp(asio::io_context& io, int port) {
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  limit_reads(socket);
  return socket;
}

inline unix_socket::socket connect_unix(asio::io_context& io, const std::string& path) {
  unix_socket::socket socket(io);
  socket.connect(unix_socket::endpoint(path));
  limit_reads(socket);
  return socket;
}

using Response = http::response<http::string_body>;

inline http::request<http::string_body> post(std::string body, std::string_view content_type = "application/json") {
  http::request<http::string_body> request{http::verb::post, "/", 11};
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::content_type, content_type);
  request.body() = std::move(body);
  request.prepare_payload();
  return request;
}

// One HTTP/1.1 keep-alive connection.
class HttpClient {
 public:
  HttpClient(asio::io_context& io, int port) : socket_(connect_tcp(io, port)) {}

  template <class Request>
  void send(Request& request) {
    http::write(socket_, request);
  }
  // The next response; nothing when the connection ended or the read timed out.
  std::optional<Response> receive() {
    Response response;
    beast::error_code error;
    http::read(socket_, buffer_, response, error);
    if (error) return std::nullopt;
    return response;
  }
  std::optional<Response> call(std::string body, std::string_view content_type = "application/json") {
    auto request = post(std::move(body), content_type);
    send(request);
    return receive();
  }
  void write_raw(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes.data(), bytes.size())); }
  // True when the server has closed the connection (a read sees the end, not a timeout).
  bool closed_by_server() {
    char byte = 0;
    beast::error_code error;
    socket_.read_some(asio::buffer(&byte, 1), error);
    return error == asio::error::eof || error == asio::error::connection_reset;
  }
  // Everything the server sends until it closes the connection; nothing when a read timed out.
  std::optional<std::string> read_until_closed() {
    std::string received(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    buffer_.clear();
    char bytes[4096];
    beast::error_code error;
    while (!error) received.append(bytes, socket_.read_some(asio::buffer(bytes), error));
    if (error != asio::error::eof && error != asio::error::connection_reset) return std::nullopt;
    return received;
  }
  tcp::socket& socket() { return socket_; }

 private:
  tcp::socket socket_;
  beast::flat_buffer buffer_;
};

// One WebSocket connection, handshake done.
class WsClient {
 public:
  // `header`: one more header for the upgrade request, when not empty.
  WsClient(asio::io_context& io, int port, std::pair<std::string, std::string> header = {}) : ws_(connect_tcp(io, port)) {
    if (!header.first.empty()) {
      ws_.set_option(websocket::stream_base::decorator(
          [header](websocket::request_type& request) { request.set(header.first, header.second); }));
    }
    ws_.handshake("127.0.0.1", "/");
    ws_.text(true);
  }
  void send(std::string_view text) { ws_.write(asio::buffer(text.data(), text.size())); }
  void send_binary(std::string_view bytes) {
    ws_.binary(true);
    ws_.write(asio::buffer(bytes.data(), bytes.size()));
    ws_.text(true);
  }
  // The next text message; nothing when the connection was closed (see close_code()).
  std::optional<std::string> receive() {
    beast::flat_buffer buffer;
    beast::error_code error;
    ws_.read(buffer, error);
    if (error) return std::nullopt;
    return beast::buffers_to_string(buffer.data());
  }
  std::optional<std::string> call(std::string_view text) {
    send(text);
    return receive();
  }
  [[nodiscard]] int close_code() const { return static_cast<int>(ws_.reason().code); }
  // Closes the TCP connection under the WebSocket, with no close handshake.
  void close_socket() {
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).close(ignored);
  }

 private:
  websocket::stream<tcp::socket> ws_;
};

// One framed stream connection (lines or Content-Length) over TCP or a Unix socket.
template <class Socket>
class StreamClient {
 public:
  StreamClient(Socket socket, bool content_length) : socket_(std::move(socket)), content_length_(content_length) {}

  void send(std::string_view message) {
    std::string frame = content_length_ ? "Content-Length: " + std::to_string(message.size()) + "\r\n\r\n" +
                                              std::string(message)
                                        : std::string(message) + "\n";
    write_raw(frame);
  }
  void write_raw(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes.data(), bytes.size())); }
  // Ends what this client sends; it still reads.
  void shutdown_send() { socket_.shutdown(asio::socket_base::shutdown_send); }

  // The next message; nothing at the end of the stream or after the read timeout.
  std::optional<std::string> receive() {
    beast::error_code error;
    if (!content_length_) {
      const std::size_t n = asio::read_until(socket_, asio::dynamic_buffer(buffer_), '\n', error);
      if (error) return std::nullopt;
      std::string line = buffer_.substr(0, n - 1);
      buffer_.erase(0, n);
      return line;
    }
    const std::size_t n = asio::read_until(socket_, asio::dynamic_buffer(buffer_), "\r\n\r\n", error);
    if (error) return std::nullopt;
    const std::string header = buffer_.substr(0, n);
    buffer_.erase(0, n);
    constexpr std::string_view name = "Content-Length: ";
    if (header.rfind(name, 0) != 0) return "<unexpected header: " + header + ">";
    const std::size_t length = std::stoul(header.substr(name.size()));
    if (buffer_.size() < length) {
      asio::read(socket_, asio::dynamic_buffer(buffer_), asio::transfer_exactly(length - buffer_.size()), error);
      if (error) return std::nullopt;
    }
    std::string body = buffer_.substr(0, length);
    buffer_.erase(0, length);
    return body;
  }
  std::optional<std::string> call(std::string_view message) {
    send(message);
    return receive();
  }
  bool closed_by_server() {
    if (!buffer_.empty()) return false;
    char byte = 0;
    beast::error_code error;
    socket_.read_some(asio::buffer(&byte, 1), error);
    return error == asio::error::eof || error == asio::error::connection_reset;
  }

 private:
  Socket socket_;
  bool content_length_;
  std::string buffer_;
};

}  // namespace netclient
