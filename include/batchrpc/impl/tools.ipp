// SPDX-License-Identifier: MIT
// Non-template bodies of tools.hpp: tools/list, tools/call, and registering tools. What tools
// share is in tool_table.ipp, the batch tool in tool_batch.ipp.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "../config.hpp"
#include "../detail/utf8.hpp"
#include "../json.hpp"
#include "../params.hpp"
#include "../result_writer.hpp"
#include "../router.hpp"
#include "../tools.hpp"
#include "tool_batch.ipp"
#include "tool_table.ipp"

namespace rpc::inline BATCHRPC_ABI::detail {
namespace tools {

using namespace std::string_view_literals;

// ---- The two methods ------------------------------------------------------------------------

inline void list_tools(const ToolTable& table, const Params& params, const Context& ctx,
                       ResultWriter& out) {
  if (params.is_array() && params.size() > 0) {
    throw invalid({.reason = R"(tools/list takes named params: {"cursor"?: ...})"});
  }
  if (const Value* cursor = params.find("cursor"); cursor != nullptr && !cursor->IsNull()) {
    throw invalid({.param = "cursor", .reason = "unknown cursor: every tool is on the first page"});
  }
  const Router& router = router_of(table, ctx);
  out.start_object();
  out.key("tools");
  out.start_array();
  for (const Tool& tool : table.tools) {
    const std::string* capability = capability_of(tool, router);
    if (capability == nullptr || !granted(*capability, ctx)) continue;
    out.start_object();
    out.key("name");
    out.string(tool.name);
    if (!tool.description.empty()) {
      out.key("description");
      out.string(tool.description);
    }
    out.key("inputSchema");
    if (tool.input_schema.empty()) {
      out.raw(Json::trusted(std::string(tool.batch ? batch_schema : default_schema)));
    } else {
      out.raw(tool.input_schema);
    }
    out.end_object();
  }
  out.end_array();
  out.end_object();
}

inline void call_tool(const ToolTable& table, const Params& params, const Context& ctx,
                      ResultWriter& out) {
  if (!params.is_object()) {
    throw invalid({.reason = R"(tools/call takes named params: {"name": ..., "arguments": {...}})"});
  }
  const Value* name = nullptr;
  const Value* arguments = nullptr;
  bool has_arguments = false;
  for (const auto& m : params.json()->GetObject()) {  // others (MCP's _meta) are ignored
    const std::string_view member = name_of(m.name);
    if (member == "name") {
      if (name != nullptr) throw invalid({.param = "name", .reason = "duplicate parameter"});
      name = &m.value;
    } else if (member == "arguments") {
      if (has_arguments) throw invalid({.param = "arguments", .reason = "duplicate parameter"});
      has_arguments = true;
      arguments = &m.value;
    }
  }
  if (name == nullptr) throw invalid({.param = "name", .reason = "missing required parameter"});
  if (!name->IsString()) throw invalid({.param = "name", .reason = "expected a string"});
  if (arguments != nullptr && arguments->IsNull()) arguments = nullptr;
  if (arguments != nullptr && !arguments->IsObject() && !arguments->IsArray()) {
    throw invalid({.param = "arguments", .reason = "expected an object (or an array, by position)"});
  }

  const Router& router = router_of(table, ctx);
  const std::string_view tool_name = name_of(*name);
  const Tool* tool = table.find(tool_name);
  if (auto why = refuse(tool, tool_name, "name", false, router, ctx)) throw *why;
  if (tool->batch) {
    bool success = false;
    bool cancelled = false;
    std::string report = run_batch(table, tool_name, arguments, ctx, success, cancelled);
    if (cancelled) throw Error(ErrorCode::request_cancelled, Json::trusted(std::move(report)));
    write_content(out, table.options, report, !success);
    return;
  }
  Buffer reply;
  std::string_view text;
  if (!call_tool_method(router, *RouterAccess::find(router, tool->method), tool->method, arguments, ctx, reply, text)) {
    throw error_from_object(text);
  }
  write_content(out, table.options, text, false);
}

// Registration-time checks shared by expose and add_batch_tool.
inline void check_text(std::string_view what, std::string_view text) {
  if (!is_valid_utf8(text)) {
    throw std::invalid_argument("batchrpc: a tool's " + std::string(what) + " must be valid UTF-8");
  }
}

}  // namespace tools
}  // namespace rpc::detail

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL Tools::Tools(Router& router, ToolsOptions options)
    : router_(&router), table_(std::make_shared<detail::ToolTable>()) {
  table_->router = &router;
  table_->options = options;
  std::shared_ptr<const detail::ToolTable> table = table_;
  router.add("tools/list", [table](const Params& params, Context& ctx, ResultWriter& out) {
    detail::tools::list_tools(*table, params, ctx, out);
  }, MethodOptions{.inline_only = true});
  router.add("tools/call", [table](const Params& params, Context& ctx, ResultWriter& out) {
    detail::tools::call_tool(*table, params, ctx, out);
  });
}

BATCHRPC_DECL Tools& Tools::expose(std::string_view method, ToolInfo info) {
  if (method == "tools/list" || method == "tools/call") {
    throw std::invalid_argument("batchrpc: tools/list and tools/call cannot be tools");
  }
  if (!router_->contains(method)) {
    throw std::invalid_argument("batchrpc: cannot expose \"" + std::string(method) +
                                "\" as a tool: no method of that name is registered");
  }
  std::string name = info.name.empty() ? std::string(method) : std::move(info.name);
  if (contains(name)) {
    throw std::invalid_argument("batchrpc: a tool named \"" + name + "\" exists already");
  }
  detail::tools::check_text("name", name);
  detail::tools::check_text("description", info.description);
  detail::tools::check_text("guidance", info.guidance);
  Json schema;
  if (!info.input_schema.empty()) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseFullPrecisionFlag>(info.input_schema.text().data(), info.input_schema.text().size());
    if (!doc.IsObject()) throw std::invalid_argument("batchrpc: a tool's input_schema must be a JSON object");
    // Compact: a schema written over several lines would break a line-framed tools/list.
    schema = to_json(static_cast<const Value&>(doc));
  }
  table_->tools.push_back({.name = std::move(name),
                           .method = std::string(method),
                           .description = std::move(info.description),
                           .input_schema = std::move(schema),
                           .guidance = std::move(info.guidance)});
  return *this;
}

BATCHRPC_DECL Tools& Tools::add_batch_tool(BatchToolOptions options) {
  if (options.name.empty()) throw std::invalid_argument("batchrpc: a tool's name cannot be empty");
  if (contains(options.name)) {
    throw std::invalid_argument("batchrpc: a tool named \"" + options.name + "\" exists already");
  }
  detail::tools::check_text("name", options.name);
  detail::tools::check_text("description", options.description);
  detail::tools::check_text("guidance", options.guidance);
  table_->default_guidance = std::move(options.guidance);
  table_->tools.push_back({.name = std::move(options.name),
                           .description = std::move(options.description),
                           .batch = true,
                           .capability = std::move(options.capability)});
  return *this;
}

BATCHRPC_DECL bool Tools::contains(std::string_view name) const { return table_->find(name) != nullptr; }

BATCHRPC_DECL std::size_t Tools::size() const { return table_->tools.size(); }

}  // namespace rpc
