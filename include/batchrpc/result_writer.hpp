// SPDX-License-Identifier: MIT
/// @file result_writer.hpp
/// `rpc::ResultWriter`: writes one JSON value (a handler's result) straight into the reply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include <rapidjson/writer.h>

#include "buffer.hpp"
#include "config.hpp"
#include "json.hpp"

namespace rpc::inline BATCHRPC_ABI {

class Router;

namespace detail {
// Strings are validated before they reach RapidJSON, so a refused value writes nothing at all.
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;
struct WriterAccess;

// Thrown by a writer asked to write past the reply budget (`Limits::max_response_bytes`); the
// request is then answered -32092, whatever the handler does with the exception.
class ResponseTooLarge : public std::length_error {
 public:
  ResponseTooLarge() : std::length_error("batchrpc: the result is larger than the reply budget") {}
};
}  // namespace detail

/**
 * Writes exactly one JSON value into the reply, with no intermediate DOM.
 *
 * A handler that takes `rpc::ResultWriter&` writes its result itself (for large or streamed
 * results); others return a value that batchrpc writes here. Every call is checked: a key
 * outside an object, a second top-level value, NaN/infinity, or invalid UTF-8 throws
 * `std::logic_error` and writes nothing. Uncaught, it answers the request `-32603` (nothing
 * partial is sent). Writing nothing answers `null`.
 *
 * Writing stops as soon as the result passes the reply budget (`Limits::max_response_bytes`):
 * the next call throws an exception derived from `std::length_error`, and so does every call
 * after it, and the request is answered `-32092` even if the handler catches it. A result
 * therefore never takes much more memory than the budget, however much a handler tries to
 * write.
 *
 * Thread-safety: one writer, one thread; a handler's writer is valid only during its call (a
 * `Responder`'s writer only inside `resolve_with`).
 *
 * @code
 * router.add("range", [](int n, rpc::ResultWriter& out) {
 *   out.start_array();
 *   for (int i = 0; i < n; ++i) out.integer(i);
 *   out.end_array();
 * }, rpc::names("n"));
 * @endcode
 */
class ResultWriter : private detail::JsonWriter {
  using Base = detail::JsonWriter;

 public:
  /// A writer that appends to `out` (the router makes its own; this is for tests and tools).
  explicit ResultWriter(Buffer& out) : Base(out.stream()) {}
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;

  /// `null`.
  BATCHRPC_DECL void null();
  /// `true` or `false`.
  BATCHRPC_DECL void boolean(bool b);
  /// A signed integer.
  BATCHRPC_DECL void integer(std::int64_t i);
  /// An unsigned integer.
  BATCHRPC_DECL void unsigned_integer(std::uint64_t u);
  /// A finite floating-point number, in the shortest form that reads back exactly (`42`,
  /// `0.1`, `1e+100`).
  BATCHRPC_DECL void number(double d);
  /// A string (must be valid UTF-8; may contain NUL bytes).
  BATCHRPC_DECL void string(std::string_view s);
  /// A number written from its JSON text as given (the caller guarantees it is a JSON number).
  BATCHRPC_DECL void raw_number(std::string_view text);
  /// A ready JSON value, written verbatim. An empty `Json` writes `null`.
  BATCHRPC_DECL void raw(const Json& value);
  /// Opens an object; follow with `key`/value pairs and `end_object`.
  BATCHRPC_DECL void start_object();
  /// The next member's name (inside an object, before its value).
  BATCHRPC_DECL void key(std::string_view name);
  /// Closes the innermost object.
  BATCHRPC_DECL void end_object();
  /// Opens an array; follow with values and `end_array`.
  BATCHRPC_DECL void start_array();
  /// Closes the innermost array.
  BATCHRPC_DECL void end_array();
  /// Writes any value that has `rpc::JsonTraits` (see json_traits.hpp).
  template <class T>
  void write(const T& value);

  /// True once one complete value has been written.
  [[nodiscard]] bool complete() const { return Base::hasRoot_ && Base::level_stack_.Empty(); }
  /// True when nothing has been written yet.
  [[nodiscard]] bool empty() const { return !Base::hasRoot_; }

 private:
  friend struct detail::WriterAccess;

  [[noreturn]] BATCHRPC_DECL static void fail(const char* what);
  // Before each value: a buffer past the limit takes nothing more (the budget bounds memory,
  // not just what is sent).
  void check_room() const {
    if (Base::os_->GetSize() > limit_) [[unlikely]] throw detail::ResponseTooLarge();
  }
  [[nodiscard]] bool too_large() const { return Base::os_->GetSize() > limit_; }
  static void check(bool ok) {
    if (!ok) fail("batchrpc: JSON writer rejected the value");
  }
  const typename Base::Level& top() const { return *Base::level_stack_.template Top<typename Base::Level>(); }
  bool in_object_expecting_key() const {
    return !Base::level_stack_.Empty() && !top().inArray && top().valueCount % 2 == 0;
  }
  // A value may start at the top (once), inside an array, or after a key.
  void check_value() const {
    const bool ok = Base::level_stack_.Empty() ? !Base::hasRoot_
                                               : (top().inArray || top().valueCount % 2 == 1);
    if (!ok) fail("batchrpc: a value is not allowed here (second result, or a member without key())");
  }
  void reset(Buffer& out, std::size_t limit) {
    Base::Reset(out.stream());
    limit_ = limit;
  }

  // A string that needs no escaping, copied between quotes as it is. Prefix() writes the
  // separator and counts the value (or key) exactly as Writer::String would.
  BATCHRPC_DECL void plain(std::string_view s);

  std::size_t limit_ = static_cast<std::size_t>(-1);  // the buffer size past which writing stops
};

namespace detail {
// Lets the router point a writer at a buffer, with the size past which writing stops, without
// making that part of the public API.
struct WriterAccess {
  static void reset(ResultWriter& w, Buffer& out, std::size_t limit = static_cast<std::size_t>(-1)) {
    w.reset(out, limit);
  }
  // True when the writer refused to grow past its limit (whether or not its throw was caught).
  static bool too_large(const ResultWriter& w) { return w.too_large(); }
};
}  // namespace detail

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/result_writer.ipp"
#endif

#include "json_traits.hpp"
