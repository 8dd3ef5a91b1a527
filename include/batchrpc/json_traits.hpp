// SPDX-License-Identifier: MIT
/// @file json_traits.hpp
/// `rpc::JsonTraits<T>`: how C++ types are read from params and written as results.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config.hpp"
#include "detail/compile_errors.hpp"
#include "detail/json_parts.hpp"
#include "detail/param_errors.hpp"
#include "json.hpp"
#include "result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * How a C++ type maps to JSON. Most types need no code: bind a struct by its fields with
 * `BATCHRPC_FIELDS(Point, x, y)` and an enum by its names with `BATCHRPC_ENUM(Color, red, green)`
 * (json_fields.hpp, json_enums.hpp). For any other mapping, specialise it:
 *
 * @code
 * template <> struct rpc::JsonTraits<Point> {
 *   // false + a short reason ("expected ...") when `v` does not fit.
 *   static bool read(const rpc::Value& v, Point& out, std::string& why);
 *   static void write(rpc::ResultWriter& w, const Point& p);
 * };
 * @endcode
 *
 * Provided: `bool`, integers (range-checked; JSON integers only, no fraction or exponent),
 * `float`/`double`, `std::string`, `std::string_view` (a view into the message, valid during the
 * call), `std::vector<T>`, `std::map<std::string, T>`, `std::unordered_map<std::string, T>`,
 * `std::optional<T>` (`null` or absent), `rpc::Json` (any value, re-serialised from the parsed
 * value: numbers in their shortest form, strings re-escaped), and for results also
 * `const char*`, string literals, `std::nullptr_t` and `rpc::Value`; in json_std.hpp `std::array`, `std::pair`,
 * `std::tuple` (arrays of their exact size), `std::set`, `std::unordered_set` (arrays; repeats
 * collapse), `std::variant` (the first alternative that reads the value), `std::monostate`
 * (`null`) and, for results, `std::span`. Enums without names are their underlying integer.
 *
 * A result read with `Reply::as<T>()` or from a temporary `Replies` outlives the JSON it came
 * from, so T must own its data. The library knows which of its types do; a specialisation
 * whose T holds no pointer into the JSON says so with `static constexpr bool owns_its_data =
 * true;`.
 */
template <class T>
struct JsonTraits;

/// A type named as a value: what the binding hooks (`batchrpc_fields`, `batchrpc_enum_names`)
/// take, so that argument-dependent lookup finds them in the namespace of `T`.
template <class T>
struct TypeTag {};

/// Types that can be bound from a JSON value. A read that could not set `why` (one taking it by
/// value, as a `std::string_view` or as a const reference) is not one: its reason would be lost.
template <class T>
concept JsonReadable = requires(const Value& v, T& out, std::string& why) {
  { JsonTraits<T>::read(v, out, why) } -> std::same_as<bool>;
} && !requires(const Value& v, T& out) { JsonTraits<T>::read(v, out, std::string{}); };

/// Types that can be written as a JSON value.
template <class T>
concept JsonWritable = requires(ResultWriter& w, const T& value) { JsonTraits<T>::write(w, value); };

namespace detail {
template <class T>
struct json_readable : std::bool_constant<JsonReadable<T>> {};
template <class T>
struct json_writable : std::bool_constant<JsonWritable<T>> {};
// The type a failed check names when `T` does not read (write): the part of T at fault, which
// is T itself unless T is a standard container of something that does not bind.
template <class T>
using unreadable_part_t = typename part_at_fault<json_readable, T>::type;
template <class T>
using unwritable_part_t = typename part_at_fault<json_writable, T>::type;

// JsonTraits<T> has a read() the library cannot use: one that is not static, returns other
// than bool, takes the value other than as `const rpc::Value&`, or has no `why` argument. (A
// read of the library's own container traits, constrained out because an element does not
// read, has no address: those are reported by their element.)
template <class T>
concept read_has_wrong_signature =
    !JsonReadable<T> &&
    (requires { &JsonTraits<T>::read; } ||
     requires(const Value& v, T& out, std::string& why) { JsonTraits<T>::read(v, out, why); } ||
     requires(const Value& v, T& out) { JsonTraits<T>::read(v, out); });
// JsonTraits<T> writes T but has no read(): T can be a result but not a parameter.
template <class T>
concept write_without_read = !JsonReadable<T> && requires { &JsonTraits<T>::write; } &&
                             !requires { &JsonTraits<T>::read; };
// A JsonTraits<T> that the user wrote, but with no read the library can use.
template <class T>
concept read_misdeclared = read_has_wrong_signature<T> || write_without_read<T>;
// JsonTraits<T> has a write() the library cannot use (not static, or T not taken as const&).
template <class T>
concept write_misdeclared = !JsonWritable<T> && requires { &JsonTraits<T>::write; };

// Refuses `Part` (a read_misdeclared part of `Whole`, the type as written) by naming what is
// wrong with its JsonTraits, not by advising to write one. Every reading site calls this, so
// the error and its static_assert are declared together here.
template <class Part, class Whole>
constexpr void refuse_misdeclared_read() {
  constexpr bool whole = std::is_same_v<Part, Whole>;
  if constexpr (read_has_wrong_signature<Part>) {
    if constexpr (whole) {
      [[maybe_unused]] json_traits_read_has_the_wrong_signature_for<Part> error;
    } else {
      [[maybe_unused]] json_traits_read_has_the_wrong_signature_for<Part, Whole> error;
    }
    static_assert(!read_has_wrong_signature<Part>,
                  "batchrpc: rpc::JsonTraits<T>::read must be `static bool read(const "
                  "rpc::Value& v, T& out, std::string& why)`, false with a reason in `why` "
                  "when `v` does not fit.");
  } else {
    if constexpr (whole) {
      [[maybe_unused]] json_traits_has_write_but_no_read_for<Part> error;
    } else {
      [[maybe_unused]] json_traits_has_write_but_no_read_for<Part, Whole> error;
    }
    static_assert(!write_without_read<Part>,
                  "batchrpc: this type can be written but not read (a result, not a parameter): "
                  "its rpc::JsonTraits<T> has no `static bool read(const rpc::Value& v, T& out, "
                  "std::string& why)`. Add one, or take a type that reads (std::vector for "
                  "std::span, std::string for const char*).");
  }
}

// As refuse_misdeclared_read, for a write_misdeclared part.
template <class Part, class Whole>
constexpr void refuse_misdeclared_write() {
  if constexpr (std::is_same_v<Part, Whole>) {
    [[maybe_unused]] json_traits_write_has_the_wrong_signature_for<Part> error;
  } else {
    [[maybe_unused]] json_traits_write_has_the_wrong_signature_for<Part, Whole> error;
  }
  static_assert(!write_misdeclared<Part>,
                "batchrpc: rpc::JsonTraits<T>::write must be `static void write(rpc::ResultWriter& "
                "w, const T& value)`.");
}
}  // namespace detail

namespace detail {
// Sets `why` and returns false: how a read that fails ends.
template <class Text>
bool refuse(std::string& why, Text&& text) {
  why = std::forward<Text>(text);
  return false;
}

template <class T>
concept JsonInteger = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char> &&
                      !std::same_as<T, char8_t> && !std::same_as<T, char16_t> &&
                      !std::same_as<T, char32_t> && !std::same_as<T, wchar_t>;

template <class T>
struct is_string_map : std::false_type {};
template <class T, class C, class A>
struct is_string_map<std::map<std::string, T, C, A>> : std::true_type {};
template <class T, class H, class E, class A>
struct is_string_map<std::unordered_map<std::string, T, H, E, A>> : std::true_type {};
}  // namespace detail

template <>
struct JsonTraits<bool> {
  BATCHRPC_DECL static bool read(const Value& v, bool& out, std::string& why);
  static void write(ResultWriter& w, bool b) { w.boolean(b); }
};

namespace detail {
// "integer out of range (min to max)".
BATCHRPC_DECL std::string out_of_range(const std::string& min, const std::string& max);
// Integer reads, out of line: a read into any integer type is one of these and a narrowing.
BATCHRPC_DECL bool read_signed(const Value& v, std::int64_t min, std::int64_t max, std::int64_t& out,
                               std::string& why);
BATCHRPC_DECL bool read_unsigned(const Value& v, std::uint64_t max, std::uint64_t& out, std::string& why);
// True for a whole number too large for 64 bits (RapidJSON holds it as a double).
BATCHRPC_DECL bool beyond_64_bits(const Value& v);

// T's range, cut to what 64 bits hold: the bounds read_signed and read_unsigned check. A type
// wider than 64 bits (`__int128` where the compiler counts it as integral) reads every JSON
// integer that fits 64 bits.
template <class T, class Bound>
constexpr Bound bound_within(T limit) noexcept {
  if constexpr (sizeof(T) < sizeof(Bound)) {
    return static_cast<Bound>(limit);
  } else {
    return limit < 0 ? std::numeric_limits<Bound>::min() : std::numeric_limits<Bound>::max();
  }
}
}  // namespace detail

template <detail::JsonInteger T>
struct JsonTraits<T> {
  static bool read(const Value& v, T& out, std::string& why) {
    if constexpr (std::is_signed_v<T>) {
      std::int64_t i = 0;
      constexpr auto min = detail::bound_within<T, std::int64_t>(std::numeric_limits<T>::min());
      constexpr auto max = detail::bound_within<T, std::int64_t>(std::numeric_limits<T>::max());
      if (!detail::read_signed(v, min, max, i, why)) return false;
      out = static_cast<T>(i);
    } else {
      std::uint64_t u = 0;
      constexpr auto max = detail::bound_within<T, std::uint64_t>(std::numeric_limits<T>::max());
      if (!detail::read_unsigned(v, max, u, why)) return false;
      out = static_cast<T>(u);
    }
    return true;
  }
  static void write(ResultWriter& w, T i) {
    if constexpr (std::is_signed_v<T>) {
      w.integer(i);
    } else {
      w.unsigned_integer(i);
    }
  }
};

template <>
struct JsonTraits<double> {
  BATCHRPC_DECL static bool read(const Value& v, double& out, std::string& why);
  static void write(ResultWriter& w, double d) { w.number(d); }
};

template <>
struct JsonTraits<float> {
  BATCHRPC_DECL static bool read(const Value& v, float& out, std::string& why);
  // Shortest text that reads back as the same float (0.1f is "0.1", not "0.10000000149011612").
  BATCHRPC_DECL static void write(ResultWriter& w, float f);
};

template <>
struct JsonTraits<std::string> {
  BATCHRPC_DECL static bool read(const Value& v, std::string& out, std::string& why);
  static void write(ResultWriter& w, const std::string& s) { w.string(s); }
};

template <>
struct JsonTraits<std::string_view> {
  BATCHRPC_DECL static bool read(const Value& v, std::string_view& out, std::string& why);
  static void write(ResultWriter& w, std::string_view s) { w.string(s); }
};

template <>
struct JsonTraits<const char*> {
  BATCHRPC_DECL static void write(ResultWriter& w, const char* s);
};

/// A string literal, written up to its first NUL (`rpc::to_json("done")`, `w.write("done")`).
template <std::size_t N>
struct JsonTraits<char[N]> {
  static void write(ResultWriter& w, const char (&s)[N]) { w.string(std::string_view(s)); }
};

template <>
struct JsonTraits<std::nullptr_t> {
  static void write(ResultWriter& w, std::nullptr_t) { w.null(); }
};

template <>
struct JsonTraits<Json> {
  static bool read(const Value& v, Json& out, std::string& why);
  static void write(ResultWriter& w, const Json& j) { w.raw(j); }
};

namespace detail {
// Writes a value that is not an array or an object.
BATCHRPC_DECL void write_scalar(ResultWriter& w, const Value& v);
// Writes an array or an object with a stack of its own instead of recursion: with unlimited
// depth, a value nested a million deep must cost heap, not the machine stack.
BATCHRPC_DECL void write_tree(ResultWriter& w, const Value& root);
// "element 3: why", "member \"key\": why" and "field: why": where in a container or struct a
// read failed.
BATCHRPC_DECL std::string at_element(std::size_t index, const std::string& why);
BATCHRPC_DECL std::string at_member(std::string_view key, const std::string& why);
BATCHRPC_DECL std::string at_field(std::string_view field, const std::string& why);
BATCHRPC_DECL std::string duplicate_member(std::string_view key);
}  // namespace detail

template <>
struct JsonTraits<Value> {
  static void write(ResultWriter& w, const Value& v) {
    if (v.IsArray() || v.IsObject()) return detail::write_tree(w, v);
    detail::write_scalar(w, v);
  }
};

template <class T>
struct JsonTraits<std::optional<T>> {
  static bool read(const Value& v, std::optional<T>& out, std::string& why)
    requires JsonReadable<T>
  {
    if (v.IsNull()) {
      out.reset();
      return true;
    }
    return JsonTraits<T>::read(v, out.emplace(), why);
  }
  static void write(ResultWriter& w, const std::optional<T>& o)
    requires JsonWritable<T>
  {
    if (!o) return w.null();
    JsonTraits<T>::write(w, *o);
  }
};

template <class T, class A>
struct JsonTraits<std::vector<T, A>> {
  static bool read(const Value& v, std::vector<T, A>& out, std::string& why)
    requires JsonReadable<T>
  {
    if (!v.IsArray()) return detail::refuse(why, "expected an array");
    out.clear();
    out.reserve(v.Size());
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      T item{};
      if (!JsonTraits<T>::read(v[i], item, why)) {
        return detail::refuse(why, detail::at_element(i, why));
      }
      out.push_back(std::move(item));
    }
    return true;
  }
  static void write(ResultWriter& w, const std::vector<T, A>& items)
    requires JsonWritable<T>
  {
    w.start_array();
    for (const auto& item : items) JsonTraits<T>::write(w, item);
    w.end_array();
  }
};

template <class M>
  requires detail::is_string_map<M>::value
struct JsonTraits<M> {
  using Mapped = typename M::mapped_type;
  static bool read(const Value& v, M& out, std::string& why)
    requires JsonReadable<Mapped>
  {
    if (!v.IsObject()) return detail::refuse(why, "expected an object");
    out.clear();
    for (const auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      Mapped item{};
      if (!JsonTraits<Mapped>::read(m.value, item, why)) {
        return detail::refuse(why, detail::at_member(key, why));
      }
      if (!out.emplace(std::move(key), std::move(item)).second) {
        return detail::refuse(why, detail::duplicate_member(std::string_view(m.name.GetString(), m.name.GetStringLength())));
      }
    }
    return true;
  }
  static void write(ResultWriter& w, const M& members)
    requires JsonWritable<Mapped>
  {
    w.start_object();
    for (const auto& [key, item] : members) {
      w.key(key);
      JsonTraits<Mapped>::write(w, item);
    }
    w.end_object();
  }
};

template <class T>
void ResultWriter::write(const T& value) {
  if constexpr (!JsonWritable<T>) {
    using Part = detail::unwritable_part_t<T>;
    if constexpr (detail::write_misdeclared<Part>) {
      detail::refuse_misdeclared_write<Part, T>();
    } else {
      if constexpr (std::is_same_v<Part, T>) {
        [[maybe_unused]] detail::type_has_no_json_form_for<Part> error;
      } else {
        [[maybe_unused]] detail::type_has_no_json_form_for<Part, T> error;
      }
      static_assert(JsonWritable<T>,
                    "batchrpc: this type has no JSON form. Bind a struct with "
                    "BATCHRPC_FIELDS(Type, field...), an enum with BATCHRPC_ENUM, or specialise "
                    "rpc::JsonTraits<T> with a write() function. Maps need string keys; a char is "
                    "not a number here (use std::string or std::int8_t).");
    }
  }
  if constexpr (JsonWritable<T>) JsonTraits<T>::write(*this, value);  // else no follow-on errors
}

/// A `Json` written by `fill` through a ResultWriter, for JSON that no bound type describes:
/// @code
/// rpc::Json data = rpc::write_json([&](rpc::ResultWriter& w) {
///   w.start_object();
///   w.key("reason");
///   w.string(reason);
///   w.end_object();
/// });
/// @endcode
/// `fill` must write exactly one complete value (else `std::logic_error`); what it throws
/// propagates.
template <class Fill>
  requires std::invocable<Fill&, ResultWriter&>
Json write_json(Fill&& fill) {
  Buffer buffer;
  ResultWriter writer(buffer);
  fill(writer);
  if (!writer.complete()) throw std::logic_error("rpc::write_json: the value written is incomplete");
  return Json::trusted(buffer.str());
}

/// Serialises any `JsonWritable` value to a `Json` (for `rpc::Error` data, for example).
template <JsonWritable T>
Json to_json(const T& value) {
  return write_json([&](ResultWriter& w) { w.write(value); });
}

namespace detail {
// True, with `why`, when `v` cannot be a T at a glance, without reading it: a struct bound by its
// fields that lacks one it requires (defined in json_fields.hpp; false for other types).
template <class T>
bool rejects_at_a_glance(const Value& v, std::string& why);
}  // namespace detail

}  // namespace rpc

// The other bindings every translation unit must see alike (partial specialisations).
#include "json_enums.hpp"
#include "json_fields.hpp"
#include "json_std.hpp"

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/json_traits.ipp"
#endif
