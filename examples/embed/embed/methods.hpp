// SPDX-License-Identifier: MIT
/// @file methods.hpp
/// The embed plugin's JSON-RPC methods on any `embed::Backend`: `embed`, `embed/sparse`,
/// `embed/multi` and `rerank`. All parameter checking and result writing lives here, once.
#pragma once

#include <batchrpc/batchrpc.hpp>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "backend.hpp"

namespace embed {

/// Limits of the plugin's methods.
struct MethodsOptions {
  /// Most texts in one call's `inputs` (or `passages`); more is `-32602`.
  std::size_t max_inputs = 1024;
  /// Longest text, in bytes; longer is `-32602` naming its index.
  std::size_t max_text_bytes = 32768;
  /// Most bytes of text in one call (all its texts together); more is `-32602`.
  std::size_t max_total_bytes = std::size_t{1} << 20;
  /// The same for `embed/multi`, whose reply holds one vector per token: 32 KiB of text is at
  /// most 16384 tokens, 25 MB of floats.
  std::size_t max_multi_bytes = 32768;
  /// Let the router answer many calls of one embedding method in a JSON-RPC batch together
  /// (one backend call for all their texts), when the router supports batch handlers
  /// (`BATCHRPC_HAS_BATCH_HANDLERS`). Replies are byte-identical either way.
  bool batch_aware = true;
};

/// The three embedding methods.
enum class Kind {
  dense,   ///< `embed`
  sparse,  ///< `embed/sparse`
  multi,   ///< `embed/multi`
};

/// The method name of `kind` (`"embed"`, `"embed/sparse"`, `"embed/multi"`).
[[nodiscard]] std::string_view method_name(Kind kind) noexcept;

/// One call of an embedding method, answered together with other calls of the same method.
struct EmbedCall {
  /// In: the call's params (valid while `answer_together` runs).
  const rpc::Params* params = nullptr;
  /// Out: where the call's result is written when its params are valid.
  rpc::ResultWriter* result = nullptr;
  /// Out: set instead (and nothing written) when its params are invalid: `-32602`.
  std::optional<rpc::Error> error{};
};

/**
 * Answers several calls of one embedding method together: checks each call's params, computes
 * the texts of every valid call with one backend call (one set of matrix operations; split into
 * several only where the texts would exceed one call's limits, so memory stays bounded by them),
 * and writes each valid call's result into its own writer. Each call gets exactly the bytes it
 * would get alone (the backend is deterministic per text): this is what batch-aware dispatch runs,
 * and a lone call is the same function with one call.
 *
 * @throws whatever the backend throws, and `rpc::Error` `-32603 Internal error` with `data`
 * `{"reason":...}` when what it returns has another shape than `Backend` promises (vectors
 * missing or of another width, bad offsets, sparse indices out of range or order, a value that
 * is not finite): the writers read only what these checks have bounded. No valid call is then
 * answered; the invalid ones already have their `error`.
 * Thread-safety: may run concurrently on many threads (per-thread scratch buffers).
 */
void answer_together(const Backend& backend, const MethodsOptions& options, Kind kind,
                     std::span<EmbedCall> calls);

/**
 * Registers the plugin's methods on `router`: `embed`, `embed/sparse`, `embed/multi` (capability
 * `embed`) and `rerank` (capability `rerank`), and describes both capabilities for `info`
 * (model, dimensions, limits, encodings).
 *
 * Params (by name, or by position in this order):
 * - `embed`, `embed/sparse`, `embed/multi`: `inputs` (array of 1..max_inputs non-empty strings),
 *   `encoding` (`"float"`, the default: JSON numbers; `"base64"`: each float vector as base64
 *   of little-endian float32).
 * - `rerank`: `query` (non-empty string), `passages` (as `inputs`), `top_k` (optional positive
 *   integer: keep the best `top_k`).
 *
 * Results (`M` = the model's name, `D` = its dimensions):
 * - `embed`: `{"model":M,"dimensions":D,"encoding":E,"embeddings":[v, ...]}`, one `v` per input,
 *   in input order; `v` is `[f, ...]` (D floats, shortest exact form) or a base64 string.
 * - `embed/sparse`: `{"model":M,"dimensions":S,"encoding":E,"embeddings":[{"indices":[i, ...],
 *   "values":v}, ...]}`; indices ascending, `< S` (the sparse index space).
 * - `embed/multi`: as `embed`, but each input's entry is an array of vectors, one per token.
 * - `rerank`: `{"model":M,"results":[{"index":i,"score":s}, ...]}`, best score first (ties:
 *   lower index first), at most `top_k` entries.
 *
 * Errors: `-32602 Invalid params` with `data` `{"param":name[,"index":i],"reason":...}` (plus
 * `"max"` for limits): params missing or of the wrong type, unknown params, an empty or too long
 * array, a non-string, empty or too long text (with its index), too many bytes of text in all,
 * an unknown encoding, a bad `top_k`. `-32603 Internal error` with `data` `{"reason":...}` when
 * the backend's output has the wrong shape (see `answer_together`; `rerank`: one finite score
 * per passage); a backend's own exception is answered as the router answers any.
 *
 * `backend` must outlive `router`. With batch handlers in the router and
 * `options.batch_aware`, many calls of one embedding method in one JSON-RPC batch are answered
 * by one `answer_together`.
 * @throws std::invalid_argument if a method name is already registered.
 */
void register_methods(rpc::Router& router, const Backend& backend, MethodsOptions options = {});

}  // namespace embed
