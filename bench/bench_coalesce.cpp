// SPDX-License-Identifier: MIT
// Dynamic batching (Router::coalesce) with the embed plugin: C clients, each with a Session and
// a thread of its own, each sending single-text `embed` calls one after another (waiting for
// each reply), with coalescing off and on. 256 calls per iteration in all; throughput in texts/s
// (compare BM_Embed_Array/n:256, the same texts as one call), and each call's latency as p50 and
// p99 in microseconds.
//
//   ./build/release/bench/batchrpc_bench --benchmark_filter=Embed_Clients
//
// Arguments: /clients/coalesce/base64.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include <batchrpc/batchrpc.hpp>

#include "embed/methods.hpp"
#include "embed_workload.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kCallsPerRound = 256;

double percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
  return samples[k];
}

void BM_Embed_Clients(benchmark::State& state) {
  const auto clients = static_cast<std::size_t>(state.range(0));
  const bool coalesce = state.range(1) != 0;
  const bool base64 = state.range(2) != 0;
  const std::size_t per_client = kCallsPerRound / clients;

  rpc::Router router(rpc::Limits{.max_batch = 4096});
  embed::register_methods(router, bench::model(), {.batch_aware = true});
  if (coalesce) router.coalesce("embed");
  const std::vector<std::string> texts = bench::texts(kCallsPerRound);
  std::vector<std::string> messages;
  for (std::size_t i = 0; i < kCallsPerRound; ++i) {
    messages.push_back(bench::call(i, bench::quoted_list(texts, i, 1), base64));
  }

  // Each round: the clients start together, each sends its calls, and the round ends when the
  // last reply is in.
  std::barrier start(static_cast<std::ptrdiff_t>(clients + 1));
  std::barrier end(static_cast<std::ptrdiff_t>(clients + 1));
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> latencies(clients);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      rpc::Session session(router);
      for (;;) {
        start.arrive_and_wait();
        if (stop.load()) return;
        for (std::size_t k = 0; k < per_client; ++k) {
          const auto t0 = Clock::now();
          benchmark::DoNotOptimize(session.handle(messages[c * per_client + k]));
          latencies[c].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        }
        end.arrive_and_wait();
      }
    });
  }
  for (auto _ : state) {
    const auto t0 = Clock::now();
    start.arrive_and_wait();
    end.arrive_and_wait();
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  stop.store(true);
  start.arrive_and_wait();
  for (std::thread& t : threads) t.join();

  std::vector<double> all;
  for (const std::vector<double>& l : latencies) all.insert(all.end(), l.begin(), l.end());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(per_client * clients));
  state.counters["p50_us"] = percentile(all, 0.50);
  state.counters["p99_us"] = percentile(all, 0.99);
}

}  // namespace

BENCHMARK(BM_Embed_Clients)
    ->ArgsProduct({{1, 8, 64}, {0, 1}, {0, 1}})
    ->ArgNames({"clients", "coalesce", "base64"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
