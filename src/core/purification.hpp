// Purification of the returned vectors from the Lanczos relation (Settings::purify): the residual
// directions the driver's single-vector steps keep while it locks pairs, and the purification after the solve.
// Internal to src/core (docs/algorithm.md, "Purification without solves").
#pragma once

#include "core/driver_support.hpp"
#include "core/solve_types.hpp"

#include <vector>

namespace cudalanczos::detail {

/// The residual directions kept for Settings::purify, in basis columns base..base+slots-1 (`used` of
/// them so far), and for each locked or returned vector the c / theta of its purification and its
/// direction's column (NaN and -1 where no column was left or theta is 0).
class ResidualDirections {
public:
  /// `base` and `slots`: the columns basis_columns_needed() sets aside (purify_columns() of them), fewer
  /// where the caller's basis has only `basis_columns`.
  ResidualDirections(bool purify, int base, int slots, int basis_columns);

  /// Keeps column `col` (this cycle's residual direction) for the purification of the pairs
  /// order[q0..q1) of the active block (Ritz vectors Y, values w, coupling beta); appends their scale
  /// and column.
  void keep(Backend &b, int col, const RitzPairs &rp, double beta, int q0, int q1);

  /// The returned vectors' purification data, aligned with r.eigenvalues before sort_converged.
  void fill(Result &r, std::size_t returned) const;

  /// Forgets every kept direction (the solve starts over).
  void clear();

private:
  bool purify_ = false;
  int base_ = 0, slots_ = 0, used_ = 0;
  std::vector<double> scale_;
  std::vector<int> column_;
};

/// Settings::purify, after the solve and its true-residual check: x_j <- A x_j / theta_j from the
/// Lanczos relation, for each converged x_j whose residual direction was kept (Result::purify_scale).
void purify_returned(Backend &b, const Settings &s, Result &r);

} // namespace cudalanczos::detail
