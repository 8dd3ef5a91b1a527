// SPDX-License-Identifier: MIT
// Non-template bodies of net_client.hpp: net::Client forwards to detail::ClientCore, where the
// Asio and Beast code lives (compiled once in the compiled variant, src/net_client.cpp).
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <utility>

#include "../config.hpp"
#include "../detail/net/client_core.hpp"
#include "../net_client.hpp"

namespace rpc::inline BATCHRPC_ABI::net {

BATCHRPC_DECL Client::Client(ClientOptions options)
    : core_(std::make_unique<detail::ClientCore>(std::move(options))) {}

// Fails what is in flight and joins before `core_` is destroyed: a callback that runs then may
// call this client again, and must find its core (which refuses: "the client was destroyed").
BATCHRPC_DECL Client::~Client() { core_->shut_down(); }

BATCHRPC_DECL void Client::connect(const std::string& host, int port) { core_->connect_tcp(host, port); }

BATCHRPC_DECL void Client::connect_unix(const std::string& path) { core_->connect_unix(path); }

BATCHRPC_DECL BatchBuilder Client::batch(bool always_batch) { return core_->batch(always_batch); }

BATCHRPC_DECL void Client::send(BatchBuilder batch, std::function<void(Replies)> done) {
  core_->send(std::move(batch), std::move(done));
}

BATCHRPC_DECL std::future<Replies> Client::send(BatchBuilder batch) {
  auto promise = std::make_shared<std::promise<Replies>>();
  std::future<Replies> replies = promise->get_future();
  core_->send(std::move(batch), [promise](Replies r) { promise->set_value(std::move(r)); });
  return replies;
}

BATCHRPC_DECL void Client::close() { core_->close(); }

}  // namespace rpc::net
