// SPDX-License-Identifier: MIT
/// @file router.hpp
/// `rpc::Router`: JSON-RPC 2.0 messages (singletons and batches) in, replies out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "batch_call.hpp"
#include "buffer.hpp"
#include "coalescing.hpp"
#include "config.hpp"
#include "context.hpp"
#include "error.hpp"
#include "handler.hpp"
#include "limits.hpp"
#include "method_options.hpp"
#include "names.hpp"
#include "detail/bound_member.hpp"
#include "detail/compile_errors.hpp"
#include "detail/inflight.hpp"
#include "detail/method_table.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
struct Workspace;
struct Request;
struct ParsedRequest;
struct RouterAccess;
}  // namespace detail

/// Called with the method name and the exception when a handler throws anything other than
/// `rpc::Error` (answered `-32603`), and when a session's executor refuses a task (answered
/// `-32093`, or run by the thread in a waiting `Session::handle` instead). May be called from
/// many threads at once, never under a library lock; what it throws is ignored.
using ExceptionHook = std::function<void(std::string_view method, std::exception_ptr error)>;

/// How a router behaves beyond its methods.
struct RouterOptions {
  /// Bounds on messages and replies.
  Limits limits{};
  /// Send the text of unexpected handler exceptions to clients as `data.exception`. Off by
  /// default: exception text can leak internals.
  bool expose_exception_text = false;
  /// Sees every unexpected handler exception (for logging).
  ExceptionHook on_exception{};
};

/**
 * Routes JSON-RPC 2.0 messages to registered handlers: text in, reply text (or nothing) out.
 *
 * Register methods with `add`, then call `handle` from any number of threads: after
 * registration the router is immutable and `handle` is safe to call concurrently. Every rule
 * of JSON-RPC 2.0 applies (see the README's behaviour table): batches are answered in request
 * order with one response per member that has an id; notifications are never answered; invalid
 * JSON, invalid UTF-8 and trailing garbage are `-32700`; invalid requests `-32600`; ids are
 * echoed exactly as sent; each `Limits` bound is answered with its own error.
 *
 * Thread-safety: `add`, `add_batched` and `describe_capability` only before the first message
 * (checked in debug builds); then anything, from any number of threads. Handlers run on the
 * thread that calls `handle` (or a session's executor) and may call `handle` again, on this
 * router or another. Lifetime: must outlive every session made on it; movable, not copyable.
 *
 * @code
 * rpc::Router router;
 * router.add("subtract", [](int a, int b) { return a - b; }, rpc::names("minuend", "subtrahend"));
 * auto reply = router.handle(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})");
 * // *reply == R"({"jsonrpc":"2.0","id":1,"result":19})"
 * @endcode
 */
class Router {
 public:
  /// A router with default limits and options.
  BATCHRPC_DECL Router();
  /// A router with the given limits.
  BATCHRPC_DECL explicit Router(const Limits& limits);
  /// A router with the given options.
  BATCHRPC_DECL explicit Router(RouterOptions options);

  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;
  BATCHRPC_DECL Router(Router&&) noexcept;
  BATCHRPC_DECL Router& operator=(Router&&) noexcept;
  BATCHRPC_DECL ~Router();

  /**
   * Registers `handler` as method `name`, its params bound by position only.
   * See handler.hpp for what a handler may take and return; misuse is a compile error that says
   * what to write instead.
   * @throws std::invalid_argument if `name` is empty, starts with "rpc." (reserved by
   *         JSON-RPC 2.0 §4) or is already registered.
   * Not thread-safe: register everything before the first `handle`.
   */
  template <class F>
  Router& add(std::string_view name, F&& handler, MethodOptions options = {}) {
    return add(name, std::forward<F>(handler), Names<0>{}, std::move(options));
  }

  /**
   * Registers `handler` as method `name`, its params bound by position or by the given names.
   * @code
   * router.add("greet", [](std::string name, std::optional<std::string> title) {
   *   return (title ? *title + " " : std::string()) + name;
   * }, rpc::names("name", "title"));
   * @endcode
   */
  template <class F, std::size_t N>
  Router& add(std::string_view name, F&& handler, const Names<N>& param_names,
              MethodOptions options = {}) {
    detail::WaitingCall waits = nullptr;
    if constexpr (detail::handler_answers_later<std::decay_t<F>, N>()) waits = &Router::call_and_wait;
    add_method(name, detail::make_handler<N>(std::forward<F>(handler), param_names), std::move(options), waits);
    return *this;
  }

  /**
   * Registers member function `method`, called on `object`, as method `name`; its params bind
   * as a handler's do (handler.hpp), by position or by `param_names` when given:
   * @code
   * router.add("add", &Calc::add, calc);                          // object by reference
   * router.add("add", &Calc::add, &calc, rpc::names("a", "b"));   // or by pointer
   * @endcode
   * Lifetime: the router keeps a pointer to `object`, which must outlive it. `method` is called
   * from many threads at once, like any handler; a non-const member function must make that
   * safe itself.
   * @throws std::invalid_argument as `add`, or if `object` is a null pointer.
   */
  template <class M, class Object>
    requires detail::is_member_function_v<M> && (!detail::is_names_v<Object>) &&
             (!std::is_same_v<std::remove_cvref_t<Object>, MethodOptions>)
  Router& add(std::string_view name, M method, Object&& object, MethodOptions options = {}) {
    return add(name, detail::bind_member(method, std::forward<Object>(object)), Names<0>{},
               std::move(options));
  }
  /// As above, its params also bound by name.
  template <class M, class Object, std::size_t N>
    requires detail::is_member_function_v<M> && (!detail::is_names_v<Object>)
  Router& add(std::string_view name, M method, Object&& object, const Names<N>& param_names,
              MethodOptions options = {}) {
    return add(name, detail::bind_member(method, std::forward<Object>(object)), param_names,
               std::move(options));
  }

  /**
   * Registers `handler` as method `name`, answering its calls in groups (batch-aware dispatch):
   * all calls of `name` in one JSON-RPC batch that passed validation, capability gating and
   * cancellation-before-start are handed to one `handler` call, each call with its own params,
   * context and result writer. A singleton, or a batch's only call of `name`, is a group of one.
   *
   * Each call's reply is written exactly as a handler's would be (same envelope, same limits),
   * in request order. Answer each call by writing one value into `call.result()` or with
   * `call.reject(error)`; an `rpc::Error` escaping `handler` answers every call not yet
   * rejected with it, any other exception `-32603`. On a session with an executor the group runs
   * as one task (unless `options.inline_only`), beside the batch's other members.
   *
   * @code
   * router.add_batched("embed", [&model](std::span<rpc::BatchCall> calls) {
   *   // read every call's params, compute all texts at once, write each call's result
   * }, {.capability = "embed"});
   * @endcode
   * @throws std::invalid_argument as `add`.
   * Not thread-safe: register everything before the first `handle`. `handler` is called from
   * many threads at once.
   */
  template <class F>
  Router& add_batched(std::string_view name, F&& handler, MethodOptions options = {}) {
    constexpr bool callable = std::is_invocable_v<const std::decay_t<F>&, std::span<BatchCall>>;
    if constexpr (!callable) {
      [[maybe_unused]] detail::batch_handler_is_not_callable_as_const_with_a_span<F> error;
    }
    static_assert(callable,
                  "batchrpc: a batch handler is called as const with std::span<rpc::BatchCall>; "
                  "take `std::span<rpc::BatchCall> calls` and drop `mutable`.");
    if constexpr (callable) {  // else the errors above are the only ones
      add_batched_method(name, BatchHandler(std::forward<F>(handler)), std::move(options));
      answer_grouped_ = &Router::answer_grouped;
    }
    return *this;
  }

  /**
   * Turns on dynamic batching for `name`, a method registered with `add_batched`: its calls
   * from different messages and sessions of this router are answered together, as one group,
   * when they meet while another group of it runs (see `rpc::Coalescing` for when a group
   * starts). Each call still gets exactly its own reply, with gating and cancellation applied
   * per call: a call cancelled while queued is answered `-32800` at once and never runs.
   * `Router::handle` (no session) groups within one message only.
   * @code
   * router.coalesce("embed", {.max_wait = std::chrono::microseconds(500), .max_group = 128});
   * @endcode
   * Lifetime: the router owns `settings.max_concurrent_groups` batcher threads per coalesced
   * method, started when a call first has to queue, and joined by the router's destructor after
   * they have run what is queued (the sessions must end first, as always; never destroy the
   * router from a handler). Queued groups run on those threads, not on a session's executor.
   * @throws std::invalid_argument if `name` is not a method registered with `add_batched`,
   * `settings.max_wait` or `settings.max_quiet` is negative, or `settings.max_group` or
   * `settings.max_concurrent_groups` is 0.
   * Not thread-safe: call before the first `handle`.
   */
  BATCHRPC_DECL Router& coalesce(std::string_view name, Coalescing settings = {});

  /// True when `name` is registered.
  [[nodiscard]] bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// The options `name` was registered with, or nullptr.
  [[nodiscard]] const MethodOptions* options_of(std::string_view name) const {
    const detail::Method* m = find(name);
    return m == nullptr ? nullptr : &m->options;
  }
  /// The router's options.
  [[nodiscard]] const RouterOptions& options() const noexcept { return options_; }

  /**
   * Describes a capability for `info`: `settings` (a JSON object) is reported to sessions
   * granted `name`. Capabilities named by methods need no description (they report `{}`).
   * Not thread-safe: call before the first `handle`.
   */
  BATCHRPC_DECL Router& describe_capability(std::string_view name, Json settings);
  /// Every capability a method requires or `describe_capability` named, sorted.
  [[nodiscard]] BATCHRPC_DECL std::vector<std::string> capabilities() const;
  /// The settings `describe_capability` gave `name` (empty when none).
  [[nodiscard]] BATCHRPC_DECL const Json& capability_settings(std::string_view name) const;
  /// The limits this router enforces.
  [[nodiscard]] const Limits& limits() const noexcept { return options_.limits; }

  /**
   * Handles one message (a Request, a Notification or a batch).
   * @returns the reply text, or `std::nullopt` when nothing must be sent (notifications only).
   * Never throws; thread-safe.
   */
  [[nodiscard]] BATCHRPC_DECL std::optional<std::string> handle(std::string_view message) const;

  /**
   * Handles one message, writing the reply into `reply` (cleared first), which keeps its
   * capacity between calls.
   * @returns true when `reply` holds something to send.
   */
  [[nodiscard]] BATCHRPC_DECL bool handle(std::string_view message, Buffer& reply) const;

  /**
   * Zero-copy variant: parses `message` in place (its content is destroyed) and writes the reply
   * into `reply`. Strings in params are views into `message` during the handler calls.
   * @returns true when `reply` holds something to send.
   */
  [[nodiscard]] BATCHRPC_DECL bool handle_insitu(std::string& message, Buffer& reply) const;

  /**
   * Zero-copy variant on a raw buffer: `message` holds the message followed by one NUL byte
   * (which is not part of it). Its content is destroyed.
   * @throws std::invalid_argument if `message` does not end with a NUL byte.
   */
  [[nodiscard]] BATCHRPC_DECL bool handle_insitu(std::span<char> message, Buffer& reply) const;

 private:
  friend struct detail::RouterAccess;
  [[nodiscard]] const detail::Method* find(std::string_view name) const noexcept {
    return methods_.find(name);
  }
  // Registration's non-template part: the handler is built in the caller's file, the rest here.
  BATCHRPC_DECL void add_method(std::string_view name, detail::HandlerPtr handler,
                                MethodOptions options, detail::WaitingCall waits);
  BATCHRPC_DECL void add_batched_method(std::string_view name, BatchHandler handler, MethodOptions options);
  BATCHRPC_DECL void add_method(std::string_view name, detail::Method method);
  BATCHRPC_DECL bool handle_copy(std::string_view message, detail::Workspace& ws, Buffer& out) const;
  BATCHRPC_DECL bool process(char* text, std::size_t size, detail::Workspace& ws, Buffer& out) const;
  BATCHRPC_DECL bool dispatch(const detail::ParsedRequest& member, detail::Workspace& ws,
                              Buffer& out) const;
  // The same with its method looked up already (null: none of that name).
  BATCHRPC_DECL bool dispatch(const detail::ParsedRequest& member, const detail::Method* method,
                              detail::Workspace& ws, Buffer& out) const;
  // Answers a parsed message whose members' methods are looked up already (`methods`, one per
  // member) and which holds no call of a batched method; false when nothing is to be sent.
  BATCHRPC_DECL bool answer_resolved(std::span<const detail::ParsedRequest> members, bool batch,
                                     std::span<const detail::Method* const> methods,
                                     detail::Workspace& ws, Buffer& out) const noexcept;
  // A handler's call answered through a Responder, waited for (detail::WaitingCall).
  BATCHRPC_DECL static void call_and_wait(const Router& router, const detail::Method& method,
                                          const detail::Request& request, detail::Workspace& ws,
                                          Buffer& out);
  // Answers a batch of more than one member when batch handlers are registered: their calls
  // first, one handler call per method, then every response in request order.
  BATCHRPC_DECL bool answer_grouped(std::span<const detail::ParsedRequest> members,
                                    detail::Workspace& ws, Buffer& out) const;
  BATCHRPC_DECL bool run_groups(std::span<const detail::ParsedRequest> batch,
                                detail::Workspace& ws) const;
  BATCHRPC_DECL bool write_grouped(const detail::Request& request, std::size_t slot,
                                   detail::Workspace& ws, Buffer& out) const;
  BATCHRPC_DECL bool handle_safely(char* text, std::size_t size, detail::Workspace& ws,
                                   Buffer& out) const noexcept;

  detail::MethodTable methods_;
  std::map<std::string, Json, std::less<>> capability_settings_;
  RouterOptions options_;
  // The batch-handler path, reached through a pointer that `add_batched` sets: a header-only
  // build then compiles it only in files that register a batch handler (the Responder path is
  // reached in the same way, through its method's WaitingCall).
  bool (Router::*answer_grouped_)(std::span<const detail::ParsedRequest>, detail::Workspace&,
                                  Buffer&) const = nullptr;
  // Shared with its sessions at run time (bytes in progress, whether it serves yet).
  std::unique_ptr<detail::RouterRuntime> runtime_ = std::make_unique<detail::RouterRuntime>();
};

namespace detail {
// Lets sessions reach a router's shared counters without making them part of the public API.
struct RouterAccess {
  static RouterRuntime& runtime(const Router& r) noexcept { return *r.runtime_; }
  static const Method* find(const Router& r, std::string_view name) noexcept { return r.find(name); }
  // Router::answer_resolved: how a session answers a message its own thread can answer whole.
  static bool answer_resolved(const Router& r, std::span<const ParsedRequest> members, bool batch,
                              std::span<const Method* const> methods, Workspace& ws, Buffer& out) noexcept {
    return r.answer_resolved(members, batch, methods, ws, out);
  }
  // Makes `name` run before a batch's other members (registration time only).
  static void run_first(Router& r, std::string_view name) noexcept {
    if (Method* m = r.methods_.find(name)) m->runs_first = true;
  }
};
}  // namespace detail

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/router.ipp"
#endif
