// SPDX-License-Identifier: MIT
// A session keeping track of a Responder's slot that is not one of its requests' own (a tool's,
// inside tools/call), so that a session that ends answers it as it answers a request's; and a
// transport ending its requests' waits, or handing in what it holds without running it. Only
// declarations: the tools and transports can include this without the session's internals.
#pragma once

#include <memory>
#include <string>

#include "../completion.hpp"
#include "../config.hpp"
#include "deferred.hpp"

namespace rpc::inline BATCHRPC_ABI {
class Session;
}

namespace rpc::inline BATCHRPC_ABI::detail {

// Defined in impl/session.ipp: see SessionCore::await and SessionCore::unawait.
BATCHRPC_DECL void await_in(Session& session, Deferred& slot, const std::shared_ptr<ResponderState>& state);
BATCHRPC_DECL void unawait_in(Session& session, Deferred& slot) noexcept;
// For a transport that is shutting down while its session lives on (its requests are still
// being handled): answers -32800 for the requests waiting on a Responder, as ~Session would.
BATCHRPC_DECL std::size_t answer_waiting_in(Session& session);
// For a transport past its shutdown's grace, with messages read but never handed in: handles
// `message` running nothing. Each call in it is answered as one cancelled before it started
// (-32800; nothing for a notification), the rest as usual (an unknown method, an invalid
// request, a parse error); answers to the server's requests still reach them. `done` is called
// as Session::handle calls it.
BATCHRPC_DECL void handle_unstarted_in(Session& session, std::string&& message, Completion done);

}  // namespace rpc::detail
