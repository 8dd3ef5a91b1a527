// SPDX-License-Identifier: MIT
/// @file src.hpp
/// The compiled variant's bodies, for programs that build batchrpc from its headers alone (no
/// batchrpc::compiled library): define BATCHRPC_SEPARATE_COMPILATION in every translation unit
/// and include this header in exactly one of them. Every other file then compiles only
/// declarations and its own handlers, as with the library. Include it once per program: a
/// second copy is a duplicate-symbol link error. The network transports are not in it: include
/// <batchrpc/net_src.hpp> the same way, or link batchrpc::net_compiled.
#pragma once

#if !defined(BATCHRPC_SEPARATE_COMPILATION)
#error "batchrpc/src.hpp holds the compiled variant's bodies: define BATCHRPC_SEPARATE_COMPILATION in every file"
#endif

#include "impl/builtins.ipp"
#include "impl/call.ipp"
#include "impl/client.ipp"
#include "impl/coalescer.ipp"
#include "impl/executor.ipp"
#include "impl/json.ipp"
#include "impl/json_traits.ipp"
#include "impl/log.ipp"
#include "impl/method_table.ipp"
#include "impl/param_errors.ipp"
#include "impl/peer.ipp"
#include "impl/progress.ipp"
#include "impl/result_writer.ipp"
#include "impl/router.ipp"
#include "impl/session.ipp"
#include "impl/stream.ipp"
#include "impl/tools.ipp"
