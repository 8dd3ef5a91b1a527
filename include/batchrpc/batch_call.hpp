// SPDX-License-Identifier: MIT
/// @file batch_call.hpp
/// `rpc::BatchCall` and `rpc::BatchHandler`: a method that answers all its calls in one JSON-RPC
/// batch together (batch-aware dispatch), registered with `Router::add_batched`.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <utility>

#include "config.hpp"
#include "context.hpp"
#include "error.hpp"
#include "handler.hpp"
#include "params.hpp"
#include "result_writer.hpp"

/// Defined when `Router::add_batched` exists.
#define BATCHRPC_HAS_BATCH_HANDLERS 1

namespace rpc::inline BATCHRPC_ABI {

/**
 * One call handed to a batch handler: its params, its own context (id, cancellation) and the
 * writer for its result. Answer it by writing exactly one value into `result()` (nothing written
 * answers `null`), or by `reject(error)`.
 *
 * Valid only during the batch handler call; each call's result writer stops at the reply budget
 * as a handler's does (catch its `std::length_error` inside your loop to go on with the other
 * calls: that call is answered `-32092` either way). Thread-safety: the calls of one group may
 * be answered from several threads as long as each call is written by one at a time.
 */
class BatchCall {
 public:
  /// Used by batchrpc.
  BatchCall(const Params& params, Context& context, ResultWriter& result) noexcept
      : params_(params), context_(&context), result_(&result) {}

  /// The call's params (JSON-RPC 2.0 §4.2).
  [[nodiscard]] const Params& params() const noexcept { return params_; }
  /// The call's context: its id and its own cancellation.
  [[nodiscard]] Context& context() const noexcept { return *context_; }
  /// Where the call's result is written.
  [[nodiscard]] ResultWriter& result() const noexcept { return *result_; }
  /// Answers this call with `error` instead (anything written into `result()` is dropped).
  void reject(Error error) { rejection_.emplace(std::move(error)); }
  /// The error given to `reject`, if any.
  [[nodiscard]] std::optional<Error>& rejection() noexcept { return rejection_; }

 private:
  Params params_;
  Context* context_;
  ResultWriter* result_;
  std::optional<Error> rejection_;
};

/// Answers every call in `calls` (see `Router::add_batched`).
using BatchHandler = std::function<void(std::span<BatchCall> calls)>;

namespace detail {

// The per-call path of a batched method (a singleton, or the only call of it in a batch): a
// group of one, answered exactly as any handler (a rejection is thrown as the handler's error).
class BatchedHandler final : public Handler {
  friend class Handler;

 public:
  explicit BatchedHandler(BatchHandler fn)
      : Handler(&invoke_as<BatchedHandler>, &destroy_as<BatchedHandler>, true),
        fn_(std::move(fn)) {}

 private:
  InvokeStatus run(const Params& params, Context& ctx, ResultWriter& out, ParamError&) const {
    BatchCall call(params, ctx, out);
    fn_(std::span<BatchCall>(&call, 1));
    if (call.rejection()) throw std::move(*call.rejection());
    return InvokeStatus::ok;
  }

  BatchHandler fn_;
};

}  // namespace detail
}  // namespace rpc
