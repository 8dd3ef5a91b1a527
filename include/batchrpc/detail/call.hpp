// SPDX-License-Identifier: MIT
// One method call, shared by the router's own path and sessions: bind, run, write the response.
#pragma once

#include <exception>
#include <span>

#include "../buffer.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../result_writer.hpp"
#include "../router.hpp"
#include "deferred.hpp"
#include "document.hpp"
#include "group.hpp"
#include "request.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Appends the response for `request` to `out` (nothing for a notification). Returns false when
// the handler took a Responder: then nothing is written now, and the response is written with
// write_deferred once the context's Deferred completes (which may already have happened). The result
// stops growing once `out` is past `limit` bytes, and is then answered -32092.
BATCHRPC_DECL bool call_method(const RouterOptions& options, const Method& method,
                               const Request& request, Context& ctx, ResultWriter& w, Buffer& out,
                               std::size_t limit);

// Hands an unexpected exception to RouterOptions::on_exception, if set; never throws.
BATCHRPC_DECL void report_exception(const RouterOptions& options, std::string_view method,
                                    std::exception_ptr e);

// Appends the response for a request whose Responder has answered into `slot`.
BATCHRPC_DECL void write_deferred(const RouterOptions& options, const Request& request,
                                  Deferred& slot, ResultWriter& w, Buffer& out);

// Calls `method.batch` once for all of `members`, then fills each member's slot exactly as
// call_method + write_deferred would answer the call on its own (null for nothing written,
// -32603 for an incomplete result, the thrown error for every call not rejected). True when
// the handler threw.
BATCHRPC_DECL bool call_group(const RouterOptions& options, const Method& method,
                              CallOrigin origin, std::span<GroupMember> members,
                              GroupScratch& scratch);

// The reply to a message that could not be read as requests (any status but ParseStatus::ok):
// one error for the message as a whole, with id null.
BATCHRPC_DECL void write_unreadable(const ParseOutcome& parsed, const Limits& limits, ResultWriter& w,
                                    Buffer& out);

// `-32601` for a method the session is not granted, naming the capability.
BATCHRPC_DECL void write_not_granted(const RequestId& id, std::string_view capability,
                                     ResultWriter& w, Buffer& out);

// When `out` has grown past the reply budget, replaces what was written from `start` on with
// a `-32092` error for `id`.
BATCHRPC_DECL void fit_response(const Limits& limits, const RequestId& id, std::size_t start,
                                ResultWriter& w, Buffer& out);

}  // namespace rpc::detail

#if defined(BATCHRPC_HEADER_ONLY)
#include "../impl/call.ipp"
#endif
