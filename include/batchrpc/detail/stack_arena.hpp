// SPDX-License-Identifier: MIT
// The allocator of a document's parse stack: one buffer, grown in place and kept from message
// to message.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>

#include "../config.hpp"
#endif

namespace rpc::inline BATCHRPC_ABI::detail {

// RapidJSON grows its parse stack by asking for a larger block each time. From a memory pool
// every step would leave the old block behind (about three times the stack in all); here the
// one buffer is reallocated, so the stack costs what it holds (and up to half as much again,
// the growth step). On Linux a large stack is a mapping of its own, grown with mremap, which
// moves pages instead of copying them: the heap's realloc would copy a block of up to 32 MiB
// (glibc's largest heap block) and keep both resident for a while. A stack frees its memory
// through a static Free(), which cannot reach the arena: Free does nothing, and the arena owns
// its buffer until trim() or its destruction.
class StackArena {
 public:
  static constexpr bool kNeedFree = true;

  StackArena() = default;
  StackArena(const StackArena&) = delete;
  StackArena& operator=(const StackArena&) = delete;
  ~StackArena() { trim(0); }

  void* Malloc(std::size_t size) { return Realloc(nullptr, 0, size); }
  // Only one stack uses the arena, so the block asked about is always the buffer (or a fresh
  // start, whose old content does not matter).
  void* Realloc(void*, std::size_t, std::size_t size) {
    if (size > capacity_) grow(size);
    return buffer_;
  }
  static void Free(void*) noexcept {}

  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  // Gives the buffer back when it is larger than `keep` bytes (between messages only).
  void trim(std::size_t keep) noexcept {
    if (capacity_ <= keep || buffer_ == nullptr) return;
#if defined(__linux__)
    if (mapped_) {
      ::munmap(buffer_, capacity_);
    } else {
      std::free(buffer_);
    }
#else
    std::free(buffer_);
#endif
    buffer_ = nullptr;
    capacity_ = 0;
    mapped_ = false;
  }

 private:
  static constexpr std::size_t kMapFrom = std::size_t{1} << 20;

  void grow(std::size_t size) {
#if defined(__linux__)
    if (size >= kMapFrom) return grow_mapped(size);
#endif
    void* grown = std::realloc(buffer_, size);
    if (grown == nullptr) throw std::bad_alloc();
    buffer_ = grown;
    capacity_ = size;
  }

#if defined(__linux__)
  void grow_mapped(std::size_t size) {
    constexpr std::size_t page = 4096;
    size = (size + page - 1) / page * page;
    void* grown = mapped_ ? ::mremap(buffer_, capacity_, size, MREMAP_MAYMOVE)
                          : ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (grown == MAP_FAILED) throw std::bad_alloc();
    if (!mapped_ && buffer_ != nullptr) {  // from the heap to a mapping: the one copy
      std::memcpy(grown, buffer_, capacity_);
      std::free(buffer_);
    }
    buffer_ = grown;
    capacity_ = size;
    mapped_ = true;
  }
#endif

  void* buffer_ = nullptr;
  std::size_t capacity_ = 0;
  bool mapped_ = false;
};

}  // namespace rpc::detail
