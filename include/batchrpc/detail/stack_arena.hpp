// SPDX-License-Identifier: MIT
// The allocator of a document's parse stack: one buffer, grown in place and kept from message
// to message.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace rpc::detail {

// RapidJSON grows its parse stack by asking for a larger block each time. From a memory pool
// every step would leave the old block behind (about three times the stack in all); here the
// one buffer is reallocated, so the stack costs what it holds (and up to half as much again,
// the growth step). A stack frees its memory through a static Free(), which cannot reach the
// arena: Free does nothing, and the arena owns its buffer until trim() or its destruction.
class StackArena {
 public:
  static constexpr bool kNeedFree = true;

  StackArena() = default;
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;
  ~StackArena() { std::free(buffer_); }

  void* Malloc(std::size_t size) { return Realloc(nullptr, 0, size); }
  // Only one stack uses the arena, so the block asked about is always the buffer (or a fresh
  // start, whose old content does not matter).
  void* Realloc(void*, std::size_t, std::size_t size) {
    if (size > capacity_) {
      void* grown = std::realloc(buffer_, size);
      if (grown == nullptr) throw std::bad_alloc();
      buffer_ = grown;
      capacity_ = size;
    }
    return buffer_;
  }
  static void Free(void*) noexcept {}

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  // Gives the buffer back when it is larger than `keep` bytes (between messages only).
  void trim(std::size_t keep) noexcept {
    if (capacity_ <= keep) return;
    std::free(buffer_);
    buffer_ = nullptr;
    capacity_ = 0;
  }

 private:
  void* buffer_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace rpc::detail
