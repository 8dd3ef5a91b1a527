// SPDX-License-Identifier: MIT
// Short calls (about 1 µs of work each) through a Session's waiting handle, one message of 1, 10
// or 100 of them (the second argument), inline (/0/n) and with a ThreadPool of 1 or 2 threads
// (/1/n, /2/n) beside the calling thread, which takes its turn at the calls too: what the
// hand-over to the executor costs against what the second thread brings.
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

// About a microsecond of arithmetic, the same amount on every call.
std::int64_t work(std::int64_t seed) {
  std::uint64_t x = static_cast<std::uint64_t>(seed) | 1U;
  for (int i = 0; i < 400; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<std::int64_t>(x >> 40);
}

const rpc::Router& work_router() {
  static const rpc::Router r = [] {
    rpc::Router built;
    built.add("work", [](std::int64_t seed) { return work(seed); });
    return built;
  }();
  return r;
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
  rpc::Session session(work_router(), {.executor = pool.get()});
  bench::measure(state, calls, [&] { benchmark::DoNotOptimize(session.handle(message)); });
}

}  // namespace

BENCHMARK(BM_SessionWork)->ArgsProduct({{0, 1, 2}, {1, 10, 100}})->UseRealTime();
