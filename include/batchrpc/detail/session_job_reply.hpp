// SPDX-License-Identifier: MIT
// Part of session_job.hpp (included at its end): once every member is answered, the reply in
// request order, fitted to the reply budget, sent once.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// All members are done: the reply in request order, sent once. `dispatch_ends`: start() is
// finishing the job itself, and has not told the session that its dispatch ended.
inline void Job::finish(bool dispatch_ends) noexcept {
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

inline void Job::trim() noexcept {
  message_->trim();
  for (std::size_t i = 0; i < count_; ++i) {
    if (members_[i]->text.capacity() > kRetainedBytes / 4) members_[i]->text.release();
    if (members_[i]->value.capacity() > kRetainedBytes / 4) members_[i]->value.release();
  }
}

// A reply that needs no memory to build (reply_ keeps its capacity from earlier messages).
inline void Job::answer_out_of_memory() noexcept {
  whole_ = true;
  write_out_of_memory(reply_);  // when not even that fits, nothing at all is sent
}

inline void Job::assemble() {
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

}  // namespace rpc::detail
