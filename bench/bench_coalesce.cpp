// SPDX-License-Identifier: MIT
// Dynamic batching (Router::coalesce) with the embed plugin: C clients, each with a Session and
// a thread of its own, each sending single-text `embed` calls one after another (waiting for
// each reply), with coalescing off, and on with one and two groups at once. 256 calls per iteration in all; throughput in texts/s
// (compare BM_Embed_Array/n:256, the same texts as one call), and each call's latency as p50 and
// p99 in microseconds.
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

// Rounds of work handed to client threads. A mutex and a condition variable rather than
// std::barrier: clients done early must sleep, not spin, while the others' calls run.
class Rounds {
 public:
  explicit Rounds(std::size_t clients) : clients_(clients) {}
  // Starts a round and returns when every client has finished it.
  void run() {
    std::unique_lock lock(mutex_);
    ++round_;
    finished_ = 0;
    changed_.notify_all();
    changed_.wait(lock, [this] { return finished_ == clients_; });
  }
  void stop() {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  // A client: waits for the round after `last`; false when stopping.
  bool next(std::size_t& last) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopping_ || round_ != last; });
    last = round_;
    return !stopping_;
  }
  void finished() {
    std::lock_guard lock(mutex_);
    if (++finished_ == clients_) changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  const std::size_t clients_;
  std::size_t round_ = 0;
  std::size_t finished_ = 0;
  bool stopping_ = false;
};

void BM_Embed_Clients(benchmark::State& state) {
  const auto clients = static_cast<std::size_t>(state.range(0));
  const auto concurrent_groups = static_cast<std::size_t>(state.range(1));
  const bool base64 = state.range(2) != 0;
  const std::size_t per_client = kCallsPerRound / clients;

  rpc::Router router(rpc::Limits{.max_batch = 4096});
  embed::register_methods(router, bench::model(), {.batch_aware = true});
  if (concurrent_groups > 0) router.coalesce("embed", {.max_concurrent_groups = concurrent_groups});
  const std::vector<std::string> texts = bench::texts(kCallsPerRound);
  std::vector<std::string> messages;
  for (std::size_t i = 0; i < kCallsPerRound; ++i) {
    messages.push_back(bench::call(i, bench::quoted_list(texts, i, 1), base64));
  }

  // Each round: the clients start together, each sends its calls, and the round ends when the
  // last reply is in.
  Rounds rounds(clients);
  std::atomic<bool> refused{false};  // a reply that is not a result: the figures mean nothing
  std::vector<std::vector<double>> latencies(clients);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      rpc::Session session(router, {.capabilities = {"embed"}});
      for (std::size_t round = 0; rounds.next(round);) {
        for (std::size_t k = 0; k < per_client; ++k) {
          const auto t0 = Clock::now();
          const std::optional<std::string> reply = session.handle(messages[c * per_client + k]);
          latencies[c].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
          if (!reply || reply->find(R"("result")") == std::string::npos) refused.store(true);
        }
        rounds.finished();
      }
    });
  }
  state.counters["started_s"] = bench::seconds_since_start();
  for (auto _ : state) {
    const auto t0 = Clock::now();
    rounds.run();
    state.SetIterationTime(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  rounds.stop();
  for (std::thread& t : threads) t.join();

  if (refused.load()) state.SkipWithError("a call was not answered with a result");
  std::vector<double> all;
  for (const std::vector<double>& l : latencies) all.insert(all.end(), l.begin(), l.end());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(per_client * clients));
  state.counters["p50_us"] = percentile(all, 0.50);
  state.counters["p99_us"] = percentile(all, 0.99);
}

}  // namespace

BENCHMARK(BM_Embed_Clients)
    ->ArgsProduct({{1, 8, 64}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"clients", "coalesce", "base64"})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
