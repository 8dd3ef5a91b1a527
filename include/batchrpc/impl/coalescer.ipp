// SPDX-License-Identifier: MIT
// Non-template bodies of detail/coalescer.hpp: queueing calls, and running their groups on the
// caller's thread or the batcher thread.
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <stop_token>
#include <thread>

#include "../config.hpp"
#include "../detail/call.hpp"
#include "../detail/coalescer.hpp"
#include "../detail/session_job.hpp"
#include "../detail/task_gate.hpp"
#include "../detail/workspace.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The coalescer whose group this thread is running, if any: a call it submits from there (a
// handler or a completion calling back into a session) runs here, as a nested group, instead of
// queueing behind the group that waits for it.
inline thread_local const Coalescer* running_group_of = nullptr;

class Coalescer::RunningGroup {
 public:
  explicit RunningGroup(const Coalescer& c) noexcept : saved_(running_group_of) { running_group_of = &c; }
  ~RunningGroup() { running_group_of = saved_; }
  RunningGroup(const RunningGroup&) = delete;
  RunningGroup& operator=(const RunningGroup&) = delete;

 private:
  const Coalescer* saved_;
};

BATCHRPC_DECL Coalescer::Runner* Coalescer::submit(std::span<const CoalescedCall> calls, bool may_run_here) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (running_group_of == this) {
    // Made from inside one of our groups, which waits for it: queued, it could wait behind
    // calls no free group will take. It runs at once, here, as a group of its own calls.
    std::unique_ptr<Runner> runner = idle_runner();
    try {
      runner->calls.assign(calls.begin(), calls.end());
    } catch (...) {
      idle_runners_.push_back(std::move(runner));
      throw;
    }
    ++running_;
    return runner.release();
  }
  const bool here = may_run_here && running_ == 0;
  // Batcher threads start with the first call that queues, or that a group run here leaves
  // (a message with more calls than the group takes): nothing else would run it.
  const std::size_t queued = queue_.size() + calls.size();
  if (!workers_ && (!here || share(queued, running_ + 1) < queued)) start_workers();
  std::unique_ptr<Runner> runner = here ? idle_runner() : nullptr;
  const std::size_t before = queue_.size();
  try {
    queue_.insert(queue_.end(), calls.begin(), calls.end());
  } catch (...) {  // all or none
    queue_.resize(before);
    if (runner) idle_runners_.push_back(std::move(runner));
    throw;
  }
  if (runner) {  // its calls are taken now, before a batcher can take them
    ++running_;
    const bool shared = take(*runner);
    lock.unlock();
    if (shared) wake_.notify_all();
    return runner.release();
  }
  // A batcher has something new to decide only when the queue was empty, when no group runs,
  // or when the queue is full; otherwise it wakes at the time it waits for, or when a group
  // ends, and looks again then. Waking it for every call would cost each call a context switch.
  const bool news = before == 0 || running_ == 0 ||
                    (queue_.size() >= settings_.max_group && running_ < settings_.max_concurrent_groups);
  lock.unlock();
  if (news) wake_.notify_all();  // few batchers: wake them all, and let the one that may start start
  return nullptr;
}

BATCHRPC_DECL std::unique_ptr<Coalescer::Runner> Coalescer::idle_runner() {
  if (idle_runners_.empty()) {
    idle_runners_.reserve(runners_made_ + 1);  // so that handing it back never needs memory
    auto made = std::make_unique<Runner>();
    ++runners_made_;
    return made;
  }
  std::unique_ptr<Runner> runner = std::move(idle_runners_.back());
  idle_runners_.pop_back();
  return runner;
}

BATCHRPC_DECL void Coalescer::start_workers() {
  auto workers = std::make_shared<std::vector<std::jthread>>();
  workers->reserve(settings_.max_concurrent_groups);
  for (std::size_t i = 0; i < settings_.max_concurrent_groups; ++i) {
    workers->emplace_back([this](std::stop_token stop) { work(std::move(stop)); });
  }
  workers_ = std::move(workers);
}

BATCHRPC_DECL void Coalescer::run_here(Runner& runner) noexcept {
  {
    WorkspaceLease ws;
    run(runner, *ws);
  }
  ran(&runner);
}

BATCHRPC_DECL void Coalescer::ran(Runner* caller) noexcept {
  bool more = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    if (caller != nullptr) idle_runners_.emplace_back(caller);  // room was reserved
    more = !queue_.empty();
  }
  if (more) wake_.notify_all();
}

BATCHRPC_DECL void Coalescer::work(std::stop_token stop) noexcept {
  Runner runner;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, stop, [this] { return !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    // While another group runs, the queued calls wait (and their group grows) until it ends,
    // or, with room for one more group, until max_group are queued, the oldest has waited
    // max_wait, none has joined for max_quiet, or a group just started left a part of the
    // queue for another (see take). When stopping, they run at once.
    const auto start_by = [&] {
      return std::min(queue_.front().since + settings_.max_wait, queue_.back().since + settings_.max_quiet);
    };
    const auto may_start = [&] {
      if (queue_.empty() || running_ == 0 || stop.stop_requested()) return true;
      return running_ < settings_.max_concurrent_groups &&
             (parts_left_ > 0 || queue_.size() >= settings_.max_group ||
              std::chrono::steady_clock::now() >= start_by());
    };
    // With no room for a group, it waits for one to end; with room, for the time it may start
    // at, looking again when woken early or when a later call has put that time off. A group
    // that ends takes it back from the first wait to the second.
    const auto room = [&] { return running_ < settings_.max_concurrent_groups; };
    while (!may_start()) {
      if (room()) {
        wake_.wait_until(lock, stop, start_by(), may_start);
      } else {
        wake_.wait(lock, stop, [&] { return room() || may_start(); });
      }
    }
    if (queue_.empty()) continue;  // another thread took them meanwhile
    ++running_;
    const bool shared = take(runner);
    lock.unlock();
    if (shared) wake_.notify_all();
    {
      WorkspaceLease ws;
      run(runner, *ws);
    }
    ran(nullptr);
    lock.lock();
  }
}

// A group that starts while more could start beside it takes only its share of the queue, and
// leaves the rest to start at once on other batchers: with 64 calls queued and room for two
// groups, two groups of 32 keep two cores busy, where one of 64 would keep one busy and the
// callers of the other half waiting. `running` counts the group starting; nested groups (see
// submit) may take it past the bound.
BATCHRPC_DECL std::size_t Coalescer::share(std::size_t queued, std::size_t running) const noexcept {
  const std::size_t slots = running <= settings_.max_concurrent_groups ? settings_.max_concurrent_groups - running + 1 : 1;
  return std::min((queued + slots - 1) / slots, settings_.max_group);
}

// The parts a split leaves are kept for the groups that start next, whoever starts them (the
// batcher that split may come back first, when its group was quick): otherwise each would
// split what is left again, into ever smaller groups.
BATCHRPC_DECL bool Coalescer::take(Runner& runner) noexcept {
  runner.calls.clear();
  const std::size_t queued = queue_.size();
  std::size_t n = 0;
  if (parts_left_ > 0) {
    n = std::min(part_size_, queued);
    --parts_left_;
  } else {
    n = share(queued, running_);
    const std::size_t left = queued - n;
    part_size_ = n;
    parts_left_ = n < std::min(queued, settings_.max_group) ? (left + n - 1) / n : 0;
  }
  if (queued == n) parts_left_ = 0;  // what is left was taken by another meanwhile
  try {
    runner.calls.reserve(n);
  } catch (...) {  // no memory: take what fits (the rest wait for the next group)
  }
  const std::size_t room = std::min(n, runner.calls.capacity());
  for (std::size_t k = 0; k < room; ++k) {
    runner.calls.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return parts_left_ > 0;
}

BATCHRPC_DECL bool Coalescer::from_several_jobs(std::span<const GroupMember> members) noexcept {
  const Job* first = static_cast<const Member&>(*members.front().slot).job;
  for (const GroupMember& m : members) {
    if (static_cast<const Member&>(*m.slot).job != first) return true;
  }
  return false;
}

// Enters each call's session and claims its member; calls the batch handler once for those
// claimed; answers them; then lets go of every job and session entered. A member answered in
// between (cancelled while queued, or just now) is skipped but still let go.
BATCHRPC_DECL void Coalescer::run(Runner& runner, Workspace& ws) noexcept {
  const RunningGroup running(*this);  // handlers and completions may submit again from here
  std::vector<GroupMember>& members = runner.members;
  members.clear();
  bool failed = false;
  try {
    members.reserve(runner.calls.size());
  } catch (...) {
    failed = true;  // every call is answered -32603 below
  }
  for (CoalescedCall& c : runner.calls) {
    if (!c.gate->enter()) {  // its session has ended, and answered it
      c.job = nullptr;
      continue;
    }
    if (failed) {
      if (c.job->members_[c.index]->claim(Member::running)) c.job->close_coalesced(c.index, ws, true);
      continue;
    }
    c.job->open_coalesced(c.index, ws, members);
  }
  if (!members.empty()) {
    const Job& any = *static_cast<Member&>(*members.front().slot).job;  // all of one router
    try {
      const CallOrigin origin{&any.core().router, nullptr, nullptr};
      if (call_group(any.options(), method_, origin, members, runner.scratch) && from_several_jobs(members)) {
        // The handler threw for the whole group: what it threw belongs to no one call, and must
        // not reach another client. Each call is run again alone, and gets what it would get
        // uncoalesced (a lone call is a group of one).
        for (GroupMember& m : members) {
          m.slot->reset(m.stop, m.slot->value_limit());
          (void)call_group(any.options(), method_, origin, std::span(&m, 1), runner.scratch);
        }
      }
    } catch (...) {  // memory ran out around the handler: -32603 for each call of the group
      failed = true;
    }
    for (const GroupMember& m : members) {
      Member& member = static_cast<Member&>(*m.slot);
      member.job->close_coalesced(member.index, ws, failed);
    }
  }
  for (CoalescedCall& c : runner.calls) {
    if (c.job == nullptr) continue;
    c.job->unref();
    c.gate->leave();
  }
  runner.calls.clear();  // the gates are let go here, not at the next group
}

}  // namespace rpc::detail
