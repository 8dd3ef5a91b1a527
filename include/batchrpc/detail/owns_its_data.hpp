// SPDX-License-Identifier: MIT
// owns_its_data<T>: T holds no pointer into the JSON it was bound from, so a T read from a
// document may outlive that document (Replies::result<T>() on a temporary, Reply::as<T>()).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "../config.hpp"
#include "../json.hpp"
#include "../json_traits.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// `Depth` bounds the look through nested and recursive types: a type still unresolved at the
// bottom is taken not to own its data (a refusal is safe; a dangling view is not).
template <class T, int Depth = 16>
struct owns_its_data : std::bool_constant<std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                                          std::is_same_v<T, std::string> || std::is_same_v<T, Json> ||
                                          std::is_same_v<T, std::monostate>> {};

template <class T>
struct owns_its_data<T, 0> : std::false_type {};

template <int Depth, class... T>
inline constexpr bool all_own_their_data = (owns_its_data<T, Depth - 1>::value && ...);

template <class T, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::optional<T>, Depth> : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class T, class A, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::vector<T, A>, Depth> : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class T, std::size_t N, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::array<T, N>, Depth> : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class T, class C, class A, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::set<T, C, A>, Depth> : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class T, class H, class E, class A, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::unordered_set<T, H, E, A>, Depth> : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class T, class C, class A, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::map<std::string, T, C, A>, Depth> : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class T, class H, class E, class A, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::unordered_map<std::string, T, H, E, A>, Depth>
    : std::bool_constant<all_own_their_data<Depth, T>> {};
template <class A, class B, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::pair<A, B>, Depth> : std::bool_constant<all_own_their_data<Depth, A, B>> {};
template <class... T, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::tuple<T...>, Depth> : std::bool_constant<all_own_their_data<Depth, T...>> {};
template <class... T, int Depth>
  requires(Depth > 0)
struct owns_its_data<std::variant<T...>, Depth> : std::bool_constant<all_own_their_data<Depth, T...>> {};

// A struct bound by its fields owns its data when every field does.
template <class List, int Depth>
struct fields_own_their_data;
template <class T, class... M, int Depth>
struct fields_own_their_data<FieldList<T, M...>, Depth>
    : std::bool_constant<all_own_their_data<Depth, std::remove_cv_t<M>...>> {};
template <class T, int Depth>
  requires(Depth > 0 && has_fields<T>)
struct owns_its_data<T, Depth> : fields_own_their_data<fields_of_t<T>, Depth> {};

}  // namespace rpc::detail
