// SPDX-License-Identifier: MIT
// `list_roots`: a tool that asks the client a question of its own (MCP `roots/list`) and
// answers with what the client said.
#pragma once

#include <batchrpc/batchrpc.hpp>
#include <chrono>

#include "lifecycle.hpp"

namespace mcp_example {

// The client's answer can take a human in the loop; past this the tool fails with -32095.
inline constexpr std::chrono::seconds roots_timeout{30};

inline void add_roots_tool(rpc::Router& router, rpc::Tools& tools, Clients& clients) {
  // The handler takes a Responder and returns at once: the client's reply arrives on the
  // thread that reads its messages, which must not be the one waiting for it.
  router.add("list_roots", [&clients](rpc::Context& ctx, rpc::Responder answer) {
    if (!clients.of(ctx)->has_roots()) {
      answer.reject(rpc::Error(rpc::ErrorCode::client_unavailable, "the client did not declare the roots capability"));
      return;
    }
    ctx.peer().request(
        "roots/list", {},
        [answer](const rpc::Reply& reply) {
          if (!reply.ok()) {
            answer.reject(*reply.error());  // the client's error, -32094 or -32095
            return;
          }
          answer.resolve_with([&reply](rpc::ResultWriter& out) { out.raw(reply.result()); });
        },
        {.timeout = roots_timeout});
  });
  tools.expose("list_roots",
               {.description = "Asks the client for its roots (roots/list) and returns its answer.",
                .input_schema = rpc::json(
                    R"({"type":"object","properties":{},"additionalProperties":false})")});
}

}  // namespace mcp_example
