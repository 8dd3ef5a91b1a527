// SPDX-License-Identifier: MIT
// The embed plugin's methods as MCP tools, each with a JSON Schema for its arguments, and
// `embed_chunked`: a long embedding that reports its progress chunk by chunk and stops as soon
// as its call is cancelled.
#pragma once

#include <algorithm>
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/progress.hpp>
#include <batchrpc/tools.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../common/cancellable_sleep.hpp"
#include "embed/backend.hpp"
#include "embed/methods.hpp"
#include "embed_schemas.hpp"
#include "lifecycle.hpp"

namespace mcp_example {

// embed_chunked's arguments: embed's texts, and how to pace the work.
inline constexpr std::string_view embed_chunked_schema = R"({
  "type": "object",
  "properties": {
    "inputs": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 1024},
    "chunkSize": {"type": "integer", "minimum": 1, "maximum": 1024, "default": 8},
    "delayMs": {"type": "integer", "minimum": 0, "maximum": 10000, "default": 0,
                "description": "pause after each chunk but the last, to watch the progress"}
  },
  "required": ["inputs"],
  "additionalProperties": false
})";

inline rpc::Error invalid_argument(std::string_view param, std::string_view reason) {
  rpc::Buffer text;
  rpc::ResultWriter data(text);
  data.start_object();
  data.key("param");
  data.string(param);
  data.key("reason");
  data.string(reason);
  data.end_object();
  return rpc::Error(rpc::ErrorCode::invalid_params, rpc::Json::trusted(text.str()));
}

// embed_chunked's arguments, checked.
struct ChunkPlan {
  std::size_t chunk_size = 8;
  std::chrono::milliseconds delay{0};
};

inline ChunkPlan plan_chunks(const std::vector<std::string>& inputs,
                             std::optional<std::int64_t> chunk_size,
                             std::optional<std::int64_t> delay_ms) {
  if (inputs.empty() || inputs.size() > 1024)
    throw invalid_argument("inputs", "give 1 to 1024 texts");
  const std::size_t max_text_bytes = embed::MethodsOptions{}.max_text_bytes;  // embed's limit
  for (const std::string& text : inputs) {
    if (text.empty()) throw invalid_argument("inputs", "a text is empty");
    if (text.size() > max_text_bytes) throw invalid_argument("inputs", "a text is too long");
  }
  if (chunk_size && (*chunk_size < 1 || *chunk_size > 1024))
    throw invalid_argument("chunkSize", "must be 1..1024");
  if (delay_ms && (*delay_ms < 0 || *delay_ms > 10000))
    throw invalid_argument("delayMs", "must be 0..10000");
  ChunkPlan plan;
  if (chunk_size) plan.chunk_size = static_cast<std::size_t>(*chunk_size);
  if (delay_ms) plan.delay = std::chrono::milliseconds(*delay_ms);
  return plan;
}

// The same result as the `embed` tool's with float encoding, so the two can be compared.
inline void write_dense_result(rpc::ResultWriter& out, const embed::ModelInfo& model,
                               std::size_t dimensions, std::span<const float> values) {
  out.start_object();
  out.key("model");
  out.string(model.name);
  out.key("dimensions");
  out.unsigned_integer(dimensions);
  out.key("encoding");
  out.string("float");
  out.key("embeddings");
  out.start_array();
  for (std::size_t first = 0; first < values.size(); first += dimensions) {
    out.start_array();
    for (const float f : values.subspan(first, dimensions)) out.write(f);
    out.end_array();
  }
  out.end_array();
  out.end_object();
}

// Embeds `inputs` a chunk at a time: one progress notification per chunk (when the client gave
// a progressToken), and a cancelled call stops before its next chunk (no response is sent for
// it: MCP's notifications/cancelled asks none).
inline void embed_chunked(const embed::Backend& backend, const ClientState& client,
                          rpc::Context& ctx, const std::vector<std::string>& inputs,
                          const ChunkPlan& plan, rpc::ResultWriter& out) {
  const rpc::Progress progress(ctx);
  const std::size_t total = inputs.size();
  const std::size_t chunks = (total + plan.chunk_size - 1) / plan.chunk_size;
  send_log(client, ctx.peer(), rpc::mcp::LogLevel::info,
           "embed_chunked: " + std::to_string(total) + " texts in " + std::to_string(chunks) +
               " chunks");

  std::vector<float> values;
  embed::DenseVectors chunk;
  std::vector<std::string_view> texts;
  for (std::size_t first = 0; first < total; first += plan.chunk_size) {
    const std::size_t done = std::min(first + plan.chunk_size, total);
    texts.assign(inputs.begin() + static_cast<std::ptrdiff_t>(first),
                 inputs.begin() + static_cast<std::ptrdiff_t>(done));
    backend.embed(texts, chunk);
    values.insert(values.end(), chunk.values.begin(), chunk.values.end());
    progress.report(static_cast<double>(done), static_cast<double>(total),
                    "embedded " + std::to_string(done) + " of " + std::to_string(total) + " texts");
    const bool last = done == total;
    if (!last && !spec::sleep_unless_cancelled(ctx.stop_token(), plan.delay)) {
      send_log(client, ctx.peer(), rpc::mcp::LogLevel::notice,
               "embed_chunked: cancelled after " + std::to_string(done) + " of " +
                   std::to_string(total) + " texts");
      throw rpc::cancelled();
    }
  }
  write_dense_result(out, backend.info(), chunk.dims, values);
}

// Registers the plugin's methods (and the aliases above) on `router` and exposes them as tools.
inline void add_embed_tools(rpc::Router& router, rpc::Tools& tools, const embed::Backend& backend,
                            Clients& clients) {
  embed::register_methods(router, backend);
  router.add("embed_chunked",
             [&backend, &clients](
                 const std::vector<std::string>& inputs, std::optional<std::int64_t> chunk_size,
                 std::optional<std::int64_t> delay_ms, rpc::Context& ctx, rpc::ResultWriter& out) {
               embed_chunked(backend, *clients.of(ctx), ctx, inputs,
                             plan_chunks(inputs, chunk_size, delay_ms), out);
             },
             rpc::names("inputs", "chunkSize", "delayMs"), {.capability = "embed"});

  tools.expose("embed",
               {.description = "Dense embeddings: one L2-normalised vector per input text.",
                .input_schema = rpc::json(embed_schema)});
  // MCP tool names keep to letters, digits, `_`, `-` and `.`: the plugin's `embed/sparse` and
  // `embed/multi` are the tools `embed_sparse` and `embed_multi`.
  tools.expose("embed/sparse",
               {.name = "embed_sparse",
                .description = "Sparse embeddings: indices (ascending) and weights per input text.",
                .input_schema = rpc::json(embed_schema)});
  tools.expose("embed/multi",
               {.name = "embed_multi",
                .description = "Multi-vector embeddings: one vector per token of each input text.",
                .input_schema = rpc::json(embed_schema)});
  tools.expose("rerank",
               {.description = "Scores passages against a query by cosine similarity, best first.",
                .input_schema = rpc::json(rerank_schema)});
  tools.expose("embed_chunked",
               {.description = "Dense embeddings computed chunkSize texts at a time, with progress "
                               "notifications per chunk; cancellable between chunks.",
                .input_schema = rpc::json(embed_chunked_schema)});
}

}  // namespace mcp_example
