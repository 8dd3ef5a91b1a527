// SPDX-License-Identifier: MIT
// Lets doctest print optional replies, so a failed check shows the reply it got.
#pragma once

#include <optional>
#include <string>

#include <doctest/doctest.h>

namespace doctest {
template <>
struct StringMaker<std::optional<std::string>> {
  static String convert(const std::optional<std::string>& reply) {
    return reply ? String(reply->c_str()) : String("<no reply>");
  }
};
}  // namespace doctest
