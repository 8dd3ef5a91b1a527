// SPDX-License-Identifier: MIT
// UTF-8 validation for strings handlers hand to the writer.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include <rapidjson/encodings.h>
#include <rapidjson/memorystream.h>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (no
// overlongs, surrogates or code points past U+10FFFF), or text.size() when all of it is.
// ASCII is skipped eight bytes at a time; the rest goes through RapidJSON's decoder.
inline std::size_t first_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  struct Discard {
    void Put(char) {}
  } sink;
  while (i < text.size()) {
    for (; i + 8 <= text.size(); i += 8) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + i, sizeof word);
      if (word & 0x8080808080808080ull) break;
    }
    while (i < text.size() && static_cast<unsigned char>(text[i]) < 0x80) ++i;
    if (i == text.size()) break;
    rapidjson::MemoryStream in(text.data() + i, text.size() - i);
    if (!rapidjson::UTF8<>::Validate(in, sink)) return i;
    i += in.Tell();
  }
  return text.size();
}

// True when `text` is printable ASCII with nothing JSON must escape (no '"', '\\', control
// characters or bytes past 0x7f): such a string is written between quotes as it is.
inline bool is_plain_ascii(std::string_view text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || u == '"' || u == '\\') return false;
  }
  return true;
}

// True when `text` is well-formed UTF-8.
inline bool is_valid_utf8(std::string_view text) { return first_invalid_utf8(text) == text.size(); }

}  // namespace rpc::detail
