// SPDX-License-Identifier: MIT
// owns_its_data<T>: T holds no pointer into the JSON it was bound from, so a T read from a
// document may outlive that document (Replies::result<T>() on a temporary, Reply::as<T>()).
#pragma once

#include <array>
#include <concepts>
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
#include "json_parts.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

template <class T, class... List>
inline constexpr bool listed_in = (std::is_same_v<T, List> || ...);

// The answer for T, given the types whose answer is being worked out further up (`Seen`).
template <class T, class Seen>
struct owns_its_data_given;

// Whether T owns its data. A type met again inside itself (a `Node` holding
// `std::vector<Node>`) is taken to: any part of it that does not own its data is also reached
// without going round the cycle, and refuses the whole there.
template <class T, class Seen = type_list<>>
struct owns_its_data;
template <class T, class... Seen>
struct owns_its_data<T, type_list<Seen...>>
    : std::conditional_t<listed_in<T, Seen...>, std::true_type,
                         owns_its_data_given<T, type_list<Seen..., T>>> {};

template <class Seen, class... T>
inline constexpr bool all_own_their_data = (owns_its_data<T, Seen>::value && ...);

// A type that does not read at all is refused for that, by its own name, wherever it is read:
// it is not also refused here.
template <class T, class Seen>
struct owns_its_data_given
    : std::bool_constant<!JsonReadable<T> || std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                         std::is_same_v<T, std::string> || std::is_same_v<T, Json> ||
                         std::is_same_v<T, std::monostate>> {};

template <class T, class Seen>
struct owns_its_data_given<std::optional<T>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class T, class A, class Seen>
struct owns_its_data_given<std::vector<T, A>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class T, std::size_t N, class Seen>
struct owns_its_data_given<std::array<T, N>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class T, class C, class A, class Seen>
struct owns_its_data_given<std::set<T, C, A>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class T, class H, class E, class A, class Seen>
struct owns_its_data_given<std::unordered_set<T, H, E, A>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class T, class C, class A, class Seen>
struct owns_its_data_given<std::map<std::string, T, C, A>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class T, class H, class E, class A, class Seen>
struct owns_its_data_given<std::unordered_map<std::string, T, H, E, A>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T>> {};
template <class A, class B, class Seen>
struct owns_its_data_given<std::pair<A, B>, Seen>
    : std::bool_constant<all_own_their_data<Seen, A, B>> {};
template <class... T, class Seen>
struct owns_its_data_given<std::tuple<T...>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T...>> {};
template <class... T, class Seen>
struct owns_its_data_given<std::variant<T...>, Seen>
    : std::bool_constant<all_own_their_data<Seen, T...>> {};

// A type with its own JsonTraits says whether it owns its data, or is taken not to.
template <class T>
concept declares_owns_its_data = requires {
  { JsonTraits<T>::owns_its_data } -> std::convertible_to<bool>;
};
template <class T, class Seen>
  requires(!has_fields<T> && declares_owns_its_data<T>)
struct owns_its_data_given<T, Seen> : std::bool_constant<bool{JsonTraits<T>::owns_its_data}> {};

// A struct bound by its fields owns its data when every field does.
template <class List, class Seen>
struct fields_own_their_data;
template <class T, class... M, class Seen>
struct fields_own_their_data<FieldList<T, M...>, Seen>
    : std::bool_constant<all_own_their_data<Seen, std::remove_cv_t<M>...>> {};
template <class T, class Seen>
  requires(has_fields<T>)
struct owns_its_data_given<T, Seen> : fields_own_their_data<fields_of_t<T>, Seen> {};

// owns_its_data with one parameter, for part_at_fault.
template <class T>
struct owning : owns_its_data<T> {};

// The part a check names when `T` may hold a view: the element at fault inside a container.
template <class T>
using viewing_part_t = typename part_at_fault<owning, T>::type;

}  // namespace rpc::detail
