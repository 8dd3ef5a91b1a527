// SPDX-License-Identifier: MIT
// Non-template bodies of tools.hpp: tools/list, tools/call and the batch tool.
#pragma once

#include <charconv>
#include <cstddef>
#include <limits>
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
#include "../detail/message_parser.hpp"
#include "../detail/reply.hpp"
#include "../detail/request.hpp"
#include "../detail/session_await.hpp"
#include "../detail/utf8.hpp"
#include "../error.hpp"
#include "../json_traits.hpp"
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

// The batch tool's inputSchema: seed 004's parameter table as JSON Schema.
inline constexpr std::string_view batch_schema =
    R"({"type":"object","properties":{)"
    R"("operations":{"type":["array","string"],"description":"Operations to run, in order. )"
    R"(JSON array of objects like { \"tool\": \"get_type_info\", \"arguments\": { ... } }, or a )"
    R"(string holding one.","items":{"type":"object","properties":{"tool":{"type":"string"},)"
    R"("arguments":{"type":"object"}},"required":["tool"]}},)"
    R"("stopOnError":{"type":"boolean","default":false,"description":"When true, stops after )"
    R"(the first failure. Default is false."},)"
    R"("maxOperations":{"type":"integer","minimum":0,"default":25,"description":"Maximum )"
    R"(number of operations allowed. Use 0 for unlimited. Default is 25."},)"
    R"("maxTotalOutputChars":{"type":"integer","minimum":0,"default":200000,"description":)"
    R"("Budget for complete inner outputs. Default 200000; 0 disables this budget. The server )"
    R"(response ceiling still applies. Omitted outputs retain execution status and recovery )"
    R"(guidance."},)"
    R"("responseDetail":{"type":"string","enum":["compact","full"],"default":"compact",)"
    R"("description":"compact returns results and actionable state. full adds diagnostic )"
    R"(metadata under responseDiagnostics."}},"required":["operations"]})";

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
  explicit ToolDeferred(Session* session) noexcept : session_(session) {}

 private:
  void attach(const std::shared_ptr<ResponderState>& state) override {
    if (session_ != nullptr) await_in(*session_, *this, state);
  }
  void on_complete() override {
    if (session_ != nullptr) unawait_in(*session_, *this);  // before the waiter may destroy us
    wake();
  }
  Session* session_;
};

// Calls `method` (registered as `name`) with `arguments` as its params through call_method,
// inline, with the caller's id, session and cancellation. `text` is then the result's JSON
// text (returns true) or the error object's (returns false); it points into `reply`.
inline bool call_tool_method(const Router& router, const Method& method, std::string_view name,
                             const Value* arguments, const Context& ctx, Buffer& reply,
                             std::string_view& text) {
  Request request;
  request.id = inner_id;  // what the response is written with; the handler sees ctx.id()
  request.method = name;
  request.params = arguments;
  const std::size_t limit = router.limits().max_response_bytes;
  ToolDeferred later(ctx.session());
  later.reset(ctx.stop_token(), limit);
  Context inner = ContextAccess::make(name, ctx.id(), ctx.stop_token(),
                                      {&router, ctx.session(), &later, arguments, ctx.request_params().json()});
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

// ---- The batch tool -------------------------------------------------------------------------

struct BatchArgs {
  const Value* operations = nullptr;
  bool stop_on_error = false;
  std::size_t max_operations = BatchToolOptions::default_max_operations;
  std::size_t max_total_output_chars = BatchToolOptions::default_max_total_output_chars;
  bool full = false;
};

inline BatchArgs read_batch_args(const Value* arguments) {
  BatchArgs args;
  if (arguments == nullptr) throw invalid({.param = "operations", .reason = "missing required parameter"});
  if (!arguments->IsObject()) {
    throw invalid({.reason = "the batch tool takes named arguments (an object)"});
  }
  constexpr std::string_view known[] = {"operations", "stopOnError", "maxOperations",
                                        "maxTotalOutputChars", "responseDetail"};
  bool seen[std::size(known)] = {};
  for (const auto& m : arguments->GetObject()) {
    const std::string_view name = name_of(m.name);
    std::size_t k = 0;
    while (k < std::size(known) && known[k] != name) ++k;
    if (k == std::size(known)) throw invalid({.param = name, .reason = "unknown parameter"});
    if (seen[k]) throw invalid({.param = name, .reason = "duplicate parameter"});
    seen[k] = true;
    std::string why;
    bool ok = true;
    switch (k) {
      case 0: args.operations = &m.value; break;
      case 1: ok = JsonTraits<bool>::read(m.value, args.stop_on_error, why); break;
      case 2: ok = JsonTraits<std::size_t>::read(m.value, args.max_operations, why); break;
      case 3: ok = JsonTraits<std::size_t>::read(m.value, args.max_total_output_chars, why); break;
      default:
        if (m.value.IsString() && name_of(m.value) == "full") {
          args.full = true;
        } else if (!m.value.IsString() || name_of(m.value) != "compact") {
          ok = false;
          why = R"(expected "compact" or "full")";
        }
    }
    if (!ok) throw invalid({.param = name, .reason = why});
  }
  if (args.operations == nullptr) {
    throw invalid({.param = "operations", .reason = "missing required parameter"});
  }
  return args;
}

struct Operation {
  std::string_view tool;
  const Value* arguments = nullptr;  // an object or an array; nullptr: none
};

// Checks the operations array before anything runs.
inline std::vector<Operation> read_operations(const Value& list) {
  std::vector<Operation> plan;
  plan.reserve(list.Size());
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const Value& v = list[i];
    const auto fail = [i](const std::string& reason) {
      return invalid({.param = "operations", .reason = reason, .operation_index = std::size_t{i} + 1});
    };
    if (!v.IsObject()) {
      throw fail(R"(an operation must be an object: {"tool": name, "arguments": {...}})");
    }
    Operation op;
    bool has_tool = false;
    bool has_arguments = false;
    for (const auto& m : v.GetObject()) {
      const std::string_view name = name_of(m.name);
      if (name == "tool") {
        if (has_tool) throw fail(R"(duplicate member "tool")");
        has_tool = true;
        if (!m.value.IsString()) throw fail(R"("tool" must be a string)");
        op.tool = name_of(m.value);
      } else if (name == "arguments") {
        if (has_arguments) throw fail(R"(duplicate member "arguments")");
        has_arguments = true;
        if (m.value.IsObject() || m.value.IsArray()) {
          op.arguments = &m.value;
        } else if (!m.value.IsNull()) {
          throw fail(R"("arguments" must be an object)");
        }
      } else {
        throw fail("unknown member \"" + std::string(name) + "\"");
      }
    }
    if (!has_tool) throw fail(R"(missing "tool")");
    plan.push_back(op);
  }
  return plan;
}

// What the notice replacing operation `index`'s output says (index 0-based; written 1-based).
inline void append_notice(Buffer& out, ResultWriter& w, std::size_t index, std::string_view tool,
                          std::string_view guidance) {
  out.append(R"({"operationIndex":)");
  append_size(out, index + 1);
  out.append(R"(,"tool":)");
  append_string(out, w, tool);
  out.append(R"(,"truncated":true,"successOnly":true,"executionStatus":"completed","guidance":)");
  append_string(out, w, guidance);
  out.append('}');
}

enum class Status : unsigned char { not_run, completed, failed };
struct OperationState {
  Status status = Status::not_run;
  bool included = false;
  std::size_t output_chars = 0;
  int error_code = 0;
};

// The report (seed 004's result object) as JSON text; true in `cancelled` when the request's
// cancellation left the batch unfinished.
inline std::string run_batch(const ToolTable& table, const Value* arguments, const Context& ctx,
                             bool& success, bool& cancelled) {
  const Router& router = router_of(table, ctx);
  const Limits& limits = router.limits();
  BatchArgs args = read_batch_args(arguments);

  // The most operations allowed: maxOperations (0 = unlimited), never past the router's
  // Limits::max_batch. Counted before anything runs.
  const std::size_t cap = limits.max_batch;
  const bool client_limit = args.max_operations != 0 && args.max_operations <= cap;
  const auto too_many = [&] {
    if (client_limit) {
      return invalid({.param = "operations",
                      .reason = "more operations than maxOperations (" +
                                std::to_string(args.max_operations) + ")",
                      .extra_key = "max", .extra = args.max_operations});
    }
    return invalid({.param = "operations",
                    .reason = "more operations than the server's limit of " + std::to_string(cap) +
                              " per batch",
                    .extra_key = "max", .extra = cap});
  };

  // An `operations` string is parsed like a message: same depth limit, numbers and UTF-8
  // rules, and the parser stops building once there are too many operations.
  std::string source;
  MessageParser parser;
  const Value* list = args.operations;
  if (list->IsString()) {
    source.assign(list->GetString(), list->GetStringLength());
    Limits string_limits = limits;
    string_limits.max_batch = client_limit ? args.max_operations : cap;
    const ParseOutcome parsed = parser.parse(source.data(), source.size(), string_limits);
    switch (parsed.status) {
      case ParseStatus::ok:
        break;
      case ParseStatus::syntax_error:
        throw invalid({.param = "operations",
                       .reason = "not valid JSON: " + std::string(parsed.reason) + " (offset " +
                                 std::to_string(parsed.offset) + ")"});
      case ParseStatus::too_deep:
        throw invalid({.param = "operations",
                       .reason = "nests deeper than " + std::to_string(limits.max_depth),
                       .extra_key = "max", .extra = limits.max_depth});
      case ParseStatus::batch_too_large:
        throw too_many();
      case ParseStatus::too_costly:
        throw invalid({.param = "operations",
                       .reason = "its parsed form exceeds the parse budget of " + std::to_string(parsed.budget) +
                                 " bytes"});
    }
    list = &parser.root();
  }
  if (!list->IsArray()) {
    throw invalid({.param = "operations",
                   .reason = "expected a JSON array of operations, or a string holding one"});
  }
  const std::size_t count = list->Size();
  if (count > (client_limit ? args.max_operations : cap)) throw too_many();
  const std::vector<Operation> plan = read_operations(*list);

  Buffer scratch;
  ResultWriter w(scratch);
  const auto guidance_for = [&](std::string_view tool) -> std::string_view {
    const Tool* t = table.find(tool);
    return t != nullptr && !t->guidance.empty() ? std::string_view(t->guidance)
                                                : std::string_view(table.default_guidance);
  };

  // Every operation's notice is reserved up front: whatever happens, each one fits.
  const std::size_t budget = args.max_total_output_chars;
  std::vector<std::size_t> notice(count, 0);
  std::size_t reserved = 0;
  if (budget != 0) {
    for (std::size_t i = 0; i < count; ++i) {
      scratch.clear();
      append_notice(scratch, w, i, plan[i].tool, guidance_for(plan[i].tool));
      notice[i] = scratch.size();
      reserved += notice[i];
    }
    if (reserved > budget) {
      throw invalid({.param = "maxTotalOutputChars",
                     .reason = "the completion notices of " + std::to_string(count) +
                               " operations need " + std::to_string(reserved) +
                               " chars, more than maxTotalOutputChars (" + std::to_string(budget) +
                               "): raise it, use 0 for no budget, or send fewer operations",
                     .extra_key = "required", .extra = reserved});
    }
  }

  std::vector<OperationState> states(count);
  Buffer results;
  Buffer reply;
  Buffer refusal;
  std::size_t used = 0;
  std::size_t still_reserved = reserved;
  std::size_t completed = 0;
  std::size_t failed = 0;
  std::size_t ran = 0;
  bool truncated = false;
  bool stopped_on_error = false;
  for (; ran < count; ++ran) {
    if (ctx.stop_requested()) break;
    const Operation& op = plan[ran];
    OperationState& state = states[ran];
    still_reserved -= notice[ran];  // from here this operation uses what it needs instead

    std::string_view text;
    bool ok = false;
    const Tool* tool = table.find(op.tool);
    if (auto why = refuse(tool, op.tool, "tool", true, router, ctx)) {
      refusal.clear();
      append_error_object(refusal, w, *why);
      text = refusal.view();
    } else {
      ok = call_tool_method(router, *RouterAccess::find(router, tool->method), tool->method, op.arguments, ctx, reply, text);
    }

    if (ran > 0) results.append(',');
    if (ok) {
      ++completed;
      state.status = Status::completed;
      state.output_chars = text.size();
      // used + still_reserved + notice[ran] <= budget holds here, so this cannot wrap.
      state.included = budget == 0 || text.size() <= budget - used - still_reserved;
      if (state.included) {
        results.append(R"({"tool":)");
        append_string(results, w, op.tool);
        results.append(R"(,"result":)");
        results.append(text);
        results.append('}');
        used += text.size();
      } else {
        append_notice(results, w, ran, op.tool, guidance_for(op.tool));
        used += notice[ran];
        truncated = true;
      }
    } else {
      ++failed;
      state.status = Status::failed;
      state.error_code = error_code(text);
      results.append(R"({"tool":)");
      append_string(results, w, op.tool);
      results.append(R"(,"error":)");
      results.append(text);
      results.append('}');
      if (args.stop_on_error) {
        ++ran;
        stopped_on_error = ran < count;
        break;
      }
    }
  }

  const bool stopped_early = ran < count;
  cancelled = ctx.stop_requested() &&
              (stopped_early ||
               (ran > 0 && states[ran - 1].error_code == static_cast<int>(ErrorCode::request_cancelled)));
  success = failed == 0 && !stopped_early;

  Buffer report;
  report.append(R"({"success":)");
  append_bool(report, success);
  report.append(R"(,"operationCount":)");
  append_size(report, count);
  report.append(R"(,"completedCount":)");
  append_size(report, completed);
  report.append(R"(,"failedCount":)");
  append_size(report, failed);
  report.append(R"(,"stoppedEarly":)");
  append_bool(report, stopped_early);
  report.append(R"(,"results":[)");
  report.append(results.view());
  report.append(R"(],"meta":{"truncated":)");
  append_bool(report, truncated);
  report.append(R"(,"totalOutputChars":)");
  append_size(report, used);
  report.append('}');
  if (args.full) {
    report.append(R"(,"responseDiagnostics":{"settings":{"stopOnError":)");
    append_bool(report, args.stop_on_error);
    report.append(R"(,"maxOperations":)");
    append_size(report, args.max_operations);
    report.append(R"(,"maxTotalOutputChars":)");
    append_size(report, budget);
    report.append(R"(},"reservedNoticeChars":)");
    append_size(report, reserved);
    report.append(R"(,"stopReason":)");
    report.append(cancelled ? R"("cancelled")"sv : stopped_on_error ? R"("stopOnError")"sv : R"("none")"sv);
    report.append(R"(,"operations":[)");
    for (std::size_t i = 0; i < count; ++i) {
      const OperationState& s = states[i];
      if (i > 0) report.append(',');
      report.append(R"({"operationIndex":)");
      append_size(report, i + 1);
      report.append(R"(,"tool":)");
      append_string(report, w, plan[i].tool);
      switch (s.status) {
        case Status::completed:
          report.append(R"(,"executionStatus":"completed","outputChars":)");
          append_size(report, s.output_chars);
          report.append(R"(,"included":)");
          append_bool(report, s.included);
          break;
        case Status::failed:
          report.append(R"(,"executionStatus":"failed","errorCode":)");
          append_int(report, s.error_code);
          break;
        case Status::not_run:
          report.append(R"(,"executionStatus":"notRun")");
          break;
      }
      report.append('}');
    }
    report.append("]}");
  }
  report.append('}');
  return report.str();
}

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
    throw invalid({.param = "arguments", .reason = "expected an object"});
  }

  const Router& router = router_of(table, ctx);
  const std::string_view tool_name = name_of(*name);
  const Tool* tool = table.find(tool_name);
  if (auto why = refuse(tool, tool_name, "name", false, router, ctx)) throw *why;
  if (tool->batch) {
    bool success = false;
    bool cancelled = false;
    std::string report = run_batch(table, arguments, ctx, success, cancelled);
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
