// SPDX-License-Identifier: MIT
/// @file config.hpp
/// Build-mode switches: header-only (default) or compiled (BATCHRPC_SEPARATE_COMPILATION).
#pragma once

// Header-only mode: non-template bodies are `inline` and included from each header.
// Compiled mode: they live in the batchrpc_compiled library (src/batchrpc.cpp), asio style.
#if defined(BATCHRPC_SEPARATE_COMPILATION)
#define BATCHRPC_DECL
#else
#define BATCHRPC_DECL inline
#define BATCHRPC_HEADER_ONLY 1
#endif
