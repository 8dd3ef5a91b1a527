// SPDX-License-Identifier: MIT
// An error object from the other side (JSON-RPC 2.0 §5.1) as an rpc::Error: the client's
// reply to a call (BatchBuilder's Replies) or a client's answer to the server (rpc::Peer).
#pragma once

#include <string>

#include "../config.hpp"
#include "../error.hpp"
#include "../json.hpp"
#include "../json_traits.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// True when `e` has an error object's shape: an object with an integer "code" and a string
// "message" ("data" is optional and may be anything).
inline bool is_error_object(const Value& e) {
  if (!e.IsObject()) return false;
  const auto code = e.FindMember("code");
  const auto message = e.FindMember("message");
  return code != e.MemberEnd() && code->value.IsInt() && message != e.MemberEnd() && message->value.IsString();
}

// The error object `e`, which is_error_object accepted.
inline Error error_from_object(const Value& e) {
  const Value& message = e["message"];
  const auto data = e.FindMember("data");
  return Error(e["code"].GetInt(), std::string(message.GetString(), message.GetStringLength()),
               data == e.MemberEnd() ? Json() : to_json(data->value));
}

}  // namespace rpc::detail
