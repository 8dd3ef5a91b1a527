// SPDX-License-Identifier: MIT
// JSON number text (the parser hands numbers over as text, so ids can be echoed byte for byte)
// to a RapidJSON number, and the range rule both parsers apply.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <system_error>

namespace rpc::detail {

// Out of range toward zero: with an exponent, a negative one; without, no integer digit
// but 0 ("0.000...01"). ("0.79e309" is out of range the other way.)
inline bool underflows(const char* text, const char* end) {
  for (const char* p = text; p != end; ++p) {
    if (*p == 'e' || *p == 'E') return p + 1 != end && p[1] == '-';
  }
  const char* digits = text[0] == '-' ? text + 1 : text;
  return digits + 1 < end && digits[0] == '0' && digits[1] == '.';
}

// Sends the number `text` (valid JSON number syntax) to the SAX handler `out`: integers
// exactly when they fit 64 bits, otherwise the correctly rounded double (0 for values too
// small for a double). Sets `rejected` and returns false for values beyond double range.
template <class Handler>
bool put_number(Handler& out, const char* text, std::size_t length, bool& rejected) {
  const char* end = text + length;
  bool integral = true;
  for (const char* p = text; p != end; ++p) {
    if (*p == '.' || *p == 'e' || *p == 'E') {
      integral = false;
      break;
    }
  }
  if (integral) {
    if (text[0] == '-') {
      std::int64_t i = 0;
      const auto r = std::from_chars(text, end, i);
      if (r.ec == std::errc{} && r.ptr == end) {
        return i >= std::numeric_limits<int>::min() ? out.Int(static_cast<int>(i)) : out.Int64(i);
      }
    } else {
      std::uint64_t u = 0;
      const auto r = std::from_chars(text, end, u);
      if (r.ec == std::errc{} && r.ptr == end) {
        return u <= std::numeric_limits<unsigned>::max() ? out.Uint(static_cast<unsigned>(u)) : out.Uint64(u);
      }
    }
  }
  double d = 0;
  const auto r = std::from_chars(text, end, d);
  if (r.ec == std::errc::result_out_of_range && underflows(text, end)) {
    return out.Double(text[0] == '-' ? -0.0 : 0.0);
  }
  if (r.ec != std::errc{} || r.ptr != end || !std::isfinite(d)) {
    rejected = true;
    return false;
  }
  return out.Double(d);
}

// True when put_number accepts `text`: without an exponent, fewer than 300 characters are
// always within double range, which spares the conversion for ordinary numbers.
inline bool number_in_range(const char* text, std::size_t length) {
  if (length < 300) {
    bool exponent = false;
    for (std::size_t i = 0; i < length && !exponent; ++i) exponent = text[i] == 'e' || text[i] == 'E';
    if (!exponent) return true;
  }
  struct Discard {
    bool Int(int) { return true; }
    bool Uint(unsigned) { return true; }
    bool Int64(std::int64_t) { return true; }
    bool Uint64(std::uint64_t) { return true; }
    bool Double(double) { return true; }
  } discard;
  bool rejected = false;
  return put_number(discard, text, length, rejected);
}

}  // namespace rpc::detail
