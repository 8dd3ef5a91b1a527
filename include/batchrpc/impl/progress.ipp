// SPDX-License-Identifier: MIT
// Non-template bodies of progress.hpp: the client's progress token found in a call's params,
// and the MCP and LSP progress notifications made from it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>

#include "../json_traits.hpp"
#include "../progress.hpp"
#include "../result_writer.hpp"
#include "../session.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// A progress token: JSON-RPC's own id types, a string or a number (MCP and LSP both).
inline Json progress_token(const Value* holder, std::string_view name) {
  if (holder == nullptr || !holder->IsObject()) return {};
  const auto found = holder->FindMember(rapidjson::StringRef(name.data(), name.size()));
  if (found == holder->MemberEnd() || !(found->value.IsString() || found->value.IsNumber())) return {};
  return to_json(found->value);
}

// `{"progressToken":...}` or `{"token":...}` and the fields `fill` adds, as params.
template <class Fill>
Json progress_params(std::string_view token_key, const Json& token, Fill fill) {
  return write_json([&](ResultWriter& w) {
    w.start_object();
    w.key(token_key);
    w.raw(token);
    fill(w);
    w.end_object();
  });
}

// LSP's WorkDoneProgress value of `kind`, under `token`.
template <class Fill>
Json work_done(const Json& token, std::string_view kind, Fill fill) {
  return progress_params("token", token, [&](ResultWriter& w) {
    w.key("value");
    w.start_object();
    w.key("kind");
    w.string(kind);
    fill(w);
    w.end_object();
  });
}

}  // namespace detail

struct Progress::State {
  std::mutex mutex;
  std::string title;  // LSP begin's, when report() has to send it
  bool begun = false;
  bool ended = false;
  double last = -std::numeric_limits<double>::infinity();
};

BATCHRPC_DECL Progress::Progress(const Context& ctx) : peer_(ctx.peer()) {
  const Value* params = ctx.request_params().json();  // a tool's are in tools/call's
  if (params == nullptr || !params->IsObject()) return;
  const auto meta = params->FindMember("_meta");
  if (meta != params->MemberEnd()) token_ = detail::progress_token(&meta->value, "progressToken");
  if (!token_.empty()) {
    dialect_ = Dialect::mcp;
  } else if (token_ = detail::progress_token(params, "workDoneToken"); !token_.empty()) {
    dialect_ = Dialect::lsp;
  }
  partial_token_ = detail::progress_token(params, "partialResultToken");
  if (!wanted() && partial_token_.empty()) return;
  // An operation of the batch tool shares the batch's state, so that the batch's reports rise
  // as one sequence and it begins and ends once (see the class comment).
  const detail::ProgressSlice* slice = detail::ContextAccess::progress_slice(ctx);
  if (slice != nullptr && slice->whole->state_ != nullptr) {
    state_ = slice->whole->state_;
    range_ = {static_cast<double>(slice->index), static_cast<double>(slice->count)};
    return;
  }
  state_ = std::make_shared<State>();
  state_->title = std::string(ctx.method());
}

BATCHRPC_DECL bool Progress::begin(std::string_view title, std::string_view message, bool cancellable) const {
  if (dialect_ != Dialect::lsp) return false;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->begun || state_->ended) return false;
    state_->begun = true;
  }
  return peer_.notify("$/progress", detail::work_done(token_, "begin", [&](ResultWriter& w) {
    w.key("title");
    w.string(title);
    if (cancellable) {
      w.key("cancellable");
      w.boolean(true);
    }
    if (!message.empty()) {
      w.key("message");
      w.string(message);
    }
  }));
}

BATCHRPC_DECL bool Progress::report(double done, double total, std::string_view message) const {
  if (!wanted() || !std::isfinite(done) || !std::isfinite(total)) return false;
  if (range_.total > 0) {  // an operation of a batch: its part of the batch's scale
    const double part = total > 0 ? done / total : std::max(done, 0.0) / (std::max(done, 0.0) + 1);
    done = range_.start + std::clamp(part, 0.0, 1.0);
    total = range_.total;
  }
  bool needs_begin = false;
  std::string title;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    // MCP's progress must increase with every notification; LSP may repeat a percentage with a
    // new message.
    // Neither is NaN here: `done` is finite, `last` finite or -infinity before the first report.
    const bool repeats_or_goes_back = dialect_ == Dialect::mcp ? !(done > state_->last) : done < state_->last;
    if (state_->ended || repeats_or_goes_back) return false;
    state_->last = done;
    if (dialect_ == Dialect::lsp && !state_->begun) {
      needs_begin = true;
      title = state_->title;
    }
  }
  if (dialect_ == Dialect::mcp) {
    return peer_.notify("notifications/progress", detail::progress_params("progressToken", token_, [&](ResultWriter& w) {
      w.key("progress");
      w.number(done);
      if (total > 0) {
        w.key("total");
        w.number(total);
      }
      if (!message.empty()) {
        w.key("message");
        w.string(message);
      }
    }));
  }
  if (needs_begin) (void)begin(title);
  return peer_.notify("$/progress", detail::work_done(token_, "report", [&](ResultWriter& w) {
    if (!message.empty()) {
      w.key("message");
      w.string(message);
    }
    if (total > 0) {
      w.key("percentage");
      w.unsigned_integer(static_cast<std::uint64_t>(std::clamp(std::floor(done * 100 / total), 0.0, 100.0)));
    }
  }));
}

BATCHRPC_DECL bool Progress::end(std::string_view message) const {
  if (!wanted() || range_.total > 0) return false;  // an operation's: the batch ends it
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->ended) return false;
    state_->ended = true;
    if (!state_->begun) return false;  // MCP has no end; LSP's needs its begin
  }
  return peer_.notify("$/progress", detail::work_done(token_, "end", [&](ResultWriter& w) {
    if (!message.empty()) {
      w.key("message");
      w.string(message);
    }
  }));
}

BATCHRPC_DECL bool Progress::partial(const Json& value) const {
  if (partial_token_.empty()) return false;
  return peer_.notify("$/progress", detail::progress_params("token", partial_token_, [&](ResultWriter& w) {
    w.key("value");
    w.raw(value);
  }));
}

}  // namespace rpc
