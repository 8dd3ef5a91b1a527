// SPDX-License-Identifier: MIT
// Non-template bodies of json.hpp.
#pragma once

#include <stdexcept>
#include <string>

#include <rapidjson/allocators.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "../config.hpp"
#include "../json.hpp"

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL Json Json::parse(std::string_view text) {
  // Validation only: SAX events are dropped. Iterative, so depth cannot exhaust the stack.
  constexpr unsigned flags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                             rapidjson::kParseNumbersAsStringsFlag;
  rapidjson::MemoryStream stream(text.data(), text.size());
  rapidjson::BaseReaderHandler<> ignore;
  // The reader's nesting stack starts in a buffer here, so that the values handlers return
  // (rarely deep) cost no allocation for it; deeper ones grow it on the heap.
  char scratch[1024];
  rapidjson::MemoryPoolAllocator<> stack_memory(scratch, sizeof scratch);
  rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>> reader(
      &stack_memory, 256);
  const rapidjson::ParseResult ok = reader.Parse<flags>(stream, ignore);
  if (!ok) {
    throw std::invalid_argument(std::string("rpc::json: invalid JSON at offset ") +
                                std::to_string(ok.Offset()) + ": " +
                                rapidjson::GetParseError_En(ok.Code()));
  }
  // MemoryStream reads a NUL byte as end of input; anything after it is not JSON.
  if (stream.Tell() != text.size()) {
    throw std::invalid_argument("rpc::json: unexpected NUL byte at offset " +
                                std::to_string(stream.Tell()));
  }
  return trusted(std::string(text));
}

}  // namespace rpc
