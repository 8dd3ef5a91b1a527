// SPDX-License-Identifier: MIT
// The client request a server message is sent for. A Peer taken from a handler's Context
// carries its request's key; while Peer::notify or Peer::request calls the transport's writer,
// the key is the sending thread's `current_call()`, so a transport that has a stream per call
// (MCP Streamable HTTP) can send the message on that call's stream. The writer runs on the
// sending thread, inside that call, so a thread-local is exact.
#pragma once

#include <string>
#include <string_view>

#include "../config.hpp"
#include "../context.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// `n` and the number's text, or `s` and the string; empty for a notification or a null id.
inline std::string call_key(const RequestId& id) {
  switch (id.kind) {
    case RequestId::Kind::number:
      return "n" + std::string(id.text);
    case RequestId::Kind::string:
      return "s" + std::string(id.text);
    case RequestId::Kind::none:
    case RequestId::Kind::null:
      break;
  }
  return {};
}

inline std::string_view& current_call() noexcept {
  static thread_local std::string_view call;
  return call;
}

// Makes `call` the thread's current call while it lives.
class CallScope {
 public:
  explicit CallScope(std::string_view call) noexcept : previous_(current_call()) { current_call() = call; }
  ~CallScope() { current_call() = previous_; }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

 private:
  std::string_view previous_;
};

}  // namespace rpc::detail
