// SPDX-License-Identifier: MIT
// Short calls through a Session's waiting handle, one message of 1, 10 or 100 of them (the
// second argument), inline (/0/n) and with a ThreadPool of 1 or 2 threads (/1/n, /2/n) beside
// the calling thread, which takes its turn at the calls too: what the hand-over to the executor
// costs against what the second thread brings. The third argument is the work of each call, in
// rounds of arithmetic: 820 take about a microsecond on the machine bench/README.md's figures
// come from (the size the targets name), 400 about half that (the only size before
// 2026-12-04; shown beside, for 100 calls).
//
//   ./build/release/bench/batchrpc_bench --benchmark_filter=SessionWork
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <batchrpc/batchrpc.hpp>

#include "measure.hpp"

namespace {

// `rounds` steps of arithmetic, each waiting for the one before: the same time on every call.
std::int64_t work(std::int64_t seed, int rounds) {
  std::uint64_t x = static_cast<std::uint64_t>(seed) | 1U;
  for (int i = 0; i < rounds; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<std::int64_t>(x >> 40);
}

// A router whose method `work` does `rounds` rounds per call.
rpc::Router make_router(int rounds) {
  rpc::Router built;
  built.add("work", [rounds](std::int64_t seed) { return work(seed, rounds); });
  return built;
}

// The router for `rounds` (400 or 820), made once.
const rpc::Router& work_router(int rounds) {
  static const rpc::Router half = make_router(400);
  static const rpc::Router whole = make_router(820);
  return rounds == 400 ? half : whole;
}

void BM_SessionWork(benchmark::State& state) {
  const auto calls = static_cast<int>(state.range(1));
  std::string message = calls > 1 ? "[" : "";
  for (int i = 0; i < calls; ++i) {
    message += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"work","params":[)" +
               std::to_string(i) + R"(],"id":)" + std::to_string(i) + "}";
  }
  if (calls > 1) message += "]";
  const auto threads = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<rpc::ThreadPool> pool = threads > 0 ? std::make_unique<rpc::ThreadPool>(threads) : nullptr;
  rpc::Session session(work_router(static_cast<int>(state.range(2))), {.executor = pool.get()});
  bench::measure(state, calls, [&] { benchmark::DoNotOptimize(session.handle(message)); });
}

}  // namespace

BENCHMARK(BM_SessionWork)
    ->ArgsProduct({{0, 1, 2}, {1, 10, 100}, {820}})
    ->Args({0, 100, 400})
    ->Args({1, 100, 400})
    ->Args({2, 100, 400})
    ->UseRealTime();
