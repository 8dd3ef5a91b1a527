// SPDX-License-Identifier: MIT
// Handler shapes users write, beside the built-in `ping` (which writes its result through
// rpc::ResultWriter): `ping` bound as a typed handler, a std::int64_t in and a struct bound
// with BATCHRPC_FIELDS out, and `ping` returning rpc::Json. Same messages as BM_Ping. Each has
// a tuned floor (dom_floor.hpp) doing the same work on a pooled RapidJSON DOM; bench/report.py
// pairs BM_Shape<X> with BM_TunedFloorShape<X> by name.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <batchrpc/batchrpc.hpp>

#include "dom_floor.hpp"
#include "measure.hpp"
#include "workloads.hpp"

namespace shapes {

struct Pong {
  std::int64_t nonce = 0;
};
BATCHRPC_FIELDS(Pong, nonce);

}  // namespace shapes

namespace {

using bench::batch;
using bench::measure;
using bench::ping;

// No built-ins: `ping` is the handler under test.
rpc::Router shape_router(auto&& handler) {
  rpc::Router built(rpc::Limits{.max_batch = 100000});
  built.add("ping", handler, rpc::names("nonce"));
  return built;
}

const rpc::Router& typed_router() {
  static const rpc::Router r = shape_router([](std::int64_t nonce) { return shapes::Pong{nonce}; });
  return r;
}

// Text made per call and validated by rpc::json, as the README's handlers do.
const rpc::Router& json_router() {
  static const rpc::Router r =
      shape_router([](std::int64_t nonce) { return rpc::json("{\"nonce\":" + std::to_string(nonce) + "}"); });
  return r;
}

void run_router(benchmark::State& state, const rpc::Router& router) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), ping);
  rpc::Buffer out;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(router.handle(message, out)); });
}

template <class Floor>
void run_floor(benchmark::State& state) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), ping);
  Floor floor;
  measure(state, state.range(0), [&] { benchmark::DoNotOptimize(floor.handle(message)); });
}

// The typed handler through a Session without an executor, as a transport calls it. Not
// inline_only, as users register handlers: a singleton takes the session's fast path, while a
// batch's members are enrolled for cancellation (a member may wait for a slow one before it).
void run_session(benchmark::State& state, const rpc::Router& router) {
  const std::string message = batch(static_cast<std::size_t>(state.range(0)), ping);
  rpc::Session session(router);
  measure(state, state.range(0), [&] {
    session.handle(message, [](std::optional<std::string_view> reply) { benchmark::DoNotOptimize(reply); });
  });
}

void BM_ShapeTypedPing(benchmark::State& state) { run_router(state, typed_router()); }
void BM_SessionShapeTypedPing(benchmark::State& state) { run_session(state, typed_router()); }
void BM_TunedFloorShapeTypedPing(benchmark::State& state) { run_floor<bench::TunedTypedPingFloor>(state); }
void BM_ShapeJsonPing(benchmark::State& state) { run_router(state, json_router()); }
void BM_TunedFloorShapeJsonPing(benchmark::State& state) { run_floor<bench::TunedDomValuePingFloor>(state); }

}  // namespace

BENCHMARK(BM_ShapeTypedPing)->Arg(1)->Arg(100);
BENCHMARK(BM_TunedFloorShapeTypedPing)->Arg(1)->Arg(100);
BENCHMARK(BM_SessionShapeTypedPing)->Arg(1)->Arg(100);
BENCHMARK(BM_ShapeJsonPing)->Arg(1)->Arg(100);
BENCHMARK(BM_TunedFloorShapeJsonPing)->Arg(1)->Arg(100);
