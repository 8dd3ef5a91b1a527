// SPDX-License-Identifier: MIT
/// @file hashing_model.hpp
/// `embed::HashingModel`: the deterministic reference backend (hashed tokens, seeded weights).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"

namespace embed {

/// Shape and seed of a `HashingModel`.
struct HashingModelOptions {
  /// Floats per dense vector (the dense layer's output width).
  std::size_t dimensions = 384;
  /// Width of the token embedding table, which is the dense layer's input width.
  std::size_t hidden = 768;
  /// Rows of the token embedding table; also the sparse index space.
  std::size_t buckets = 4096;
  /// Every weight derives from this seed: same seed, same model, on every machine.
  std::uint64_t seed = 42;
  /// Tokens of one text beyond this many are ignored (an encoder's window).
  std::size_t max_tokens = 512;
};

/**
 * A small encoder that needs no download: every weight is generated from a seed at
 * construction (about 13 MB for the defaults).
 *
 * - Tokenisation: ASCII letters are lowercased; a token is a run of ASCII letters and digits
 *   and bytes >= 0x80 (so UTF-8 words stay whole); everything else separates tokens. A text
 *   with no token is one token (its whole bytes).
 * - Each token is hashed (FNV-1a 64, seeded) to a bucket, a row of a seeded `buckets x hidden`
 *   embedding table.
 * - Dense: the text's rows are mean-pooled, put through a seeded `hidden x dimensions` dense
 *   layer (one matrix product for the whole array of texts) and L2-normalised.
 * - Sparse: `sqrt(tf) * w[bucket]` over the text's buckets (w seeded in [0.5, 1.5]),
 *   L2-normalised, indices ascending.
 * - Multi-vector: each token's row plus its text's pooled row, through the same dense layer
 *   (all tokens of all texts as one product), L2-normalised.
 * - Score: the cosine similarity between the query's and each passage's dense vectors (one
 *   product: the passages' vectors as rows times the query's).
 *
 * Determinism: a text's vectors do not depend on the rest of its batch, nor a passage's score on
 * the other passages, bit for bit; nor on the machine: every dense product sums each output in
 * input order, whatever cache sizes and thread count Eigen detects (see ordered_product.cpp).
 *
 * Thread-safety: immutable after construction; every method may be called concurrently.
 *
 * @code
 * embed::HashingModel model{{.dimensions = 384, .seed = 42}};
 * embed::DenseVectors out;
 * std::vector<std::string_view> texts{"hello world", "good morning"};
 * model.embed(texts, out);  // out.rows() == 2, out.dims == 384
 * @endcode
 */
class HashingModel final : public Backend {
 public:
  /// Generates the weights from `options.seed`.
  /// @throws std::invalid_argument if a dimension is 0 or too large.
  explicit HashingModel(HashingModelOptions options = {});
  ~HashingModel() override;
  HashingModel(HashingModel&&) noexcept;
  HashingModel& operator=(HashingModel&&) noexcept;

  [[nodiscard]] const ModelInfo& info() const noexcept override;
  void embed(std::span<const std::string_view> texts, DenseVectors& out) const override;
  void embed_sparse(std::span<const std::string_view> texts, SparseVectors& out) const override;
  void embed_multi(std::span<const std::string_view> texts, MultiVectors& out) const override;
  void score(std::string_view query, std::span<const std::string_view> passages,
             std::vector<float>& scores) const override;

  /// The options the model was built with.
  [[nodiscard]] const HashingModelOptions& options() const noexcept;

  /// The dense layer alone, for measuring it: `out` (`rows x dimensions`, row-major) =
  /// `features` (`rows x hidden`, row-major) times the layer's weights. No normalisation.
  /// @throws std::invalid_argument if a size does not match.
  void dense_layer(std::span<const float> features, std::size_t rows, std::span<float> out) const;

  /// The tokens of `text` as the model sees them (lowercased, in order, before truncation).
  [[nodiscard]] static std::vector<std::string> tokenize(std::string_view text);

 private:
  struct Weights;
  std::unique_ptr<const Weights> weights_;
};

}  // namespace embed
