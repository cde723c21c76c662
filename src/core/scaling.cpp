// Scaling into range and the true-residual check (scaling.hpp).
#include "core/scaling.hpp"

#include "core/driver_support.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace cudalanczos::detail {

int scale_exponent(double norm)
{
  if (!(norm > 0) || !std::isfinite(norm)) return 0;
  const int x = std::ilogb(norm); // norm in [2^x, 2^(x+1)), subnormal norms included
  if (x >= -kSafeNormExponent && x < kSafeNormExponent) return 0;
  return std::clamp(-(x + 1), -kMaxScaleExponent, kMaxScaleExponent);
}

double squared_norm_in_range(Backend &b, int col, int &t, long &reductions)
{
  // ||v||^2 at scale 2^(-2 t): v moved by 2^400 (2^800 in the square) until its square is well inside the
  // normal range. Finite entries need at most three moves either way (2^1200 spans every exponent), so a
  // square still infinite after them means Inf entries, and one still zero a zero vector.
  constexpr int kStep = 400;
  const double hi = std::ldexp(1.0, 2 * kStep), lo = std::ldexp(1.0, -2 * kStep);
  t = 0;
  double q = squared_norm(b, col);
  ++reductions;
  for (int moves = 0; moves < 3 && !std::isnan(q); ++moves) {
    if (!(q > hi || q < lo)) break;
    const int step = q > hi ? kStep : -kStep;
    b.scale(col, std::ldexp(1.0, -step));
    t += step;
    q = squared_norm(b, col);
    ++reductions;
  }
  return q;
}

double measure_norm(Backend &b, std::uint64_t seed, long &products)
{
  const int nb = b.basis_columns();
  if (b.global_size() <= 0 || nb < 3) return 0; // the driver refuses these itself (and column 0 may hold a start vector)
  const int x = nb - 2, y = nb - 1;
  b.set_operator_scale(0);
  b.set_random(x, seed ^ 0x6e6f726d2d657374ULL);
  double q = squared_norm(b, x); // about n/3: no danger for any n a machine holds
  if (!(q > 0)) return 0;
  b.scale(x, 1.0 / std::sqrt(q));
  b.apply_operator(x, y);
  ++products;
  int t = 0;
  long reductions = 0;
  q = squared_norm_in_range(b, y, t, reductions);
  check_finite(q, "||A v|| (the norm estimate's product)");
  if (q == 0) return 0;
  return std::ldexp(std::sqrt(q), t);
}

Settings scaled_settings(Settings s, int e)
{
  s.shift = std::ldexp(s.shift, e);
  if (s.translation_map) s.target = std::ldexp(s.target, e);
  return s;
}

Callbacks scaled_callbacks(const Callbacks &user, int e, bool translation_map)
{
  if (e == 0) return user;
  Callbacks c = user;
  if (user.error)
    c.error = [f = user.error, e](double theta, double res) { return f(std::ldexp(theta, -e), std::ldexp(res, -e)); };
  if (user.eigenvalue && translation_map) // value + shift: the user's eigenvalues in the operator's units, scaled alike
    c.eigenvalue = [f = user.eigenvalue, e](double value) { return std::ldexp(f(std::ldexp(value, -e)), e); };
  else if (user.eigenvalue) // e.g. sigma + 1/theta (shift-and-invert): the user's eigenvalues keep their own units
    c.eigenvalue = [f = user.eigenvalue, e](double value) { return f(std::ldexp(value, -e)); };
  if (user.monitor)
    c.monitor = [f = user.monitor, e, buffer = std::vector<double>()](int its, int nconv, const double *theta, const double *err,
                                                                      int count) mutable {
      buffer.resize(static_cast<std::size_t>(std::max(count, 0)));
      for (int i = 0; i < count; ++i) buffer[i] = std::ldexp(theta[i], -e);
      f(its, nconv, buffer.data(), err, count);
    };
  return c;
}

void check_residuals(Backend &b, const Settings &s, const Callbacks &c, int block, Result &r)
{
  const int k = r.nconv, returned = static_cast<int>(r.eigenvalues.size());
  r.residuals_checked = 0;
  r.residuals_proven = 0;
  r.residual_rejected = 0;
  if (k <= 0) return;
  // A pair whose proven bound meets tol needs no product (Result::residual_bounds); its error stays the
  // driver's estimate, which the bound is above.
  std::vector<char> pass(static_cast<std::size_t>(k), 0), proven(static_cast<std::size_t>(k), 0);
  if (r.residual_bounds.size() >= static_cast<std::size_t>(k))
    for (int i = 0; i < k; ++i) {
      const double bound = r.residual_bounds[i];
      proven[i] = pass[i] = std::isfinite(bound) && c.error(r.eigenvalues[i], bound) < s.tol;
    }
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
