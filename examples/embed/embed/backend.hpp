// SPDX-License-Identifier: MIT
/// @file backend.hpp
/// `embed::Backend`: what a text-embedding model must do for the embed plugin's methods.
///
/// The plugin's methods (methods.hpp) read and check params, then hand whole arrays of texts to
/// a backend and write what it returns. A backend never sees JSON; a real model (ONNX, a GPU
/// service, ...) replaces the reference `embed::HashingModel` by implementing this interface.
/// Nothing here depends on Eigen or on batchrpc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace embed {

/// Row-major float vectors: `rows()` vectors of `dims` floats, one after another.
struct DenseVectors {
  /// Floats per vector.
  std::size_t dims = 0;
  /// `rows() * dims` floats; vector `i` is `values[i * dims, (i + 1) * dims)`.
  std::vector<float> values;

  /// Number of vectors.
  [[nodiscard]] std::size_t rows() const noexcept { return dims == 0 ? 0 : values.size() / dims; }
  /// Vector `i`.
  [[nodiscard]] std::span<const float> row(std::size_t i) const noexcept {
    return {values.data() + i * dims, dims};
  }
};

/// Sparse vectors in compressed-row form: vector `i` holds `indices`/`values` in
/// `[offsets[i], offsets[i + 1])`, indices strictly ascending.
struct SparseVectors {
  /// Size of the index space (indices are `< dims`).
  std::size_t dims = 0;
  /// `rows() + 1` offsets into `indices`/`values`, starting at 0.
  std::vector<std::size_t> offsets{0};
  /// Indices, ascending within each vector.
  std::vector<std::uint32_t> indices;
  /// One weight per index.
  std::vector<float> values;

  /// Number of vectors.
  [[nodiscard]] std::size_t rows() const noexcept { return offsets.size() - 1; }
  /// Indices of vector `i`.
  [[nodiscard]] std::span<const std::uint32_t> indices_of(std::size_t i) const noexcept {
    return {indices.data() + offsets[i], offsets[i + 1] - offsets[i]};
  }
  /// Weights of vector `i`.
  [[nodiscard]] std::span<const float> values_of(std::size_t i) const noexcept {
    return {values.data() + offsets[i], offsets[i + 1] - offsets[i]};
  }
};

/// Several vectors per text (one per token): text `i` owns rows `[offsets[i], offsets[i + 1])`
/// of `vectors`.
struct MultiVectors {
  /// Every text's vectors, text after text.
  DenseVectors vectors;
  /// `texts + 1` row offsets, starting at 0.
  std::vector<std::size_t> offsets{0};

  /// Number of texts.
  [[nodiscard]] std::size_t texts() const noexcept { return offsets.size() - 1; }
};

/// What a backend reports about itself (sent to clients in replies and in `info`).
struct ModelInfo {
  /// The model's name, sent as `model` in every reply.
  std::string name;
  /// Floats per dense (and per multi-vector) vector.
  std::size_t dimensions = 0;
  /// Size of the sparse index space.
  std::size_t sparse_dimensions = 0;
};

/**
 * A text-embedding model. Every method takes a whole array of texts and must compute it as
 * one batch (that is the point of the interface: the plugin never calls a backend per text).
 *
 * Texts arrive checked: non-empty, valid UTF-8, within the plugin's limits. The output
 * containers are overwritten (the caller reuses them, so keep their capacity).
 *
 * Contract the plugin relies on:
 * - deterministic: the same text gives the same bits, whatever other texts share its batch and
 *   wherever it sits in it (batch-aware dispatch answers byte-identically to one call per text);
 * - dense and multi-vector vectors are L2-normalised, so a dot product is a cosine similarity;
 * - the output has the shape each method states, with finite values. The plugin checks this
 *   after every call and answers `-32603 Internal error` (`data.reason` says what is wrong)
 *   rather than write a reply from a malformed output.
 *
 * Thread-safety: the methods are const and may be called from many threads at once.
 */
class Backend {
 public:
  virtual ~Backend() = default;

  /// Name and dimensions.
  [[nodiscard]] virtual const ModelInfo& info() const noexcept = 0;

  /// One L2-normalised vector of `info().dimensions` floats per text.
  virtual void embed(std::span<const std::string_view> texts, DenseVectors& out) const = 0;

  /// One sparse vector per text (indices ascending, `< info().sparse_dimensions`).
  virtual void embed_sparse(std::span<const std::string_view> texts, SparseVectors& out) const = 0;

  /// One L2-normalised vector per token of each text.
  virtual void embed_multi(std::span<const std::string_view> texts, MultiVectors& out) const = 0;

  /// The relevance of each passage to `query` (higher is more relevant), `scores[i]` for
  /// `passages[i]`. The reference model's score is the cosine similarity, so a text scores 1
  /// against itself.
  virtual void score(std::string_view query, std::span<const std::string_view> passages,
                     std::vector<float>& scores) const = 0;

 protected:
  Backend() = default;
  Backend(const Backend&) = default;
  Backend& operator=(const Backend&) = default;
};

}  // namespace embed
