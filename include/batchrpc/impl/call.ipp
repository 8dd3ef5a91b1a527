// SPDX-License-Identifier: MIT
// Non-template bodies of detail/call.hpp.
#pragma once

#include <exception>
#include <optional>
#include <stdexcept>

#include "../config.hpp"
#include "../detail/call.hpp"
#include "../detail/reply.hpp"
#include "../detail/reply_hold.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Exactly one of these says why a call failed.
struct Failure {
  const Error* error = nullptr;
  std::exception_ptr unexpected;
  const ParamError* params = nullptr;
};

BATCHRPC_DECL void report_exception(const RouterOptions& options, std::string_view method,
                                    std::exception_ptr e) {
  if (!options.on_exception) return;
  try {
    options.on_exception(method, e);
  } catch (...) {  // a logging hook must not take the server down
  }
}

BATCHRPC_DECL void write_failure(const RouterOptions& options, const RequestId& id,
                                 const Failure& failure, ResultWriter& w, Buffer& out) {
  if (failure.error != nullptr) {
    const Error& e = *failure.error;
    write_error(out, w, id, e.code(), e.message(), [&](ResultWriter& dw) {
      if (!e.data().empty()) dw.raw(e.data());
    });
  } else if (failure.unexpected) {
    write_error(out, w, id, ErrorCode::internal_error, [&](ResultWriter& dw) {
      if (!options.expose_exception_text) return;
      dw.start_object();
      dw.key("exception");
      try {
        std::rethrow_exception(failure.unexpected);
      } catch (const std::exception& ex) {
        dw.string(ex.what());
      } catch (...) {
        dw.string("unknown exception");
      }
      dw.end_object();
    });
  } else {
    const ParamError& p = *failure.params;
    write_error(out, w, id, ErrorCode::invalid_params, [&](ResultWriter& dw) {
      dw.start_object();
      if (!p.name.empty()) {
        dw.key("param");
        dw.string(p.name);
      } else if (p.index >= 0) {
        dw.key("param");
        dw.integer(p.index);
      }
      dw.key("reason");
      dw.string(p.reason);
      dw.end_object();
    });
  }
}

BATCHRPC_DECL bool call_method(const RouterOptions& options, const Method& method,
                               const Request& request, Context& ctx, ResultWriter& w,
                               Buffer& out, std::size_t limit) {
  const bool notification = request.id.is_notification();
  // A handler that may take long runs only once the replies held before it are out; if they
  // could not go out, the client is gone and the call is not run (cancelled, as the rest is).
  if (!method.options.inline_only && !release_held_replies()) {
    if (!notification) write_error(out, w, request.id, ErrorCode::request_cancelled);
    return true;
  }
  const std::size_t start = out.size();
  if (!notification) begin_result(out, w, request.id);
  WriterAccess::reset(w, out, limit);

  Deferred* const slot = ContextAccess::deferred(ctx);  // a Responder's, when the call may take one
  ParamError param_error;
  InvokeStatus status = InvokeStatus::ok;
  std::optional<Error> user_error;
  std::exception_ptr unexpected;
  try {
    status = method.handler->invoke(Params(request.params), ctx, w, param_error);
    if (status == InvokeStatus::ok && (slot == nullptr || !slot->taken())) {
      if (w.empty()) {
        w.null();
      } else if (!w.complete()) {
        throw std::logic_error("batchrpc: the handler left its result incomplete");
      }
    }
  } catch (const ResponseTooLarge&) {  // flagged below, whoever caught it first
  } catch (const Error& e) {
    user_error.emplace(e);
  } catch (...) {
    unexpected = std::current_exception();
  }
  const bool too_large = WriterAccess::too_large(w);
  if (unexpected && !too_large) report_exception(options, request.method, unexpected);

  // Once a Responder exists it alone answers (exactly once). When the handler threw and the
  // Responder went unanswered with it, the answer is what the handler threw.
  if (slot != nullptr && slot->taken()) {
    if ((user_error || unexpected) && slot->abandoned()) {
      slot->failure = unexpected;
      slot->failure_reported = true;
      slot->error = std::move(user_error);
    }
    out.truncate(start);
    return false;
  }
  if (notification) {  // JSON-RPC 2.0 §4.1: never answered, not even with an error
    out.truncate(start);
    return true;
  }
  if (too_large) {  // the writer stopped at the budget: nothing of the result is sent
    out.truncate(start);
    write_error(out, w, request.id, ErrorCode::response_too_large, MaxData{options.limits.max_response_bytes});
    return true;
  }
  if (!user_error && !unexpected && status == InvokeStatus::ok) {
    out.append('}');
    return true;
  }
  out.truncate(start);
  write_failure(options, request.id,
                {user_error ? &*user_error : nullptr, unexpected,
                 status == InvokeStatus::invalid_params ? &param_error : nullptr},
                w, out);
  return true;
}

BATCHRPC_DECL void write_deferred(const RouterOptions& options, const Request& request,
                                  Deferred& slot, ResultWriter& w, Buffer& out) {
  if (slot.failure && !slot.failure_reported) report_exception(options, request.method, slot.failure);
  if (request.id.is_notification()) return;
  if (slot.too_large) {
    write_error(out, w, request.id, ErrorCode::response_too_large, MaxData{options.limits.max_response_bytes});
    return;
  }
  if (!slot.error && !slot.failure) {
    begin_result(out, w, request.id);
    out.append(slot.value.view());
    out.append('}');
    return;
  }
  write_failure(options, request.id,
                {slot.error ? &*slot.error : nullptr, slot.failure, nullptr}, w, out);
}

BATCHRPC_DECL bool call_group(const RouterOptions& options, const Method& method,
                              CallOrigin origin, std::span<GroupMember> members,
                              GroupScratch& scratch) {
  if (!method.options.inline_only && !release_held_replies()) {  // the client is gone: see call_method
    for (const GroupMember& m : members) m.slot->error = cancelled();
    return false;
  }
  const std::size_t n = members.size();
  scratch.contexts.clear();
  scratch.contexts.reserve(n);
  scratch.calls.clear();
  scratch.calls.reserve(n);
  while (scratch.writers.size() < n) {
    scratch.writers.push_back(std::make_unique<ResultWriter>(scratch.unused));
  }
  for (std::size_t k = 0; k < n; ++k) {
    const GroupMember& m = members[k];
    CallOrigin own = origin;
    own.params = m.request->params;
    if (m.session != nullptr) own.session = m.session;
    scratch.contexts.push_back(ContextAccess::make(m.request->method, m.request->id, m.stop, own));
    WriterAccess::reset(*scratch.writers[k], m.slot->value, m.slot->value_limit());
    scratch.calls.emplace_back(Params(m.request->params), scratch.contexts.back(), *scratch.writers[k]);
  }

  std::optional<Error> group_error;
  std::exception_ptr group_failure;
  try {
    method.batch(std::span<BatchCall>(scratch.calls));
  } catch (const Error& e) {
    group_error.emplace(e);
  } catch (...) {
    group_failure = std::current_exception();
    report_exception(options, members.front().request->method, group_failure);
  }

  for (std::size_t k = 0; k < n; ++k) {
    Deferred& slot = *members[k].slot;
    ResultWriter& w = *scratch.writers[k];
    if (WriterAccess::too_large(w)) {  // its result outgrew the budget, whatever else happened
      slot.too_large = true;
    } else if (std::optional<Error>& rejection = scratch.calls[k].rejection()) {
      slot.error = std::move(rejection);
    } else if (group_error) {
      slot.error = group_error;
    } else if (group_failure) {
      slot.failure = group_failure;
      slot.failure_reported = true;
    } else if (w.empty()) {
      w.null();
    } else if (!w.complete()) {
      slot.failure = std::make_exception_ptr(
          std::logic_error("batchrpc: the handler left its result incomplete"));
      report_exception(options, members[k].request->method, slot.failure);
      slot.failure_reported = true;
    }
    WriterAccess::reset(w, scratch.unused);
  }
  return group_error || group_failure;
}

BATCHRPC_DECL void write_unreadable(const ParseOutcome& parsed, const Limits& limits, ResultWriter& w,
                                    Buffer& out) {
  switch (parsed.status) {
    case ParseStatus::ok:
      return;
    case ParseStatus::syntax_error:
      return write_error(out, w, null_id, ErrorCode::parse_error, [&](ResultWriter& dw) {
        dw.start_object();
        dw.key("offset");
        dw.unsigned_integer(parsed.offset);
        dw.key("reason");
        dw.string(parsed.reason);
        dw.end_object();
      });
    case ParseStatus::too_deep:
      return write_error(out, w, null_id, ErrorCode::nesting_too_deep, MaxData{limits.max_depth});
    case ParseStatus::batch_too_large:
      return write_error(out, w, null_id, static_cast<int>(ErrorCode::invalid_params), "Batch too large",
                         MaxData{limits.max_batch});
    case ParseStatus::too_costly:
      return write_error(out, w, null_id, ErrorCode::message_too_large, [&](ResultWriter& dw) {
        dw.start_object();
        dw.key("reason");
        dw.string("its parsed form exceeds the parse budget");
        dw.key("budget");
        dw.unsigned_integer(parsed.budget);
        dw.end_object();
      });
  }
}

BATCHRPC_DECL void write_not_granted(const RequestId& id, std::string_view capability,
                                     ResultWriter& w, Buffer& out) {
  write_error(out, w, id, ErrorCode::method_not_found, [&](ResultWriter& dw) {
    dw.start_object();
    dw.key("capability");
    dw.string(capability);
    dw.end_object();
  });
}

BATCHRPC_DECL void fit_response(const Limits& limits, const RequestId& id, std::size_t start,
                                ResultWriter& w, Buffer& out) {
  if (out.size() <= limits.max_response_bytes) return;
  out.truncate(start);
  write_error(out, w, id, ErrorCode::response_too_large, MaxData{limits.max_response_bytes});
}

}  // namespace rpc::detail
