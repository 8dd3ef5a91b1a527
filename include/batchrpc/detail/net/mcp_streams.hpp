// SPDX-License-Identifier: MIT
// Where an MCP Streamable HTTP session's own messages (rpc::Peer) go: the event stream of the
// POST holding the call the message is sent for; for a message that belongs to no call (a
// Peer taken from the Session), the oldest POST of the session still open; else the session's
// GET stream; else nowhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../config.hpp"
#include "../../router.hpp"
#include "../../session.hpp"
#include "../peer_call.hpp"
#include "../session_registry.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

class McpStreams;

// A connection that can carry event streams; each stream is known by a number of the
// connection's (its response's place in pipelining order).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Queues `message` as an event of stream `number`, on the connection's strand; nullopt ends
  // the stream. A message for a stream that has ended meanwhile goes to `from`'s GET stream.
  virtual void post_event(std::uint64_t number, std::optional<std::string> message,
                          std::shared_ptr<McpStreams> from) = 0;
};

// The open streams of one session. Any thread; the sinks are called outside the lock, and held
// weakly (a connection that is gone is skipped).
class McpStreams : public std::enable_shared_from_this<McpStreams> {
 public:
  // A POST holding requests (`calls`: their detail::call_key): its stream takes their messages
  // until its reply is made.
  void open_call(const std::shared_ptr<EventSink>& sink, std::uint64_t number, std::vector<std::string> calls) {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back({sink, sink.get(), number, std::move(calls)});
  }
  void close_call(const EventSink* sink, std::uint64_t number) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(calls_, [&](const Stream& s) { return s.key == sink && s.number == number; });
  }

  // A GET stream; false when the session has a live one already, or has ended.
  bool open_listen(const std::shared_ptr<EventSink>& sink, std::uint64_t number) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ || (listen_ && !listen_->sink.expired())) return false;
    listen_ = Stream{sink, sink.get(), number, {}};
    return true;
  }
  void close_listen(const EventSink* sink, std::uint64_t number) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (listen_ && listen_->key == sink && listen_->number == number) listen_.reset();
  }

  // The session's writer (rpc::Outbound), on the sending thread: false when no stream is open
  // to take `message`.
  bool send(std::string message) {
    return post(pick(true, rpc::detail::current_call()), std::move(message));
  }
  // For a message whose call ended before it was queued: the GET stream or nothing.
  bool send_to_listen(std::string message) {
    return post(pick(false, {}), std::move(message));
  }

  // The session has ended (DELETE): nothing more is sent, and the GET stream ends.
  void end() {
    Target target;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ended_ = true;
      calls_.clear();
      if (listen_) target = {listen_->sink.lock(), listen_->number};
      listen_.reset();
    }
    if (target.sink != nullptr) target.sink->post_event(target.number, std::nullopt, shared_from_this());
  }

 private:
  struct Stream {
    std::weak_ptr<EventSink> sink;
    const EventSink* key;  // to find it again; never dereferenced
    std::uint64_t number;
    std::vector<std::string> calls;  // a POST's requests
  };
  struct Target {
    std::shared_ptr<EventSink> sink;
    std::uint64_t number = 0;
  };

  bool post(const Target& target, std::string message) {
    if (target.sink == nullptr) return false;
    target.sink->post_event(target.number, std::move(message), shared_from_this());
    return true;
  }

  // `call`: the request the message is sent for; empty: none in particular.
  Target pick(bool calls_first, std::string_view call) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_) return {};
    if (calls_first) {
      std::erase_if(calls_, [](const Stream& s) { return s.sink.expired(); });
      for (const Stream& post : calls_) {
        const bool ours = call.empty() || std::find(post.calls.begin(), post.calls.end(), call) != post.calls.end();
        if (!ours) continue;
        if (auto sink = post.sink.lock()) return {std::move(sink), post.number};
      }
    }
    if (listen_) return {listen_->sink.lock(), listen_->number};
    return {};
  }

  std::mutex mutex_;
  std::vector<Stream> calls_;  // oldest first
  std::optional<Stream> listen_;
  bool ended_ = false;
};

// An MCP session as the registry keeps it, with its streams. The session's writer sends
// through them: attached once, when the session is made.
struct McpSessionEntry : rpc::detail::SessionEntry {
  McpSessionEntry(const Router& router, const SessionOptions& options)
      : SessionEntry(router, options), streams(std::make_shared<McpStreams>()) {
    session.attach([streams = streams](std::string message) { return streams->send(std::move(message)); });
  }
  std::shared_ptr<McpStreams> streams;
};

}  // namespace rpc::net::detail
