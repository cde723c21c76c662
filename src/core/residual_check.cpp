// The true-residual check of the converged pairs (residual_check.hpp).
#include "core/residual_check.hpp"

#include "core/driver_support.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace cudalanczos::detail {

namespace {

// The pairs whose proven bound (Result::residual_bounds) meets tol: they need no product, and their error
// stays the driver's estimate, which the bound is above.
std::vector<char> proven_pairs(const Settings &s, const Callbacks &c, const Result &r, int k)
{
  std::vector<char> proven(static_cast<std::size_t>(k), 0);
  if (r.residual_bounds.size() >= static_cast<std::size_t>(k))
    for (int i = 0; i < k; ++i) {
      const double bound = r.residual_bounds[i];
      proven[i] = std::isfinite(bound) && c.error(r.eigenvalues[i], bound) < s.tol;
    }
  return proven;
}

// The true residuals of pairs i0..i0+count-1: one block product into columns returned.., then one
// reduction per pair. Their errors replace the driver's; pass[i] says whether they meet tol.
void check_run(Backend &b, const Settings &s, const Callbacks &c, Result &r, int i0, int count, int returned,
               std::vector<char> &pass)
{
  b.apply_operator_block(i0, returned, count);
  r.matvecs += count;
  r.matvecs_check += count;
  ++r.operator_passes; // one block product
  for (int j = 0; j < count; ++j) {
    const int i = i0 + j;
    const double theta = r.eigenvalues[i] + s.shift; // the operator's eigenvalue
    // ||A x - theta x||^2 with x of unit norm and the operator's norm about 1 (scaling into range):
    // neither can overflow, nor underflow where tol could still be met.
    const Scalar theta_s = theta;
    const double res2 = b.subtract(i, 1, &theta_s, returned + j);
    ++r.reductions;
    check_finite(res2, "a converged pair's true residual");
    const double err = c.error(r.eigenvalues[i], std::sqrt(res2));
    r.errors[i] = err;
    pass[i] = err < s.tol;
  }
}

} // namespace

void check_residuals(Backend &b, const Settings &s, const Callbacks &c, int block, Result &r)
{
  const int k = r.nconv, returned = static_cast<int>(r.eigenvalues.size());
  r.residuals_checked = 0;
  r.residuals_proven = 0;
  r.residual_rejected = 0;
  if (k <= 0) return;
  const std::vector<char> proven = proven_pairs(s, c, r, k);
  std::vector<char> pass(proven);
  r.residuals_proven = static_cast<int>(std::count(proven.begin(), proven.end(), 1));
  r.residuals_checked = k - r.residuals_proven;
  // The products go to the columns after the returned vectors: at least three are free (the drivers'
  // basis_columns_needed keeps a residual direction and two work columns, or a residual block).
  // (Not the residual directions kept for the purification, from r.purify_base on.)
  const int room = (r.purify_base >= 0 ? r.purify_base : b.basis_columns()) - returned;
  if (room < 1) throw Error("check_residuals: no free basis column after the " + std::to_string(returned) + " returned vectors");
  // One block product per chunk: a GPU reads a dense matrix once for all its columns, a sparse one with
  // an interleaved copy of the block (kernels::csr_spmm), whose scratch is kept to kResidualBlock columns;
  // block steps keep their own block size (the shape their products were prepared for).
  const int chunk = std::max(1, std::min({block > 1 ? block : kResidualBlock, room, k}));
  for (int i0 = 0; i0 < k;) {
    if (proven[i0]) {
      ++i0;
      continue;
    }
    int count = 1; // a run of consecutive pairs to check, at most a chunk
    while (count < chunk && i0 + count < k && !proven[i0 + count]) ++count;
    check_run(b, s, c, r, i0, count, returned, pass);
    i0 += count;
  }
  // The converged pairs are the leading ones, best first by `which`: a pair that fails leaves a gap,
  // and the passing pairs after it are not counted either, so that the nconv pairs returned are the
  // best nconv values with none missing in between (a failing wanted pair among passing ones that were
  // all counted was reported as converged with the next value in its place). Columns stay in order.
  const int kept = static_cast<int>(std::find(pass.begin(), pass.end(), 0) - pass.begin());
  if (kept == k) return;
  r.nconv = kept;
  r.residual_rejected = static_cast<int>(std::count(pass.begin(), pass.end(), 0));
  if (r.reason == Reason::Converged && kept < s.nev) r.reason = Reason::ResidualCheck;
}

} // namespace cudalanczos::detail
