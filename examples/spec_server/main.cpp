// SPDX-License-Identifier: MIT
// spec_server: the JSON-RPC 2.0 specification's example methods, the built-ins and a
// cancellable `sleep`, served over stdio or HTTP (see --help).
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "../common/server_main.hpp"
#include "../common/spec_methods.hpp"

int main(int argc, char** argv) {
  return examples::run_server(argc, argv, "spec_server", [](rpc::Router& router) {
    spec::add_spec_methods(router);
    // Sleeps `ms` milliseconds unless cancelled first (then answered -32800).
    router.add("sleep", [](std::int64_t ms, rpc::Context& ctx) {
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock lock(m);
      cv.wait_for(lock, ctx.stop_token(), std::chrono::milliseconds(ms), [] { return false; });
      if (ctx.stop_requested()) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
  });
}
