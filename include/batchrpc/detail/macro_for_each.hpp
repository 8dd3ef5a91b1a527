// SPDX-License-Identifier: MIT
// BATCHRPC_DETAIL_FOR_EACH(m, Type, a, b, c) expands to `m(Type, a), m(Type, b), m(Type, c)`:
// the loop behind BATCHRPC_FIELDS and BATCHRPC_ENUM.
//
// A macro cannot name itself, so each step expands to the *name* of the next step followed by
// an unexpanded `()`; each rescan by BATCHRPC_DETAIL_RESCAN then takes one more step. Five
// nested levels of three rescans take lists of up to (3^6 + 1) / 2 = 365 names.
// Past that the compiler names BATCHRPC_DETAIL_FOR_EACH_NEXT as undeclared.
//
// Marked a system header (it holds these macros and nothing else): an error in a name passed
// through them, such as a misspelt field, would otherwise be followed by a note for every
// rescan, over a thousand lines; GCC and clang leave out the notes for system-header macros.
#pragma once
#pragma GCC system_header

#define BATCHRPC_DETAIL_RESCAN(...) BATCHRPC_DETAIL_RESCAN5(BATCHRPC_DETAIL_RESCAN5(BATCHRPC_DETAIL_RESCAN5(__VA_ARGS__)))
#define BATCHRPC_DETAIL_RESCAN5(...) BATCHRPC_DETAIL_RESCAN4(BATCHRPC_DETAIL_RESCAN4(BATCHRPC_DETAIL_RESCAN4(__VA_ARGS__)))
#define BATCHRPC_DETAIL_RESCAN4(...) BATCHRPC_DETAIL_RESCAN3(BATCHRPC_DETAIL_RESCAN3(BATCHRPC_DETAIL_RESCAN3(__VA_ARGS__)))
#define BATCHRPC_DETAIL_RESCAN3(...) BATCHRPC_DETAIL_RESCAN2(BATCHRPC_DETAIL_RESCAN2(BATCHRPC_DETAIL_RESCAN2(__VA_ARGS__)))
#define BATCHRPC_DETAIL_RESCAN2(...) BATCHRPC_DETAIL_RESCAN1(BATCHRPC_DETAIL_RESCAN1(BATCHRPC_DETAIL_RESCAN1(__VA_ARGS__)))
#define BATCHRPC_DETAIL_RESCAN1(...) __VA_ARGS__

#define BATCHRPC_DETAIL_EMPTY_CALL ()
#define BATCHRPC_DETAIL_FOR_EACH(m, Type, ...) \
  __VA_OPT__(BATCHRPC_DETAIL_RESCAN(BATCHRPC_DETAIL_FOR_EACH_STEP(m, Type, __VA_ARGS__)))
#define BATCHRPC_DETAIL_FOR_EACH_STEP(m, Type, first, ...) \
  m(Type, first) __VA_OPT__(, BATCHRPC_DETAIL_FOR_EACH_NEXT BATCHRPC_DETAIL_EMPTY_CALL(m, Type, __VA_ARGS__))
#define BATCHRPC_DETAIL_FOR_EACH_NEXT() BATCHRPC_DETAIL_FOR_EACH_STEP
