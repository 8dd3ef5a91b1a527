// SPDX-License-Identifier: MIT
// Calls answer() from a translation unit built in compiled mode.
#include <iostream>

#include "answer.hpp"

int main() {
  rpc::Router router;
  router.add("add", [](int a, int b) { return a + b; });
  std::cout << answer(router, R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})").value_or("") << "\n";
}
