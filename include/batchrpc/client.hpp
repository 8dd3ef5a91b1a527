// SPDX-License-Identifier: MIT
/// @file client.hpp
/// Client side, transport-agnostic: build a request message with `rpc::BatchBuilder`, match the
/// reply to it with `rpc::correlate`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "buffer.hpp"
#include "config.hpp"
#include "detail/compile_errors.hpp"
#include "detail/read_result.hpp"
#include "error.hpp"
#include "json.hpp"
#include "json_traits.hpp"
#include "limits.hpp"
#include "result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI {

class BatchBuilder;
class Replies;

namespace detail {
struct ReplyDocument;
// Replies in which nothing arrived because the transport failed: every id missing and
// `problem` in problems() (so complete() is false, notifications only included).
BATCHRPC_DECL Replies failed_replies(const BatchBuilder& batch, std::string problem);

// A string literal decays to `char*` or `const char*`; both are written as a string.
template <class T>
using ParamType =
    std::conditional_t<std::is_same_v<std::decay_t<T>, char*>, const char*, std::decay_t<T>>;

// ResultWriter refuses NaN and invalid UTF-8 with std::logic_error; for params that is a bad
// argument, so it becomes std::invalid_argument (itself a std::logic_error).
template <class F>
Json write_params(F&& write) {
  try {
    return write_json(write);
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::logic_error& e) {
    throw std::invalid_argument(e.what());
  }
}

template <class T>
void write_param(ResultWriter& w, const T& value) {
  w.write<ParamType<T>>(value);
}

template <class T>
struct has_no_json_form : std::bool_constant<!JsonWritable<ParamType<T>>> {};

inline void write_named(ResultWriter&, std::vector<std::string_view>&) {}

template <class N, class V, class... Rest>
void write_named(ResultWriter& w, std::vector<std::string_view>& seen, const N& name,
                 const V& value, const Rest&... rest) {
  if constexpr (!std::is_convertible_v<const N&, std::string_view>) {
    [[maybe_unused]] param_name_is_not_a_string<N> error;
  }
  static_assert(std::is_convertible_v<const N&, std::string_view>,
                "batchrpc: rpc::named takes name/value pairs and every name must be a string: "
                "write rpc::named(\"a\", 1, \"b\", \"x\")");
  const std::string_view key = name;
  for (const std::string_view earlier : seen) {
    if (earlier == key) {
      throw std::invalid_argument("rpc::named: the name \"" + std::string(key) +
                                  "\" is given twice");
    }
  }
  seen.push_back(key);
  w.key(key);
  write_param(w, value);
  write_named(w, seen, rest...);
}

// The outcome of one request id: how many responses named it, and the first one.
struct Outcome {
  std::size_t responses = 0;
  const Value* result = nullptr;  // into the ReplyDocument; null when absent or an error
  std::optional<Error> error;
};
}  // namespace detail

/**
 * Positional params (JSON-RPC 2.0 §4.2): a JSON array of the given values, in order.
 * Any type with `rpc::JsonTraits<T>::write` works (see json_traits.hpp), string literals too.
 *
 * @code
 * batch.call("subtract", rpc::positional(42, 23));  // "params":[42,23]
 * @endcode
 * @throws std::invalid_argument if a value has no JSON form (NaN, infinity, invalid UTF-8).
 */
template <class... T>
[[nodiscard]] Json positional(const T&... values) {
  if constexpr (!(JsonWritable<detail::ParamType<T>> && ...)) {
    using Unwritable = detail::ParamType<typename detail::first_type_where<detail::has_no_json_form, T...>::type>;
    using Part = detail::unwritable_part_t<Unwritable>;
    if constexpr (detail::write_misdeclared<Part>) {
      detail::refuse_misdeclared_write<Part, Unwritable>();
    } else {
      if constexpr (std::is_same_v<Part, Unwritable>) {
        [[maybe_unused]] detail::type_has_no_json_form_for<Part> error;
      } else {
        [[maybe_unused]] detail::type_has_no_json_form_for<Part, Unwritable> error;
      }
      static_assert((JsonWritable<detail::ParamType<T>> && ...),
                    "batchrpc: rpc::positional takes values with a JSON form: numbers, strings, "
                    "standard containers, rpc::Json, a struct or enum bound with BATCHRPC_FIELDS or "
                    "BATCHRPC_ENUM, or a type with an rpc::JsonTraits<T>::write specialisation. Maps "
                    "need string keys; a char is not a number here (use std::string or "
                    "std::int8_t).");
    }
  }
  if constexpr ((JsonWritable<detail::ParamType<T>> && ...)) {  // else no follow-on errors
    return detail::write_params([&](ResultWriter& w) {
      w.start_array();
      (detail::write_param(w, values), ...);
      w.end_array();
    });
  } else {
    return Json{};
  }
}

/**
 * Named params (JSON-RPC 2.0 §4.2): a JSON object from name/value pairs, in the order given.
 *
 * @code
 * batch.call("subtract", rpc::named("minuend", 42, "subtrahend", 23));
 * // "params":{"minuend":42,"subtrahend":23}
 * @endcode
 * @throws std::invalid_argument if a name is given twice, or a name or value has no JSON form
 *         (NaN, infinity, invalid UTF-8).
 */
template <class... Args>
[[nodiscard]] Json named(const Args&... args) {
  if constexpr (sizeof...(Args) % 2 != 0) {
    [[maybe_unused]] detail::named_takes_name_value_pairs_not<sizeof...(Args)> error;
  }
  static_assert(sizeof...(Args) % 2 == 0,
                "batchrpc: rpc::named takes name/value pairs: write "
                "rpc::named(\"a\", 1, \"b\", \"x\")");
  return detail::write_params([&](ResultWriter& w) {
    std::vector<std::string_view> seen;
    seen.reserve(sizeof...(Args) / 2);
    w.start_object();
    detail::write_named(w, seen, args...);
    w.end_object();
  });
}

/// The type of `rpc::as_batch`.
struct AsBatch {
  explicit AsBatch() = default;
};
/// Makes a `BatchBuilder` write an array even for one item:
/// `rpc::BatchBuilder batch{rpc::as_batch};`
inline constexpr AsBatch as_batch{};

/**
 * Builds one JSON-RPC 2.0 message: a single Request or Notification, or a batch (§6).
 *
 * `call` adds a Request and returns its id: integers 1, 2, 3... in call order, counted per
 * builder (notifications take no id). `notify` adds a Notification. `text()` is the message:
 * a single object when the builder holds exactly one item, otherwise (or when made with
 * `rpc::as_batch`) an array. Everything is written by RapidJSON, so method names and params
 * are escaped properly.
 *
 * Not thread-safe while items are added; `text()` and `correlate` only read it.
 *
 * @code
 * rpc::BatchBuilder batch;
 * const auto diff = batch.call("subtract", rpc::positional(42, 23));  // id 1
 * batch.notify("update", rpc::positional(1, 2, 3));
 * const rpc::Replies replies = rpc::correlate(batch, transport.send(batch.text()));
 * int d = replies.result<int>(diff);
 * @endcode
 */
class BatchBuilder {
 public:
  /// An empty builder; `text()` is an array only once it holds two or more items.
  BatchBuilder() = default;
  /// An empty builder whose `text()` is always an array, even for one item.
  explicit BatchBuilder(AsBatch) noexcept : always_batch_(true) {}
  /**
   * An empty builder whose requests get the ids `first_id`, `first_id + 1`, ... instead of
   * 1, 2, ...: for a connection that carries several messages at once, whose ids must differ
   * (`net::Client::batch()` hands these out).
   * @throws std::invalid_argument if `first_id` is below 1.
   */
  explicit BatchBuilder(std::int64_t first_id, bool always_batch = false)
      : first_id_(first_id), always_batch_(always_batch) {
    if (first_id < 1) throw std::invalid_argument("batchrpc: a BatchBuilder's first id must be at least 1");
  }

  /**
   * Adds a Request for `method` with `params` (omitted when empty).
   * @returns its id: `first_id()` (1 unless made with another) for the first call on this
   *          builder, then the next integers. The ids are predictable, so ignoring the return
   *          value is allowed.
   * @throws std::invalid_argument if `params` is neither an array nor an object (JSON-RPC 2.0
   *         §4.2), or `method` is not valid UTF-8.
   */
  BATCHRPC_DECL std::int64_t call(std::string_view method, Json params = {});

  /**
   * Adds a Notification (a Request without an id: never answered, §4.1).
   * @throws std::invalid_argument as `call` does.
   */
  BATCHRPC_DECL void notify(std::string_view method, Json params = {});

  /**
   * The message to send, e.g. `{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}`.
   * Members are written in the order jsonrpc, method, params, id.
   * @throws std::logic_error if the builder is empty (JSON-RPC 2.0 §6: an empty batch is invalid).
   */
  [[nodiscard]] BATCHRPC_DECL std::string text() const;

  /// Number of items (requests and notifications).
  [[nodiscard]] std::size_t size() const noexcept { return items_.size(); }
  /// True when nothing has been added.
  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  /// Number of requests (0: none); their ids are `first_id()` to `first_id() + requests() - 1`.
  [[nodiscard]] std::int64_t requests() const noexcept { return requests_; }
  /// The id of the first request (1 unless the builder was made with another).
  [[nodiscard]] std::int64_t first_id() const noexcept { return first_id_; }
  /// True when `text()` is an array (two or more items, or made with `rpc::as_batch`).
  [[nodiscard]] bool is_batch() const noexcept { return always_batch_ || items_.size() >= 2; }
  /// True when the server must answer (at least one request); false for notifications only.
  [[nodiscard]] bool expects_reply() const noexcept { return requests_ > 0; }

 private:
  struct Item {
    std::string method;
    Json params;
    std::int64_t id = 0;  // 0: a notification
  };
  BATCHRPC_DECL void add(std::string_view method, Json params, std::int64_t id);

  std::vector<Item> items_;
  std::int64_t first_id_ = 1;
  std::int64_t requests_ = 0;
  bool always_batch_ = false;
};

/**
 * A reply matched to the `BatchBuilder` it answers; made by `rpc::correlate`.
 *
 * Per request id: `ok`, `result<T>`, `result_json`, `error`. For the message as a whole:
 * `missing`, `duplicate`, `unexpected`, `message_error`, `problems`, and `complete()` when
 * everything matched. Only valid responses (JSON-RPC 2.0 §5) are matched; each invalid one is
 * described in `problems()`. When an id is answered twice, the first response counts.
 *
 * Immutable: any number of threads may read one `Replies` at once. Copies share the parsed
 * reply. Accessors that return references or pointers are deleted on temporaries (they would
 * dangle): keep the `Replies` in a variable.
 */
class Replies {
 public:
  /// Nothing expected, nothing received (`complete()` is true).
  Replies() = default;

  /// True when every request has exactly one valid response and there is nothing else: no
  /// missing, duplicate or unexpected response, no message error and no problem.
  [[nodiscard]] bool complete() const noexcept {
    return missing_.empty() && duplicate_.empty() && unexpected_.empty() && !message_error_ &&
           problems_.empty();
  }

  /// Request ids with no valid response, ascending.
  [[nodiscard]] const std::vector<std::int64_t>& missing() const& noexcept { return missing_; }
  const std::vector<std::int64_t>& missing() const&& = delete;
  /// Request ids answered more than once, ascending (each listed once).
  [[nodiscard]] const std::vector<std::int64_t>& duplicate() const& noexcept { return duplicate_; }
  const std::vector<std::int64_t>& duplicate() const&& = delete;
  /// The ids of valid responses to no request of the builder, as JSON text in reply order
  /// (`"null"`, `"7"`, `"\"x\""`; numbers exactly as the server wrote them). Ids match by
  /// integer value only: `1.0` and `"1"` are not id 1.
  [[nodiscard]] const std::vector<std::string>& unexpected() const& noexcept { return unexpected_; }
  const std::vector<std::string>& unexpected() const&& = delete;
  /// The error answering the whole message (a lone error response with id null, e.g. -32700
  /// or -32600 for a batch the server rejected as a whole, §5 and §6), or nullptr.
  [[nodiscard]] const Error* message_error() const& noexcept {
    return message_error_ ? &*message_error_ : nullptr;
  }
  const Error* message_error() const&& = delete;
  /// What is wrong with the reply beyond ids, one English sentence each: not JSON, too deep,
  /// not a response, an invalid response (`reply[2]: missing "jsonrpc"`), an array where a
  /// single response was due or the reverse. Empty when the reply is well-formed.
  [[nodiscard]] const std::vector<std::string>& problems() const& noexcept { return problems_; }
  const std::vector<std::string>& problems() const&& = delete;

  /// True when `id` was answered with a result.
  [[nodiscard]] bool ok(std::int64_t id) const noexcept {
    const detail::Outcome* o = outcome(id);
    return o != nullptr && o->result != nullptr;
  }
  /// The error `id` was answered with; nullptr when it succeeded, has no response, or was
  /// never sent.
  [[nodiscard]] const Error* error(std::int64_t id) const& noexcept {
    const detail::Outcome* o = outcome(id);
    return o != nullptr && o->error ? &*o->error : nullptr;
  }
  const Error* error(std::int64_t id) const&& = delete;

  /**
   * The result of request `id`, bound with `rpc::JsonTraits<T>::read`.
   * @throws rpc::Error (code, message and data as the server sent them) if `id` was answered
   *         with an error; std::invalid_argument if `id` has no response, was never sent, or
   *         its result does not bind to `T`.
   * @code
   * const int difference = replies.result<int>(id);
   * @endcode
   */
  template <class T>
  [[nodiscard]] T result(std::int64_t id) const& {
    return detail::read_result<T>(result_value(id), [id](const std::string& why) {
      throw std::invalid_argument("batchrpc: the result of id " + std::to_string(id) +
                                  " does not bind: " + why);
    });
  }
  /// As above, on a temporary: only for types that own their data (numbers, `bool`,
  /// `std::string`, `rpc::Json`, and `std::optional`, `std::vector` and string-keyed maps of
  /// those, BATCHRPC_FIELDS structs of those, and types whose rpc::JsonTraits declares
  /// `static constexpr bool owns_its_data = true;`). Anything else may hold a view into the
  /// reply, which dies with the temporary.
  template <class T>
  [[nodiscard]] T result(std::int64_t id) const&& {
    detail::check_outlives_its_json<T>();
    return static_cast<const Replies&>(*this).result<T>(id);
  }

  /// The result of `id` as JSON text (numbers in shortest form, strings re-escaped).
  /// @throws as `result<T>`.
  [[nodiscard]] BATCHRPC_DECL Json result_json(std::int64_t id) const;

 private:
  friend BATCHRPC_DECL Replies correlate(const BatchBuilder&, std::optional<std::string_view>,
                                         const Limits&);
  friend BATCHRPC_DECL Replies detail::failed_replies(const BatchBuilder&, std::string);

  [[nodiscard]] const detail::Outcome* outcome(std::int64_t id) const noexcept {
    if (id < first_id_ || static_cast<std::uint64_t>(id - first_id_) >= outcomes_.size()) return nullptr;
    return &outcomes_[static_cast<std::size_t>(id - first_id_)];
  }
  // The result value of `id`, or throws as result<T> documents.
  [[nodiscard]] BATCHRPC_DECL const Value& result_value(std::int64_t id) const;

  std::shared_ptr<const detail::ReplyDocument> document_;  // owns what outcomes_ point into
  std::vector<detail::Outcome> outcomes_;                  // [id - first_id_]
  std::int64_t first_id_ = 1;
  std::vector<std::int64_t> missing_;
  std::vector<std::int64_t> duplicate_;
  std::vector<std::string> unexpected_;
  std::vector<std::string> problems_;
  std::optional<Error> message_error_;
};

/**
 * Matches `reply` to the requests of `batch`.
 *
 * `reply` is what the transport received for `batch.text()`, or `std::nullopt` when nothing
 * came (right for notifications only; otherwise every id is missing). It is parsed with
 * RapidJSON, iteratively and UTF-8 validated, into a copy owned by the result: anything at all
 * is reported, never a crash. `limits.max_message_bytes` bounds the reply's size and
 * `limits.max_depth` its nesting (other fields are unused); a reply beyond them is a problem.
 *
 * @code
 * rpc::BatchBuilder batch;
 * const auto a = batch.call("subtract", rpc::positional(42, 23));
 * const auto b = batch.call("subtract", rpc::named("minuend", 1, "subtrahend", 2));
 * const rpc::Replies replies = rpc::correlate(batch, router.handle(batch.text()));
 * if (!replies.complete()) { ... replies.missing(), replies.problems() ... }
 * int x = replies.result<int>(a);  // 19
 * @endcode
 * Never throws except std::bad_alloc; thread-safe (it only reads `batch`).
 */
[[nodiscard]] BATCHRPC_DECL Replies correlate(const BatchBuilder& batch,
                                              std::optional<std::string_view> reply,
                                              const Limits& limits = {});

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/client.ipp"
#endif
