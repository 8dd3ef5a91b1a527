// SPDX-License-Identifier: MIT
/// @file net_src.hpp
/// The network transports' bodies (net::Server and net::Client with their Asio and Beast code),
/// for programs that build batchrpc from its headers alone in compiled mode: include it in
/// exactly one file, which may be the one that includes <batchrpc/src.hpp>. That file needs
/// Boost's headers; for TLS, define BATCHRPC_NET_TLS before including it and link OpenSSL (its
/// other files need neither). A second copy in a program is a duplicate-symbol link error.
#pragma once

#if !defined(BATCHRPC_SEPARATE_COMPILATION)
#error "batchrpc/net_src.hpp holds the compiled network bodies: define BATCHRPC_SEPARATE_COMPILATION in every file"
#endif

#include "impl/net.ipp"
#include "impl/net_client.ipp"
