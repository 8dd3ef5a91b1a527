// SPDX-License-Identifier: MIT
// A listening socket of a net::Server (TCP or Unix-domain): accepts, admits or refuses, and
// hands each connection to the connection type of its protocol.
#pragma once

#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "../../config.hpp"
#include "../../framing.hpp"
#include "../../net_options.hpp"
#include "http_connection.hpp"
#include "hub.hpp"
#include "stream_connection.hpp"

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
  Listener(asio::io_context& io, Hub& hub, Protocol protocol, const typename Transport::endpoint& endpoint)
      : io_(io), hub_(hub), protocol_(protocol), acceptor_(asio::make_strand(io)), retry_(acceptor_.get_executor()) {
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
    acceptor_.async_accept(asio::make_strand(io_), [self = this->shared_from_this()](
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
    if (protocol_ == Protocol::http) {
      auto connection = std::make_shared<HttpConnection<Socket>>(hub_, std::move(socket), !served);
      hub_.add(*connection, connection, served);
      connection->start();
      return;
    }
    const Framing framing = protocol_ == Protocol::lines ? Framing::lines : Framing::content_length;
    auto connection = std::make_shared<StreamConnection<Socket>>(hub_, std::move(socket), framing);
    hub_.add(*connection, connection, served);
    if (served) {
      connection->start();
    } else {
      connection->refuse();
    }
  }

  asio::io_context& io_;
  Hub& hub_;
  Protocol protocol_;
  typename Transport::acceptor acceptor_;
  asio::steady_timer retry_;
};

}  // namespace rpc::net::detail
