// SPDX-License-Identifier: MIT
// The reference model's bits depend on nothing the machine decides: every method gives the same
// bits whatever CPU cache sizes and thread count Eigen is told about (they size Eigen's own
// matrix-product blocks), and the dense layer sums each output's terms in input order.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "embed/hashing_model.hpp"
#include "embed/ordered_product.hpp"
#include "model_fixture.hpp"

namespace {

using Texts = std::vector<std::string_view>;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::span<float> floats(RowMatrix& m) { return {m.data(), static_cast<std::size_t>(m.size())}; }
std::span<const float> floats(const RowMatrix& m) {
  return {m.data(), static_cast<std::size_t>(m.size())};
}

// `n` texts of 1 to 12 words from a 300-word made-up vocabulary, the same on every run.
std::vector<std::string> make_texts(std::size_t n) {
  static const char* const syllables[] = {"ka", "lo", "mi", "ne", "ru",
                                          "sa", "to", "vi", "be", "do"};
  std::uint64_t state = 7;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>(state >> 33);
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string text;
    for (std::size_t w = 0, words = 1 + next() % 12; w < words; ++w) {
      const std::size_t word = next() % 300;
      if (w > 0) text += ' ';
      text += syllables[word % 10];
      text += syllables[word / 10 % 10];
      text += syllables[word / 100];
    }
    out.push_back(std::move(text));
  }
  return out;
}

// Everything a model computes for one batch: the four methods and the dense layer alone.
struct Outputs {
  embed::DenseVectors dense;
  embed::SparseVectors sparse;
  embed::MultiVectors multi;
  std::vector<float> scores;
  std::vector<float> layer;
};

Outputs compute(const embed::HashingModel& model, const Texts& texts) {
  Outputs out;
  model.embed(texts, out.dense);
  model.embed_sparse(texts, out.sparse);
  model.embed_multi(std::span(texts).first(8), out.multi);
  model.score(texts.front(), std::span(texts).subspan(1, 12), out.scores);
  // The layer alone on 8 rows: the first 16 floats of 8 dense vectors, repeated.
  const std::size_t hidden = model.options().hidden;
  std::vector<float> features(8 * hidden);
  for (std::size_t i = 0; i < features.size(); ++i) {
    features[i] = out.dense.values[(i / hidden) * out.dense.dims + i % 16];
  }
  out.layer.resize(8 * model.options().dimensions);
  model.dense_layer(features, 8, out.layer);
  return out;
}

void check_same(const Outputs& a, const Outputs& b) {
  CHECK(same_bits(a.dense.values, b.dense.values));
  CHECK(same_bits(a.sparse.values, b.sparse.values));
  CHECK(a.sparse.indices == b.sparse.indices);
  CHECK(same_bits(a.multi.vectors.values, b.multi.vectors.values));
  CHECK(same_bits(a.scores, b.scores));
  CHECK(same_bits(a.layer, b.layer));
}

// Puts back the cache sizes Eigen detected (a process-wide setting) when the test ends.
class DetectedCacheSizes {
 public:
  DetectedCacheSizes()
      : l1_(Eigen::l1CacheSize()),
        l2_(Eigen::l2CacheSize()),
        l3_(Eigen::l3CacheSize()),
        threads_(Eigen::nbThreads()) {}
  ~DetectedCacheSizes() {
    Eigen::setCpuCacheSizes(l1_, l2_, l3_);
    Eigen::setNbThreads(threads_);
  }
  DetectedCacheSizes(const DetectedCacheSizes&) = delete;
  DetectedCacheSizes& operator=(const DetectedCacheSizes&) = delete;

 private:
  std::ptrdiff_t l1_, l2_, l3_;
  int threads_;
};

}  // namespace

TEST_SUITE("embed.reproducibility") {
  TEST_CASE("every method gives the same bits whatever cache sizes and threads Eigen is given") {
    // Eigen sizes a product's blocks from the L1/L2/L3 sizes it detects at run time (and, in
    // OpenMP builds, from its thread count); these cover small and old CPUs, today's, and more.
    constexpr std::ptrdiff_t KiB = 1024;
    constexpr std::ptrdiff_t MiB = 1024 * KiB;
    struct Setting {
      std::ptrdiff_t l1, l2, l3;
      int threads;
    };
    const Setting settings[] = {
        {4 * KiB, 64 * KiB, 512 * KiB, 1},   {16 * KiB, 256 * KiB, 2 * MiB, 1},
        {32 * KiB, 256 * KiB, 8 * MiB, 4},   {32 * KiB, 512 * KiB, 32 * MiB, 1},
        {48 * KiB, 1280 * KiB, 30 * MiB, 2}, {64 * KiB, 1 * MiB, 32 * MiB, 1},
        {64 * KiB, 2 * MiB, 256 * MiB, 8},   {1 * MiB, 32 * MiB, 1024 * MiB, 1},
    };
    const std::vector<std::string> storage = make_texts(24);
    const Texts texts(storage.begin(), storage.end());
    const embed::HashingModel odd_shape{{.dimensions = 100, .hidden = 200, .buckets = 512}};
    for (const embed::HashingModel* model : {&test::model(), &odd_shape}) {
      CAPTURE(model->info().name);
      const DetectedCacheSizes restore;
      const Outputs detected = compute(*model, texts);
      for (const Setting& s : settings) {
        CAPTURE(s.l1);
        CAPTURE(s.l2);
        CAPTURE(s.l3);
        CAPTURE(s.threads);
        Eigen::setCpuCacheSizes(s.l1, s.l2, s.l3);
        Eigen::setNbThreads(s.threads);
        check_same(compute(*model, texts), detected);
      }
    }
  }

  TEST_CASE("the dense layer sums each output's terms in input order, as a lazy product does") {
    // Eigen's coefficient-based product computes each output as one sum in index order, with no
    // blocking at all: the dense layer must give exactly its bits.
    const embed::HashingModel odd_shape{{.dimensions = 100, .hidden = 200, .buckets = 512}};
    for (const embed::HashingModel* model : {&test::model(), &odd_shape}) {
      CAPTURE(model->info().name);
      const auto hidden = static_cast<Eigen::Index>(model->options().hidden);
      const auto dims = static_cast<Eigen::Index>(model->options().dimensions);
      // The layer's weights, read back through the layer: the identity's rows pick them out
      // exactly (every other term is zero).
      const RowMatrix identity = RowMatrix::Identity(hidden, hidden);
      RowMatrix weights(hidden, dims);
      model->dense_layer(floats(identity), static_cast<std::size_t>(hidden), floats(weights));
      for (const Eigen::Index rows : {1, 7, 24, 200}) {  // 200: two blocks of texts
        CAPTURE(rows);
        RowMatrix features(rows, hidden);
        std::uint64_t state = 99;
        for (float& f : floats(features)) {  // exact: 24 random bits
          state = state * 6364136223846793005ULL + 1442695040888963407ULL;
          f = static_cast<float>(state >> 40) / 16777216.0f - 0.5f;
        }
        RowMatrix out(rows, dims);
        model->dense_layer(floats(features), static_cast<std::size_t>(rows), floats(out));
        const RowMatrix expected = features.lazyProduct(weights);
        CHECK(same_bits(floats(out), floats(expected)));
      }
    }
  }

  TEST_CASE("ordered products of empty shapes: no inner terms give zeros, no columns give nothing") {
    for (const Eigen::Index depth : {0, 5}) {
      for (const Eigen::Index cols : {0, 3}) {
        CAPTURE(depth);
        CAPTURE(cols);
        const Eigen::MatrixXf lhs = Eigen::MatrixXf::Constant(48, depth, 1.0f);
        const Eigen::MatrixXf rhs = Eigen::MatrixXf::Constant(depth, cols, 2.0f);
        Eigen::MatrixXf out = Eigen::MatrixXf::Constant(48, cols, 7.0f);
        embed::detail::ordered_product(lhs, rhs, out);
        CHECK(out == Eigen::MatrixXf::Constant(48, cols, depth == 0 ? 0.0f : 10.0f));
      }
    }
    const embed::detail::PackedLhs empty;
    Eigen::MatrixXf none(0, 2);
    empty.multiply(Eigen::MatrixXf(0, 2), none);
    CHECK(none.size() == 0);
    CHECK_THROWS_AS(embed::detail::PackedLhs(Eigen::MatrixXf(47, 3)), std::logic_error);
  }
}
