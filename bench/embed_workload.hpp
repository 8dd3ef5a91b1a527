// SPDX-License-Identifier: MIT
// The embed plugin's workload for the benchmarks: its model, made-up texts and `embed` calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "embed/hashing_model.hpp"

namespace bench {

inline const embed::HashingModel& model() {
  static const embed::HashingModel m{{.dimensions = 384, .seed = 42}};
  return m;
}

// n texts of 12 words from a 2048-word made-up vocabulary, the same on every run.
inline std::vector<std::string> texts(std::size_t n) {
  static const char* const syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi",
                                          "be", "do", "fu", "ga", "hi", "jo", "pe", "zu"};
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>(state >> 33);
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string text;
    for (int w = 0; w < 12; ++w) {
      const std::size_t word = next() % 2048;
      if (w > 0) text += ' ';
      text += syllables[word % 16];
      text += syllables[(word / 16) % 16];
      text += syllables[(word / 256) % 8];
    }
    out.push_back(std::move(text));
  }
  return out;
}

inline std::string quoted_list(const std::vector<std::string>& items, std::size_t from, std::size_t count) {
  std::string s = "[";
  for (std::size_t i = from; i < from + count; ++i) {
    if (i > from) s += ',';
    s += '"';
    s += items[i];
    s += '"';
  }
  return s + "]";
}

inline std::string call(std::size_t id, const std::string& inputs, bool base64) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"embed","params":{"inputs":)" + inputs +
         (base64 ? R"(,"encoding":"base64"})" : "}") + "}";
}

}  // namespace bench
