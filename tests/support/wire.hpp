// SPDX-License-Identifier: MIT
// A stand-in for a transport in tests of two-way sessions: it records what the server sends.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <batchrpc/peer.hpp>

// What a transport would write to the client: every outbound message, in order.
struct Wire {
  std::mutex mutex;
  std::vector<std::string> sent;
  bool open = true;

  rpc::Outbound writer() {
    return [this](std::string message) {
      std::lock_guard lock(mutex);
      if (!open) return false;
      sent.push_back(std::move(message));
      return true;
    };
  }
  std::vector<std::string> taken() {
    std::lock_guard lock(mutex);
    return std::exchange(sent, {});
  }
};
