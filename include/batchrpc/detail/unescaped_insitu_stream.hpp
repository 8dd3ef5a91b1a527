// SPDX-License-Identifier: MIT
// An in-situ RapidJSON input stream for messages that hold no backslash.
#pragma once

#include <cstddef>
#include <cstdint>

#include <rapidjson/stream.h>

namespace rpc::detail {

// Without a backslash no string needs unescaping, so a string's decoded text is exactly the
// bytes between its quotes. This stream hands those bytes to the handler where they lie
// instead of copying them onto themselves one by one as rapidjson::InsituStringStream does;
// only the closing quote is overwritten, with the terminating NUL. Only valid for text
// without '\\': an escape's decoded bytes would be dropped.
//
// It is a single pointer on purpose: the reader copies its stream into a local for every
// string and number and back afterwards, and an 8-byte copy is forwarded straight from the
// store before it, where a two-pointer stream stalls the load on every string. So Tell() is
// the read position's address, not an offset: differences between two Tell()s are right, and
// offset() turns one into an offset from the start of the text.
struct UnescapedInsituStream {
  using Ch = char;

  explicit UnescapedInsituStream(char* text) : src_(text) {}

  Ch Peek() const { return *src_; }
  Ch Take() { return *src_++; }
  std::size_t Tell() const { return reinterpret_cast<std::uintptr_t>(src_); }

  // The offset from `text` (where the stream started) of a position that Tell() returned.
  static std::size_t offset(std::size_t tell, const char* text) {
    return tell - reinterpret_cast<std::uintptr_t>(text);
  }

  // The decoded string is the source text itself, so there is nothing to write.
  void Put(Ch) {}
  Ch* PutBegin() { return src_; }
  // Called after the closing quote was taken: it becomes the string's NUL, and the length
  // counts it, as RapidJSON expects from a stream that wrote the NUL.
  std::size_t PutEnd(Ch* begin) {
    src_[-1] = '\0';
    return static_cast<std::size_t>(src_ - begin);
  }
  void Flush() {}

  Ch* src_;
};

}  // namespace rpc::detail

namespace rapidjson {
// Like InsituStringStream: the reader works on a local copy of the stream (which also keeps
// the start of a number where ParseNumber's PutBegin() expects it).
template <>
struct StreamTraits<rpc::detail::UnescapedInsituStream> {
  enum { copyOptimization = 1 };
};
}  // namespace rapidjson
