// SPDX-License-Identifier: MIT
/// @file config.hpp
/// Build-mode switches: header-only (default) or compiled (BATCHRPC_SEPARATE_COMPILATION), and
/// the inline namespace that keeps the two (and two versions) from mixing in one program.
#pragma once

#include <version>

#include "version.hpp"

// Sessions and handlers stop through std::stop_token (<stop_token>, C++20). libc++ before 20
// ships it only to code compiled with -fexperimental-library; say so instead of failing later.
#if defined(_LIBCPP_VERSION) && !defined(__cpp_lib_jthread)
#error "batchrpc needs std::stop_token: with libc++ before 20, compile with -fexperimental-library"
#endif

// Header-only mode: non-template bodies are `inline` and included from each header.
// Compiled mode: they live in the batchrpc_compiled library (src/batchrpc.cpp), asio style.
#if defined(BATCHRPC_SEPARATE_COMPILATION)
#define BATCHRPC_DECL
#define BATCHRPC_ABI_MODE compiled
#else
#define BATCHRPC_DECL inline
#define BATCHRPC_HEADER_ONLY 1
#define BATCHRPC_ABI_MODE header_only
#endif

// Everything in `rpc` lives in an inline namespace named after the version and the mode, such
// as `rpc::v0_1_0_header_only`: code names it `rpc::Router` as ever, but translation units
// built in different modes, or against different versions, refer to different symbols. A
// program that mixes them where they meet fails to link instead of silently running one
// mode's code where the other's was compiled in (the weak and strong definitions would
// otherwise pick for you).
#define BATCHRPC_ABI_NAME_(major, minor, patch, mode) v##major##_##minor##_##patch##_##mode
#define BATCHRPC_ABI_NAME(major, minor, patch, mode) BATCHRPC_ABI_NAME_(major, minor, patch, mode)
#define BATCHRPC_ABI \
  BATCHRPC_ABI_NAME(BATCHRPC_VERSION_MAJOR, BATCHRPC_VERSION_MINOR, BATCHRPC_VERSION_PATCH, BATCHRPC_ABI_MODE)
