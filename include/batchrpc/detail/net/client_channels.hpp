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
#include "tls_traits.hpp"

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

// The TLS handshake when `Stream` is a TLS stream (SNI and name check with `server_name`).
template <class Stream, class Done>
void tls_handshake(Stream& stream, const ClientOptions& options, Done done) {
#if defined(BATCHRPC_NET_TLS)
  if constexpr (is_tls<Stream>::value) {
    if (!options.tls_server_name.empty()) {
      // SSL_set_tlsext_host_name spelled out: the macro's C cast would warn in users' builds.
      SSL_ctrl(stream.native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(options.tls_server_name.c_str()));
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

// What every channel shares: the client's events, the messages waiting to be written (one at a
// time, in order), and whether it was closed. A write in progress keeps its buffer here until
// it completes, even after close().
class Outbox {
 public:
  explicit Outbox(ChannelEvents& listener) : events(listener) {}

  // Queues message `seq`; true when the caller must start writing it (nothing else is).
  bool push(std::string text, std::uint64_t seq) {
    if (closed) return false;
    items_.push_back({std::move(text), seq});
    return items_.size() == 1;
  }
  [[nodiscard]] std::string& front() { return items_.front().text; }
  // The write of the front ended: reports it; true when the next one is to be written.
  bool written(const boost::system::error_code& error) {
    if (closed) return false;
    if (error) {
      events.ended("writing failed: " + error.message());
      return false;
    }
    const std::uint64_t seq = items_.front().seq;
    items_.pop_front();
    events.written(seq);
    return !items_.empty();
  }

  ChannelEvents& events;
  bool closed = false;

 private:
  struct Item {
    std::string text;
    std::uint64_t seq;
  };
  std::deque<Item> items_;
};

// The handshake of a channel with nothing of its own to negotiate: TLS, if any, then reading.
template <class Stream, class Read>
void handshake_then_read(Stream& stream, const ClientOptions& options, Read read_next,
                         std::function<void(const boost::system::error_code&)> done) {
  tls_handshake(stream, options, [&stream, read_next, done = std::move(done)](const boost::system::error_code& error) {
    if (!error) {
      beast::get_lowest_layer(stream).expires_never();
      read_next();
    }
    done(error);
  });
}

template <class Stream>
class HttpChannel final : public Channel {
 public:
  HttpChannel(Stream stream, const ClientOptions& options, std::string host, ChannelEvents& events)
      : stream_(std::move(stream)), options_(options), host_(std::move(host)), outbox_(events) {}

  void handshake(std::function<void(const boost::system::error_code&)> done) override {
    handshake_then_read(stream_, options_, [this] { read_next(); }, std::move(done));
  }

  void write(std::string text, std::uint64_t seq) override {
    if (outbox_.push(std::move(text), seq)) write_front();
  }

  void close() override {
    outbox_.closed = true;
    drop_connection(stream_);
  }

 private:
  void write_front() {
    namespace http = beast::http;
    request_.emplace(http::verb::post, options_.target, 11);
    request_->set(http::field::host, host_);
    request_->set(http::field::content_type, "application/json");
    request_->body() = std::move(outbox_.front());
    request_->prepare_payload();
    http::async_write(stream_, *request_, [this](const boost::system::error_code& error, std::size_t) {
      if (outbox_.written(error)) write_front();
    });
  }

  void read_next() {
    parser_.emplace();
    parser_->body_limit(options_.limits.max_message_bytes);
    beast::http::async_read(stream_, buffer_, *parser_, [this](const boost::system::error_code& error, std::size_t) {
      if (outbox_.closed) return;
      if (error) return outbox_.events.ended(error == beast::http::error::end_of_stream || error == asio::error::eof
                                          ? std::string("the server closed the connection")
                                          : "reading failed: " + error.message());
      auto& response = parser_->get();
      outbox_.events.http_response(response.result_int(), std::move(response.body()));
      read_next();
    });
  }

  Stream stream_;
  const ClientOptions& options_;
  const std::string host_;
  Outbox outbox_;
  std::optional<beast::http::request<beast::http::string_body>> request_;
  beast::flat_buffer buffer_;
  std::optional<beast::http::response_parser<beast::http::string_body>> parser_;
};

template <class Stream>
class WebSocketChannel final : public Channel {
 public:
  WebSocketChannel(Stream stream, const ClientOptions& options, std::string host, ChannelEvents& events)
      : ws_(std::move(stream)), options_(options), host_(std::move(host)), outbox_(events) {}

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
    if (outbox_.push(std::move(text), seq)) write_front();
  }

  void close() override {
    outbox_.closed = true;
    drop_connection(ws_);
  }

 private:
  void write_front() {
    const std::string& text = outbox_.front();
    ws_.async_write(asio::buffer(text), [this](const boost::system::error_code& error, std::size_t) {
      if (outbox_.written(error)) write_front();
    });
  }

  void read_next() {
    ws_.async_read(buffer_, [this](const boost::system::error_code& error, std::size_t) {
      if (outbox_.closed) return;
      if (error) {
        if (error == beast::websocket::error::closed) {
          return outbox_.events.ended("the server closed the WebSocket (" + std::to_string(ws_.reason().code) + ")");
        }
        return outbox_.events.ended("reading failed: " + error.message());
      }
      const std::string text = beast::buffers_to_string(buffer_.data());
      buffer_.consume(buffer_.size());
      outbox_.events.reply(text);
      read_next();
    });
  }

  beast::websocket::stream<Stream> ws_;
  const ClientOptions& options_;
  const std::string host_;
  Outbox outbox_;
  beast::flat_buffer buffer_;
};

template <class Stream>
class FramedChannel final : public Channel, private rpc::detail::FrameSink {
 public:
  FramedChannel(Stream stream, const ClientOptions& options, ChannelEvents& events)
      : stream_(std::move(stream)),
        options_(options),
        outbox_(events),
        framer_(options.transport == Transport::lines ? Framing::lines : Framing::content_length,
                options.limits.max_message_bytes) {}

  void handshake(std::function<void(const boost::system::error_code&)> done) override {
    handshake_then_read(stream_, options_, [this] { read_next(); }, std::move(done));
  }

  void write(std::string text, std::uint64_t seq) override {
    std::string frame;
    rpc::detail::append_frame(frame, framer_.framing(), text);
    if (outbox_.push(std::move(frame), seq)) write_front();
  }

  void close() override {
    outbox_.closed = true;
    drop_connection(stream_);
  }

 private:
  static constexpr std::size_t kReadChunk = 16 * 1024;

  void write_front() {
    const std::string& frame = outbox_.front();
    asio::async_write(stream_, asio::buffer(frame), [this](const boost::system::error_code& error, std::size_t) {
      if (outbox_.written(error)) write_front();
    });
  }

  void read_next() {
    stream_.async_read_some(asio::buffer(chunk_), [this](const boost::system::error_code& error, std::size_t size) {
      if (outbox_.closed) return;
      if (error) {
        framer_.finish(*this);
        return outbox_.events.ended(error == asio::error::eof ? std::string("the server closed the connection")
                                                       : "reading failed: " + error.message());
      }
      framer_.feed(chunk_.data(), size, *this);
      if (framer_.failed()) return outbox_.events.ended(failure_);
      if (!failure_.empty()) return outbox_.events.ended(failure_);
      read_next();
    });
  }

  bool message(std::string_view text, std::string*) override {
    outbox_.events.reply(text);
    return true;
  }
  void too_large() override {
    failure_ = "a reply is larger than max_message_bytes (" + std::to_string(framer_.max_message_bytes()) + ")";
  }
  void bad_frame(const char* why) override { failure_ = std::string("the server's framing is broken: ") + why; }

  Stream stream_;
  const ClientOptions& options_;
  Outbox outbox_;
  rpc::detail::StreamFramer framer_;
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
