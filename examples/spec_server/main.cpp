// SPDX-License-Identifier: MIT
// spec_server: the JSON-RPC 2.0 specification's example methods, the built-ins and a
// cancellable `sleep`, served over stdio or HTTP (see --help). Every method is also a tool of
// the same name (`tools/list`, `tools/call`), beside the `batch` tool.
#include <chrono>

#include "../common/cancellable_sleep.hpp"
#include "../common/server_main.hpp"
#include "../common/spec_methods.hpp"

int main(int argc, char** argv) {
  return examples::run_server(argc, argv, "spec_server", [](rpc::Router& router) {
    spec::add_spec_methods(router);
    // Sleeps `ms` milliseconds unless cancelled first (then answered -32800).
    router.add("sleep", [](std::int64_t ms, rpc::Context& ctx) {
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));

    struct Described {
      const char* name;
      const char* description;
      const char* schema;  // nullptr: {"type":"object"}
    };
    const Described methods[] = {
        {"ping", "Echoes the nonce it is given.", R"({"type":"object","properties":{"nonce":{}}})"},
        {"info", "Describes the server and the capabilities this session is granted.", nullptr},
        {"subtract", "minuend - subtrahend.",
         R"({"type":"object","properties":{"minuend":{"type":"integer"},"subtrahend":{"type":"integer"}},)"
         R"("required":["minuend","subtrahend"]})"},
        {"sum", "Adds numbers given by position: arguments is an array of numbers.",
         R"({"type":"array","items":{"type":"number"}})"},
        {"update", "Accepts anything; answers null.", nullptr},
        {"notify_hello", "Accepts anything; answers null.", nullptr},
        {"get_data", R"(Answers ["hello", 5].)", nullptr},
        {"sleep", "Sleeps ms milliseconds unless cancelled.",
         R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]})"},
    };
    rpc::Tools tools{router};  // the registry lives on in the router's tools/list and tools/call
    for (const Described& m : methods) {
      tools.expose(m.name, {.description = m.description,
                            .input_schema = m.schema != nullptr ? rpc::json(m.schema) : rpc::Json{}});
    }
    tools.add_batch_tool();
  });
}
