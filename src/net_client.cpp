// SPDX-License-Identifier: MIT
// The compiled network client (batchrpc::net_compiled): net::Client and all of its Asio and
// Beast code, built once (its own file, so it compiles alongside the server's), with TLS where
// OpenSSL was found (BATCHRPC_NET_TLS, private to this file).
#if !defined(BATCHRPC_SEPARATE_COMPILATION)
#error "src/net_client.cpp is compiled with batchrpc::compiled: build it with BATCHRPC_SEPARATE_COMPILATION"
#endif

#include "batchrpc/impl/net_client.ipp"
