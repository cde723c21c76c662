// The true-residual check: what solve() does after either driver before a pair counts as converged.
// Internal to src/core (docs/algorithm.md, "The true-residual check").
#pragma once

#include "core/solve_types.hpp"

namespace cudalanczos::detail {

/// check_residuals applies the operator to at most this many columns at once (block steps: their size).
inline constexpr int kResidualBlock = 16;

/// The true-residual check of the converged pairs (columns 0..r.nconv-1, eigenvalues r.eigenvalues as
/// reported, i.e. theta - shift): ||A x - theta x|| for each, from products in blocks of up to
/// kResidualBlock columns (of `block` where that is above 1) into the columns after the returned ones,
/// then Callbacks::error against tol. The pairs counted converged afterwards are the leading ones that
/// pass, up to the first that fails (a pair after it would leave a gap in the values returned); the
/// columns keep their order. r.errors of the checked pairs become the errors of their true residuals.
/// Sets r.residuals_checked, r.residual_rejected (the pairs that failed), and r.reason to ResidualCheck
/// when fewer than nev remain.
void check_residuals(Backend &b, const Settings &s, const Callbacks &c, int block, Result &r);

} // namespace cudalanczos::detail
