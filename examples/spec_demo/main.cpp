// SPDX-License-Identifier: MIT
// Walks through the JSON-RPC 2.0 specification's examples: each request and batchrpc's reply.
#include <iostream>

#include <batchrpc/batchrpc.hpp>

#include "../common/spec_examples.hpp"
#include "../common/spec_methods.hpp"

int main() {
  rpc::Router router;
  spec::add_spec_methods(router);

  auto show = [&](const spec::Example& example) {
    std::cout << "# " << example.title << "\n--> " << example.message << "\n";
    if (auto reply = router.handle(example.message)) {
      std::cout << "<-- " << *reply << "\n\n";
    } else {
      std::cout << "(nothing sent)\n\n";
    }
  };
  for (const auto& example : spec::examples) show(example);
  show(spec::notification_batch);
}
