// SPDX-License-Identifier: MIT
/// @file progress.hpp
/// `rpc::Progress`: a call's progress, reported to its client in the dialect the call asked
/// for: MCP `notifications/progress` or LSP `$/progress`.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "config.hpp"
#include "context.hpp"
#include "json.hpp"
#include "peer.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * The progress a client asked for on one call, and the way to report it.
 *
 * Made from the handler's `Context`, it finds the client's token in the request's params
 * (`Context::request_params()`: for a tool called through `tools/call`, `tools/call`'s):
 * - MCP: `params._meta.progressToken` (a string or an integer). Each `report` sends
 *   `notifications/progress` with `progressToken`, `progress`, `total` (when given) and
 *   `message` (when not empty). `begin` and `end` send nothing.
 * - LSP: `params.workDoneToken` (a string or an integer). `begin` sends `$/progress` with
 *   `{"kind":"begin","title":...}`; `report` sends `{"kind":"report"}` with `message` and
 *   `percentage` (`done * 100 / total`, rounded down, 0..100, when a total is given), and sends
 *   `begin` first, titled with the method name, if it was not sent; `end` sends
 *   `{"kind":"end"}` once, and only after a `begin`.
 * - LSP partial results: `params.partialResultToken`; `partial(value)` sends `$/progress`
 *   with `{"token":...,"value":value}`.
 *
 * Both protocols ask progress to rise: a `report` whose `done` is below the last one sent is
 * not sent (false), nor under MCP one equal to it (MCP's must increase every time). Nothing is
 * sent after `end`. A call whose client asked for no progress, or a session with no client,
 * sends nothing: every function returns false, so a handler reports unconditionally. Finish
 * reporting before answering the call: both protocols drop progress for a call answered
 * already.
 *
 * Inside the MCP `batch` tool (rpc::Tools), the operations share the batch's token, so their
 * reports are one sequence: operation k of n (from 0) reports `done` of `total` as
 * `k + done / total` of `n` (`k + done / (done + 1)` when it gives no total, so that a count
 * that rises still rises), and the batch itself reports
 * `k + 1` of `n`, with the tool's name, as each operation ends (unless the operation's own
 * reports got there: MCP's must rise). Under LSP the batch sends `begin` (titled with its
 * tool's name) as it starts and `end` after its last operation; an operation's `begin` and
 * `end` send nothing.
 *
 * Lifetime and thread-safety: a handle, cheap to copy; copies share their state (begun,
 * ended, the last `done`) and may be kept past the handler, in a `Responder`'s continuation
 * for example, and past the session (then nothing is sent). Any thread; reports made on one
 * thread go out in that order, so the client sees them rise. Reports made on several threads
 * at once are each checked against the last one made, but may reach the client in another
 * order: report from one thread at a time for a sequence that rises on the wire too.
 */
class Progress {
 public:
  /// The protocol whose progress the client asked for.
  enum class Dialect : unsigned char { none, mcp, lsp };

  /// Reports nothing.
  Progress() = default;
  /// The progress the client asked for on the call `ctx` serves (see the class comment).
  BATCHRPC_DECL explicit Progress(const Context& ctx);

  /// Which protocol's progress was asked for; `none` when no token was given.
  [[nodiscard]] Dialect dialect() const noexcept { return dialect_; }
  /// True when the client gave a progress token (MCP `progressToken`, LSP `workDoneToken`).
  [[nodiscard]] bool wanted() const noexcept { return dialect_ != Dialect::none; }
  /// The client's token as JSON text (a string or a number); empty when none.
  [[nodiscard]] const Json& token() const noexcept { return token_; }

  /// LSP: sends `begin` with `title`, and `message` and `cancellable` when given. Once; MCP
  /// sends nothing. @returns true when sent.
  BATCHRPC_DECL bool begin(std::string_view title, std::string_view message = {}, bool cancellable = false) const;
  /// Reports `done` out of `total` (0: unknown), with an optional message.
  /// @returns true when sent.
  BATCHRPC_DECL bool report(double done, double total = 0, std::string_view message = {}) const;
  /// LSP: sends `end`, with `message` when given; MCP sends nothing. Later reports are not
  /// sent. @returns true when sent.
  BATCHRPC_DECL bool end(std::string_view message = {}) const;
  /// LSP: sends `value` (a partial result) under the call's `partialResultToken`.
  /// @returns false when the call has none, or it could not be sent.
  BATCHRPC_DECL bool partial(const Json& value) const;

 private:
  struct State;
  // Where an operation's reports land on its batch's scale: [start, start + 1] of total.
  // (Batches do not nest: a batch's own Progress is never an operation's.)
  struct Range {
    double start = 0;
    double total = 0;  // 0: not inside a batch
  };

  Peer peer_;
  Dialect dialect_ = Dialect::none;
  Json token_;
  Json partial_token_;
  std::shared_ptr<State> state_;
  Range range_;
};

namespace detail {
// What the batch tool hands an operation's Context: operation `index` of `count`, under the
// batch's own Progress (which outlives the operation's call).
struct ProgressSlice {
  const Progress* whole = nullptr;
  std::size_t index = 0;
  std::size_t count = 0;
};
}  // namespace detail

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/progress.ipp"
#endif
