// SPDX-License-Identifier: MIT
// The compiled network server (batchrpc::net_compiled): net::Server and all of its Asio and Beast
// code, built once, with TLS where OpenSSL was found (BATCHRPC_NET_TLS, private to this file).
#if !defined(BATCHRPC_SEPARATE_COMPILATION)
#error "src/net.cpp is compiled with batchrpc::compiled: build it with BATCHRPC_SEPARATE_COMPILATION"
#endif

#include "batchrpc/impl/net.ipp"
