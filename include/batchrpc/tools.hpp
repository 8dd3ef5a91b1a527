// SPDX-License-Identifier: MIT
/// @file tools.hpp
/// `rpc::Tools`: router methods as MCP-style tools (`tools/list`, `tools/call`) and the `batch`
/// tool, which runs several tool operations in one call.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "config.hpp"
#include "json.hpp"
#include "router.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
struct ToolTable;
}

/// How one exposed method is described in `tools/list`.
struct ToolInfo {
  /// The tool's name, when it is not the method's: MCP clients may refuse names with
  /// characters other than letters, digits, `_`, `-` and `.`, so `embed/sparse` can be the
  /// tool `embed_sparse`. Empty: the method's name.
  std::string name{};
  /// `description` in `tools/list` (omitted when empty).
  std::string description{};
  /// `inputSchema` in `tools/list`: a JSON Schema, which must be a JSON object; written
  /// compactly (no line breaks, whatever the text given). Empty: `{"type":"object"}`.
  Json input_schema{};
  /// What the batch tool tells a client when this tool's output is omitted to fit the budget
  /// (the `guidance` of the notice). Empty: `BatchToolOptions::guidance`.
  std::string guidance{};
};

/// How the batch tool is registered. Its parameters and their defaults are the seed's and
/// fixed: only the server-side wording, name and gating can change.
struct BatchToolOptions {
  /// `maxOperations` when the client gives none (0 = unlimited).
  static constexpr std::size_t default_max_operations = 25;
  /// `maxTotalOutputChars` when the client gives none (0 = no budget).
  static constexpr std::size_t default_max_total_output_chars = 200000;

  /// The tool's name.
  std::string name = "batch";
  /// `description` in `tools/list`.
  std::string description = "Runs multiple tool operations sequentially in one request.";
  /// The capability a session needs to list and call the batch tool (empty: none). The
  /// operations are still gated one by one.
  std::string capability{};
  /// The notice's `guidance` for tools that have none of their own (`ToolInfo::guidance`).
  std::string guidance =
      "Output omitted to fit maxTotalOutputChars; the operation completed. Call this tool "
      "directly, with narrower arguments if it has them, to read its output. Do not repeat "
      "it if it changed state.";
};

/// How `tools/call` answers.
struct ToolsOptions {
  /// Also give an object result as `structuredContent` (MCP 2025-06-18) beside its text in
  /// `content`; the result then appears twice in the reply.
  bool structured_content = true;
};

/**
 * A tool registry on a router, in the shape of the Model Context Protocol's tools.
 *
 * Constructing it registers two methods on the router:
 *
 * - `tools/list {"cursor"?}` -> `{"tools":[{"name", "description"?, "inputSchema"}, ...]}`, in
 *   registration order, listing only the tools the calling session may call (a method's
 *   capability, see `MethodOptions::capability`; all of them through `Router::handle`). Every
 *   tool is on one page: there is never a `nextCursor`, and any `cursor` is `-32602`.
 * - `tools/call {"name", "arguments"?}` runs the tool with `arguments` as its params (an object
 *   by name, as MCP sends it, or an array by position; absent or `null`: no params). Other
 *   members (MCP's `_meta`) are ignored. A result `R` is answered
 *   `{"content":[{"type":"text","text":"<R as JSON text>"}],"structuredContent":R,"isError":false}`
 *   (`structuredContent` only when `R` is an object and `ToolsOptions::structured_content`).
 *   A failure is answered with the very error object calling the method directly gives:
 *   `-32602` for bad arguments (with `data.param` when the method names its parameters; one
 *   that takes the arguments whole as a struct says the field in `data.reason`), `-32601` with
 *   `data.capability` for a tool whose capability the session lacks, the handler's own
 *   `rpc::Error`, `-32800` when cancelled. An unknown tool name is `-32602` with
 *   `data: {"param":"name","reason":...}`, as MCP does.
 *
 * A tool runs through the same call path as a request for its method (`detail::call_method`):
 * the same binding, errors, exception hook and `rpc::Responder` handling, with the session's
 * gating. It runs inline on the thread that handles `tools/call` (never queued on the
 * session's executor, so a busy pool cannot deadlock a batch), sees the `tools/call` request's
 * id and cancellation through its `rpc::Context`, and is not itself enrolled for
 * cancellation under any id. A method that answers through an `rpc::Responder` is waited
 * for, as `Router::handle` waits: it must not need this thread to answer. In a session, a
 * session that ends answers it `-32800` (so `tools/call` is answered `-32800`) and its
 * Responder then refuses its own answer quietly, as for a request's own Responder.
 *
 * The batch tool (`add_batch_tool`), per seed 004: `arguments` =
 * `{"operations": [...] | "<a JSON array as a string>", "stopOnError"?: false,
 *   "maxOperations"?: 25, "maxTotalOutputChars"?: 200000, "responseDetail"?: "compact"|"full"}`;
 * each operation is `{"tool": name, "arguments"?: {...}}`. Its result (`isError` is
 * `!success`):
 * @code
 * {"success": true,            // every operation ran and none failed
 *  "operationCount": 3, "completedCount": 3, "failedCount": 0,
 *  "stoppedEarly": false,      // true when some operations did not run
 *  "results": [                // one entry per operation that ran, in operation order:
 *    {"tool": "a", "result": R},                          // completed
 *    {"operationIndex": 2, "tool": "b", "truncated": true, "successOnly": true,
 *     "executionStatus": "completed", "guidance": "..."}, // completed, output omitted
 *    {"tool": "c", "error": {"code": -32601, "message": "Method not found", "data": {...}}}],
 *  "meta": {"truncated": true, "totalOutputChars": 75000},
 *  "responseDiagnostics": {...}}  // only with "responseDetail": "full"
 * @endcode
 * - Output chars are bytes of a result's compact UTF-8 JSON text (so never fewer than its
 *   characters). `maxTotalOutputChars` budgets the complete outputs and the notices that
 *   replace them; errors are always kept and not counted. Before anything runs, a notice is
 *   reserved for every operation: if the notices alone exceed the budget the call is `-32602`
 *   (`data.param` `maxTotalOutputChars`, `data.required`) and nothing runs. A result is kept
 *   when it fits the budget left after the reservations for the operations after it, else it
 *   is replaced by its notice (`operationIndex` is 1-based), and a later small one can still
 *   fit. `meta.totalOutputChars` is what was counted (<= the budget when there is one).
 * - More operations than `maxOperations` (or than the router's `Limits::max_batch`, whatever
 *   `maxOperations` says) is `-32602` with `data.max`, and nothing runs; so is any malformed
 *   argument or operation (`data.operationIndex` names the operation) and an `operations`
 *   string that is not valid JSON.
 * - An operation naming a batch tool (batches do not nest), an unknown tool, or a tool the
 *   session may not call fails that operation only (with the error `tools/call` would give)
 *   unless `stopOnError`, which stops after the first failed operation.
 * - Cancelling the `tools/call` request stops the batch between operations (a running one
 *   sees the cancellation through its context). If that left the batch unfinished, the reply
 *   is `-32800 Request cancelled` with the report above as `data`, so the client learns what
 *   completed (an operation that the cancellation stopped counts in `failedCount`, with error
 *   `-32800`; those never started are `notRun`); a cancellation after the last operation
 *   changes nothing.
 * - `"responseDetail": "full"` adds `responseDiagnostics`: `settings` (the values in effect),
 *   `reservedNoticeChars`, `stopReason` (`"none"`, `"stopOnError"`, `"cancelled"`) and one
 *   entry per operation: `operationIndex`, `tool`, `executionStatus` (`"completed"`,
 *   `"failed"`, `"notRun"`), then `outputChars` and `included` (completed) or `errorCode`.
 *
 * Error codes: only the standard ones (`-32601`, `-32602`, `-32603`, `-32800`); no new codes.
 *
 * Lifetime and thread-safety: the registry lives as long as the router's methods (the
 * `Tools` object itself may go away). Register everything before the router handles its
 * first message: like `Router::add`, nothing here is thread-safe. Calls are thread-safe.
 *
 * @code
 * rpc::Router router;
 * rpc::add_builtins(router);
 * rpc::Tools tools{router};
 * tools.expose("ping", {.description = "Echoes a nonce."});
 * tools.add_batch_tool();
 * @endcode
 */
class Tools {
 public:
  /**
   * Registers `tools/list` and `tools/call` on `router`, which must outlive the registry and
   * not move while tools are added.
   * @throws std::invalid_argument if either name is already registered.
   */
  BATCHRPC_DECL explicit Tools(Router& router, ToolsOptions options = {});

  /**
   * Exposes the registered method `method` as a tool named `info.name` (or `method`), gated
   * by the method's capability.
   * @throws std::invalid_argument if `method` is not registered, is `tools/list` or
   *         `tools/call`, a tool of that name exists, or `info.input_schema` is not a JSON
   *         object.
   */
  BATCHRPC_DECL Tools& expose(std::string_view method, ToolInfo info = {});

  /**
   * Adds the batch tool (see above).
   * @throws std::invalid_argument if a tool of that name exists, or the name is empty.
   */
  BATCHRPC_DECL Tools& add_batch_tool(BatchToolOptions options = {});

  /// True when a tool named `name` exists.
  [[nodiscard]] BATCHRPC_DECL bool contains(std::string_view name) const;
  /// Number of tools.
  [[nodiscard]] BATCHRPC_DECL std::size_t size() const;

 private:
  Router* router_;
  std::shared_ptr<detail::ToolTable> table_;  // shared with the registered handlers
};

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/tools.ipp"
#endif
