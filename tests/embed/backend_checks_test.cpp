// SPDX-License-Identifier: MIT
// A backend whose output has the wrong shape: every method checks what the backend returned
// before writing from it, and answers -32603 with data.reason saying what is wrong (one case per
// bad shape, through plain and batch-aware dispatch). Before those checks, most of these read
// past the end of a buffer.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "embed/hashing_model.hpp"
#include "embed/methods.hpp"

namespace {

// The reference model (a small one), with a method's output spoiled afterwards.
class SpoiledBackend final : public embed::Backend {
 public:
  std::function<void(embed::DenseVectors&)> dense = [](embed::DenseVectors&) {};
  std::function<void(embed::SparseVectors&)> sparse = [](embed::SparseVectors&) {};
  std::function<void(embed::MultiVectors&)> multi = [](embed::MultiVectors&) {};
  std::function<void(std::vector<float>&)> scores = [](std::vector<float>&) {};

  const embed::ModelInfo& info() const noexcept override { return model().info(); }
  void embed(std::span<const std::string_view> texts, embed::DenseVectors& out) const override {
    model().embed(texts, out);
    dense(out);
  }
  void embed_sparse(std::span<const std::string_view> texts,
                    embed::SparseVectors& out) const override {
    model().embed_sparse(texts, out);
    sparse(out);
  }
  void embed_multi(std::span<const std::string_view> texts,
                   embed::MultiVectors& out) const override {
    model().embed_multi(texts, out);
    multi(out);
  }
  void score(std::string_view query, std::span<const std::string_view> passages,
             std::vector<float>& out) const override {
    model().score(query, passages, out);
    scores(out);
  }

 private:
  static const embed::HashingModel& model() {
    static const embed::HashingModel small{{.dimensions = 8, .hidden = 16, .buckets = 64}};
    return small;
  }
};

// Three texts; the first has five distinct tokens ("the" twice).
constexpr std::string_view three_texts =
    R"({"inputs":["The cat sat on the mat.","dogs bark","Ünïcödé"]})";
constexpr std::string_view three_texts_base64 =
    R"({"inputs":["The cat sat on the mat.","dogs bark","Ünïcödé"],"encoding":"base64"})";
constexpr std::string_view three_passages =
    R"({"query":"cats","passages":["The cat sat on the mat.","dogs bark","Ünïcödé"]})";

std::string request(std::string_view method, std::string_view params, std::string_view id) {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":")" + std::string(method) +
         R"(","params":)" + std::string(params) + "}";
}

std::string internal_error(std::string_view reason, std::string_view id = "1") {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) +
         R"(,"error":{"code":-32603,"message":"Internal error","data":{"reason":")" +
         std::string(reason) + R"("}}})";
}

std::string call(const embed::Backend& backend, bool batch_aware, std::string_view message) {
  rpc::Router router;
  embed::register_methods(router, backend, {.batch_aware = batch_aware});
  const std::optional<std::string> reply = router.handle(message);
  REQUIRE(reply);
  return *reply;
}

// `method` called with `params` on `backend` answers -32603 with `reason`, through plain and
// batch-aware dispatch alike.
void check_refused(const embed::Backend& backend, std::string_view method, std::string_view params,
                   std::string_view reason) {
  for (const bool batch_aware : {false, true}) {
    CAPTURE(batch_aware);
    CHECK(call(backend, batch_aware, request(method, params, "1")) == internal_error(reason));
  }
}

constexpr std::string_view wrong_dimensions = "backend returned vectors of the wrong dimensions";
constexpr std::string_view wrong_count = "backend returned the wrong number of vectors";
constexpr std::string_view bad_offsets = "backend returned invalid offsets";
constexpr std::string_view unequal_sizes = "backend returned unequal numbers of indices and values";
constexpr std::string_view index_out_of_range = "backend returned a sparse index out of range";
constexpr std::string_view indices_out_of_order = "backend returned sparse indices out of order";
constexpr std::string_view not_finite = "backend returned a value that is not a finite number";
constexpr std::string_view wrong_scores = "backend returned the wrong number of scores";

const float not_a_number = std::numeric_limits<float>::quiet_NaN();

// Drops the last `count` elements and the spare capacity, as a backend that sizes its buffers
// afresh would: reading past the end then overflows the heap block.
template <class T>
void drop_last(std::vector<T>& v, std::size_t count = 1) {
  v.resize(v.size() - count);
  v.shrink_to_fit();
}

}  // namespace

TEST_SUITE("embed.backend_checks") {
  TEST_CASE("embed: one vector too few is -32603") {
    SpoiledBackend backend;
    backend.dense = [](embed::DenseVectors& out) { drop_last(out.values, out.dims); };
    check_refused(backend, "embed", three_texts, wrong_count);
  }

  TEST_CASE("embed: a vector one float short is -32603") {
    SpoiledBackend backend;
    backend.dense = [](embed::DenseVectors& out) { drop_last(out.values); };
    check_refused(backend, "embed", three_texts, wrong_count);
  }

  TEST_CASE("embed: vectors of another width than info() says are -32603") {
    SpoiledBackend backend;
    backend.dense = [](embed::DenseVectors& out) { out.dims = 4; };  // 6 vectors of 4
    check_refused(backend, "embed", three_texts, wrong_dimensions);
  }

  TEST_CASE("embed: a NaN is -32603, in base64 as in floats") {
    SpoiledBackend backend;
    backend.dense = [](embed::DenseVectors& out) { out.values[9] = not_a_number; };
    check_refused(backend, "embed", three_texts, not_finite);
    check_refused(backend, "embed", three_texts_base64, not_finite);
  }

  TEST_CASE("embed/sparse: offsets left unset are -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) { out.offsets = std::vector<std::size_t>{0}; };
    check_refused(backend, "embed/sparse", three_texts, wrong_count);
  }

  TEST_CASE("embed/sparse: offsets past the indices are -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) { out.offsets.back() += 3; };
    check_refused(backend, "embed/sparse", three_texts, bad_offsets);
  }

  TEST_CASE("embed/sparse: decreasing offsets are -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) { out.offsets[1] = out.offsets[2] + 1; };
    check_refused(backend, "embed/sparse", three_texts, bad_offsets);
  }

  TEST_CASE("embed/sparse: offsets not starting at 0 are -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) { out.offsets[0] = 1; };
    check_refused(backend, "embed/sparse", three_texts, bad_offsets);
  }

  TEST_CASE("embed/sparse: fewer values than indices is -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) { drop_last(out.values); };
    check_refused(backend, "embed/sparse", three_texts, unequal_sizes);
  }

  TEST_CASE("embed/sparse: an index past the index space is -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) {
      out.indices[out.offsets[1] - 1] = static_cast<std::uint32_t>(out.dims);
    };
    check_refused(backend, "embed/sparse", three_texts, index_out_of_range);
  }

  TEST_CASE("embed/sparse: indices out of order within a vector are -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) {
      std::swap(out.indices[0], out.indices[1]);
      std::swap(out.values[0], out.values[1]);
    };
    check_refused(backend, "embed/sparse", three_texts, indices_out_of_order);
  }

  TEST_CASE("embed/sparse: another index space than info() says is -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) { out.dims = 1u << 20; };
    check_refused(backend, "embed/sparse", three_texts, wrong_dimensions);
  }

  TEST_CASE("embed/sparse: an infinite weight is -32603") {
    SpoiledBackend backend;
    backend.sparse = [](embed::SparseVectors& out) {
      out.values.back() = std::numeric_limits<float>::infinity();
    };
    check_refused(backend, "embed/sparse", three_texts_base64, not_finite);
  }

  TEST_CASE("embed/multi: offsets left unset are -32603") {
    SpoiledBackend backend;
    backend.multi = [](embed::MultiVectors& out) { out.offsets = std::vector<std::size_t>{0}; };
    check_refused(backend, "embed/multi", three_texts, wrong_count);
  }

  TEST_CASE("embed/multi: offsets past the vectors are -32603") {
    SpoiledBackend backend;
    backend.multi = [](embed::MultiVectors& out) { out.offsets.back() += 1; };
    check_refused(backend, "embed/multi", three_texts, bad_offsets);
  }

  TEST_CASE("embed/multi: decreasing offsets are -32603") {
    SpoiledBackend backend;
    backend.multi = [](embed::MultiVectors& out) { out.offsets[1] = out.offsets[2] + 1; };
    check_refused(backend, "embed/multi", three_texts, bad_offsets);
  }

  TEST_CASE("embed/multi: a vector one float short is -32603") {
    SpoiledBackend backend;
    backend.multi = [](embed::MultiVectors& out) { drop_last(out.vectors.values); };
    check_refused(backend, "embed/multi", three_texts, wrong_count);
  }

  TEST_CASE("embed/multi: vectors of another width than info() says are -32603") {
    SpoiledBackend backend;
    backend.multi = [](embed::MultiVectors& out) { out.vectors.dims = 4; };
    check_refused(backend, "embed/multi", three_texts, wrong_dimensions);
  }

  TEST_CASE("rerank: one score too few is -32603") {
    SpoiledBackend backend;
    backend.scores = [](std::vector<float>& out) { drop_last(out); };
    check_refused(backend, "rerank", three_passages, wrong_scores);
  }

  TEST_CASE("rerank: one score too many is -32603") {
    SpoiledBackend backend;
    backend.scores = [](std::vector<float>& out) { out.push_back(0.5f); };
    check_refused(backend, "rerank", three_passages, wrong_scores);
  }

  TEST_CASE("rerank: a NaN score is -32603") {
    SpoiledBackend backend;
    backend.scores = [](std::vector<float>& out) { out[1] = not_a_number; };
    check_refused(backend, "rerank", three_passages, not_finite);
  }

  TEST_CASE("a batch: each valid call -32603, an invalid call still its own -32602") {
    SpoiledBackend backend;
    backend.dense = [](embed::DenseVectors& out) { drop_last(out.values, out.dims); };
    const std::string batch = "[" + request("embed", three_texts, "1") + "," +
                              request("embed", R"({"inputs":[]})", "2") + "," +
                              request("embed", R"({"inputs":["a","b"]})", "3") + "]";
    const std::string expected =
        "[" + internal_error(wrong_count, "1") +
        R"(,{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"param":"inputs","reason":"expected at least one text"}}},)" +
        internal_error(wrong_count, "3") + "]";
    CHECK(call(backend, false, batch) == expected);
    CHECK(call(backend, true, batch) == expected);
  }

  TEST_CASE("a well-shaped backend output is written as before") {
    const SpoiledBackend backend;
    for (const std::string_view method : {"embed", "embed/sparse", "embed/multi"}) {
      CAPTURE(method);
      CHECK(call(backend, true, request(method, three_texts, "1")).find(R"("result")") !=
            std::string::npos);
    }
    CHECK(call(backend, true, request("rerank", three_passages, "1")).find(R"("result")") !=
          std::string::npos);
  }
}
