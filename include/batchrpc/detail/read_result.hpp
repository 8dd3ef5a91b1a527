// SPDX-License-Identifier: MIT
// Reading a peer's result into a new T, shared by Replies::result<T> and Reply::as<T>. A T that
// cannot be read is refused at compile time by name: one with no read, or one the read cannot
// make (T, or an element of it, with no default constructor).
#pragma once

#include <exception>
#include <string>
#include <type_traits>

#include "../config.hpp"
#include "../json.hpp"
#include "../json_traits.hpp"
#include "compile_errors.hpp"
#include "json_parts.hpp"
#include "owns_its_data.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Whether read_result<T> compiles.
template <class T>
inline constexpr bool readable_result = JsonReadable<T> && default_readable<T>::value;

// Refuses a T that may hold views into the JSON it is read from, where the T outlives that JSON
// (Reply::as<T>, result<T> on a temporary Replies). A T that cannot be read at all is refused
// by read_result instead, by its own name.
template <class T>
constexpr void check_outlives_its_json() {
  constexpr bool owns = !readable_result<T> || owns_its_data<T>::value;
  if constexpr (!owns) {
    using Part = viewing_part_t<T>;
    if constexpr (std::is_same_v<Part, T>) {
      [[maybe_unused]] type_may_view_a_reply_that_is_gone<Part> error;
    } else {
      [[maybe_unused]] type_may_view_a_reply_that_is_gone<Part, T> error;
    }
  }
  static_assert(owns,
                "batchrpc: this result outlives the reply it is read from (Reply::as<T>(), or "
                "result<T>() on a temporary Replies), so T must own its data: std::string, not "
                "std::string_view. Keep the Replies in a variable, or read Reply::result() "
                "yourself, to keep views; a type with its own rpc::JsonTraits<T> that owns its "
                "data says so with `static constexpr bool owns_its_data = true;`.");
}

// `v` read as a T; `refuse(why)`, which must throw, when it does not fit.
template <class T, class Refuse>
T read_result(const Value& v, Refuse&& refuse) {
  if constexpr (!JsonReadable<T>) {
    using Part = unreadable_part_t<T>;
    if constexpr (read_misdeclared<Part>) {
      refuse_misdeclared_read<Part, T>();
    } else {
      if constexpr (std::is_same_v<Part, T>) {
        [[maybe_unused]] type_has_no_json_binding_for<Part> error;
      } else {
        [[maybe_unused]] type_has_no_json_binding_for<Part, T> error;
      }
      static_assert(JsonReadable<T>,
                    "batchrpc: a result read as T needs rpc::JsonTraits<T>::read. Use a number, "
                    "a string, a standard container, rpc::Json, a struct or enum bound with "
                    "BATCHRPC_FIELDS or BATCHRPC_ENUM, or specialise rpc::JsonTraits<T> with "
                    "read(). Maps need string keys; a char is not a number here (use "
                    "std::string or std::int8_t).");
    }
    std::terminate();  // never in a program: the static_assert above fails
  } else if constexpr (!default_readable<T>::value) {
    using Part = typename part_at_fault<default_readable, T>::type;
    if constexpr (std::is_same_v<Part, T>) {
      [[maybe_unused]] result_type_must_be_default_constructible<Part> error;
    } else {
      [[maybe_unused]] result_type_must_be_default_constructible<Part, T> error;
    }
    static_assert(default_readable<T>::value,
                  "batchrpc: a result is read into a default-constructed T, and each element of "
                  "it likewise. Give the type a default constructor (an aggregate with default "
                  "member initialisers has one).");
    std::terminate();  // never in a program: the static_assert above fails
  } else {
    T out{};
    std::string why;
    if (!JsonTraits<T>::read(v, out, why)) refuse(why);
    return out;
  }
}

}  // namespace rpc::detail
