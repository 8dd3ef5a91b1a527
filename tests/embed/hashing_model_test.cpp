// SPDX-License-Identifier: MIT
// The reference model on its own: tokens, shapes, unit norms, determinism bit for bit (across
// runs and whatever the batch), similarity, sparse and multi-vector forms, options.
#include "embed/hashing_model.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model_fixture.hpp"

namespace {

using Texts = std::vector<std::string_view>;

embed::DenseVectors dense(const Texts& texts, const embed::HashingModel& model = test::model()) {
  embed::DenseVectors out;
  model.embed(texts, out);
  return out;
}

double norm(std::span<const float> v) {
  double sum = 0;
  for (const float f : v) sum += static_cast<double>(f) * f;
  return std::sqrt(sum);
}

double dot(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Shortest text of the first `n` floats, joined by commas (a readable fingerprint).
std::string prefix(std::span<const float> v, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, v[i]).ptr;
    if (i > 0) s += ',';
    s.append(text, end);
  }
  return s;
}

// The bits the model promises: those of x86-64 builds for the default instruction set (SSE2), on
// any x86-64 CPU (reproducibility_test.cpp varies what a CPU may change). AVX sums the norms
// eight floats at a time and FMA fuses each step of a sum, so builds for them, and for other
// processors, are held to the first 5 digits.
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(__AVX__) && !defined(__FMA__) && \
    !defined(__FAST_MATH__)
#define EMBED_TEST_PINNED_BITS 1
#endif

const Texts corpus{"The cat sat on the mat.",
                   "A quick brown fox jumps over the lazy dog",
                   "Stock markets fell sharply on Tuesday",
                   "cats",
                   "Ünïcödé wörds stay whole",
                   "1 2 3 4 5 6 7 8 9 10 11 12",
                   "!!!",
                   "Rain is expected tomorrow in the north",
                   "the cat sat on the mat"};

}  // namespace

TEST_SUITE("embed.hashing_model") {
  TEST_CASE("tokens: ASCII letters lowercased, letters and digits and UTF-8 bytes kept together") {
    using V = std::vector<std::string>;
    CHECK(embed::HashingModel::tokenize("Hello, World! 42x café-au-lait") ==
          V{"hello", "world", "42x", "café", "au", "lait"});
    CHECK(embed::HashingModel::tokenize("  a\tb\nC  ") == V{"a", "b", "c"});
    CHECK(embed::HashingModel::tokenize(" ... !?") == V{});
  }

  TEST_CASE("dense: one L2-normalised vector of 384 floats per text, in order") {
    const embed::DenseVectors out = dense(corpus);
    CHECK(out.dims == 384);
    REQUIRE(out.rows() == corpus.size());
    REQUIRE(out.values.size() == corpus.size() * 384);
    for (std::size_t i = 0; i < out.rows(); ++i) {
      CAPTURE(i);
      CHECK(norm(out.row(i)) == doctest::Approx(1.0).epsilon(1e-6));
    }
    CHECK(embed::HashingModel(embed::HashingModelOptions{}).info().name == "hashing-384");
    CHECK(test::model().info().dimensions == 384);
    CHECK(test::model().info().sparse_dimensions == 4096);
  }

  TEST_CASE("dense: same text, same vector across runs (pinned values)") {
    // The first floats of two vectors, pinned: a change here changes every client's vectors.
    const embed::DenseVectors out = dense({"hello world", "The cat sat on the mat."});
    const std::vector<float> pinned0{-0.0016958661f, 0.047439672f, -0.07148959f, -0.033849f};
    const std::vector<float> pinned1{-0.067612275f, -0.007669302f, 0.041859932f, -0.04186181f};
#if defined(EMBED_TEST_PINNED_BITS)
    CHECK(prefix(out.row(0), 4) == "-0.0016958661,0.047439672,-0.07148959,-0.033849");
    CHECK(prefix(out.row(1), 4) == "-0.067612275,-0.007669302,0.041859932,-0.04186181");
#endif
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(out.row(0)[i] == doctest::Approx(pinned0[i]).epsilon(1e-5));
      CHECK(out.row(1)[i] == doctest::Approx(pinned1[i]).epsilon(1e-5));
    }
    // A second model from the same seed is the same model.
    const embed::HashingModel again{{.dimensions = 384, .seed = 42}};
    CHECK(same_bits(dense({"hello world"}, again).row(0), out.row(0)));
  }

  TEST_CASE("sparse, multi and score: same text, same bits across runs (pinned values)") {
    embed::SparseVectors sparse;
    test::model().embed_sparse(Texts{"apple apple banana"}, sparse);
    CHECK(sparse.indices == std::vector<std::uint32_t>{981, 4058});
    embed::MultiVectors multi;
    test::model().embed_multi(Texts{"cat naps"}, multi);
    REQUIRE(multi.vectors.rows() == 2);
    std::vector<float> scores;
    test::model().score("where did the cat sit",
                        Texts{"the cat sat on the mat", "stock markets fell"}, scores);
    REQUIRE(scores.size() == 2);
#if defined(EMBED_TEST_PINNED_BITS)
    CHECK(prefix(sparse.values, 2) == "0.79030246,0.612717");
    CHECK(prefix(multi.vectors.row(0), 4) == "-0.09386176,0.059376452,-0.03859314,0.080218606");
    CHECK(prefix(multi.vectors.row(1), 4) == "-0.08916215,-0.023069277,-0.053297002,0.027767615");
    CHECK(prefix(scores, 2) == "0.44688419,0.020147972");
#endif
    CHECK(sparse.values[0] == doctest::Approx(0.79030246f).epsilon(1e-5));
    CHECK(multi.vectors.row(1)[0] == doctest::Approx(-0.08916215f).epsilon(1e-5));
    CHECK(scores[0] == doctest::Approx(0.44688419f).epsilon(1e-5));
  }

  TEST_CASE("a text's vectors do not depend on its batch, bit for bit (dense, sparse, multi)") {
    const embed::HashingModel odd_shape{{.dimensions = 100, .hidden = 200, .buckets = 512}};
    for (const embed::HashingModel* model : {&test::model(), &odd_shape}) {
      CAPTURE(model->info().name);
      std::vector<embed::DenseVectors> dense_alone;
      std::vector<embed::SparseVectors> sparse_alone;
      std::vector<embed::MultiVectors> multi_alone;
      for (const std::string_view text : corpus) {
        dense_alone.push_back(dense({text}, *model));
        model->embed_sparse(Texts{text}, sparse_alone.emplace_back());
        model->embed_multi(Texts{text}, multi_alone.emplace_back());
      }
      // Every batch size from 1 to the whole corpus, every position in it.
      for (std::size_t size = 1; size <= corpus.size(); ++size) {
        for (std::size_t start = 0; start + size <= corpus.size(); ++start) {
          const Texts batch(corpus.begin() + static_cast<std::ptrdiff_t>(start),
                            corpus.begin() + static_cast<std::ptrdiff_t>(start + size));
          const embed::DenseVectors d = dense(batch, *model);
          embed::SparseVectors s;
          model->embed_sparse(batch, s);
          embed::MultiVectors m;
          model->embed_multi(batch, m);
          for (std::size_t i = 0; i < size; ++i) {
            CAPTURE(size);
            CAPTURE(start + i);
            const std::size_t t = start + i;
            CHECK(same_bits(d.row(i), dense_alone[t].row(0)));
            CHECK(same_bits(s.values_of(i), sparse_alone[t].values_of(0)));
            CHECK(std::ranges::equal(s.indices_of(i), sparse_alone[t].indices_of(0)));
            const embed::MultiVectors& one = multi_alone[t];
            REQUIRE(m.offsets[i + 1] - m.offsets[i] == one.vectors.rows());
            for (std::size_t r = 0; r < one.vectors.rows(); ++r) {
              CHECK(same_bits(m.vectors.row(m.offsets[i] + r), one.vectors.row(r)));
            }
          }
        }
      }
    }
  }

  TEST_CASE("a text's vector is the same alone and anywhere in a batch of 37") {
    std::vector<std::string> many;
    for (int i = 0; i < 37; ++i)
      many.push_back("text " + std::to_string(i * 7919) + " of the batch");
    const Texts views(many.begin(), many.end());
    const embed::DenseVectors together = dense(views);
    for (std::size_t i = 0; i < views.size(); ++i) {
      CAPTURE(i);
      CHECK(same_bits(together.row(i), dense({views[i]}).row(0)));
    }
  }

  TEST_CASE("dense: case and punctuation do not matter - word order does not either (pooling)") {
    const embed::DenseVectors out =
        dense({"The cat sat on the mat.", "the cat sat on the mat", "mat the on sat cat the"});
    CHECK(same_bits(out.row(0), out.row(1)));
    CHECK(dot(out.row(1), out.row(2)) == doctest::Approx(1.0).epsilon(1e-6));
  }

  TEST_CASE("dense: texts that share words are closer than unrelated texts") {
    const embed::DenseVectors out = dense(
        {"the cat sat on the mat", "a cat sat on a rug", "stock markets fell sharply", "cat"});
    const double related = dot(out.row(0), out.row(1));
    const double unrelated = dot(out.row(0), out.row(2));
    CHECK(related > unrelated + 0.2);
    CHECK(dot(out.row(3), out.row(1)) > dot(out.row(3), out.row(2)) + 0.2);
  }

  TEST_CASE("dense: a text without tokens is one token (its bytes), so it still has a vector") {
    const embed::DenseVectors out = dense({"!!!", "???", "!!!"});
    CHECK(norm(out.row(0)) == doctest::Approx(1.0).epsilon(1e-6));
    CHECK_FALSE(same_bits(out.row(0), out.row(1)));
    CHECK(same_bits(out.row(0), out.row(2)));
  }

  TEST_CASE("tokens past max_tokens are ignored") {
    const embed::HashingModel short_window{{.max_tokens = 3}};
    const embed::DenseVectors out = dense({"a b c d", "a b c e", "a b d"}, short_window);
    CHECK(same_bits(out.row(0), out.row(1)));
    CHECK_FALSE(same_bits(out.row(0), out.row(2)));
  }

  TEST_CASE("sparse: sorted unique indices below the index space, positive unit-norm weights") {
    embed::SparseVectors out;
    test::model().embed_sparse(corpus, out);
    CHECK(out.dims == 4096);
    REQUIRE(out.rows() == corpus.size());
    for (std::size_t i = 0; i < out.rows(); ++i) {
      CAPTURE(i);
      const auto indices = out.indices_of(i);
      const auto values = out.values_of(i);
      REQUIRE(indices.size() == values.size());
      REQUIRE_FALSE(indices.empty());
      for (std::size_t k = 1; k < indices.size(); ++k) CHECK(indices[k - 1] < indices[k]);
      CHECK(indices.back() < 4096);
      for (const float v : values) CHECK(v > 0);
      CHECK(norm(values) == doctest::Approx(1.0).epsilon(1e-6));
    }
    // "the" twice (distinct buckets: cat, sat, on, the, mat)
    CHECK(out.indices_of(0).size() == 5);
  }

  TEST_CASE("sparse: a repeated word weighs more - same text, same bits in any batch") {
    embed::SparseVectors apple;
    test::model().embed_sparse(Texts{"apple"}, apple);
    REQUIRE(apple.indices_of(0).size() == 1);
    CHECK(apple.values_of(0)[0] == 1.0f);
    const std::uint32_t index = apple.indices_of(0)[0];
    const auto weight = [&](const embed::SparseVectors& v, std::size_t row) {
      for (std::size_t k = 0; k < v.indices_of(row).size(); ++k) {
        if (v.indices_of(row)[k] == index) return v.values_of(row)[k];
      }
      return 0.0f;
    };
    embed::SparseVectors out;
    test::model().embed_sparse(Texts{"apple banana", "apple apple banana", "apple banana"}, out);
    REQUIRE(out.indices_of(0).size() == 2);
    REQUIRE(out.indices_of(1).size() == 2);
    CHECK(weight(out, 1) > weight(out, 0));
    CHECK(weight(out, 0) > 0);
    CHECK(same_bits(out.values_of(0), out.values_of(2)));
    embed::SparseVectors alone;
    test::model().embed_sparse(Texts{"apple banana"}, alone);
    CHECK(same_bits(alone.values_of(0), out.values_of(2)));
  }

  TEST_CASE("multi: one unit vector per token, the same in any batch") {
    embed::MultiVectors out;
    test::model().embed_multi(Texts{"the cat sat", "cats", "!!!", "one two three four five"}, out);
    REQUIRE(out.texts() == 4);
    CHECK(out.offsets == std::vector<std::size_t>{0, 3, 4, 5, 10});
    CHECK(out.vectors.dims == 384);
    REQUIRE(out.vectors.rows() == 10);
    for (std::size_t r = 0; r < out.vectors.rows(); ++r) {
      CAPTURE(r);
      CHECK(norm(out.vectors.row(r)) == doctest::Approx(1.0).epsilon(1e-6));
    }
    embed::MultiVectors alone;
    test::model().embed_multi(Texts{"one two three four five"}, alone);
    REQUIRE(alone.vectors.rows() == 5);
    for (std::size_t r = 0; r < 5; ++r)
      CHECK(same_bits(alone.vectors.row(r), out.vectors.row(5 + r)));
    // Tokens carry their text's context: "cat" in two texts gives two vectors.
    embed::MultiVectors two;
    test::model().embed_multi(Texts{"cat food", "cat nap"}, two);
    CHECK_FALSE(same_bits(two.vectors.row(0), two.vectors.row(2)));
  }

  TEST_CASE("score: a text scores 1 against itself - shared words rank above unrelated texts") {
    std::vector<float> scores;
    test::model().score("how do cats sleep",
                        Texts{"stock prices fell", "how do cats sleep", "cats sleep all day",
                              "banana bread recipe"},
                        scores);
    REQUIRE(scores.size() == 4);
    CHECK(scores[1] == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(scores[2] > scores[0]);
    CHECK(scores[2] > scores[3]);
    CHECK(scores[1] > scores[2]);
  }

  TEST_CASE("score: a passage's score does not depend on the other passages, bit for bit") {
    const embed::HashingModel odd_shape{{.dimensions = 37, .hidden = 64, .buckets = 256}};
    for (const embed::HashingModel* model : {&test::model(), &odd_shape}) {
      CAPTURE(model->info().name);
      std::vector<float> together;
      model->score("the cat", corpus, together);
      REQUIRE(together.size() == corpus.size());
      for (std::size_t i = 0; i < corpus.size(); ++i) {
        CAPTURE(i);
        std::vector<float> alone;
        model->score("the cat", Texts{corpus[i]}, alone);
        REQUIRE(alone.size() == 1);
        CHECK(same_bits(alone, std::span(together).subspan(i, 1)));
      }
    }
  }

  TEST_CASE("other dimensions and seeds") {
    const embed::HashingModel small{{.dimensions = 8, .hidden = 16, .buckets = 64, .seed = 7}};
    CHECK(small.info().name == "hashing-8");
    const embed::DenseVectors a = dense({"hello world", "hello"}, small);
    CHECK(a.dims == 8);
    CHECK(a.values.size() == 16);
    CHECK(norm(a.row(0)) == doctest::Approx(1.0).epsilon(1e-6));
    const embed::HashingModel other_seed{{.dimensions = 8, .hidden = 16, .buckets = 64, .seed = 8}};
    CHECK_FALSE(same_bits(dense({"hello world"}, other_seed).row(0), a.row(0)));
    CHECK(same_bits(dense({"hello world"}, small).row(0), a.row(0)));
  }

  TEST_CASE("invalid options are refused") {
    CHECK_THROWS_AS(embed::HashingModel({.dimensions = 0}), std::invalid_argument);
    CHECK_THROWS_AS(embed::HashingModel({.hidden = 0}), std::invalid_argument);
    CHECK_THROWS_AS(embed::HashingModel({.buckets = 0}), std::invalid_argument);
    CHECK_THROWS_AS(embed::HashingModel({.max_tokens = 0}), std::invalid_argument);
    CHECK_THROWS_AS(embed::HashingModel({.hidden = 1 << 20, .buckets = 1 << 20}),
                    std::invalid_argument);
  }

  TEST_CASE("dense_layer: the layer alone is linear, and checks its sizes") {
    const embed::HashingModel& model = test::model();
    std::vector<float> x(2 * 768);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
    std::vector<float> y(2 * 384);
    model.dense_layer(x, 2, y);
    std::vector<float> x2(x);
    for (float& f : x2) f *= 2;  // exact
    std::vector<float> y2(2 * 384);
    model.dense_layer(x2, 2, y2);
    for (std::size_t i = 0; i < y.size(); ++i) CHECK(y2[i] == 2 * y[i]);
    CHECK_THROWS_AS(model.dense_layer(x, 3, y), std::invalid_argument);
    CHECK_THROWS_AS(model.dense_layer(x, 2, std::span<float>(y).first(10)), std::invalid_argument);
  }
}
