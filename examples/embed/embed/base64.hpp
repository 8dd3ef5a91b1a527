// SPDX-License-Identifier: MIT
/// @file base64.hpp
/// The compact float encoding: little-endian float32 values as standard base64 (RFC 4648 §4,
/// padded), as in `"encoding": "base64"`.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace embed::base64 {

namespace detail {
inline constexpr char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of each alphabet character, 0xFF for anything else.
inline constexpr std::array<unsigned char, 256> values = [] {
  std::array<unsigned char, 256> table{};
  table.fill(0xFF);
  for (unsigned char i = 0; i < 64; ++i) table[static_cast<unsigned char>(alphabet[i])] = i;
  return table;
}();

inline void append_bytes(const unsigned char* in, std::size_t size, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + (size + 2) / 3 * 4);
  char* o = out.data() + start;
  std::size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const std::uint32_t v =
        (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8) | in[i + 2];
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
    *o++ = alphabet[(v >> 6) & 63];
    *o++ = alphabet[v & 63];
  }
  if (i < size) {
    const bool two = i + 1 < size;
    const std::uint32_t v =
        (std::uint32_t{in[i]} << 16) | (two ? std::uint32_t{in[i + 1]} << 8 : 0U);
    *o++ = alphabet[v >> 18];
    *o++ = alphabet[(v >> 12) & 63];
    *o++ = two ? alphabet[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
}
}  // namespace detail

/// Appends the base64 text of `values` as little-endian IEEE-754 float32 to `out`
/// (4 bytes per float, so `(4n + 2) / 3 * 4` characters).
inline void append_floats(std::span<const float> values, std::string& out) {
  static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);
  if constexpr (std::endian::native == std::endian::little) {
    detail::append_bytes(reinterpret_cast<const unsigned char*>(values.data()), values.size() * 4,
                         out);
  } else {
    std::vector<unsigned char> bytes(values.size() * 4);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto bits = std::bit_cast<std::uint32_t>(values[i]);
      for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<unsigned char>(bits >> (8 * b));
    }
    detail::append_bytes(bytes.data(), bytes.size(), out);
  }
}

/// The base64 text of `values` (see `append_floats`).
[[nodiscard]] inline std::string encode_floats(std::span<const float> values) {
  std::string out;
  append_floats(values, out);
  return out;
}

/// Decodes what `encode_floats` makes: padded base64 of a multiple of 4 bytes. Returns
/// `std::nullopt` for anything else (bad characters, bad padding, a length that is not whole
/// floats).
[[nodiscard]] inline std::optional<std::vector<float>> decode_floats(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::vector<unsigned char> bytes;
  bytes.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    if (pad == 1 && text[i + 2] == '=') return std::nullopt;  // "x=y=" is not padding
    std::uint32_t v = 0;
    for (int k = 0; k < 4 - pad; ++k) {
      const unsigned char d =
          detail::values[static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)])];
      if (d == 0xFF) return std::nullopt;
      v |= std::uint32_t{d} << (18 - 6 * k);
    }
    bytes.push_back(static_cast<unsigned char>(v >> 16));
    if (pad < 2) bytes.push_back(static_cast<unsigned char>(v >> 8));
    if (pad < 1) bytes.push_back(static_cast<unsigned char>(v));
  }
  if (bytes.size() % 4 != 0) return std::nullopt;
  std::vector<float> floats(bytes.size() / 4);
  for (std::size_t i = 0; i < floats.size(); ++i) {
    std::uint32_t bits = 0;
    for (int b = 0; b < 4; ++b)
      bits |= std::uint32_t{bytes[i * 4 + static_cast<std::size_t>(b)]} << (8 * b);
    floats[i] = std::bit_cast<float>(bits);
  }
  return floats;
}

}  // namespace embed::base64
