// SPDX-License-Identifier: MIT
// Sessions an HTTP server keeps by id, so that a request on one connection (a cancel) can
// reach a request running on another. Shared by the HTTP transports.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../router.hpp"
#include "../session.hpp"
#include "chrono.hpp"
#include "session_await.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// How a registry makes and keeps sessions.
struct RegistryOptions {
  SessionOptions session;                  // for every session it makes
  bool by_id = true;                       // false: one session per connection, no ids
  std::size_t max_sessions = 1024;         // kept by id; past this the least recently used idle one goes
  std::chrono::seconds idle{300};          // an idle session is kept this long after its last request
  std::string id_prefix{};                 // put before every id (a load balancer routes on it)
};

// A session and the id clients use to come back to it.
struct SessionEntry {
  SessionEntry(const Router& router, const SessionOptions& options) : session(router, options) {}
  Session session;
  // The rest is guarded by the registry's mutex.
  std::string id;            // given on first registration, kept if evicted and registered again
  bool registered = false;   // reachable by id
  std::size_t requests = 0;  // requests being handled: a session in use is never evicted
  std::uint64_t last_use = 0;  // the registry's use count at its last request: LRU order
  std::chrono::steady_clock::time_point idle_since{};
};

class SessionRegistry;

// One request's hold on the session that handles it, from before the session is looked up
// until the reply is made. While held the session is not evicted (a cancel sent on another
// connection must still find it), and releasing it makes it the most recently used.
class SessionUse {
 public:
  SessionUse() = default;
  SessionUse(SessionRegistry& registry, std::shared_ptr<SessionEntry> entry, std::string id)
      : registry_(&registry), entry_(std::move(entry)), id_(std::move(id)) {}
  SessionUse(SessionUse&& other) noexcept
      : registry_(std::exchange(other.registry_, nullptr)),
        entry_(std::move(other.entry_)),
        id_(std::move(other.id_)),
        closing_(other.closing_) {}
  SessionUse& operator=(SessionUse&& other) noexcept {
    if (this != &other) {
      release();
      registry_ = std::exchange(other.registry_, nullptr);
      entry_ = std::move(other.entry_);
      id_ = std::move(other.id_);
      closing_ = other.closing_;
    }
    return *this;
  }
  ~SessionUse() { release(); }

  // No session: the server is being destroyed.
  static SessionUse closing() {
    SessionUse use;
    use.closing_ = true;
    return use;
  }

  explicit operator bool() const noexcept { return entry_ != nullptr; }
  bool refused_for_closing() const noexcept { return closing_; }
  Session& session() const noexcept { return entry_->session; }
  SessionEntry& entry() const noexcept { return *entry_; }
  // The id to send back; empty when the session is not reachable by id.
  const std::string& id() const noexcept { return id_; }

 private:
  inline void release() noexcept;

  SessionRegistry* registry_ = nullptr;
  std::shared_ptr<SessionEntry> entry_;  // dropped after the registry's lock is let go
  std::string id_;
  bool closing_ = false;
};

// Sessions by id, bounded in number and idle time. A connection's own session is made on its
// first request that names no other (a connection that never sends a request takes no slot);
// a request naming a session's id is served by that one. Sessions are evicted least recently
// used first, in the order of a counter (not a clock, so two uses in one second still order).
// No session is destroyed and no handler runs under the lock.
class SessionRegistry {
 public:
  SessionRegistry(const Router& router, RegistryOptions options)
      : router_(router), options_(std::move(options)) {}

  // The session named `id`, held for one request; empty when no session has that id.
  SessionUse use(std::string_view id) {
    std::vector<std::shared_ptr<SessionEntry>> expired;  // destroyed outside the lock
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) return SessionUse::closing();
    const auto found = entries_.find(std::string(id));
    if (found == entries_.end()) return {};
    if (expired_locked(*found->second, std::chrono::steady_clock::now())) {
      found->second->registered = false;
      expired.push_back(std::move(found->second));
      entries_.erase(found);
      return {};
    }
    return hold_locked(found->second);
  }

  // The connection's own session `own`, made now if it has none, held for one request. It is
  // registered (again, with the same id, if it was evicted while the connection was idle) when
  // there is room; otherwise it serves this connection only, without an id.
  SessionUse use_own(std::shared_ptr<SessionEntry>& own) {
    if (own == nullptr) own = std::make_shared<SessionEntry>(router_, options_.session);
    std::vector<std::shared_ptr<SessionEntry>> evicted;  // destroyed outside the lock
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) return SessionUse::closing();
    if (!own->registered && options_.by_id && make_room_locked(evicted)) {
      if (own->id.empty()) own->id = random_id_locked();
      own->registered = true;
      entries_.emplace(own->id, own);
    }
    return hold_locked(own);
  }

  // Takes the session named `id` out of the registry (a client ended it): it is reachable no
  // more, and goes when the requests holding it are done. nullptr when no session has that id.
  std::shared_ptr<SessionEntry> remove(std::string_view id) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = entries_.find(std::string(id));
    if (found == entries_.end()) return nullptr;
    std::shared_ptr<SessionEntry> entry = std::move(found->second);
    entries_.erase(found);
    entry->registered = false;
    return entry;  // destroyed by the caller, outside the lock
  }

  // For the server's destruction: no session is handed out any more, and the requests being
  // handled are cancelled (their clients are answered -32800) until none is left, those waiting
  // on a Responder included (answered by their session, as ~Session would: the server cannot
  // destroy a session while a request of it is being handled). A request that took its session
  // just before may not have reached the session's table of requests when it is cancelled, so
  // the cancel is repeated while any is still being handled.
  void close() {
    for (;;) {
      std::vector<std::shared_ptr<SessionEntry>> busy;  // released outside the lock
      {
        std::unique_lock<std::mutex> lock(mutex_);
        closing_ = true;
        if (busy_.empty()) return;
        for (const auto& [entry, held] : busy_) busy.push_back(held);
      }
      for (const auto& entry : busy) {
        entry->session.cancel_all();
        rpc::detail::answer_waiting_in(entry->session);
        // A handler waiting for its client's answer (an MCP session's Peer) gets -32094 now:
        // the client may never answer, and nothing else would end that wait.
        entry->session.end_input();
      }
      std::unique_lock<std::mutex> lock(mutex_);
      idle_.wait_for(lock, std::chrono::milliseconds(10), [this] { return busy_.empty(); });
    }
  }

 private:
  friend class SessionUse;

  SessionUse hold_locked(const std::shared_ptr<SessionEntry>& entry) {
    if (entry->requests++ == 0) busy_.emplace(entry.get(), entry);
    entry->last_use = ++uses_;
    return SessionUse(*this, entry, entry->registered ? entry->id : std::string());
  }

  // The caller still holds its own reference, so no session is destroyed here.
  void release(SessionEntry& entry) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    entry.last_use = ++uses_;
    entry.idle_since = std::chrono::steady_clock::now();
    if (--entry.requests == 0) {
      busy_.erase(&entry);
      if (busy_.empty()) idle_.notify_all();
    }
  }

  bool expired_locked(const SessionEntry& entry, std::chrono::steady_clock::time_point now) const {
    return entry.requests == 0 && now - entry.idle_since > options_.idle;
  }

  // Drops sessions idle too long, then the least recently used idle one if still full. False
  // when every kept session is in use: the new one is then simply not kept.
  bool make_room_locked(std::vector<std::shared_ptr<SessionEntry>>& evicted) {
    const auto now = std::chrono::steady_clock::now();
    const auto evict = [&](auto it) {
      it->second->registered = false;
      evicted.push_back(std::move(it->second));
      return entries_.erase(it);
    };
    for (auto it = entries_.begin(); it != entries_.end();) {
      it = expired_locked(*it->second, now) ? evict(it) : std::next(it);
    }
    if (entries_.size() < options_.max_sessions) return true;
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second->requests == 0 &&
          (oldest == entries_.end() || it->second->last_use < oldest->second->last_use)) {
        oldest = it;
      }
    }
    if (oldest == entries_.end()) return false;
    evict(oldest);
    return entries_.size() < options_.max_sessions;
  }

  // 128 random bits as hex: ids cannot be guessed from one another.
  std::string random_id_locked() {
    static constexpr char hex[] = "0123456789abcdef";
    std::string id = options_.id_prefix;
    for (int word = 0; word < 4; ++word) {
      std::uint32_t bits = random_();
      for (int i = 0; i < 8; ++i, bits >>= 4) id += hex[bits & 15];
    }
    return id;
  }

  const Router& router_;
  const RegistryOptions options_;
  std::mutex mutex_;
  std::condition_variable idle_;  // notified when no request is being handled
  bool closing_ = false;          // the server is being destroyed: no session is handed out
  std::random_device random_;
  std::uint64_t uses_ = 0;
  std::unordered_map<std::string, std::shared_ptr<SessionEntry>> entries_;
  std::unordered_map<SessionEntry*, std::shared_ptr<SessionEntry>> busy_;  // requests > 0
};

inline void SessionUse::release() noexcept {
  if (registry_ != nullptr && entry_ != nullptr) registry_->release(*entry_);
  registry_ = nullptr;
  entry_.reset();
}

}  // namespace rpc::detail
