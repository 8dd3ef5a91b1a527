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
//
// Here: the job's state, parsing and checking the members, enrolling them for cancellation,
// running them on this thread, and counting them answered. Handing them to the executor, groups,
// and the reply are in session_job_executor.hpp, session_job_groups.hpp and
// session_job_reply.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
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
#include "chrono.hpp"
#include "coalescer.hpp"
#include "group.hpp"
#include "message_parser.hpp"
#include "parsed_message.hpp"
#include "reply.hpp"
#include "reply_budget.hpp"
#include "session_core.hpp"
#include "session_handoff.hpp"
#include "session_member.hpp"
#include "workspace.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class Job {
 public:
  explicit Job(SessionCore& core) : core_(core) {}

  // Parses the message and starts its members; returns once they are running or done. Every
  // path, out of memory included, ends in exactly one call of `done`. With `owned` (which holds
  // `message`), the text is taken over instead of copied. With `lends_thread`, this thread
  // takes a turn at the executor's members too (see start_sweep) before it returns.
  void start(std::string_view message, std::string* owned, Completion&& done, bool lends_thread) noexcept {
    lends_thread_ = lends_thread;
    unstarted_ = false;
    begin(done, message.size(), nullptr, [&](Workspace& ws) { dispatch(message, owned, ws); });
  }
  // The same for a message the session's fast path has parsed already (`parsed`, with its
  // `outcome`), on this thread's workspace `ws`. The job takes `parsed` and leaves its own
  // spare one in its place.
  void start_parsed(std::unique_ptr<ParsedMessage>& parsed, const ParseOutcome& outcome, Completion&& done,
                    Workspace& ws, bool lends_thread) noexcept {
    lends_thread_ = lends_thread;
    unstarted_ = false;
    message_.swap(parsed);
    begin(done, message_->text.size(), &ws, [&](Workspace& w) { dispatch_parsed(outcome, w); });
  }

  // The same for a message that is to run nothing (a transport past its shutdown's grace):
  // its members are checked as usual, and each call that would run is answered as a call
  // cancelled before it started (-32800; nothing for a notification). Answers to the server's
  // requests still reach them.
  void start_unstarted(std::string_view message, std::string* owned, Completion&& done) noexcept {
    lends_thread_ = false;
    unstarted_ = true;
    begin(done, message.size(), nullptr, [&](Workspace& ws) { dispatch(message, owned, ws); });
  }

  SessionCore& core() const noexcept { return core_; }

 private:
  friend class Coalescer;
  friend class Handoff;
  friend class Member;
  friend class SessionCore;

  // What every start shares: the job made ready, the message admitted, `run` done on a
  // workspace (`given`, or this thread's), and the reply sent once every member is answered.
  // `done` is taken (left empty), not copied: see take_completion.
  template <class Dispatch>
  void begin(Completion& done, std::size_t size, Workspace* given, Dispatch&& run) noexcept {
    done_ = take_completion(done);
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
    if (lends_thread_ && core_.executor != nullptr) look_for_the_rest(ours);
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

  // A thread that lends itself would only wait for the reply once its turn is over. The
  // members still running on the executor usually end within microseconds, so it looks for
  // them that long before it lets go: if they end, it sends the reply itself (begin), built
  // where it is awaited instead of on another core, and nobody sleeps; a sleep and a wake-up
  // cost more. Without an executor, only a Responder's answer can be outstanding, and that
  // may take any time: nothing is looked for.
  void look_for_the_rest(std::size_t ours) const noexcept {
    if (outstanding_.load(std::memory_order_acquire) == ours) return;
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (outstanding_.load(std::memory_order_acquire) != ours &&
           std::chrono::steady_clock::now() < until) {
    }
  }

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
        const bool runs = prepare(i, requests[i], ws);
        if (runs && unstarted_) not_started(*members_[i], ws.writer);
        if (!runs || unstarted_) member_done(i, &done_in_dispatch_);
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
    if (lends_thread_ && !sweep_.empty()) run_sweep(ws);  // the turn start_sweep left to us
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

  // Handing members to the executor, defined in session_job_executor.hpp.
  void start_sweep(Workspace& ws);
  void run_sweep(Workspace& ws);
  void end_sweep_turn(const char* why) noexcept;
  void hand_off(std::size_t i, Handoff::Work work, Workspace& ws);
  void not_run(std::size_t i, Handoff::Work work, const char* why) noexcept;
  void refuse(std::size_t i, const char* why) noexcept;

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

  // Groups and coalescing, defined in session_job_groups.hpp.
  void plan_groups() noexcept;
  void start_group(std::size_t g, Workspace& ws);
  void guarded_group(std::size_t g, Workspace& ws) noexcept;
  void run_group(std::size_t g, Workspace& ws);
  void coalesce(std::size_t g, Workspace& ws);
  bool open_coalesced(std::size_t i, Workspace& ws, std::vector<GroupMember>& members) noexcept;
  void close_coalesced(std::size_t i, Workspace& ws, bool failed) noexcept;

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
    // A handler that takes neither a Context nor a Responder cannot reach the member's slot
    // for a Responder: it gets none, and the slot is left as it is. Resetting it would touch
    // three more cache lines per call, which another core wrote last when members move
    // between the executor's threads.
    const bool observes = m.method->observes_stop;
    if (observes) {
      m.reset(m.stop.get_token(), budget_.limit());
      m.arrivals.store(0, std::memory_order_relaxed);  // the Responder is handed on after this
    }
    Context ctx = ContextAccess::make(m.request.method, m.request.id, m.stop.get_token(),
                                      {&core_.router, &core_.owner, observes ? &m : nullptr, m.request.params});
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

  // A member of a message that runs nothing (start_unstarted): left with no method, as a call
  // of an unknown method is, so that nothing later runs it (first: the answer may throw, and
  // guarded() then answers it), and answered as cancelled.
  static void not_started(Member& m, ResultWriter& w) {
    m.method = nullptr;
    answer_cancelled(m, w);
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
  // Why these orders are enough. A hold is taken only by a thread that already keeps the count
  // above zero (the dispatcher's own hold, or a member it has claimed and not yet answered), so
  // it can never revive a finished job, and it publishes nothing: relaxed. Each release comes
  // after its members' responses are written, and is a release operation; the thread whose
  // release brings the count to zero also acquires, so it sees every response (all earlier
  // releases form one release sequence on the counter) when it assembles the reply. unref()
  // pairs the same way, so the job is recycled only after every task is done with it.
  void hold() noexcept { outstanding_.fetch_add(1, std::memory_order_relaxed); }
  void release(std::size_t n = 1) noexcept {
    if (outstanding_.fetch_sub(n, std::memory_order_acq_rel) == n) finish();
  }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) core_.recycle(*this);
  }

  // The reply, defined in session_job_reply.hpp.
  void finish(bool dispatch_ends = false) noexcept;
  void trim() noexcept;
  void answer_out_of_memory() noexcept;
  void assemble();
  // What a job keeps between messages is bounded: an idle session costs little, whatever it
  // served before.
  static constexpr std::size_t kRetainedBytes = ParsedMessage::retained_bytes;

  SessionCore& core_;
  std::unique_ptr<ParsedMessage> message_ = std::make_unique<ParsedMessage>();  // its text, parsed
  std::size_t admitted_ = 0;  // what the message counts in the router's bytes in progress
  Buffer reply_;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::size_t group_count_ = 0;
  std::vector<std::size_t> sweep_;  // the members the executor runs, shared out by turns (start_sweep)
  static constexpr std::size_t kMaxSweepTurns = 8;
  // The start of share q of sweep_, cut into sweep_shares_ shares.
  std::size_t share_begin(std::size_t q) const noexcept { return q * sweep_.size() / sweep_shares_; }
  std::size_t sweep_shares_ = 1;             // set before the turns are handed out
  std::atomic<std::size_t> sweep_owners_{0};  // turns that have taken a share of their own
  std::atomic<std::size_t> sweep_turns_{0};   // sweep tasks not yet run nor dropped
  // How far the turn that owns each share has got (the next member it will look at), each in a
  // cache line of its own: written by that turn only, read by the others when it is their turn
  // to take what is left.
  struct Reached {
    std::atomic<std::size_t> next{0};
    char padding[64 - sizeof(std::atomic<std::size_t>)];
  };
  std::array<Reached, kMaxSweepTurns> sweep_reached_{};
  std::vector<CoalescedCall> coalesced_;  // handed to a coalescer, reused
  std::size_t count_ = 0;
  bool batch_ = false;
  bool lends_thread_ = false;  // the dispatching thread takes a turn at the sweep (start())
  bool unstarted_ = false;     // the message runs nothing (start_unstarted())
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

}  // namespace rpc::detail

// The rest of Job's members, by concern.
#include "session_job_executor.hpp"
#include "session_job_groups.hpp"
#include "session_job_reply.hpp"
