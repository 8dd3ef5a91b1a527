// SPDX-License-Identifier: MIT
// Non-template bodies of session.hpp: per-message jobs, parallel members, cancellation.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "../config.hpp"
#include "../detail/json_number.hpp"
#include "../detail/number_text.hpp"
#include "../detail/parsed_message.hpp"
#include "../detail/session_await.hpp"
#include "../detail/session_core.hpp"
#include "../detail/session_job.hpp"
#include "../detail/session_member.hpp"
#include "../session.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

BATCHRPC_DECL const Executor* running_handler_executor() noexcept {
  return running_handler_of != nullptr ? running_handler_of->executor : nullptr;
}

// An id as a lookup key: strings by their text, numbers by value (1 and 1.0 are one key).
// False for ids that cannot be looked up (null, or not an id at all).
BATCHRPC_DECL bool id_key(const Value& id, std::string& key) {
  key.clear();
  if (id.IsString()) {
    key.reserve(id.GetStringLength() + 1);
    key += 's';
    key.append(id.GetString(), id.GetStringLength());
    return true;
  }
  if (!id.IsNumber()) return false;
  char text[32];
  char* end = text;
  if (id.IsInt64()) {
    end = std::to_chars(text, text + sizeof text, id.GetInt64()).ptr;
  } else if (id.IsUint64()) {
    end = std::to_chars(text, text + sizeof text, id.GetUint64()).ptr;
  } else {
    const double d = id.GetDouble();
    if (std::trunc(d) == d && std::fabs(d) < 9.2e18) {
      end = std::to_chars(text, text + sizeof text, static_cast<std::int64_t>(d)).ptr;
    } else {
      const NumberText t = shortest_text(d);
      end = std::copy(t.bytes, t.bytes + t.size, text);
    }
  }
  key += 'n';
  key.append(text, end);
  return true;
}

// The same key for a request's id (a number's text is read as the parser reads numbers).
BATCHRPC_DECL bool id_key(const RequestId& id, std::string& key) {
  Value value;
  if (id.kind == RequestId::Kind::string) {
    value.SetString(rapidjson::StringRef(id.text.data(), static_cast<rapidjson::SizeType>(id.text.size())));
  } else if (id.kind == RequestId::Kind::number) {
    struct ToValue {
      Value& v;
      bool Int(int i) {
        v.SetInt(i);
        return true;
      }
      bool Uint(unsigned u) {
        v.SetUint(u);
        return true;
      }
      bool Int64(std::int64_t i) {
        v.SetInt64(i);
        return true;
      }
      bool Uint64(std::uint64_t u) {
        v.SetUint64(u);
        return true;
      }
      bool Double(double d) {
        v.SetDouble(d);
        return true;
      }
    } to{value};
    bool rejected = false;
    put_number(to, id.text.data(), id.text.size(), rejected);
  }
  return id_key(value, key);
}

BATCHRPC_DECL void Member::completed(Deferred& slot) {
  auto& self = static_cast<Member&>(slot);
  if (!self.second_arrival()) return;  // the handler is still running: it will write the response
  self.job->guarded(self.index, [&self] {
    WorkspaceLease ws;
    self.job->answered(self.index, *ws);
  });
}

BATCHRPC_DECL void Member::attached(Deferred& slot, const std::shared_ptr<ResponderState>& state) {
  auto& self = static_cast<Member&>(slot);
  self.job->core().await(self, state);
}

BATCHRPC_DECL void await_in(Session& session, Deferred& slot, const std::shared_ptr<ResponderState>& state) {
  SessionAccess::core(session).await(slot, state);
}

BATCHRPC_DECL void unawait_in(Session& session, Deferred& slot) noexcept {
  SessionAccess::core(session).unawait(slot);
}

BATCHRPC_DECL std::size_t answer_waiting_in(Session& session) {
  return SessionAccess::core(session).answer_waiting();
}

BATCHRPC_DECL void handle_unstarted_in(Session& session, std::string&& message, Completion done) {
  SessionAccess::core(session).acquire_job().start_unstarted(message, &message, std::move(done));
}

BATCHRPC_DECL SessionCore::SessionCore(Session& owner_session, const Router& routes, SessionOptions options)
    : owner(owner_session), router(routes), executor(options.executor),
      capabilities(sorted_set(std::move(options.capabilities))),
      unmatched_response(std::move(options.unmatched_response)),
      peer(std::make_shared<PeerChannel>(routes.options().limits.max_response_bytes)) {
  if (executor != nullptr) executor_alive = ExecutorAccess::alive(*executor);
}

BATCHRPC_DECL void SessionCore::answer_cancelled(Member& m) { m.job->cancelled_before_start(m.index); }

// The calling thread's parsed message for the fast path, taken while in use: a handler or
// completion that hands in another message meanwhile gets one of its own.
inline thread_local std::unique_ptr<ParsedMessage> spare_parsed_message;

// The fast path. A message this thread can answer whole and at once (answerable_directly) is
// answered as Router::handle answers it: no job, no members, no table, no lock, nothing kept
// past the call. Any other message goes to a job, with what was parsed here.
BATCHRPC_DECL void SessionCore::handle(std::string_view message, std::string* owned, CompletionRef done,
                                       bool lends_thread) {
  if (!may_answer_directly(message.size())) return handle_in_job(message, owned, done, lends_thread);
  std::unique_ptr<ParsedMessage> parsed = std::move(spare_parsed_message);
  std::optional<WorkspaceLease> lease;
  try {
    if (!parsed) parsed = std::make_unique<ParsedMessage>();
    lease.emplace();
    parsed->take(message, owned);  // in-situ parsing writes into it
  } catch (...) {  // no memory: nothing is touched yet, and a job answers what memory allows
    return handle_in_job(message, owned, done, lends_thread);
  }
  Workspace& ws = **lease;
  bool parsed_whole = false;
  ParseOutcome outcome{};
  bool direct = false;
  try {
    outcome = parsed->parse(router.options().limits);
    parsed_whole = true;
    direct = outcome.status == ParseStatus::ok && answerable_directly(*parsed);
  } catch (...) {  // out of memory
  }
  if (parsed_whole && !direct) {
    Completion later = done.take();  // first: what it throws leaves everything as it was
    // `parsed` is the job's spare now
    acquire_job().start_parsed(parsed, outcome, std::move(later), ws, lends_thread);
  } else {
    begin_direct();
    {
      // A completion must not destroy the session, nor may its destruction (one that owns it):
      // both would wait for themselves.
      const HandlerScope running(*this);
      Buffer& out = ws.output;
      const bool has_reply =
          direct ? RouterAccess::answer_resolved(router, parsed->parser.requests(), parsed->parser.is_batch(),
                                                 parsed->methods, ws, out)
                 : write_out_of_memory(out);  // the parse ran out of memory, as Router::handle answers it
      try {
        parsed->parser.release();
      } catch (...) {  // no memory to keep a larger pool: the next parse makes a fresh one
      }
      done.call(has_reply ? std::optional<std::string_view>(out.view()) : std::nullopt);
    }
    end_direct();
  }
  parsed->trim();
  if (!spare_parsed_message) spare_parsed_message = std::move(parsed);
}

BATCHRPC_DECL void SessionCore::handle_in_job(std::string_view message, std::string* owned,
                                              CompletionRef done, bool lends_thread) {
  Completion later = done.take();  // first: what it throws leaves everything as it was
  acquire_job().start(message, owned, std::move(later), lends_thread);
}

// Without an executor, and only for messages the router's bytes in progress could take now (a
// message answered whole in the call holds nothing past it, so it is checked but not counted,
// as Router::handle is not). Anything else goes to a job, which answers it as a whole.
BATCHRPC_DECL bool SessionCore::may_answer_directly(std::size_t size) const noexcept {
  const Limits& limits = router.options().limits;
  return executor == nullptr && size <= limits.max_message_bytes &&
         RouterAccess::runtime(router).inflight.fits(InflightBytes::cost(limits, size), limits.max_inflight_bytes);
}

// True when this thread can answer the whole parsed message now, with nothing another thread
// could reach meanwhile. Each member must be an invalid Request (not a client's broken answer
// to a request of ours), a call of an unknown method, or a call whose handler takes neither a
// Context nor a Responder (so no cancel, peer or later answer can reach it), of a method that
// needs no capability, is not batch-aware and is not a cancel. In a batch, every call but the
// last must also be inline_only: a member may only skip the cancellation table when what runs
// before it is cheap (see Job::enroll_cancellable). Each member's method is kept in
// `parsed.methods`, for the job when the answer is no.
BATCHRPC_DECL bool SessionCore::answerable_directly(ParsedMessage& parsed) const {
  const std::span<const ParsedRequest> requests = parsed.parser.requests();
  if (requests.empty()) return false;
  parsed.methods.reserve(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const ParsedRequest& p = requests[i];
    if (p.is_response || p.broken_response != nullptr) return false;
    const Method* method = p.invalid != nullptr ? nullptr : RouterAccess::find(router, p.request.method);
    if (method != nullptr) {
      if (method->observes_stop || method->batch || method->runs_first || !method->options.capability.empty()) {
        return false;
      }
      if (i + 1 < requests.size() && !method->options.inline_only) return false;
    }
    parsed.methods.push_back(method);
  }
  return true;
}

BATCHRPC_DECL Job& SessionCore::acquire_job() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty()) {
    spare_.reserve(jobs_.size() + 1);  // recycling then never needs memory
    jobs_.push_back(std::make_unique<Job>(*this));
    spare_.push_back(jobs_.back().get());
  }
  Job* job = spare_.back();
  spare_.pop_back();
  job->in_spares_ = false;
  job->dispatching_ = true;
  ++active_jobs_;
  return *job;
}

BATCHRPC_DECL void SessionCore::dispatch_ended(Job& job) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  job.dispatching_ = false;
  ++dispatched_;
  if (closing_) idle_.notify_all();  // close() answers its members not started
}

BATCHRPC_DECL void SessionCore::reply_sent(Job& job, bool dispatch_ended) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  if (dispatch_ended) {
    job.dispatching_ = false;
    ++dispatched_;
  }
  // Under the lock: a task that lets go of the job meanwhile (recycle) sees it lingering.
  // The reply's own reference. When it is the last one, no task can take or drop another (only
  // the dispatch takes them, and it has ended): a load spares the atomic subtraction.
  const bool last = job.refs_.load(std::memory_order_acquire) == 1 ||
                    job.refs_.fetch_sub(1, std::memory_order_acq_rel) == 1;
  if (last) {
    spare_.push_back(&job);
    job.in_spares_ = true;
    --active_jobs_;
  } else {
    job.lingering_ = true;
    ++lingering_jobs_;
  }
  idle_.notify_all();
}

BATCHRPC_DECL void SessionCore::recycle(Job& job) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  spare_.push_back(&job);
  job.in_spares_ = true;
  --active_jobs_;
  if (job.lingering_) {
    job.lingering_ = false;
    --lingering_jobs_;
  }
  idle_.notify_all();
}

// Jobs and fast-path messages must be seen idle at one moment: a fast-path completion may hand
// in a message that needs a job, and a job's completion one that takes the fast path.
BATCHRPC_DECL void SessionCore::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    idle_.wait(lock, [this] { return replies_sent_locked(); });
    if (idle_locked()) return;
    lock.unlock();
    wait_direct();
    lock.lock();
  }
}

BATCHRPC_DECL std::size_t SessionCore::answer_waiting() {
  std::vector<std::shared_ptr<ResponderState>> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting.reserve(awaiting_.size());
    for (const Awaiting& a : awaiting_) {
      if (auto state = a.responder.lock()) waiting.push_back(std::move(state));
    }
  }
  std::size_t n = 0;
  for (const std::shared_ptr<ResponderState>& state : waiting) {
    if (!state->withdraw()) continue;  // it answered first
    Deferred& slot = state->slot();
    slot.error.emplace(cancelled());
    slot.complete();
    ++n;
  }
  return n;
}

// Members still queued in a job that has handed out all its members (notifications, and
// requests that could not be enrolled, which cancel() does not reach) are answered now, so that
// the session's end never waits for an executor to come round: requests -32800, notifications
// dropped. A job still dispatching (a handler or completion handing in another message) is
// left to the next round of close(); the mutex orders its dispatch before these reads.
BATCHRPC_DECL void SessionCore::drop_unstarted() noexcept {
  std::vector<Member*> queued;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto settled = [](const Job& job) { return !job.in_spares_ && !job.dispatching_; };
    std::size_t members = 0;
    for (const std::unique_ptr<Job>& job : jobs_) members += settled(*job) ? job->count_ : 0;
    try {
      queued.reserve(members);  // nothing below throws once a member is claimed
    } catch (...) {
      return;  // no memory: their tasks answer them when the executor comes round
    }
    for (const std::unique_ptr<Job>& job : jobs_) {
      if (!settled(*job)) continue;
      for (std::size_t i = 0; i < job->count_; ++i) {
        if (job->members_[i]->claim(Member::cancelled)) queued.push_back(job->members_[i].get());
      }
    }
  }
  for (Member* m : queued) answer_cancelled(*m);
}

// Each round cancels what is in flight, answers members not started and requests waiting on a
// Responder, then waits for something new: a reply sent, a Responder attached, or a message
// handed in meanwhile (from a handler or a completion) done dispatching.
BATCHRPC_DECL void SessionCore::close() {
  std::unique_lock<std::mutex> lock(mutex_);
  closing_ = true;
  for (;;) {
    const std::uint64_t attached = attached_;
    const std::uint64_t dispatched = dispatched_;
    lock.unlock();
    cancel(nullptr);
    drop_unstarted();
    answer_waiting();
    lock.lock();
    idle_.wait(lock, [&] { return replies_sent_locked() || attached_ != attached || dispatched_ != dispatched; });
    if (idle_locked()) break;
    if (replies_sent_locked()) {  // a fast-path message is still being answered, and may hand in more
      lock.unlock();
      wait_direct();
      lock.lock();
    }
  }
  lock.unlock();
  // Every reply is sent: executor tasks still to come have nothing to do, and must not touch
  // the session once it is gone.
  gate->shut();
}

}  // namespace rpc::detail

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL Session::Session(const Router& router, SessionOptions options)
    : core_(std::make_unique<detail::SessionCore>(*this, router, std::move(options))) {}

BATCHRPC_DECL Session::~Session() {
  BATCHRPC_CHECK(detail::running_handler_of != core_.get(),
                 "a session was destroyed from one of its own handlers or completions: it would "
                 "wait for that handler or completion, that is for itself");
  // First, so that handlers waiting on their client's answers are told it will not come.
  core_->peer->detach(true);
  core_->close();
}

BATCHRPC_DECL void Session::handle(std::string_view message, Completion done) {
  handle_ref(message, nullptr, detail::CompletionRef::to(std::move(done)));
}

BATCHRPC_DECL void Session::handle_owned(std::string&& message, Completion done) {
  handle_ref(message, &message, detail::CompletionRef::to(std::move(done)));
}

BATCHRPC_DECL void Session::handle_ref(std::string_view message, std::string* owned, detail::CompletionRef done) {
  core_->handle(message, owned, done);
}

BATCHRPC_DECL std::optional<std::string> Session::handle_and_wait(std::string_view message,
                                                                  std::string* owned) {
  BATCHRPC_CHECK(core_->executor == nullptr || detail::running_handler_of != core_.get(),
                 "Session::handle(message) waits for its reply: from a handler of the same "
                 "session with an executor it can wait for ever (use the overload with a "
                 "completion, or Router::handle)");
  // Shared with the completion, which notifies after unlocking (a thread woken under the lock
  // would only sleep again, on the mutex), and so may still be notifying when this thread has
  // seen the reply and returned.
  struct Waiter {
    std::mutex mutex;
    std::condition_variable answered;
    bool ready = false;
    std::optional<std::string> result;
    std::exception_ptr failure;  // the copy of the reply failed (no memory): thrown to the caller
  };
  const auto waiter = std::make_shared<Waiter>();
  const auto done = [waiter](std::optional<std::string_view> reply) {
    {
      std::lock_guard<std::mutex> lock(waiter->mutex);
      try {
        if (reply) waiter->result.emplace(*reply);
      } catch (...) {  // the caller must still be woken: whoever calls this swallows what it throws
        waiter->failure = std::current_exception();
      }
      waiter->ready = true;
    }
    waiter->answered.notify_one();
  };
  // This thread only waits from here: it runs members beside the executor's threads, and looks
  // for the others to end before it lets go (Job::look_for_the_rest).
  core_->handle(message, owned, detail::CompletionRef::to(done), true);
  std::unique_lock<std::mutex> lock(waiter->mutex);
  waiter->answered.wait(lock, [&] { return waiter->ready; });
  if (waiter->failure) std::rethrow_exception(waiter->failure);
  return std::move(waiter->result);
}

BATCHRPC_DECL bool Session::granted(std::string_view capability) const {
  std::lock_guard<std::mutex> lock(core_->capabilities_mutex);
  return std::binary_search(core_->capabilities.begin(), core_->capabilities.end(), capability);
}

BATCHRPC_DECL std::vector<std::string> Session::capabilities() const {
  std::lock_guard<std::mutex> lock(core_->capabilities_mutex);
  return core_->capabilities;
}

BATCHRPC_DECL void Session::grant(std::string_view capability) {
  if (capability.empty()) throw std::invalid_argument("batchrpc: Session::grant needs a capability name");
  std::lock_guard<std::mutex> lock(core_->capabilities_mutex);
  std::vector<std::string>& names = core_->capabilities;
  const auto at = std::lower_bound(names.begin(), names.end(), capability);
  if (at == names.end() || *at != capability) names.emplace(at, capability);
}

BATCHRPC_DECL bool Session::revoke(std::string_view capability) {
  std::lock_guard<std::mutex> lock(core_->capabilities_mutex);
  std::vector<std::string>& names = core_->capabilities;
  const auto at = std::lower_bound(names.begin(), names.end(), capability);
  if (at == names.end() || *at != capability) return false;
  names.erase(at);
  return true;
}

BATCHRPC_DECL const Router& Session::router() const { return core_->router; }

BATCHRPC_DECL bool Session::cancel(const Value& id, CancelledReply reply) {
  std::string key;
  if (!detail::id_key(id, key)) return false;
  const std::string_view view = key;
  return core_->cancel(&view, reply == CancelledReply::none) > 0;
}

BATCHRPC_DECL std::size_t Session::cancel_all() { return core_->cancel(nullptr); }

BATCHRPC_DECL void Session::drain() { core_->wait_idle(); }

BATCHRPC_DECL std::size_t Session::in_flight() const { return core_->in_flight(); }

BATCHRPC_DECL Peer Session::peer() const { return detail::PeerAccess::make(core_->peer); }

BATCHRPC_DECL void Session::attach(Outbound send) { core_->peer->attach(std::move(send)); }

BATCHRPC_DECL void Session::detach() { core_->peer->detach(); }

BATCHRPC_DECL void Session::end_input() { core_->peer->end_input(); }

}  // namespace rpc
