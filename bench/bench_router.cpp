// SPDX-License-Identifier: MIT
// Router throughput against a plain RapidJSON DOM loop doing the same work (the floor).
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <batchrpc/batchrpc.hpp>

namespace {

std::string ping_request(std::size_t id) {
  return R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":)" + std::to_string(id) +
         R"(},"id":)" + std::to_string(id) + "}";
}

std::string ping_batch(std::size_t members) {
  if (members == 1) return ping_request(0);
  std::string s = "[";
  for (std::size_t i = 0; i < members; ++i) {
    if (i) s += ',';
    s += ping_request(i);
  }
  return s + "]";
}

// The floor: parse into a DOM, look the method up, write each reply with Writer<StringBuffer>,
// buffers reused. No validation beyond what RapidJSON does by default.
class DomFloor {
 public:
  bool handle(const std::string& message) {
    doc_.Parse(message.c_str(), message.size());
    out_.Clear();
    if (doc_.HasParseError()) return false;
    writer_.Reset(out_);
    if (doc_.IsArray()) {
      writer_.StartArray();
      for (const auto& m : doc_.GetArray()) one(m);
      writer_.EndArray();
    } else {
      one(doc_);
    }
    return true;
  }
  std::size_t size() const { return out_.GetSize(); }

 private:
  void one(const rapidjson::Value& m) {
    const auto method = m.FindMember("method");
    const auto id = m.FindMember("id");
    const auto params = m.FindMember("params");
    if (method == m.MemberEnd() || !method->value.IsString() || id == m.MemberEnd()) return;
    writer_.StartObject();
    writer_.Key("jsonrpc");
    writer_.String("2.0");
    writer_.Key("id");
    id->value.Accept(writer_);
    writer_.Key("result");
    if (std::strcmp(method->value.GetString(), "ping") == 0 && params != m.MemberEnd()) {
      params->value.Accept(writer_);
    } else {
      writer_.Null();
    }
    writer_.EndObject();
  }

  rapidjson::Document doc_;
  rapidjson::StringBuffer out_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

const rpc::Router& ping_router() {
  static const rpc::Router router = [] {
    rpc::Router r;
    r.add("ping", [](const rpc::Value& nonce, rpc::ResultWriter& out) {
      out.start_object();
      out.key("nonce");
      out.write(nonce);
      out.end_object();
    }, rpc::names("nonce"));
    return r;
  }();
  return router;
}

void BM_Floor_Ping(benchmark::State& state) {
  const std::string message = ping_batch(static_cast<std::size_t>(state.range(0)));
  DomFloor floor;
  for (auto _ : state) {
    benchmark::DoNotOptimize(floor.handle(message));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Router_Ping(benchmark::State& state) {
  const std::string message = ping_batch(static_cast<std::size_t>(state.range(0)));
  const rpc::Router& router = ping_router();
  rpc::Buffer out;
  for (auto _ : state) {
    benchmark::DoNotOptimize(router.handle(message, out));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Router_PingInsitu(benchmark::State& state) {
  const std::string message = ping_batch(static_cast<std::size_t>(state.range(0)));
  const rpc::Router& router = ping_router();
  rpc::Buffer out;
  std::string scratch;
  for (auto _ : state) {
    scratch.assign(message);  // a transport's read buffer, refilled per message
    benchmark::DoNotOptimize(router.handle_insitu(scratch, out));
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

}  // namespace

BENCHMARK(BM_Floor_Ping)->Arg(1)->Arg(100);
BENCHMARK(BM_Router_Ping)->Arg(1)->Arg(100);
BENCHMARK(BM_Router_PingInsitu)->Arg(1)->Arg(100);
BENCHMARK_MAIN();
