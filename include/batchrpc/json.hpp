// SPDX-License-Identifier: MIT
/// @file json.hpp
/// JSON values as the library sees them: the parsed `rpc::Value` and the raw-text `rpc::Json`.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// A parsed JSON value (RapidJSON DOM). Handlers receive params as `const Value&`; numbers are
/// ordinary RapidJSON numbers, strings are UTF-8 (validated) and may contain NUL bytes, so use
/// `GetStringLength()`. Valid only for the duration of the handler call.
using Value = rapidjson::Value;

/**
 * A complete JSON value held as text, validated once when it is made. A plain value type:
 * copies are independent, and const access from many threads is safe.
 *
 * Use it to return a ready JSON value from a handler, to pass `data` with an `rpc::Error`, or to
 * receive one parameter as text. An empty `Json` means "no value".
 *
 * @code
 * throw rpc::Error{-32010, "Quota exceeded", rpc::json(R"({"retryAfter": 30})")};
 * @endcode
 */
class Json {
 public:
  /// No value.
  Json() = default;

  /// Validates `text` (exactly one JSON value, UTF-8) and keeps it.
  /// @throws std::invalid_argument if `text` is not a single valid JSON value.
  BATCHRPC_DECL static Json parse(std::string_view text);

  /// Wraps text the caller guarantees is one valid JSON value (not checked).
  static Json trusted(std::string text) {
    Json j;
    j.text_ = std::move(text);
    return j;
  }

  /// The JSON text; empty when there is no value.
  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  /// True when there is no value.
  [[nodiscard]] bool empty() const noexcept { return text_.empty(); }

  friend bool operator==(const Json&, const Json&) = default;

 private:
  std::string text_;
};

/// Shorthand for `Json::parse(text)`.
/// @throws std::invalid_argument if `text` is not a single valid JSON value.
inline Json json(std::string_view text) { return Json::parse(text); }

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/json.ipp"
#endif
