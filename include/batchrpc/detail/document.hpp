// SPDX-License-Identifier: MIT
// The parsed-message document and how a parse ended.
#pragma once

#include <cstddef>

#include <rapidjson/document.h>

namespace rpc::detail {

// Values and the document's parse stack both come from pools that are reset per message.
using Pool = rapidjson::MemoryPoolAllocator<>;
using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool>;

enum class ParseStatus : unsigned char { ok, syntax_error, too_deep, batch_too_large };

struct ParseOutcome {
  ParseStatus status = ParseStatus::ok;
  std::size_t offset = 0;        // where a syntax error was found
  const char* reason = nullptr;  // why (English), for syntax errors
};

}  // namespace rpc::detail
