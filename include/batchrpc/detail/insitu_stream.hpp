// SPDX-License-Identifier: MIT
// The in-situ RapidJSON input stream the message parser reads through.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rapidjson/stream.h>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Reads a NUL-terminated message in place, like rapidjson::InsituStringStream, but faster:
//
// - Its copies carry only the read position. The reader copies its stream into a local for
//   every string and number and back afterwards; InsituStringStream's three pointers were
//   reloaded with one wide load right after narrower stores, which defeats store forwarding
//   and stalled every string. A one-pointer copy is forwarded at once. The write position
//   lives only within one string (PutBegin to PutEnd, on one copy), so it is not copied.
//   Hence Tell() is the read position's address, not an offset: differences between two
//   Tell()s are right, and offset() turns one into an offset from the start of the text.
// - Without escapes in the message (kDecodesEscapes false) no string needs decoding, so its
//   text is exactly the bytes between its quotes: strings are handed over where they lie,
//   and only the closing quote is overwritten, with the terminating NUL. With escapes, every
//   string is decoded onto itself as InsituStringStream does. (A message with a backslash
//   must not use the former: an escape's decoded bytes would be dropped.)
template <bool kDecodesEscapes>
class InsituStream {
 public:
  using Ch = char;

  explicit InsituStream(char* text) : src_(text) {}
  InsituStream(const InsituStream& other) : src_(other.src_) {}
  InsituStream& operator=(const InsituStream& other) {
    src_ = other.src_;
    return *this;
  }

  Ch Peek() const { return *src_; }
  Ch Take() { return *src_++; }
  std::size_t Tell() const { return reinterpret_cast<std::uintptr_t>(src_); }

  // The offset from `text` (where the stream started) of a position that Tell() returned.
  static std::size_t offset(std::size_t tell, const char* text) {
    return tell - reinterpret_cast<std::uintptr_t>(text);
  }

  Ch* PutBegin() { return dst_ = src_; }
  void Put(Ch c) {
    if constexpr (kDecodesEscapes) *dst_++ = c;
  }
  // Called after the string's NUL was put: the length counts it, as RapidJSON expects.
  std::size_t PutEnd(Ch* begin) {
    if constexpr (kDecodesEscapes) return static_cast<std::size_t>(dst_ - begin);
    src_[-1] = '\0';  // the closing quote, just taken
    return static_cast<std::size_t>(src_ - begin);
  }
  void Flush() {}

 private:
  Ch* src_;
  Ch* dst_ = nullptr;
};

}  // namespace rpc::detail

namespace rapidjson {
// As for InsituStringStream: the reader works on local copies of the stream (which also keeps
// the start of a number where ParseNumber's PutBegin() expects it).
template <bool kDecodesEscapes>
struct StreamTraits<rpc::detail::InsituStream<kDecodesEscapes>> {
  enum { copyOptimization = 1 };
};
}  // namespace rapidjson
