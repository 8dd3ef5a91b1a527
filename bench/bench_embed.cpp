// SPDX-License-Identifier: MIT
// The embed plugin (examples/embed/) through the router: `embed` of N texts of about 12 words as
// one call with inputs:[N], as a JSON-RPC batch of N singleton calls (with and without
// batch-aware dispatch), and as N separate messages; float and base64 encoding. Then where the
// time goes (the model alone, the router and reply writing alone), one matrix product against
// one input at a time, and the dense layer's GFLOP/s against Eigen's own product, same shapes,
// same run.
//
//   ./build/release/bench/batchrpc_bench --benchmark_filter=Embed
//
// Arguments: /n/base64 (n texts; base64 1 = "encoding":"base64", 0 = JSON numbers).
// items_per_second is texts per second.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <batchrpc/batchrpc.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "embed/hashing_model.hpp"
#include "embed/methods.hpp"
#include "embed_workload.hpp"
#include "measure.hpp"

namespace {

using bench::call;
using bench::model;
using bench::quoted_list;
using bench::texts;

// Routers with the plugin's methods: batch-aware dispatch off, and on (when the router has
// batch handlers; otherwise both answer member by member).
const rpc::Router& router(bool batch_aware) {
  static const auto make = [](bool aware) {
    rpc::Router r(rpc::Limits{.max_batch = 4096});
    embed::register_methods(r, model(), {.batch_aware = aware});
    return r;
  };
  static const rpc::Router plain = make(false);
  static const rpc::Router aware = make(true);
  return batch_aware ? aware : plain;
}

std::size_t count(const benchmark::State& state) {
  return static_cast<std::size_t>(state.range(0));
}
bool base64(const benchmark::State& state) { return state.range(1) != 0; }

void finish(benchmark::State& state, std::size_t reply_bytes) {
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["reply_bytes"] = static_cast<double>(reply_bytes);
}

// One call, inputs:[n].
void BM_Embed_Array(benchmark::State& state) {
  const std::vector<std::string> t = texts(count(state));
  const std::string message = call(1, quoted_list(t, 0, t.size()), base64(state));
  rpc::Buffer out;
  state.counters["started_s"] = bench::seconds_since_start();  // paired with BM_Embed_Clients
  for (auto _ : state) benchmark::DoNotOptimize(router(false).handle(message, out));
  finish(state, out.size());
}

// One JSON-RPC batch of n singleton calls.
void batch_of_singletons(benchmark::State& state, bool batch_aware) {
  const std::vector<std::string> t = texts(count(state));
  std::string message = "[";
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i > 0) message += ',';
    message += call(i, quoted_list(t, i, 1), base64(state));
  }
  message += "]";
  rpc::Buffer out;
  for (auto _ : state) benchmark::DoNotOptimize(router(batch_aware).handle(message, out));
  finish(state, out.size());
}
void BM_Embed_Batch(benchmark::State& state) { batch_of_singletons(state, false); }
#if defined(BATCHRPC_HAS_BATCH_HANDLERS)
void BM_Embed_BatchAware(benchmark::State& state) { batch_of_singletons(state, true); }
#endif

// n messages, one singleton call each.
void BM_Embed_Messages(benchmark::State& state) {
  const std::vector<std::string> t = texts(count(state));
  std::vector<std::string> messages;
  for (std::size_t i = 0; i < t.size(); ++i)
    messages.push_back(call(i, quoted_list(t, i, 1), base64(state)));
  rpc::Buffer out;
  std::size_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (const std::string& m : messages) {
      benchmark::DoNotOptimize(router(false).handle(m, out));
      bytes += out.size();
    }
  }
  finish(state, bytes);
}

// Where the time goes, part 1: the model alone on the same n texts (one backend call).
void BM_Embed_Model(benchmark::State& state) {
  const std::vector<std::string> t = texts(count(state));
  const std::vector<std::string_view> views(t.begin(), t.end());
  embed::DenseVectors out;
  for (auto _ : state) {
    model().embed(views, out);
    benchmark::DoNotOptimize(out.values.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// Part 2: everything but the model (parse, check, write the reply): the same call on a backend
// that hands back vectors computed beforehand.
class CannedBackend final : public embed::Backend {
 public:
  explicit CannedBackend(const std::vector<std::string_view>& texts) {
    model().embed(texts, vectors_);
  }
  const embed::ModelInfo& info() const noexcept override { return model().info(); }
  void embed(std::span<const std::string_view> texts, embed::DenseVectors& out) const override {
    out.dims = vectors_.dims;
    out.values.assign(
        vectors_.values.begin(),
        vectors_.values.begin() + static_cast<std::ptrdiff_t>(texts.size() * vectors_.dims));
  }
  void embed_sparse(std::span<const std::string_view>, embed::SparseVectors&) const override {}
  void embed_multi(std::span<const std::string_view>, embed::MultiVectors&) const override {}
  void score(std::string_view, std::span<const std::string_view>,
             std::vector<float>&) const override {}

 private:
  embed::DenseVectors vectors_;
};

void BM_Embed_ArrayWithoutModel(benchmark::State& state) {
  const std::vector<std::string> t = texts(count(state));
  const std::vector<std::string_view> views(t.begin(), t.end());
  const CannedBackend canned(views);
  rpc::Router r;
  embed::register_methods(r, canned);
  const std::string message = call(1, quoted_list(t, 0, t.size()), base64(state));
  rpc::Buffer out;
  for (auto _ : state) benchmark::DoNotOptimize(r.handle(message, out));
  finish(state, out.size());
}

// The model one input at a time (n backend calls) against BM_Embed_Model's one product.
void BM_Embed_ModelPerInput(benchmark::State& state) {
  const std::vector<std::string> t = texts(count(state));
  embed::DenseVectors out;
  for (auto _ : state) {
    for (const std::string& text : t) {
      const std::string_view one[] = {text};
      model().embed(one, out);
      benchmark::DoNotOptimize(out.values.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// The model against the machine: the dense layer (n x 768 times 768 x 384) as the model runs it,
// and Eigen's plain product on the same shapes, interleaved in one loop so both see the same
// machine. Counters: GFLOP/s of each, `fraction` = model / Eigen; `embed_fraction` counts a
// whole embed() of n texts (tokens, pooling, normalisation included) as dense-layer FLOPs only.
void BM_Embed_DenseLayerVsEigen(benchmark::State& state) {
  using Clock = std::chrono::steady_clock;
  const auto n = static_cast<Eigen::Index>(state.range(0));
  const Eigen::Index hidden = 768;
  const Eigen::Index dims = 384;
  const Eigen::MatrixXf features_matrix =
      Eigen::MatrixXf::Random(hidden, n);  // = row-major n x 768
  const std::vector<float> features(features_matrix.data(), features_matrix.data() + hidden * n);
  std::vector<float> layer_out(static_cast<std::size_t>(n * dims));
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, hidden);
  const Eigen::MatrixXf b = Eigen::MatrixXf::Random(hidden, dims);
  Eigen::MatrixXf c(n, dims);
  const std::vector<std::string> t = texts(static_cast<std::size_t>(n));
  const std::vector<std::string_view> views(t.begin(), t.end());
  embed::DenseVectors vectors;

  double layer_s = 0;
  double eigen_s = 0;
  double embed_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    model().dense_layer(features, static_cast<std::size_t>(n), layer_out);
    benchmark::DoNotOptimize(layer_out.data());
    const auto t1 = Clock::now();
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    const auto t2 = Clock::now();
    model().embed(views, vectors);
    benchmark::DoNotOptimize(vectors.values.data());
    const auto t3 = Clock::now();
    layer_s += std::chrono::duration<double>(t1 - t0).count();
    eigen_s += std::chrono::duration<double>(t2 - t1).count();
    embed_s += std::chrono::duration<double>(t3 - t2).count();
  }
  const double flops =
      2.0 * static_cast<double>(n * hidden * dims) * static_cast<double>(state.iterations());
  state.counters["layer_GFLOPs"] = flops / layer_s / 1e9;
  state.counters["eigen_GFLOPs"] = flops / eigen_s / 1e9;
  state.counters["fraction"] = eigen_s / layer_s;
  state.counters["embed_fraction"] = eigen_s / embed_s;
}

const std::vector<std::vector<std::int64_t>> sizes_and_encodings{{1, 32, 256}, {0, 1}};

}  // namespace

BENCHMARK(BM_Embed_Array)->ArgsProduct(sizes_and_encodings)->ArgNames({"n", "base64"});
BENCHMARK(BM_Embed_Batch)->ArgsProduct(sizes_and_encodings)->ArgNames({"n", "base64"});
#if defined(BATCHRPC_HAS_BATCH_HANDLERS)
BENCHMARK(BM_Embed_BatchAware)->ArgsProduct(sizes_and_encodings)->ArgNames({"n", "base64"});
#endif
BENCHMARK(BM_Embed_Messages)->ArgsProduct(sizes_and_encodings)->ArgNames({"n", "base64"});
BENCHMARK(BM_Embed_ArrayWithoutModel)->ArgsProduct(sizes_and_encodings)->ArgNames({"n", "base64"});
BENCHMARK(BM_Embed_Model)->Arg(1)->Arg(32)->Arg(256)->ArgName("n");
BENCHMARK(BM_Embed_ModelPerInput)->Arg(32)->Arg(256)->ArgName("n");
BENCHMARK(BM_Embed_DenseLayerVsEigen)->Arg(256)->ArgName("n");
