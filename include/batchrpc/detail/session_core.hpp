// SPDX-License-Identifier: MIT
// A session's shared state: its requests in flight (for cancellation), the requests waiting on a
// Responder, and its jobs.
//
// The one rule here: no user code runs while `mutex_` is held. Stop callbacks run inside
// request_stop(), completions when a member is answered, and both may come straight back into
// the session (a stop callback that answers its Responder completes its member, which may
// finish its message), so the lock only ever guards the table and the lists, and everything that
// can reach user code happens after it is released.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../executor.hpp"
#include "../router.hpp"
#include "../session.hpp"
#include "checks.hpp"
#include "chrono.hpp"
#include "completion_ref.hpp"
#include "handler_scope.hpp"
#include "peer_channel.hpp"
#include "session_member.hpp"
#include "task_gate.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class Job;
class SessionCore;
struct ParsedMessage;

// Defined in impl/session.ipp: an id as a lookup key (strings by text, numbers by value, so
// that 1 and 1.0 are one key); false for ids that cannot be looked up.
BATCHRPC_DECL bool id_key(const Value& id, std::string& key);
BATCHRPC_DECL bool id_key(const RequestId& id, std::string& key);

class SessionCore {
 public:
  // Defined in impl/session.ipp, where Job is complete: from C++23 on, destroying the jobs
  // (as a constructor that throws does) is instantiated with the constructor.
  BATCHRPC_DECL SessionCore(Session& owner_session, const Router& routes, SessionOptions options);

  // True when the session's executor has been destroyed (a lifetime bug the session survives).
  [[nodiscard]] bool executor_gone() const {
    return executor_alive != nullptr && !executor_alive->load(std::memory_order_acquire);
  }

  // Handles one message (Session::handle); `owned`, when given, holds `message` and is taken
  // over. The calling thread answers it at once when nothing else could reach it meanwhile
  // (answerable_directly), else a job does. With `lends_thread` (a caller that will only wait
  // for the reply), the calling thread also runs the members the executor would, beside it.
  // `done` is called here, or taken (CompletionRef::take) before anything else is done with
  // the message, so that a failure to take it throws with nothing changed.
  BATCHRPC_DECL void handle(std::string_view message, std::string* owned, CompletionRef done,
                            bool lends_thread = false);
  // Hands `message` to a job, as `handle` does with what it does not answer at once.
  BATCHRPC_DECL void handle_in_job(std::string_view message, std::string* owned, CompletionRef done,
                                   bool lends_thread);

  // A job for the next message. Jobs are the session's until it ends; a job is active from
  // here until its reply is sent and its executor tasks are done with it (recycle).
  BATCHRPC_DECL Job& acquire_job();
  // `job` has handed out all its members (each is now answered, running, or queued).
  BATCHRPC_DECL void dispatch_ended(Job& job) noexcept;
  // `job` sent its reply; it is recycled at once unless executor tasks still hold it. With
  // `dispatch_ended`, its dispatch ended too (and dispatch_ended() was not called).
  BATCHRPC_DECL void reply_sent(Job& job, bool dispatch_ended = false) noexcept;
  // The last executor task holding `job` is done with it, after its reply was sent.
  BATCHRPC_DECL void recycle(Job& job) noexcept;
  // Until every message handed in so far has sent its reply.
  BATCHRPC_DECL void wait_idle();

  // Enrols the members of one message prepared for it (Member::to_enroll), under one lock:
  // requests with an id are enrolled from before they start until they complete. A member
  // that finds no memory runs all the same; it just cannot be cancelled.
  void enroll(std::span<const std::unique_ptr<Member>> members) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Member>& member : members) {
      Member& m = *member;
      if (!m.to_enroll) continue;
      m.to_enroll = false;
      try {
        if (m.node.empty()) {
          in_flight_.emplace(std::string_view(m.key), &m);
        } else {
          m.node.key() = m.key;
          m.node.mapped() = &m;
          in_flight_.insert(std::move(m.node));
        }
        m.enrolled = true;
      } catch (...) {  // out of memory: left out of the table
      }
    }
  }
  // Takes the members of a message out of the table once all of them are done, under one
  // lock: a member leaves no sooner, but a cancel passes over the members already done (see
  // cancel()), so that is as if each had left as it finished, without a lock per member.
  void withdraw(std::span<const std::unique_ptr<Member>> members) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::unique_ptr<Member>& member : members) {
      Member& m = *member;
      if (!m.enrolled) continue;
      for (auto [it, end] = in_flight_.equal_range(std::string_view(m.key)); it != end; ++it) {
        if (it->second == &m) {
          m.node = in_flight_.extract(it);
          break;
        }
      }
      m.enrolled = false;
    }
  }

  // Signals the requests named `key` (all of them, when null); those still queued are answered
  // -32800 at once, without waiting for a thread to pick them up; with `unanswered`, their
  // responses are never sent. Returns how many requests this call cancelled.
  std::size_t cancel(const std::string_view* key, bool unanswered = false) {
    // Copies of the stop sources: a member may complete and be reused once the lock is
    // released, and signalling its old stop state then reaches only that old request.
    std::vector<std::stop_source> signal;
    std::vector<Member*> queued;  // claimed here, so nobody else touches them until answered
    std::size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto [first, last] = key == nullptr ? std::pair(in_flight_.begin(), in_flight_.end())
                                                : in_flight_.equal_range(*key);
      const auto count = static_cast<std::size_t>(std::distance(first, last));
      signal.reserve(count);  // nothing below throws once a member is claimed
      queued.reserve(count);
      for (auto it = first; it != last; ++it) {
        Member* m = it->second;
        if (m->phase.load(std::memory_order_acquire) == Member::done) continue;  // answered: as if withdrawn
        if (unanswered) m->unanswered.store(true, std::memory_order_relaxed);
        if (m->cancel_asked.exchange(true, std::memory_order_acq_rel)) continue;  // cancelled before
        ++n;
        if (m->stop.stop_possible()) signal.push_back(m->stop);
        if (m->claim(Member::cancelled)) queued.push_back(m);
      }
    }
    for (std::stop_source& s : signal) s.request_stop();  // stop callbacks run here
    for (Member* m : queued) answer_cancelled(*m);
    return n;
  }

  // The requests a cancel could still reach.
  std::size_t in_flight() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<std::size_t>(std::count_if(in_flight_.begin(), in_flight_.end(), [](const auto& entry) {
      return entry.second->phase.load(std::memory_order_acquire) != Member::done;
    }));
  }

  // A Responder now answers for `slot` (a request's, or a tool's inside tools/call); the
  // session remembers it until it has answered, so that close() can answer for it.
  void await(Deferred& slot, const std::shared_ptr<ResponderState>& state) {
    std::lock_guard<std::mutex> lock(mutex_);
    awaiting_.push_back({&slot, state});
    slot.awaiting = awaiting_.size() - 1;
    ++attached_;
    if (closing_) idle_.notify_all();  // close() is waiting: there is one more to answer
  }
  // `slot` has been answered: forgotten before whoever waits for it may reuse or destroy it.
  void unawait(Deferred& slot) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slot.awaiting == Deferred::not_awaiting) return;
    if (slot.awaiting != awaiting_.size() - 1) {  // the last one takes its place
      awaiting_[slot.awaiting] = std::move(awaiting_.back());
      awaiting_[slot.awaiting].slot->awaiting = slot.awaiting;
    }
    awaiting_.pop_back();
    slot.awaiting = Deferred::not_awaiting;
  }

  // Answers -32800 for the requests still waiting on a Responder (which then refuses its own
  // answer); returns how many.
  BATCHRPC_DECL std::size_t answer_waiting();

  // The session's end: cancels everything (members not started are answered -32800, or
  // dropped if they are notifications), answers -32800 for the requests still waiting on a
  // Responder, waits for the handlers still running, and shuts the task gate.
  BATCHRPC_DECL void close();

  Session& owner;
  const Router& router;
  Executor* executor;
  std::shared_ptr<const std::atomic<bool>> executor_alive;  // null without an executor
  // Sorted, without repeats; read and changed under `capabilities_mutex` (a plain mutex:
  // libstdc++'s std::atomic<std::shared_ptr> draws ThreadSanitizer reports, and only methods
  // that need a capability look here).
  std::vector<std::string> capabilities;
  mutable std::mutex capabilities_mutex;

  static std::vector<std::string> sorted_set(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }
  std::function<void(const RequestId&)> unmatched_response;
  const std::shared_ptr<PeerChannel> peer;  // the way to the client, shared with Peer handles
  const std::shared_ptr<TaskGate> gate = std::make_shared<TaskGate>();  // shared with executor tasks

 private:
  BATCHRPC_DECL static void answer_cancelled(Member& m);
  BATCHRPC_DECL bool may_answer_directly(std::size_t size) const noexcept;
  BATCHRPC_DECL bool answerable_directly(ParsedMessage& parsed) const;
  // Messages on the fast path, from their first handler call until their completion has
  // returned, are what wait_idle() and close() wait for besides the jobs. Ending one is the
  // count's decrement and nothing after it: whoever sees the count at zero may destroy the
  // session at once, so no notification follows it, and waiters look again instead, backing
  // off from a yield to a millisecond's sleep (fast-path messages are short, and waiting for
  // them rare).
  void begin_direct() noexcept { answering_directly_.fetch_add(1); }
  void end_direct() noexcept { answering_directly_.fetch_sub(1); }
  void wait_direct() const noexcept {
    std::chrono::microseconds pause{0};
    while (answering_directly_.load() != 0) {
      if (pause.count() == 0) {
        std::this_thread::yield();
        pause = std::chrono::microseconds(20);
      } else {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(1000));
      }
    }
  }
  // Under mutex_: no job nor fast-path message is in progress.
  bool idle_locked() const noexcept { return replies_sent_locked() && answering_directly_.load() == 0; }
  BATCHRPC_DECL void drop_unstarted() noexcept;
  bool replies_sent_locked() const { return active_jobs_ == lingering_jobs_; }

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::vector<std::unique_ptr<Job>> jobs_;  // every job made, until the session ends
  std::vector<Job*> spare_;                 // the idle ones (room for all jobs_ is reserved)
  std::size_t active_jobs_ = 0;
  std::size_t lingering_jobs_ = 0;  // active, reply sent, waiting for executor tasks to let go
  InFlight in_flight_;
  // A slot a Responder answers for, not yet answered, and that Responder's state.
  struct Awaiting {
    Deferred* slot;
    std::weak_ptr<ResponderState> responder;
  };
  std::vector<Awaiting> awaiting_;
  std::uint64_t attached_ = 0;     // Responders attached so far
  std::uint64_t dispatched_ = 0;   // messages whose members were all handed out, so far
  bool closing_ = false;
  std::atomic<std::size_t> answering_directly_{0};
};

// A session's core, for what runs inside it (a tool's Responder inside tools/call).
struct SessionAccess {
  static SessionCore& core(Session& session) noexcept { return *session.core_; }
};

}  // namespace rpc::detail
