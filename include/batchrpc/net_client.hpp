// SPDX-License-Identifier: MIT
/// @file net_client.hpp
/// `rpc::net::Client`: an asynchronous JSON-RPC client over HTTP/1.1, WebSocket and framed
/// TCP or Unix-domain streams, with or without TLS, on Boost.Asio and Boost.Beast (link
/// `batchrpc::net`, as for the server).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <string_view>

#include "client.hpp"
#include "config.hpp"
#include "detail/chrono.hpp"
#include "limits.hpp"

namespace boost::asio::ssl {
class context;
}

namespace rpc::inline BATCHRPC_ABI::net {

namespace detail {
class ClientCore;
}

/// What a `net::Client` speaks.
enum class Transport {
  /// HTTP/1.1 `POST` on one keep-alive connection; messages are pipelined and answered in order.
  http,
  /// WebSocket: each message one text message; replies matched to messages by their ids.
  websocket,
  /// A byte stream with one message per line; replies matched by their ids.
  lines,
  /// A byte stream with `Content-Length:` framing; replies matched by their ids.
  content_length,
};

/// Settings of a `net::Client`.
struct ClientOptions {
  /// What the connection speaks.
  Transport transport = Transport::http;
  /// HTTP and WebSocket: the request target (path).
  std::string target = "/";
  /// HTTP and WebSocket: the `Host` header; empty: the address connected to.
  std::string host{};
  /// A message with no reply within this fails (its `Replies` name the timeout in `problems()`).
  std::chrono::milliseconds timeout{30'000};
  /// `connect` gives up after this (TLS and WebSocket handshakes included).
  std::chrono::milliseconds connect_timeout{10'000};
  /// Bounds on a reply: `max_message_bytes` (a larger one closes the connection) and `max_depth`.
  Limits limits{};
  /// TLS when not null: the context (with the verification the caller chose) must outlive
  /// the client. Needs OpenSSL where the client is compiled, as for the server.
  boost::asio::ssl::context* tls = nullptr;
  /// TLS: the server name sent (SNI) and, when the context verifies peers, checked against
  /// the certificate. Empty: none sent, not checked.
  std::string tls_server_name{};
  /// WebSocket and streams: each message the server sends of its own (a notification such as
  /// progress or a log, or a request of its own), as its JSON text, on the I/O thread (see
  /// the class comment). It is no reply, so it fails nothing in flight. The client serves no
  /// methods: it answers each such request `-32601` itself, so the server does not wait.
  std::function<void(std::string_view message)> on_server_message{};
};

/**
 * A JSON-RPC 2.0 client on one connection, with a thread of its own for I/O.
 *
 * `send` writes a message built with `rpc::BatchBuilder` and returns at once; the reply comes
 * as `rpc::Replies` (see `rpc::correlate`), to a callback or through a `std::future`. Messages
 * may be sent while others are in flight: HTTP pipelines them on its connection (replies in
 * order); WebSocket and streams match replies to messages by id, so the ids of messages in
 * flight together must differ: make builders with `batch()`, whose ids the client never
 * hands out twice. A message with requests whose ids are in flight already is refused
 * (`std::invalid_argument`); so is one reusing the ids of a message that timed out until its
 * late reply has come (the server is still at work on it). A message of notifications only completes once written. A
 * reply that names no id (the server refused a whole message: not JSON, too large, too long
 * a batch) is matched on HTTP; on WebSocket and streams it is given to the message sent
 * since the last reply if there is just one, and otherwise dropped (either of two messages
 * may be the one refused), so that message fails at its timeout.
 *
 * Failures never throw from `send`: a message that cannot be sent, times out, or whose
 * connection ends first completes with every id missing and the reason in `problems()`. The
 * client does not reconnect; once the connection has ended, every `send` fails that way.
 *
 * @code
 * rpc::net::Client client{{.transport = rpc::net::Transport::websocket}};
 * client.connect("127.0.0.1", port);
 * rpc::BatchBuilder batch = client.batch();
 * const auto sum = batch.call("add", rpc::positional(2, 3));
 * const rpc::Replies replies = client.send(std::move(batch)).get();
 * int five = replies.result<int>(sum);
 * @endcode
 *
 * Threads and lifetimes. Every member may be called from any thread. Callbacks run on the
 * client's I/O thread, one at a time, with no lock of the client's held: they may `send`
 * (while the client is being destroyed, that send fails at once with "the client was
 * destroyed"), but must not wait on another reply of this client (nothing else is read
 * meanwhile) nor destroy it. An exception a callback throws is dropped; the client goes on. The destructor closes the connection, completes what is in flight with a
 * failure, and joins the I/O thread; it must not run on that thread (from a callback).
 */
class Client {
 public:
  /// A client that is not connected yet.
  BATCHRPC_DECL explicit Client(ClientOptions options = {});
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  /// Closes (see `close`) and joins the I/O thread.
  BATCHRPC_DECL ~Client();

  /// Connects to TCP `host`:`port` (an IP literal or a name to resolve) and completes the TLS
  /// and WebSocket handshakes; blocks until done. @throws std::runtime_error if it fails or
  /// takes longer than `connect_timeout`; std::logic_error if connected already.
  BATCHRPC_DECL void connect(const std::string& host, int port);
  /// Connects to the Unix-domain socket `path`. @throws as `connect`.
  BATCHRPC_DECL void connect_unix(const std::string& path);

  /// An empty builder whose ids were never handed out by this client (`always_batch`: its
  /// text is an array even for one item). A builder takes at most 2^20 requests.
  [[nodiscard]] BATCHRPC_DECL BatchBuilder batch(bool always_batch = false);

  /// Sends `batch`; `done` receives its replies on the I/O thread (see the class comment).
  /// @throws std::invalid_argument for an empty builder, or one whose ids are in flight.
  BATCHRPC_DECL void send(BatchBuilder batch, std::function<void(Replies)> done);
  /// Sends `batch`; the future holds its replies. @throws as the callback form.
  [[nodiscard]] BATCHRPC_DECL std::future<Replies> send(BatchBuilder batch);

  /// Closes the connection; what is in flight completes with a failure. Later sends fail.
  BATCHRPC_DECL void close();

 private:
  std::unique_ptr<detail::ClientCore> core_;
};

}  // namespace rpc::net

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/net_client.ipp"
#endif
