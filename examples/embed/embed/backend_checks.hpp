// SPDX-License-Identifier: MIT
// Checking what a backend returned before anything is written from it (internal to the plugin):
// every -32603 the methods answer for a backend's output comes from here.
#pragma once

#include <batchrpc/batchrpc.hpp>
#include <cstddef>
#include <optional>
#include <vector>

#include "backend.hpp"

namespace embed::detail {

// Each check returns nothing when the output has the shape `Backend` promises for `count` texts
// (or passages), else `-32603 Internal error` with data {"reason": what the backend got wrong}.
// The writers index the output only as far as these checks have bounded it.

/// `count` vectors of `info.dimensions` finite floats.
[[nodiscard]] std::optional<rpc::Error> check_dense(const DenseVectors& out, std::size_t count,
                                                    const ModelInfo& info);

/// `count` vectors: offsets from 0, never decreasing, ending where `indices` and `values` (as
/// many) end; each vector's indices strictly ascending and below `info.sparse_dimensions`
/// (which `dims` must be); finite values.
[[nodiscard]] std::optional<rpc::Error> check_sparse(const SparseVectors& out, std::size_t count,
                                                     const ModelInfo& info);

/// `count + 1` row offsets from 0, never decreasing, ending at the number of vectors, each of
/// `info.dimensions` finite floats.
[[nodiscard]] std::optional<rpc::Error> check_multi(const MultiVectors& out, std::size_t count,
                                                    const ModelInfo& info);

/// `count` finite scores (the ranking compares them).
[[nodiscard]] std::optional<rpc::Error> check_scores(const std::vector<float>& scores,
                                                     std::size_t count);

}  // namespace embed::detail
