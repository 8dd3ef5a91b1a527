// SPDX-License-Identifier: MIT
// Non-template bodies of builtins.hpp.
#pragma once

#include <optional>
#include <string>

#include "../builtins.hpp"
#include "../config.hpp"
#include "../session.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// Cancels the request `id` names in the caller's session; answers whether anything was.
inline void cancel_request(const Value& id, std::string_view param, Context& ctx, ResultWriter& out,
                           CancelledReply reply = CancelledReply::error) {
  if (!id.IsString() && !id.IsNumber()) {
    throw Error(ErrorCode::invalid_params,
                Json::trusted(R"({"param":")" + std::string(param) +
                              R"(","reason":"expected a string or a number"})"));
  }
  const bool cancelled = ctx.session() != nullptr && ctx.session()->cancel(id, reply);
  out.start_object();
  out.key("cancelled");
  out.boolean(cancelled);
  out.end_object();
}

}  // namespace detail

BATCHRPC_DECL void add_builtins(Router& router, BuiltinOptions options) {
  const MethodOptions cheap{.inline_only = true};
  const MethodOptions cancel{.inline_only = true};  // RouterAccess::run_first below

  router.add("ping", [](const Value* nonce, ResultWriter& out) {
    out.start_object();
    if (nonce != nullptr) {
      out.key("nonce");
      out.write(*nonce);
    }
    out.end_object();
  }, names("nonce"), cheap);

  router.add("info", [name = std::move(options.server_name),
                      version = std::move(options.server_version)](Context& ctx, ResultWriter& out) {
    const Router& r = *ctx.router();
    out.start_object();
    out.key("protocolVersion");
    out.integer(1);
    out.key("server");
    out.start_object();
    out.key("name");
    out.string(name);
    out.key("version");
    out.string(version);
    out.end_object();
    out.key("capabilities");
    out.start_object();
    out.key("batching");
    out.start_object();
    out.key("maxBatch");
    out.unsigned_integer(r.limits().max_batch);
    out.end_object();
    const auto granted = ctx.session() != nullptr ? ctx.session()->capabilities() : r.capabilities();
    for (const std::string& capability : granted) {
      if (capability == "batching") continue;  // reported above
      out.key(capability);
      const Json& settings = r.capability_settings(capability);
      if (settings.empty()) {
        out.start_object();
        out.end_object();
      } else {
        out.raw(settings);
      }
    }
    out.end_object();
    out.end_object();
  }, cheap);

  router.add("notifications/cancel", [](const Value& id, Context& ctx, ResultWriter& out) {
    detail::cancel_request(id, "id", ctx, out);
  }, names("id"), cancel);
  detail::RouterAccess::run_first(router, "notifications/cancel");
  if (options.lsp_cancel) {
    router.add("$/cancelRequest", [](const Value& id, Context& ctx, ResultWriter& out) {
      detail::cancel_request(id, "id", ctx, out);
    }, names("id"), cancel);
    detail::RouterAccess::run_first(router, "$/cancelRequest");
  }
  if (options.mcp_cancel) {
    router.add("notifications/cancelled",
               [](const Value& request_id, const std::optional<std::string>&, Context& ctx,
                  ResultWriter& out) {
                 // MCP: the cancelled request gets no response.
                 detail::cancel_request(request_id, "requestId", ctx, out, CancelledReply::none);
               },
               names("requestId", "reason"), cancel);
    detail::RouterAccess::run_first(router, "notifications/cancelled");
  }
}

}  // namespace rpc
