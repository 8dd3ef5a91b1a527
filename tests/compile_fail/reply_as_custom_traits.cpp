// SPDX-License-Identifier: MIT
// Reply::as<T> of a type with its own JsonTraits is refused until the traits say the type owns
// its data, and the message says how to say so.
// expect-error: type_may_view_a_reply_that_is_gone<app::Celsius>
// expect-error: static constexpr bool owns_its_data = true;
#include <batchrpc/peer.hpp>

#include <string>

namespace app {
struct Celsius {
  double degrees = 0;
};
}  // namespace app

template <>
struct rpc::JsonTraits<app::Celsius> {
#if !BATCHRPC_TEST_FAILING_CODE
  static constexpr bool owns_its_data = true;
#endif
  static bool read(const rpc::Value& v, app::Celsius& out, std::string& why) {
    if (!v.IsNumber()) return why = "expected a number", false;
    out.degrees = v.GetDouble();
    return true;
  }
};

double degrees(const rpc::Reply& reply) { return reply.as<app::Celsius>().degrees; }
