// SPDX-License-Identifier: MIT
// A function of the program's own that takes a batchrpc type: declared once, defined in one
// translation unit, called from another.
#pragma once

#include <batchrpc/router.hpp>

#include <optional>
#include <string>
#include <string_view>

std::optional<std::string> answer(const rpc::Router& router, std::string_view message);
