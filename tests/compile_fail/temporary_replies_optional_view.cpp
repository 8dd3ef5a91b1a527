// SPDX-License-Identifier: MIT
// An optional view is refused on a temporary Replies too.
// expect-error: type_may_view_a_reply_that_is_gone<std::basic_string_view<char>, std::optional<std::basic_string_view<char
// expect-error: this result outlives the reply it is read from
#include <batchrpc/client.hpp>

#include <optional>
#include <string>
#include <string_view>

std::size_t length(const rpc::BatchBuilder& batch, std::string_view reply) {
#if BATCHRPC_TEST_FAILING_CODE
  return rpc::correlate(batch, reply).result<std::optional<std::string_view>>(1)->size();
#else
  return rpc::correlate(batch, reply).result<std::optional<std::string>>(1)->size();
#endif
}
