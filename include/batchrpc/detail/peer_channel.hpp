// SPDX-License-Identifier: MIT
// The server's side of a two-way session: the transport's writer for its own messages, the ids
// of its requests, and the requests waiting for the client's answer. Shared by the session and
// every rpc::Peer handle, which may outlive the session.
//
// No user code runs under `mutex_`: the writer is copied out and called after the lock is
// released, and a reply handler is taken out of the table before it is called. The writer is
// the transport's, and may refer to the connection: each call holds `calling_` shared, and
// detach() takes it exclusively, so once detach() returns no call is running or can start,
// and the transport may destroy what its writer uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../config.hpp"
#include "../context.hpp"
#include "../json.hpp"
#include "../peer.hpp"
#include "chrono.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class PeerChannel {
 public:
  // Messages longer than `max_bytes` (Limits::max_response_bytes) are not sent.
  explicit PeerChannel(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // The transport's writer; replaces any other.
  BATCHRPC_DECL void attach(Outbound send);
  // No writer from now on, and none of its calls still running: the requests waiting are
  // answered -32094 (the client cannot answer on a connection that is gone). With `forever`,
  // the session has ended: no writer ever again. Not from inside the writer.
  BATCHRPC_DECL void detach(bool forever = false);
  // The client can send nothing more (a stream's input ended) but may still be written to:
  // the requests waiting are answered -32094, and new ones at once, until the next attach.
  BATCHRPC_DECL void end_input();
  BATCHRPC_DECL bool connected();

  BATCHRPC_DECL bool notify(std::string_view method, const Json& params);
  BATCHRPC_DECL std::string request(std::string_view method, const Json& params, ReplyHandler done,
                                    const PeerRequestOptions& options, const std::shared_ptr<PeerChannel>& self);
  // The timer's: request `n` waited too long.
  BATCHRPC_DECL void expire(std::uint64_t n);
  BATCHRPC_DECL bool cancel(std::string_view id);
  BATCHRPC_DECL std::size_t waiting();

  // A Response from the client with `id`, whose answer is `value` (its result, or its error
  // object when `is_error`). False when no request of ours waits for that id.
  BATCHRPC_DECL bool answer(const RequestId& id, const Value& value, bool is_error);
  // A message from the client that names request `id` of ours but is no valid Response
  // (`why`): the request is answered -32603 with the reason. False when none waits for `id`.
  BATCHRPC_DECL bool refuse(const RequestId& id, const char* why);

 private:
  // The writer, or nullptr: taken under the lock, called outside it.
  std::shared_ptr<const Outbound> writer();
  // Sends `message` through the writer; false when there is none or it refused.
  bool send(std::string message);
  // Takes the handler of request number `n` out of the table; empty when it is not there.
  ReplyHandler take(std::uint64_t n);

  const std::size_t max_bytes_;
  std::shared_mutex calling_;  // held shared by each call of the writer
  std::mutex mutex_;
  std::shared_ptr<const Outbound> writer_;
  bool ended_ = false;
  bool input_ended_ = false;  // no answer can come: requests fail at once
  std::uint64_t last_id_ = 0;
  struct Waiting {
    ReplyHandler done;
    std::chrono::steady_clock::time_point due{};  // when it has a timeout (in the PeerTimer)
  };
  std::unordered_map<std::uint64_t, Waiting> waiting_;
};

// Makes Peer handles (their constructor is private to keep detail types out of user code).
struct PeerAccess {
  static Peer make(std::shared_ptr<PeerChannel> channel) { return Peer(std::move(channel)); }
};

}  // namespace rpc::detail
