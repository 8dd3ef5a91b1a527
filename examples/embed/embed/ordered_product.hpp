// SPDX-License-Identifier: MIT
// A float matrix product whose every entry is summed in one fixed order, on any machine
// (internal to the plugin; needs Eigen).
#pragma once

#include <Eigen/Core>

namespace embed::detail {

/// The left operand's rows come in multiples of this (see ordered_product.cpp).
inline constexpr Eigen::Index ordered_row_block = 48;

/**
 * A left operand packed once for the product kernel, for the many products that share it (a
 * model's weights): packing costs as much as a product of a few dozen columns, so a small group
 * of texts would otherwise pay for it again and again. Immutable once built: `multiply` may run
 * on many threads at once.
 */
class PackedLhs {
 public:
  /// An empty operand, 0 x 0.
  PackedLhs() = default;
  /// Packs `lhs`, whose rows must come in multiples of `ordered_row_block`.
  explicit PackedLhs(const Eigen::Ref<const Eigen::MatrixXf>& lhs);

  [[nodiscard]] Eigen::Index rows() const noexcept { return rows_; }
  [[nodiscard]] Eigen::Index depth() const noexcept { return depth_; }

  /**
   * `out = lhs * rhs`, each entry one sum over the inner index in order:
   * `(...((0 + l(i,0) * r(0,j)) + l(i,1) * r(1,j)) + ...)`, exactly as Eigen's coefficient-based
   * `lhs.lazyProduct(rhs)` sums it, at the speed of its blocked product. The bits depend on the
   * operands and on the instruction set the code is compiled for (FMA fuses each step), never on
   * the CPU's cache sizes, the thread count, or the operands' other rows and columns.
   *
   * `rhs` must have `depth()` rows; `out` must be `rows() x rhs.cols()`.
   */
  void multiply(const Eigen::Ref<const Eigen::MatrixXf>& rhs, Eigen::Ref<Eigen::MatrixXf> out) const;

 private:
  Eigen::Index rows_ = 0;
  Eigen::Index depth_ = 0;
  Eigen::VectorXf packed_;  // aligned as the kernel loads it
};

/// `PackedLhs(lhs).multiply(rhs, out)`: for a left operand used once.
void ordered_product(const Eigen::Ref<const Eigen::MatrixXf>& lhs,
                     const Eigen::Ref<const Eigen::MatrixXf>& rhs, Eigen::Ref<Eigen::MatrixXf> out);

}  // namespace embed::detail
