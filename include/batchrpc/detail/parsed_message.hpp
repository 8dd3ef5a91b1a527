// SPDX-License-Identifier: MIT
// A message's text and what was parsed from it in place. The parsed requests point into the
// text, so the two travel together, by pointer: a session that parsed a message on its fast
// path hands both to a job without parsing again (SessionCore::handle).
#pragma once

#include <cstddef>
#include <string>
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

  void trim() noexcept {
    if (text.capacity() > retained_bytes) std::string().swap(text);
  }
};

}  // namespace rpc::detail
