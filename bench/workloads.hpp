// SPDX-License-Identifier: MIT
// The messages every router in the benchmarks is measured on, generated in code.
#pragma once

#include <cstddef>
#include <string>

namespace bench {

inline std::string ping(std::size_t i) {
  return R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":)" + std::to_string(i) + R"(},"id":)" +
         std::to_string(i) + "}";
}

// A ping whose id is a string with an escape ("req\/7" is "req/7"): one backslash anywhere
// sends the whole message through the parser's copying (unescaping) path.
inline std::string ping_with_escape(std::size_t i) {
  return R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":)" + std::to_string(i) + R"(},"id":"req\/)" +
         std::to_string(i) + "\"}";
}

inline std::string subtract(std::size_t i, bool named) {
  std::string s = R"({"jsonrpc":"2.0","method":"subtract","params":)";
  s += named ? R"({"subtrahend":23,"minuend":)" : "[";
  s += std::to_string(i);
  s += named ? "}" : ",23]";
  s += R"(,"id":)";
  s += std::to_string(i);
  s += "}";
  return s;
}

// A batch of `n` members made by `member`; a singleton when n == 1.
template <class F>
std::string batch(std::size_t n, F&& member) {
  if (n == 1) return member(0);
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += member(i);
  }
  return s + "]";
}

}  // namespace bench
