// SPDX-License-Identifier: MIT
// Heap allocations made by this process so far (malloc, calloc, realloc and operator new,
// which goes through malloc), counted by bench_allocations.cpp.
#pragma once

namespace bench {
long allocations();
}  // namespace bench
