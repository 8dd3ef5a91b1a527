// SPDX-License-Identifier: MIT
// The methods' params: bound by name or position, each check answered with a precise -32602.
#include "params.hpp"

#include <array>
#include <string>

namespace embed::detail {

namespace {

// -32602 Invalid params, data {"param":..., ["index":i,] "reason":..., ["max":n]}: the same
// shape the router uses for typed handlers, plus the offending index and the limit.
rpc::Error invalid(std::string_view param, std::string_view reason,
                   std::optional<std::size_t> index = {}, std::optional<std::size_t> max = {}) {
  rpc::Buffer buffer;
  rpc::ResultWriter w(buffer);
  w.start_object();
  if (!param.empty()) {
    w.key("param");
    w.string(param);
  }
  if (index) {
    w.key("index");
    w.unsigned_integer(*index);
  }
  w.key("reason");
  w.string(reason);
  if (max) {
    w.key("max");
    w.unsigned_integer(*max);
  }
  w.end_object();
  return rpc::Error(rpc::ErrorCode::invalid_params, rpc::Json::trusted(buffer.str()));
}

// Binds params to `names`: by name (unknown names refused) or by position (in that order).
// A param given as `null` counts as absent.
template <std::size_t N>
std::optional<rpc::Error> bind(const rpc::Params& params,
                               const std::array<std::string_view, N>& names,
                               std::array<const rpc::Value*, N>& slots) {
  slots.fill(nullptr);
  if (params.is_array()) {
    if (params.size() > N) {
      return invalid({}, "too many params: expected at most " + std::to_string(N) + ", got " +
                             std::to_string(params.size()));
    }
    for (std::size_t i = 0; i < params.size(); ++i) slots[i] = params.at(i);
  } else if (params.is_object()) {
    for (const auto& member : params.json()->GetObject()) {
      const std::string_view name(member.name.GetString(), member.name.GetStringLength());
      std::size_t slot = 0;
      while (slot < N && names[slot] != name) ++slot;
      if (slot == N) return invalid(name, "unknown parameter");
      slots[slot] = &member.value;
    }
  }
  for (const rpc::Value*& slot : slots) {
    if (slot != nullptr && slot->IsNull()) slot = nullptr;
  }
  return std::nullopt;
}

// A text: a non-empty string of at most max_text_bytes. `index` names it inside an array.
std::optional<rpc::Error> read_text(const rpc::Value* v, std::string_view param,
                                    std::optional<std::size_t> index, const MethodsOptions& options,
                                    std::string_view& out) {
  if (v == nullptr) return invalid(param, "missing required parameter");
  if (!v->IsString()) return invalid(param, "expected a string", index);
  if (v->GetStringLength() == 0) return invalid(param, "empty text", index);
  if (v->GetStringLength() > options.max_text_bytes) {
    return invalid(param, "text too long", index, options.max_text_bytes);
  }
  out = std::string_view(v->GetString(), v->GetStringLength());
  return std::nullopt;
}

// An array of 1..max_inputs texts of at most `max_bytes` in all, appended to `texts` (left as it
// was on error); `bytes` is their total size.
std::optional<rpc::Error> read_texts(const rpc::Value* v, std::string_view param,
                                     const MethodsOptions& options, std::size_t max_bytes,
                                     std::vector<std::string_view>& texts, std::size_t& bytes) {
  if (v == nullptr) return invalid(param, "missing required parameter");
  if (!v->IsArray()) return invalid(param, "expected an array of strings");
  if (v->Empty()) return invalid(param, "expected at least one text");
  if (v->Size() > options.max_inputs)
    return invalid(param, "too many texts", {}, options.max_inputs);
  const std::size_t first = texts.size();
  bytes = 0;
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    std::string_view text;
    std::optional<rpc::Error> error = read_text(&(*v)[i], param, i, options, text);
    if (!error && (bytes += text.size()) > max_bytes) {
      error = invalid(param, "too much text in all", {}, max_bytes);
    }
    if (error) {
      texts.resize(first);
      return error;
    }
    texts.push_back(text);
  }
  return std::nullopt;
}

std::optional<rpc::Error> read_encoding(const rpc::Value* v, Encoding& out) {
  out = Encoding::json;
  if (v == nullptr) return std::nullopt;
  const std::string_view name =
      v->IsString() ? std::string_view(v->GetString(), v->GetStringLength()) : std::string_view();
  if (name == "float") return std::nullopt;
  if (name == "base64") {
    out = Encoding::base64;
    return std::nullopt;
  }
  return invalid("encoding", R"(expected "float" or "base64")");
}

}  // namespace

std::string_view encoding_name(Encoding encoding) noexcept {
  return encoding == Encoding::base64 ? "base64" : "float";
}

std::size_t max_total_bytes(const MethodsOptions& options, Kind kind) noexcept {
  return kind == Kind::multi ? options.max_multi_bytes : options.max_total_bytes;
}

std::optional<rpc::Error> read_embed_params(const rpc::Params& params,
                                            const MethodsOptions& options, Kind kind,
                                            std::vector<std::string_view>& texts,
                                            EmbedParams& out) {
  static constexpr std::array<std::string_view, 2> names{"inputs", "encoding"};
  std::array<const rpc::Value*, 2> slots{};
  if (auto error = bind(params, names, slots)) return error;
  if (auto error = read_encoding(slots[1], out.encoding)) return error;
  out.first = texts.size();
  if (auto error = read_texts(slots[0], "inputs", options, max_total_bytes(options, kind), texts,
                              out.bytes)) {
    return error;
  }
  out.count = texts.size() - out.first;
  return std::nullopt;
}

std::optional<rpc::Error> read_rerank_params(const rpc::Params& params,
                                             const MethodsOptions& options, RerankParams& out) {
  static constexpr std::array<std::string_view, 3> names{"query", "passages", "top_k"};
  std::array<const rpc::Value*, 3> slots{};
  if (auto error = bind(params, names, slots)) return error;
  if (auto error = read_text(slots[0], "query", {}, options, out.query)) return error;
  out.passages.clear();
  std::size_t bytes = 0;
  if (auto error =
          read_texts(slots[1], "passages", options, options.max_total_bytes, out.passages, bytes)) {
    return error;
  }
  out.top_k.reset();
  if (const rpc::Value* k = slots[2]) {
    if (!k->IsUint64() || k->GetUint64() == 0)
      return invalid("top_k", "expected a positive integer");
    out.top_k = static_cast<std::size_t>(k->GetUint64());
  }
  return std::nullopt;
}

}  // namespace embed::detail
