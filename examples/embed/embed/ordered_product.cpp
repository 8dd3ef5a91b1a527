// SPDX-License-Identifier: MIT
// ordered_product: Eigen's own blocked matrix product, with blocks that do not depend on the CPU.
//
// Why not `out.noalias() = lhs * rhs`: Eigen's product cuts the inner dimension into slices
// whose length follows the L1 cache size it detects at run time (and, in OpenMP builds, the
// thread count), sums each slice in registers, then adds the slices to the result one by one.
// Another L1 size cuts the sum elsewhere and rounds it differently: 768 inputs are one slice
// with a 48 KiB L1 and two (392 + 376) with a 32 KiB one, so the same build gave other bits on
// another CPU. Eigen has no public way to choose one product's blocking (setCpuCacheSizes is
// process-wide and read by every product), so this does what the routine behind `operator*`
// does (internal::general_matrix_matrix_product, Eigen 3.4: pack blocks of both operands, run
// the kernel on each pair), with blocks chosen here:
// - the whole inner dimension is one slice, so each entry is one sum in index order;
// - every row goes through the kernel's widest path, the only one that sums in index order (the
//   one-packet path splits a sum into its even and odd terms): that path takes 8, 12, 16, 24 or
//   48 rows at a time (SSE to AVX-512, with or without FMA), so lhs and the row blocks come in
//   multiples of 48 rows;
// - columns are summed alike four at a time or one by one, so any column count will do;
// - block sizes only decide which entries are computed together, never how one is summed.
// Packing the left operand does not depend on the right one, so PackedLhs does it once.
#include "ordered_product.hpp"

#include <algorithm>
#include <stdexcept>

static_assert(EIGEN_VERSION_AT_LEAST(3, 4, 0), "the embed plugin needs Eigen 3.4 or later");

namespace embed::detail {

namespace {

using Eigen::Index;
using Traits = Eigen::internal::gebp_traits<float, float>;
using LhsMapper = Eigen::internal::const_blas_data_mapper<float, Index, Eigen::ColMajor>;
using RhsMapper = Eigen::internal::const_blas_data_mapper<float, Index, Eigen::ColMajor>;
using ResMapper = Eigen::internal::blas_data_mapper<float, Index, Eigen::ColMajor, Eigen::Unaligned, 1>;

// Rows and columns computed together: for 768 inputs, 576 KiB of packed rows and 384 KiB of
// packed columns, which suits today's L2 caches (any multiple of 48 and of 8 gives the same bits).
constexpr Index row_panel = 4 * ordered_row_block;
constexpr Index column_panel = 128;

}  // namespace

PackedLhs::PackedLhs(const Eigen::Ref<const Eigen::MatrixXf>& lhs)
    : rows_(lhs.rows()), depth_(lhs.cols()), packed_(lhs.rows() * lhs.cols()) {
  if (rows_ % ordered_row_block != 0) {
    throw std::logic_error("embed::detail::PackedLhs: rows must come in multiples of 48");
  }
  if (packed_.size() == 0) return;  // nothing to pack (and no data to point into)
  Eigen::internal::gemm_pack_lhs<float, Index, LhsMapper, Traits::mr, Traits::LhsProgress,
                                 Traits::LhsPacket4Packing, Eigen::ColMajor>
      pack;
  const LhsMapper from(lhs.data(), lhs.outerStride());
  // Panel by panel, each at its whole depth, as the kernel reads them: a panel of `mc` rows
  // takes mc * depth floats, so panel i2 starts at i2 * depth.
  for (Index i2 = 0; i2 < rows_; i2 += row_panel) {
    const Index mc = std::min(row_panel, rows_ - i2);
    pack(packed_.data() + i2 * depth_, from.getSubMapper(i2, 0), depth_, mc);
  }
}

void PackedLhs::multiply(const Eigen::Ref<const Eigen::MatrixXf>& rhs,
                         Eigen::Ref<Eigen::MatrixXf> out) const {
  if (rhs.rows() != depth_ || out.rows() != rows_ || out.cols() != rhs.cols()) {
    throw std::logic_error("embed::detail::PackedLhs: shapes do not fit");
  }
  out.setZero();  // the kernel adds to it
  if (out.size() == 0 || depth_ == 0) return;
  Eigen::internal::gemm_pack_rhs<float, Index, RhsMapper, Traits::nr, Eigen::ColMajor> pack;
  Eigen::internal::gebp_kernel<float, float, Index, ResMapper, Traits::mr, Traits::nr, false, false> kernel;
  const RhsMapper from(rhs.data(), rhs.outerStride());
  const ResMapper to(out.data(), out.outerStride(), out.innerStride());
  const Index cols = rhs.cols();
  Eigen::VectorXf block(depth_ * std::min(cols, column_panel));
  for (Index j2 = 0; j2 < cols; j2 += column_panel) {
    const Index nc = std::min(column_panel, cols - j2);
    pack(block.data(), from.getSubMapper(0, j2), depth_, nc);
    for (Index i2 = 0; i2 < rows_; i2 += row_panel) {
      const Index mc = std::min(row_panel, rows_ - i2);
      kernel(to.getSubMapper(i2, j2), packed_.data() + i2 * depth_, block.data(), mc, depth_, nc, 1.0f);
    }
  }
}

void ordered_product(const Eigen::Ref<const Eigen::MatrixXf>& lhs,
                     const Eigen::Ref<const Eigen::MatrixXf>& rhs, Eigen::Ref<Eigen::MatrixXf> out) {
  PackedLhs(lhs).multiply(rhs, out);
}

}  // namespace embed::detail
