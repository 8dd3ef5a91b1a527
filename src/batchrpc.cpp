// SPDX-License-Identifier: MIT
// The compiled variant: every non-template body, built once (define
// BATCHRPC_SEPARATE_COMPILATION in every translation unit that uses the library).
#if !defined(BATCHRPC_SEPARATE_COMPILATION)
#error "src/batchrpc.cpp is the compiled variant: build it with BATCHRPC_SEPARATE_COMPILATION"
#endif

#include "batchrpc/impl/builtins.ipp"
#include "batchrpc/impl/call.ipp"
#include "batchrpc/impl/client.ipp"
#include "batchrpc/impl/coalescer.ipp"
#include "batchrpc/impl/executor.ipp"
#include "batchrpc/impl/json.ipp"
#include "batchrpc/impl/json_traits.ipp"
#include "batchrpc/impl/log.ipp"
#include "batchrpc/impl/method_table.ipp"
#include "batchrpc/impl/param_errors.ipp"
#include "batchrpc/impl/peer.ipp"
#include "batchrpc/impl/progress.ipp"
#include "batchrpc/impl/result_writer.ipp"
#include "batchrpc/impl/router.ipp"
#include "batchrpc/impl/session.ipp"
#include "batchrpc/impl/stream.ipp"
#include "batchrpc/impl/tools.ipp"
