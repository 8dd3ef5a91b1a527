// SPDX-License-Identifier: MIT
// Non-template bodies of json_traits.hpp: the reads and writes of scalar types and of any
// rpc::Value, and the reasons containers give (compiled once in the compiled variant).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/number_text.hpp"
#include "../json_traits.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
// Integers too large for 64 bits arrive as doubles; name them for what they are.
BATCHRPC_DECL bool beyond_64_bits(const Value& v) {
  if (!v.IsDouble()) return false;
  const double d = v.GetDouble();
  return std::trunc(d) == d && std::fabs(d) >= 9223372036854775808.0;
}

// The client learns what it may send.
BATCHRPC_DECL std::string out_of_range(const std::string& min, const std::string& max) {
  return "integer out of range (" + min + " to " + max + ")";
}

BATCHRPC_DECL bool read_signed(const Value& v, std::int64_t min, std::int64_t max, std::int64_t& out,
                               std::string& why) {
  const auto range = [&] { return out_of_range(std::to_string(min), std::to_string(max)); };
  if (!v.IsInt64()) {
    return refuse(why, v.IsUint64() || beyond_64_bits(v) ? range() : std::string("expected an integer"));
  }
  const std::int64_t value = v.GetInt64();
  if (value < min || value > max) return refuse(why, range());
  out = value;
  return true;
}

BATCHRPC_DECL bool read_unsigned(const Value& v, std::uint64_t max, std::uint64_t& out, std::string& why) {
  const auto range = [&] { return out_of_range("0", std::to_string(max)); };
  if (!v.IsUint64()) {
    return refuse(why, v.IsInt64() || beyond_64_bits(v) ? range() : std::string("expected an integer"));
  }
  const std::uint64_t value = v.GetUint64();
  if (value > max) return refuse(why, range());
  out = value;
  return true;
}

BATCHRPC_DECL std::string at_element(std::size_t index, const std::string& why) {
  std::string text = "element " + std::to_string(index) + ": ";
  text.append(reason_or_default(why));
  return text;
}

BATCHRPC_DECL std::string expected_array_of(std::size_t size) {
  return "expected an array of " + std::to_string(size) + (size == 1 ? " element" : " elements");
}

BATCHRPC_DECL std::string at_member(std::string_view key, const std::string& why) {
  std::string text = "member \"";
  text.append(key).append("\": ").append(reason_or_default(why));
  return text;
}

BATCHRPC_DECL std::string at_field(std::string_view field, const std::string& why) {
  std::string text(field);
  text.append(": ").append(reason_or_default(why));
  return text;
}

BATCHRPC_DECL std::string duplicate_member(std::string_view key) {
  std::string text = "duplicate member \"";
  text.append(key).append("\"");
  return text;
}

// Appends an alternative's reason, cut to a few hundred bytes (at a character boundary): the
// reasons of nested variants would otherwise multiply into the reply.
BATCHRPC_DECL void append_reason(std::string& reasons, std::size_t alternative, std::string_view why) {
  constexpr std::size_t most = 200;
  if (alternative > 0) reasons.append("; ");
  reasons.append("alternative ").append(std::to_string(alternative)).append(": ");
  why = reason_or_default(why);
  if (why.size() <= most) return static_cast<void>(reasons.append(why));
  std::size_t cut = most;
  while (cut > 0 && (static_cast<unsigned char>(why[cut]) & 0xC0U) == 0x80U) --cut;  // not mid-character
  reasons.append(why.substr(0, cut)).append("...");
}

BATCHRPC_DECL void write_scalar(ResultWriter& w, const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return w.null();
    case rapidjson::kFalseType: return w.boolean(false);
    case rapidjson::kTrueType: return w.boolean(true);
    case rapidjson::kStringType: return w.string(std::string_view(v.GetString(), v.GetStringLength()));
    case rapidjson::kNumberType:
      if (v.IsInt64()) return w.integer(v.GetInt64());
      if (v.IsUint64()) return w.unsigned_integer(v.GetUint64());
      return w.number(v.GetDouble());
    case rapidjson::kArrayType:
    case rapidjson::kObjectType:
      break;
  }
}

BATCHRPC_DECL void write_tree(ResultWriter& w, const Value& root) {
  struct Open {
    const Value* next = nullptr;  // arrays: the next element
    const Value* end = nullptr;
    Value::ConstMemberIterator member{}, members_end{};  // objects: the next member
    bool object = false;
  };
  std::vector<Open> stack;
  const auto open = [&](const Value& v) {
    if (v.IsArray()) {
      w.start_array();
      stack.push_back({v.Begin(), v.End(), {}, {}, false});
    } else {
      w.start_object();
      stack.push_back({nullptr, nullptr, v.MemberBegin(), v.MemberEnd(), true});
    }
  };
  open(root);
  while (!stack.empty()) {
    Open& top = stack.back();
    const Value* v = nullptr;
    if (top.object) {
      if (top.member == top.members_end) {
        w.end_object();
        stack.pop_back();
        continue;
      }
      w.key(std::string_view(top.member->name.GetString(), top.member->name.GetStringLength()));
      v = &top.member->value;
      ++top.member;
    } else {
      if (top.next == top.end) {
        w.end_array();
        stack.pop_back();
        continue;
      }
      v = top.next++;
    }
    if (v->IsArray() || v->IsObject()) {
      open(*v);  // `top` is not used after this: push_back may move it
    } else {
      write_scalar(w, *v);
    }
  }
}
}  // namespace detail

BATCHRPC_DECL bool JsonTraits<bool>::read(const Value& v, bool& out, std::string& why) {
  if (!v.IsBool()) return detail::refuse(why, "expected a boolean");
  out = v.GetBool();
  return true;
}

BATCHRPC_DECL bool JsonTraits<double>::read(const Value& v, double& out, std::string& why) {
  if (!v.IsNumber()) return detail::refuse(why, "expected a number");
  out = v.GetDouble();
  return true;
}

BATCHRPC_DECL bool JsonTraits<float>::read(const Value& v, float& out, std::string& why) {
  if (!v.IsNumber()) return detail::refuse(why, "expected a number");
  const double d = v.GetDouble();
  if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) {
    return detail::refuse(why, "number out of range for float");
  }
  out = static_cast<float>(d);
  return true;
}

BATCHRPC_DECL void JsonTraits<float>::write(ResultWriter& w, float f) {
  if (!std::isfinite(f)) return w.number(static_cast<double>(f));  // throws: not JSON
  w.raw_number(detail::shortest_text(f).view());
}

BATCHRPC_DECL bool JsonTraits<std::string>::read(const Value& v, std::string& out, std::string& why) {
  if (!v.IsString()) return detail::refuse(why, "expected a string");
  out.assign(v.GetString(), v.GetStringLength());
  return true;
}

BATCHRPC_DECL bool JsonTraits<std::string_view>::read(const Value& v, std::string_view& out, std::string& why) {
  if (!v.IsString()) return detail::refuse(why, "expected a string");
  out = std::string_view(v.GetString(), v.GetStringLength());
  return true;
}

BATCHRPC_DECL void JsonTraits<const char*>::write(ResultWriter& w, const char* s) {
  if (s == nullptr) return w.null();
  w.string(s);
}

BATCHRPC_DECL bool JsonTraits<Json>::read(const Value& v, Json& out, std::string&) {
  out = to_json(v);
  return true;
}

}  // namespace rpc
