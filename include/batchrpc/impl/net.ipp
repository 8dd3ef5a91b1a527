// SPDX-License-Identifier: MIT
// Non-template bodies of net.hpp: net::Server forwards to detail::ServerCore, where the Asio
// and Beast code lives (compiled once in the compiled variant, src/net.cpp).
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "../config.hpp"
#include "../detail/net/server_core.hpp"
#include "../net.hpp"

namespace rpc::inline BATCHRPC_ABI::net {

BATCHRPC_DECL Server::Server(const Router& router, ServerOptions options)
    : core_(std::make_unique<detail::ServerCore>(router, std::move(options))) {}

BATCHRPC_DECL Server::~Server() = default;  // ~ServerCore shuts down

BATCHRPC_DECL int Server::listen(const std::string& host, int port, Protocol protocol,
                                 boost::asio::ssl::context* tls) {
  return core_->listen(host, port, protocol, tls);
}

BATCHRPC_DECL void Server::listen_unix(const std::string& path, Protocol protocol, boost::asio::ssl::context* tls) {
  core_->listen_unix(path, protocol, tls);
}

BATCHRPC_DECL void Server::start() { core_->start(); }

BATCHRPC_DECL void Server::shutdown() { core_->shutdown(); }

BATCHRPC_DECL std::size_t Server::connections() const { return core_->connections(); }

}  // namespace rpc::net
