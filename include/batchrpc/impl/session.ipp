// SPDX-License-Identifier: MIT
// Non-template bodies of session.hpp: per-message jobs, parallel members, cancellation.
#pragma once

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_map>
#include <vector>

#include "../detail/call.hpp"
#include "../detail/deferred.hpp"
#include "../detail/json_number.hpp"
#include "../detail/message_parser.hpp"
#include "../detail/number_text.hpp"
#include "../detail/reply.hpp"
#include "../detail/request.hpp"
#include "../detail/workspace.hpp"
#include "../session.hpp"

namespace rpc::detail {

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
      bool Int(int i) { return v.SetInt(i), true; }
      bool Uint(unsigned u) { return v.SetUint(u), true; }
      bool Int64(std::int64_t i) { return v.SetInt64(i), true; }
      bool Uint64(std::uint64_t u) { return v.SetUint64(u), true; }
      bool Double(double d) { return v.SetDouble(d), true; }
    } to{value};
    bool rejected = false;
    put_number(to, id.text.data(), id.text.size(), rejected);
  }
  return id_key(value, key);
}

class Job;

class Member;
// The requests that can be cancelled, by id key.
using InFlight = std::unordered_multimap<std::string_view, Member*>;

// One member of a message (a singleton is a message of one member).
class Member final : public Deferred {
 public:
  Job* job = nullptr;
  std::size_t index = 0;
  Request request;
  const Method* method = nullptr;  // set while the member still has to run
  Buffer text;                     // its response; empty: none
  std::stop_source stop{std::nostopstate};
  std::string key;
  bool enrolled = false;
  InFlight::node_type node;  // its entry in the in-flight table while not enrolled, kept for reuse
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t group = none;  // its group in the job (batch-aware dispatch), or none
  // The handler returning and its Responder answering can happen in either order, on two
  // threads; the second of the two writes the response (the first may still be writing).
  std::atomic<int> arrivals{0};
  bool second_arrival() { return arrivals.fetch_add(1) == 1; }
  // queued -> running when a thread starts it, queued -> cancelled when a cancel gets there
  // first (then the canceller answers it at once); whoever moves it from queued owns it.
  enum Phase : int { queued, running, cancelled };
  std::atomic<int> phase{queued};
  bool claim(Phase to) {
    int expected = queued;
    return phase.compare_exchange_strong(expected, to);
  }

 private:
  void on_complete() override;
};

class SessionCore {
 public:
  SessionCore(Session& owner, const Router& router, SessionOptions options)
      : owner(owner), router(router), executor(options.executor),
        capabilities(std::move(options.capabilities)) {
    std::sort(capabilities.begin(), capabilities.end());
    capabilities.erase(std::unique(capabilities.begin(), capabilities.end()), capabilities.end());
  }

  BATCHRPC_DECL Job& acquire_job();
  BATCHRPC_DECL void recycle(Job& job);
  BATCHRPC_DECL void wait_idle();

  // Requests with an id are enrolled from before they start until they complete.
  // Each request gets a stop state of its own (a token a finished handler kept must not see
  // a later request's cancel); the table entry is reused from request to request.
  void enroll(Member& m) {
    if (!id_key(m.request.id, m.key)) return;
    m.stop = std::stop_source();
    std::lock_guard lock(mutex_);
    if (m.node.empty()) {
      in_flight_.emplace(std::string_view(m.key), &m);
    } else {
      m.node.key() = m.key;
      m.node.mapped() = &m;
      in_flight_.insert(std::move(m.node));
    }
    m.enrolled = true;
  }
  void withdraw(Member& m) {
    if (!m.enrolled) return;
    std::lock_guard lock(mutex_);
    for (auto [it, end] = in_flight_.equal_range(std::string_view(m.key)); it != end; ++it) {
      if (it->second == &m) {
        m.node = in_flight_.extract(it);
        break;
      }
    }
    m.enrolled = false;
  }
  // Signals the requests named `key` (all of them, when null); those still queued are
  // answered -32800 right away, without waiting for a thread to pick them up.
  std::size_t cancel(const std::string_view* key) {
    std::vector<Member*> queued;
    std::size_t n = 0;
    {
      std::lock_guard lock(mutex_);
      const auto stop = [&](Member* m) {
        if (!m->stop.request_stop()) return;
        ++n;
        if (m->claim(Member::cancelled)) queued.push_back(m);
      };
      if (key == nullptr) {
        for (auto& [k, m] : in_flight_) stop(m);
      } else {
        for (auto [it, end] = in_flight_.equal_range(*key); it != end; ++it) stop(it->second);
      }
    }
    for (Member* m : queued) answer_cancelled(*m);  // outside the lock: it withdraws the member
    return n;
  }
  std::size_t in_flight() const {
    std::lock_guard lock(mutex_);
    return in_flight_.size();
  }

  Session& owner;
  const Router& router;
  Executor* executor;
  std::vector<std::string> capabilities;

 private:
  BATCHRPC_DECL static void answer_cancelled(Member& m);

  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::size_t active_jobs_ = 0;
  std::vector<std::unique_ptr<Job>> spare_;
  InFlight in_flight_;
};

// Everything one message needs until its reply is sent. Reused by the session afterwards.
class Job {
 public:
  explicit Job(SessionCore& core) : core_(core) {}

  // Parses the message and starts its members; returns once they are running or done.
  void start(std::string_view message, Completion done) {
    done_ = std::move(done);
    whole_ = false;
    count_ = 0;
    outstanding_.store(1);  // the dispatcher's own hold, released at the end
    refs_.store(1);         // dropped once the reply is sent
    WorkspaceLease ws;
    try {
      dispatch(message, *ws);
    } catch (...) {  // out of memory: answer the message as a whole rather than not at all
      reply_.clear();
      reply_.append(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}})");
      whole_ = true;
    }
    release();
  }

 private:
  friend class Member;
  friend class SessionCore;

  const RouterOptions& options() const { return core_.router.options(); }

  void dispatch(std::string_view message, Workspace& ws) {
    const Limits& limits = options().limits;
    reply_.clear();
    if (message.size() > limits.max_message_bytes) {
      return whole(ws, ErrorCode::message_too_large, MaxData{limits.max_message_bytes});
    }
    input_.assign(message.data(), message.size());
    const ParseOutcome parsed = parser_.parse_requests(input_.data(), input_.size(), limits);
    switch (parsed.status) {
      case ParseStatus::ok:
        break;
      case ParseStatus::syntax_error:
        return whole(ws, ErrorCode::parse_error, [&](ResultWriter& w) {
          w.start_object();
          w.key("offset");
          w.unsigned_integer(parsed.offset);
          w.key("reason");
          w.string(parsed.reason);
          w.end_object();
        });
      case ParseStatus::too_deep:
        return whole(ws, ErrorCode::nesting_too_deep, MaxData{limits.max_depth});
      case ParseStatus::batch_too_large:
        whole_ = true;
        write_error(reply_, ws.writer, null_id, static_cast<int>(ErrorCode::invalid_params),
                    "Batch too large", MaxData{limits.max_batch});
        return;
    }
    const std::span<const ParsedRequest> requests = parser_.requests();
    batch_ = parser_.is_batch();
    if (requests.empty()) return whole(ws, ErrorCode::invalid_request, ReasonData{"empty batch"});
    count_ = requests.size();
    while (members_.size() < count_) members_.push_back(std::make_unique<Member>());
    outstanding_.fetch_add(count_);

    // Every member is checked and enrolled before any runs, so a cancel in this batch finds
    // the members it names still queued.
    for (std::size_t i = 0; i < count_; ++i) {
      if (!prepare(i, requests[i], ws)) member_done(i);
    }
    for (std::size_t i = 0; i < count_; ++i) {
      Member& m = *members_[i];
      if (m.method != nullptr && m.method->options.runs_first) run(i, ws);
    }
    plan_groups();
    for (std::size_t i = 0; i < count_; ++i) {
      Member& m = *members_[i];
      if (m.method == nullptr || m.method->options.runs_first) continue;
      if (m.group != Member::none) {  // answered with its group, started at its first member
        if (groups_[m.group]->members.front() == i) start_group(m.group, ws);
        continue;
      }
      if (core_.executor != nullptr && !m.method->options.inline_only) {
        // The task keeps the job (not its reply) alive: a member cancelled while queued is
        // answered at once, and the reply need not wait for the task to come round.
        refs_.fetch_add(1);
        core_.executor->execute([this, i] {
          {
            WorkspaceLease own;
            run_task(i, *own);
          }
          unref();
        });
      } else {
        run(i, ws);
      }
    }
  }

  // Batch-aware dispatch: the members calling one batched method (two or more of them) form a
  // group, answered by one call of the method's batch handler (Router::add_batched).
  struct Group {
    const Method* method = nullptr;
    std::vector<std::size_t> members;
    std::vector<GroupMember> calls;
    GroupScratch scratch;
  };

  void plan_groups() {
    group_count_ = 0;
    if (count_ < 2) return;
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.method == nullptr || !m.method->batch || m.method->options.runs_first) continue;
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
      if (groups_[g]->members.size() < 2) continue;  // a lone call runs as usual
      for (const std::size_t i : groups_[g]->members) members_[i]->group = g;
    }
  }

  void start_group(std::size_t g, Workspace& ws) {
    if (core_.executor != nullptr && !groups_[g]->method->options.inline_only) {
      refs_.fetch_add(1);  // as run()'s tasks: keeps the job, not its reply
      core_.executor->execute([this, g] {
        {
          WorkspaceLease own;
          run_group(g, *own);
        }
        unref();
      });
    } else {
      run_group(g, ws);
    }
  }

  void run_group(std::size_t g, Workspace& ws) {
    Group& group = *groups_[g];
    group.calls.clear();
    bool claimed = false;
    for (const std::size_t i : group.members) {
      Member& m = *members_[i];
      if (!m.claim(Member::running)) continue;  // cancelled while queued, and answered already
      if (!claimed) hold();  // a member not yet done keeps the reply from being sent meanwhile
      claimed = true;
      if (m.stop.stop_requested()) {  // cancelled just as it started: answered without running
        if (!m.request.id.is_notification()) {
          write_error(m.text, ws.writer, m.request.id, ErrorCode::request_cancelled);
        }
        member_done(i);
        continue;
      }
      m.reset(m.stop.get_token());
      group.calls.push_back({&m.request, &m, m.stop.get_token()});
    }
    if (!claimed) return;
    if (!group.calls.empty()) {
      call_group(options(), *group.method, {&core_.router, &core_.owner, nullptr}, group.calls,
                 group.scratch);
    }
    for (const GroupMember& call : group.calls) {
      Member& m = static_cast<Member&>(*call.slot);
      write_deferred(options(), m.request, m, ws.writer, m.text);
      member_done(m.index);
    }
    release();
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
    m.stop = std::stop_source(std::nostopstate);
    // Relaxed: other threads reach the member only through the in-flight table's mutex or the
    // executor's queue, which order this store before them.
    m.phase.store(Member::queued, std::memory_order_relaxed);
    if (parsed.invalid != nullptr) {
      write_error(m.text, ws.writer, null_id, ErrorCode::invalid_request, ReasonData{parsed.invalid});
      return false;
    }
    m.request = parsed.request;
    const Method* method = core_.router.find(m.request.method);
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
    if (method->options.runs_first) return true;  // a cancel is not itself cancellable
    try {
      core_.enroll(m);
    } catch (...) {  // out of memory: the request runs, it just cannot be cancelled
    }
    return true;
  }

  // Runs member `i` on the dispatching thread, whose own hold keeps the job until dispatch
  // returns.
  void run(std::size_t i, Workspace& ws) {
    if (!members_[i]->claim(Member::running)) return;  // cancelled while queued, and answered
    call(i, ws);
  }

  // Runs member `i` on an executor thread.
  void run_task(std::size_t i, Workspace& ws) {
    if (!members_[i]->claim(Member::running)) return;  // cancelled while queued, and answered
    hold();  // a Responder answering inside the call must not finish the job under our feet
    call(i, ws);
    release();
  }

  // Member `i`, claimed, is answered -32800 if cancelled meanwhile, else its handler is called.
  void call(std::size_t i, Workspace& ws) {
    Member& m = *members_[i];
    if (m.stop.stop_requested()) {  // cancelled just as it started: answered without running
      if (!m.request.id.is_notification()) {
        write_error(m.text, ws.writer, m.request.id, ErrorCode::request_cancelled);
      }
      member_done(i);
    } else {
      m.reset(m.stop.get_token());
      m.arrivals.store(0, std::memory_order_relaxed);  // the Responder is handed on after this
      Context ctx(m.request.method, m.request.id, m.stop.get_token(),
                  {&core_.router, &core_.owner, &m});
      if (call_method(options(), *m.method, m.request, ctx, ws.writer, m.text)) {
        member_done(i);
      } else if (m.second_arrival()) {  // the Responder has answered already
        answered(i, ws);
      }
    }
  }

  // Member `i` was cancelled while queued: it never runs, and is answered now.
  void cancelled_before_start(std::size_t i) {
    Member& m = *members_[i];
    if (!m.request.id.is_notification()) {
      WorkspaceLease ws;
      write_error(m.text, ws->writer, m.request.id, ErrorCode::request_cancelled);
    }
    member_done(i);
  }

  // Member `i` has both returned from its handler and been answered by its Responder.
  void answered(std::size_t i, Workspace& ws) {
    Member& m = *members_[i];
    write_deferred(options(), m.request, m, ws.writer, m.text);
    member_done(i);
  }

  void member_done(std::size_t i) {
    core_.withdraw(*members_[i]);
    release();
  }
  void hold() { outstanding_.fetch_add(1); }
  void release() {
    if (outstanding_.fetch_sub(1) == 1) finish();
  }
  void unref() {
    if (refs_.fetch_sub(1) == 1) core_.recycle(*this);
  }

  // All members are done: the reply in request order, sent once.
  void finish() {
    if (!whole_) assemble();
    parser_.release();
    if (input_.capacity() > (std::size_t{1} << 20)) std::string().swap(input_);
    Completion done = std::move(done_);
    try {
      if (reply_.empty()) {
        done(std::nullopt);
      } else {
        done(reply_.view());
      }
    } catch (...) {  // the transport's callback failing must not stop the session
    }
    unref();
  }

  void assemble() {
    reply_.clear();
    ResultWriter w(reply_);  // only used to write a -32003 in place of an oversized response
    const Limits& limits = options().limits;
    if (!batch_) {
      const Member& m = *members_[0];
      reply_.append(m.text.view());
      if (!reply_.empty()) fit_response(limits, m.request.id, 0, w, reply_);
      return;
    }
    reply_.append('[');
    bool any = false;
    for (std::size_t i = 0; i < count_; ++i) {
      const Member& m = *members_[i];
      if (m.text.empty()) continue;
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
  std::string input_;
  MessageParser parser_;
  Buffer reply_;
  std::vector<std::unique_ptr<Member>> members_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::size_t group_count_ = 0;
  std::size_t count_ = 0;
  bool batch_ = false;
  bool whole_ = false;  // reply_ answers the message as a whole (no members ran)
  std::atomic<std::size_t> outstanding_{0};  // members not done, plus holds: the reply waits
  std::atomic<std::size_t> refs_{0};         // queued tasks, plus one until the reply is sent
  Completion done_;
};

BATCHRPC_DECL void SessionCore::answer_cancelled(Member& m) { m.job->cancelled_before_start(m.index); }

BATCHRPC_DECL void Member::on_complete() {
  if (!second_arrival()) return;  // the handler is still running: it will write the response
  WorkspaceLease ws;
  job->answered(index, *ws);
}

BATCHRPC_DECL Job& SessionCore::acquire_job() {
  std::lock_guard lock(mutex_);
  ++active_jobs_;
  if (spare_.empty()) return *std::make_unique<Job>(*this).release();  // owned by spare_ once recycled
  Job* job = spare_.back().release();
  spare_.pop_back();
  return *job;
}

BATCHRPC_DECL void SessionCore::recycle(Job& job) {
  std::lock_guard lock(mutex_);
  spare_.emplace_back(&job);
  --active_jobs_;
  idle_.notify_all();
}

BATCHRPC_DECL void SessionCore::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return active_jobs_ == 0; });
}

}  // namespace rpc::detail

namespace rpc {

BATCHRPC_DECL Session::Session(const Router& router, SessionOptions options)
    : core_(std::make_unique<detail::SessionCore>(*this, router, std::move(options))) {}

BATCHRPC_DECL Session::~Session() {
  core_->cancel(nullptr);
  core_->wait_idle();
}

BATCHRPC_DECL void Session::handle(std::string_view message, Completion done) {
  core_->acquire_job().start(message, std::move(done));
}

BATCHRPC_DECL std::optional<std::string> Session::handle(std::string_view message) {
  std::mutex mutex;
  std::condition_variable answered;
  bool ready = false;
  std::optional<std::string> result;
  handle(message, [&](std::optional<std::string_view> reply) {
    std::lock_guard lock(mutex);
    if (reply) result.emplace(*reply);
    ready = true;
    answered.notify_all();  // under the lock: we are destroyed as soon as it is released
  });
  std::unique_lock lock(mutex);
  answered.wait(lock, [&] { return ready; });
  return result;
}

BATCHRPC_DECL bool Session::granted(std::string_view capability) const {
  return std::binary_search(core_->capabilities.begin(), core_->capabilities.end(), capability);
}

BATCHRPC_DECL const std::vector<std::string>& Session::capabilities() const {
  return core_->capabilities;
}

BATCHRPC_DECL const Router& Session::router() const { return core_->router; }

BATCHRPC_DECL bool Session::cancel(const Value& id) {
  std::string key;
  if (!detail::id_key(id, key)) return false;
  const std::string_view view = key;
  return core_->cancel(&view) > 0;
}

BATCHRPC_DECL std::size_t Session::cancel_all() { return core_->cancel(nullptr); }

BATCHRPC_DECL void Session::drain() { core_->wait_idle(); }

BATCHRPC_DECL std::size_t Session::in_flight() const { return core_->in_flight(); }

}  // namespace rpc
