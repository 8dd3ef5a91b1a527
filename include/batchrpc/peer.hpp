// SPDX-License-Identifier: MIT
/// @file peer.hpp
/// `rpc::Peer`: a session's way to its client, for the server's own notifications and requests
/// (MCP, LSP), and `rpc::Reply`, the client's answer to one of those requests.
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "detail/chrono.hpp"
#include "detail/compile_errors.hpp"
#include "detail/read_result.hpp"
#include "error.hpp"
#include "json.hpp"
#include "json_traits.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
class PeerChannel;
struct PeerAccess;
}  // namespace detail

/**
 * How a transport sends the server's own messages to its client: called with one whole
 * message (a Request or a notification), returns false when it cannot be sent (the connection
 * has ended). May be called from any thread, several at once; the transport writes each
 * message whole, never inside a reply's bytes, in the order the calls are made on one thread.
 */
using Outbound = std::function<bool(std::string message)>;

/**
 * The client's answer to a request the server sent it with `Peer::request`: its result, or an
 * error. The error is the client's own, or one made here: `-32800` when the request was
 * cancelled with `Peer::cancel`, `-32094` (`ErrorCode::client_unavailable`) when there is no
 * channel to the client or the connection ended first, `-32095` (`ErrorCode::client_timeout`)
 * past the request's timeout, `-32092` when the request was larger than
 * `Limits::max_response_bytes`, `-32603` when the client's error object was malformed (the
 * object as its `data`).
 *
 * A plain value type; const access from many threads is safe.
 */
class Reply {
 public:
  /// A result (one JSON value).
  explicit Reply(Json result) : result_(std::move(result)) {}
  /// An error.
  explicit Reply(Error error) : error_(std::move(error)) {}

  /// True when the client answered with a result.
  [[nodiscard]] bool ok() const noexcept { return !error_.has_value(); }
  /// The result as JSON text; empty when the answer is an error.
  [[nodiscard]] const Json& result() const noexcept { return result_; }
  /// The error; nullptr when the answer is a result.
  [[nodiscard]] const Error* error() const noexcept { return error_ ? &*error_ : nullptr; }

  /**
   * The result, bound with `rpc::JsonTraits<T>::read`. T must own its data: a standard type
   * that does, a BATCHRPC_FIELDS struct whose fields do, or a type whose rpc::JsonTraits says
   * `static constexpr bool owns_its_data = true;`.
   * @throws rpc::Error (the answer's) when the answer is an error; std::invalid_argument when
   *         the result does not bind to `T`.
   */
  template <class T>
  [[nodiscard]] T as() const {
    detail::check_outlives_its_json<T>();
    if (error_) throw *error_;
    rapidjson::Document doc;
    doc.Parse(result_.text().data(), result_.text().size());  // valid: made from a parsed value
    return detail::read_result<T>(doc, [](const std::string& why) {
      throw std::invalid_argument("batchrpc: the client's result does not bind: " + why);
    });
  }

 private:
  Json result_;
  std::optional<Error> error_;
};

/// Receives the client's answer to one request (see `Peer::request` for where it runs).
using ReplyHandler = std::function<void(Reply)>;

/// Settings of one request to the client.
struct PeerRequestOptions {
  /// The longest wait for the client's answer: past it the request is answered `-32095`
  /// (`ErrorCode::client_timeout`), and a late Response is dropped as unmatched. Zero waits
  /// until the client answers or the connection ends, and so does a negative one or one too
  /// long for the clock (`std::chrono::milliseconds::max()`).
  std::chrono::milliseconds timeout{0};
};

/**
 * A handle on a session's client: `notify` and `request` send it the server's own messages,
 * and the client's Response objects, which the session takes from the messages handed to it
 * (singletons, or members of a batch, mixed with requests), are routed back by id.
 *
 * Ids: the server's requests carry string ids `"srv-1"`, `"srv-2"`, ... in the order made,
 * never reused within a session, and never mistaken for the client's own requests (a
 * Response has no `method`). A Response whose id names no waiting request (unknown, answered
 * already, or cancelled) is dropped and reported to `SessionOptions::unmatched_response`;
 * it is never answered.
 *
 * A Peer taken from a handler's `Context` belongs to that call, and so do its copies: a
 * transport with a stream per call (MCP Streamable HTTP) sends its messages on that call's.
 *
 * Lifetime: a copy may be kept anywhere for as long as wanted, beyond the session. Once the
 * session ends (or the transport detaches, at the end of its connection) every request still
 * waiting is answered `-32094`, `notify` returns false and `request` answers `-32094` at once.
 * A default-constructed `Peer` has no client.
 *
 * Thread-safety: any thread, at once, and from handlers and reply handlers. No reply handler
 * runs under a lock of the library's.
 */
class Peer {
 public:
  /// No client: `notify` returns false, `request` answers `-32094`.
  Peer() = default;

  /// True while a transport is attached to the session and it has not ended.
  [[nodiscard]] BATCHRPC_DECL bool connected() const;

  /// Sends a notification. `params` must be an array or an object, or empty for none.
  /// @returns false when it was not sent: no client, the connection ended, or the message
  /// is larger than `Limits::max_response_bytes`.
  /// @throws std::invalid_argument for params that are neither an array nor an object.
  BATCHRPC_DECL bool notify(std::string_view method, const Json& params = {}) const;

  /**
   * Sends a request; `done` receives the client's answer exactly once: on the thread that
   * hands the session the message holding the client's Response (a transport's reading
   * thread: keep it short, or hand the work on), or on the thread that cancels it, ends the
   * session or detaches the transport, or on the library's timer thread at its timeout, or,
   * when it cannot be sent at all, on this one before `request` returns. An exception `done`
   * throws is dropped.
   * @returns the request's id (`srv-N`), for `cancel` and for the protocol's own cancel
   * notification if the client should hear of it; empty when there is no client to send it
   * to (`done` has been answered `-32094` then, and no id is spent).
   * @throws std::invalid_argument for params that are neither an array nor an object.
   */
  BATCHRPC_DECL std::string request(std::string_view method, const Json& params, ReplyHandler done,
                                    PeerRequestOptions options = {}) const;

  /// The same without params: `peer.request("roots/list", [](rpc::Reply reply) { ... })`.
  template <class Done>
    requires std::is_invocable_v<Done&, Reply>
  std::string request(std::string_view method, Done&& done, PeerRequestOptions options = {}) const {
    return request(method, Json{}, ReplyHandler(std::forward<Done>(done)), options);
  }
  /// The same; the future holds the answer. Do not wait on it on the thread that reads the
  /// client's messages, which is the one that delivers the answer.
  [[nodiscard]] BATCHRPC_DECL std::future<Reply> request(std::string_view method, const Json& params = {},
                                                         PeerRequestOptions options = {}) const;

  /// Answers the waiting request `id` with `-32800` (Request cancelled) at once; its
  /// Response, if it comes, is then dropped as unmatched. Nothing is sent to the client.
  /// @returns false when no request with that id is waiting.
  BATCHRPC_DECL bool cancel(std::string_view id) const;

  /// Requests sent and not answered yet.
  [[nodiscard]] BATCHRPC_DECL std::size_t waiting() const;

 private:
  friend struct detail::PeerAccess;
  friend class Context;
  explicit Peer(std::shared_ptr<detail::PeerChannel> channel) : channel_(std::move(channel)) {}
  std::shared_ptr<detail::PeerChannel> channel_;
  // The request this handle was taken for (Context::peer; detail::call_key), or empty.
  std::string call_;
};

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/peer.ipp"
#endif
