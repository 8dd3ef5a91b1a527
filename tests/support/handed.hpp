// SPDX-License-Identifier: MIT
// A session's reply to one message handed in with a completion, waited for: what the session's
// executor gives, where the waiting Session::handle(message) would run the members on the
// calling thread instead.
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <batchrpc/session.hpp>

namespace replies {

inline std::optional<std::string> handed(rpc::Session& session, const std::string& message) {
  // Shared with the completion, which may run on another thread and outlive this call.
  auto reply = std::make_shared<std::promise<std::optional<std::string>>>();
  std::future<std::optional<std::string>> got = reply->get_future();
  session.handle(message, [reply](std::optional<std::string_view> r) {
    reply->set_value(r ? std::optional<std::string>(*r) : std::nullopt);
  });
  return got.get();
}

}  // namespace replies
