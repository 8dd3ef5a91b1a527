// SPDX-License-Identifier: MIT
// Counts heap allocations by interposing glibc's malloc family, so RapidJSON's allocators
// are seen as well as operator new. Each benchmark reports allocations per request from it.
#include "allocation_counter.hpp"

#include <atomic>
#include <cstddef>

namespace {
std::atomic<long> count{0};
}

long bench::allocations() { return count.load(std::memory_order_relaxed); }

#if defined(__GLIBC__)
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void __libc_free(void* ptr);

void* malloc(std::size_t size) {
  count.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  count.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
void* realloc(void* ptr, std::size_t size) {
  count.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
}
#endif
