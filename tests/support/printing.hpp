// SPDX-License-Identifier: MIT
// Lets doctest print optional replies and lists of writes, so a failed check shows what it got.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace doctest {
template <>
struct StringMaker<std::optional<std::string>> {
  static String convert(const std::optional<std::string>& reply) {
    return reply ? String(reply->c_str()) : String("<no reply>");
  }
};
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& items) {
    std::string text = "{";
    for (const std::string& item : items) text += "\n  [" + item + "]";
    return String((text + "\n}").c_str());
  }
};
}  // namespace doctest
