// SPDX-License-Identifier: MIT
// Dynamic batching (Router::coalesce): one batch-aware method's calls from any message of any
// session queue here, and run as groups of its batch handler.
//
// Who runs a group: a call that finds no group running (and may run where it is) runs one at
// once on its own thread, taking the oldest queued calls with it; other calls are queued for the
// batcher threads (max_concurrent_groups of them), one of which starts their group when no
// group runs or, while fewer than max_concurrent_groups run, once max_group are queued, the
// oldest has waited max_wait, or none has joined for max_quiet. Waiting while another group
// runs is what lets a group grow. A group that starts with room for more beside it takes only
// its share of the queue, so that the queued calls keep every allowed group busy.
// `running_` counts the groups running, callers' and the batchers'.
//
// A queued call belongs to a session's job and is kept there as a member still `queued`: a
// cancel or the session's end answers it at once, as any member waiting for an executor. So a
// queued call holds what an executor task holds (see Handoff): a reference to its job, and the
// session's task gate, entered before the job is touched; once the session has ended, the call
// is skipped. The functions that touch jobs are in impl/coalescer.ipp, on the session's side;
// the router only makes and owns the coalescer.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <stop_token>
#include <vector>

#include "../coalescing.hpp"
#include "../config.hpp"
#include "chrono.hpp"
#include "group.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class Job;
class TaskGate;
struct Method;
struct Workspace;

// A call waiting for its group: member `index` of `job`.
struct CoalescedCall {
  Job* job = nullptr;  // touched only inside `gate`
  std::size_t index = 0;
  std::shared_ptr<TaskGate> gate;
  std::chrono::steady_clock::time_point since{};
};

class Coalescer {
 public:
  Coalescer(const Method& method, const Coalescing& settings) : method_(method), settings_(settings) {}
  Coalescer(const Coalescer&) = delete;
  Coalescer& operator=(const Coalescer&) = delete;
  // The batcher thread, declared last, is joined first, once it has run what is queued.
  ~Coalescer() = default;

  // What one thread needs to run a group, reused from group to group.
  struct Runner {
    std::vector<CoalescedCall> calls;
    std::vector<GroupMember> members;
    GroupScratch scratch;
  };

  // Queues the calls of one message, all or none (throws when out of memory, or when the
  // batcher threads cannot start). When the caller is to run a group now (`may_run_here` and no
  // group running, or calls made from inside one of our groups, which make a group of their
  // own at once), returns the runner to pass to run_here().
  BATCHRPC_DECL Runner* submit(std::span<const CoalescedCall> calls, bool may_run_here);
  // Runs the group of the runner submit() gave (the oldest queued calls, taken by submit).
  BATCHRPC_DECL void run_here(Runner& runner) noexcept;

 private:
  BATCHRPC_DECL void work(std::stop_token stop) noexcept;
  // Moves the runner's share of the oldest queued calls into it; true when it left some for
  // another group to start at once. Under mutex_.
  BATCHRPC_DECL bool take(Runner& runner) noexcept;
  // How many of `queued` calls a group takes when it starts with `running` groups running, its
  // own counted.
  BATCHRPC_DECL std::size_t share(std::size_t queued, std::size_t running) const noexcept;
  BATCHRPC_DECL std::unique_ptr<Runner> idle_runner();  // under mutex_; throws when out of memory
  BATCHRPC_DECL void start_workers();                   // under mutex_; throws when a thread cannot start
  BATCHRPC_DECL void run(Runner& runner, Workspace& ws) noexcept;
  BATCHRPC_DECL void ran(Runner* caller) noexcept;
  class RunningGroup;  // marks the thread running one of our groups
  static BATCHRPC_DECL bool from_several_jobs(std::span<const GroupMember> members) noexcept;  // a group has ended: the batcher may start the next

  const Method& method_;
  const Coalescing settings_;
  std::mutex mutex_;
  std::condition_variable_any wake_;  // the batcher waits here
  std::deque<CoalescedCall> queue_;   // oldest first
  std::size_t running_ = 0;
  // The groups a split left queued to start at once (see take), and how many calls each takes.
  std::size_t parts_left_ = 0;
  std::size_t part_size_ = 0;
  std::vector<std::unique_ptr<Runner>> idle_runners_;  // callers', reused; room for every one made
  std::size_t runners_made_ = 0;
  // The batcher threads (a std::vector<std::jthread>, held as void so that the router's headers
  // need not include <thread>), started when a call first queues.
  std::shared_ptr<void> workers_;
};

}  // namespace rpc::detail
