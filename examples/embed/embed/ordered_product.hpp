// SPDX-License-Identifier: MIT
// A float matrix product whose every entry is summed in one fixed order, on any machine
// (internal to the plugin; needs Eigen).
#pragma once

#include <Eigen/Core>

namespace embed::detail {

/// The left operand's rows come in multiples of this (see ordered_product.cpp).
inline constexpr Eigen::Index ordered_row_block = 48;

/**
 * `out = lhs * rhs`, each entry one sum over the inner index in order:
 * `(...((0 + l(i,0) * r(0,j)) + l(i,1) * r(1,j)) + ...)`, exactly as Eigen's coefficient-based
 * `lhs.lazyProduct(rhs)` sums it, at the speed of its blocked product. The bits depend on the
 * operands and on the instruction set the code is compiled for (FMA fuses each step), never on
 * the CPU's cache sizes, the thread count, or the operands' other rows and columns.
 *
 * `lhs.rows()` must be a multiple of `ordered_row_block`; `out` must be `lhs.rows() x rhs.cols()`.
 */
void ordered_product(const Eigen::Ref<const Eigen::MatrixXf>& lhs,
                     const Eigen::Ref<const Eigen::MatrixXf>& rhs, Eigen::Ref<Eigen::MatrixXf> out);

}  // namespace embed::detail
