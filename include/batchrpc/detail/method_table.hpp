// SPDX-License-Identifier: MIT
// The registered methods by name. Every call looks one up, so names are found through a flat
// open-addressing index of full hashes (one probe, one compare in the common case); the
// methods live in an ordered map, which keeps their addresses stable across moves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../batch_call.hpp"
#include "../config.hpp"
#include "../handler.hpp"
#include "../method_options.hpp"
#include "same_text.hpp"

namespace rpc::inline BATCHRPC_ABI {
class Router;
}  // namespace rpc

namespace rpc::inline BATCHRPC_ABI::detail {

class Coalescer;
struct Method;
struct Request;
struct Workspace;

// The router's path for a call it answers once the handler's Responder has: set by Router::add
// only for a handler that takes one, so that a file compiles that path only when it registers
// such a handler.
using WaitingCall = void (*)(const Router&, const Method&, const Request&, Workspace&, Buffer&);

// Destroys a method's coalescer, through a function pointer set where the type is complete
// (Router::coalesce): a coalescer is only ever stored together with its deleter.
struct CoalescerDelete {
  void (*destroy)(Coalescer*) noexcept = nullptr;
  void operator()(Coalescer* coalescer) const noexcept { destroy(coalescer); }
};

/// A registered method: its handler and options.
struct Method {
  HandlerPtr handler;
  MethodOptions options;
  BatchHandler batch{};  // set by add_batched: answers a batch's calls of this method together
  WaitingCall call_and_wait = nullptr;  // set by add for a handler taking a Responder
  bool observes_stop = true;  // handler->observes_stop(), asked once at registration
  // Runs before every other member of a batch starts, and inline: the cancellation built-ins,
  // so that a batch's cancel reaches its siblings before they run.
  bool runs_first = false;
  // Set by Router::coalesce: gathers this method's calls across messages. Last, so that it is
  // destroyed (its batcher thread joined) before the handlers it calls.
  std::unique_ptr<Coalescer, CoalescerDelete> coalescer{};
};

class MethodTable {
 public:
  // False (and nothing added) when `name` is taken. Strong guarantee: memory is taken before
  // anything changes.
  BATCHRPC_DECL bool add(std::string_view name, Method method);

  [[nodiscard]] Method* find(std::string_view name) noexcept {
    return const_cast<Method*>(std::as_const(*this).find(name));
  }
  [[nodiscard]] const Method* find(std::string_view name) const noexcept {
    if (index_.empty()) return nullptr;
    const std::uint64_t h = hash(name);
    const std::size_t mask = index_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = index_[i];
      if (s.entry == nullptr) return nullptr;
      if (s.hash == h && same_text(s.name, name)) return &s.entry->second;
    }
  }

  // In name order.
  [[nodiscard]] auto begin() const { return methods_.begin(); }
  [[nodiscard]] auto end() const { return methods_.end(); }

 private:
  using Map = std::map<std::string, Method, std::less<>>;
  struct Slot {
    std::uint64_t hash = 0;
    std::string_view name;  // the map key's text: map nodes, and so their keys, never move
    const Map::value_type* entry = nullptr;
  };

  // FNV-1a: method names are short, and this inlines where std::hash calls out.
  static std::uint64_t hash(std::string_view s) noexcept {
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
  }

  BATCHRPC_DECL void insert(const Map::value_type& entry);

  Map methods_;
  std::vector<Slot> index_;  // a power of two in size, and never more than half full
};

}  // namespace rpc::detail

#if defined(BATCHRPC_HEADER_ONLY)
#include "../impl/method_table.ipp"
#endif
