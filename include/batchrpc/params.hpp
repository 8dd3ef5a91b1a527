// SPDX-License-Identifier: MIT
/// @file params.hpp
/// `rpc::Params`: a read-only view of a request's `params` (JSON-RPC 2.0 §4.2).
#pragma once

#include <cstddef>
#include <string_view>

#include "config.hpp"
#include "detail/same_text.hpp"
#include "json.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * A request's `params`: an array (by position), an object (by name), or absent.
 *
 * Handlers that take `rpc::Params` read them themselves; typed handlers get them bound to their
 * C++ parameters instead. Valid only during the handler call.
 */
class Params {
 public:
  /// Absent params.
  Params() = default;
  /// Params backed by `value` (nullptr: absent). `value` must be an array or an object.
  explicit Params(const Value* value) noexcept : value_(value) {}

  /// True when the request had no `params` member.
  [[nodiscard]] bool absent() const noexcept { return value_ == nullptr; }
  /// True for positional params.
  [[nodiscard]] bool is_array() const noexcept { return value_ != nullptr && value_->IsArray(); }
  /// True for named params.
  [[nodiscard]] bool is_object() const noexcept { return value_ != nullptr && value_->IsObject(); }
  /// Number of elements (array) or members (object); 0 when absent.
  [[nodiscard]] std::size_t size() const noexcept {
    if (is_array()) return value_->Size();
    if (is_object()) return value_->MemberCount();
    return 0;
  }
  /// The positional param at `index`, or nullptr (absent, named, or out of range).
  [[nodiscard]] const Value* at(std::size_t index) const noexcept {
    return is_array() && index < value_->Size() ? &(*value_)[static_cast<rapidjson::SizeType>(index)]
                                                 : nullptr;
  }
  /// The named param `name` (first match), or nullptr (absent, positional, or no such member).
  [[nodiscard]] const Value* find(std::string_view name) const noexcept {
    if (!is_object()) return nullptr;
    for (const auto& m : value_->GetObject()) {
      if (detail::same_text({m.name.GetString(), m.name.GetStringLength()}, name)) return &m.value;
    }
    return nullptr;
  }
  /// The underlying JSON value, or nullptr when absent.
  [[nodiscard]] const Value* json() const noexcept { return value_; }

 private:
  const Value* value_ = nullptr;
};

}  // namespace rpc
