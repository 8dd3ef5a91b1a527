// SPDX-License-Identifier: MIT
// A batch of 100 short calls (about 1 µs of work each) through a Session's waiting handle,
// inline (/0) and with a ThreadPool of 1 or 2 threads (/1, /2) beside the calling thread, which
// takes a share of the calls too: what the hand-over to the executor costs against what the
// second thread brings.
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
  std::string message = "[";
  for (int i = 0; i < 100; ++i) {
    message += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"work","params":[)" +
               std::to_string(i) + R"(],"id":)" + std::to_string(i) + "}";
  }
  message += "]";
  const auto threads = static_cast<std::size_t>(state.range(0));
  std::unique_ptr<rpc::ThreadPool> pool = threads > 0 ? std::make_unique<rpc::ThreadPool>(threads) : nullptr;
  rpc::Session session(work_router(), {.executor = pool.get()});
  bench::measure(state, 100, [&] { benchmark::DoNotOptimize(session.handle(message)); });
}

}  // namespace

BENCHMARK(BM_SessionWork)->Arg(0)->Arg(1)->Arg(2)->UseRealTime();
