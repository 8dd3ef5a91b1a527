// SPDX-License-Identifier: MIT
// The parts a standard type's JSON binding is made of: a container's elements, a string map's
// values, the members of a pair, tuple or variant. A failed binding check follows them to the
// part at fault, so that a `std::map<std::string, std::vector<app::Point>>` parameter is
// reported as `app::Point`, the type the user has to bind, and not as the map.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

template <class... T>
struct type_list {};

// Each specialisation mirrors a JsonTraits specialisation that binds a type exactly when all of
// these parts bind. A type not listed has no parts: it is at fault itself.
template <class T>
struct json_parts {
  using type = type_list<>;
};
template <class T, class A>
struct json_parts<std::vector<T, A>> {
  using type = type_list<T>;
};
template <class T>
struct json_parts<std::optional<T>> {
  using type = type_list<T>;
};
template <class T, std::size_t N>
struct json_parts<std::array<T, N>> {
  using type = type_list<T>;
};
template <class T, class C, class A>
struct json_parts<std::set<T, C, A>> {
  using type = type_list<T>;
};
template <class T, class H, class E, class A>
struct json_parts<std::unordered_set<T, H, E, A>> {
  using type = type_list<T>;
};
template <class T, class C, class A>
struct json_parts<std::map<std::string, T, C, A>> {
  using type = type_list<T>;
};
template <class T, class H, class E, class A>
struct json_parts<std::unordered_map<std::string, T, H, E, A>> {
  using type = type_list<T>;
};
template <class A, class B>
struct json_parts<std::pair<A, B>> {
  using type = type_list<A, B>;
};
template <class... T>
struct json_parts<std::tuple<T...>> {
  using type = type_list<T...>;
};
template <class... T>
struct json_parts<std::variant<T...>> {
  using type = type_list<T...>;
};
// Written only: a span has no read, whatever its elements.
template <class T, std::size_t Extent>
struct json_parts<std::span<T, Extent>> {
  using type = type_list<std::remove_cv_t<T>>;
};

// The part of `T` that `Fits` refuses: the part at fault of T's first part that does not fit,
// or T itself when every part fits (or it has none). `Fits` is only asked of T's parts, so
// this is only worth asking once T is known not to fit.
template <template <class> class Fits, class T, class Parts = typename json_parts<T>::type>
struct part_at_fault {
  using type = T;
};
template <template <class> class Fits, class T, class First, class... Rest>
struct part_at_fault<Fits, T, type_list<First, Rest...>>
    : std::conditional_t<Fits<First>::value, part_at_fault<Fits, T, type_list<Rest...>>,
                         part_at_fault<Fits, First>> {};

// Whether every value a read of `T` makes can be default-constructed: T's parts and, in turn,
// theirs (a container's read default-constructs each element, then reads into it). T itself
// is not asked: a struct's field is read into in place.
template <class T, class Parts = typename json_parts<T>::type>
struct parts_default_constructible;
template <class T, class... P>
struct parts_default_constructible<T, type_list<P...>>
    : std::bool_constant<(
          (std::is_default_constructible_v<P> && parts_default_constructible<P>::value) && ...)> {};

// T, and every value a read of it makes, can be default-constructed: what reading a parameter
// or a result into a new T needs.
template <class T>
struct default_readable : std::bool_constant<std::is_default_constructible_v<T> &&
                                             parts_default_constructible<T>::value> {};

}  // namespace rpc::detail
