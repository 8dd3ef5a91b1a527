// SPDX-License-Identifier: MIT
// Parallel batches: 64 members of ~50 µs CPU work each, on the calling thread alone (/0), and on
// a ThreadPool of 1 (/1) or 2 (/2) threads beside it: the waiting Session::handle lends its own
// thread, so /1 runs on two threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <batchrpc/batchrpc.hpp>

namespace {

// About 50 µs of arithmetic on this kind of machine (calibrated once, not a sleep).
double burn(int rounds) {
  double x = 1.0;
  for (int i = 0; i < rounds; ++i) x = std::sqrt(x + static_cast<double>(i));
  return x;
}

int rounds_for_50us() {
  static const int rounds = [] {
    int n = 1000;
    for (;;) {
      const auto start = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(burn(n));
      const auto took = std::chrono::steady_clock::now() - start;
      if (took >= std::chrono::microseconds(5)) {
        return static_cast<int>(static_cast<double>(n) * 50e-6 / std::chrono::duration<double>(took).count());
      }
      n *= 2;
    }
  }();
  return rounds;
}

void BM_ParallelBatch(benchmark::State& state) {
  rpc::Router router;
  router.add("work", [](int rounds) { return burn(rounds); }, rpc::names("rounds"));
  const std::string rounds = std::to_string(rounds_for_50us());
  std::string message = "[";
  for (int i = 0; i < 64; ++i) {
    message += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"work","params":[)" + rounds +
               R"(],"id":)" + std::to_string(i) + "}";
  }
  message += "]";
  const auto threads = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<rpc::ThreadPool> pool = threads > 0 ? std::make_unique<rpc::ThreadPool>(threads) : nullptr;
  rpc::Session session(router, {.executor = pool.get()});
  for (auto _ : state) benchmark::DoNotOptimize(session.handle(message));
  state.SetItemsProcessed(state.iterations() * 64);
}

}  // namespace

// Five repetitions, reported with their minimum as well: on a shared machine a busy neighbour
// only ever adds time, and it does so more to the two-thread run, which needs both cores.
BENCHMARK(BM_ParallelBatch)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Repetitions(5)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
