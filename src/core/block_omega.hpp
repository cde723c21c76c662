// Simon's omega recurrence for block steps: the estimate of the loss of orthogonality that partial
// reorthogonalization of block steps (driver/block_steps.cpp) watches. The single-vector recurrence
// (driver/omega_recurrence.hpp) with b x b blocks in place of the scalars: the three-term block
// recurrence A Q_j = Q_{j-1} R_{j-1}^H + Q_j A_j + Q_{j+1} R_j makes Omega_k = V^H Q_k obey
//   Omega_{j+1} R_j = conj(H) Omega_j - Omega_j A_j - Omega_{j-1} R_{j-1}^H + rounding,
// row by row over the basis columns that the step did not orthogonalize against explicitly.
#pragma once

#include "core/scalar.hpp"

#include <vector>

namespace cudalanczos::detail {

class BlockOmegaRecurrence {
public:
  /// `rows`: the most basis columns a cycle may have (with the residual block); `b`: the block size.
  BlockOmegaRecurrence(int rows, int b) : rows_(rows), b_(b) { begin_segment(0); }

  /// A segment of block steps begins at column `top` (after a start or a restart): the columns before
  /// it are orthogonalized against explicitly at every step, so only columns top.. are estimated.
  void begin_segment(int top);

  /// The block at w..w+b-1 was orthogonalized against every column before it: its estimates are at
  /// rounding level (and the block before it keeps those its own step left).
  void after_full(int w);

  /// The estimate after a partial step: the block at c..c+b-1 was multiplied, W = A Q_c orthogonalized
  /// against the columns before `top` and the window max(top, c-b)..c+b-1, with coefficients C (rows 0..c+b-1,
  /// leading dimension ldc), then Q = W M (SVQB: M = U L^(-1/2)). H is the projected matrix (leading
  /// dimension ldh) whose columns top..c-1 earlier steps filled. True when an estimate of a column outside
  /// the window passes omega_limit: the new block then needs a full pass, and so does the next one (its
  /// product starts from a block that was not orthogonal).
  bool step(const Scalar *H, int ldh, int c, const Scalar *C, int ldc, const Scalar *M, double anorm);

private:
  Scalar &at(std::vector<Scalar> &v, int i, int q) const { return v[i + static_cast<std::size_t>(q) * rows_]; }
  Scalar at(const std::vector<Scalar> &v, int i, int q) const { return v[i + static_cast<std::size_t>(q) * rows_]; }
  void make_identity_at(std::vector<Scalar> &v, int w) const; // rows w..w+b-1: the block against itself

  int rows_, b_;
  int top_ = 0;
  std::vector<Scalar> cur_, prev_, next_; // V^H Q_j, V^H Q_{j-1}, and the step's work: rows_ x b_ each
};

} // namespace cudalanczos::detail
