// SPDX-License-Identifier: MIT
// The methods: one backend call per array of texts, results written straight into the reply.
#include "methods.hpp"

#include <algorithm>
#include <exception>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "backend_checks.hpp"
#include "base64.hpp"
#include "params.hpp"

namespace embed {

namespace {

using detail::Encoding;

// Per-thread buffers reused from call to call, so a warmed-up server allocates little.
struct Scratch {
  std::vector<std::string_view> texts;
  std::vector<detail::EmbedParams> parts;
  DenseVectors dense;
  SparseVectors sparse;
  MultiVectors multi;
  std::string text;
};
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// One float vector: JSON numbers (shortest form that reads back exactly) or a base64 string.
void write_floats(rpc::ResultWriter& w, std::span<const float> values, Encoding encoding,
                  std::string& text) {
  if (encoding == Encoding::base64) {
    text.clear();
    base64::append_floats(values, text);
    w.string(text);
    return;
  }
  w.start_array();
  for (const float f : values) w.write(f);
  w.end_array();
}

// `{"model":M,"dimensions":D,"encoding":E,"embeddings":` — the caller writes the array and `}`.
void write_head(rpc::ResultWriter& w, const ModelInfo& info, std::size_t dimensions,
                Encoding encoding) {
  w.start_object();
  w.key("model");
  w.string(info.name);
  w.key("dimensions");
  w.unsigned_integer(dimensions);
  w.key("encoding");
  w.string(detail::encoding_name(encoding));
  w.key("embeddings");
}

// One call's result: its texts are rows [first, first + count) of what the backend returned
// for the texts from `base` on; `write_row(i)` writes row i, in the kind's own form.
template <class WriteRow>
void write_embeddings(rpc::ResultWriter& w, const ModelInfo& info, const detail::EmbedParams& part,
                      std::size_t base, std::size_t dimensions, WriteRow&& write_row) {
  write_head(w, info, dimensions, part.encoding);
  w.start_array();
  for (std::size_t i = part.first - base; i < part.first - base + part.count; ++i) write_row(i);
  w.end_array();
  w.end_object();
}

// A vector per text.
void write_dense(rpc::ResultWriter& w, const ModelInfo& info, const detail::EmbedParams& part,
                 std::size_t base, const DenseVectors& vectors, std::string& text) {
  write_embeddings(w, info, part, base, vectors.dims,
                   [&](std::size_t i) { write_floats(w, vectors.row(i), part.encoding, text); });
}

// `{"indices":[...],"values":...}` per text.
void write_sparse(rpc::ResultWriter& w, const ModelInfo& info, const detail::EmbedParams& part,
                  std::size_t base, const SparseVectors& vectors, std::string& text) {
  write_embeddings(w, info, part, base, vectors.dims, [&](std::size_t i) {
    w.start_object();
    w.key("indices");
    w.start_array();
    for (const std::uint32_t index : vectors.indices_of(i)) w.unsigned_integer(index);
    w.end_array();
    w.key("values");
    write_floats(w, vectors.values_of(i), part.encoding, text);
    w.end_object();
  });
}

// An array of vectors (one per token) per text.
void write_multi(rpc::ResultWriter& w, const ModelInfo& info, const detail::EmbedParams& part,
                 std::size_t base, const MultiVectors& vectors, std::string& text) {
  write_embeddings(w, info, part, base, vectors.vectors.dims, [&](std::size_t i) {
    w.start_array();
    for (std::size_t row = vectors.offsets[i]; row < vectors.offsets[i + 1]; ++row) {
      write_floats(w, vectors.vectors.row(row), part.encoding, text);
    }
    w.end_array();
  });
}

void rerank(const Backend& backend, const MethodsOptions& options, const rpc::Params& params,
            rpc::ResultWriter& w) {
  thread_local detail::RerankParams request;
  thread_local std::vector<float> scores;
  thread_local std::vector<std::size_t> order;
  if (auto error = detail::read_rerank_params(params, options, request)) throw std::move(*error);
  backend.score(request.query, request.passages, scores);
  if (auto error = detail::check_scores(scores, request.passages.size())) throw std::move(*error);

  // Best first; equal scores keep passage order, so the answer is fully determined.
  order.resize(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const std::size_t keep = std::min(order.size(), request.top_k.value_or(order.size()));
  const auto better = [](std::size_t a, std::size_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    better);

  w.start_object();
  w.key("model");
  w.string(backend.info().name);
  w.key("results");
  w.start_array();
  for (std::size_t k = 0; k < keep; ++k) {
    w.start_object();
    w.key("index");
    w.unsigned_integer(order[k]);
    w.key("score");
    w.write(scores[order[k]]);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// The settings `info` reports for the two capabilities.
rpc::Json embed_settings(const ModelInfo& info, const MethodsOptions& options) {
  rpc::Buffer buffer;
  rpc::ResultWriter w(buffer);
  w.start_object();
  w.key("model");
  w.string(info.name);
  w.key("dimensions");
  w.unsigned_integer(info.dimensions);
  w.key("sparseDimensions");
  w.unsigned_integer(info.sparse_dimensions);
  w.key("maxInputs");
  w.unsigned_integer(options.max_inputs);
  w.key("maxTextBytes");
  w.unsigned_integer(options.max_text_bytes);
  w.key("maxTotalBytes");
  w.unsigned_integer(options.max_total_bytes);
  w.key("maxMultiBytes");
  w.unsigned_integer(options.max_multi_bytes);
  w.key("encodings");
  w.start_array();
  w.string("float");
  w.string("base64");
  w.end_array();
  w.end_object();
  return rpc::Json::trusted(buffer.str());
}

rpc::Json rerank_settings(const ModelInfo& info, const MethodsOptions& options) {
  rpc::Buffer buffer;
  rpc::ResultWriter w(buffer);
  w.start_object();
  w.key("model");
  w.string(info.name);
  w.key("maxPassages");
  w.unsigned_integer(options.max_inputs);
  w.key("maxTextBytes");
  w.unsigned_integer(options.max_text_bytes);
  w.key("maxTotalBytes");
  w.unsigned_integer(options.max_total_bytes);
  w.end_object();
  return rpc::Json::trusted(buffer.str());
}

}  // namespace

std::string_view method_name(Kind kind) noexcept {
  switch (kind) {
    case Kind::dense:
      return "embed";
    case Kind::sparse:
      return "embed/sparse";
    case Kind::multi:
      return "embed/multi";
  }
  return "embed";
}

void answer_together(const Backend& backend, const MethodsOptions& options, Kind kind,
                     std::span<EmbedCall> calls) {
  Scratch& s = scratch();
  s.texts.clear();
  s.parts.resize(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    calls[i].error =
        detail::read_embed_params(*calls[i].params, options, kind, s.texts, s.parts[i]);
  }

  // One backend call for the texts of all valid calls, in call order; split only where one call
  // would not be allowed that many texts or bytes, so a group costs no more memory at a time
  // than its largest call.
  const ModelInfo& info = backend.info();
  const std::size_t max_bytes = detail::max_total_bytes(options, kind);
  std::size_t next = 0;
  while (next < calls.size()) {
    const std::size_t from = next;
    std::size_t count = 0;
    std::size_t bytes = 0;
    std::size_t base = s.texts.size();
    for (; next < calls.size(); ++next) {
      if (calls[next].error) continue;
      const detail::EmbedParams& part = s.parts[next];
      if (count > 0 && (count + part.count > options.max_inputs || bytes + part.bytes > max_bytes))
        break;
      if (count == 0) base = part.first;
      count += part.count;
      bytes += part.bytes;
    }
    if (count == 0) continue;  // only invalid calls left
    const std::span<const std::string_view> texts(s.texts.data() + base, count);
    std::optional<rpc::Error> malformed;  // the writers below rely on the shapes checked here
    switch (kind) {
      case Kind::dense:
        backend.embed(texts, s.dense);
        malformed = detail::check_dense(s.dense, count, info);
        break;
      case Kind::sparse:
        backend.embed_sparse(texts, s.sparse);
        malformed = detail::check_sparse(s.sparse, count, info);
        break;
      case Kind::multi:
        backend.embed_multi(texts, s.multi);
        malformed = detail::check_multi(s.multi, count, info);
        break;
    }
    if (malformed) throw std::move(*malformed);
    for (std::size_t i = from; i < next; ++i) {
      if (calls[i].error) continue;
      rpc::ResultWriter& w = *calls[i].result;
      switch (kind) {
        case Kind::dense:
          write_dense(w, info, s.parts[i], base, s.dense, s.text);
          break;
        case Kind::sparse:
          write_sparse(w, info, s.parts[i], base, s.sparse, s.text);
          break;
        case Kind::multi:
          write_multi(w, info, s.parts[i], base, s.multi, s.text);
          break;
      }
    }
  }
}

void register_methods(rpc::Router& router, const Backend& backend, MethodsOptions options) {
  const rpc::MethodOptions embedding{.capability = "embed"};
  for (const Kind kind : {Kind::dense, Kind::sparse, Kind::multi}) {
#if defined(BATCHRPC_HAS_BATCH_HANDLERS)
    if (options.batch_aware) {
      // Every call of this method in one batch (or a lone call) arrives in one `calls`.
      router.add_batched(
          method_name(kind),
          [&backend, options, kind](std::span<rpc::BatchCall> calls) {
            thread_local std::vector<EmbedCall> group;
            group.clear();
            for (rpc::BatchCall& call : calls) group.push_back({&call.params(), &call.result()});
            // A backend failure fails the valid calls only: invalid ones keep their -32602, as
            // each would alone.
            std::exception_ptr failure;
            try {
              answer_together(backend, options, kind, group);
            } catch (...) {
              failure = std::current_exception();
            }
            for (std::size_t i = 0; i < calls.size(); ++i) {
              if (group[i].error) calls[i].reject(std::move(*group[i].error));
            }
            if (failure) std::rethrow_exception(failure);
          },
          embedding);
      continue;
    }
#endif
    router.add(
        method_name(kind),
        [&backend, options, kind](const rpc::Params& params, rpc::ResultWriter& out) {
          EmbedCall call{&params, &out};
          answer_together(backend, options, kind, std::span(&call, 1));
          if (call.error) throw std::move(*call.error);
        },
        embedding);
  }
  router.add("rerank",
             [&backend, options](const rpc::Params& params, rpc::ResultWriter& out) {
               rerank(backend, options, params, out);
             },
             {.capability = "rerank"});
  router.describe_capability("embed", embed_settings(backend.info(), options));
  router.describe_capability("rerank", rerank_settings(backend.info(), options));
}

}  // namespace embed
