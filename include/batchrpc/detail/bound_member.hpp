// SPDX-License-Identifier: MIT
// A member function bound to its object, as a handler: `router.add("add", &Calc::add, calc)`.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../config.hpp"
#include "callable_traits.hpp"
#include "compile_errors.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

template <class M, class C, class Args = typename signature<M>::args,
          class R = typename signature<M>::result>
class BoundMember;

// Calls `(object->*method)(args...)` with the member function's own parameter types, so that
// handler binding sees them as it sees a lambda's. Holds the object by pointer: the caller
// promises it outlives the router.
template <class M, class C, class R, class... A>
class BoundMember<M, C, std::tuple<A...>, R> {
 public:
  BoundMember(M method, C* object) : method_(method), object_(object) {
    if (object == nullptr) throw std::invalid_argument("batchrpc: a member function's object is null");
  }
  R operator()(A... args) const {
    if constexpr (std::is_invocable_v<M, C&, A...>) {
      return std::invoke(method_, *object_, std::forward<A>(args)...);
    } else {
      std::terminate();  // never runs: bind_member has refused this object at compile time
    }
  }

 private:
  M method_;
  C* object_;
};

template <class M>
inline constexpr bool is_member_function_v = std::is_member_function_pointer_v<std::remove_cvref_t<M>>;

template <class M>
struct member_class;
template <class T, class C>
struct member_class<T C::*> {
  using type = C;
};

// The object must be the member function's class or derived from it: a smart pointer or a
// wrapper would be held by address, and that address is the caller's variable, not the object.
template <class M, class C>
constexpr void check_object_type() {
  using Class = typename member_class<M>::type;
  constexpr bool ok = std::is_base_of_v<Class, std::remove_cv_t<C>>;
  if constexpr (!ok) {
    [[maybe_unused]] object_is_not_of_the_member_functions_class<C, Class> error;
  }
  static_assert(ok,
                "batchrpc: pass the member function's object itself (by reference) or a raw "
                "pointer to it; for a smart pointer pass `*ptr` or `ptr.get()` and keep it alive "
                "as long as the router.");
}

template <class M, class C>
constexpr void check_constness() {
  constexpr bool ok = signature<M>::is_const || !std::is_const_v<C>;
  if constexpr (!ok) {
    [[maybe_unused]] non_const_member_function_on_const_object<M, C> error;
  }
  static_assert(ok,
                "batchrpc: the object is const but the member function is not: declare the member "
                "function const, or pass a non-const object.");
}

// `object` by reference or by pointer; a temporary would be gone before the first call.
template <class M, class Object>
auto bind_member(M method, Object&& object) {
  using Bare = std::remove_reference_t<Object>;
  if constexpr (std::is_pointer_v<std::remove_cv_t<Bare>>) {
    using C = std::remove_pointer_t<std::remove_cv_t<Bare>>;
    check_object_type<M, C>();
    check_constness<M, C>();
    return BoundMember<M, C>(method, object);
  } else {
    if constexpr (!std::is_lvalue_reference_v<Object>) {
      [[maybe_unused]] member_function_object_is_a_temporary<Bare> error;
    }
    static_assert(std::is_lvalue_reference_v<Object>,
                  "batchrpc: pass the member function's object by reference or by pointer, not a "
                  "temporary: the router calls it for as long as it lives.");
    check_object_type<M, Bare>();
    check_constness<M, Bare>();
    return BoundMember<M, Bare>(method, std::addressof(object));
  }
}

}  // namespace rpc::detail
