// SPDX-License-Identifier: MIT
/// @file buffer.hpp
/// `rpc::Buffer`: a reusable output buffer for replies.
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include <rapidjson/stringbuffer.h>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * A growable byte buffer that replies are written into. Reuse one per connection or thread: it
 * keeps its capacity, so a serving loop allocates nothing per message once warmed up.
 *
 * Not thread-safe: one writer at a time.
 */
class Buffer {
 public:
  /// The bytes written so far.
  [[nodiscard]] std::string_view view() const noexcept {
    return {sb_.GetString(), sb_.GetSize()};
  }
  /// A copy of the bytes written so far.
  [[nodiscard]] std::string str() const { return std::string(view()); }
  /// Number of bytes written.
  [[nodiscard]] std::size_t size() const noexcept { return sb_.GetSize(); }
  /// Bytes the buffer can hold before it grows.
  [[nodiscard]] std::size_t capacity() const noexcept { return sb_.stack_.GetCapacity(); }
  /// True when nothing is written.
  [[nodiscard]] bool empty() const noexcept { return sb_.GetSize() == 0; }
  /// Forgets the content and keeps the capacity.
  void clear() noexcept { sb_.Clear(); }
  /// Forgets the content and gives the memory back.
  void release() {
    sb_.Clear();
    sb_.ShrinkToFit();
  }

  /// Appends raw bytes (the caller guarantees they keep the output valid JSON).
  void append(std::string_view bytes) {
    if (!bytes.empty()) std::memcpy(sb_.Push(bytes.size()), bytes.data(), bytes.size());
  }
  /// Appends one byte.
  void append(char c) { sb_.Put(c); }
  /// Drops everything after the first `size` bytes.
  void truncate(std::size_t size) noexcept {
    if (size < sb_.GetSize()) sb_.Pop(sb_.GetSize() - size);
  }

  /// Exchanges the contents (and capacities) of two buffers.
  void swap(Buffer& other) noexcept { sb_.stack_.Swap(other.sb_.stack_); }

  /// The RapidJSON stream underneath, for `rapidjson::Writer`.
  [[nodiscard]] rapidjson::StringBuffer& stream() noexcept { return sb_; }

 private:
  rapidjson::StringBuffer sb_;
};

}  // namespace rpc
