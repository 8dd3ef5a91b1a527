// SPDX-License-Identifier: MIT
/// @file result_writer.hpp
/// `rpc::ResultWriter`: writes one JSON value (a handler's result) straight into the reply.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <rapidjson/writer.h>

#include "buffer.hpp"
#include "config.hpp"
#include "detail/number_text.hpp"
#include "detail/utf8.hpp"
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
  void null() {
    check_room();
    check_value();
    check(Base::Null());
  }
  /// `true` or `false`.
  void boolean(bool b) {
    check_room();
    check_value();
    check(Base::Bool(b));
  }
  /// A signed integer.
  void integer(std::int64_t i) {
    check_room();
    check_value();
    check(Base::Int64(i));
  }
  /// An unsigned integer.
  void unsigned_integer(std::uint64_t u) {
    check_room();
    check_value();
    check(Base::Uint64(u));
  }
  /// A finite floating-point number, in the shortest form that reads back exactly (`42`,
  /// `0.1`, `1e+100`).
  void number(double d) {
    check_room();
    check_value();
    if (!std::isfinite(d)) fail("batchrpc: NaN and infinity cannot be written as JSON");
    const detail::NumberText text = detail::shortest_text(d);
    check(Base::RawValue(text.bytes, text.size, rapidjson::kNumberType));
  }
  /// A string (must be valid UTF-8; may contain NUL bytes).
  void string(std::string_view s) {
    check_room();
    check_value();
    if (detail::is_plain_ascii(s)) return plain(s);
    if (!detail::is_valid_utf8(s)) fail("batchrpc: string is not valid UTF-8");
    check(Base::String(s.data(), static_cast<rapidjson::SizeType>(s.size())));
  }
  /// A number written from its JSON text as given (the caller guarantees it is a JSON number).
  void raw_number(std::string_view text) {
    check_room();
    check_value();
    check(Base::RawValue(text.data(), text.size(), rapidjson::kNumberType));
  }
  /// A ready JSON value, written verbatim. An empty `Json` writes `null`.
  void raw(const Json& value) {
    if (value.empty()) return null();
    check_room();
    check_value();
    check(Base::RawValue(value.text().data(), value.text().size(), rapidjson::kObjectType));
  }
  /// Opens an object; follow with `key`/value pairs and `end_object`.
  void start_object() {
    check_room();
    check_value();
    check(Base::StartObject());
  }
  /// The next member's name (inside an object, before its value).
  void key(std::string_view name) {
    check_room();
    if (!in_object_expecting_key()) fail("batchrpc: key() is only valid inside an object, before a value");
    if (detail::is_plain_ascii(name)) return plain(name);
    if (!detail::is_valid_utf8(name)) fail("batchrpc: key is not valid UTF-8");
    check(Base::Key(name.data(), static_cast<rapidjson::SizeType>(name.size())));
  }
  /// Closes the innermost object.
  void end_object() {
    if (!in_object_expecting_key()) fail("batchrpc: end_object() without a matching start_object()");
    check(Base::EndObject());
  }
  /// Opens an array; follow with values and `end_array`.
  void start_array() {
    check_room();
    check_value();
    check(Base::StartArray());
  }
  /// Closes the innermost array.
  void end_array() {
    if (Base::level_stack_.Empty() || !top().inArray) {
      fail("batchrpc: end_array() without a matching start_array()");
    }
    check(Base::EndArray());
  }
  /// Writes any value that has `rpc::JsonTraits` (see json_traits.hpp).
  template <class T>
  void write(const T& value);

  /// True once one complete value has been written.
  [[nodiscard]] bool complete() const { return Base::hasRoot_ && Base::level_stack_.Empty(); }
  /// True when nothing has been written yet.
  [[nodiscard]] bool empty() const { return !Base::hasRoot_; }

 private:
  friend struct detail::WriterAccess;

  [[noreturn]] static void fail(const char* what) { throw std::logic_error(what); }
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
  void plain(std::string_view s) {
    Base::Prefix(rapidjson::kStringType);
    char* p = Base::os_->Push(s.size() + 2);
    p[0] = '"';
    std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
  }

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

#include "json_traits.hpp"
