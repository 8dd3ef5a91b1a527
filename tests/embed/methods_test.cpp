// SPDX-License-Identifier: MIT
// The plugin's methods through a router: reply shapes and types, base64, ranking and top_k,
// every -32602 with its exact reply, gating, any backend, and batch-aware dispatch answering
// byte for byte as member-by-member dispatch does.
#include "embed/methods.hpp"

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "embed/base64.hpp"
#include "embed/hashing_model.hpp"
#include "model_fixture.hpp"
#include "support/printing.hpp"

namespace {

using Texts = std::vector<std::string_view>;

// Counts the backend calls and texts behind any backend (here the reference model): a real
// model plugs in the same way.
class CountingBackend final : public embed::Backend {
 public:
  explicit CountingBackend(const embed::Backend& inner) : inner_(inner) {}
  const embed::ModelInfo& info() const noexcept override { return inner_.info(); }
  void embed(std::span<const std::string_view> texts, embed::DenseVectors& out) const override {
    count(texts.size());
    inner_.embed(texts, out);
  }
  void embed_sparse(std::span<const std::string_view> texts,
                    embed::SparseVectors& out) const override {
    count(texts.size());
    inner_.embed_sparse(texts, out);
  }
  void embed_multi(std::span<const std::string_view> texts,
                   embed::MultiVectors& out) const override {
    count(texts.size());
    inner_.embed_multi(texts, out);
  }
  void score(std::string_view query, std::span<const std::string_view> passages,
             std::vector<float>& scores) const override {
    count(passages.size() + 1);
    inner_.score(query, passages, scores);
  }
  mutable std::atomic<int> calls{0};
  mutable std::atomic<std::size_t> texts_seen{0};

 private:
  void count(std::size_t n) const {
    ++calls;
    texts_seen += n;
  }
  const embed::Backend& inner_;
};

struct Server {
  rpc::Router router;
  explicit Server(embed::MethodsOptions options = {},
                  const embed::Backend& backend = test::model()) {
    embed::register_methods(router, backend, options);
  }
  std::string call(std::string_view message) const {
    const std::optional<std::string> reply = router.handle(message);
    REQUIRE(reply);
    return *reply;
  }
};

std::string request(std::string_view method, std::string_view params, std::string_view id = "1") {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":")" + std::string(method) +
         R"(","params":)" + std::string(params) + "}";
}

std::string invalid_params(std::string_view data, std::string_view id = "1") {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) +
         R"(,"error":{"code":-32602,"message":"Invalid params","data":)" + std::string(data) + "}}";
}

// The reply's `result`, numbers kept as their text (so floats can be read back exactly).
struct Reply {
  rapidjson::Document doc;
  explicit Reply(const std::string& text) {
    doc.Parse<rapidjson::kParseNumbersAsStringsFlag>(text.c_str(), text.size());
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc.HasMember("result"));
  }
  const rpc::Value& result() const { return doc["result"]; }
};

float read_float(const rpc::Value& v) {
  REQUIRE(v.IsString());  // a number, kept as text
  float f = 0;
  const char* end = v.GetString() + v.GetStringLength();
  const auto [ptr, ec] = std::from_chars(v.GetString(), end, f);
  REQUIRE(ec == std::errc());
  REQUIRE(ptr == end);
  return f;
}

// A float vector as sent: JSON numbers or base64.
std::vector<float> read_vector(const rpc::Value& v) {
  if (v.IsString()) {
    auto floats =
        embed::base64::decode_floats(std::string_view(v.GetString(), v.GetStringLength()));
    REQUIRE(floats);
    return *floats;
  }
  REQUIRE(v.IsArray());
  std::vector<float> out;
  for (const auto& f : v.GetArray()) out.push_back(read_float(f));
  return out;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::string key_list(const rpc::Value& object) {
  std::string keys;
  for (const auto& m : object.GetObject()) keys += std::string(m.name.GetString()) + ",";
  return keys;
}

std::uint64_t read_uint(const rpc::Value& v) {
  REQUIRE(v.IsString());
  std::uint64_t u = 0;
  const auto [ptr, ec] = std::from_chars(v.GetString(), v.GetString() + v.GetStringLength(), u);
  REQUIRE(ec == std::errc());
  REQUIRE(ptr == v.GetString() + v.GetStringLength());
  return u;
}

const Texts texts{"The cat sat on the mat.", "dogs bark", "Ünïcödé"};
constexpr std::string_view texts_json = R"(["The cat sat on the mat.","dogs bark","Ünïcödé"])";

// Calls for answer_together over the given params values, each writing into its own buffer.
// Holds pointers into itself, so it is built in place and never moved.
struct CallSet {
  std::vector<rpc::Params> params;
  std::vector<rpc::Buffer> results;
  std::vector<std::unique_ptr<rpc::ResultWriter>> writers;
  std::vector<embed::EmbedCall> calls;

  explicit CallSet(const std::vector<const rpc::Value*>& values) : results(values.size()) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      params.emplace_back(values[i]);
      writers.push_back(std::make_unique<rpc::ResultWriter>(results[i]));
    }
    for (std::size_t i = 0; i < values.size(); ++i) calls.push_back({&params[i], writers[i].get()});
  }
  CallSet(const CallSet&) = delete;
  CallSet& operator=(const CallSet&) = delete;
};

}  // namespace

TEST_SUITE("embed.methods") {
  TEST_CASE("embed: model, dimensions, encoding, then one vector of 384 floats per input") {
    Server server;
    embed::DenseVectors expected;
    test::model().embed(texts, expected);
    for (const std::string_view encoding : {"float", "base64"}) {
      CAPTURE(encoding);
      const std::string reply =
          server.call(request("embed", R"({"inputs":)" + std::string(texts_json) +
                                           R"(,"encoding":")" + std::string(encoding) + R"("})"));
      CHECK(reply.starts_with(
          R"({"jsonrpc":"2.0","id":1,"result":{"model":"hashing-384","dimensions":384,"encoding":")" +
          std::string(encoding) + R"(","embeddings":[)"));
      const Reply r(reply);
      CHECK(key_list(r.result()) == "model,dimensions,encoding,embeddings,");
      const auto& embeddings = r.result()["embeddings"];
      REQUIRE(embeddings.IsArray());
      REQUIRE(embeddings.Size() == texts.size());
      for (rapidjson::SizeType i = 0; i < embeddings.Size(); ++i) {
        CAPTURE(i);
        CHECK(embeddings[i].IsString() == (encoding == "base64"));
        if (embeddings[i].IsString()) CHECK(embeddings[i].GetStringLength() == 2048);
        CHECK(same_bits(read_vector(embeddings[i]), expected.row(i)));
      }
    }
  }

  TEST_CASE("embed: the default encoding is float - params may be positional") {
    Server server;
    const std::string by_name = server.call(request("embed", R"({"inputs":["hello"]})"));
    CHECK(server.call(request("embed", R"({"inputs":["hello"],"encoding":"float"})")) == by_name);
    CHECK(server.call(request("embed", R"([["hello"]])")) == by_name);
    CHECK(server.call(request("embed", R"([["hello"],null])")) == by_name);
    CHECK(server.call(request("embed", R"({"inputs":["hello"],"encoding":null})")) == by_name);
    CHECK(server.call(request("embed", R"([["hello"],"base64"])")) ==
          server.call(request("embed", R"({"encoding":"base64","inputs":["hello"]})")));
  }

  TEST_CASE("base64 and float replies carry the same floats, bit for bit") {
    Server server;
    for (const std::string_view method : {"embed", "embed/sparse", "embed/multi"}) {
      CAPTURE(method);
      const Reply floats(
          server.call(request(method, R"({"inputs":)" + std::string(texts_json) + "}")));
      const Reply base64(server.call(
          request(method, R"({"inputs":)" + std::string(texts_json) + R"(,"encoding":"base64"})")));
      const auto& a = floats.result()["embeddings"];
      const auto& b = base64.result()["embeddings"];
      REQUIRE(a.Size() == b.Size());
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (method == "embed") {
          CHECK(same_bits(read_vector(a[i]), read_vector(b[i])));
        } else if (method == "embed/sparse") {
          CHECK(same_bits(read_vector(a[i]["values"]), read_vector(b[i]["values"])));
          CHECK(b[i]["values"].IsString());
        } else {
          REQUIRE(a[i].Size() == b[i].Size());
          for (rapidjson::SizeType t = 0; t < a[i].Size(); ++t) {
            CHECK(same_bits(read_vector(a[i][t]), read_vector(b[i][t])));
            CHECK(b[i][t].IsString());
          }
        }
      }
    }
  }

  TEST_CASE("embed/sparse: {indices, values} per input, indices ascending integers") {
    Server server;
    embed::SparseVectors expected;
    test::model().embed_sparse(texts, expected);
    const Reply r(
        server.call(request("embed/sparse", R"({"inputs":)" + std::string(texts_json) + "}")));
    CHECK(key_list(r.result()) == "model,dimensions,encoding,embeddings,");
    CHECK(std::string(r.result()["dimensions"].GetString()) == "4096");
    const auto& embeddings = r.result()["embeddings"];
    REQUIRE(embeddings.Size() == texts.size());
    for (rapidjson::SizeType i = 0; i < embeddings.Size(); ++i) {
      CAPTURE(i);
      CHECK(key_list(embeddings[i]) == "indices,values,");
      const auto& indices = embeddings[i]["indices"];
      REQUIRE(indices.Size() == expected.indices_of(i).size());
      for (rapidjson::SizeType k = 0; k < indices.Size(); ++k) {
        CHECK(read_uint(indices[k]) == expected.indices_of(i)[k]);
        if (k > 0) CHECK(read_uint(indices[k - 1]) < read_uint(indices[k]));
      }
      CHECK(same_bits(read_vector(embeddings[i]["values"]), expected.values_of(i)));
    }
  }

  TEST_CASE("embed/multi: per input, one vector per token") {
    Server server;
    const Reply r(
        server.call(request("embed/multi", R"({"inputs":["the cat sat","dogs","!!!"]})")));
    CHECK(key_list(r.result()) == "model,dimensions,encoding,embeddings,");
    const auto& embeddings = r.result()["embeddings"];
    REQUIRE(embeddings.Size() == 3);
    CHECK(embeddings[0].Size() == 3);
    CHECK(embeddings[1].Size() == 1);
    CHECK(embeddings[2].Size() == 1);
    embed::MultiVectors expected;
    test::model().embed_multi(Texts{"the cat sat", "dogs", "!!!"}, expected);
    std::size_t row = 0;
    for (const auto& input : embeddings.GetArray()) {
      for (const auto& vector : input.GetArray()) {
        CHECK(same_bits(read_vector(vector), expected.vectors.row(row++)));
      }
    }
    CHECK(row == 5);
  }

  TEST_CASE("rerank: {index, score} for every passage, best first") {
    Server server;
    const Reply r(server.call(request(
        "rerank",
        R"({"query":"how do cats sleep","passages":["stock prices fell","cats sleep all day","banana bread recipe","how do cats sleep","do cats dream"]})")));
    CHECK(key_list(r.result()) == "model,results,");
    CHECK(std::string(r.result()["model"].GetString()) == "hashing-384");
    const auto& results = r.result()["results"];
    REQUIRE(results.Size() == 5);
    std::set<std::uint64_t> seen;
    float previous = 2;
    for (const auto& entry : results.GetArray()) {
      CHECK(key_list(entry) == "index,score,");
      seen.insert(read_uint(entry["index"]));
      const float score = read_float(entry["score"]);
      CHECK(score <= previous);
      previous = score;
    }
    CHECK(seen.size() == 5);
    // The text itself first, scoring 1; passages sharing the query's words before unrelated ones.
    CHECK(read_uint(results[0]["index"]) == 3);
    CHECK(read_float(results[0]["score"]) == doctest::Approx(1.0).epsilon(1e-6));
    const std::set<std::uint64_t> related{read_uint(results[1]["index"]),
                                          read_uint(results[2]["index"])};
    CHECK(related == std::set<std::uint64_t>{1, 4});
  }

  TEST_CASE("rerank: top_k keeps the best k - ties keep passage order") {
    Server server;
    const std::string passages = R"(["b c","a b","x y","a b","a"])";
    const Reply all(
        server.call(request("rerank", R"({"query":"a b","passages":)" + passages + "}")));
    const auto& ranked = all.result()["results"];
    REQUIRE(ranked.Size() == 5);
    CHECK(read_uint(ranked[0]["index"]) == 1);  // equal to passage 3: the lower index first
    CHECK(read_uint(ranked[1]["index"]) == 3);
    for (const std::size_t k : {1U, 2U, 4U, 5U, 9U}) {
      CAPTURE(k);
      const Reply top(server.call(request("rerank", R"({"query":"a b","passages":)" + passages +
                                                        R"(,"top_k":)" + std::to_string(k) + "}")));
      const auto& results = top.result()["results"];
      REQUIRE(results.Size() == std::min<std::size_t>(k, 5));
      for (rapidjson::SizeType i = 0; i < results.Size(); ++i) {
        CHECK(read_uint(results[i]["index"]) == read_uint(ranked[i]["index"]));
        CHECK(std::string(results[i]["score"].GetString()) == ranked[i]["score"].GetString());
      }
    }
    CHECK(server.call(request("rerank", R"(["a b",["a"],1])")) ==
          server.call(request("rerank", R"({"query":"a b","passages":["a"],"top_k":1})")));
  }

  TEST_CASE("every -32602 of the embedding methods, exactly") {
    const Server server({.max_inputs = 3, .max_text_bytes = 8});
    const std::vector<std::pair<std::string, std::string>> cases{
        {"{}", R"({"param":"inputs","reason":"missing required parameter"})"},
        {"[]", R"({"param":"inputs","reason":"missing required parameter"})"},
        {R"({"inputs":null})", R"({"param":"inputs","reason":"missing required parameter"})"},
        {R"({"inputs":[]})", R"({"param":"inputs","reason":"expected at least one text"})"},
        {R"({"inputs":"hello"})", R"({"param":"inputs","reason":"expected an array of strings"})"},
        {R"({"inputs":{"0":"a"}})",
         R"({"param":"inputs","reason":"expected an array of strings"})"},
        {R"({"inputs":["a",42]})", R"({"param":"inputs","index":1,"reason":"expected a string"})"},
        {R"({"inputs":["a","b",null]})",
         R"({"param":"inputs","index":2,"reason":"expected a string"})"},
        {R"({"inputs":[["a"]]})", R"({"param":"inputs","index":0,"reason":"expected a string"})"},
        {R"({"inputs":["a",""]})", R"({"param":"inputs","index":1,"reason":"empty text"})"},
        {R"({"inputs":["a","b","c","d"]})",
         R"({"param":"inputs","reason":"too many texts","max":3})"},
        {R"({"inputs":["a","123456789"]})",
         R"({"param":"inputs","index":1,"reason":"text too long","max":8})"},
        {R"({"inputs":["a"],"encoding":"hex"})",
         R"({"param":"encoding","reason":"expected \"float\" or \"base64\""})"},
        {R"({"inputs":["a"],"encoding":64})",
         R"({"param":"encoding","reason":"expected \"float\" or \"base64\""})"},
        {R"({"input":["a"]})", R"({"param":"input","reason":"unknown parameter"})"},
        {R"([["a"],"float",1])", R"({"reason":"too many params: expected at most 2, got 3"})"},
        {R"([["a"],"floats"])",
         R"({"param":"encoding","reason":"expected \"float\" or \"base64\""})"},
    };
    for (const std::string_view method : {"embed", "embed/sparse", "embed/multi"}) {
      for (const auto& [params, data] : cases) {
        CAPTURE(method);
        CAPTURE(params);
        CHECK(server.call(request(method, params)) == invalid_params(data));
      }
      // No params member at all.
      CHECK(server.call(R"({"jsonrpc":"2.0","id":1,"method":")" + std::string(method) + R"("})") ==
            invalid_params(R"({"param":"inputs","reason":"missing required parameter"})"));
      // Exactly at the limits is fine.
      CHECK(server.call(request(method, R"({"inputs":["a","b","12345678"]})")).find("\"result\"") !=
            std::string::npos);
    }
  }

  TEST_CASE("-32602 for too much text in one call - embed/multi has its own, lower bound") {
    const Server server({.max_text_bytes = 8, .max_total_bytes = 12, .max_multi_bytes = 6});
    const std::string data12 = R"({"param":"inputs","reason":"too much text in all","max":12})";
    CHECK(server.call(request("embed", R"({"inputs":["12345678","12345"]})")) ==
          invalid_params(data12));
    CHECK(server.call(request("embed/sparse", R"({"inputs":["12345678","12345"]})")) ==
          invalid_params(data12));
    CHECK(server.call(request("embed", R"({"inputs":["12345678","1234"]})")).find("\"result\"") !=
          std::string::npos);
    CHECK(server.call(request("embed/multi", R"({"inputs":["1234","123"]})")) ==
          invalid_params(R"({"param":"inputs","reason":"too much text in all","max":6})"));
    CHECK(server.call(request("embed/multi", R"({"inputs":["1234","12"]})")).find("\"result\"") !=
          std::string::npos);
    CHECK(server.call(request("rerank", R"({"query":"q","passages":["12345678","12345"]})")) ==
          invalid_params(R"({"param":"passages","reason":"too much text in all","max":12})"));
  }

  TEST_CASE("every -32602 of rerank, exactly") {
    const Server server({.max_inputs = 2, .max_text_bytes = 8});
    const std::vector<std::pair<std::string, std::string>> cases{
        {R"({"passages":["a"]})", R"({"param":"query","reason":"missing required parameter"})"},
        {"{}", R"({"param":"query","reason":"missing required parameter"})"},
        {R"({"query":7,"passages":["a"]})", R"({"param":"query","reason":"expected a string"})"},
        {R"({"query":"","passages":["a"]})", R"({"param":"query","reason":"empty text"})"},
        {R"({"query":"123456789","passages":["a"]})",
         R"({"param":"query","reason":"text too long","max":8})"},
        {R"({"query":"a"})", R"({"param":"passages","reason":"missing required parameter"})"},
        {R"({"query":"a","passages":[]})",
         R"({"param":"passages","reason":"expected at least one text"})"},
        {R"({"query":"a","passages":["a",false]})",
         R"({"param":"passages","index":1,"reason":"expected a string"})"},
        {R"({"query":"a","passages":["a","b","c"]})",
         R"({"param":"passages","reason":"too many texts","max":2})"},
        {R"({"query":"a","passages":["a"],"top_k":0})",
         R"({"param":"top_k","reason":"expected a positive integer"})"},
        {R"({"query":"a","passages":["a"],"top_k":-1})",
         R"({"param":"top_k","reason":"expected a positive integer"})"},
        {R"({"query":"a","passages":["a"],"top_k":1.5})",
         R"({"param":"top_k","reason":"expected a positive integer"})"},
        {R"({"query":"a","passages":["a"],"top_k":"2"})",
         R"({"param":"top_k","reason":"expected a positive integer"})"},
        {R"({"query":"a","passages":["a"],"encoding":"base64"})",
         R"({"param":"encoding","reason":"unknown parameter"})"},
        {R"(["a",["a"],1,2])", R"({"reason":"too many params: expected at most 3, got 4"})"},
    };
    for (const auto& [params, data] : cases) {
      CAPTURE(params);
      CHECK(server.call(request("rerank", params)) == invalid_params(data));
    }
  }

  TEST_CASE("a batch answers each member on its own - notifications run and are not answered") {
    Server server;
    const std::string good = server.call(request("embed", R"({"inputs":["hello"]})", "\"a\""));
    const std::string bad =
        invalid_params(R"({"param":"inputs","reason":"expected at least one text"})", "2");
    std::string batch = "[";
    batch += request("embed", R"({"inputs":["hello"]})", "\"a\"");
    batch += ',';
    batch += request("embed", R"({"inputs":[]})", "2");
    batch += R"(,{"jsonrpc":"2.0","method":"embed","params":{"inputs":["x"]}}])";
    std::string expected = "[";
    expected += good;
    expected += ',';
    expected += bad;
    expected += ']';
    CHECK(server.call(batch) == expected);
    CHECK_FALSE(server.router.handle(
        R"({"jsonrpc":"2.0","method":"rerank","params":{"query":"a","passages":["b"]}})"));
  }

  TEST_CASE("capabilities embed and rerank gate the methods - info describes them") {
    Server server;
    rpc::add_builtins(server.router, {.server_name = "embed-test", .server_version = "1"});
    CHECK(server.router.capabilities() == std::vector<std::string>{"embed", "rerank"});
    rpc::Session only_embed(server.router, {.capabilities = {"embed"}});
    CHECK(
        only_embed.handle(request("rerank", R"({"query":"a","passages":["b"]})")) ==
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"rerank"}}})");
    CHECK(only_embed.handle(request("embed", R"({"inputs":["a"]})")) ==
          server.call(request("embed", R"({"inputs":["a"]})")));
    rpc::Session only_rerank(server.router, {.capabilities = {"rerank"}});
    for (const char* method : {"embed", "embed/sparse", "embed/multi"}) {
      CHECK(
          only_rerank.handle(request(method, R"({"inputs":["a"]})")) ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"embed"}}})");
    }
    const std::string info = server.call(R"({"jsonrpc":"2.0","id":1,"method":"info"})");
    CHECK(
        info.find(
            R"("embed":{"model":"hashing-384","dimensions":384,"sparseDimensions":4096,"maxInputs":1024,"maxTextBytes":32768,"maxTotalBytes":1048576,"maxMultiBytes":32768,"encodings":["float","base64"]})") !=
        std::string::npos);
    CHECK(
        info.find(
            R"("rerank":{"model":"hashing-384","maxPassages":1024,"maxTextBytes":32768,"maxTotalBytes":1048576})") !=
        std::string::npos);
  }

  TEST_CASE("any backend: one backend call per method call, whatever the number of texts") {
    CountingBackend counting(test::model());
    Server server({}, counting);
    CHECK(server.call(request("embed", R"({"inputs":["a","b","c","d"]})")) ==
          Server().call(request("embed", R"({"inputs":["a","b","c","d"]})")));
    CHECK(counting.calls == 1);
    CHECK(counting.texts_seen == 4);
    (void)server.call(request("rerank", R"({"query":"a","passages":["a","b","c"]})"));
    CHECK(counting.calls == 2);
    (void)server.call(
        request("embed", R"({"inputs":["a",1]})"));  // invalid: the backend is not called
    CHECK(counting.calls == 2);
  }

  TEST_CASE("answer_together: many calls, one backend call, each call's bytes as if alone") {
    // What batch-aware dispatch runs: every member of a batch of singleton calls answered by one
    // answer_together, wrapped in the router's envelopes, equals member-by-member dispatch.
    for (const embed::Kind kind : {embed::Kind::dense, embed::Kind::sparse, embed::Kind::multi}) {
      const std::string method(embed::method_name(kind));
      CAPTURE(method);
      const std::vector<std::string> params{
          R"({"inputs":["The cat sat on the mat."]})",
          R"({"inputs":["dogs bark","cats purr"],"encoding":"base64"})",
          R"({"inputs":[]})",
          R"({"inputs":["hello world"]})",
          R"({"inputs":["x",7]})",
          R"([["Ünïcödé words","and more"]])",
          R"({"inputs":["The cat sat on the mat."],"encoding":"base64"})",
      };
      std::string batch = "[";
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (i > 0) batch += ',';
        batch += request(method, params[i], std::to_string(i));
      }
      batch += "]";
      const std::string member_by_member = Server().call(batch);

      rapidjson::Document doc;
      doc.Parse(batch.c_str(), batch.size());
      REQUIRE_FALSE(doc.HasParseError());
      std::vector<const rpc::Value*> values;
      for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) values.push_back(&doc[i]["params"]);
      CallSet set(values);
      std::vector<embed::EmbedCall>& calls = set.calls;
      const std::vector<rpc::Buffer>& results = set.results;
      CountingBackend counting(test::model());
      embed::answer_together(counting, {}, kind, calls);
      CHECK(counting.calls == 1);
      CHECK(counting.texts_seen == 7);

      std::string together = "[";
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (i > 0) together += ',';
        together += R"({"jsonrpc":"2.0","id":)" + std::to_string(i);
        if (calls[i].error) {
          CHECK(results[i].empty());
          const rpc::Error& e = *calls[i].error;
          together += R"(,"error":{"code":)" + std::to_string(e.code()) + R"(,"message":")" +
                      std::string(e.message()) + R"(","data":)" + std::string(e.data().text()) +
                      "}}";
        } else {
          together += R"(,"result":)" + std::string(results[i].view()) + "}";
        }
      }
      together += "]";
      CHECK(together == member_by_member);
    }
  }

  TEST_CASE(
      "answer_together: calls beyond one call's limits go to the backend in parts, same bytes") {
    const embed::MethodsOptions small{.max_inputs = 3, .max_total_bytes = 40};
    const std::vector<std::string> params{
        R"({"inputs":["one two","three"]})",
        R"({"inputs":["four"]})",
        R"({"inputs":["five","six","seven"]})",
        R"({"inputs":[1]})",
        R"({"inputs":["a much longer text of thirty-three"]})",
        R"({"inputs":["eight","nine"]})",
    };
    rapidjson::Document doc;
    std::string all = "[";
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (i > 0) all += ',';
      all += params[i];
    }
    all += "]";
    doc.Parse(all.c_str(), all.size());
    REQUIRE_FALSE(doc.HasParseError());
    std::vector<const rpc::Value*> values;
    for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) values.push_back(&doc[i]);
    CallSet set(values);
    std::vector<embed::EmbedCall>& calls = set.calls;
    const std::vector<rpc::Buffer>& results = set.results;
    CountingBackend counting(test::model());
    embed::answer_together(counting, small, embed::Kind::dense, calls);
    CHECK(counting.calls == 4);  // [one two, three, four] [five, six, seven] [the long one] [eight,
                                 // nine]: texts, texts, bytes
    CHECK(counting.texts_seen == 9);
    CHECK(calls[3].error);
    const Server alone(small);
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (calls[i].error) continue;
      CAPTURE(i);
      CHECK(alone.call(request("embed", params[i])) ==
            R"({"jsonrpc":"2.0","id":1,"result":)" + std::string(results[i].view()) + "}");
    }
  }

#if defined(BATCHRPC_HAS_BATCH_HANDLERS)
  TEST_CASE("batch-aware dispatch: one backend call per method per batch, byte-identical replies") {
    CountingBackend plain_backend(test::model());
    CountingBackend aware_backend(test::model());
    Server plain({.batch_aware = false}, plain_backend);
    Server aware({.batch_aware = true}, aware_backend);
    std::string batch = "[";
    int id = 0;
    const auto add = [&](std::string_view method, std::string_view params) {
      if (id > 0) batch += ',';
      batch += request(method, params, std::to_string(id));
      ++id;
    };
    for (int round = 0; round < 3; ++round) {
      add("embed", R"({"inputs":["The cat sat on the mat."]})");
      add("embed/sparse", R"({"inputs":["dogs bark","cats purr"],"encoding":"base64"})");
      add("embed", R"({"inputs":[]})");
      add("embed/multi", R"({"inputs":["hello world"]})");
      add("rerank", R"({"query":"cat","passages":["a cat","a dog"]})");
      add("embed", R"({"inputs":["x",7]})");
      add("embed", R"([["Ünïcödé words","and more"]])");
      add("no/such/method", "{}");
    }
    batch += R"(,{"jsonrpc":"2.0","method":"embed","params":{"inputs":["a notification"]}},1])";
    const std::string expected = plain.call(batch);
    CHECK(aware.call(batch) == expected);
    CHECK(plain_backend.calls == 3 * 5 + 1);  // each valid call alone (+ the notification)
    CHECK(aware_backend.calls == 3 + 3);      // embed, embed/sparse, embed/multi once; rerank x3

    // A singleton is a group of one: the same bytes as the plain handler.
    const std::string single = request("embed", R"({"inputs":["hello"],"encoding":"base64"})");
    CHECK(aware.call(single) == plain.call(single));

    // Through sessions with an executor too (groups run as one task), gating applied first.
    rpc::ThreadPool pool(2);
    rpc::Session plain_session(plain.router, {.capabilities = {"embed"}, .executor = &pool});
    rpc::Session aware_session(aware.router, {.capabilities = {"embed"}, .executor = &pool});
    const std::optional<std::string> gated = plain_session.handle(batch);
    REQUIRE(gated);
    CHECK(gated->find(R"("data":{"capability":"rerank"})") != std::string::npos);
    CHECK(aware_session.handle(batch) == gated);
  }

  TEST_CASE("coalesced across messages: fewer backend calls, every reply byte-identical") {
    CountingBackend plain_backend(test::model());
    CountingBackend coalesced_backend(test::model());
    Server plain({.batch_aware = false}, plain_backend);
    Server coalesced({.batch_aware = true}, coalesced_backend);
    coalesced.router.coalesce("embed", {.max_wait = std::chrono::milliseconds(5), .max_concurrent_groups = 2});
    coalesced.router.coalesce("embed/sparse");
    std::vector<std::string> messages;
    for (int k = 0; k < 16; ++k) {
      const std::string text = "text number " + std::to_string(k) + (k % 3 == 0 ? " Ünïcödé" : "");
      messages.push_back(request("embed", R"({"inputs":[")" + text + R"("],"encoding":")" +
                                              (k % 2 == 0 ? "float" : "base64") + R"("})", std::to_string(k)));
      messages.push_back(request("embed/sparse", R"({"inputs":[")" + text + R"("]})", std::to_string(k)));
    }
    messages.push_back(request("embed", R"({"inputs":["x",7]})"));
    std::vector<std::string> expected;
    for (const std::string& m : messages) expected.push_back(plain.call(m));
    const int clients = 8;
    const int rounds = 5;
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        rpc::Session session(coalesced.router, {.capabilities = {"embed"}});
        for (int r = 0; r < rounds; ++r) {
          for (std::size_t i = static_cast<std::size_t>(c); i < messages.size(); i += clients) {
            if (session.handle(messages[i]) != expected[i]) ++mismatches;
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(mismatches == 0);
    const int sent = rounds * static_cast<int>(messages.size() - 1);  // the invalid call never reaches the backend
    CHECK(coalesced_backend.texts_seen == static_cast<std::size_t>(sent));  // each call computed once
  }
#endif
}
