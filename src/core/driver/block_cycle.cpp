// A cycle of block steps in the Lanczos driver (driver.hpp): the steps up to the cycle's end and the
// looks that may end it early, the Ritz pairs of the block projected matrix, the test that decides
// whether a verification round must run, and the projected matrix at a restart or a start over.
#include "core/driver/driver.hpp"

#include "core/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace cudalanczos::detail {

// Block steps from t_.start while whole blocks fit in the cycle, ending early where block_ends_early
// allows; returns where the cycle ended. `exhausted` stays set once a step finds no fresh direction.
// Callbacks::tick after each block step: a block step is one backend call per operation already, so the
// ticks change nothing.
int Driver::extend_block_cycle(bool &exhausted)
{
  int e = t_.start;
  const int end = cycle_end();
  blk_.looks = {};
  while (!exhausted && e + B_ <= end) {
    exhausted = !block_step(e, t_.locked);
    e += B_;
    if (c_.tick) c_.tick(its_, t_.locked, matvecs_);
    if (!exhausted && e + B_ <= end && block_ends_early(t_.locked, e, t_.verifying)) break;
  }
  return e;
}

// Whether the cycle may end after e columns, before m: once the last missing wanted pairs (at most B)
// have converged a digit beyond tol, as single-vector cycles end (thick_restart.cpp,
// end_early, which asks for two: its pairs are locked at tol, these at tol/100, and the margin here only
// keeps the true residual safely below tol; docs/tuning.md#core-block-steps-early-end-margin). A look
// costs the small eigenproblem and no extra wait (each block step brought its coefficients to the host),
// and comes only at the steps schedule_block_look picks. A value better than the converged ones may still surface in the rest
// of the cycle, and only a verification round would then look for it: with the verification on, the
// end of the cycle decides whether the Ritz values at hand make that round unnecessary
// (block_may_hide_copies); without it, only once the solve has applied the operator as often as plain
// thick restart before its first convergence test (unverified_early_end_products). With few
// wanted pairs (the k = 1 a block of 2 is chosen for) this is what keeps a cycle of ncv = nev + 16 b
// columns from running all its steps after the pair has converged.
bool Driver::block_ends_early(int locked, int e, bool verifying)
{
  if (verifying || s_.nev - locked > B_ || e - locked < 2 * B_) return false;
  if (!s_.verify && matvecs_ < unverified_early_end_products(s_, n_)) return false;
  if (e < blk_.looks.next) return false;
  const RitzPairs rp = block_ritz_pairs(locked, e, false);
  const double target = 1e-1 * s_.tol;
  int newconv = 0;
  while (newconv < rp.na && rp.err[newconv] < target) ++newconv;
  if (locked + newconv >= s_.nev) return true;
  double gap = 0; // how far the worst missing wanted pair is from the target
  for (int q = newconv; q < std::min(rp.na, s_.nev - locked); ++q) gap = std::max(gap, rp.err[q] / target);
  schedule_block_look(e, gap);
  return false;
}

// The next look after one at e that found the missing pairs `gap` times the target away. The error
// falls about geometrically from step to step (faster as the extreme values separate), so the rate
// between the last two looks predicts the steps still needed; the next look comes after half of them,
// at least one step on, and the looks of a cycle that converges within it number about the log of its
// steps instead of one a step. Each look is a host eigen-decomposition the GPU waits for; a late look
// costs at most steps past the one that converged, and only while the rate does not hold
// (docs/tuning.md#core-block-steps-looks-half-way).
void Driver::schedule_block_look(int e, double gap)
{
  BlockSteps::Looks &l = blk_.looks;
  int steps = 1;
  if (l.last > 0 && std::isfinite(gap) && gap > 1 && gap < l.gap) {
    const double rate = std::log(l.gap / gap) / ((e - l.last) / B_); // the log of the error's fall per block step
    steps = static_cast<int>(std::clamp(std::floor(0.5 * std::log(gap) / rate), 1.0, double(m_)));
  }
  l.next = e + steps * B_;
  l.last = e;
  l.gap = gap;
}

// Whether a wanted value (one of the nev best converged ones) may have more copies than the block space
// could hold: B or more of the values at hand lie at it, the locked ones within the verification's
// slack (wanted_edge), the active Ritz values within their residual. An active value counts only once
// settled (error below sqrt(tol)): an eigenvalue of multiplicity d > B has B directions in the block
// space, P_E X for the eigenspace E and the start block X, and they converge together, the worst
// behind the best by at most 1 / sigma_min(P_E X) (the filter polynomial is the same on E), a factor
// above 1e4 with probability of order 1e-8 for a random d x B block with d > B (P(sigma_min < t) is
// about t^(d-B+1)). So when the wanted value has converged to tol, its copies in the space have
// converged to sqrt(tol) but for that chance, the certificate's own. Counting every unconverged Ritz
// value within its residual ran rounds for nothing (docs/tuning.md#core-block-steps-settled-copies).
bool Driver::block_may_hide_copies(const RitzPairs &rp, const std::vector<double> &locked_theta) const
{
  std::vector<double> conv(locked_theta), value(locked_theta), reach; // eigenvalues as reported (minus the shift)
  for (double t : locked_theta) reach.push_back(s_.tol * std::max(std::abs(t + s_.shift), anorm_));
  for (int q = 0; q < rp.na; ++q) {
    const double t = rp.w[rp.order[q]] - s_.shift;
    if (rp.err[q] < s_.tol) conv.push_back(t);
    if (!(rp.err[q] < std::sqrt(s_.tol))) continue; // not settled: not a copy the block space holds (above)
    value.push_back(t);
    reach.push_back(std::max(rp.res[q], s_.tol * std::max(std::abs(t + s_.shift), anorm_)));
  }
  if (static_cast<int>(conv.size()) < s_.nev) return true;
  std::sort(conv.begin(), conv.end(), [&](double x, double y) { return badness(s_, c_.eigenvalue(x)) < badness(s_, c_.eigenvalue(y)); });
  for (int i = 0; i < s_.nev; ++i) {
    int copies = 0;
    for (std::size_t j = 0; j < value.size(); ++j)
      if (std::abs(value[j] - conv[i]) <= reach[j] + s_.tol * std::max(std::abs(conv[i] + s_.shift), anorm_)) ++copies;
    if (copies >= B_) return true;
  }
  return false;
}

// The Ritz pairs of the active block H[locked:e, locked:e], with residuals ||R y_last|| (R: the
// coupling of the last block to the residual block at e); on the backend where it has the faster
// eigensolver (Backend::projected_eigen: with many pairs the order is mpd, hundreds, every restart).
// Without vectors (a look) only the last block's rows of them: on the host, O(na^2 b) for the
// vectors' part instead of O(na^3), the values and residuals the same bits.
RitzPairs Driver::block_ritz_pairs(int locked, int e, bool vectors)
{
  RitzPairs rp = block_projected_pairs(locked, e, vectors);
  if (block_partial_floor() && raise_to_partial_floor(s_, c_, rp, std::min(s_.nev - t_.locked, rp.na / 2), anorm_)) partial_blocked_ = true;
  return rp;
}

RitzPairs Driver::block_projected_pairs(int locked, int e, bool vectors)
{
  const int na = e - locked;
  return projected_.time(na, [&] {
    Matrix A(static_cast<std::size_t>(na) * na);
    for (int j = 0; j < na; ++j)
      for (int i = 0; i < na; ++i) A[i + static_cast<std::size_t>(j) * na] = H(locked + i, locked + j);
    return detail::ritz_pairs_hermitian(s_, c_, na, std::move(A), B_, vectors, [&](const Scalar *y_last) {
      double r2 = 0;
      for (int r = 0; r < B_; ++r) {
        Scalar t = 0;
        for (int l = 0; l < B_; ++l) t += H(e + r, e - B_ + l) * y_last[l];
        r2 += abs2(t);
      }
      return std::sqrt(r2);
    }, &b_);
  });
}

// Partial reorthogonalization leaves the Ritz vectors' residuals good to about omega_limit ||A||
// (raise_to_partial_floor); a wanted position that floor keeps from tol turns it off for the rest of
// the solve (partial_blocked_).
bool Driver::block_partial_floor() const { return s_.reorthogonalization == Reorthogonalization::Partial && !partial_blocked_; }

// A wanted pair needs more orthogonality than partial reorthogonalization kept (partial_blocked_): the
// basis and the kept vectors carry that loss, and a projected matrix that takes them as orthonormal is
// off by omega_limit ||A||, too much for such a pair. Start over with full reorthogonalization from the
// sum of the locked vectors and the best Ritz vectors, which keeps most of the progress in one start
// vector (as single vectors do, thick_restart.cpp).
void Driver::start_blocks_over(const RitzPairs &rp, int e)
{
  restarted_full_ = true;
  const std::vector<Scalar> coef = sum_of_best_vectors(rp, t_.locked, s_.nev, e);
  b_.combine(0, e, coef.data(), e); // column e, the residual block's first, is free now
  b_.copy_column(e, 0);
  std::fill(blk_.H.begin(), blk_.H.end(), Scalar(0));
  t_ = RestartState{};
  matvecs_to_nev_ = -1;
  verify_fresh_ = false;
  blk_.omega.begin_segment(0);
  t_.exhausted = !start_block(true);
}

// Restart: the locked and kept Ritz values on the diagonal of the projected matrix; the next block step
// recomputes their coupling to the block that follows them (the arrow), and drops the locked ones'.
void Driver::restart_block_matrix(const RitzPairs &rp, int lock, int keep)
{
  std::fill(blk_.H.begin(), blk_.H.end(), Scalar(0));
  for (int i = 0; i < t_.locked + lock; ++i) H(i, i) = t_.locked_theta[i] + s_.shift;
  for (int q = lock; q < keep; ++q) H(t_.locked + q, t_.locked + q) = rp.w[rp.order[q]];
}

} // namespace cudalanczos::detail
