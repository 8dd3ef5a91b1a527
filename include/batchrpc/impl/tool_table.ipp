// SPDX-License-Identifier: MIT
// What every tool shares (included by tools.ipp): the table of tools, the JSON pieces their
// replies are written from, gating, and calling one method as a tool.
#pragma once

#include <charconv>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "../config.hpp"
#include "../detail/blocking_deferred.hpp"
#include "../detail/call.hpp"
#include "../detail/deferred.hpp"
#include "../detail/member_names.hpp"
#include "../detail/reply.hpp"
#include "../progress.hpp"
#include "../detail/request.hpp"
#include "../detail/session_await.hpp"
#include "../error.hpp"
#include "../params.hpp"
#include "../result_writer.hpp"
#include "../session.hpp"
#include "../tools.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// One tool: an exposed method, or the batch tool.
struct Tool {
  std::string name{};
  std::string method{};      // the router's method it calls (empty for the batch tool)
  std::string description{};
  Json input_schema{};
  std::string guidance{};    // empty: the batch tool's default
  bool batch = false;
  std::string capability{};  // the batch tool's; a method tool is gated by its MethodOptions
};

// Everything the registered handlers need; immutable once the router handles messages.
struct ToolTable {
  const Router* router = nullptr;  // for a context made by hand (ctx.router() == nullptr)
  ToolsOptions options;
  std::vector<Tool> tools;         // in registration order, as tools/list shows them
  std::string default_guidance = BatchToolOptions{}.guidance;

  const Tool* find(std::string_view name) const {
    for (const Tool& t : tools) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
};

namespace tools {

using namespace std::string_view_literals;

// How call_method writes a response whose id is the number 0: the value between this prefix
// and the final `}` is the result or the error object.
inline constexpr std::string_view result_head = R"({"jsonrpc":"2.0","id":0,"result":)";
inline constexpr std::string_view error_head = R"({"jsonrpc":"2.0","id":0,"error":)";
inline constexpr RequestId inner_id{RequestId::Kind::number, "0"};

inline constexpr std::string_view default_schema = R"({"type":"object"})";


// ---- Writing JSON pieces into a buffer ----------------------------------------------------------

inline void append_string(Buffer& out, ResultWriter& w, std::string_view s) {
  WriterAccess::reset(w, out);
  w.string(s);
}

inline void append_size(Buffer& out, std::size_t value) {
  char text[24];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  out.append(std::string_view(text, static_cast<std::size_t>(end - text)));
}

inline void append_bool(Buffer& out, bool value) { out.append(value ? "true"sv : "false"sv); }

// `{"param": P, "reason": R}` (+ `"operationIndex"`, `"max"` or `"required"` when given).
struct ParamData {
  std::string_view param{};
  std::string_view reason{};
  std::optional<std::size_t> operation_index{};
  std::string_view extra_key{};
  std::size_t extra = 0;

  Json json() const {
    return write_json([&](ResultWriter& w) {
      w.start_object();
      if (!param.empty()) {
        w.key("param");
        w.string(param);
      }
      if (operation_index) {
        w.key("operationIndex");
        w.unsigned_integer(*operation_index);
      }
      w.key("reason");
      w.string(reason);
      if (!extra_key.empty()) {
        w.key(extra_key);
        w.unsigned_integer(extra);
      }
      w.end_object();
    });
  }
};

inline Error invalid(const ParamData& data) { return Error(ErrorCode::invalid_params, data.json()); }

// `{"code": C, "message": M[, "data": D]}`, as a response's error member.
inline void append_error_object(Buffer& out, ResultWriter& w, const Error& e) {
  out.append(R"({"code":)");
  append_int(out, e.code());
  out.append(R"(,"message":)");
  append_string(out, w, e.message());
  if (!e.data().empty()) {
    out.append(R"(,"data":)");
    out.append(e.data().text());
  }
  out.append('}');
}

// The code of an error object written as above or by call_method.
inline int error_code(std::string_view object) {
  constexpr std::string_view head = R"({"code":)";
  int code = 0;
  if (object.substr(0, head.size()) == head) {
    std::from_chars(object.data() + head.size(), object.data() + object.size(), code);
  }
  return code;
}

// An error object call_method wrote, back as the rpc::Error that answers the same bytes.
inline Error error_from_object(std::string_view object) {
  // {"code":<int>,"message":"<escaped>"[,"data":<json>]}
  const int code = error_code(object);
  constexpr std::string_view message_key = R"(,"message":)";
  std::size_t p = object.find(message_key);
  if (p == std::string_view::npos) return Error(ErrorCode::internal_error);
  p += message_key.size();
  const std::size_t quoted_start = p++;
  while (p < object.size() && object[p] != '"') p += object[p] == '\\' ? 2u : 1u;
  if (p >= object.size()) return Error(ErrorCode::internal_error);
  const std::size_t quoted_end = ++p;
  rapidjson::Document decoded;
  decoded.Parse(object.data() + quoted_start, quoted_end - quoted_start);
  if (decoded.HasParseError() || !decoded.IsString()) return Error(ErrorCode::internal_error);
  std::string message(decoded.GetString(), decoded.GetStringLength());
  constexpr std::string_view data_key = R"(,"data":)";
  Json data;
  if (object.substr(p, data_key.size()) == data_key) {
    const std::size_t start = p + data_key.size();
    data = Json::trusted(std::string(object.substr(start, object.size() - 1 - start)));
  }
  return Error(code, std::move(message), std::move(data));
}

// `{"content":[{"type":"text","text":"<R>"}],"structuredContent":R,"isError":B}`.
inline void write_content(ResultWriter& out, const ToolsOptions& options, std::string_view result,
                          bool is_error) {
  out.start_object();
  out.key("content");
  out.start_array();
  out.start_object();
  out.key("type");
  out.string("text");
  out.key("text");
  out.string(result);
  out.end_object();
  out.end_array();
  if (options.structured_content && !result.empty() && result.front() == '{') {
    out.key("structuredContent");
    out.raw(Json::trusted(std::string(result)));
  }
  out.key("isError");
  out.boolean(is_error);
  out.end_object();
}

// ---- Finding and gating tools ---------------------------------------------------------------

inline const Router& router_of(const ToolTable& table, const Context& ctx) {
  return ctx.router() != nullptr ? *ctx.router() : *table.router;
}

// The capability a tool needs; nullptr when its method is not on `router`.
inline const std::string* capability_of(const Tool& tool, const Router& router) {
  if (tool.batch) return &tool.capability;
  const MethodOptions* options = router.options_of(tool.method);
  return options == nullptr ? nullptr : &options->capability;
}

// True when the caller may call `capability` (the trusted path may call anything).
inline bool granted(const std::string& capability, const Context& ctx) {
  return capability.empty() || ctx.session() == nullptr || ctx.session()->granted(capability);
}

// Why `tool` (found under `name`, or nullptr) cannot be called here, if it cannot. `param` is
// the member that named it: "name" for tools/call, "tool" in a batch operation.
inline std::optional<Error> refuse(const Tool* tool, std::string_view name, std::string_view param,
                                   bool in_batch, const Router& router, const Context& ctx) {
  const std::string* capability = tool != nullptr ? capability_of(*tool, router) : nullptr;
  if (capability == nullptr) {
    return invalid({.param = param, .reason = "unknown tool: " + std::string(name)});
  }
  if (in_batch && tool->batch) {
    return invalid({.param = param, .reason = "the batch tool cannot run inside a batch"});
  }
  if (!granted(*capability, ctx)) {
    return Error(ErrorCode::method_not_found, write_json([&](ResultWriter& w) {
                   w.start_object();
                   w.key("capability");
                   w.string(*capability);
                   w.end_object();
                 }));
  }
  return std::nullopt;
}

// ---- Running one method as a tool -------------------------------------------------------------

// The slot a Responder answers into while the tool call waits for it. In a session, the session
// knows the slot as it knows a request's own (see SessionCore::await): a session that ends
// answers it -32800, so tools/call never waits on a Responder longer than its session lives.
class ToolDeferred final : public BlockingDeferred {
 public:
  explicit ToolDeferred(Session* session) noexcept
      : BlockingDeferred(&completed, &attached), session_(session) {}

 private:
  static void attached(Deferred& slot, const std::shared_ptr<ResponderState>& state) {
    auto& self = static_cast<ToolDeferred&>(slot);
    if (self.session_ != nullptr) await_in(*self.session_, self, state);
  }
  static void completed(Deferred& slot) {
    auto& self = static_cast<ToolDeferred&>(slot);
    if (self.session_ != nullptr) unawait_in(*self.session_, self);  // before the waiter may destroy us
    self.wake();
  }
  Session* session_;
};

// Calls `method` (registered as `name`) with `arguments` as its params through call_method,
// inline, with the caller's id, session and cancellation (and, for a batch's operation, its
// share of the batch's progress). `text` is then the result's JSON text (returns true) or the
// error object's (returns false); it points into `reply`.
inline bool call_tool_method(const Router& router, const Method& method, std::string_view name,
                             const Value* arguments, const Context& ctx, Buffer& reply,
                             std::string_view& text, const ProgressSlice* progress = nullptr) {
  Request request;
  request.id = inner_id;  // what the response is written with; the handler sees ctx.id()
  request.method = name;
  request.params = arguments;
  const std::size_t limit = router.limits().max_response_bytes;
  ToolDeferred later(ctx.session());
  later.reset(ctx.stop_token(), limit);
  Context inner = ContextAccess::make(name, ctx.id(), ctx.stop_token(),
                                      {&router, ctx.session(), &later, arguments, ctx.request_params().json(), progress});
  reply.clear();
  ResultWriter w(reply);
  if (!call_method(router.options(), method, request, inner, w, reply, limit)) {
    later.wait();
    write_deferred(router.options(), request, later, w, reply);
  }
  const std::string_view v = reply.view();
  const bool ok = v.substr(0, result_head.size()) == result_head;
  const std::size_t head = ok ? result_head.size() : error_head.size();
  if (!ok && v.substr(0, error_head.size()) != error_head) {
    throw std::logic_error("batchrpc: unexpected response from a tool's method");
  }
  text = v.substr(head, v.size() - head - 1);
  return ok;
}

}  // namespace tools
}  // namespace rpc::detail
