// SPDX-License-Identifier: MIT
/// @file json_std.hpp
/// `rpc::JsonTraits` for more standard types: `std::array`, `std::pair`, `std::tuple`,
/// `std::set`, `std::unordered_set`, `std::variant`, `std::monostate` and, for results,
/// `std::span`. Included by json_traits.hpp; you need not include it yourself.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <variant>

#include "config.hpp"
#include "json_traits.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
// "expected an array of 3 elements" (out of line, json_traits.ipp).
BATCHRPC_DECL std::string expected_array_of(std::size_t size);

// Writes the elements of any range as a JSON array.
template <class Range>
void write_elements(ResultWriter& w, const Range& items) {
  w.start_array();
  for (const auto& item : items) w.write(item);
  w.end_array();
}

// Whether `Compare` can compare two T. std::less<T> and std::equal_to<T> are declared for any T
// and fail only inside their bodies, so for them the operator is asked of T itself.
template <class Compare, class T>
inline constexpr bool can_compare = std::is_invocable_r_v<bool, const Compare&, const T&, const T&>;
template <class T>
inline constexpr bool can_compare<std::less<T>, T> = requires(const T& a, const T& b) {
  { a < b } -> std::convertible_to<bool>;
};
template <class T>
inline constexpr bool can_compare<std::equal_to<T>, T> = requires(const T& a, const T& b) {
  { a == b } -> std::convertible_to<bool>;
};

// Whether a set's elements can be put in it.
template <class Set>
inline constexpr bool set_can_insert = true;
template <class T, class C, class A>
inline constexpr bool set_can_insert<std::set<T, C, A>> = can_compare<C, T>;
template <class T, class H, class E, class A>
inline constexpr bool set_can_insert<std::unordered_set<T, H, E, A>> =
    std::is_invocable_r_v<std::size_t, const H&, const T&> && can_compare<E, T>;

// Reads a JSON array into a container that `insert`s (sets): duplicates collapse into one.
template <class Set>
bool read_into_set(const Value& v, Set& out, std::string& why) {
  using T = typename Set::value_type;
  if constexpr (!set_can_insert<Set>) {
    [[maybe_unused]] set_element_has_no_order_or_hash_for<T, Set> error;
  }
  static_assert(set_can_insert<Set>,
                "batchrpc: a set is read by inserting each element, and its comparator cannot "
                "order this element type (std::set needs operator<), or its hash or equality "
                "cannot take it (std::unordered_set needs std::hash and operator==). Give the "
                "type those, or take a std::vector.");
  if (!v.IsArray()) return detail::refuse(why, "expected an array");
  out.clear();
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    T item{};
    if (!JsonTraits<T>::read(v[i], item, why)) return detail::refuse(why, at_element(i, why));
    if constexpr (set_can_insert<Set>) out.insert(std::move(item));  // else no follow-on errors
  }
  return true;
}

// std::pair and std::tuple: JSON arrays of exactly their size, element I bound as its type.
template <class Tuple>
struct TupleCodec {
  static constexpr std::size_t size = std::tuple_size_v<Tuple>;
  template <std::size_t... I>
  static constexpr bool readable(std::index_sequence<I...>) {
    return (JsonReadable<std::tuple_element_t<I, Tuple>> && ...);
  }
  template <std::size_t... I>
  static constexpr bool writable(std::index_sequence<I...>) {
    return (JsonWritable<std::tuple_element_t<I, Tuple>> && ...);
  }

  static bool read(const Value& v, Tuple& out, std::string& why)
    requires(readable(std::make_index_sequence<size>{}))
  {
    if (!v.IsArray() || v.Size() != size) return detail::refuse(why, expected_array_of(size));
    return read_elements(v, out, why, std::make_index_sequence<size>{});
  }
  static void write(ResultWriter& w, const Tuple& value)
    requires(writable(std::make_index_sequence<size>{}))
  {
    w.start_array();
    std::apply([&](const auto&... item) { (w.write(item), ...); }, value);
    w.end_array();
  }

 private:
  template <std::size_t... I>
  static bool read_elements(const Value& v, Tuple& out, std::string& why, std::index_sequence<I...>) {
    return (read_element<I>(v, out, why) && ...);
  }
  template <std::size_t I>
  static bool read_element(const Value& v, Tuple& out, std::string& why) {
    using T = std::tuple_element_t<I, Tuple>;
    if (JsonTraits<T>::read(v[static_cast<rapidjson::SizeType>(I)], std::get<I>(out), why)) return true;
    return detail::refuse(why, at_element(I, why));
  }
};
}  // namespace detail

template <class T, std::size_t N>
struct JsonTraits<std::array<T, N>> {
  static bool read(const Value& v, std::array<T, N>& out, std::string& why)
    requires JsonReadable<T>
  {
    if (!v.IsArray() || v.Size() != N) return detail::refuse(why, detail::expected_array_of(N));
    for (rapidjson::SizeType i = 0; i < N; ++i) {
      if (!JsonTraits<T>::read(v[i], out[i], why)) return detail::refuse(why, detail::at_element(i, why));
    }
    return true;
  }
  static void write(ResultWriter& w, const std::array<T, N>& items)
    requires JsonWritable<T>
  {
    detail::write_elements(w, items);
  }
};

template <class A, class B>
struct JsonTraits<std::pair<A, B>> : detail::TupleCodec<std::pair<A, B>> {};

template <class... T>
struct JsonTraits<std::tuple<T...>> : detail::TupleCodec<std::tuple<T...>> {};

template <class T, class C, class A>
struct JsonTraits<std::set<T, C, A>> {
  static bool read(const Value& v, std::set<T, C, A>& out, std::string& why)
    requires JsonReadable<T>
  {
    return detail::read_into_set(v, out, why);
  }
  static void write(ResultWriter& w, const std::set<T, C, A>& items)
    requires JsonWritable<T>
  {
    detail::write_elements(w, items);
  }
};

template <class T, class H, class E, class A>
struct JsonTraits<std::unordered_set<T, H, E, A>> {
  static bool read(const Value& v, std::unordered_set<T, H, E, A>& out, std::string& why)
    requires JsonReadable<T>
  {
    return detail::read_into_set(v, out, why);
  }
  static void write(ResultWriter& w, const std::unordered_set<T, H, E, A>& items)
    requires JsonWritable<T>
  {
    detail::write_elements(w, items);
  }
};

/// Results only: a view of elements written as a JSON array.
template <class T, std::size_t Extent>
struct JsonTraits<std::span<T, Extent>> {
  static void write(ResultWriter& w, std::span<T, Extent> items)
    requires JsonWritable<std::remove_cv_t<T>>
  {
    detail::write_elements(w, items);
  }
};

/// `null`, for a `std::variant` that may be null.
template <>
struct JsonTraits<std::monostate> {
  static bool read(const Value& v, std::monostate&, std::string& why) {
    return v.IsNull() || detail::refuse(why, "expected null");
  }
  static void write(ResultWriter& w, std::monostate) { w.null(); }
};

namespace detail {
// What reading a std::variant may cost. Alternatives that fail after reading deep (two structs
// with the same fields, say) make nested variants retry each level: work that doubles per level
// of a small message. So each alternative tried is charged the JSON values it may read, from a
// budget the outermost variant sets: 16 times what reading each value once under every
// enclosing variant would take. Past it, reading fails ("too costly") instead of running on.
class VariantBudget {
 public:
  explicit VariantBudget(const Value& v) : state_(state()) {
    if (state_.depth++ == 0) {
      const Shape shape = shape_of(v);
      state_.left = 16 * shape.values * (shape.depth + 1) + 4096;
      state_.exhausted = false;
    }
  }
  ~VariantBudget() { --state_.depth; }
  VariantBudget(const VariantBudget&) = delete;
  VariantBudget& operator=(const VariantBudget&) = delete;

  // Charges an attempt at reading `v`; false (and nothing left) when it would exceed the budget.
  bool charge(const Value& v) {
    const std::size_t cost = count_values(v, state_.left);
    if (cost > state_.left) {
      state_.left = 0;
      state_.exhausted = true;
      return false;
    }
    state_.left -= cost;
    return true;
  }
  // True in the outermost variant once some read inside it ran out of budget.
  [[nodiscard]] bool ran_out() const { return state_.depth == 1 && state_.exhausted; }

 private:
  struct State {
    std::size_t depth = 0;  // variants being read on this thread, one inside another
    std::size_t left = 0;
    bool exhausted = false;
  };
  struct Shape {
    std::size_t values = 0;
    std::size_t depth = 0;
  };
  static State& state() {
    thread_local State s;
    return s;
  }
  static Shape shape_of(const Value& v) {
    Shape shape{1, 0};
    const auto add = [&](const Value& child) {
      const Shape inner = shape_of(child);
      shape.values += inner.values;
      if (inner.depth + 1 > shape.depth) shape.depth = inner.depth + 1;
    };
    if (v.IsArray()) {
      for (const Value& item : v.GetArray()) add(item);
    } else if (v.IsObject()) {
      for (const auto& member : v.GetObject()) add(member.value);
    }
    return shape;
  }
  // The values in `v`, counted up to just past `limit`.
  static std::size_t count_values(const Value& v, std::size_t limit) {
    std::size_t n = 1;
    if (v.IsArray()) {
      for (const Value& item : v.GetArray()) {
        if (n > limit) break;
        n += count_values(item, limit - n);
      }
    } else if (v.IsObject()) {
      for (const auto& member : v.GetObject()) {
        if (n > limit) break;
        n += count_values(member.value, limit - n);
      }
    }
    return n;
  }

  State& state_;
};

// Appends "alternative I: why", the reason cut to a few hundred bytes (at a character
// boundary): the reasons of nested variants would otherwise multiply into the reply.
BATCHRPC_DECL void append_reason(std::string& reasons, std::size_t alternative, std::string_view why);
}  // namespace detail

/// The first alternative, in order, that reads the value; written as the alternative it holds.
/// Reading is bounded: see detail::VariantBudget.
template <class... T>
struct JsonTraits<std::variant<T...>> {
  using Variant = std::variant<T...>;

  static bool read(const Value& v, Variant& out, std::string& why)
    requires(JsonReadable<T> && ...)
  {
    detail::VariantBudget budget(v);
    std::string reasons;
    if (read_first(v, out, reasons, budget, std::index_sequence_for<T...>{})) return true;
    if (budget.ran_out()) return detail::refuse(why, too_costly);
    return detail::refuse(why, "matches no alternative (" + reasons + ")");
  }
  static void write(ResultWriter& w, const Variant& value)
    requires(JsonWritable<T> && ...)
  {
    std::visit([&](const auto& item) { w.write(item); }, value);
  }

 private:
  static constexpr const char* too_costly = "too costly to read: its alternatives were retried too often";

  template <std::size_t... I>
  static bool read_first(const Value& v, Variant& out, std::string& reasons, detail::VariantBudget& budget,
                         std::index_sequence<I...>) {
    return (read_as<I>(v, out, reasons, budget) || ...);
  }
  template <std::size_t I>
  static bool read_as(const Value& v, Variant& out, std::string& reasons, detail::VariantBudget& budget) {
    using Alternative = std::variant_alternative_t<I, Variant>;
    std::string why;
    if (!detail::rejects_at_a_glance<Alternative>(v, why)) {
      if (!budget.charge(v)) {
        why = too_costly;
      } else if (Alternative item{}; JsonTraits<Alternative>::read(v, item, why)) {
        out.template emplace<I>(std::move(item));
        return true;
      }
    }
    detail::append_reason(reasons, I, why);
    return false;
  }
};

}  // namespace rpc
