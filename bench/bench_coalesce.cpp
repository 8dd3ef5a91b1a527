// SPDX-License-Identifier: MIT
// Dynamic batching (Router::coalesce) with the embed plugin: C clients, each with a Session and
// a thread of its own, each sending single-text `embed` calls one after another (waiting for
// each reply), with coalescing off, and on with one and two groups at once. The clients keep
// calling for the whole run, so that C calls are always in flight; an iteration is the time the
// next 256 replies take. Throughput in texts/s (compare BM_Embed_Array/n:256, the same texts as
// one call), and each call's latency as p50 and p99 in microseconds.
//
//   ./build/release/bench/batchrpc_bench --benchmark_filter=Embed_Clients
//
// Arguments: /clients/coalesce/base64; coalesce is 0 (off) or max_concurrent_groups.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <batchrpc/batchrpc.hpp>

#include "embed/methods.hpp"
#include "embed_workload.hpp"
#include "measure.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kCallsPerRound = 256;

double percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  const auto k = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(k), samples.end());
  return samples[k];
}

// Counts the replies the clients get, and lets the benchmark's thread sleep until a count is
// reached. Clients never wait here: they keep calling until stopped.
class Replies {
 public:
  void one_more() {
    // Sequentially consistent, with wait_for's store and load: either this sees the new target,
    // or the waiter's check sees this reply.
    if (counted_.fetch_add(1) + 1 == awaited_.load()) {
      std::lock_guard lock(mutex_);
      reached_.notify_all();
    }
  }
  // Returns once `n` more replies have come than when it was called.
  void wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    const std::size_t target = counted_.load() + n;
    awaited_.store(target);
    reached_.wait(lock, [&] { return counted_.load() >= target; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable reached_;
  std::atomic<std::size_t> counted_{0};
  std::atomic<std::size_t> awaited_{0};
};

void BM_Embed_Clients(benchmark::State& state) {
  const auto clients = static_cast<std::size_t>(state.range(0));
  const auto concurrent_groups = static_cast<std::size_t>(state.range(1));
  const bool base64 = state.range(2) != 0;

  rpc::Router router(rpc::Limits{.max_batch = 4096});
  embed::register_methods(router, bench::model(), {.batch_aware = true});
  if (concurrent_groups > 0) router.coalesce("embed", {.max_concurrent_groups = concurrent_groups});
  const std::vector<std::string> texts = bench::texts(kCallsPerRound);
  std::vector<std::string> messages;
  for (std::size_t i = 0; i < kCallsPerRound; ++i) {
    messages.push_back(bench::call(i, bench::quoted_list(texts, i, 1), base64));
  }

  Replies replies;
  std::atomic<bool> stopping{false};
  std::atomic<bool> refused{false};  // a reply that is not a result: the figures mean nothing
  std::vector<std::vector<double>> latencies(clients);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      rpc::Session session(router, {.capabilities = {"embed"}});
      for (std::size_t k = c; !stopping.load(std::memory_order_relaxed); k += clients) {
        const auto t0 = Clock::now();
        const std::optional<std::string> reply = session.handle(messages[k % messages.size()]);
        latencies[c].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (!reply || reply->find(R"("result")") == std::string::npos) refused.store(true);
        replies.one_more();
      }
    });
  }
  replies.wait_for(kCallsPerRound);  // every client has started
  state.counters["started_s"] = bench::seconds_since_start();
  for (auto _ : state) {
    const auto t0 = Clock::now();
    replies.wait_for(kCallsPerRound);
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  stopping.store(true);
  for (std::thread& t : threads) t.join();

  if (refused.load()) state.SkipWithError("a call was not answered with a result");
  std::vector<double> all;
  for (const std::vector<double>& l : latencies) all.insert(all.end(), l.begin(), l.end());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kCallsPerRound));
  state.counters["p50_us"] = percentile(all, 0.50);
  state.counters["p99_us"] = percentile(all, 0.99);
}

}  // namespace

BENCHMARK(BM_Embed_Clients)
    ->ArgsProduct({{1, 8, 64}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"clients", "coalesce", "base64"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
