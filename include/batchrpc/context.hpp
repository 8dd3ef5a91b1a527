// SPDX-License-Identifier: MIT
/// @file context.hpp
/// `rpc::Context`: what a handler may know about the call it serves.
#pragma once

#include <stop_token>
#include <string_view>

#include "config.hpp"
#include "params.hpp"

namespace rpc::inline BATCHRPC_ABI {

class Peer;
class Router;
class Session;
namespace detail {
class Deferred;
struct ContextAccess;
struct ProgressSlice;

// Where a call comes from: the router, the session (if any), and the slot a Responder fills.
struct CallOrigin {
  const Router* router = nullptr;
  Session* session = nullptr;
  Deferred* deferred = nullptr;
  const Value* params = nullptr;  // the call's params; nullptr when absent
  // The params of the request the client sent, when the call runs inside another method (a
  // tool inside `tools/call`); nullptr: the same as `params`.
  const Value* request_params = nullptr;
  // Inside the batch tool: the operation's share of the batch's progress (see Progress).
  const ProgressSlice* progress_slice = nullptr;
};
}  // namespace detail

/// A request's `id` as the client sent it (JSON-RPC 2.0 §4).
struct RequestId {
  /// Which JSON type the id had; `none` marks a notification.
  enum class Kind : unsigned char { none, null, number, string };

  /// The id's type.
  Kind kind = Kind::none;
  /// For numbers, the JSON text exactly as sent (`1.0`, `-0`, `18446744073709551616`); for
  /// strings, the decoded UTF-8 text; empty otherwise.
  std::string_view text;

  /// True for a notification (no `id` member): nothing will be sent back.
  [[nodiscard]] bool is_notification() const noexcept { return kind == Kind::none; }
};

/**
 * Per-call information handed to handlers that take `rpc::Context&`.
 *
 * Valid only during the handler call (a `Responder` is what outlives it). Thread-safety: each
 * call has its own context. Its stop token may be copied and kept: it stays valid, and is
 * signalled only by this request's cancellation, however long it is kept.
 */
class Context {
 public:
  /// A context for `method` with `id`; `stop` signals cancellation.
  Context(std::string_view method, RequestId id, std::stop_token stop = {}) noexcept
      : method_(method), id_(id), stop_(std::move(stop)) {}

  /// The method name as called.
  [[nodiscard]] std::string_view method() const noexcept { return method_; }
  /// The request id (kind `none` for notifications).
  [[nodiscard]] const RequestId& id() const noexcept { return id_; }
  /// True when no reply will be sent.
  [[nodiscard]] bool is_notification() const noexcept { return id_.is_notification(); }
  /// Signalled when the request is cancelled; long handlers should poll or wait on it.
  [[nodiscard]] const std::stop_token& stop_token() const noexcept { return stop_; }
  /// Shorthand for `stop_token().stop_requested()`.
  [[nodiscard]] bool stop_requested() const noexcept { return stop_.stop_requested(); }
  /// The call's params as the client sent them, whatever the handler binds (MCP's
  /// `params._meta`, LSP's `workDoneToken`); absent for a context made by hand.
  [[nodiscard]] Params params() const noexcept { return Params(origin_.params); }
  /// The params of the JSON-RPC request the client sent: the same as `params()`, except for
  /// a method called as a tool through `tools/call`, where these are `tools/call`'s (with
  /// MCP's `_meta`) and `params()` are the tool's `arguments`.
  [[nodiscard]] Params request_params() const noexcept {
    return Params(origin_.request_params != nullptr ? origin_.request_params : origin_.params);
  }
  /// The router handling the call (nullptr for a context made by hand).
  [[nodiscard]] const Router* router() const noexcept { return origin_.router; }
  /// The session the message came through, or nullptr for `Router::handle` (trusted, in
  /// process: every capability is granted there).
  [[nodiscard]] Session* session() const noexcept { return origin_.session; }
  /// The way to this session's client, for progress, log messages and requests to it (see
  /// `rpc::Peer`; defined in session.hpp). With no session it has no client.
  [[nodiscard]] Peer peer() const;

 private:
  friend struct detail::ContextAccess;
  Context(std::string_view method, RequestId id, std::stop_token stop, detail::CallOrigin origin) noexcept
      : method_(method), id_(id), stop_(std::move(stop)), origin_(origin) {}

  std::string_view method_;
  RequestId id_;
  std::stop_token stop_;
  detail::CallOrigin origin_{};
};

namespace detail {
// What batchrpc itself sets and reads on a Context.
struct ContextAccess {
  static Context make(std::string_view method, RequestId id, std::stop_token stop, CallOrigin origin) noexcept {
    return Context(method, id, std::move(stop), origin);
  }
  // The slot a `rpc::Responder` parameter answers into.
  static Deferred* deferred(const Context& ctx) noexcept { return ctx.origin_.deferred; }
  static const ProgressSlice* progress_slice(const Context& ctx) noexcept { return ctx.origin_.progress_slice; }
};
}  // namespace detail

}  // namespace rpc
