// SPDX-License-Identifier: MIT
// The request messages of the JSON-RPC 2.0 specification's examples section (§7), verbatim.
#pragma once

#include <array>
#include <string_view>

namespace spec {

struct Example {
  std::string_view title;
  std::string_view message;
};

inline constexpr std::array<Example, 14> examples{{
    {"rpc call with positional parameters (1)",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1})"},
    {"rpc call with positional parameters (2)",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2})"},
    {"rpc call with named parameters (1)",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3})"},
    {"rpc call with named parameters (2)",
     R"({"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4})"},
    {"a Notification (1)", R"({"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]})"},
    {"a Notification (2)", R"({"jsonrpc": "2.0", "method": "foobar"})"},
    {"rpc call of non-existent method", R"({"jsonrpc": "2.0", "method": "foobar", "id": "1"})"},
    {"rpc call with invalid JSON", R"({"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz])"},
    {"rpc call with invalid Request object", R"({"jsonrpc": "2.0", "method": 1, "params": "bar"})"},
    {"rpc call Batch, invalid JSON",
     R"([
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
])"},
    {"rpc call with an empty Array", R"([])"},
    {"rpc call with an invalid Batch (but not empty)", R"([1])"},
    {"rpc call with invalid Batch", R"([1,2,3])"},
    {"rpc call Batch",
     R"([
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ])"},
}};

/// The specification's last example: a batch of notifications only.
inline constexpr Example notification_batch{
    "rpc call Batch (all notifications)",
    R"([
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ])"};

}  // namespace spec
