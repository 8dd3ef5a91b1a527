// SPDX-License-Identifier: MIT
// Reading and checking the methods' params (internal to the plugin): every -32602 comes from here.
#pragma once

#include <batchrpc/batchrpc.hpp>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "methods.hpp"

namespace embed::detail {

/// How float vectors are written.
enum class Encoding {
  json,    ///< `"float"`: JSON numbers
  base64,  ///< `"base64"`: little-endian float32, base64
};

/// The name clients use for `encoding`.
[[nodiscard]] std::string_view encoding_name(Encoding encoding) noexcept;

/// `embed`, `embed/sparse`, `embed/multi`: the texts are appended to `texts` (views into the
/// message), so several calls' texts can be gathered into one array.
struct EmbedParams {
  std::size_t first = 0;  ///< index of the call's first text in `texts`
  std::size_t count = 0;  ///< number of texts
  std::size_t bytes = 0;  ///< their total size
  Encoding encoding = Encoding::json;
};

/// Reads an embedding call's params, appending its texts to `texts`. On error, `texts` is left
/// as it was and the `-32602` error is returned.
[[nodiscard]] std::optional<rpc::Error> read_embed_params(const rpc::Params& params,
                                                          const MethodsOptions& options, Kind kind,
                                                          std::vector<std::string_view>& texts,
                                                          EmbedParams& out);

/// Most bytes of text one call of `kind` may hold (and one backend call is given).
[[nodiscard]] std::size_t max_total_bytes(const MethodsOptions& options, Kind kind) noexcept;

/// `rerank`.
struct RerankParams {
  std::string_view query;
  std::vector<std::string_view> passages;
  std::optional<std::size_t> top_k;
};

/// Reads a `rerank` call's params; returns the `-32602` error when they are invalid.
[[nodiscard]] std::optional<rpc::Error> read_rerank_params(const rpc::Params& params,
                                                           const MethodsOptions& options,
                                                           RerankParams& out);

}  // namespace embed::detail
