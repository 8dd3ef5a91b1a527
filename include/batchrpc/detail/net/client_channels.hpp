// SPDX-License-Identifier: MIT
// The connection of a net::Client, one class per protocol over any stream (TCP or Unix-domain,
// with or without TLS): it completes the handshakes, writes messages in order, and hands each
// reply it reads to the client. Everything here runs on the client's one I/O thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/asio/write.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#if defined(BATCHRPC_NET_TLS)
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#endif

#include "../../config.hpp"
#include "../../framing.hpp"
#include "../../net_client.hpp"
#include "../stream_framer.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;

// What a channel reports to its client.
class ChannelEvents {
 public:
  // Message `seq` has been written whole.
  virtual void written(std::uint64_t seq) = 0;
  // HTTP: the next response, in the order of the requests.
  virtual void http_response(unsigned status, std::string body) = 0;
  // WebSocket and streams: one reply message.
  virtual void reply(std::string_view text) = 0;
  // The connection has ended (read or write failed, or the server closed it).
  virtual void ended(std::string why) = 0;

 protected:
  ~ChannelEvents() = default;
};

class Channel {
 public:
  virtual ~Channel() = default;
  // The TLS and WebSocket handshakes, within the stream's connect deadline; then reading starts.
  virtual void handshake(std::function<void(const boost::system::error_code&)> done) = 0;
  // Queues message `seq` (written in the order given).
  virtual void write(std::string text, std::uint64_t seq) = 0;
  // Closes the socket; pending operations end with an error (nothing is reported).
  virtual void close() = 0;
};

template <class Stream>
struct is_tls : std::false_type {};
#if defined(BATCHRPC_NET_TLS)
template <class Next>
struct is_tls<asio::ssl::stream<Next>> : std::true_type {};
#endif

// The TLS handshake when `Stream` is a TLS stream (SNI and name check with `server_name`).
template <class Stream, class Done>
void tls_handshake(Stream& stream, const ClientOptions& options, Done done) {
#if defined(BATCHRPC_NET_TLS)
  if constexpr (is_tls<Stream>::value) {
    if (!options.tls_server_name.empty()) {
      SSL_set_tlsext_host_name(stream.native_handle(), options.tls_server_name.c_str());
      stream.set_verify_callback(asio::ssl::host_name_verification(options.tls_server_name));
    }
    stream.async_handshake(asio::ssl::stream_base::client, std::move(done));
    return;
  }
#endif
  (void)stream;
  (void)options;
  done(boost::system::error_code{});
}

template <class Stream>
void drop_connection(Stream& stream) {
  boost::system::error_code ignored;
  beast::get_lowest_layer(stream).socket().close(ignored);
}

// Writes queued messages one at a time, in order. `Write(text, handler)` starts one write.
class WriteQueue {
 public:
  struct Item {
    std::string text;
    std::uint64_t seq;
  };
  // True when the caller must start writing the front item.
  bool push(Item item) {
    items_.push_back(std::move(item));
    return items_.size() == 1;
  }
  [[nodiscard]] Item& front() { return items_.front(); }
  // Drops the written front; true when another is waiting.
  bool pop() {
    items_.pop_front();
    return !items_.empty();
  }
 private:
  std::deque<Item> items_;
};

template <class Stream>
class HttpChannel final : public Channel {
 public:
  HttpChannel(Stream stream, const ClientOptions& options, std::string host, ChannelEvents& events)
      : stream_(std::move(stream)), options_(options), host_(std::move(host)), events_(events) {}

  void handshake(std::function<void(const boost::system::error_code&)> done) override {
    tls_handshake(stream_, options_, [this, done = std::move(done)](const boost::system::error_code& error) {
      if (!error) {
        beast::get_lowest_layer(stream_).expires_never();
        read_next();
      }
      done(error);
    });
  }

  void write(std::string text, std::uint64_t seq) override {
    if (!closed_ && queue_.push({std::move(text), seq})) write_front();
  }

  void close() override {
    closed_ = true;  // the write in progress still owns its buffer: the queue stays
    drop_connection(stream_);
  }

 private:
  void write_front() {
    namespace http = beast::http;
    request_.emplace(http::verb::post, options_.target, 11);
    request_->set(http::field::host, host_);
    request_->set(http::field::content_type, "application/json");
    request_->body() = std::move(queue_.front().text);
    request_->prepare_payload();
    http::async_write(stream_, *request_, [this](const boost::system::error_code& error, std::size_t) {
      if (closed_) return;
      if (error) return events_.ended("writing failed: " + error.message());
      const std::uint64_t seq = queue_.front().seq;
      const bool more = queue_.pop();
      events_.written(seq);
      if (more) write_front();
    });
  }

  void read_next() {
    parser_.emplace();
    parser_->body_limit(options_.limits.max_message_bytes);
    beast::http::async_read(stream_, buffer_, *parser_, [this](const boost::system::error_code& error, std::size_t) {
      if (closed_) return;
      if (error) return events_.ended(error == beast::http::error::end_of_stream || error == asio::error::eof
                                          ? std::string("the server closed the connection")
                                          : "reading failed: " + error.message());
      auto& response = parser_->get();
      events_.http_response(response.result_int(), std::move(response.body()));
      read_next();
    });
  }

  Stream stream_;
  const ClientOptions& options_;
  const std::string host_;
  ChannelEvents& events_;
  WriteQueue queue_;
  bool closed_ = false;
  std::optional<beast::http::request<beast::http::string_body>> request_;
  beast::flat_buffer buffer_;
  std::optional<beast::http::response_parser<beast::http::string_body>> parser_;
};

template <class Stream>
class WebSocketChannel final : public Channel {
 public:
  WebSocketChannel(Stream stream, const ClientOptions& options, std::string host, ChannelEvents& events)
      : ws_(std::move(stream)), options_(options), host_(std::move(host)), events_(events) {}

  void handshake(std::function<void(const boost::system::error_code&)> done) override {
    tls_handshake(ws_.next_layer(), options_, [this, done = std::move(done)](const boost::system::error_code& error) {
      if (error) return done(error);
      // The WebSocket stream keeps its own time from here (Beast's rule for a basic_stream).
      beast::get_lowest_layer(ws_).expires_never();
      ws_.set_option(beast::websocket::stream_base::timeout{
          .handshake_timeout = options_.connect_timeout,
          .idle_timeout = beast::websocket::stream_base::none(),
          .keep_alive_pings = false,
      });
      ws_.read_message_max(options_.limits.max_message_bytes);
      ws_.async_handshake(host_, options_.target, [this, done](const boost::system::error_code& shaken) {
        if (!shaken) {
          ws_.text(true);
          read_next();
        }
        done(shaken);
      });
    });
  }

  void write(std::string text, std::uint64_t seq) override {
    if (!closed_ && queue_.push({std::move(text), seq})) write_front();
  }

  void close() override {
    closed_ = true;  // the write in progress still owns its buffer: the queue stays
    drop_connection(ws_);
  }

 private:
  void write_front() {
    const std::string& text = queue_.front().text;
    ws_.async_write(asio::buffer(text), [this](const boost::system::error_code& error, std::size_t) {
      if (closed_) return;
      if (error) return events_.ended("writing failed: " + error.message());
      const std::uint64_t seq = queue_.front().seq;
      const bool more = queue_.pop();
      events_.written(seq);
      if (more) write_front();
    });
  }

  void read_next() {
    ws_.async_read(buffer_, [this](const boost::system::error_code& error, std::size_t) {
      if (closed_) return;
      if (error) {
        if (error == beast::websocket::error::closed) {
          return events_.ended("the server closed the WebSocket (" + std::to_string(ws_.reason().code) + ")");
        }
        return events_.ended("reading failed: " + error.message());
      }
      const std::string text = beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      events_.reply(text);
      read_next();
    });
  }

  beast::websocket::stream<Stream> ws_;
  const ClientOptions& options_;
  const std::string host_;
  ChannelEvents& events_;
  WriteQueue queue_;
  bool closed_ = false;
  beast::flat_buffer buffer_;
};

template <class Stream>
class FramedChannel final : public Channel, private rpc::detail::FrameSink {
 public:
  FramedChannel(Stream stream, const ClientOptions& options, ChannelEvents& events)
      : stream_(std::move(stream)),
        options_(options),
        events_(events),
        framer_(options.transport == Transport::lines ? Framing::lines : Framing::content_length,
                options.limits.max_message_bytes) {}

  void handshake(std::function<void(const boost::system::error_code&)> done) override {
    tls_handshake(stream_, options_, [this, done = std::move(done)](const boost::system::error_code& error) {
      if (!error) {
        beast::get_lowest_layer(stream_).expires_never();
        read_next();
      }
      done(error);
    });
  }

  void write(std::string text, std::uint64_t seq) override {
    std::string frame;
    rpc::detail::append_frame(frame, framer_.framing(), text);
    if (!closed_ && queue_.push({std::move(frame), seq})) write_front();
  }

  void close() override {
    closed_ = true;  // the write in progress still owns its buffer: the queue stays
    drop_connection(stream_);
  }

 private:
  static constexpr std::size_t kReadChunk = 16 * 1024;

  void write_front() {
    const std::string& frame = queue_.front().text;
    asio::async_write(stream_, asio::buffer(frame), [this](const boost::system::error_code& error, std::size_t) {
      if (closed_) return;
      if (error) return events_.ended("writing failed: " + error.message());
      const std::uint64_t seq = queue_.front().seq;
      const bool more = queue_.pop();
      events_.written(seq);
      if (more) write_front();
    });
  }

  void read_next() {
    stream_.async_read_some(asio::buffer(chunk_), [this](const boost::system::error_code& error, std::size_t size) {
      if (closed_) return;
      if (error) {
        framer_.finish(*this);
        return events_.ended(error == asio::error::eof ? std::string("the server closed the connection")
                                                       : "reading failed: " + error.message());
      }
      framer_.feed(chunk_.data(), size, *this);
      if (framer_.failed()) return events_.ended(failure_);
      if (!failure_.empty()) return events_.ended(failure_);
      read_next();
    });
  }

  bool message(std::string_view text, std::string*) override {
    events_.reply(text);
    return true;
  }
  void too_large() override {
    failure_ = "a reply is larger than max_message_bytes (" + std::to_string(framer_.max_message_bytes()) + ")";
  }
  void bad_frame(const char* why) override { failure_ = std::string("the server's framing is broken: ") + why; }

  Stream stream_;
  const ClientOptions& options_;
  ChannelEvents& events_;
  rpc::detail::StreamFramer framer_;
  WriteQueue queue_;
  bool closed_ = false;
  std::array<char, kReadChunk> chunk_{};
  std::string failure_;
};

// The channel for `options.transport` on a connected stream (inside TLS with `options.tls`).
template <class Lowest>
std::unique_ptr<Channel> make_channel(Lowest lowest, const ClientOptions& options, std::string host,
                                      ChannelEvents& events) {
  const auto make = [&](auto stream) -> std::unique_ptr<Channel> {
    using Stream = decltype(stream);
    switch (options.transport) {
      case Transport::http:
        return std::make_unique<HttpChannel<Stream>>(std::move(stream), options, std::move(host), events);
      case Transport::websocket:
        return std::make_unique<WebSocketChannel<Stream>>(std::move(stream), options, std::move(host), events);
      case Transport::lines:
      case Transport::content_length:
        break;
    }
    return std::make_unique<FramedChannel<Stream>>(std::move(stream), options, events);
  };
#if defined(BATCHRPC_NET_TLS)
  if (options.tls != nullptr) return make(asio::ssl::stream<Lowest>(std::move(lowest), *options.tls));
#endif
  return make(std::move(lowest));
}

}  // namespace rpc::net::detail
