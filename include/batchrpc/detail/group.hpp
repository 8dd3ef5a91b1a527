// SPDX-License-Identifier: MIT
// State for batch-aware dispatch: a batch's calls of one batched method, answered together.
#pragma once

#include <cstddef>
#include <memory>
#include <stop_token>
#include <vector>

#include "../batch_call.hpp"
#include "../buffer.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../result_writer.hpp"
#include "deferred.hpp"
#include "request.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

struct Method;

// One call of a group handed to a batch handler: its request and the slot its answer goes to
// (value, error or failure, then written with write_deferred like a Responder's answer).
struct GroupMember {
  const Request* request = nullptr;
  Deferred* slot = nullptr;
  std::stop_token stop;
  Session* session = nullptr;  // the session the call came through (a group may span several)
};

// Buffers reused from group to group.
struct GroupScratch {
  std::vector<Context> contexts;
  std::vector<std::unique_ptr<ResultWriter>> writers;
  std::vector<BatchCall> calls;
  Buffer unused;  // where idle writers point
};

// The router's own path: a batch's calls of batched methods, answered before the reply is
// written in request order.
struct GroupPlan {
  class Slot final : public Deferred {  // its group waits for every call to return
   public:
    Slot() noexcept : Deferred([](Deferred&) {}) {}
  };
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<std::size_t> slot_of;    // per member: its slot, or none (dispatched as usual)
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<const Method*> methods;  // the distinct batched methods seen, and their members
  std::vector<std::vector<std::size_t>> members;
  std::vector<GroupMember> group;
  GroupScratch scratch;
};

}  // namespace rpc::detail
