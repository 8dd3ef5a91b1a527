// SPDX-License-Identifier: MIT
/// @file json_fields.hpp
/// Structs bound by their fields in one line: `BATCHRPC_FIELDS(Point, x, y)`.
/// Included by json_traits.hpp; you need not include it yourself.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "detail/compile_errors.hpp"
#include "detail/macro_for_each.hpp"
#include "json.hpp"
#include "json_traits.hpp"
#include "params.hpp"
#include "result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// One field of a struct: its name in JSON and the data member it binds.
template <class T, class M>
struct Field {
  std::string_view name;
  M T::*member;
};

/// How a struct bound by its fields is read.
struct FieldRules {
  /// When true, reading an object with a member no field names fails (`unknown field "z"`);
  /// when false such members are ignored.
  bool refuse_unknown = false;
  /// When true, a field the object does not have keeps the value the struct was
  /// default-constructed with; when false it is an error (`missing field "y"`), except for
  /// `std::optional` fields, which are always optional.
  bool absent_keeps_default = false;
};

/// A struct's fields, in the order they are written, and how they are read.
template <class T, class... M>
struct FieldList {
  std::tuple<Field<T, M>...> fields;
  FieldRules rules;
};

namespace detail {
// `Class::*member` names a data member of type M, as a field must.
template <class Class, class M>
constexpr void check_field_member() {
  if constexpr (std::is_function_v<M>) {
    [[maybe_unused]] field_names_a_member_function<M Class::*> error;
  }
  static_assert(!std::is_function_v<M>,
                "batchrpc: rpc::field names a data member (&Type::member), not a member function.");
}
}  // namespace detail

/// `rpc::field("inputSchema", &Tool::input_schema)`: a field whose JSON name differs from its
/// member's name.
template <class T, class M>
constexpr Field<T, M> field(std::string_view name, M T::*member) noexcept {
  detail::check_field_member<T, M>();
  return {name, member};
}

/// `rpc::field<Derived>("id", &Derived::id)`: a field that `T` inherits from a base class.
template <class T, class M, class Base>
  requires(!std::is_same_v<T, Base> && std::is_base_of_v<Base, T>)
constexpr Field<T, M> field(std::string_view name, M Base::*member) noexcept {
  detail::check_field_member<Base, M>();
  return {name, member};
}

/// The fields of `T`, returned by a `batchrpc_fields(rpc::TypeTag<T>)` function you write in
/// `T`'s namespace when BATCHRPC_FIELDS' member names are not the JSON names:
/// @code
/// constexpr auto batchrpc_fields(rpc::TypeTag<Tool>) {
///   return rpc::field_list<Tool>({}, rpc::field("name", &Tool::name),
///                                rpc::field("inputSchema", &Tool::input_schema));
/// }
/// @endcode
template <class T, class... M>
constexpr FieldList<T, M...> field_list(FieldRules rules, Field<T, M>... fields) noexcept {
  return {{fields...}, rules};
}

namespace detail {
template <class T>
concept has_fields = requires { batchrpc_fields(TypeTag<T>{}); };

template <class T>
using fields_of_t = decltype(batchrpc_fields(TypeTag<T>{}));

template <class T>
inline constexpr bool is_std_optional = false;
template <class T>
inline constexpr bool is_std_optional<std::optional<T>> = true;

// True when no two fields share a JSON name (a repeated name would write a key twice).
template <class T, class... M>
constexpr bool distinct_field_names(const FieldList<T, M...>& list) noexcept {
  return std::apply([](const auto&... field) {
    const std::array<std::string_view, sizeof...(M)> names{field.name...};
    for (std::size_t i = 0; i < names.size(); ++i) {
      for (std::size_t j = i + 1; j < names.size(); ++j) {
        if (names[i] == names[j]) return false;
      }
    }
    return true;
  }, list.fields);
}

// Reads and writes T through the FieldList its hook returns.
template <class T, class List = fields_of_t<T>>
struct FieldsCodec;

template <class T, class... M>
struct FieldsCodec<T, FieldList<T, M...>> {
  static constexpr std::size_t count = sizeof...(M);
  using List = FieldList<T, M...>;
  using Seen = std::array<bool, count>;
  enum class Outcome : unsigned char { unknown, read, failed };

  static bool read(const Value& v, T& out, std::string& why) {
    if (!v.IsObject()) return detail::refuse(why, "expected an object");
    const List list = batchrpc_fields(TypeTag<T>{});
    Seen seen{};
    for (const auto& member : v.GetObject()) {
      const std::string_view name(member.name.GetString(), member.name.GetStringLength());
      const Outcome outcome = read_member(list, name, member.value, out, seen, why, indices());
      if (outcome == Outcome::failed) return false;
      if (outcome == Outcome::unknown && list.rules.refuse_unknown) {
        return detail::refuse(why, "unknown field \"" + std::string(name) + "\"");
      }
    }
    if (list.rules.absent_keeps_default) return true;
    return check_missing(list, out, seen, why, indices());
  }

  // True, with `why`, when `v` cannot be a T at a glance: not an object, or without a field that
  // must be present. Reads nothing, so a std::variant can pass over T cheaply.
  static bool rejects_at_a_glance(const Value& v, std::string& why) {
    if (!v.IsObject()) {
      why = "expected an object";
      return true;
    }
    const List list = batchrpc_fields(TypeTag<T>{});
    if (list.rules.absent_keeps_default) return false;
    return std::apply([&](const auto&... field) { return (lacks(v, field, why) || ...); }, list.fields);
  }

  static void write(ResultWriter& w, const T& value) {
    const List list = batchrpc_fields(TypeTag<T>{});
    w.start_object();
    std::apply([&](const auto&... field) { (write_field(w, field, value), ...); }, list.fields);
    w.end_object();
  }

 private:
  static constexpr auto indices() { return std::index_sequence_for<M...>{}; }

  template <std::size_t... I>
  static Outcome read_member([[maybe_unused]] const List& list, [[maybe_unused]] std::string_view name,
                             [[maybe_unused]] const Value& v, [[maybe_unused]] T& out,
                             [[maybe_unused]] Seen& seen, [[maybe_unused]] std::string& why,
                             std::index_sequence<I...>) {
    Outcome outcome = Outcome::unknown;
    // The first field with this name reads it; `||` stops there.
    static_cast<void>(((std::get<I>(list.fields).name == name &&
                        (outcome = read_field(std::get<I>(list.fields), v, out, seen[I], why), true)) ||
                       ...));
    return outcome;
  }

  template <class F>
  static Outcome read_field(const F& field, const Value& v, T& out, bool& seen, std::string& why) {
    if (seen) return why = "duplicate field \"" + std::string(field.name) + "\"", Outcome::failed;
    seen = true;
    using Member = std::remove_cvref_t<decltype(out.*field.member)>;
    constexpr bool is_const = std::is_const_v<std::remove_reference_t<decltype(out.*field.member)>>;
    if constexpr (is_const) {
      [[maybe_unused]] struct_field_is_const<T, Member> error;
    }
    static_assert(!is_const, "batchrpc: a const data member cannot be read from JSON; drop `const`.");
    if constexpr (!JsonReadable<Member>) {
      using Part = unreadable_part_t<Member>;
      if constexpr (read_misdeclared<Part>) {
        refuse_misdeclared_read<Part, Member>();
      } else {
        if constexpr (std::is_same_v<Part, Member>) {
          [[maybe_unused]] struct_field_has_no_json_binding<T, Part> error;
        } else {
          [[maybe_unused]] struct_field_has_no_json_binding<T, Part, Member> error;
        }
        static_assert(JsonReadable<Member>,
                      "batchrpc: a field's type cannot be read from JSON. Bind it with "
                      "BATCHRPC_FIELDS or BATCHRPC_ENUM, or specialise rpc::JsonTraits<T>. Maps "
                      "need string keys; a char is not a number here (use std::string or "
                      "std::int8_t).");
      }
    }
    // Checked only of a readable member: one error at a time.
    constexpr bool elements_ok =
        !JsonReadable<Member> || parts_default_constructible<Member>::value;
    if constexpr (!elements_ok) {
      using Part = typename part_at_fault<default_readable, Member>::type;
      [[maybe_unused]] struct_field_element_must_be_default_constructible<T, Part, Member> error;
    }
    static_assert(elements_ok,
                  "batchrpc: a field's elements must be default-constructible: each is read into "
                  "a default-constructed value. Give the element type a default constructor (an "
                  "aggregate with default member initialisers has one).");
    if constexpr (is_const || !JsonReadable<Member> || !elements_ok) {
      return Outcome::failed;  // refused above: no follow-on errors from reading it
    } else {
      if (JsonTraits<Member>::read(v, out.*field.member, why)) return Outcome::read;
      why = detail::at_field(field.name, why);
      return Outcome::failed;
    }
  }

  template <std::size_t... I>
  static bool check_missing(const List& list, T& out, const Seen& seen, std::string& why,
                            std::index_sequence<I...>) {
    return (check_one(std::get<I>(list.fields), out, seen[I], why) && ...);
  }

  template <class F>
  static bool check_one(const F& field, T& out, bool seen, std::string& why) {
    if (seen) return true;
    using Member = std::remove_cvref_t<decltype(out.*field.member)>;
    if constexpr (is_std_optional<Member>) {
      (out.*field.member).reset();
      return true;
    } else {
      return detail::refuse(why, "missing field \"" + std::string(field.name) + "\"");
    }
  }

  template <class F>
  static bool lacks(const Value& object, const F& field, std::string& why) {
    using Member = std::remove_cvref_t<decltype(std::declval<T&>().*field.member)>;
    if constexpr (is_std_optional<Member>) {
      return false;
    } else {
      if (Params(&object).find(field.name) != nullptr) return false;
      why = "missing field \"" + std::string(field.name) + "\"";
      return true;
    }
  }

  template <class F>
  static void write_field(ResultWriter& w, const F& field, const T& value) {
    const auto& member = value.*field.member;
    using Member = std::remove_cvref_t<decltype(member)>;
    if constexpr (!JsonWritable<Member>) {
      using Part = unwritable_part_t<Member>;
      if constexpr (write_misdeclared<Part>) {
        refuse_misdeclared_write<Part, Member>();
      } else {
        if constexpr (std::is_same_v<Part, Member>) {
          [[maybe_unused]] struct_field_has_no_json_form<T, Part> error;
        } else {
          [[maybe_unused]] struct_field_has_no_json_form<T, Part, Member> error;
        }
        static_assert(JsonWritable<Member>,
                      "batchrpc: a field's type has no JSON form. Bind it with BATCHRPC_FIELDS or "
                      "BATCHRPC_ENUM, or specialise rpc::JsonTraits<T> with a write() function. "
                      "Maps need string keys; a char is not a number here (use std::string or "
                      "std::int8_t).");
      }
    }
    if constexpr (JsonWritable<Member>) {  // else refused above: no follow-on errors
      if constexpr (is_std_optional<Member>) {
        if (!member) return;  // an empty optional is left out, as an absent one is read
      }
      w.key(field.name);
      w.write(member);
    }
  }
};

// A list with a member function among its fields, which rpc::field has refused already: reads
// and writes nothing, so that refusal is the only error.
template <class T, class... M>
  requires(std::is_function_v<M> || ...)
struct FieldsCodec<T, FieldList<T, M...>> {
  static bool read(const Value&, T&, std::string&) { return false; }
  static bool rejects_at_a_glance(const Value&, std::string&) { return true; }
  static void write(ResultWriter&, const T&) {}
};
}  // namespace detail

/// Types with a `batchrpc_fields` hook (written by BATCHRPC_FIELDS) bind as JSON objects.
template <class T>
  requires detail::has_fields<T>
struct JsonTraits<T> : detail::FieldsCodec<T> {};

template <class T>
bool detail::rejects_at_a_glance(const Value& v, std::string& why) {
  if constexpr (has_fields<T>) {
    if constexpr (std::is_base_of_v<FieldsCodec<T>, JsonTraits<T>>) return FieldsCodec<T>::rejects_at_a_glance(v, why);
  }
  static_cast<void>(v);
  static_cast<void>(why);
  return false;
}

}  // namespace rpc

#define BATCHRPC_DETAIL_FIELD(Type, member) ::rpc::field<Type>(#member, &Type::member)
// The last check looks the hook up as the library does, by argument-dependent lookup: it fails
// when the macro is written outside the type's namespace, where the hook would never be found.
#define BATCHRPC_DETAIL_FIELDS(Type, rules, ...)                                              \
  static_assert(::std::is_class_v<Type>,                                                      \
                "batchrpc: BATCHRPC_FIELDS binds a struct or class, and " #Type " is not one " \
                "(bind an enum with BATCHRPC_ENUM)");                                         \
  [[maybe_unused]] constexpr auto batchrpc_fields(::rpc::TypeTag<Type>) noexcept {            \
    return ::rpc::field_list<Type>(                                                           \
        ::rpc::FieldRules rules __VA_OPT__(, BATCHRPC_DETAIL_FOR_EACH(BATCHRPC_DETAIL_FIELD, Type, __VA_ARGS__))); \
  }                                                                                           \
  static_assert(::rpc::detail::distinct_field_names(batchrpc_fields(::rpc::TypeTag<Type>{})), \
                "batchrpc: two fields of " #Type " have the same name");                      \
  static_assert(::rpc::detail::has_fields<Type>,                                              \
                "batchrpc: write BATCHRPC_FIELDS(" #Type ", ...) in the namespace that declares " \
                #Type ": the library cannot find it anywhere else")

/**
 * Binds a struct to a JSON object by its data members, for params and results alike:
 * @code
 * namespace geo {
 * struct Point { double x = 0, y = 0; std::optional<std::string> label; };
 * BATCHRPC_FIELDS(Point, x, y, label);
 * }
 * @endcode
 * Write it after the struct, in the struct's namespace (not inside the struct), naming public
 * data members. Each member binds as its type does: nested structs, containers and every
 * `rpc::JsonTraits` type work. Reading needs every field except `std::optional` ones (absent or
 * `null`: `std::nullopt`; see BATCHRPC_FIELDS_DEFAULTED for defaults), refuses a field given
 * twice, ignores members it does not know (see BATCHRPC_FIELDS_STRICT), and says where a value
 * is wrong (`"element 1: y: expected a number"`). Writing gives the fields in the order listed
 * and leaves out empty optionals. The struct must be default-constructible.
 */
#define BATCHRPC_FIELDS(Type, ...) BATCHRPC_DETAIL_FIELDS(Type, {} __VA_OPT__(, __VA_ARGS__))

/// As BATCHRPC_FIELDS, but reading refuses an object with a member no field names
/// (`unknown field "z"`).
#define BATCHRPC_FIELDS_STRICT(Type, ...) \
  BATCHRPC_DETAIL_FIELDS(Type, {.refuse_unknown = true} __VA_OPT__(, __VA_ARGS__))

/// As BATCHRPC_FIELDS, but a field the object does not have keeps the struct's default value
/// (`int quantity = 1;` reads as 1 when `quantity` is absent) instead of being an error.
#define BATCHRPC_FIELDS_DEFAULTED(Type, ...) \
  BATCHRPC_DETAIL_FIELDS(Type, {.absent_keeps_default = true} __VA_OPT__(, __VA_ARGS__))
