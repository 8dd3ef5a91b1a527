// SPDX-License-Identifier: MIT
// Non-template bodies of router.hpp: the message pipeline (parse, classify, dispatch, write).
#pragma once

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "../config.hpp"
#include "../detail/blocking_deferred.hpp"
#include "../detail/call.hpp"
#include "../detail/checks.hpp"
#include "../detail/coalescer.hpp"
#include "../detail/message_parser.hpp"
#include "../detail/reply.hpp"
#include "../detail/request.hpp"
#include "../detail/workspace.hpp"
#include "../router.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

BATCHRPC_DECL Workspace& thread_workspace() {
  thread_local Workspace workspace;
  return workspace;
}

}  // namespace detail

BATCHRPC_DECL Router::Router() = default;
BATCHRPC_DECL Router::Router(const Limits& limits) { options_.limits = limits; }
BATCHRPC_DECL Router::Router(RouterOptions options) : options_(std::move(options)) {}
BATCHRPC_DECL Router::Router(Router&&) noexcept = default;
BATCHRPC_DECL Router& Router::operator=(Router&&) noexcept = default;
BATCHRPC_DECL Router::~Router() = default;

BATCHRPC_DECL Router& Router::describe_capability(std::string_view name, Json settings) {
  capability_settings_[std::string(name)] = std::move(settings);
  return *this;
}

BATCHRPC_DECL void Router::add_method(std::string_view name, detail::HandlerPtr handler,
                                      MethodOptions options, detail::WaitingCall waits) {
  detail::Method method{std::move(handler), std::move(options)};
  method.call_and_wait = waits;
  add_method(name, std::move(method));
}

BATCHRPC_DECL void Router::add_batched_method(std::string_view name, BatchHandler handler,
                                              MethodOptions options) {
  detail::HandlerPtr batched(new detail::BatchedHandler(handler));
  add_method(name, detail::Method{std::move(batched), std::move(options), std::move(handler)});
}

BATCHRPC_DECL void Router::add_method(std::string_view name, detail::Method method) {
  BATCHRPC_CHECK(!runtime_->serving.load(std::memory_order_relaxed),
                 "a method was registered after the router started handling messages: register "
                 "every method first (handle() may be running on other threads)");
  if (name.empty()) throw std::invalid_argument("batchrpc: a method name cannot be empty");
  if (name.substr(0, 4) == "rpc.") {
    throw std::invalid_argument("batchrpc: method names starting with \"rpc.\" are reserved: " +
                                std::string(name));
  }
  method.observes_stop = method.handler->observes_stop();
  if (!methods_.add(name, std::move(method))) {
    throw std::invalid_argument("batchrpc: method already registered: " + std::string(name));
  }
}

BATCHRPC_DECL Router& Router::coalesce(std::string_view name, Coalescing settings) {
  BATCHRPC_CHECK(!runtime_->serving.load(std::memory_order_relaxed),
                 "coalesce() was called after the router started handling messages: call it "
                 "before (handle() may be running on other threads)");
  detail::Method* method = methods_.find(name);
  if (method == nullptr || !method->batch) {
    throw std::invalid_argument("batchrpc: coalesce(\"" + std::string(name) +
                                "\"): not a method registered with add_batched");
  }
  if (settings.max_wait.count() < 0) throw std::invalid_argument("batchrpc: Coalescing::max_wait cannot be negative");
  if (settings.max_quiet.count() < 0) throw std::invalid_argument("batchrpc: Coalescing::max_quiet cannot be negative");
  if (settings.max_group == 0) throw std::invalid_argument("batchrpc: Coalescing::max_group must be at least 1");
  if (settings.max_concurrent_groups == 0) {
    throw std::invalid_argument("batchrpc: Coalescing::max_concurrent_groups must be at least 1");
  }
  method->coalescer = {new detail::Coalescer(*method, settings),
                       {[](detail::Coalescer* c) noexcept { delete c; }}};
  return *this;
}

namespace detail {

// A batch's reply: `answer(i, out)` appends member i's response, or returns false when it has
// none; the responses are joined in request order, and only notifications means no reply.
template <class Answer>
bool write_batch(std::size_t members, Buffer& out, Answer&& answer) {
  out.append('[');
  bool any = false;
  for (std::size_t i = 0; i < members; ++i) {
    const std::size_t mark = out.size();
    if (any) out.append(',');
    if (answer(i, out)) {
      any = true;
    } else {
      out.truncate(mark);
    }
  }
  if (!any) {  // only notifications: nothing at all is sent
    out.clear();
    return false;
  }
  out.append(']');
  return true;
}
}  // namespace detail

BATCHRPC_DECL std::optional<std::string> Router::handle(std::string_view message) const {
  try {
    detail::WorkspaceLease ws;
    if (!handle_copy(message, *ws, ws->output)) return std::nullopt;
    return ws->output.str();
  } catch (...) {
    return std::string(detail::out_of_memory_reply);
  }
}

BATCHRPC_DECL bool Router::handle(std::string_view message, Buffer& reply) const {
  try {
    detail::WorkspaceLease ws;
    return handle_copy(message, *ws, reply);
  } catch (...) {
    return detail::write_out_of_memory(reply);
  }
}

BATCHRPC_DECL bool Router::handle_copy(std::string_view message, detail::Workspace& ws,
                                       Buffer& out) const {
  if (message.size() > options_.limits.max_message_bytes) {  // refuse before copying it
    return handle_safely(nullptr, message.size(), ws, out);
  }
  ws.input.assign(message.data(), message.size());  // in-situ parsing needs a mutable copy
  return handle_safely(ws.input.data(), message.size(), ws, out);
}

BATCHRPC_DECL bool Router::handle_insitu(std::string& message, Buffer& reply) const {
  try {
    detail::WorkspaceLease ws;
    return handle_safely(message.data(), message.size(), *ws, reply);
  } catch (...) {
    return detail::write_out_of_memory(reply);
  }
}

BATCHRPC_DECL bool Router::handle_insitu(std::span<char> message, Buffer& reply) const {
  if (message.empty() || message.back() != '\0') {
    throw std::invalid_argument("batchrpc: handle_insitu needs the message followed by a NUL byte");
  }
  try {
    detail::WorkspaceLease ws;
    return handle_safely(message.data(), message.size() - 1, *ws, reply);
  } catch (...) {
    return detail::write_out_of_memory(reply);
  }
}

BATCHRPC_DECL bool Router::handle_safely(char* text, std::size_t size, detail::Workspace& ws,
                                         Buffer& out) const noexcept {
  try {
    const bool has_reply = process(text, size, ws, out);
    ws.parser.release();
    return has_reply;
  } catch (...) {  // only allocation failure gets here: handler exceptions are caught per call
    ws.parser.release();
    return detail::write_out_of_memory(out);
  }
}

BATCHRPC_DECL bool Router::process(char* text, std::size_t size, detail::Workspace& ws,
                                   Buffer& out) const {
  using detail::null_id;
#if !defined(NDEBUG) || defined(BATCHRPC_CHECKS)
  runtime_->mark_serving();
#endif
  out.clear();
  const Limits& limits = options_.limits;
  if (size > limits.max_message_bytes) {
    detail::write_error(out, ws.writer, null_id, ErrorCode::message_too_large,
                        detail::MaxData{limits.max_message_bytes});
    return true;
  }

  const detail::ParseOutcome parsed = ws.parser.parse_requests(text, size, limits);
  if (parsed.status != detail::ParseStatus::ok) {
    detail::write_unreadable(parsed, limits, ws.writer, out);
    return true;
  }

  const std::span<const detail::ParsedRequest> members = ws.parser.requests();
  if (!ws.parser.is_batch()) return dispatch(members.front(), ws, out);

  if (members.empty()) {  // JSON-RPC 2.0 §6: an empty array is one Invalid Request, not an array
    detail::write_error(out, ws.writer, null_id, ErrorCode::invalid_request,
                        detail::ReasonData{"empty batch"});
    return true;
  }
  if (answer_grouped_ != nullptr && members.size() > 1) return (this->*answer_grouped_)(members, ws, out);
  return detail::write_batch(members.size(), out,
                             [&](std::size_t i, Buffer& reply) { return dispatch(members[i], ws, reply); });
}

BATCHRPC_DECL bool Router::answer_grouped(std::span<const detail::ParsedRequest> members,
                                          detail::Workspace& ws, Buffer& out) const {
  const bool grouped = run_groups(members, ws);
  return detail::write_batch(members.size(), out, [&](std::size_t i, Buffer& reply) {
    return grouped && ws.groups.slot_of[i] != detail::GroupPlan::none
               ? write_grouped(members[i].request, ws.groups.slot_of[i], ws, reply)
               : dispatch(members[i], ws, reply);
  });
}

BATCHRPC_DECL bool Router::answer_resolved(std::span<const detail::ParsedRequest> members, bool batch,
                                           std::span<const detail::Method* const> methods,
                                           detail::Workspace& ws, Buffer& out) const noexcept {
#if !defined(NDEBUG) || defined(BATCHRPC_CHECKS)
  runtime_->mark_serving();
#endif
  try {
    out.clear();
    if (!batch) return dispatch(members.front(), methods.front(), ws, out);
    return detail::write_batch(members.size(), out,
                               [&](std::size_t i, Buffer& reply) { return dispatch(members[i], methods[i], ws, reply); });
  } catch (...) {  // only allocation failure gets here: handler exceptions are caught per call
    return detail::write_out_of_memory(out);
  }
}


BATCHRPC_DECL bool Router::dispatch(const detail::ParsedRequest& member, detail::Workspace& ws,
                                    Buffer& out) const {
  return dispatch(member, member.invalid != nullptr ? nullptr : find(member.request.method), ws, out);
}

BATCHRPC_DECL bool Router::dispatch(const detail::ParsedRequest& member, const detail::Method* method,
                                    detail::Workspace& ws, Buffer& out) const {
  const std::size_t start = out.size();  // every response counts against max_response_bytes
  if (member.invalid != nullptr) {
    detail::write_error(out, ws.writer, detail::null_id, ErrorCode::invalid_request,
                        detail::ReasonData{member.invalid});
    detail::fit_response(options_.limits, detail::null_id, start, ws.writer, out);
    return true;
  }
  const detail::Request& request = member.request;
  if (method == nullptr) {
    if (request.id.is_notification()) return false;
    detail::write_error(out, ws.writer, request.id, ErrorCode::method_not_found);
    detail::fit_response(options_.limits, request.id, start, ws.writer, out);
    return true;
  }

  if (method->call_and_wait != nullptr) {
    method->call_and_wait(*this, *method, request, ws, out);
  } else {
    Context ctx = detail::ContextAccess::make(request.method, request.id, {}, {this, nullptr, nullptr, request.params});
    detail::call_method(options_, *method, request, ctx, ws.writer, out, options_.limits.max_response_bytes);
  }
  if (request.id.is_notification()) return false;
  detail::fit_response(options_.limits, request.id, start, ws.writer, out);
  return true;
}

// Kept apart from dispatch: the slot a Responder answers into is large, and most handlers
// never need one.
BATCHRPC_DECL void Router::call_and_wait(const Router& router, const detail::Method& method,
                                         const detail::Request& request, detail::Workspace& ws,
                                         Buffer& out) {
  const RouterOptions& options = router.options_;
  detail::BlockingDeferred later;  // the router's own path answers in one call: it waits
  later.reset({}, options.limits.max_response_bytes);
  Context ctx = detail::ContextAccess::make(request.method, request.id, {}, {&router, nullptr, &later, request.params});
  if (!detail::call_method(options, method, request, ctx, ws.writer, out, options.limits.max_response_bytes)) {
    later.wait();
    detail::write_deferred(options, request, later, ws.writer, out);
  }
}

BATCHRPC_DECL bool Router::run_groups(std::span<const detail::ParsedRequest> batch,
                                      detail::Workspace& ws) const {
  detail::GroupPlan& plan = ws.groups;
  const std::size_t n = batch.size();
  plan.slot_of.assign(n, detail::GroupPlan::none);
  plan.methods.clear();
  for (auto& members : plan.members) members.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (batch[i].invalid != nullptr) continue;
    const detail::Method* method = find(batch[i].request.method);
    if (method == nullptr || !method->batch) continue;
    std::size_t g = 0;
    while (g < plan.methods.size() && plan.methods[g] != method) ++g;
    if (g == plan.methods.size()) {
      plan.methods.push_back(method);
      if (plan.members.size() < plan.methods.size()) plan.members.emplace_back();
    }
    plan.members[g].push_back(i);
  }
  bool any = false;
  std::size_t used = 0;
  for (std::size_t g = 0; g < plan.methods.size(); ++g) {
    const std::vector<std::size_t>& members = plan.members[g];
    if (members.size() < 2) continue;  // a lone call is dispatched as usual
    plan.group.clear();
    for (const std::size_t i : members) {
      if (plan.slots.size() == used) plan.slots.push_back(std::make_unique<detail::GroupPlan::Slot>());
      detail::GroupPlan::Slot& slot = *plan.slots[used];
      slot.reset({}, options_.limits.max_response_bytes);
      plan.slot_of[i] = used++;
      plan.group.push_back({&batch[i].request, &slot, {}});
    }
    (void)detail::call_group(options_, *plan.methods[g], {this, nullptr, nullptr}, plan.group, plan.scratch);
    any = true;
  }
  return any;
}

BATCHRPC_DECL bool Router::write_grouped(const detail::Request& request, std::size_t slot,
                                         detail::Workspace& ws, Buffer& out) const {
  const std::size_t start = out.size();
  detail::write_deferred(options_, request, *ws.groups.slots[slot], ws.writer, out);
  if (request.id.is_notification()) return false;
  detail::fit_response(options_.limits, request.id, start, ws.writer, out);
  return true;
}

BATCHRPC_DECL std::vector<std::string> Router::capabilities() const {
  std::vector<std::string> names;
  for (const auto& [name, method] : methods_) {
    if (!method.options.capability.empty()) names.push_back(method.options.capability);
  }
  for (const auto& [name, settings] : capability_settings_) names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

BATCHRPC_DECL const Json& Router::capability_settings(std::string_view name) const {
  static const Json none;
  const auto found = capability_settings_.find(name);
  return found == capability_settings_.end() ? none : found->second;
}

}  // namespace rpc
