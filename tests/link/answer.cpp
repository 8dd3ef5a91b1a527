// SPDX-License-Identifier: MIT
// Defines answer(); built header-only or compiled, as the test says (see CMakeLists.txt).
#include "answer.hpp"

std::optional<std::string> answer(const rpc::Router& router, std::string_view message) {
  return router.handle(message);
}
