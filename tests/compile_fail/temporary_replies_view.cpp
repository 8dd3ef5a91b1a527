// SPDX-License-Identifier: MIT
// A result that may hold views into the reply is refused on a temporary Replies, whatever
// container the view hides in; owning types are fine.
// expect-error: type_may_view_a_reply_that_is_gone<std::basic_string_view<char>, std::vector<std::basic_string_view<char
// expect-error: this result outlives the reply it is read from
#include <batchrpc/client.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

std::size_t first_length(const rpc::BatchBuilder& batch, std::string_view reply) {
#if BATCHRPC_TEST_FAILING_CODE
  return rpc::correlate(batch, reply).result<std::vector<std::string_view>>(1).front().size();
#else
  return rpc::correlate(batch, reply).result<std::vector<std::optional<std::string>>>(1).front()->size();
#endif
}
