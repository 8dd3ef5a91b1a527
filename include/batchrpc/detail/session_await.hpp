// SPDX-License-Identifier: MIT
// A session keeping track of a Responder's slot that is not one of its requests' own (a tool's,
// inside tools/call), so that a session that ends answers it as it answers a request's; and a
// transport ending its requests' waits. Only forward declarations: the tools and transports can
// include this without the session's internals.
#pragma once

#include <memory>

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

}  // namespace rpc::detail
