// SPDX-License-Identifier: MIT
// Non-template bodies of peer.hpp and detail/peer_channel.hpp: the server's own messages to
// its client, and the client's answers routed back by id.
#pragma once

#include <charconv>
#include <exception>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "../detail/error_object.hpp"
#include "../detail/params_text.hpp"
#include "../detail/peer_call.hpp"
#include "../detail/peer_channel.hpp"
#include "../detail/peer_timer.hpp"
#include "../peer.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

inline constexpr std::string_view kPeerIdPrefix = "srv-";

// The server's message: a request when `id` is given, else a notification.
inline std::string peer_message(std::string_view method, const Json& params, std::string_view id) {
  const std::string_view structured = checked_params(method, params);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("jsonrpc");
  writer.String("2.0");
  if (!id.empty()) {
    writer.Key("id");
    writer.String(id.data(), static_cast<rapidjson::SizeType>(id.size()));
  }
  writer.Key("method");
  writer.String(method.data(), static_cast<rapidjson::SizeType>(method.size()));
  if (!structured.empty()) {
    writer.Key("params");
    writer.RawValue(structured.data(), structured.size(),
                    structured.front() == '[' ? rapidjson::kArrayType : rapidjson::kObjectType);
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// The number in an id of ours (`srv-N`); 0 for any other id.
inline std::uint64_t peer_id_number(const RequestId& id) {
  if (id.kind != RequestId::Kind::string || !id.text.starts_with(kPeerIdPrefix)) return 0;
  const std::string_view digits = id.text.substr(kPeerIdPrefix.size());
  std::uint64_t n = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.front() == '0') return 0;
  return n;
}

// The client's error object as an rpc::Error; a malformed one is reported as such.
inline Error client_error(const Value& e) {
  if (is_error_object(e)) return error_from_object(e);
  return Error(ErrorCode::internal_error,
               "the client answered with a malformed error object (it needs an integer \"code\" and a string \"message\")",
               to_json(e));
}

// Runs a reply handler; what it throws is dropped (it may run on a transport's thread).
inline void deliver(ReplyHandler& done, Reply reply) noexcept {
  try {
    done(std::move(reply));
  } catch (...) {
  }
}

// When a request with `timeout` expires; the zero time point for none: a timeout that is
// zero, negative, or too far off to be reached (`milliseconds::max()`, which would overflow
// the clock).
inline PeerTimer::Clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  using Clock = PeerTimer::Clock;
  if (timeout <= std::chrono::milliseconds::zero()) return {};
  const Clock::time_point now = Clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now);
  return timeout >= room ? Clock::time_point{} : now + timeout;
}

inline Reply unavailable_reply(const char* why) { return Reply(Error(ErrorCode::client_unavailable, why)); }

BATCHRPC_DECL void PeerChannel::attach(Outbound send) {
  auto shared = std::make_shared<const Outbound>(std::move(send));
  std::lock_guard<std::mutex> lock(mutex_);
  if (ended_) return;
  writer_ = std::move(shared);
  input_ended_ = false;
}

BATCHRPC_DECL PeerTimer& PeerTimer::instance() {
  static PeerTimer timer;
  return timer;
}

BATCHRPC_DECL void PeerTimer::run(std::stop_token stop) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop.stop_requested()) {
    if (due_.empty()) {
      wake_.wait(lock, stop, [this] { return !due_.empty(); });
      continue;
    }
    const Clock::time_point next = due_.begin()->first;
    if (Clock::now() < next) {
      wake_.wait_until(lock, stop, next, [&] { return !due_.empty() && due_.begin()->first < next; });
      continue;
    }
    std::vector<Entry> expired;
    const auto end = due_.upper_bound(Clock::now());
    for (auto it = due_.begin(); it != end; ++it) expired.push_back(std::move(it->second));
    due_.erase(due_.begin(), end);
    lock.unlock();
    for (Entry& entry : expired) {
      if (const std::shared_ptr<PeerChannel> channel = entry.channel.lock()) channel->expire(entry.n);
    }
    expired.clear();  // the last reference to a channel may go here, outside the lock
    lock.lock();
  }
}

BATCHRPC_DECL void PeerChannel::detach(bool forever) {
  std::unordered_map<std::uint64_t, Waiting> waiting;
  std::shared_ptr<const Outbound> writer;  // released outside the locks
  {
    const std::unique_lock<std::shared_mutex> no_calls(calling_);  // waits for the writer's calls to return
    std::lock_guard<std::mutex> lock(mutex_);
    if (forever) ended_ = true;
    writer = std::move(writer_);
    waiting.swap(waiting_);
  }
  for (auto& [n, entry] : waiting) {
    if (entry.due != PeerTimer::Clock::time_point{}) PeerTimer::instance().remove(entry.due, this, n);
    deliver(entry.done, unavailable_reply(forever ? "the session ended before the client answered"
                                                  : "the connection to the client ended before it answered"));
  }
}

BATCHRPC_DECL void PeerChannel::end_input() {
  std::unordered_map<std::uint64_t, Waiting> waiting;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    input_ended_ = true;
    waiting.swap(waiting_);
  }
  for (auto& [n, entry] : waiting) {
    if (entry.due != PeerTimer::Clock::time_point{}) PeerTimer::instance().remove(entry.due, this, n);
    deliver(entry.done, unavailable_reply("the client's input ended before it answered"));
  }
}

BATCHRPC_DECL bool PeerChannel::connected() {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_ != nullptr;
}

BATCHRPC_DECL std::shared_ptr<const Outbound> PeerChannel::writer() {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_;
}

BATCHRPC_DECL bool PeerChannel::send(std::string message) {
  if (message.size() > max_bytes_) return false;
  const std::shared_lock<std::shared_mutex> calling(calling_);
  const std::shared_ptr<const Outbound> write = writer();
  if (write == nullptr) return false;
  try {
    return (*write)(std::move(message));
  } catch (...) {
    return false;  // the transport's writer failed: as if the connection were gone
  }
}

BATCHRPC_DECL ReplyHandler PeerChannel::take(std::uint64_t n) {
  Waiting entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = waiting_.find(n);
    if (found == waiting_.end()) return {};
    entry = std::move(found->second);
    waiting_.erase(found);
  }
  if (entry.due != PeerTimer::Clock::time_point{}) PeerTimer::instance().remove(entry.due, this, n);
  return std::move(entry.done);
}

BATCHRPC_DECL void PeerChannel::expire(std::uint64_t n) {
  ReplyHandler done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = waiting_.find(n);
    if (found == waiting_.end()) return;  // answered meanwhile
    done = std::move(found->second.done);
    waiting_.erase(found);
  }
  deliver(done, Reply(Error(ErrorCode::client_timeout, "the client did not answer in time")));
}

BATCHRPC_DECL bool PeerChannel::notify(std::string_view method, const Json& params) {
  return send(peer_message(method, params, {}));
}

// Why a request could not be sent: the client's input ended, or there is no client.
inline const char* not_sendable_reason(bool input_ended) {
  return input_ended ? "the client's input has ended: it can answer nothing more"
                     : "the session has no connection to its client";
}

BATCHRPC_DECL std::string PeerChannel::request(std::string_view method, const Json& params, ReplyHandler done,
                                               const PeerRequestOptions& options,
                                               const std::shared_ptr<PeerChannel>& self) {
  std::uint64_t n = 0;
  bool input_ended = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    input_ended = input_ended_;
    if (writer_ != nullptr && !input_ended) n = ++last_id_;  // no id is spent on a request not sent
  }
  if (n == 0) {
    (void)checked_params(method, params);  // the same exceptions as when it is sent
    deliver(done, unavailable_reply(not_sendable_reason(input_ended)));
    return {};
  }
  std::string id = std::string(kPeerIdPrefix) + std::to_string(n);
  std::string message = peer_message(method, params, id);  // throws before anything is kept
  const bool fits = message.size() <= max_bytes_;
  bool kept = false;
  const PeerTimer::Clock::time_point due = deadline_after(options.timeout);
  if (fits) {
    // Kept before it is sent: the answer may come before the writer returns.
    std::lock_guard<std::mutex> lock(mutex_);
    input_ended = input_ended_;
    if (writer_ != nullptr && !input_ended) kept = waiting_.emplace(n, Waiting{std::move(done), due}).second;
  }
  // Timed from here; an answer that comes first removes it from the timer.
  if (kept && due != PeerTimer::Clock::time_point{}) PeerTimer::instance().add(due, self, n);
  if (!fits) {
    deliver(done, Reply(Error(ErrorCode::response_too_large, "the request is larger than Limits::max_response_bytes")));
  } else if (!kept) {
    deliver(done, unavailable_reply(not_sendable_reason(input_ended)));
  } else if (!send(std::move(message))) {
    if (ReplyHandler taken = take(n)) deliver(taken, unavailable_reply("the request could not be sent to the client"));
  }
  return id;
}

BATCHRPC_DECL bool PeerChannel::cancel(std::string_view id) {
  ReplyHandler done = take(peer_id_number(RequestId{RequestId::Kind::string, id}));
  if (!done) return false;
  deliver(done, Reply(Error(ErrorCode::request_cancelled)));
  return true;
}

BATCHRPC_DECL std::size_t PeerChannel::waiting() {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_.size();
}

BATCHRPC_DECL bool PeerChannel::answer(const RequestId& id, const Value& value, bool is_error) {
  const std::uint64_t n = peer_id_number(id);
  if (n == 0) return false;
  ReplyHandler done = take(n);
  if (!done) return false;
  deliver(done, is_error ? Reply(client_error(value)) : Reply(to_json(value)));
  return true;
}

BATCHRPC_DECL bool PeerChannel::refuse(const RequestId& id, const char* why) {
  const std::uint64_t n = peer_id_number(id);
  if (n == 0) return false;
  ReplyHandler done = take(n);
  if (!done) return false;
  const Json reason = to_json(std::string_view(why));
  deliver(done, Reply(Error(ErrorCode::internal_error, "the client answered with a malformed Response",
                            Json::trusted("{\"reason\":" + std::string(reason.text()) + "}"))));
  return true;
}

}  // namespace rpc::detail

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL bool Peer::connected() const { return channel_ != nullptr && channel_->connected(); }

BATCHRPC_DECL bool Peer::notify(std::string_view method, const Json& params) const {
  if (channel_ == nullptr) {
    (void)detail::checked_params(method, params);  // the same exceptions as with a client
    return false;
  }
  const detail::CallScope call(call_);  // for the transport's writer, which runs here
  return channel_->notify(method, params);
}

BATCHRPC_DECL std::string Peer::request(std::string_view method, const Json& params, ReplyHandler done,
                                        PeerRequestOptions options) const {
  if (channel_ == nullptr) {
    (void)detail::checked_params(method, params);  // the same exceptions as with a client
    detail::deliver(done, detail::unavailable_reply("this Peer has no client"));
    return {};
  }
  const detail::CallScope call(call_);
  return channel_->request(method, params, std::move(done), options, channel_);
}

BATCHRPC_DECL std::future<Reply> Peer::request(std::string_view method, const Json& params,
                                               PeerRequestOptions options) const {
  auto promise = std::make_shared<std::promise<Reply>>();
  std::future<Reply> future = promise->get_future();
  request(method, params, [promise](Reply reply) { promise->set_value(std::move(reply)); }, options);
  return future;
}

BATCHRPC_DECL bool Peer::cancel(std::string_view id) const { return channel_ != nullptr && channel_->cancel(id); }

BATCHRPC_DECL std::size_t Peer::waiting() const { return channel_ == nullptr ? 0 : channel_->waiting(); }

}  // namespace rpc
