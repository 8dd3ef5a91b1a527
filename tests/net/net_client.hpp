// SPDX-License-Identifier: MIT
// Blocking clients for the network transport tests, on Asio and Beast (a client we did not
// write for the protocol itself): HTTP, WebSocket, and framed streams over TCP or Unix sockets.
// Every read gives up after five seconds, so a server that hangs fails the test.
#pragma once

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
#include <utility>

namespace netclient {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using unix_socket = asio::local::stream_protocol;

// Runs the read that `start(handler)` begins on `stream` and waits for it at most `timeout`;
// past it, the read is cancelled and `error` is timed_out. The stream's io_context must be one no
// other thread runs. (Asio's blocking reads cannot time out: after SO_RCVTIMEO's EAGAIN they
// poll again with no limit. Hence an asynchronous read, run here for a bounded time.)
template <class Stream, class Start>
std::size_t read_within(Stream& stream, beast::error_code& error, Start start,
                        std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto& io = static_cast<asio::io_context&>(asio::query(stream.get_executor(), asio::execution::context));
  std::optional<std::pair<beast::error_code, std::size_t>> result;
  start([&result](beast::error_code e, std::size_t n) { result.emplace(e, n); });
  io.restart();
  io.run_for(timeout);
  if (!result) {
    beast::get_lowest_layer(stream).cancel();
    io.restart();
    io.run();  // the cancelled read completes
    error = asio::error::timed_out;
    return 0;
  }
  error = result->first;
  return result->second;
}

inline tcp::socket connect_tcp(asio::io_context& io, int port) {
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
  return socket;
}

inline unix_socket::socket connect_unix(asio::io_context& io, const std::string& path) {
  unix_socket::socket socket(io);
  socket.connect(unix_socket::endpoint(path));
  return socket;
}

// True when a one-byte read on `stream` ends because the server closed the connection (not a
// timeout, not a byte).
template <class Stream>
bool read_sees_close(Stream& stream) {
  char byte = 0;
  beast::error_code error;
  read_within(stream, error, [&](auto handler) { stream.async_read_some(asio::buffer(&byte, 1), handler); });
  return error == asio::error::eof || error == asio::error::connection_reset;
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
    read_within(socket_, error, [&](auto handler) { http::async_read(socket_, buffer_, response, handler); });
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
  bool closed_by_server() { return read_sees_close(socket_); }
  // Everything the server sends until it closes the connection; nothing when a read timed out.
  std::optional<std::string> read_until_closed() {
    std::string received(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    buffer_.clear();
    char bytes[4096];
    beast::error_code error;
    while (!error) {
      received.append(bytes, read_within(socket_, error, [&](auto handler) {
                        socket_.async_read_some(asio::buffer(bytes), handler);
                      }));
    }
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
    read_within(ws_, error, [&](auto handler) { ws_.async_read(buffer, handler); });
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
  Socket& socket() { return socket_; }

  // The next message; nothing at the end of the stream or after the read timeout.
  std::optional<std::string> receive() {
    beast::error_code error;
    if (!content_length_) {
      const std::size_t n = read_within(socket_, error, [&](auto handler) {
        asio::async_read_until(socket_, asio::dynamic_buffer(buffer_), '\n', handler);
      });
      if (error) return std::nullopt;
      std::string line = buffer_.substr(0, n - 1);
      buffer_.erase(0, n);
      return line;
    }
    const std::size_t n = read_within(socket_, error, [&](auto handler) {
      asio::async_read_until(socket_, asio::dynamic_buffer(buffer_), "\r\n\r\n", handler);
    });
    if (error) return std::nullopt;
    const std::string header = buffer_.substr(0, n);
    buffer_.erase(0, n);
    constexpr std::string_view name = "Content-Length: ";
    if (header.rfind(name, 0) != 0) return "<unexpected header: " + header + ">";
    const std::size_t length = std::stoul(header.substr(name.size()));
    if (buffer_.size() < length) {
      read_within(socket_, error, [&](auto handler) {
        asio::async_read(socket_, asio::dynamic_buffer(buffer_), asio::transfer_exactly(length - buffer_.size()), handler);
      });
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
    return buffer_.empty() && read_sees_close(socket_);
  }

 private:
  Socket socket_;
  bool content_length_;
  std::string buffer_;
};

}  // namespace netclient
