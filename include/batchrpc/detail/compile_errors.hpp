// SPDX-License-Identifier: MIT
// Compile errors that name what is wrong. Each type below is incomplete on purpose: a failed
// check declares a variable of one, with the offending types as its arguments, before its
// static_assert. The compiler's first error line is then "`member_function_needs_its_object_for
// <int (Calc::*)(int, int) const> error` has incomplete type", and the static_assert after it
// says what to write instead (a static_assert's message cannot name a type). The variable is
// declared beside its static_assert, in the same function: a function template's body is
// instantiated later, so a variable declared in another function would give its error after
// the static_assert's.
//
// Where a type does not bind, the first argument is the part of it at fault (json_parts.hpp)
// and a second, when they differ, the type as written: for a `std::vector<app::Point>`
// parameter, `handler_parameter_has_no_json_binding_for<app::Point, std::vector<app::Point>>`.
#pragma once

#include <cstddef>
#include <type_traits>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The first of `T...` for which `Bad<T>::value` holds, or void.
template <template <class> class Bad, class... T>
struct first_type_where {
  using type = void;
};
template <template <class> class Bad, class T, class... Rest>
struct first_type_where<Bad, T, Rest...> {
  using type = std::conditional_t<Bad<T>::value, T, typename first_type_where<Bad, Rest...>::type>;
};

// Registering a handler (router.add).
template <class F>
struct member_function_needs_its_object_for;
template <class F>
struct handler_parameters_cannot_be_seen_for;
template <class F>
struct handler_must_be_callable_as_const_for;
template <class Part, class... Param>
struct handler_parameter_has_no_json_binding_for;
template <class Part, class... Param>
struct json_traits_read_has_the_wrong_signature_for;
template <class Part, class... Param>
struct json_traits_has_write_but_no_read_for;
template <class Part, class... Whole>
struct json_traits_write_has_the_wrong_signature_for;
template <class Part, class... Param>
struct handler_parameter_must_be_default_constructible;
template <class Param>
struct bound_parameter_passed_the_wrong_way_for;
template <class Param>
struct injected_parameter_passed_the_wrong_way_for;
template <class F>
struct handler_takes_params_and_bound_parameters_for;
template <class Result>
struct handler_with_result_writer_must_return_void_not;
template <class Result>
struct handler_with_responder_must_return_void_not;
template <class F>
struct handler_takes_both_responder_and_result_writer_for;
template <class Part, class... Result>
struct handler_result_has_no_json_form_for;
template <std::size_t Given, std::size_t Bound>
struct names_given_for_bound_parameters;
template <class F>
struct batch_handler_is_not_callable_as_const_with_a_span;

// A member function and its object (router.add(name, &Class::method, object)).
template <class Object, class Class>
struct object_is_not_of_the_member_functions_class;
template <class MemberFunction, class Object>
struct non_const_member_function_on_const_object;
template <class Object>
struct member_function_object_is_a_temporary;

// Types bound to JSON, and structs bound by their fields.
template <class Part, class... T>
struct type_has_no_json_form_for;
template <class Part, class... T>
struct type_has_no_json_binding_for;
template <class Struct, class Part, class... FieldType>
struct struct_field_has_no_json_binding;
template <class Struct, class Part, class... FieldType>
struct struct_field_has_no_json_form;
template <class Struct, class FieldType>
struct struct_field_is_const;
template <class Struct, class Part, class FieldType>
struct struct_field_element_must_be_default_constructible;
template <class MemberPointer>
struct field_names_a_member_function;
template <class Element, class Set>
struct set_element_has_no_order_or_hash_for;

// The client side: params written, results read.
template <class Name>
struct param_name_is_not_a_string;
template <std::size_t ArgumentCount>
struct named_takes_name_value_pairs_not;
template <class Part, class... T>
struct type_may_view_a_reply_that_is_gone;
template <class Part, class... Result>
struct result_type_must_be_default_constructible;

}  // namespace rpc::detail
