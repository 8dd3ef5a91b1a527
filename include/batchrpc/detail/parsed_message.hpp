// SPDX-License-Identifier: MIT
// A message's text and what was parsed from it in place. The parsed requests point into the
// text, so the two travel together, by pointer: a session that parsed a message on its fast
// path hands both to a job without parsing again (SessionCore::handle).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "message_parser.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

struct Method;

struct ParsedMessage {
  // What is kept between messages is bounded: an idle session or thread costs little, whatever
  // it served before.
  static constexpr std::size_t retained_bytes = std::size_t{256} << 10;

  std::string text;  // parsed in place: the requests' strings point into it
  MessageParser parser{retained_bytes};
  std::vector<const Method*> methods;  // each request's method, when the fast path looked them up

  // Takes the message's text: copied, or taken over from `owned` (which holds `message`).
  // Throws only when copying finds no memory, and then changes nothing.
  void take(std::string_view message, std::string* owned) {
    if (owned != nullptr) {
      text.swap(*owned);
      owned->clear();  // it held an earlier message, perhaps another connection's
    } else {
      text.assign(message.data(), message.size());
    }
  }
  // Parses the text in place, as a message of requests; no method is looked up yet.
  ParseOutcome parse(const Limits& limits) {
    methods.clear();
    return parser.parse_requests(text.data(), text.size(), limits);
  }

  void trim() noexcept {
    if (text.capacity() > retained_bytes) std::string().swap(text);
  }
};

}  // namespace rpc::detail
