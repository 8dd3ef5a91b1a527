// SPDX-License-Identifier: MIT
/// @file completion.hpp
/// `rpc::Completion`: what `rpc::Session::handle` calls with a message's reply.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// Called once per message with the reply (valid only during the call), or `std::nullopt`
/// when nothing must be sent. May be called on another thread than the one that handed the
/// message in.
using Completion = std::function<void(std::optional<std::string_view> reply)>;

}  // namespace rpc
