// SPDX-License-Identifier: MIT
// A listening socket of a net::Server (TCP or Unix-domain): accepts, admits or refuses, and
// hands each connection to the connection type of its protocol.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#if defined(BATCHRPC_NET_TLS)
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#endif

#include "../../config.hpp"
#include "../../framing.hpp"
#include "../../net_options.hpp"
#include "../chrono.hpp"
#include "http_connection.hpp"
#include "hub.hpp"
#include "io_pool.hpp"
#include "stream_connection.hpp"

namespace boost::asio::ssl {
class context;
}

namespace rpc::inline BATCHRPC_ABI::net::detail {

class Listening {
 public:
  virtual ~Listening() = default;
  // Begins accepting (posted; returns at once).
  virtual void start() = 0;
  // Stops accepting (posted to the acceptor's strand; returns at once).
  virtual void post_close() = 0;
};

// Lifetime: owned by the server and by its pending accept; the acceptor lives on a strand.
template <class Transport>
class Listener final : public Listening, public std::enable_shared_from_this<Listener<Transport>> {
 public:
  using Socket = typename Transport::socket;

  // Binds and listens now. @throws boost::system::system_error if it cannot.
  // With `tls` (not null), every connection begins with a TLS handshake.
  Listener(IoPool& io, Hub& hub, Protocol protocol, const typename Transport::endpoint& endpoint,
           asio::ssl::context* tls)
      : io_(io),
        hub_(hub),
        protocol_(protocol),
        tls_(tls),
        acceptor_(asio::make_strand(io.first())),
        retry_(acceptor_.get_executor()) {
    acceptor_.open(endpoint.protocol());
    if constexpr (std::is_same_v<Transport, asio::ip::tcp>) {
      acceptor_.set_option(asio::socket_base::reuse_address(true));
    }
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  [[nodiscard]] typename Transport::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  void start() override {
    asio::post(acceptor_.get_executor(), [self = this->shared_from_this()] { self->accept_next(); });
  }

  void post_close() override {
    asio::post(acceptor_.get_executor(), [self = this->shared_from_this()] {
      boost::system::error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_.cancel();
    });
  }

 private:
  void accept_next() {
    if (!acceptor_.is_open()) return;
    acceptor_.async_accept(asio::make_strand(io_.next()), [self = this->shared_from_this()](
                                                       const boost::system::error_code& error, Socket socket) {
      self->accepted(error, std::move(socket));
    });
  }

  void accepted(const boost::system::error_code& error, Socket socket) {
    if (!acceptor_.is_open()) return;
    if (error) {  // out of file descriptors, say: try again shortly rather than spin
      retry_.expires_after(std::chrono::milliseconds(50));
      retry_.async_wait([self = this->shared_from_this()](const boost::system::error_code& e) {
        if (!e) self->accept_next();
      });
      return;
    }
    serve(std::move(socket));
    accept_next();
  }

  void serve(Socket socket) {
    if constexpr (std::is_same_v<Transport, asio::ip::tcp>) {
      boost::system::error_code ignored;
      socket.set_option(asio::ip::tcp::no_delay(true), ignored);  // replies are whole messages
    }
    const Hub::Admission admission = hub_.admit();
    if (admission == Hub::Admission::drop) return close_socket(socket);
    const bool served = admission == Hub::Admission::serve;
#if defined(BATCHRPC_NET_TLS)
    if (tls_ != nullptr) {  // on the connection's strand, as everything that touches its socket
      const auto strand = socket.get_executor();
      asio::post(strand, [self = this->shared_from_this(), socket = std::move(socket), served]() mutable {
        self->handshake(std::move(socket), served);
      });
      return;
    }
#endif
    open(std::move(socket), served);
  }

#if defined(BATCHRPC_NET_TLS)
  // A TLS handshake in progress, registered as a connection so that a shutdown closes it at
  // once: it has nothing to finish, so every phase closes its socket. Its count is the
  // admission's, given back when it ends (`Hub::remove`, from the destructor) or handed to the
  // connection that opens over it. Lives on the socket's strand; owned by its pending handshake
  // and, for a moment, by a shutdown phase.
  struct Handshake final : Connection, std::enable_shared_from_this<Handshake> {
    Handshake(Hub& owner, Socket socket, asio::ssl::context& tls)
        : hub(owner), strand(socket.get_executor()), stream(std::move(socket), tls), deadline(strand) {}
    ~Handshake() override { hub.remove(*this); }
    Handshake(const Handshake&) = delete;
    Handshake& operator=(const Handshake&) = delete;

    void post_drain() override { post_close(); }
    void post_cancel() override { post_close(); }
    void post_close() override {
      asio::post(strand, [self = this->shared_from_this()] {
        if (!self->handed_over) close_socket(self->stream);
      });
    }

    Hub& hub;
    asio::any_io_executor strand;  // taken from the socket before `stream` takes the socket
    asio::ssl::stream<Socket> stream;
    asio::steady_timer deadline;  // the request deadline: a client that stalls is closed
    bool handed_over = false;     // the stream has moved to its connection
  };

  // The TLS handshake, within the request deadline; then the connection opens over it.
  void handshake(Socket socket, bool served) {
    auto pending = std::make_shared<Handshake>(hub_, std::move(socket), *tls_);
    if (!hub_.add(*pending, pending, served)) return close_socket(pending->stream);  // closing
    pending->deadline.expires_after(hub_.options.request_timeout);
    pending->deadline.async_wait([weak = std::weak_ptr<Handshake>(pending)](const boost::system::error_code& error) {
      if (auto held = weak.lock(); held && !error) close_socket(held->stream);
    });
    pending->stream.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this(), pending,
                                                                      served](const boost::system::error_code& error) {
      pending->deadline.cancel();
      if (error) return;  // the Handshake's destructor uncounts it
      self->hub_.hand_over(*pending);
      pending->handed_over = true;
      self->open(std::move(pending->stream), served);
    });
  }
#endif

  // Registers the connection, then starts it on its own strand: once registered, a shutdown
  // may post to that strand at any moment, and its socket must be touched there only (here is
  // the acceptor's strand, on another thread). One the shutdown came too late to see is
  // dropped, and its socket closed.
  template <class Stream>
  void open(Stream stream, bool served) {
    const auto strand = stream.get_executor();
    if (protocol_ == Protocol::http || protocol_ == Protocol::mcp) {
      auto connection =
          std::make_shared<HttpConnection<Stream>>(hub_, std::move(stream), !served, protocol_ == Protocol::mcp);
      if (hub_.add(*connection, connection, served)) asio::post(strand, [connection] { connection->start(); });
      return;
    }
    const Framing framing = protocol_ == Protocol::lines ? Framing::lines : Framing::content_length;
    auto connection = std::make_shared<StreamConnection<Stream>>(hub_, std::move(stream), framing);
    if (!hub_.add(*connection, connection, served)) return;
    asio::post(strand, [connection, served] { served ? connection->start() : connection->refuse(); });
  }

  IoPool& io_;  // each connection goes to the next of its contexts
  Hub& hub_;
  Protocol protocol_;
  asio::ssl::context* tls_;  // not null: TLS on every connection
  typename Transport::acceptor acceptor_;
  asio::steady_timer retry_;
};

}  // namespace rpc::net::detail
