// SPDX-License-Identifier: MIT
// JSON number text (the parser hands numbers over as text, so ids can be echoed byte for byte)
// to a RapidJSON number, and the range rule both parsers apply.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// For a number out of double range: true when it is too close to zero rather than too big,
// that is when the power of ten of its first significant digit, plus the exponent, is
// negative. (Both parts count: "0.000…01e5" can be tiny, "0.79e309" big.)
inline bool underflows(const char* text, const char* end) {
  constexpr long long cap = 1LL << 40;  // exponents beyond this are all the same here
  const char* p = text[0] == '-' ? text + 1 : text;
  long long integer_digits = 0;
  long long first_significant = -1;  // among the integer digits
  for (; p != end && *p >= '0' && *p <= '9'; ++p, ++integer_digits) {
    if (first_significant < 0 && *p != '0') first_significant = integer_digits;
  }
  bool significant = first_significant >= 0;
  long long power = significant ? integer_digits - 1 - first_significant : 0;
  if (p != end && *p == '.') {
    long long place = 0;
    for (++p; p != end && *p >= '0' && *p <= '9'; ++p) {
      --place;
      if (!significant && *p != '0') {
        significant = true;
        power = place;
      }
    }
  }
  long long exponent = 0;
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool negative = p != end && *p == '-';
    if (p != end && (*p == '-' || *p == '+')) ++p;
    for (; p != end && *p >= '0' && *p <= '9'; ++p) {
      exponent = std::min(cap, exponent * 10 + (*p - '0'));
    }
    if (negative) exponent = -exponent;
  }
  return power + exponent < 0;
}

enum class DoubleText { ok, too_small, too_big };

#if defined(__cpp_lib_to_chars)
// The correctly rounded double of `text` (valid JSON number syntax), by std::from_chars.
inline DoubleText from_chars_to_double(const char* text, const char* end, double& d) {
  const auto r = std::from_chars(text, end, d);
  if (r.ec == std::errc::result_out_of_range) return underflows(text, end) ? DoubleText::too_small : DoubleText::too_big;
  return r.ec == std::errc{} && r.ptr == end && std::isfinite(d) ? DoubleText::ok : DoubleText::too_big;
}
#endif

// The same by std::strtod, for standard libraries without a floating-point std::from_chars
// (libc++ before 20), where the C library's strtod rounds correctly. It reads a NUL-terminated
// copy with the current C locale's decimal point in place of '.'. (RapidJSON's own
// full-precision conversion misreads some long numbers in its release 1.1.0.)
inline DoubleText strtod_to_double(const char* text, const char* end, double& d) {
  const std::string_view point = std::localeconv()->decimal_point;
  std::string copy;
  copy.reserve(static_cast<std::size_t>(end - text) + point.size());
  for (const char* p = text; p != end; ++p) {
    if (*p == '.') {
      copy += point;
    } else {
      copy += *p;
    }
  }
  char* stop = nullptr;
  errno = 0;
  d = std::strtod(copy.c_str(), &stop);
  if (stop != copy.c_str() + copy.size()) return DoubleText::too_big;  // not a number after all
  if (errno == ERANGE && std::fpclassify(d) == FP_ZERO) return DoubleText::too_small;
  return std::isfinite(d) ? DoubleText::ok : DoubleText::too_big;
}

inline DoubleText to_double(const char* text, const char* end, double& d) {
#if defined(__cpp_lib_to_chars)
  return from_chars_to_double(text, end, d);
#else
  return strtod_to_double(text, end, d);
#endif
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
  switch (to_double(text, end, d)) {
    case DoubleText::ok:
      return out.Double(d);
    case DoubleText::too_small:
      return out.Double(text[0] == '-' ? -0.0 : 0.0);
    case DoubleText::too_big:
      break;
  }
  rejected = true;
  return false;
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
