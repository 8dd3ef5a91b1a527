// SPDX-License-Identifier: MIT
// The parsed-message document and how a parse ended.
#pragma once

#include <cstddef>

#include <rapidjson/document.h>

#include "../config.hpp"
#include "stack_arena.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Values come from a pool that is reset per message (so they are plain rpc::Values); the parse
// stack lives in an arena of its own.
using Pool = rapidjson::MemoryPoolAllocator<>;
using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, StackArena>;

enum class ParseStatus : unsigned char { ok, syntax_error, too_deep, batch_too_large, too_costly };

struct ParseOutcome {
  ParseStatus status = ParseStatus::ok;
  std::size_t offset = 0;        // where a syntax error was found
  const char* reason = nullptr;  // why (English), for syntax errors
  std::size_t budget = 0;        // the parse budget, for too_costly
};

}  // namespace rpc::detail
