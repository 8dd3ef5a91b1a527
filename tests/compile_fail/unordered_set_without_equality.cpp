// SPDX-License-Identifier: MIT
// A std::unordered_set field of a type with a hash but no operator== names that type and the
// set, instead of an error from inside the standard library's hash table. (With no std::hash
// at all the set cannot be constructed, and the struct is refused as not default-constructible.)
// expect-error: set_element_has_no_order_or_hash_for<app::Tag, std::unordered_set<app::Tag
// expect-error: a set is read by inserting each element
// reject-output: no match for
#include <batchrpc/router.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_set>

namespace app {
struct Tag {
  std::string name;
#if !BATCHRPC_TEST_FAILING_CODE
  friend bool operator==(const Tag&, const Tag&) = default;
#endif
};
BATCHRPC_FIELDS(Tag, name);
}  // namespace app

template <>
struct std::hash<app::Tag> {
  std::size_t operator()(const app::Tag& tag) const noexcept {
    return std::hash<std::string>{}(tag.name);
  }
};

namespace app {
struct Post {
  std::unordered_set<Tag> tags;
};
BATCHRPC_FIELDS(Post, tags);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("tag_count", [](const app::Post& post) { return post.tags.size(); });
}
