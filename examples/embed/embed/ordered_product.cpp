// SPDX-License-Identifier: MIT
// ordered_product: Eigen's own blocked matrix product, with blocks that do not depend on the CPU.
//
// Why not `out.noalias() = lhs * rhs`: Eigen's product cuts the inner dimension into slices
// whose length follows the L1 cache size it detects at run time (and, in OpenMP builds, the
// thread count), sums each slice in registers, then adds the slices to the result one by one.
// Another L1 size cuts the sum elsewhere and rounds it differently: 768 inputs are one slice
// with a 48 KiB L1 and two (392 + 376) with a 32 KiB one, so the same build gave other bits on
// another CPU. Eigen has no public way to choose one product's blocking (setCpuCacheSizes is
// process-wide and read by every product), so this runs the routine behind `operator*`
// (internal::general_matrix_matrix_product, Eigen 3.4) with blocks chosen here:
// - the whole inner dimension is one slice, so each entry is one sum in index order;
// - every row goes through the kernel's widest path, the only one that sums in index order (the
//   one-packet path splits a sum into its even and odd terms): that path takes 8, 12, 16, 24 or
//   48 rows at a time (SSE to AVX-512, with or without FMA), so lhs and the row blocks come in
//   multiples of 48 rows;
// - columns are summed alike four at a time or one by one, so any column count will do;
// - block sizes only decide which entries are computed together, never how one is summed.
#include "ordered_product.hpp"

#include <algorithm>
#include <stdexcept>

static_assert(EIGEN_VERSION_AT_LEAST(3, 4, 0), "the embed plugin needs Eigen 3.4 or later");

namespace embed::detail {

namespace {

using Eigen::Index;

// Rows and columns computed together: for 768 inputs, 576 KiB of packed rows and 384 KiB of
// packed columns, which suits today's L2 caches (any multiple of 48 and of 8 gives the same bits).
constexpr Index row_panel = 4 * ordered_row_block;
constexpr Index column_panel = 128;

class WholeDepthBlocking final : public Eigen::internal::level3_blocking<float, float> {
 public:
  WholeDepthBlocking(Index rows, Index cols, Index depth) {
    m_mc = std::min(rows, row_panel);
    m_nc = std::min(cols, column_panel);
    m_kc = depth;
    // The packing buffers stay null: the product allocates them for the blocks above.
  }
};

using ColMajorProduct =
    Eigen::internal::general_matrix_matrix_product<Index, float, Eigen::ColMajor, false, float,
                                                   Eigen::ColMajor, false, Eigen::ColMajor, 1>;

}  // namespace

void ordered_product(const Eigen::Ref<const Eigen::MatrixXf>& lhs,
                     const Eigen::Ref<const Eigen::MatrixXf>& rhs,
                     Eigen::Ref<Eigen::MatrixXf> out) {
  if (lhs.rows() % ordered_row_block != 0 || lhs.cols() != rhs.rows() || out.rows() != lhs.rows() ||
      out.cols() != rhs.cols()) {
    throw std::logic_error("embed::detail::ordered_product: shapes do not fit");
  }
  out.setZero();  // the product adds to it
  if (out.size() == 0 || lhs.cols() == 0) return;
  WholeDepthBlocking blocking(lhs.rows(), rhs.cols(), lhs.cols());
  ColMajorProduct::run(lhs.rows(), rhs.cols(), lhs.cols(), lhs.data(), lhs.outerStride(),
                       rhs.data(), rhs.outerStride(), out.data(), out.innerStride(),
                       out.outerStride(), 1.0f, blocking, nullptr);
}

}  // namespace embed::detail
