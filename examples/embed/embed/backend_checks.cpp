// SPDX-License-Identifier: MIT
// The shape checks on a backend's output: sizes first, then offsets, then what they point at,
// so that no check reads outside what an earlier one has bounded.
#include "backend_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>

namespace embed::detail {

namespace {

// -32603 Internal error, data {"reason":...}: the call is valid, the server failed it.
rpc::Error backend_error(std::string_view reason) {
  rpc::Buffer buffer;
  rpc::ResultWriter w(buffer);
  w.start_object();
  w.key("reason");
  w.string(reason);
  w.end_object();
  return rpc::Error(rpc::ErrorCode::internal_error, rpc::Json::trusted(buffer.str()));
}

constexpr std::string_view wrong_dimensions = "backend returned vectors of the wrong dimensions";
constexpr std::string_view wrong_count = "backend returned the wrong number of vectors";
constexpr std::string_view bad_offsets = "backend returned invalid offsets";
constexpr std::string_view unequal_sizes = "backend returned unequal numbers of indices and values";
constexpr std::string_view index_out_of_range = "backend returned a sparse index out of range";
constexpr std::string_view indices_out_of_order = "backend returned sparse indices out of order";
constexpr std::string_view not_finite = "backend returned a value that is not a finite number";
constexpr std::string_view wrong_scores = "backend returned the wrong number of scores";

bool all_finite(std::span<const float> values) {
  return std::ranges::all_of(values, [](float f) { return std::isfinite(f); });
}

// `floats` is exactly `rows` vectors of `dims` (divided, not multiplied: `dims` comes from the
// backend and `rows * dims` could wrap around).
bool whole_vectors(std::size_t floats, std::size_t dims, std::size_t rows) {
  return dims == 0 ? floats == 0 : floats % dims == 0 && floats / dims == rows;
}

// `count + 1` offsets from 0, never decreasing, the last one `end`.
std::optional<rpc::Error> check_offsets(const std::vector<std::size_t>& offsets, std::size_t count,
                                        std::size_t end) {
  if (offsets.size() != count + 1) return backend_error(wrong_count);
  if (offsets.front() != 0 || offsets.back() != end || !std::ranges::is_sorted(offsets)) {
    return backend_error(bad_offsets);
  }
  return std::nullopt;
}

}  // namespace

std::optional<rpc::Error> check_dense(const DenseVectors& out, std::size_t count,
                                      const ModelInfo& info) {
  if (out.dims != info.dimensions) return backend_error(wrong_dimensions);
  if (!whole_vectors(out.values.size(), out.dims, count)) return backend_error(wrong_count);
  if (!all_finite(out.values)) return backend_error(not_finite);
  return std::nullopt;
}

std::optional<rpc::Error> check_sparse(const SparseVectors& out, std::size_t count,
                                       const ModelInfo& info) {
  if (out.dims != info.sparse_dimensions) return backend_error(wrong_dimensions);
  if (out.indices.size() != out.values.size()) return backend_error(unequal_sizes);
  if (auto error = check_offsets(out.offsets, count, out.indices.size())) return error;
  for (std::size_t i = 0; i < count; ++i) {
    const std::span<const std::uint32_t> indices = out.indices_of(i);
    if (!indices.empty() && indices.back() >= out.dims) return backend_error(index_out_of_range);
    if (std::ranges::adjacent_find(indices, std::ranges::greater_equal{}) != indices.end()) {
      return backend_error(indices_out_of_order);
    }
  }
  if (!all_finite(out.values)) return backend_error(not_finite);
  return std::nullopt;
}

std::optional<rpc::Error> check_multi(const MultiVectors& out, std::size_t count,
                                      const ModelInfo& info) {
  const DenseVectors& vectors = out.vectors;
  if (vectors.dims != info.dimensions) return backend_error(wrong_dimensions);
  if (!whole_vectors(vectors.values.size(), vectors.dims, vectors.rows())) {
    return backend_error(wrong_count);
  }
  if (auto error = check_offsets(out.offsets, count, vectors.rows())) return error;
  if (!all_finite(vectors.values)) return backend_error(not_finite);
  return std::nullopt;
}

std::optional<rpc::Error> check_scores(const std::vector<float>& scores, std::size_t count) {
  if (scores.size() != count) return backend_error(wrong_scores);
  if (!all_finite(scores)) return backend_error(not_finite);
  return std::nullopt;
}

}  // namespace embed::detail
