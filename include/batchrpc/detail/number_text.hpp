// SPDX-License-Identifier: MIT
// Floating-point numbers as JSON text: the shortest form that reads back exactly.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string_view>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Room for any double or float in shortest form ("-2.2250738585072014e-308" is 24 bytes).
struct NumberText {
  char bytes[40];
  std::size_t size = 0;
  std::string_view view() const { return {bytes, size}; }
};

// std::to_chars picks the shortest round-trip digits; its exponent is trimmed to the usual
// JSON form ("1e+300" -> "1e300", "1.5e-07" -> "1.5e-7"). `value` must be finite.
template <class Float>
NumberText shortest_text(Float value) {
  NumberText t;
  char* end = std::to_chars(t.bytes, t.bytes + sizeof t.bytes, value).ptr;
  char* e = std::find(t.bytes, end, 'e');
  if (e != end) {
    char* out = e + 1;
    const char* in = e + 1;
    if (*in == '+') {
      ++in;
    } else if (*in == '-') {
      *out++ = *in++;
    }
    while (in + 1 < end && *in == '0') ++in;
    while (in < end) *out++ = *in++;
    end = out;
  }
  t.size = static_cast<std::size_t>(end - t.bytes);
  return t;
}

}  // namespace rpc::detail
