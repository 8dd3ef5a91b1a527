// SPDX-License-Identifier: MIT
// One member of a message handled by a session (a singleton is a message of one member).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../buffer.hpp"
#include "../config.hpp"
#include "deferred.hpp"
#include "request.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

struct Method;
class Job;
class Member;

// The requests that can be cancelled, by id key.
using InFlight = std::unordered_multimap<std::string_view, Member*>;

// Reused from message to message by its job; every field is reset before the member runs, but
// the Deferred's only for a handler that can reach it (takes a Context or a Responder).
class Member final : public Deferred {
 public:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);

  Member() noexcept : Deferred(&completed, &attached) {}

  Job* job = nullptr;
  std::size_t index = 0;
  Request request;
  const Method* method = nullptr;  // set while the member still has to run
  Buffer text;                     // its response; empty: none

  // A stop state of its own for each request with an id whose handler can see it (takes a
  // Context or a Responder): a token a finished handler kept must not see a later request's
  // cancel. Other requests get none, and so cost no allocation. Set before the member is
  // enrolled; copied (not touched) by cancels, under the session's lock.
  std::stop_source stop{std::nostopstate};
  // Set, under the session's lock, by the first cancel that reaches the request (whether or not
  // it has a stop state); read by the thread about to run it.
  std::atomic<bool> cancel_asked{false};
  // Set with cancel_asked by a cancel that wants no response sent (MCP's); read once the job's
  // members are all done, which orders it after the cancel.
  std::atomic<bool> unanswered{false};
  std::string key;  // its id as a lookup key
  bool enrolled = false;
  bool to_enroll = false;  // chosen by Job::enroll_cancellable, enrolled with the rest of its message
  // A cancel may reach it (chosen to be enrolled): only then may another thread claim it while
  // its message is dispatched. Written and read by the dispatching thread only.
  bool cancellable = false;
  InFlight::node_type node;  // its entry in the in-flight table while not enrolled, kept for reuse
  std::size_t group = none;  // its group in the job (batch-aware dispatch), or none

  // The handler returning and its Responder answering can happen in either order, on two
  // threads; the second of the two writes the response (the first may still be writing).
  std::atomic<int> arrivals{0};
  bool second_arrival() { return arrivals.fetch_add(1, std::memory_order_acq_rel) == 1; }

  // queued -> running when a thread starts it, queued -> cancelled when a cancel gets there
  // first (then the canceller answers it at once); whoever moves it from queued owns it until
  // it is answered (done).
  enum Phase : int { queued, running, cancelled, done };
  std::atomic<int> phase{queued};
  bool claim(Phase to) {
    int expected = queued;
    return phase.compare_exchange_strong(expected, to, std::memory_order_acq_rel);
  }

 private:
  // Its Responder answered (the handler may still be running).
  BATCHRPC_DECL static void completed(Deferred& slot);
  // A Responder took it: its session keeps track of it.
  BATCHRPC_DECL static void attached(Deferred& slot, const std::shared_ptr<ResponderState>& state);
};

}  // namespace rpc::detail
