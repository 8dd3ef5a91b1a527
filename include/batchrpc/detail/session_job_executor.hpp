// SPDX-License-Identifier: MIT
// Part of session_job.hpp (included at its end): a job's members handed to the executor, in
// sweep turns or one by one, and what happens to work the executor never runs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <thread>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The members in sweep_ go to the executor as a few tasks, the turns: one hand-off per turn,
// not per member. One member alone is handed off as itself.
//
// A dispatching thread that lends itself (it would only wait for the reply) takes one of the
// turns, once it has handed out the rest (end of dispatch_parsed): it starts at once, while the
// executor's threads wake up, and a single member is not handed off at all.
//
// How the turns share the members out: sweep_ is cut into as many shares as there are turns.
// A turn takes a share of its own and runs it from the front, then takes what the other turns
// have not reached yet, each share from its back. A long member holds up no other for longer
// than the other turns take to run their own shares. Each member is claimed by its phase
// (Member::claim), so two turns never run the same one, and nothing else is shared member by
// member: a counter every turn bumped for each member cost more than 1 µs calls on two cores
// (the counter's cache line moving between them each time), and interleaved the turns' members
// in memory. Members thus start out of their order in the batch (which JSON-RPC allows): calls
// of one batch that wait for each other can all be waiting at once, where taking members in
// order made some of those patterns finish.
inline void Job::start_sweep(Workspace& ws) {
  if (sweep_.empty()) return;
  const std::size_t own = lends_thread_ ? 1 : 0;
  if (sweep_.size() == 1 && own == 0) return hand_off(sweep_.front(), Handoff::Work::member, ws);
  static const std::size_t most =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, kMaxSweepTurns);
  const std::size_t turns = std::min(sweep_.size(), most);
  sweep_shares_ = turns;
  sweep_owners_.store(0, std::memory_order_relaxed);
  for (std::size_t q = 0; q < turns; ++q) {
    sweep_reached_[q].next.store(share_begin(q), std::memory_order_relaxed);
  }
  sweep_turns_.store(turns, std::memory_order_relaxed);
  for (std::size_t k = own; k < turns; ++k) hand_off(0, Handoff::Work::sweep, ws);
}

// A turn at the sweep: its own share, then what is left of the others (see start_sweep).
//
// The turn holds the job from the first member it claims (a claimed member is not answered,
// so the message is not finished): a Responder answering inside a call cannot finish the job
// under our feet, and the members answered here are released with that hold, at the end.
inline void Job::run_sweep(Workspace& ws) {
  bool holding = false;
  std::size_t owed = 0;
  const auto take = [&](std::size_t k) {
    const std::size_t i = sweep_[k];
    Member& m = *members_[i];
    // A look first: a member another turn has taken is passed over without a write.
    if (m.phase.load(std::memory_order_relaxed) != Member::queued) return;
    if (!m.claim(Member::running)) return;  // taken meanwhile, or cancelled and answered
    if (!holding) hold();
    holding = true;
    guarded(i, [&] { call(i, ws, &owed); });
  };
  const std::size_t shares = sweep_shares_;
  const std::size_t mine = sweep_owners_.fetch_add(1, std::memory_order_relaxed);
  if (mine < shares) {  // always, as each turn comes here once
    for (std::size_t k = share_begin(mine); k < share_begin(mine + 1); ++k) {
      // Before the claim: a turn that reads this stops short of k, which we are about to take.
      sweep_reached_[mine].next.store(k + 1, std::memory_order_relaxed);
      take(k);
    }
  }
  // The members of the other shares that their turns have not reached (all of a share whose
  // turn has not started), from the back, where those turns will come last.
  for (std::size_t d = 1; d < shares; ++d) {
    const std::size_t q = (mine + d) % shares;
    for (std::size_t k = share_begin(q + 1); k > share_begin(q);) {
      --k;
      // Its turn has been here.
      if (k < sweep_reached_[q].next.load(std::memory_order_relaxed)) break;
      take(k);
    }
  }
  if (holding) release(owed + 1);
  end_sweep_turn("the executor dropped the task");  // every share was visited: never refuses
}

// A turn that ran, or never will. While another turn may still come, the members nobody
// took are left to it; the last turn answers them -32093 with `why`. They can only be in the
// shares no turn took as its own (a turn that ran visited every share, and its own whole).
inline void Job::end_sweep_turn(const char* why) noexcept {
  if (sweep_turns_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const std::size_t owned = std::min(sweep_owners_.load(std::memory_order_relaxed), sweep_shares_);
  for (std::size_t k = share_begin(owned); k < sweep_.size(); ++k) refuse(sweep_[k], why);
}

// Hands member `i` (or group `i`, or a turn at the sweep) to the executor; whatever becomes
// of the task, its work is answered (see Handoff). Work the executor cannot take is answered
// -32093 at once.
inline void Job::hand_off(std::size_t i, Handoff::Work work, Workspace& ws) {
  if (core_.executor_gone()) return not_run(i, work, "the executor is gone");
  std::shared_ptr<Handoff> task;
  refs_.fetch_add(1, std::memory_order_relaxed);  // the task's; dropped by Handoff
  try {
    task = std::make_shared<Handoff>(*this, core_.gate, i, work);
  } catch (...) {  // no memory for the task: run it here instead
    refs_.fetch_sub(1, std::memory_order_relaxed);
    switch (work) {
      case Handoff::Work::member:
        return guarded(i, [&] { run(i, ws); });
      case Handoff::Work::group:
        return guarded_group(i, ws);
      case Handoff::Work::sweep:
        return run_sweep(ws);
    }
  }
  try {
    core_.executor->execute([task] { task->run(); });
  } catch (...) {
    task->why_not_run = "the executor refused the task";
    const std::size_t first = work == Handoff::Work::group   ? groups_[i]->members.front()
                              : work == Handoff::Work::sweep ? sweep_.front()
                                                             : i;
    report_exception(options(), members_[first]->request.method, std::current_exception());
  }
  // The executor's copies keep the task now; when none is left unrun, it is answered.
}

// The member (each member of the group, or the sweep's members nobody will take) was not run
// by the executor: -32093 with `why`. No hold is taken: the message may have finished
// already (every member cancelled while queued), and the task's reference keeps the job,
// and its groups, until we return.
inline void Job::not_run(std::size_t i, Handoff::Work work, const char* why) noexcept {
  switch (work) {
    case Handoff::Work::member:
      return refuse(i, why);
    case Handoff::Work::group:
      for (const std::size_t member : groups_[i]->members) refuse(member, why);
      return;
    case Handoff::Work::sweep:
      return end_sweep_turn(why);
  }
}

inline void Job::refuse(std::size_t i, const char* why) noexcept {
  Member& m = *members_[i];
  if (!m.claim(Member::running)) return;  // cancelled while queued, and answered already
  guarded(i, [&] {
    if (!m.request.id.is_notification()) {
      WorkspaceLease ws;
      write_error(m.text, ws->writer, m.request.id, ErrorCode::overloaded, ReasonData{why});
    }
    member_done(i);
  });
}

inline Handoff::~Handoff() {
  if (ran_.exchange(true, std::memory_order_acq_rel)) return;
  if (!gate_->enter()) return;  // the session has ended: its work was answered without us
  job_.not_run(what_, work_, why_not_run);
  job_.unref();
  gate_->leave();
}

inline void Handoff::run() {
  if (ran_.exchange(true, std::memory_order_acq_rel)) return;  // another copy ran, or is running
  if (!gate_->enter()) return;  // the session has ended: its work was answered without us
  {
    WorkspaceLease ws;
    switch (work_) {
      case Work::member:
        job_.run_task(what_, *ws);
        break;
      case Work::group:
        job_.guarded_group(what_, *ws);
        break;
      case Work::sweep:
        job_.run_sweep(*ws);
        break;
    }
  }
  job_.unref();
  gate_->leave();
}

}  // namespace rpc::detail
