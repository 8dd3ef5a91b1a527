// SPDX-License-Identifier: MIT
/// @file json_enums.hpp
/// Enums bound by name (`BATCHRPC_ENUM(Color, red, green)`) or, without names, as integers.
/// Included by json_traits.hpp; you need not include it yourself.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "config.hpp"
#include "detail/macro_for_each.hpp"
#include "json_traits.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// One enumerator and the string that stands for it in JSON.
template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

namespace detail {
template <class E>
concept has_enum_names = requires { batchrpc_enum_names(TypeTag<E>{}); };

// The type an enum without names travels as: its underlying type, with `char` types as the
// integers they are (JsonTraits<char> does not exist: a char is not a number to most readers).
template <class U>
struct enum_number {
  using type = std::conditional_t<std::is_signed_v<U>, std::make_signed_t<U>, std::make_unsigned_t<U>>;
};
template <>
struct enum_number<bool> {
  using type = bool;
};

// True when no two entries of an enum's name table share a name.
template <class E, std::size_t N>
constexpr bool distinct_enum_names(const std::array<EnumName<E>, N>& names) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    for (std::size_t j = i + 1; j < N; ++j) {
      if (names[i].name == names[j].name) return false;
    }
  }
  return true;
}

template <class E>
std::string enum_choices(const auto& names) {
  std::string list = "expected one of";
  const char* separator = " ";
  for (const EnumName<E>& n : names) {
    list.append(separator).append("\"").append(n.name).append("\"");
    separator = ", ";
  }
  return list;
}
}  // namespace detail

/**
 * Enums. With a `batchrpc_enum_names` hook (written by BATCHRPC_ENUM, or by hand returning a
 * range of `rpc::EnumName<E>`) an enum is its name as a JSON string, and reading any other
 * string fails with the list of names; writing a value the table does not name throws
 * `std::logic_error` (the call is answered -32603). Without one, an enum is its underlying
 * integer, range-checked against the underlying type (not against the enumerators).
 */
template <class E>
  requires std::is_enum_v<E>
struct JsonTraits<E> {
  using Number = typename detail::enum_number<std::underlying_type_t<E>>::type;

  static bool read(const Value& v, E& out, std::string& why) {
    if constexpr (detail::has_enum_names<E>) {
      const auto names = batchrpc_enum_names(TypeTag<E>{});
      if (v.IsString()) {
        const std::string_view text(v.GetString(), v.GetStringLength());
        for (const EnumName<E>& n : names) {
          if (n.name == text) return out = n.value, true;
        }
      }
      return detail::refuse(why, detail::enum_choices<E>(names));
    } else {
      Number i{};
      if (!JsonTraits<Number>::read(v, i, why)) return false;
      out = static_cast<E>(i);
      return true;
    }
  }

  static void write(ResultWriter& w, E value) {
    if constexpr (detail::has_enum_names<E>) {
      for (const EnumName<E>& n : batchrpc_enum_names(TypeTag<E>{})) {
        if (n.value == value) return w.string(n.name);
      }
      throw std::logic_error("batchrpc: an enum value with no name in its BATCHRPC_ENUM table");
    } else {
      JsonTraits<Number>::write(w, static_cast<Number>(value));
    }
  }
};

}  // namespace rpc

#define BATCHRPC_DETAIL_ENUMERATOR(Type, name) ::rpc::EnumName<Type>{Type::name, #name}

/**
 * Binds an enum to JSON strings named as its enumerators:
 * @code
 * enum class Color { red, green, blue };
 * BATCHRPC_ENUM(Color, red, green, blue);   // "red", "green", "blue"
 * @endcode
 * Write it after the enum, in the enum's namespace. Enumerators left out cannot be read, and
 * writing them throws.
 */
#define BATCHRPC_ENUM(Type, ...)                                                           \
  static_assert(::std::is_enum_v<Type>, "batchrpc: BATCHRPC_ENUM binds an enum, and " #Type  \
                " is not one (bind a struct with BATCHRPC_FIELDS)");                      \
  [[maybe_unused]] constexpr auto batchrpc_enum_names(::rpc::TypeTag<Type>) noexcept {     \
    return ::std::array{BATCHRPC_DETAIL_FOR_EACH(BATCHRPC_DETAIL_ENUMERATOR, Type, __VA_ARGS__)}; \
  }                                                                                        \
  static_assert(::rpc::detail::distinct_enum_names(batchrpc_enum_names(::rpc::TypeTag<Type>{})), \
                "batchrpc: two enumerators of " #Type " are listed twice");               \
  static_assert(::rpc::detail::has_enum_names<Type>,                                       \
                "batchrpc: write BATCHRPC_ENUM(" #Type ", ...) in the namespace that declares " \
                #Type ": the library cannot find it anywhere else")
