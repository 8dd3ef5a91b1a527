// SPDX-License-Identifier: MIT
// Part of session_job.hpp (included at its end): batch-aware dispatch, the members that call
// one batched method answered by one call of its batch handler, and coalesced calls handed to
// their method's coalescer.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "../config.hpp"
#include "chrono.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Without memory for the plan, every member simply runs on its own.
inline void Job::plan_groups() noexcept {
  try {
    group_count_ = 0;
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.method == nullptr || !m.method->batch || m.method->runs_first) continue;
      std::size_t g = 0;
      while (g < group_count_ && groups_[g]->method != m.method) ++g;
      if (g == group_count_) {
        if (groups_.size() == group_count_) groups_.push_back(std::make_unique<Group>());
        groups_[g]->method = m.method;
        groups_[g]->members.clear();
        ++group_count_;
      }
      groups_[g]->members.push_back(i);
    }
    for (std::size_t g = 0; g < group_count_; ++g) {
      const Group& group = *groups_[g];
      if (group.members.size() < 2 && !group.method->coalescer) continue;  // a lone call runs as usual
      for (const std::size_t i : groups_[g]->members) members_[i]->group = g;
    }
  } catch (...) {
    group_count_ = 0;
    for (std::size_t i = 0; i < count_; ++i) members_[i]->group = Member::none;
  }
}

inline void Job::start_group(std::size_t g, Workspace& ws) {
  if (groups_[g]->method->coalescer) return coalesce(g, ws);
  if (core_.executor != nullptr && !groups_[g]->method->options.inline_only) {
    hand_off(g, Handoff::Work::group, ws);
  } else {
    guarded_group(g, ws);
  }
}

// Runs group `g`; if that throws (memory ran out), each member not answered yet gets -32603.
//
// The members still queued are claimed first. Only with one of them claimed (so not answered
// yet, so the message not finished) may the job be held: a group whose members were all
// cancelled while queued belongs to a message that may have been answered and sent, and
// holding it would finish it a second time.
inline void Job::guarded_group(std::size_t g, Workspace& ws) noexcept {
  std::size_t claimed = 0;
  for (const std::size_t i : groups_[g]->members) claimed += members_[i]->claim(Member::running) ? 1u : 0u;
  if (claimed == 0) return;  // every member was cancelled while queued, and answered already
  hold();  // a member answered inside the call must not finish the job under our feet
  try {
    run_group(g, ws);
  } catch (...) {
    for (const std::size_t i : groups_[g]->members) {  // those claimed and not yet answered
      if (members_[i]->phase.load(std::memory_order_relaxed) == Member::running) {
        guarded(i, [] { throw std::bad_alloc(); });
      }
    }
  }
  release();
}

// Calls group `g`'s batch handler for its claimed members (those whose phase is `running`).
inline void Job::run_group(std::size_t g, Workspace& ws) {
  Group& group = *groups_[g];
  group.calls.clear();
  for (const std::size_t i : group.members) {
    Member& m = *members_[i];
    if (m.phase.load(std::memory_order_relaxed) != Member::running) continue;  // answered already
    if (m.cancel_asked.load(std::memory_order_acquire)) {  // cancelled just as it started: not run
      answer_cancelled(m, ws.writer);
      member_done(i);
      continue;
    }
    m.reset(m.stop.get_token(), budget_.limit());
    group.calls.push_back({&m.request, &m, m.stop.get_token(), &core_.owner});
  }
  if (!group.calls.empty()) {
    const HandlerScope running(core_);
    (void)call_group(options(), *group.method, {&core_.router, &core_.owner, nullptr}, group.calls,
               group.scratch);
  }
  for (const GroupMember& call : group.calls) {
    Member& m = static_cast<Member&>(*call.slot);
    write_deferred(options(), m.request, m, ws.writer, m.text);
    member_done(m.index);
  }
}

// Hands group `g` of a coalesced method to its coalescer, its members still queued (so that
// a cancel or the session's end answers them at once), each holding the job as a task does;
// runs a group here if the coalescer says so. Without memory for that, each runs on its own.
inline void Job::coalesce(std::size_t g, Workspace& ws) {
  const Group& group = *groups_[g];
  Coalescer& coalescer = *group.method->coalescer;
  const bool may_run_here = core_.executor == nullptr || group.method->options.inline_only;
  bool counted = false;
  try {
    coalesced_.clear();
    const auto now = std::chrono::steady_clock::now();
    for (const std::size_t i : group.members) coalesced_.push_back({this, i, core_.gate, now});
    refs_.fetch_add(coalesced_.size(), std::memory_order_relaxed);  // the calls'; dropped by the coalescer
    counted = true;
    if (Coalescer::Runner* runner = coalescer.submit(coalesced_, may_run_here)) coalescer.run_here(*runner);
  } catch (...) {
    if (counted) refs_.fetch_sub(coalesced_.size(), std::memory_order_relaxed);
    for (const std::size_t i : group.members) guarded(i, [&] { run(i, ws); });
  }
  coalesced_.clear();
}

// Member `i` leaves the coalescer's queue for a group: false when it is not to run (answered
// already, or cancelled just now and answered here). `members` has room reserved.
inline bool Job::open_coalesced(std::size_t i, Workspace& ws, std::vector<GroupMember>& members) noexcept {
  Member& m = *members_[i];
  if (!m.claim(Member::running)) return false;  // cancelled while queued, and answered
  if (m.cancel_asked.load(std::memory_order_acquire)) {  // cancelled just as it started
    guarded(i, [&] {
      answer_cancelled(m, ws.writer);
      member_done(i);
    });
    return false;
  }
  m.reset(m.stop.get_token(), budget_.limit());
  members.push_back({&m.request, &m, m.stop.get_token(), &core_.owner});
  return true;
}

// Member `i`'s group has run: its answer is written, or -32603 when memory ran out.
inline void Job::close_coalesced(std::size_t i, Workspace& ws, bool failed) noexcept {
  guarded(i, [&] {
    if (failed) throw std::bad_alloc();
    Member& m = *members_[i];
    write_deferred(options(), m.request, m, ws.writer, m.text);
    member_done(i);
  });
}

}  // namespace rpc::detail
