// SPDX-License-Identifier: MIT
// The reference model: seeded weights, and each method as one set of Eigen operations over the
// whole array of texts.
#include "hashing_model.hpp"

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "ordered_product.hpp"

namespace embed {

namespace {

using Eigen::Index;
using ColMatrix = Eigen::MatrixXf;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using SparseRows = Eigen::SparseMatrix<float, Eigen::RowMajor, int>;
using Triplet = Eigen::Triplet<float, int>;

// ---- Bit-for-bit determinism -------------------------------------------------------------------
// Every dense product is a detail::ordered_product: each output is one sum over its inputs in
// index order, whatever the CPU's caches, the thread count or the rest of the batch (see
// ordered_product.cpp). Its left operand has a multiple of 48 rows, so the dense layer's width
// is padded with zero rows; texts are its columns, any number of them. tests/embed checks all
// of this, bit for bit, on every build.
constexpr Index row_block = detail::ordered_row_block;

Index round_up(Index n, Index block) { return (n + block - 1) / block * block; }

// ---- Seeded numbers ----------------------------------------------------------------------------
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Uniform in [-1, 1), exactly representable: 24 random bits.
float symmetric_unit(std::uint64_t& state) {
  return static_cast<float>(splitmix64(state) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// One independent stream per weight array, so resizing one leaves the others unchanged.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t state = seed ^ (stream * 0xD1B54A32D192ED03ULL);
  return splitmix64(state);
}

// ---- Tokens ------------------------------------------------------------------------------------
bool is_token_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}
unsigned char lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + 32) : c;
}

// Calls f(token) for each token of `text`, in order (raw bytes; lowercase them when hashing).
template <class F>
void scan_tokens(std::string_view text, F&& f) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !is_token_byte(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && is_token_byte(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) f(text.substr(start, i - start));
  }
}

// FNV-1a 64 over the lowercased bytes, keyed and finalised with the seed.
std::uint64_t token_hash(std::string_view token, std::uint64_t key, bool fold_case) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char ch : token) {
    const auto c = static_cast<unsigned char>(ch);
    h = (h ^ (fold_case ? lower(c) : c)) * 1099511628211ULL;
  }
  std::uint64_t state = h ^ key;
  return splitmix64(state);
}

// Every text's token buckets, text after text: text i owns ids[offsets[i], offsets[i + 1]).
struct TokenIds {
  std::vector<int> ids;
  std::vector<Index> offsets;
};

}  // namespace

// ---- Weights -----------------------------------------------------------------------------------
struct HashingModel::Weights {
  HashingModelOptions options;
  ModelInfo info;
  Index dims = 0;         // output width
  Index padded_dims = 0;  // output rows of the product (see row_block)
  Index hidden = 0;
  Index buckets = 0;
  std::uint64_t token_key = 0;
  RowMatrix table;               // buckets x hidden: one row per token bucket
  detail::PackedLhs projection;  // padded_dims x hidden: the dense layer (rows past dims are zero)
  Eigen::VectorXf importance;    // buckets: sparse term weights, in [0.5, 1.5)

  explicit Weights(const HashingModelOptions& o) : options(o) {
    constexpr std::size_t most = std::size_t{1} << 20;
    if (o.dimensions == 0 || o.hidden == 0 || o.buckets == 0 || o.max_tokens == 0) {
      throw std::invalid_argument(
          "embed::HashingModel: dimensions, hidden, buckets and max_tokens must be positive");
    }
    if (o.dimensions > most || o.hidden > most || o.buckets > most ||
        o.buckets * o.hidden > (std::size_t{1} << 28)) {
      throw std::invalid_argument("embed::HashingModel: dimensions too large");
    }
    dims = static_cast<Index>(o.dimensions);
    padded_dims = round_up(dims, row_block);
    hidden = static_cast<Index>(o.hidden);
    buckets = static_cast<Index>(o.buckets);
    info = {"hashing-" + std::to_string(o.dimensions), o.dimensions, o.buckets};
    token_key = stream_seed(o.seed, 0);

    std::uint64_t s = stream_seed(o.seed, 1);
    table.resize(buckets, hidden);
    for (Index r = 0; r < buckets; ++r) {
      for (Index c = 0; c < hidden; ++c) table(r, c) = symmetric_unit(s);
    }
    // Variance 1/hidden per weight keeps the output's scale independent of the input width.
    const float scale = std::sqrt(3.0f / static_cast<float>(hidden));
    s = stream_seed(o.seed, 2);
    ColMatrix layer = ColMatrix::Zero(padded_dims, hidden);
    for (Index r = 0; r < dims; ++r) {
      for (Index c = 0; c < hidden; ++c) layer(r, c) = symmetric_unit(s) * scale;
    }
    projection = detail::PackedLhs(layer);
    s = stream_seed(o.seed, 3);
    importance.resize(buckets);
    for (Index b = 0; b < buckets; ++b) importance(b) = 1.0f + 0.5f * symmetric_unit(s);
  }

  int bucket(std::string_view token, bool fold_case) const {
    return static_cast<int>(token_hash(token, token_key, fold_case) %
                            static_cast<std::uint64_t>(buckets));
  }

  // Tokenises every text (truncated to max_tokens; a text without tokens is one token).
  void tokenize(std::span<const std::string_view> texts, TokenIds& out) const {
    out.ids.clear();
    out.offsets.assign(1, 0);
    for (const std::string_view text : texts) {
      const std::size_t first = out.ids.size();
      scan_tokens(text, [&](std::string_view token) {
        if (out.ids.size() - first < options.max_tokens) out.ids.push_back(bucket(token, true));
      });
      if (out.ids.size() == first) out.ids.push_back(bucket(text, false));
      out.offsets.push_back(static_cast<Index>(out.ids.size()));
    }
  }

  // Mean-pooled token rows, one column per text. `features` is hidden x texts; as memory it is
  // the row-major texts x hidden result of the sparse pooling matrix times the table.
  void pool(const TokenIds& tokens, Index texts, ColMatrix& features) const {
    std::vector<Triplet> entries;
    entries.reserve(tokens.ids.size());
    for (Index t = 0; t < texts; ++t) {
      const Index begin = tokens.offsets[static_cast<std::size_t>(t)];
      const Index end = tokens.offsets[static_cast<std::size_t>(t) + 1];
      const float weight = 1.0f / static_cast<float>(end - begin);
      for (Index k = begin; k < end; ++k) {
        entries.emplace_back(static_cast<int>(t), tokens.ids[static_cast<std::size_t>(k)], weight);
      }
    }
    SparseRows pooling(texts, buckets);
    pooling.setFromTriplets(entries.begin(), entries.end());
    features.resize(hidden, texts);
    Eigen::Map<RowMatrix> rows(features.data(), texts, hidden);
    rows.noalias() = pooling * table;
  }

  // The dense layer on `features` (hidden x count): padded_dims x count, rows past dims zero.
  void project(const Eigen::Ref<const ColMatrix>& features, ColMatrix& product) const {
    product.resize(padded_dims, features.cols());
    projection.multiply(features, product);
  }

  // The dense layer on `features` (hidden x count), L2-normalised, written as `count` vectors
  // of `dims` floats (row-major, the same memory as a dims x count column-major matrix).
  void project_normalised(const ColMatrix& features, float* out) const {
    ColMatrix product;
    project(features, product);
    const Index count = features.cols();
    const auto kept = product.topRows(dims);
    const Eigen::RowVectorXf norms =
        kept.colwise().norm().cwiseMax(std::numeric_limits<float>::min());
    Eigen::Map<ColMatrix>(out, dims, count) = kept.array().rowwise() / norms.array();
  }
};

HashingModel::HashingModel(HashingModelOptions options)
    : weights_(std::make_unique<const Weights>(options)) {}
HashingModel::~HashingModel() = default;
HashingModel::HashingModel(HashingModel&&) noexcept = default;
HashingModel& HashingModel::operator=(HashingModel&&) noexcept = default;

const ModelInfo& HashingModel::info() const noexcept { return weights_->info; }
const HashingModelOptions& HashingModel::options() const noexcept { return weights_->options; }

void HashingModel::embed(std::span<const std::string_view> texts, DenseVectors& out) const {
  const Weights& w = *weights_;
  const auto n = static_cast<Index>(texts.size());
  out.dims = w.options.dimensions;
  out.values.resize(texts.size() * w.options.dimensions);
  if (n == 0) return;
  TokenIds tokens;
  w.tokenize(texts, tokens);
  ColMatrix features;
  w.pool(tokens, n, features);
  w.project_normalised(features, out.values.data());
}

void HashingModel::embed_multi(std::span<const std::string_view> texts, MultiVectors& out) const {
  const Weights& w = *weights_;
  const auto n = static_cast<Index>(texts.size());
  TokenIds tokens;
  w.tokenize(texts, tokens);
  const auto m = static_cast<Index>(tokens.ids.size());
  out.offsets.assign(tokens.offsets.begin(), tokens.offsets.end());
  out.vectors.dims = w.options.dimensions;
  out.vectors.values.resize(static_cast<std::size_t>(m) * w.options.dimensions);
  if (n == 0) return;

  // Each token's feature is its table row plus its text's pooled row: rows = select * table +
  // spread * pooled, where `select` picks one table row per token and `spread` one text.
  ColMatrix pooled;
  w.pool(tokens, n, pooled);
  std::vector<Triplet> pick;
  std::vector<Triplet> owner;
  pick.reserve(static_cast<std::size_t>(m));
  owner.reserve(static_cast<std::size_t>(m));
  for (Index t = 0; t < n; ++t) {
    for (Index k = tokens.offsets[static_cast<std::size_t>(t)];
         k < tokens.offsets[static_cast<std::size_t>(t) + 1]; ++k) {
      pick.emplace_back(static_cast<int>(k), tokens.ids[static_cast<std::size_t>(k)], 1.0f);
      owner.emplace_back(static_cast<int>(k), static_cast<int>(t), 1.0f);
    }
  }
  SparseRows select(m, w.buckets);
  select.setFromTriplets(pick.begin(), pick.end());
  SparseRows spread(m, n);
  spread.setFromTriplets(owner.begin(), owner.end());
  ColMatrix features(w.hidden, m);
  Eigen::Map<RowMatrix> rows(features.data(), m, w.hidden);
  rows.noalias() = select * w.table;
  rows.noalias() += spread * Eigen::Map<const RowMatrix>(pooled.data(), n, w.hidden);
  w.project_normalised(features, out.vectors.values.data());
}

void HashingModel::embed_sparse(std::span<const std::string_view> texts, SparseVectors& out) const {
  const Weights& w = *weights_;
  const auto n = static_cast<Index>(texts.size());
  TokenIds tokens;
  w.tokenize(texts, tokens);
  std::vector<Triplet> entries;
  entries.reserve(tokens.ids.size());
  for (Index t = 0; t < n; ++t) {
    for (Index k = tokens.offsets[static_cast<std::size_t>(t)];
         k < tokens.offsets[static_cast<std::size_t>(t) + 1]; ++k) {
      entries.emplace_back(static_cast<int>(t), tokens.ids[static_cast<std::size_t>(k)], 1.0f);
    }
  }
  // Term counts (duplicates summed, indices sorted), then sqrt(tf) * importance, then each row
  // divided by its norm. Only correctly rounded operations, so every bit is fixed by IEEE 754: a
  // logarithm (the classic 1 + log tf) would leave the last bit to the C library. The square
  // roots are taken one value at a time on purpose: Eigen's vectorised one (under its default
  // EIGEN_FAST_MATH) refines the CPU's approximate reciprocal square root, whose bits differ
  // between CPU makers and from the scalar root used for leftovers.
  SparseRows counts(n, w.buckets);
  counts.setFromTriplets(entries.begin(), entries.end());
  counts.makeCompressed();
  const auto nnz = static_cast<Index>(counts.nonZeros());
  Eigen::Map<Eigen::ArrayXf> values(counts.valuePtr(), nnz);
  const Eigen::Map<const Eigen::ArrayXi> index(counts.innerIndexPtr(), nnz);
  values = values.unaryExpr([](float tf) { return std::sqrt(tf); }) * w.importance.array()(index);
  const Eigen::VectorXf norms =
      (counts.cwiseAbs2() * Eigen::VectorXf::Ones(w.buckets)).unaryExpr([](float squares) {
        return std::sqrt(squares);
      });
  const SparseRows weighted = norms.cwiseInverse().asDiagonal() * counts;

  out.dims = w.options.buckets;
  out.offsets.assign(weighted.outerIndexPtr(), weighted.outerIndexPtr() + n + 1);
  out.indices.assign(weighted.innerIndexPtr(), weighted.innerIndexPtr() + nnz);
  out.values.assign(weighted.valuePtr(), weighted.valuePtr() + nnz);
}

void HashingModel::score(std::string_view query, std::span<const std::string_view> passages,
                         std::vector<float>& scores) const {
  // The query and every passage in one batch, then one product: the passages' vectors as rows
  // (padded to a multiple of 48 with zero rows) times the query's.
  std::vector<std::string_view> texts;
  texts.reserve(passages.size() + 1);
  texts.push_back(query);
  texts.insert(texts.end(), passages.begin(), passages.end());
  DenseVectors vectors;
  embed(texts, vectors);
  const auto dims = static_cast<Index>(vectors.dims);
  const auto count = static_cast<Index>(passages.size());
  const Eigen::Map<const ColMatrix> all(vectors.values.data(), dims, count + 1);
  ColMatrix rows = ColMatrix::Zero(round_up(count, row_block), dims);
  rows.topRows(count) = all.rightCols(count).transpose();
  ColMatrix products(rows.rows(), 1);
  detail::ordered_product(rows, all.leftCols(1), products);
  scores.assign(products.data(), products.data() + count);
}

void HashingModel::dense_layer(std::span<const float> features, std::size_t rows,
                               std::span<float> out) const {
  const Weights& w = *weights_;
  if (features.size() != rows * w.options.hidden || out.size() != rows * w.options.dimensions) {
    throw std::invalid_argument("embed::HashingModel::dense_layer: sizes do not match");
  }
  const auto n = static_cast<Index>(rows);
  const Eigen::Map<const ColMatrix> in(features.data(), w.hidden, n);  // row-major rows x hidden
  ColMatrix product;
  w.project(in, product);
  Eigen::Map<ColMatrix>(out.data(), w.dims, n) = product.topRows(w.dims);
}

std::vector<std::string> HashingModel::tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  scan_tokens(text, [&](std::string_view token) {
    std::string t(token);
    for (char& c : t) c = static_cast<char>(lower(static_cast<unsigned char>(c)));
    tokens.push_back(std::move(t));
  });
  return tokens;
}

}  // namespace embed
