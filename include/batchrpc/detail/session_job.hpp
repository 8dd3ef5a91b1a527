// SPDX-License-Identifier: MIT
// Everything one message needs while a session handles it: its parsed members, their responses,
// the executor tasks that run them, and the reply sent once the last one is done.
//
// Two counters keep a job alive. `outstanding_` counts members not yet answered, plus holds
// taken by whoever is still touching the job's members (the dispatcher, a group, a task); when
// it reaches zero the reply is assembled and sent. `refs_` counts executor tasks not yet done
// with the job, plus one until the reply is sent; when it reaches zero the job is recycled. A
// member cancelled while queued is answered at once, so the reply never waits for a task to
// come round; the job itself does, but the session's end does not (see TaskGate): once every
// reply is sent, a task still to come has nothing to do.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../config.hpp"
#include "../session.hpp"
#include "call.hpp"
#include "coalescer.hpp"
#include "group.hpp"
#include "message_parser.hpp"
#include "parsed_message.hpp"
#include "reply.hpp"
#include "session_core.hpp"
#include "session_member.hpp"
#include "workspace.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The reply budget (Limits::max_response_bytes) while the members of one message write their
// responses, on any number of threads. A member may grow to what was left when it started plus a
// small allowance, and spends what it wrote when it is done: memory stays within a few budgets
// however many members write at once, and no write pays for an atomic operation. The reply
// itself is fitted to the budget exactly, in request order, when it is assembled.
class ReplyBudget {
 public:
  static constexpr std::size_t allowance = 4096;  // responses this small are not counted

  void reset(std::size_t bytes) noexcept { left_.store(bytes, std::memory_order_relaxed); }
  // How large a response starting now may grow.
  [[nodiscard]] std::size_t limit() const noexcept {
    const std::size_t left = left_.load(std::memory_order_relaxed);
    return left > Limits::unlimited - allowance ? Limits::unlimited : left + allowance;
  }
  void spend(std::size_t bytes) noexcept {
    if (bytes <= allowance) return;
    std::size_t left = left_.load(std::memory_order_relaxed);
    while (!left_.compare_exchange_weak(left, left - std::min(left, bytes), std::memory_order_relaxed)) {
    }
  }

 private:
  std::atomic<std::size_t> left_{0};
};

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

class Job {
 public:
  explicit Job(SessionCore& core) : core_(core) {}

  // Parses the message and starts its members; returns once they are running or done. Every
  // path, out of memory included, ends in exactly one call of `done`. With `owned` (which holds
  // `message`), the text is taken over instead of copied.
  void start(std::string_view message, std::string* owned, Completion done) noexcept {
    begin(std::move(done), message.size(), nullptr, [&](Workspace& ws) { dispatch(message, owned, ws); });
  }
  // The same for a message the session's fast path has parsed already (`parsed`, with its
  // `outcome`), on this thread's workspace `ws`. The job takes `parsed` and leaves its own
  // spare one in its place.
  void start_parsed(std::unique_ptr<ParsedMessage>& parsed, const ParseOutcome& outcome, Completion done,
                    Workspace& ws) noexcept {
    message_.swap(parsed);
    begin(std::move(done), message_->text.size(), &ws, [&](Workspace& w) { dispatch_parsed(outcome, w); });
  }

  SessionCore& core() const noexcept { return core_; }

 private:
  friend class Coalescer;
  friend class Handoff;
  friend class Member;
  friend class SessionCore;

  // What every start shares: the job made ready, the message admitted, `run` done on a
  // workspace (`given`, or this thread's), and the reply sent once every member is answered.
  template <class Dispatch>
  void begin(Completion done, std::size_t size, Workspace* given, Dispatch&& run) noexcept {
    done_ = std::move(done);
    whole_ = false;
    count_ = 0;
    enrolled_any_ = false;
    outstanding_.store(1, std::memory_order_relaxed);  // the dispatcher's own hold
    refs_.store(1, std::memory_order_relaxed);         // dropped once the reply is sent
    budget_.reset(options().limits.max_response_bytes);
    reply_.clear();
    try {
      std::optional<WorkspaceLease> lease;
      Workspace& ws = given != nullptr ? *given : *lease.emplace();
      if (admit(size)) {
        run(ws);
      } else {
        whole(ws, ErrorCode::overloaded, ReasonData{"too many bytes of messages in progress"});
      }
    } catch (...) {  // out of memory before any member started: answer the message as a whole
      answer_out_of_memory();
    }
    // Our own hold, and the members answered here (released with it; see member_done).
    const std::size_t ours = 1 + done_in_dispatch_;
    done_in_dispatch_ = 0;
    if (outstanding_.load(std::memory_order_acquire) == ours) {
      // Every member is answered (the common case of inline handlers): only what we hold is
      // left, and nobody else can take a hold, so the reply is sent here and the session told
      // once that dispatch has ended and the reply is sent.
      outstanding_.store(0, std::memory_order_relaxed);
      finish(true);
    } else {
      core_.dispatch_ended(*this);  // its members may be answered by the session's end from now on
      release(ours);
    }
  }

  const RouterOptions& options() const { return core_.router.options(); }

  // Counts the message in the router's bytes in progress until its reply is sent; false when
  // it does not fit (Limits::max_inflight_bytes).
  bool admit(std::size_t size) noexcept {
    const Limits& limits = options().limits;
    const std::size_t cost = InflightBytes::cost(limits, size);
    RouterRuntime& runtime = RouterAccess::runtime(core_.router);
#if !defined(NDEBUG) || defined(BATCHRPC_CHECKS)
    runtime.mark_serving();
#endif
    if (!runtime.inflight.reserve(cost, limits.max_inflight_bytes)) return false;
    admitted_ = cost;
    return true;
  }

  // Throws only before the first member is committed (counted in outstanding_); from then on,
  // each member's own failure is caught and answered (see guarded()).
  void dispatch(std::string_view message, std::string* owned, Workspace& ws) {
    const Limits& limits = options().limits;
    if (message.size() > limits.max_message_bytes) {
      return whole(ws, ErrorCode::message_too_large, MaxData{limits.max_message_bytes});
    }
    message_->take(message, owned);  // in-situ parsing writes into it, and it lives as long as the job
    dispatch_parsed(message_->parse(limits), ws);
  }

  // Throws only before the first member is committed, as dispatch().
  void dispatch_parsed(const ParseOutcome& parsed, Workspace& ws) {
    const Limits& limits = options().limits;
    MessageParser& parser = message_->parser;
    if (parsed.status != ParseStatus::ok) {
      whole_ = true;
      return write_unreadable(parsed, limits, ws.writer, reply_);
    }
    const std::span<const ParsedRequest> requests = parser.requests();
    batch_ = parser.is_batch();
    if (requests.empty()) return whole(ws, ErrorCode::invalid_request, ReasonData{"empty batch"});
    while (members_.size() < requests.size()) members_.push_back(std::make_unique<Member>());
    sweep_.clear();
    if (core_.executor != nullptr) sweep_.reserve(requests.size());
    count_ = requests.size();
    // Committed: nothing throws past here. No other thread can reach the job before its members
    // are enrolled or handed out, so a plain store does.
    outstanding_.store(1 + count_, std::memory_order_relaxed);

    // Every member is checked and enrolled before any runs, so a cancel in this batch finds
    // the members it names still queued.
    bool cancels = false;  // the message holds a cancel (a method that runs first)
    for (std::size_t i = 0; i < count_; ++i) {
      guarded(i, [&] {
        if (!prepare(i, requests[i], ws)) member_done(i, &done_in_dispatch_);
      });
      const Member& m = *members_[i];
      cancels = cancels || (m.method != nullptr && m.method->runs_first);
    }
    enroll_cancellable(cancels);
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.method != nullptr && m.method->runs_first) guarded(i, [&] { run(i, ws); });
    }
    plan_groups();
    // The executor's members first, so that they start while this thread runs the others.
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.method == nullptr || m.method->runs_first || m.group != Member::none) continue;
      if (core_.executor != nullptr && !m.method->options.inline_only) sweep_.push_back(i);  // room reserved
    }
    start_sweep(ws);
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.method == nullptr || m.method->runs_first) continue;
      if (m.group != Member::none) {  // answered with its group, started at its first member
        if (groups_[m.group]->members.front() == i) start_group(m.group, ws);
        continue;
      }
      if (core_.executor == nullptr || m.method->options.inline_only) guarded(i, [&] { run(i, ws); });
    }
  }

  // Runs `step` for member `i`, which answers it; if the step throws (memory ran out), the
  // member is answered with a fixed -32603 instead, so the message still completes. A step
  // that throws has not answered its member.
  template <class Step>
  void guarded(std::size_t i, Step&& step) noexcept {
    try {
      step();
    } catch (...) {
      Member& m = *members_[i];
      m.text.clear();
      if (!m.request.id.is_notification()) {
        try {
          WorkspaceLease ws;
          write_error(m.text, ws->writer, m.request.id, ErrorCode::internal_error);
        } catch (...) {
          m.text.clear();  // no memory even for that: this member gets no response
        }
      }
      member_done(i);
    }
  }

  // The members in sweep_ go to the executor as a few tasks, each of which takes the next
  // member not yet taken until none is left: one hand-off per task, not per member, and a
  // long member holds up no other. One member alone is handed off as itself.
  void start_sweep(Workspace& ws) {
    if (sweep_.empty()) return;
    if (sweep_.size() == 1) return hand_off(sweep_.front(), Handoff::Work::member, ws);
    static const std::size_t most = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 2, 8);
    const std::size_t tasks = std::min(sweep_.size(), most);
    sweep_next_.store(0, std::memory_order_relaxed);
    sweep_turns_.store(tasks, std::memory_order_relaxed);
    for (std::size_t k = 0; k < tasks; ++k) hand_off(0, Handoff::Work::sweep, ws);
  }
  // A turn at the sweep: runs members until none is left to take, then ends the turn.
  //
  // The turn holds the job from the first member it claims (a claimed member is not answered,
  // so the message is not finished): a Responder answering inside a call cannot finish the job
  // under our feet, and the members answered here are released with that hold, at the end.
  void run_sweep(Workspace& ws) {
    bool holding = false;
    std::size_t owed = 0;
    for (std::size_t k = sweep_next_.fetch_add(1, std::memory_order_relaxed); k < sweep_.size();
         k = sweep_next_.fetch_add(1, std::memory_order_relaxed)) {
      const std::size_t i = sweep_[k];
      if (!members_[i]->claim(Member::running)) continue;  // cancelled while queued, and answered
      if (!holding) hold();
      holding = true;
      guarded(i, [&] { call(i, ws, &owed); });
    }
    if (holding) release(owed + 1);
    end_sweep_turn("the executor dropped the task");  // nothing is left: never refuses
  }
  // A turn that ran, or never will. While another turn may still come, the members nobody
  // took are left to it; the last turn answers them -32093 with `why`.
  void end_sweep_turn(const char* why) noexcept {
    if (sweep_turns_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    for (std::size_t k = sweep_next_.fetch_add(1, std::memory_order_relaxed); k < sweep_.size();
         k = sweep_next_.fetch_add(1, std::memory_order_relaxed)) {
      refuse(sweep_[k], why);
    }
  }

  // Hands member `i` (or group `i`, or a turn at the sweep) to the executor; whatever becomes
  // of the task, its work is answered (see Handoff). Work the executor cannot take is answered
  // -32093 at once.
  void hand_off(std::size_t i, Handoff::Work work, Workspace& ws) {
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
  void not_run(std::size_t i, Handoff::Work work, const char* why) noexcept {
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
  void refuse(std::size_t i, const char* why) noexcept {
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

  // Batch-aware dispatch: the members calling one batched method (two or more of them) form a
  // group, answered by one call of the method's batch handler (Router::add_batched). The calls
  // of a coalesced method (Router::coalesce) form a group however few they are, handed to its
  // coalescer together.
  struct Group {
    const Method* method = nullptr;
    std::vector<std::size_t> members;
    std::vector<GroupMember> calls;
    GroupScratch scratch;
  };

  // Without memory for the plan, every member simply runs on its own.
  void plan_groups() noexcept {
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

  void start_group(std::size_t g, Workspace& ws) {
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
  void guarded_group(std::size_t g, Workspace& ws) noexcept {
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
  void run_group(std::size_t g, Workspace& ws) {
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
  void coalesce(std::size_t g, Workspace& ws) {
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
  bool open_coalesced(std::size_t i, Workspace& ws, std::vector<GroupMember>& members) noexcept {
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
  void close_coalesced(std::size_t i, Workspace& ws, bool failed) noexcept {
    guarded(i, [&] {
      if (failed) throw std::bad_alloc();
      Member& m = *members_[i];
      write_deferred(options(), m.request, m, ws.writer, m.text);
      member_done(i);
    });
  }

  template <class Data>
  void whole(Workspace& ws, ErrorCode code, Data&& data) {
    whole_ = true;
    write_error(reply_, ws.writer, null_id, code, std::forward<Data>(data));
  }

  // Validates member `i`; false when it is already answered (or needs no answer).
  bool prepare(std::size_t i, const ParsedRequest& parsed, Workspace& ws) {
    Member& m = *members_[i];
    m.job = this;
    m.index = i;
    m.request = Request{};
    m.method = nullptr;
    m.group = Member::none;
    m.text.clear();
    if (m.stop.stop_possible()) m.stop = std::stop_source(std::nostopstate);
    m.to_enroll = false;
    m.cancellable = false;
    // Relaxed: other threads reach the member only through the in-flight table's mutex or the
    // executor's queue, which order these stores before them.
    m.cancel_asked.store(false, std::memory_order_relaxed);
    m.unanswered.store(false, std::memory_order_relaxed);
    m.phase.store(Member::queued, std::memory_order_relaxed);
    if (parsed.is_response) {  // the client's answer to a request of ours: never answered
      take_response(parsed);
      return false;
    }
    if (parsed.invalid != nullptr) {
      // The client's broken answer to a request of ours: that request hears why, not the client.
      if (parsed.broken_response != nullptr && core_.peer->refuse(parsed.request.id, parsed.broken_response)) {
        return false;
      }
      write_error(m.text, ws.writer, null_id, ErrorCode::invalid_request, ReasonData{parsed.invalid});
      return false;
    }
    m.request = parsed.request;
    // The fast path may have looked the methods up already (ParsedMessage::methods).
    const std::vector<const Method*>& found = message_->methods;
    const Method* method = found.size() == count_ ? found[i] : RouterAccess::find(core_.router, m.request.method);
    if (method == nullptr) {
      if (!m.request.id.is_notification()) {
        write_error(m.text, ws.writer, m.request.id, ErrorCode::method_not_found);
      }
      return false;
    }
    const std::string& capability = method->options.capability;
    if (!capability.empty() && !core_.owner.granted(capability)) {
      if (!m.request.id.is_notification()) write_not_granted(m.request.id, capability, ws.writer, m.text);
      return false;
    }
    m.method = method;
    return true;
  }

  // Routes a Response from the client to the server's request it answers (its reply handler
  // runs here), or reports it as unmatched.
  void take_response(const ParsedRequest& parsed) {
    const RequestId& id = parsed.request.id;
    if (core_.peer->answer(id, *parsed.answer, parsed.answer_is_error)) return;
    if (!core_.unmatched_response) return;
    try {
      core_.unmatched_response(id);
    } catch (...) {
    }
  }

  // Enrols the members a cancel can reach, all under one lock (SessionCore::enroll). Left out,
  // when the message holds no cancel: a call run here whose handler cannot see a cancel (it
  // takes no Context nor Responder), with only cheap calls (inline_only ones of that kind) run
  // here before it. It starts within moments, and a cancel from another message could only
  // have had it answered -32800 instead of run in that moment: it is served as if the cancel
  // had come just after. Anything else run here first (a handler that may be slow, or may
  // reach the session) has every later member enrolled. A member that finds no memory runs all
  // the same; it just cannot be cancelled. SessionCore::answerable_directly follows this rule.
  void enroll_cancellable(bool cancels) noexcept {
    bool only_cheap_before = !cancels;  // only cheap calls that cannot see a cancel run here first
    bool any = false;                   // a member to enrol: the session's lock is taken only then
    for (std::size_t i = 0; i < count_; ++i) {
      Member& m = *members_[i];
      if (m.method == nullptr || m.method->runs_first) continue;  // answered, or run first
      const bool observes = m.method->observes_stop;
      const bool runs_here = core_.executor == nullptr || m.method->options.inline_only;
      const bool cheap = m.method->options.inline_only && !observes;
      const bool left_out = runs_here && !observes && !m.method->batch && only_cheap_before;
      if (!cheap && runs_here) only_cheap_before = false;
      if (m.request.id.is_notification()) continue;  // no cancel can name it
      try {
        m.to_enroll = !left_out && id_key(m.request.id, m.key);
        m.cancellable = m.to_enroll;
        if (m.to_enroll && observes) m.stop = std::stop_source();
        any = any || m.to_enroll;
      } catch (...) {  // out of memory
        m.to_enroll = false;
      }
    }
    enrolled_any_ = any;
    if (any) core_.enroll(std::span(members_.data(), count_));
  }

  // Runs member `i` on the dispatching thread, whose own hold keeps the job until dispatch
  // returns.
  void run(std::size_t i, Workspace& ws) {
    Member& m = *members_[i];
    if (!m.cancellable) {
      // Nothing else can claim it: no cancel can name it, and the session's end answers only
      // the members of messages whose dispatch has ended. A store is enough.
      m.phase.store(Member::running, std::memory_order_relaxed);
    } else if (!m.claim(Member::running)) {
      return;  // cancelled while queued, and answered
    }
    call(i, ws, &done_in_dispatch_);
  }

  // Runs member `i` on an executor thread.
  void run_task(std::size_t i, Workspace& ws) {
    if (!members_[i]->claim(Member::running)) return;  // cancelled while queued, and answered
    hold();  // a Responder answering inside the call must not finish the job under our feet
    guarded(i, [&] { call(i, ws); });
    release();
  }

  // Member `i`, claimed, is answered -32800 if cancelled meanwhile, else its handler is called.
  // `owed`: see member_done().
  void call(std::size_t i, Workspace& ws, std::size_t* owed = nullptr) {
    Member& m = *members_[i];
    if (m.cancel_asked.load(std::memory_order_acquire)) {  // cancelled just as it started: not run
      answer_cancelled(m, ws.writer);
      return member_done(i, owed);
    }
    m.reset(m.stop.get_token(), budget_.limit());
    m.arrivals.store(0, std::memory_order_relaxed);  // the Responder is handed on after this
    Context ctx = ContextAccess::make(m.request.method, m.request.id, m.stop.get_token(),
                                      {&core_.router, &core_.owner, &m, m.request.params});
    const HandlerScope running(core_);
    if (call_method(options(), *m.method, m.request, ctx, ws.writer, m.text, budget_.limit())) {
      member_done(i, owed);
    } else if (m.second_arrival()) {  // the Responder has answered already
      answered(i, ws, owed);
    }
  }

  // A member that never runs because it was cancelled: -32800 for a request, nothing for a
  // notification.
  static void answer_cancelled(Member& m, ResultWriter& w) {
    if (!m.request.id.is_notification()) write_error(m.text, w, m.request.id, ErrorCode::request_cancelled);
  }

  // Member `i` was cancelled while queued: it never runs, and is answered now.
  void cancelled_before_start(std::size_t i) noexcept {
    guarded(i, [&] {
      Member& m = *members_[i];
      if (!m.request.id.is_notification()) answer_cancelled(m, WorkspaceLease()->writer);
      member_done(i);
    });
  }

  // Member `i` has both returned from its handler and been answered by its Responder.
  void answered(std::size_t i, Workspace& ws, std::size_t* owed = nullptr) {
    Member& m = *members_[i];
    core_.unawait(m);
    write_deferred(options(), m.request, m, ws.writer, m.text);
    member_done(i, owed);
  }

  // Member `i` is answered. With `owed`, the caller holds the job (the dispatcher, a sweep
  // turn) and releases the member's count later with its own, in one step (see release(n)):
  // one atomic operation per turn instead of one per member, on a counter threads share.
  void member_done(std::size_t i, std::size_t* owed = nullptr) noexcept {
    Member& m = *members_[i];
    m.phase.store(Member::done, std::memory_order_release);  // a cancel passes it over from now on
    budget_.spend(m.text.size());
    if (owed != nullptr) {
      ++*owed;
    } else {
      release();
    }
  }
  void hold() noexcept { outstanding_.fetch_add(1, std::memory_order_relaxed); }
  void release(std::size_t n = 1) noexcept {
    if (outstanding_.fetch_sub(n, std::memory_order_acq_rel) == n) finish();
  }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) core_.recycle(*this);
  }

  // All members are done: the reply in request order, sent once. `dispatch_ends`: start() is
  // finishing the job itself, and has not told the session that its dispatch ended.
  void finish(bool dispatch_ends = false) noexcept {
    if (enrolled_any_) {  // before the completion: a client that got the reply finds none in flight
      enrolled_any_ = false;
      core_.withdraw(std::span(members_.data(), count_));
    }
    if (!whole_) {
      try {
        assemble();
      } catch (...) {
        answer_out_of_memory();
      }
    }
    try {
      message_->parser.release();
    } catch (...) {  // no memory to keep a larger pool: the next parse makes a fresh one
    }
    trim();
    RouterAccess::runtime(core_.router).inflight.release(admitted_);
    admitted_ = 0;
    {
      // The session must not be destroyed from its completion, nor by the completion's
      // destruction (a completion that owns its session): both would wait for themselves.
      const HandlerScope running(core_);
      complete(std::move(done_), reply_.empty() ? std::nullopt : std::optional<std::string_view>(reply_.view()));
    }
    if (reply_.capacity() > kRetainedBytes) reply_.release();
    core_.reply_sent(*this, dispatch_ends);
  }

  // What a job keeps between messages is bounded: an idle session costs little, whatever it
  // served before.
  static constexpr std::size_t kRetainedBytes = ParsedMessage::retained_bytes;
  void trim() noexcept {
    message_->trim();
    for (std::size_t i = 0; i < count_; ++i) {
      if (members_[i]->text.capacity() > kRetainedBytes / 4) members_[i]->text.release();
      if (members_[i]->value.capacity() > kRetainedBytes / 4) members_[i]->value.release();
    }
  }

  // A reply that needs no memory to build (reply_ keeps its capacity from earlier messages).
  void answer_out_of_memory() noexcept {
    whole_ = true;
    write_out_of_memory(reply_);  // when not even that fits, nothing at all is sent
  }

  void assemble() {
    reply_.clear();
    ResultWriter w(reply_);  // only used to write a -32092 in place of an oversized response
    const Limits& limits = options().limits;
    if (!batch_) {  // the member's response is the reply: taken over, not copied
      Member& m = *members_[0];
      if (m.unanswered.load(std::memory_order_relaxed)) return;  // cancelled with no answer
      reply_.swap(m.text);
      if (!reply_.empty()) fit_response(limits, m.request.id, 0, w, reply_);
      return;
    }
    reply_.append('[');
    bool any = false;
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.text.empty() || m.unanswered.load(std::memory_order_relaxed)) continue;
      if (any) reply_.append(',');
      any = true;
      const std::size_t start = reply_.size();
      reply_.append(m.text.view());
      fit_response(limits, m.request.id, start, w, reply_);
    }
    if (any) {
      reply_.append(']');
    } else {
      reply_.clear();  // only notifications: nothing is sent
    }
  }

  SessionCore& core_;
  std::unique_ptr<ParsedMessage> message_ = std::make_unique<ParsedMessage>();  // its text, parsed
  std::size_t admitted_ = 0;  // what the message counts in the router's bytes in progress
  Buffer reply_;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::size_t group_count_ = 0;
  std::vector<std::size_t> sweep_;  // the members the executor runs, taken in turn (start_sweep)
  std::atomic<std::size_t> sweep_next_{0};   // the next member of sweep_ to take
  std::atomic<std::size_t> sweep_turns_{0};  // sweep tasks not yet run nor dropped
  std::vector<CoalescedCall> coalesced_;  // handed to a coalescer, reused
  std::size_t count_ = 0;
  bool batch_ = false;
  bool whole_ = false;  // reply_ answers the message as a whole (no members ran)
  bool enrolled_any_ = false;  // some member went into the session's in-flight table
  ReplyBudget budget_;
  std::atomic<std::size_t> outstanding_{0};  // members not done, plus holds: the reply waits
  std::size_t done_in_dispatch_ = 0;  // members the dispatcher answered, not yet released (its thread only)
  std::atomic<std::size_t> refs_{0};         // tasks not done with the job, plus one until the reply is sent
  // Guarded by the session's mutex.
  bool dispatching_ = false;  // start() has not finished handing its members out
  bool in_spares_ = true;     // among the session's spare jobs
  bool lingering_ = false;    // reply sent, tasks still hold it
  Completion done_;
};

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
