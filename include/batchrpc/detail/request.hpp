// SPDX-License-Identifier: MIT
// One Request (JSON-RPC 2.0 §4) as the router dispatches it.
#pragma once

#include <string_view>

#include "../config.hpp"
#include "../context.hpp"
#include "../json.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

struct Request {
  RequestId id;
  std::string_view method;
  const Value* params = nullptr;  // nullptr: absent
};

}  // namespace rpc::detail
