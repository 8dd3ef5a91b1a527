// SPDX-License-Identifier: MIT
// The router the router, session and stream benchmarks serve: the built-in methods (`ping`)
// and the typed handlers of their other workloads.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <batchrpc/batchrpc.hpp>

namespace bench {

inline const rpc::Router& router() {
  static const rpc::Router r = [] {
    rpc::Router built(rpc::Limits{.max_batch = 100000});
    rpc::add_builtins(built);
    built.add("subtract", [](std::int64_t minuend, std::int64_t subtrahend) { return minuend - subtrahend; },
              rpc::names("minuend", "subtrahend"));
    built.add("order",
              [](std::string_view customer, int quantity, double price, bool express,
                 std::optional<std::string_view> note, const std::vector<int>& items) {
                return static_cast<double>(quantity) * price + (express ? 5.0 : 0.0) +
                       static_cast<double>(items.size() + customer.size() + (note ? note->size() : 0));
              },
              rpc::names("customer", "quantity", "price", "express", "note", "items"));
    built.add("length", [](std::string_view text) { return text.size(); }, rpc::names("text"));
    return built;
  }();
  return r;
}

}  // namespace bench
