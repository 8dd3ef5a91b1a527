// SPDX-License-Identifier: MIT
/// @file session.hpp
/// `rpc::Session`: one connection's view of a router (granted capabilities, requests in flight).
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "completion.hpp"
#include "config.hpp"
#include "context.hpp"
#include "detail/completion_ref.hpp"
#include "detail/peer_call.hpp"
#include "executor.hpp"
#include "json.hpp"
#include "peer.hpp"
#include "router.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
class SessionCore;
struct SessionAccess;
}

/// What a request cancelled through `Session::cancel` is answered.
enum class CancelledReply : unsigned char {
  /// `-32800 Request cancelled` (JSON-RPC's and LSP's way).
  error,
  /// Nothing at all: no response is sent for it (MCP's `notifications/cancelled`).
  none,
};

/// What a connection is allowed and where its handlers run.
struct SessionOptions {
  /// The capabilities granted to this connection; methods needing others answer `-32601`.
  std::vector<std::string> capabilities{};
  /// Where batch members and concurrent messages run; nullptr: inline, on the calling thread.
  /// The waiting `Session::handle(message)` runs members on the calling thread as well.
  Executor* executor = nullptr;
  /// Called with the id of a Response from the client that no request of the server's waits
  /// for (see `rpc::Peer`); it is dropped, never answered. Runs on the thread handing the
  /// message in, with no lock of the library's held; what it throws is dropped.
  std::function<void(const RequestId& id)> unmatched_response{};
};

/**
 * Per-connection state: the capabilities granted to the connection and the table of its
 * requests in flight, for cancellation (`notifications/cancel`, see builtins.hpp).
 *
 * A transport makes one per connection; many sessions share one router, which must outlive
 * them. Batching composes with gating and cancellation exactly as singletons do: a gated
 * method is `-32601` with `data.capability` in a batch too, and a cancel in a batch is applied
 * before the batch's other members start.
 *
 * Thread-safety: `handle`, `cancel` and the rest may be called from several threads at once,
 * and from the session's own handlers, stop callbacks and completions (none of them runs under
 * a lock of the session's). A completion runs on whichever thread finishes the message's last
 * member: the caller of `handle`, an executor thread, or a thread that answers a `Responder`.
 *
 * Lifetime: the router and the executor must outlive the session (a session whose executor has
 * been destroyed answers `-32093` instead of using it; the waiting `handle` runs that work on
 * the calling thread instead). Destruction cancels what is in flight
 * (requests not started yet are answered `-32800`, notifications not started yet are dropped),
 * answers `-32800` for requests still waiting on a `Responder`, a tool's inside `tools/call`
 * included (their Responders then refuse their answers quietly), waits for the handlers still
 * running, and returns once every message handed in has had its completion. It does not wait
 * for the executor to run or destroy tasks whose work is answered already (an event loop may
 * destroy its session between two turns): such a task does nothing when it comes round.
 * Messages its handlers and completions hand in meanwhile are treated the same way. It must
 * not run on one of the session's own handlers or completions, nor by destroying a completion
 * that owns the session, nor while a thread other than the session's handlers and completions
 * is inside `handle` (checked in debug builds where it can be).
 *
 * @code
 * rpc::ThreadPool pool{4};
 * rpc::Session session{router, {.capabilities = {"embed"}, .executor = &pool}};
 * session.handle(text, [&](std::optional<std::string_view> reply) { if (reply) write(*reply); });
 * @endcode
 */
class Session {
 public:
  /// A session on `router` (which must outlive it).
  BATCHRPC_DECL explicit Session(const Router& router, SessionOptions options = {});
  BATCHRPC_DECL ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /**
   * Handles one message and returns at once when handlers run elsewhere; `done` is called
   * exactly once, when the last member has completed, with the whole reply in request order.
   * With no executor and no `rpc::Responder` handlers, `done` is called before this returns,
   * unless a call of a coalesced method (`Router::coalesce`) had to queue: then `done` is called
   * by the thread that runs its group.
   * With no executor, a message whose handlers take neither an `rpc::Context` nor an
   * `rpc::Responder` (and need no capability, and are not batch-aware; in a batch, all but the
   * last call `inline_only`) is answered as `Router::handle` answers it, with nothing kept
   * past the call and no cancel able to reach it.
   * Never throws into the caller for bad input; a message past `Limits::max_inflight_bytes`
   * is answered `-32093` unparsed. An exception thrown by `done` is swallowed (it may run on
   * an executor or Responder thread with nobody to tell): handle your own failures inside it.
   */
  BATCHRPC_DECL void handle(std::string_view message, Completion done);

  /// The same, taking the message's text over instead of copying it: a transport that has
  /// read a message into a `std::string` of its own hands it in with `std::move`.
  template <class Text>
    requires std::same_as<Text, std::string>
  void handle(Text&& message, Completion done) {
    handle_owned(std::move(message), detail::take_completion(done));  // leaves `done` empty
  }

  /// The same with a completion of any other type that a `Completion` can hold (a lambda, a
  /// function), taking the text over when it is a `std::string` rvalue. A message answered
  /// before this returns (see above) calls `done` in place and makes no `Completion` of it,
  /// which saves a `std::function` per message; only a message whose reply comes later makes a
  /// `Completion` of it. As with a `Completion`, the session calls its own copy of an lvalue
  /// (made first, so a copy that throws leaves the message unhandled) and never changes the
  /// caller's object; an rvalue is used as it is, and moved in when kept.
  template <class Text, class Done>
    requires std::convertible_to<Text, std::string_view> &&
             (!std::same_as<std::remove_cvref_t<Done>, Completion>) &&
             std::invocable<std::decay_t<Done>&, std::optional<std::string_view>> &&
             std::constructible_from<Completion, Done>
  void handle(Text&& message, Done&& done) {
    if constexpr (std::is_lvalue_reference_v<Done> || std::is_function_v<std::remove_reference_t<Done>>) {
      std::decay_t<Done> own = done;  // a copy, as a Completion would hold; a function decays
      handle(std::forward<Text>(message), std::move(own));
    } else if constexpr (std::same_as<Text, std::string>) {
      handle_ref(message, &message, detail::CompletionRef::to(std::move(done)));
    } else {
      handle_ref(message, nullptr, detail::CompletionRef::to(std::move(done)));
    }
  }

  /// Handles one message and waits for its reply (`std::nullopt`: nothing to send). Do not
  /// call it from a handler of the same session when it has an executor: the wait can hold
  /// the thread the inner message needs (use `Router::handle`, or the tools of tools.hpp).
  ///
  /// With an executor, the calling thread does not wait idle: it runs the message's members
  /// beside the executor's threads, as one of the turns a batch is handed over in (one task
  /// fewer goes to the executor), and a single call runs on it alone, with no hand-over.
  /// Members of a turn the executor refuses or drops, or whose executor is gone, are then run
  /// by the calling thread, not answered `-32093`: a bounded executor's refusals do not hold
  /// back this overload. A batch-aware group still goes to the executor as one task (answered
  /// `-32093` if refused), and coalesced calls to their coalescer, as with a completion. Use
  /// the overload with a completion where handlers must run on the executor's threads only.
  /// Once its own turn ends, it looks for the reply for up to 20 µs before it sleeps: the
  /// members still running elsewhere usually end sooner than a wake-up takes.
  /// Throws `std::bad_alloc` when there is no memory for the returned copy of the reply (the
  /// message was handled).
  [[nodiscard]] std::optional<std::string> handle(std::string_view message) {
    return handle_and_wait(message, nullptr);
  }

  /// The same, taking the message's text over instead of copying it.
  template <class Text>
    requires std::same_as<Text, std::string>
  [[nodiscard]] std::optional<std::string> handle(Text&& message) {
    return handle_and_wait(message, &message);
  }

  /// True when the session is granted `capability` now.
  [[nodiscard]] BATCHRPC_DECL bool granted(std::string_view capability) const;
  /// The capabilities granted now, sorted.
  [[nodiscard]] BATCHRPC_DECL std::vector<std::string> capabilities() const;
  /// Grants `capability` from now on (after `initialize`, after authentication), to the
  /// messages handed in afterwards (a message's members are all checked before any runs).
  /// Any thread, also from a handler of this session.
  /// @throws std::invalid_argument for an empty name (a method with no capability needs none).
  BATCHRPC_DECL void grant(std::string_view capability);
  /// Takes `capability` back from now on; requests already running go on. @returns false
  /// when it was not granted.
  BATCHRPC_DECL bool revoke(std::string_view capability);
  /// The router this session serves.
  [[nodiscard]] BATCHRPC_DECL const Router& router() const;

  /**
   * Cancels every queued or running request of this session whose id equals `id` (a JSON
   * string or number; numbers compare by value, so `1` matches `1.0`). A queued request is
   * answered `-32800` at once; a running one sees its stop token signalled.
   *
   * Not reached from another message: a call run as its message is handed in (the session has
   * no executor, or the method is registered `inline_only`) whose handler takes neither an
   * `rpc::Context` nor an `rpc::Responder`, when only cheap calls (of `inline_only` methods
   * with such handlers) come before it in its message. It could not see a cancel and starts
   * within moments, so it is served as if the cancel came just after. A cancel in its own
   * message still applies to it before it starts.
   * With `CancelledReply::none` the cancelled requests get no response at all (MCP asks this
   * of `notifications/cancelled`); their handlers see the cancellation all the same.
   * @returns true when at least one request was cancelled.
   */
  BATCHRPC_DECL bool cancel(const Value& id, CancelledReply reply = CancelledReply::error);
  /// Waits until every message handed in so far has been answered and its completion has
  /// returned (a transport at end of input finishes what is in flight this way), however long
  /// its handlers and Responders take. Work still queued runs first, so do not call it from a
  /// handler, nor on the only thread that runs the executor's tasks, unless the work left is
  /// cancelled requests (answered at once, without waiting for their tasks).
  BATCHRPC_DECL void drain();
  /// Cancels every request in flight (as `cancel` does); returns how many.
  BATCHRPC_DECL std::size_t cancel_all();
  /// Requests with an id that are queued or running, and that a cancel can reach (see `cancel`).
  [[nodiscard]] BATCHRPC_DECL std::size_t in_flight() const;

  /// The way to this session's client, for the server's own notifications and requests (see
  /// `rpc::Peer`); a handle that stays safe to use after the session is gone.
  [[nodiscard]] BATCHRPC_DECL Peer peer() const;
  /// For transports: `send` writes the server's own messages to the client, each whole (see
  /// `rpc::Outbound`), from now on. Until a transport attaches, the session has no client to
  /// send to. The Response objects the client sends back are taken from the messages handed
  /// to `handle`, and never answered.
  BATCHRPC_DECL void attach(Outbound send);
  /// For transports, when the connection ends: nothing more is sent, and the server's
  /// requests still waiting are answered `-32094`. The destructor does it too.
  BATCHRPC_DECL void detach();
  /// For transports whose input has ended while output goes on (a stream at end of input):
  /// the client can answer nothing more, so the server's requests still waiting are answered
  /// `-32094`, and new ones at once; notifications still go out until `detach`. A later
  /// `attach` lifts it.
  BATCHRPC_DECL void end_input();

 private:
  BATCHRPC_DECL void handle_owned(std::string&& message, Completion done);
  BATCHRPC_DECL void handle_ref(std::string_view message, std::string* owned,
                                detail::CompletionRef done);
  BATCHRPC_DECL std::optional<std::string> handle_and_wait(std::string_view message, std::string* owned);

  friend struct detail::SessionAccess;
  std::unique_ptr<detail::SessionCore> core_;
};

/// The way to the client of the session the call came through; a `Peer` with no client for
/// `Router::handle`.
inline Peer Context::peer() const {
  if (origin_.session == nullptr) return Peer();
  Peer peer = origin_.session->peer();
  peer.call_ = detail::call_key(id_);  // its messages belong to this call
  return peer;
}

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/session.ipp"
#include "impl/coalescer.ipp"
#endif
