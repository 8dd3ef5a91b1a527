// SPDX-License-Identifier: MIT
// Router throughput, side by side with the plain RapidJSON DOM floor (dom_floor.hpp). Each
// benchmark reports requests per second and heap allocations per request; payloads are
// generated here. bench/report.py turns the JSON output into the table in bench/README.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>

#include <batchrpc/batchrpc.hpp>

#include "dom_floor.hpp"
#include "measure.hpp"
#include "router_fixture.hpp"
#include "workloads.hpp"

namespace {

using bench::batch;
using bench::measure;
using bench::ping;
using bench::router;
using bench::subtract;

// Every third member a notification, four malformed members.
std::string mixed_batch() {
  return batch(100, [](std::size_t i) -> std::string {
    if (i == 10 || i == 40 || i == 70 || i == 95) return i % 2 ? "1" : R"({"foo":"boo"})";
    if (i % 3 == 2) return R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":)" + std::to_string(i) + "}}";
    return ping(i);
  });
}

std::string struct_params(std::size_t i) {
  return R"({"jsonrpc":"2.0","method":"order","params":{"customer":"c-)" + std::to_string(i) +
         R"(","quantity":)" + std::to_string(i % 7 + 1) +
         R"(,"price":19.99,"express":true,"note":"leave at the door","items":[1,2,3,4]},"id":)" +
         std::to_string(i) + "}";
}

void BM_Ping(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::string message = batch(n, ping);
  rpc::Buffer out;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
}

void BM_FloorPing(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::string message = batch(n, ping);
  bench::DomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

void BM_TunedFloorPing(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::string message = batch(n, ping);
  bench::TunedDomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

// The same batch, its first member's id holding an escape.
std::string escaped_ping_batch(std::size_t n) {
  return batch(n, [](std::size_t i) { return i == 0 ? bench::ping_with_escape(i) : ping(i); });
}

void BM_PingEscaped(benchmark::State& state) {
  const std::string message = escaped_ping_batch(static_cast<std::size_t>(state.range(0)));
  rpc::Buffer out;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
}

void BM_FloorPingEscaped(benchmark::State& state) {
  const std::string message = escaped_ping_batch(static_cast<std::size_t>(state.range(0)));
  bench::DomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

void BM_TunedFloorPingEscaped(benchmark::State& state) {
  const std::string message = escaped_ping_batch(static_cast<std::size_t>(state.range(0)));
  bench::TunedDomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

// The in-situ entry point: the transport's read buffer is parsed in place.
void BM_PingInsitu(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), ping);
  std::string read_buffer;
  rpc::Buffer out;
  measure(state, state.range(0), [&] {
    read_buffer.assign(message);  // what a transport's read would do
    benchmark::DoNotOptimize(router().handle_insitu(read_buffer, out));
  });
}

// The plain entry point: string_view in, std::string out.
void BM_PingPlain(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), ping);
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(router().handle(message)); });
}

void BM_SubtractPositional(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), [](std::size_t i) { return subtract(i, false); });
  rpc::Buffer out;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
}

void BM_FloorSubtractPositional(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), [](std::size_t i) { return subtract(i, false); });
  bench::DomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

void BM_TunedFloorSubtractPositional(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), [](std::size_t i) { return subtract(i, false); });
  bench::TunedDomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

void BM_SubtractNamed(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), [](std::size_t i) { return subtract(i, true); });
  rpc::Buffer out;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
}

void BM_FloorSubtractNamed(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), [](std::size_t i) { return subtract(i, true); });
  bench::DomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

void BM_TunedFloorSubtractNamed(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), [](std::size_t i) { return subtract(i, true); });
  bench::TunedDomFloor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

void BM_MixedBatch(benchmark::State& state) {
  const std::string message = mixed_batch();
  rpc::Buffer out;
  measure(state, 100, [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
}

void BM_StructParams(benchmark::State& state) {
  const std::string message = batch(100, struct_params);
  rpc::Buffer out;
  measure(state, 100, [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
}

void BM_LargeString(benchmark::State& state) {
  const std::string message = R"({"jsonrpc":"2.0","method":"length","params":[")" +
                              std::string(std::size_t{1} << 20, 'x') + R"("],"id":1})";
  rpc::Buffer out;
  measure(state, 1, [&] { benchmark::DoNotOptimize(router().handle(message, out)); });
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(message.size()));
}

// The same batch through a session without an executor (the stream transports' path).
void BM_SessionPing(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), ping);
  rpc::Session session(router());
  measure(state, state.range(0), [&] {
    session.handle(message, [](std::optional<std::string_view> reply) { benchmark::DoNotOptimize(reply); });
  });
}

}  // namespace

BENCHMARK(BM_Ping)->Arg(1)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_FloorPing)->Arg(1)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_TunedFloorPing)->Arg(1)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_PingEscaped)->Arg(100);
BENCHMARK(BM_FloorPingEscaped)->Arg(100);
BENCHMARK(BM_TunedFloorPingEscaped)->Arg(100);
BENCHMARK(BM_PingInsitu)->Arg(1)->Arg(100);
BENCHMARK(BM_PingPlain)->Arg(1)->Arg(100);
BENCHMARK(BM_SubtractPositional)->Arg(1)->Arg(100);
BENCHMARK(BM_FloorSubtractPositional)->Arg(1)->Arg(100);
BENCHMARK(BM_TunedFloorSubtractPositional)->Arg(1)->Arg(100);
BENCHMARK(BM_SubtractNamed)->Arg(1)->Arg(100);
BENCHMARK(BM_FloorSubtractNamed)->Arg(1)->Arg(100);
BENCHMARK(BM_TunedFloorSubtractNamed)->Arg(1)->Arg(100);
BENCHMARK(BM_MixedBatch);
BENCHMARK(BM_StructParams);
BENCHMARK(BM_LargeString);
BENCHMARK(BM_SessionPing)->Arg(1)->Arg(100);
