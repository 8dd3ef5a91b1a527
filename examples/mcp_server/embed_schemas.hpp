// SPDX-License-Identifier: MIT
// JSON Schemas for the embed plugin's methods as tools (`tools/list` hands them to the client's
// model), shared by mcp_server and embed_server. Written over several lines to be read;
// rpc::Tools lists them compactly.
#pragma once

#include <string_view>

namespace mcp_example {

// Texts are the plugin's own limits: 1..1024 non-empty strings.
inline constexpr std::string_view embed_schema = R"({
  "type": "object",
  "properties": {
    "inputs": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 1024},
    "encoding": {"type": "string", "enum": ["float", "base64"], "default": "float",
                 "description": "base64: each vector as little-endian float32"}
  },
  "required": ["inputs"],
  "additionalProperties": false
})";

inline constexpr std::string_view rerank_schema = R"({
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1},
    "passages": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1, "maxItems": 1024},
    "top_k": {"type": "integer", "minimum": 1}
  },
  "required": ["query", "passages"],
  "additionalProperties": false
})";

}  // namespace mcp_example
