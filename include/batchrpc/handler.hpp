// SPDX-License-Identifier: MIT
/// @file handler.hpp
/// How handlers are called: typed parameter binding and result writing (JSON-RPC 2.0 §4.2).
///
/// A handler is any callable with one, non-template call signature. Its parameters are:
/// - `rpc::Context&`: the call's context (injected, any position);
/// - `rpc::ResultWriter&`: write the result yourself (the handler must return void);
/// - `rpc::Responder`: answer later, from any thread (the handler must return void);
/// - `rpc::Params` / `const rpc::Params&`: the raw params (then no other parameter is bound);
/// - otherwise bound from `params` by position, or by name when `rpc::names(...)` was given:
///   any `JsonReadable` type, `const rpc::Value&` (any JSON value), `const rpc::Value*`
///   (optional), `std::optional<T>` (optional). Take them by value or `const&`. A handler
///   registered without names whose one bound parameter is a struct bound by its fields
///   (BATCHRPC_FIELDS...) also takes a params object as that struct, whole.
/// The return value is written as the result (`void`: `null`); it must be `JsonWritable`.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "config.hpp"
#include "context.hpp"
#include "detail/bound_member.hpp"
#include "detail/callable_traits.hpp"
#include "detail/compile_errors.hpp"
#include "detail/param_errors.hpp"
#include "detail/same_text.hpp"
#include "json_traits.hpp"
#include "names.hpp"
#include "params.hpp"
#include "responder.hpp"
#include "result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

enum class InvokeStatus : unsigned char { ok, invalid_params };

/// A registered handler with its binding, type-erased through plain function pointers, not
/// virtual functions. At -O2, GCC keeps every override of a virtual function that reachable
/// code calls, and all they call, as possible targets for devirtualisation, and runs its early
/// passes over them: a virtual `invoke` made every file that includes the umbrella header
/// compile the built-ins' and tools' handlers, and all they reach, only to discard them. A
/// function pointer names only what was registered.
class Handler {
 public:
  InvokeStatus invoke(const Params& params, Context& ctx, ResultWriter& out,
                      ParamError& error) const {
    return invoke_(*this, params, ctx, out, error);
  }
  // False when the handler cannot see its call's cancellation (it takes neither an
  // rpc::Context nor an rpc::Responder): a session then makes no stop state for its calls,
  // and gives them no slot for a Responder.
  [[nodiscard]] bool observes_stop() const noexcept { return observes_stop_; }

  // Destroys a handler as the type it was made as (HandlerPtr's deleter).
  struct Destroy {
    void operator()(Handler* handler) const noexcept { handler->destroy_(handler); }
  };

 protected:
  using InvokeFn = InvokeStatus (*)(const Handler&, const Params&, Context&, ResultWriter&,
                                    ParamError&);
  using DestroyFn = void (*)(Handler*) noexcept;
  Handler(InvokeFn invoke_fn, DestroyFn destroy_fn, bool sees_stop) noexcept
      : invoke_(invoke_fn), destroy_(destroy_fn), observes_stop_(sees_stop) {}
  ~Handler() = default;  // not virtual: Destroy calls the derived type's destructor
  Handler(const Handler&) = delete;
  Handler& operator=(const Handler&) = delete;

  // The function pointers of a derived type D: its `run` (invoke's parameters) and destructor.
  template <class D>
  static InvokeStatus invoke_as(const Handler& self, const Params& params, Context& ctx,
                                ResultWriter& out, ParamError& error) {
    return static_cast<const D&>(self).run(params, ctx, out, error);
  }
  template <class D>
  static void destroy_as(Handler* self) noexcept {
    delete static_cast<D*>(self);
  }

 private:
  InvokeFn invoke_;
  DestroyFn destroy_;
  bool observes_stop_;
};

/// Owns a registered handler.
using HandlerPtr = std::unique_ptr<Handler, Handler::Destroy>;

template <class P>
using bare_t = std::remove_cvref_t<P>;
template <class P>
inline constexpr bool is_context_v = std::is_same_v<bare_t<P>, Context>;
template <class P>
inline constexpr bool is_writer_v = std::is_same_v<bare_t<P>, ResultWriter>;
template <class P>
inline constexpr bool is_params_v = std::is_same_v<bare_t<P>, Params>;
template <class P>
inline constexpr bool is_responder_v = std::is_same_v<bare_t<P>, Responder>;
template <class P>
inline constexpr bool is_bound_v = !is_context_v<P> && !is_writer_v<P> && !is_params_v<P> &&
                                   !is_responder_v<P>;
template <class P>
inline constexpr bool is_value_ref_v = std::is_same_v<bare_t<P>, Value>;

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// How a parameter is held between binding and the call (injected ones hold nothing).
struct Unbound {};
template <class P>
using stored_t = std::conditional_t<!is_bound_v<P>, Unbound,
                                    std::conditional_t<is_value_ref_v<P>, const Value*, bare_t<P>>>;

template <class P>
inline constexpr bool is_bindable_v =
    is_value_ref_v<P> || std::is_same_v<bare_t<P>, const Value*> || JsonReadable<bare_t<P>>;

// A bound parameter with no JSON binding.
template <class P>
inline constexpr bool is_unbindable_v = is_bound_v<P> && !is_bindable_v<P>;
// A bound, bindable parameter that cannot be default-constructed, or holds elements that
// cannot be: it is read into such a value, and a container's elements likewise.
template <class P>
inline constexpr bool is_undefaultable_v =
    is_bound_v<P> && is_bindable_v<P> && !default_readable<stored_t<P>>::value;

template <class P>
inline constexpr bool is_const_lvalue_ref_v =
    std::is_lvalue_reference_v<P> && std::is_const_v<std::remove_reference_t<P>>;
template <class P>
inline constexpr bool is_mutable_lvalue_ref_v =
    std::is_lvalue_reference_v<P> && !std::is_const_v<std::remove_reference_t<P>>;
// A bound parameter may not be a mutable lvalue reference: it would refer to a temporary. An
// rpc::Value is a view into the request, neither copied nor moved: it is taken as const&.
template <class P>
inline constexpr bool is_misplaced_bound_ref_v =
    is_bound_v<P> && (is_value_ref_v<P> ? !is_const_lvalue_ref_v<P> : is_mutable_lvalue_ref_v<P>);
// Context and ResultWriter are taken by reference; Responder (handed over as a new value) by
// value or const&; Params (the request's) by value or const&.
template <class P>
inline constexpr bool is_misplaced_injected_ref_v =
    ((is_context_v<P> || is_writer_v<P>) && !std::is_lvalue_reference_v<P>) ||
    (is_responder_v<P> && is_mutable_lvalue_ref_v<P>) ||
    (is_params_v<P> && std::is_reference_v<P> && !is_const_lvalue_ref_v<P>);

template <class Args>
struct arg_info;
template <class... A>
struct arg_info<std::tuple<A...>> {
  static constexpr std::array<bool, sizeof...(A)> bound{is_bound_v<A>...};
  static constexpr std::size_t bound_count = (std::size_t{0} + ... + (is_bound_v<A> ? 1 : 0));
  static constexpr bool takes_context = (false || ... || is_context_v<A>);
  static constexpr bool takes_writer = (false || ... || is_writer_v<A>);
  static constexpr bool takes_responder = (false || ... || is_responder_v<A>);
  static constexpr bool takes_params = (false || ... || is_params_v<A>);
  static constexpr bool all_bindable = (!is_unbindable_v<A> && ...);
  static constexpr bool all_default_constructible = (!is_undefaultable_v<A> && ...);
  static constexpr bool refs_ok = (!is_misplaced_bound_ref_v<A> && ...);
  static constexpr bool injected_refs_ok = (!is_misplaced_injected_ref_v<A> && ...);
  using stored = std::tuple<stored_t<A>...>;  // one slot per parameter; injected ones unused
  // Position among bound parameters of C++ parameter I.
  static constexpr std::size_t bound_index(std::size_t i) {
    std::size_t n = 0;
    for (std::size_t j = 0; j < i; ++j) n += bound[j] ? 1u : 0u;
    return n;
  }
  // True when the one bound parameter is a struct bound by its fields (BATCHRPC_FIELDS...).
  static constexpr bool one_struct =
      bound_count == 1 && (false || ... || (is_bound_v<A> && has_fields<stored_t<A>>));
  // C++ position of the first bound parameter (sizeof...(A) when there is none).
  static constexpr std::size_t first_bound() {
    std::size_t i = 0;
    while (i < sizeof...(A) && !bound[i]) ++i;
    return i;
  }
};

template <class F, std::size_t N>
class TypedHandler final : public Handler {
  friend class Handler;
  using Sig = callable_signature<F>;
  using Args = typename Sig::args;
  using Info = arg_info<Args>;
  using Result = typename Sig::result;
  static constexpr std::size_t arity = std::tuple_size_v<Args>;
  static constexpr std::size_t bound_count = Info::bound_count;

 public:
  TypedHandler(F fn, const Names<N>& names)
      : Handler(&invoke_as<TypedHandler>, &destroy_as<TypedHandler>,
                Info::takes_context || Info::takes_responder),
        fn_(std::move(fn)) {
    for (std::size_t i = 0; i < N; ++i) {
      if (names.list[i].empty()) throw std::invalid_argument("batchrpc: empty parameter name");
      for (std::size_t j = 0; j < i; ++j) {
        if (names.list[i] == names.list[j]) {
          throw std::invalid_argument("batchrpc: duplicate parameter name \"" +
                                      std::string(names.list[i]) + "\"");
        }
      }
      names_[i] = std::string(names.list[i]);
    }
  }

 private:
  InvokeStatus run(const Params& params, Context& ctx, ResultWriter& out, ParamError& error) const {
    typename Info::stored args{};
    if constexpr (bound_count > 0 || !Info::takes_params) {
      if (!bind(params, args, error)) return InvokeStatus::invalid_params;
    }
    if constexpr (std::is_void_v<Result>) {
      call(args, params, ctx, out, std::make_index_sequence<arity>{});
    } else {
      out.write(call(args, params, ctx, out, std::make_index_sequence<arity>{}));
    }
    return InvokeStatus::ok;
  }

  template <std::size_t... I>
  decltype(auto) call(typename Info::stored& args, const Params& params, Context& ctx,
                      ResultWriter& out, std::index_sequence<I...>) const {
    return std::invoke(fn_, pass<I>(args, params, ctx, out)...);
  }

  template <std::size_t I>
  decltype(auto) pass(typename Info::stored& args, const Params& params, Context& ctx,
                      ResultWriter& out) const {
    using P = std::tuple_element_t<I, Args>;
    if constexpr (is_context_v<P>) {
      return (ctx);
    } else if constexpr (is_writer_v<P>) {
      return (out);
    } else if constexpr (is_params_v<P>) {
      return (params);
    } else if constexpr (is_responder_v<P>) {
      return take_responder(ctx);
    } else if constexpr (is_value_ref_v<P>) {
      return (*std::get<I>(args));
    } else {
      return std::move(std::get<I>(args));
    }
  }

  static Responder take_responder(Context& ctx) {
    detail::Deferred* slot = ContextAccess::deferred(ctx);
    if (slot == nullptr || !slot->take()) {
      throw std::logic_error("batchrpc: no Responder can be made for this call");
    }
    return ResponderAccess::make(*slot);
  }

  // Fills one slot per bound parameter from `params`, by position or by name, then reads them.
  // The loops stay here, where the counts are constants; the errors are built out of line.
  bool bind(const Params& params, typename Info::stored& args, ParamError& error) const {
    std::array<const Value*, bound_count> slots{};
    if (params.is_array()) {
      if (params.size() > bound_count) return too_many_params(bound_count, params.size(), error);
      for (std::size_t i = 0; i < params.size(); ++i) slots[i] = params.at(i);
    } else if (params.is_object()) {
      if constexpr (N == 0 && Info::one_struct) return read_whole(*params.json(), args, error);
      if (!bind_names(*params.json(), slots, error)) return false;
    }
    return read_all(slots, args, error, std::make_index_sequence<arity>{});
  }

  // The params object is the handler's one struct, as LSP and MCP define their params: read
  // as a whole, members such as `_meta` included, and its errors name no parameter.
  bool read_whole(const Value& object, typename Info::stored& args, ParamError& error) const {
    constexpr std::size_t i = Info::first_bound();
    using S = stored_t<std::tuple_element_t<i, Args>>;
    std::string why;
    if (JsonTraits<S>::read(object, std::get<i>(args), why)) return true;
    return params_failed(why, error);
  }

  bool bind_names(const Value& object, std::array<const Value*, bound_count>& slots,
                  ParamError& error) const {
    if constexpr (N == 0 && bound_count > 0) {  // an object of protocol metadata alone binds nothing
      for (const auto& member : object.GetObject()) {
        if (!is_protocol_metadata({member.name.GetString(), member.name.GetStringLength()})) {
          return params_by_position_only(error);
        }
      }
      return true;
    }
    for (const auto& member : object.GetObject()) {
      const std::string_view name(member.name.GetString(), member.name.GetStringLength());
      std::size_t slot = 0;
      while (slot < N && !same_text(names_[slot], name)) ++slot;
      if (slot == N) {
        if (is_protocol_metadata(name)) continue;  // for rpc::Progress or ctx.params(), not a param
        return unknown_param(name, error);
      }
      if constexpr (N > 0) {
        if (slots[slot] != nullptr) return duplicate_param(name, slot, error);
        slots[slot] = &member.value;
      }
    }
    return true;
  }

  template <std::size_t... I>
  bool read_all(const std::array<const Value*, bound_count>& slots,
                typename Info::stored& args, ParamError& error, std::index_sequence<I...>) const {
    return (read_one<I>(slots, args, error) && ...);
  }

  template <std::size_t I>
  bool read_one(const std::array<const Value*, bound_count>& slots,
                typename Info::stored& args, ParamError& error) const {
    using P = std::tuple_element_t<I, Args>;
    if constexpr (!is_bound_v<P>) {
      return true;
    } else {
      constexpr std::size_t b = Info::bound_index(I);
      using S = stored_t<P>;
      const Value* v = slots[b];
      S& out = std::get<I>(args);
      if constexpr (std::is_same_v<S, const Value*>) {
        out = v;
        if (v != nullptr || !is_value_ref_v<P>) return true;
        return param_missing(names_, b, error);
      } else {
        if (v == nullptr) {
          if constexpr (is_optional<S>::value) return true;
          return param_missing(names_, b, error);
        }
        std::string why;
        if (JsonTraits<S>::read(*v, out, why)) return true;
        return param_failed(names_, b, why, error);
      }
    }
  }

  F fn_;
  std::array<std::string, N> names_;
};

// Each condition a handler whose parameters can be seen must meet: check_signature asserts
// them one by one, each with its message, and handler_ok needs them all.
template <class F, std::size_t N>
struct SignatureRules {
  using Sig = callable_signature<F>;
  using Args = typename Sig::args;
  using Info = arg_info<Args>;
  using R = typename Sig::result;
  static constexpr bool params_alone = !Info::takes_params || Info::bound_count == 0;
  static constexpr bool writer_returns_void = !Info::takes_writer || std::is_void_v<R>;
  static constexpr bool responder_returns_void = !Info::takes_responder || std::is_void_v<R>;
  static constexpr bool responder_alone = !Info::takes_responder || !Info::takes_writer;
  static constexpr bool result_writable = std::is_void_v<R> || JsonWritable<std::remove_cvref_t<R>>;
  static constexpr bool names_fit = N == 0 || N == Info::bound_count;
  static constexpr bool all = Info::all_bindable && Info::all_default_constructible &&
                              Sig::is_const && Info::refs_ok && Info::injected_refs_ok &&
                              params_alone && writer_returns_void && responder_returns_void &&
                              responder_alone && result_writable && names_fit;
};

// True when F can be registered with N names; check_handler says why not.
template <class F, std::size_t N>
constexpr bool handler_ok() {
  if constexpr (has_signature<F>) {
    return SignatureRules<F, N>::all;
  } else {
    return false;
  }
}

// The first parameter type in the tuple `Args` for which `Bad` holds, or void.
template <template <class> class Bad, class Args>
struct first_param_where;
template <template <class> class Bad, class... A>
struct first_param_where<Bad, std::tuple<A...>> : first_type_where<Bad, A...> {};

template <class P>
struct unbindable : std::bool_constant<is_unbindable_v<P>> {};
template <class P>
struct undefaultable : std::bool_constant<is_undefaultable_v<P>> {};
template <class P>
struct misplaced_bound_ref : std::bool_constant<is_misplaced_bound_ref_v<P>> {};
template <class P>
struct misplaced_injected_ref : std::bool_constant<is_misplaced_injected_ref_v<P>> {};

// The checks on a handler whose parameters can be seen.
template <class F, std::size_t N>
constexpr void check_signature() {
  using Rules = SignatureRules<F, N>;
  using Sig = typename Rules::Sig;
  using Args = typename Rules::Args;
  using Info = typename Rules::Info;
  using R = typename Rules::R;
  using Result = std::remove_cvref_t<R>;
  // Each offending parameter is looked up only when its check fails: every handler pays else.
  if constexpr (!Info::all_bindable) {
    using Unbindable = bare_t<typename first_param_where<unbindable, Args>::type>;
    using Part = unreadable_part_t<Unbindable>;
    constexpr bool whole = std::is_same_v<Part, Unbindable>;
    if constexpr (read_misdeclared<Part>) {
      refuse_misdeclared_read<Part, Unbindable>();
    } else {
      if constexpr (whole) {
        [[maybe_unused]] handler_parameter_has_no_json_binding_for<Part> error;
      } else {
        [[maybe_unused]] handler_parameter_has_no_json_binding_for<Part, Unbindable> error;
      }
      static_assert(is_bindable_v<Unbindable>,
                    "batchrpc: a handler parameter has no JSON binding. Bind a struct with "
                    "BATCHRPC_FIELDS(Type, field...), an enum with BATCHRPC_ENUM, or specialise "
                    "rpc::JsonTraits<T>; or take a standard type (numbers, strings, containers, "
                    "std::optional, std::variant), const rpc::Value& or rpc::Json. Maps need "
                    "string keys; a char is not a number here (take std::string or std::int8_t).");
    }
  }

  if constexpr (!Info::all_default_constructible) {
    using Undefaultable = bare_t<typename first_param_where<undefaultable, Args>::type>;
    using Part = typename part_at_fault<default_readable, Undefaultable>::type;
    if constexpr (std::is_same_v<Part, Undefaultable>) {
      [[maybe_unused]] handler_parameter_must_be_default_constructible<Part> error;
    } else {
      [[maybe_unused]] handler_parameter_must_be_default_constructible<Part, Undefaultable> error;
    }
  }
  static_assert(Info::all_default_constructible,
                "batchrpc: a bound parameter's type, and each element of it, must be "
                "default-constructible: params are read into default-constructed values. Give "
                "the type a default constructor (an aggregate with default member initialisers "
                "has one; a std::unordered_set of a type with no std::hash has none).");

  if constexpr (!Sig::is_const) {
    [[maybe_unused]] handler_must_be_callable_as_const_for<F> error;
  }
  static_assert(Sig::is_const,
                "batchrpc: handlers may run on many threads at once and are called as const. "
                "Drop `mutable` (or make operator() const) and keep shared state behind a mutex "
                "or an atomic.");

  if constexpr (!Info::refs_ok) {
    using Misplaced = typename first_param_where<misplaced_bound_ref, Args>::type;
    [[maybe_unused]] bound_parameter_passed_the_wrong_way_for<Misplaced> error;
  }
  static_assert(Info::refs_ok,
                "batchrpc: take bound parameters by value or by const reference, not T&, and "
                "rpc::Value as const rpc::Value&.");

  if constexpr (!Info::injected_refs_ok) {
    using Misplaced = typename first_param_where<misplaced_injected_ref, Args>::type;
    [[maybe_unused]] injected_parameter_passed_the_wrong_way_for<Misplaced> error;
  }
  static_assert(Info::injected_refs_ok,
                "batchrpc: take rpc::Context and rpc::ResultWriter by reference (rpc::Context&), "
                "and rpc::Responder and rpc::Params by value or const&.");

  if constexpr (!Rules::params_alone) {
    [[maybe_unused]] handler_takes_params_and_bound_parameters_for<F> error;
  }
  static_assert(Rules::params_alone,
                "batchrpc: a handler taking rpc::Params reads all params itself; remove the "
                "other bound parameters or drop rpc::Params.");

  if constexpr (!Rules::writer_returns_void) {
    [[maybe_unused]] handler_with_result_writer_must_return_void_not<R> error;
  }
  static_assert(Rules::writer_returns_void,
                "batchrpc: a handler taking rpc::ResultWriter& writes its result itself and "
                "must return void.");

  if constexpr (!Rules::responder_returns_void) {
    [[maybe_unused]] handler_with_responder_must_return_void_not<R> error;
  } else if constexpr (!Rules::responder_alone) {
    [[maybe_unused]] handler_takes_both_responder_and_result_writer_for<F> error;
  }
  static_assert(Rules::responder_returns_void && Rules::responder_alone,
                "batchrpc: a handler taking rpc::Responder answers through it: return void "
                "and do not also take rpc::ResultWriter&.");

  if constexpr (!Rules::result_writable) {
    using Part = unwritable_part_t<Result>;
    if constexpr (write_misdeclared<Part>) {
      refuse_misdeclared_write<Part, Result>();
    } else {
      if constexpr (std::is_same_v<Part, Result>) {
        [[maybe_unused]] handler_result_has_no_json_form_for<Part> error;
      } else {
        [[maybe_unused]] handler_result_has_no_json_form_for<Part, Result> error;
      }
      static_assert(Rules::result_writable,
                    "batchrpc: the handler's return type has no JSON form. Bind a struct with "
                    "BATCHRPC_FIELDS(Type, field...), an enum with BATCHRPC_ENUM, or specialise "
                    "rpc::JsonTraits<T>; or return a standard type, rpc::Json or void. Maps need "
                    "string keys; a char is not a number here (use std::string or std::int8_t).");
    }
  }

  if constexpr (!Rules::names_fit) {
    [[maybe_unused]] names_given_for_bound_parameters<N, Info::bound_count> error;
  }
  static_assert(Rules::names_fit,
                "batchrpc: rpc::names(...) must give exactly one name per bound parameter "
                "(rpc::Context& and rpc::ResultWriter& take no name).");
}

// Every compile-time check on a handler, each with a message that says what to write instead.
template <class F, std::size_t N>
constexpr bool check_handler() {
  if constexpr (is_member_function_v<F>) {
    [[maybe_unused]] member_function_needs_its_object_for<F> error;
  } else if constexpr (!has_signature<F>) {
    [[maybe_unused]] handler_parameters_cannot_be_seen_for<F> error;
  }
  static_assert(!is_member_function_v<F>,
                "batchrpc: a member function needs its object: "
                "router.add(name, &Class::method, object) (object by reference or pointer).");
  static_assert(has_signature<F> || is_member_function_v<F>,
                "batchrpc: cannot see the handler's parameters. Pass a lambda or function with "
                "explicit parameter types (no `auto` parameters, one non-template operator()).");
  if constexpr (has_signature<F>) check_signature<F, N>();
  return true;
}

// Whether make_handler<N>(F) makes a handler that takes an rpc::Responder.
template <class Fn, std::size_t N>
constexpr bool handler_answers_later() {
  if constexpr (handler_ok<Fn, N>()) {
    return arg_info<typename callable_signature<Fn>::args>::takes_responder;
  } else {
    return false;
  }
}

template <std::size_t N, class F>
HandlerPtr make_handler(F&& fn, const Names<N>& names) {
  using Fn = std::decay_t<F>;
  check_handler<Fn, N>();  // not in a static_assert: a failed check is not a constant
  if constexpr (handler_ok<Fn, N>()) {  // keeps a failed check to its one readable message
    return HandlerPtr(new TypedHandler<Fn, N>(std::forward<F>(fn), names));
  } else {
    return nullptr;
  }
}

}  // namespace rpc::detail
