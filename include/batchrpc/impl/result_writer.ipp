// SPDX-License-Identifier: MIT
// Non-template bodies of result_writer.hpp: each call checks where it is, then writes through
// RapidJSON's writer (compiled once in the compiled variant, not in every handler's file).
#pragma once

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "../config.hpp"
#include "../detail/number_text.hpp"
#include "../detail/utf8.hpp"
#include "../result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL void ResultWriter::fail(const char* what) { throw std::logic_error(what); }

BATCHRPC_DECL void ResultWriter::null() {
  check_room();
  check_value();
  check(Base::Null());
}

BATCHRPC_DECL void ResultWriter::boolean(bool b) {
  check_room();
  check_value();
  check(Base::Bool(b));
}

BATCHRPC_DECL void ResultWriter::integer(std::int64_t i) {
  check_room();
  check_value();
  check(Base::Int64(i));
}

BATCHRPC_DECL void ResultWriter::unsigned_integer(std::uint64_t u) {
  check_room();
  check_value();
  check(Base::Uint64(u));
}

BATCHRPC_DECL void ResultWriter::number(double d) {
  check_room();
  check_value();
  if (!std::isfinite(d)) fail("batchrpc: NaN and infinity cannot be written as JSON");
  const detail::NumberText text = detail::shortest_text(d);
  check(Base::RawValue(text.bytes, text.size, rapidjson::kNumberType));
}

BATCHRPC_DECL void ResultWriter::string(std::string_view s) {
  check_room();
  check_value();
  if (detail::is_plain_ascii(s)) return plain(s);
  if (!detail::is_valid_utf8(s)) fail("batchrpc: string is not valid UTF-8");
  check(Base::String(s.data(), static_cast<rapidjson::SizeType>(s.size())));
}

BATCHRPC_DECL void ResultWriter::raw_number(std::string_view text) {
  check_room();
  check_value();
  check(Base::RawValue(text.data(), text.size(), rapidjson::kNumberType));
}

BATCHRPC_DECL void ResultWriter::raw(const Json& value) {
  if (value.empty()) return null();
  check_room();
  check_value();
  check(Base::RawValue(value.text().data(), value.text().size(), rapidjson::kObjectType));
}

BATCHRPC_DECL void ResultWriter::start_object() {
  check_room();
  check_value();
  check(Base::StartObject());
}

BATCHRPC_DECL void ResultWriter::key(std::string_view name) {
  check_room();
  if (!in_object_expecting_key()) fail("batchrpc: key() is only valid inside an object, before a value");
  if (detail::is_plain_ascii(name)) return plain(name);
  if (!detail::is_valid_utf8(name)) fail("batchrpc: key is not valid UTF-8");
  check(Base::Key(name.data(), static_cast<rapidjson::SizeType>(name.size())));
}

BATCHRPC_DECL void ResultWriter::end_object() {
  if (!in_object_expecting_key()) fail("batchrpc: end_object() without a matching start_object()");
  check(Base::EndObject());
}

BATCHRPC_DECL void ResultWriter::start_array() {
  check_room();
  check_value();
  check(Base::StartArray());
}

BATCHRPC_DECL void ResultWriter::end_array() {
  if (Base::level_stack_.Empty() || !top().inArray) {
    fail("batchrpc: end_array() without a matching start_array()");
  }
  check(Base::EndArray());
}

BATCHRPC_DECL void ResultWriter::plain(std::string_view s) {
  Base::Prefix(rapidjson::kStringType);
  char* p = Base::os_->Push(s.size() + 2);
  p[0] = '"';
  std::memcpy(p + 1, s.data(), s.size());
  p[s.size() + 1] = '"';
}

}  // namespace rpc
