// SPDX-License-Identifier: MIT
// The measuring loop the router, shape and stream benchmarks share.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "allocation_counter.hpp"

namespace bench {

// Seconds since the first measurement of this process began. Google Benchmark 1.7.1's
// --benchmark_enable_random_interleaving shuffles the repetitions of every benchmark as one
// list (RunBenchmarks in its src/benchmark.cc): there are no rounds, and repetition k of two
// benchmarks can run far apart. Each run records when it started, so that bench/report.py can
// pair a run with the run of its counterpart nearest in time.
inline double seconds_since_start() {
  static const auto start = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `one` per iteration after a warm-up, and reports requests/s, allocations/request (all
// threads: a server thread's count too) and when the timed loop started.
template <class F>
void measure(benchmark::State& state, std::int64_t requests, F&& one) {
  one();
  const long before = allocations();
  state.counters["started_s"] = seconds_since_start();
  for (auto _ : state) one();
  const long allocated = allocations() - before;
  state.SetItemsProcessed(state.iterations() * requests);
  state.counters["allocs_per_request"] =
      static_cast<double>(allocated) / static_cast<double>(state.iterations() * requests);
}

}  // namespace bench
