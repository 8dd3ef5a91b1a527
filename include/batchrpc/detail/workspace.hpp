// SPDX-License-Identifier: MIT
// Per-thread scratch state for handling messages, reused so the hot path does not allocate.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../buffer.hpp"
#include "../config.hpp"
#include "../result_writer.hpp"
#include "group.hpp"
#include "message_parser.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

struct Workspace {
  MessageParser parser;
  std::string input;   // a mutable copy of the message for in-situ parsing
  Buffer output;       // the reply, for the entry points that return a std::string
  ResultWriter writer{output};
  GroupPlan groups;                     // batch-aware dispatch (only with batched methods)
  bool busy = false;

  // Memory kept after an unusually large message is given back.
  void trim() {
    constexpr std::size_t keep = std::size_t{1} << 20;
    if (input.capacity() > keep) std::string().swap(input);
    if (output.size() > keep) output.release();
  }
};

BATCHRPC_DECL Workspace& thread_workspace();

// The calling thread's workspace, or a fresh one when it is already in use further up the
// stack (a handler that handles another message, as the batch tool does).
class WorkspaceLease {
 public:
  WorkspaceLease() : ws_(&thread_workspace()) {
    if (ws_->busy) {
      own_ = std::make_unique<Workspace>();
      ws_ = own_.get();
    }
    ws_->busy = true;
  }
  ~WorkspaceLease() {
    ws_->busy = false;
    ws_->trim();
  }
  WorkspaceLease(const WorkspaceLease&) = delete;
  WorkspaceLease& operator=(const WorkspaceLease&) = delete;

  Workspace& operator*() const { return *ws_; }
  Workspace* operator->() const { return ws_; }

 private:
  Workspace* ws_;
  std::unique_ptr<Workspace> own_;
};

}  // namespace rpc::detail
