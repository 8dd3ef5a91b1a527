// SPDX-License-Identifier: MIT
// The example methods of the JSON-RPC 2.0 specification (§7), shared by the examples and tests.
#pragma once

#include <cstdint>

#include <batchrpc/batchrpc.hpp>

namespace spec {

/// Registers `subtract`, `sum`, `update`, `notify_hello` and `get_data` on `router`.
inline void add_spec_methods(rpc::Router& router) {
  // Positional ([42, 23]) and named ({"minuend": 42, "subtrahend": 23}).
  router.add("subtract",
             [](std::int64_t minuend, std::int64_t subtrahend) { return minuend - subtrahend; },
             rpc::names("minuend", "subtrahend"));

  // Any number of numbers: an integer sum while it fits, a floating-point one otherwise.
  router.add("sum", [](const rpc::Params& params, rpc::ResultWriter& out) {
    if (!params.absent() && !params.is_array()) {
      throw rpc::Error(rpc::ErrorCode::invalid_params, "sum takes an array of numbers");
    }
    std::int64_t exact = 0;
    double approximate = 0;
    bool integral = true;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const rpc::Value& v = *params.at(i);
      if (!v.IsNumber()) {
        throw rpc::Error(rpc::ErrorCode::invalid_params, "sum takes an array of numbers",
                         rpc::json(R"({"param":)" + std::to_string(i) +
                                   R"(,"reason":"expected a number"})"));
      }
      approximate += v.GetDouble();
      integral = integral && v.IsInt64() && !__builtin_add_overflow(exact, v.GetInt64(), &exact);
    }
    if (integral) {
      out.integer(exact);
    } else {
      out.number(approximate);
    }
  });

  // Notifications in the specification's examples: they accept anything and answer nothing.
  router.add("update", [](const rpc::Params&) {});
  router.add("notify_hello", [](const rpc::Params&) {});

  router.add("get_data", [](rpc::ResultWriter& out) {
    out.start_array();
    out.string("hello");
    out.integer(5);
    out.end_array();
  });
}

}  // namespace spec
