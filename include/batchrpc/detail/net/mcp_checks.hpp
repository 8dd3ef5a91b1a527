// SPDX-License-Identifier: MIT
// What the MCP Streamable HTTP transport checks of a request before a session sees it: the
// path, the Origin (DNS rebinding), the Accept header, and what the message holds.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/core/string.hpp>
#include <rapidjson/document.h>

#include "../../config.hpp"
#include "../peer_call.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

// The header naming an MCP session.
inline constexpr std::string_view kMcpSessionHeader = "Mcp-Session-Id";

// The path of a request target, without its query.
inline std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

// An Origin (`scheme://host[:port]`) whose host is the loopback interface.
inline bool is_loopback_origin(std::string_view origin) {
  const auto scheme_end = origin.find("://");
  if (scheme_end == std::string_view::npos) return false;
  std::string_view host = origin.substr(scheme_end + 3);
  if (!host.empty() && host.front() == '[') {
    host = host.substr(0, host.find(']') == std::string_view::npos ? host.size() : host.find(']') + 1);
  } else {
    host = host.substr(0, host.find_first_of(":/"));
  }
  return boost::beast::iequals(host, "localhost") || host == "127.0.0.1" || host == "[::1]";
}

// True when a request with `origin` (empty: no Origin header, not a browser's) may be served.
inline bool origin_allowed(std::string_view origin, const std::vector<std::string>& allowed) {
  if (origin.empty()) return true;
  if (allowed.empty()) return is_loopback_origin(origin);
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return a == origin; });
}

// What an Accept header lets the server answer with. No header accepts anything (RFC 9110).
struct Accepted {
  bool json = false;
  bool event_stream = false;
};
inline Accepted accepted(std::string_view accept) {
  if (accept.empty()) return {true, true};
  Accepted out;
  while (!accept.empty()) {
    const auto comma = accept.find(',');
    std::string_view type = accept.substr(0, std::min(comma, accept.find(';')));
    accept = comma == std::string_view::npos ? std::string_view{} : accept.substr(comma + 1);
    while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
    while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
    const bool any = type == "*/*";
    out.json = out.json || any || boost::beast::iequals(type, "application/json") || boost::beast::iequals(type, "application/*");
    out.event_stream = out.event_stream || any || boost::beast::iequals(type, "text/event-stream") ||
                       boost::beast::iequals(type, "text/*");
  }
  return out;
}

// What a POSTed message holds, as far as the transport cares.
struct MessageKinds {
  bool requests = false;    // something is to be answered: a JSON reply or an event stream
  bool initialize = false;  // an `initialize` request: it may start a session
  std::vector<std::string> calls;  // the requests' rpc::detail::call_key (integer and string ids)
};

// rpc::detail::call_key of a parsed id; empty for one it cannot match (null, or a number that
// is not an integer, whose text the DOM does not keep).
inline std::string call_key_of(const rapidjson::Value& id) {
  std::string number;
  if (id.IsInt64()) number = std::to_string(id.GetInt64());
  if (id.IsUint64()) number = std::to_string(id.GetUint64());
  if (id.IsString()) return rpc::detail::call_key({RequestId::Kind::string, {id.GetString(), id.GetStringLength()}});
  if (!number.empty()) return rpc::detail::call_key({RequestId::Kind::number, number});
  return {};
}
inline MessageKinds message_kinds(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  // Not JSON, or not a message: the session answers it with an error.
  if (doc.HasParseError() || !(doc.IsObject() || doc.IsArray())) return {.requests = true, .initialize = false, .calls = {}};
  MessageKinds kinds;
  const auto look = [&kinds](const rapidjson::Value& member) {
    if (!member.IsObject()) {
      kinds.requests = true;  // answered as an invalid request
      return;
    }
    const auto method = member.FindMember("method");
    if (method == member.MemberEnd()) return;  // a Response to the server's request
    const auto id = member.FindMember("id");
    if (id != member.MemberEnd()) {
      kinds.requests = true;
      if (std::string key = call_key_of(id->value); !key.empty()) kinds.calls.push_back(std::move(key));
    }
    if (method->value.IsString() && std::string_view(method->value.GetString(), method->value.GetStringLength()) == "initialize") {
      kinds.initialize = true;
    }
  };
  if (doc.IsArray()) {
    if (doc.Empty()) kinds.requests = true;  // answered -32600
    for (const auto& member : doc.GetArray()) look(member);
  } else {
    look(doc);
  }
  return kinds;
}

// One server message as a server-sent event: `data:` lines (a message written over several
// lines takes one per line; the client joins them with newlines, which JSON reads as spaces).
inline std::string sse_event(std::string_view message) {
  std::string event = "event: message\n";
  event.reserve(event.size() + message.size() + 16);
  while (true) {
    const auto end = message.find_first_of("\r\n");
    event += "data: ";
    event += message.substr(0, end);
    event += '\n';
    if (end == std::string_view::npos) break;
    message.remove_prefix(end + (message.compare(end, 2, "\r\n") == 0 ? 2 : 1));
  }
  event += '\n';
  return event;
}

}  // namespace rpc::net::detail
