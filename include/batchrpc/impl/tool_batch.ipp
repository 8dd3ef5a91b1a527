// SPDX-License-Identifier: MIT
// The batch tool (included by tools.ipp): its arguments, the operations, the output budget and
// its notices, running the operations in order, and the report.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../detail/message_parser.hpp"
#include "../json_traits.hpp"
#include "tool_table.ipp"

namespace rpc::inline BATCHRPC_ABI::detail::tools {

using namespace std::string_view_literals;

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
          throw fail(R"("arguments" must be an object (or an array, by position))");
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

// The most operations one batch may hold: maxOperations (0 = unlimited), never past the
// router's Limits::max_batch. Counted before anything runs.
struct OperationCap {
  std::size_t max = 0;
  bool from_client = false;  // maxOperations, not the server's limit

  OperationCap(const BatchArgs& args, const Limits& limits)
      : from_client(args.max_operations != 0 && args.max_operations <= limits.max_batch) {
    max = from_client ? args.max_operations : limits.max_batch;
  }

  [[nodiscard]] Error too_many() const {
    return invalid({.param = "operations",
                    .reason = from_client ? "more operations than maxOperations (" + std::to_string(max) + ")"
                                          : "more operations than the server's limit of " + std::to_string(max) +
                                                " per batch",
                    .extra_key = "max", .extra = max});
  }
};

// The operations array: `operations` itself, or the array a string of it holds. The string is
// parsed like a message (same depth limit, numbers and UTF-8 rules) into `source` and `parser`,
// which stop building once there are too many operations.
inline const Value& operations_list(const Value& operations, const Limits& limits, const OperationCap& cap,
                                    std::string& source, MessageParser& parser) {
  const Value* list = &operations;
  if (list->IsString()) {
    source.assign(list->GetString(), list->GetStringLength());
    Limits string_limits = limits;
    string_limits.max_batch = cap.max;
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
        throw cap.too_many();
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
  if (list->Size() > cap.max) throw cap.too_many();
  return *list;
}

inline std::string_view guidance_for(const ToolTable& table, std::string_view tool) {
  const Tool* t = table.find(tool);
  return t != nullptr && !t->guidance.empty() ? std::string_view(t->guidance)
                                              : std::string_view(table.default_guidance);
}

// Every operation's notice, reserved up front against maxTotalOutputChars (`budget`; 0: none),
// so that whatever happens each one fits.
struct Notices {
  std::vector<std::size_t> size;  // each operation's notice, in chars (0 without a budget)
  std::size_t reserved = 0;       // their sum
};

inline Notices reserve_notices(const ToolTable& table, const std::vector<Operation>& plan, std::size_t budget,
                               ResultWriter& w) {
  Notices notices{std::vector<std::size_t>(plan.size(), 0), 0};
  if (budget == 0) return notices;
  Buffer scratch;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    scratch.clear();
    append_notice(scratch, w, i, plan[i].tool, guidance_for(table, plan[i].tool));
    notices.size[i] = scratch.size();
    notices.reserved += notices.size[i];
  }
  if (notices.reserved > budget) {
    throw invalid({.param = "maxTotalOutputChars",
                   .reason = "the completion notices of " + std::to_string(plan.size()) + " operations need " +
                             std::to_string(notices.reserved) + " chars, more than maxTotalOutputChars (" +
                             std::to_string(budget) + "): raise it, use 0 for no budget, or send fewer operations",
                   .extra_key = "required", .extra = notices.reserved});
  }
  return notices;
}

// What running the operations left: their states and the report's `results` array (without
// its brackets).
struct BatchRun {
  std::vector<OperationState> states;
  Buffer results;
  std::size_t ran = 0;  // operations run: they come first
  std::size_t completed = 0;
  std::size_t failed = 0;
  std::size_t used = 0;  // chars of the results counted against the budget
  bool truncated = false;
  bool stopped_on_error = false;
};

// Appends operation `index`'s entry to `run.results` (with a notice in place of an output that
// does not fit what the budget has left once every later notice is reserved).
inline void record(BatchRun& run, const ToolTable& table, std::size_t index, std::string_view tool, bool ok,
                   std::string_view text, std::size_t budget, const Notices& notices, std::size_t still_reserved,
                   ResultWriter& w) {
  OperationState& state = run.states[index];
  if (index > 0) run.results.append(',');
  if (ok) {
    ++run.completed;
    state.status = Status::completed;
    state.output_chars = text.size();
    // used + still_reserved + notices.size[index] <= budget holds here, so this cannot wrap.
    state.included = budget == 0 || text.size() <= budget - run.used - still_reserved;
    if (!state.included) {
      append_notice(run.results, w, index, tool, guidance_for(table, tool));
      run.used += notices.size[index];
      run.truncated = true;
      return;
    }
    run.used += text.size();
  } else {
    ++run.failed;
    state.status = Status::failed;
    state.error_code = error_code(text);
  }
  run.results.append(R"({"tool":)");
  append_string(run.results, w, tool);
  run.results.append(ok ? R"(,"result":)"sv : R"(,"error":)"sv);
  run.results.append(text);
  run.results.append('}');
}

// Runs the operations in order, each through its tool's gating, until all have run, the
// request is cancelled, or (with stopOnError) one fails. The client's progress token is the
// batch's: the operations report on shares of it, the batch as each ends (see rpc::Progress).
inline BatchRun run_operations(const ToolTable& table, std::string_view batch_tool, const std::vector<Operation>& plan,
                               const BatchArgs& args, const Notices& notices, const Context& ctx, ResultWriter& w) {
  const Router& router = router_of(table, ctx);
  const Progress progress(ctx);
  (void)progress.begin(batch_tool);  // LSP's, titled with the tool (the context is tools/call's)
  BatchRun run;
  run.states.resize(plan.size());
  Buffer reply;
  Buffer refusal;
  std::size_t still_reserved = notices.reserved;
  for (; run.ran < plan.size(); ++run.ran) {
    if (ctx.stop_requested()) break;
    const Operation& op = plan[run.ran];
    still_reserved -= notices.size[run.ran];  // from here this operation uses what it needs instead
    std::string_view text;
    bool ok = false;
    const Tool* tool = table.find(op.tool);
    if (auto why = refuse(tool, op.tool, "tool", true, router, ctx)) {
      refusal.clear();
      append_error_object(refusal, w, *why);
      text = refusal.view();
    } else {
      const ProgressSlice share{&progress, run.ran, plan.size()};
      ok = call_tool_method(router, *RouterAccess::find(router, tool->method), tool->method, op.arguments, ctx,
                            reply, text, &share);
    }
    (void)progress.report(static_cast<double>(run.ran + 1), static_cast<double>(plan.size()), op.tool);
    record(run, table, run.ran, op.tool, ok, text, args.max_total_output_chars, notices, still_reserved, w);
    if (!ok && args.stop_on_error) {
      ++run.ran;
      run.stopped_on_error = run.ran < plan.size();
      break;
    }
  }
  (void)progress.end();
  return run;
}

// The full report's `responseDiagnostics`, with its leading comma.
inline void append_diagnostics(Buffer& report, const BatchArgs& args, const std::vector<Operation>& plan,
                               const Notices& notices, const BatchRun& run, bool cancelled, ResultWriter& w) {
  report.append(R"(,"responseDiagnostics":{"settings":{"stopOnError":)");
  append_bool(report, args.stop_on_error);
  report.append(R"(,"maxOperations":)");
  append_size(report, args.max_operations);
  report.append(R"(,"maxTotalOutputChars":)");
  append_size(report, args.max_total_output_chars);
  report.append(R"(},"reservedNoticeChars":)");
  append_size(report, notices.reserved);
  report.append(R"(,"stopReason":)");
  report.append(cancelled ? R"("cancelled")"sv : run.stopped_on_error ? R"("stopOnError")"sv : R"("none")"sv);
  report.append(R"(,"operations":[)");
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const OperationState& s = run.states[i];
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

// The report (seed 004's result object) as JSON text; true in `cancelled` when the request's
// cancellation left the batch unfinished.
inline std::string run_batch(const ToolTable& table, std::string_view batch_tool, const Value* arguments,
                             const Context& ctx, bool& success, bool& cancelled) {
  const Limits& limits = router_of(table, ctx).limits();
  const BatchArgs args = read_batch_args(arguments);
  const OperationCap cap(args, limits);
  std::string source;
  MessageParser parser;
  const std::vector<Operation> plan = read_operations(operations_list(*args.operations, limits, cap, source, parser));

  Buffer scratch;
  ResultWriter w(scratch);
  const Notices notices = reserve_notices(table, plan, args.max_total_output_chars, w);
  const BatchRun run = run_operations(table, batch_tool, plan, args, notices, ctx, w);

  const bool stopped_early = run.ran < plan.size();
  cancelled = ctx.stop_requested() &&
              (stopped_early || (run.ran > 0 && run.states[run.ran - 1].error_code ==
                                                    static_cast<int>(ErrorCode::request_cancelled)));
  success = run.failed == 0 && !stopped_early;

  Buffer report;
  report.append(R"({"success":)");
  append_bool(report, success);
  report.append(R"(,"operationCount":)");
  append_size(report, plan.size());
  report.append(R"(,"completedCount":)");
  append_size(report, run.completed);
  report.append(R"(,"failedCount":)");
  append_size(report, run.failed);
  report.append(R"(,"stoppedEarly":)");
  append_bool(report, stopped_early);
  report.append(R"(,"results":[)");
  report.append(run.results.view());
  report.append(R"(],"meta":{"truncated":)");
  append_bool(report, run.truncated);
  report.append(R"(,"totalOutputChars":)");
  append_size(report, run.used);
  report.append('}');
  if (args.full) append_diagnostics(report, args, plan, notices, run, cancelled, w);
  report.append('}');
  return report.str();
}

}  // namespace rpc::detail::tools
