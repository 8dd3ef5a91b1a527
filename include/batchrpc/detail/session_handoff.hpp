// SPDX-License-Identifier: MIT
// A job's work handed to the executor: its defining rule is that the work is answered exactly
// once, whatever the executor does with the task.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>

#include "../config.hpp"
#include "task_gate.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class Job;

// Work handed to the executor: a member, a group of members, or a turn at the message's sweep
// (the members that run on the executor, taken one after another by a few tasks; see
// start_sweep). Whatever the executor does with the
// task (runs it, throws from execute(), or destroys it without running it) the work is answered
// exactly once and the job released exactly once: run() by the first copy that is called, or
// the destructor, when the last copy goes unrun. Either touches the job only through the
// session's gate: after the session has ended, the task does nothing.
class Handoff {
 public:
  enum class Work { member, group, sweep };
  Handoff(Job& job, std::shared_ptr<TaskGate> gate, std::size_t what, Work work) noexcept
      : job_(job), gate_(std::move(gate)), what_(what), work_(work) {}
  Handoff(const Handoff&) = delete;
  Handoff& operator=(const Handoff&) = delete;
  ~Handoff();

  void run();
  const char* why_not_run = "the executor dropped the task";

 private:
  Job& job_;  // valid while the gate lets us in
  std::shared_ptr<TaskGate> gate_;
  std::size_t what_;  // a member's index, or a group's
  Work work_;
  std::atomic<bool> ran_{false};
};

}  // namespace rpc::detail
