// SPDX-License-Identifier: MIT
// A peer: the same `ping` and `subtract` workloads through libjson-rpc-cpp's in-process request
// handler (jsoncpp DOM), built only where Debian's libjsonrpccpp-dev is installed.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include <jsonrpccpp/server.h>
#include <jsonrpccpp/server/requesthandlerfactory.h>

#include "allocation_counter.hpp"
#include "measure.hpp"
#include "workloads.hpp"

namespace {

class Methods final : public jsonrpc::IProcedureInvokationHandler {
 public:
  void HandleMethodCall(jsonrpc::Procedure& proc, const Json::Value& input, Json::Value& output) override {
    const std::string& name = proc.GetProcedureName();
    if (name == "ping") {
      output = Json::Value(Json::objectValue);
      if (input.isObject() && input.isMember("nonce")) output["nonce"] = input["nonce"];
    } else if (input.isArray()) {
      output = input[0].asInt64() - input[1].asInt64();
    } else {
      output = input["minuend"].asInt64() - input["subtrahend"].asInt64();
    }
  }
  void HandleNotificationCall(jsonrpc::Procedure&, const Json::Value&) override {}
};

struct Peer {
  Methods methods;
  std::unique_ptr<jsonrpc::IProtocolHandler> handler{
      jsonrpc::RequestHandlerFactory::createProtocolHandler(jsonrpc::JSONRPC_SERVER_V2, methods)};
  Peer() {
    // No parameter declarations: params are not type-checked by the library, as in the floor.
    handler->AddProcedure(jsonrpc::Procedure("ping", jsonrpc::PARAMS_BY_NAME, jsonrpc::JSON_OBJECT, nullptr));
    handler->AddProcedure(jsonrpc::Procedure("subtract", jsonrpc::PARAMS_BY_POSITION, jsonrpc::JSON_INTEGER, nullptr));
  }
};

template <class Make>
void run(benchmark::State& state, Make make) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::string message = bench::batch(n, make);
  Peer peer;
  std::string reply;
  peer.handler->HandleRequest(message, reply);
  if (reply.find(R"("result")") == std::string::npos || reply.find(R"("error")") != std::string::npos) {
    state.SkipWithError(("libjson-rpc-cpp did not answer with results: " + reply.substr(0, 200)).c_str());
    return;
  }
  const long before = bench::allocations();
  state.counters["started_s"] = bench::seconds_since_start();
  for (auto _ : state) {
    reply.clear();
    peer.handler->HandleRequest(message, reply);
    benchmark::DoNotOptimize(reply);
  }
  const auto requests = state.iterations() * state.range(0);
  state.SetItemsProcessed(requests);
  state.counters["allocs_per_request"] =
      static_cast<double>(bench::allocations() - before) / static_cast<double>(requests);
}

void BM_PeerJsonRpcCppPing(benchmark::State& state) { run(state, bench::ping); }
void BM_PeerJsonRpcCppSubtractPositional(benchmark::State& state) {
  run(state, [](std::size_t i) { return bench::subtract(i, false); });
}
void BM_PeerJsonRpcCppSubtractNamed(benchmark::State& state) {
  run(state, [](std::size_t i) { return bench::subtract(i, true); });
}

}  // namespace

BENCHMARK(BM_PeerJsonRpcCppPing)->Arg(1)->Arg(100);
BENCHMARK(BM_PeerJsonRpcCppSubtractPositional)->Arg(1)->Arg(100);
BENCHMARK(BM_PeerJsonRpcCppSubtractNamed)->Arg(1)->Arg(100);
