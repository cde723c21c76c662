// Thick-restart Lanczos (Wu & Simon 2000; Stathopoulos, Saad & Wu 1998) with locking (driver.hpp).
//
// After m steps: A V_m = V_m S + beta v_m e_m^T, S symmetric: diagonal on the locked part, arrowhead
// plus tridiagonal on the active part. S's active block is diagonalized, the best Ritz vectors kept,
// converged ones locked (their coupling dropped: it is below tol), and the recurrence resumes.
//
// Multiplicities: a Krylov space grown from one vector holds one direction of each eigenspace, so a
// second copy of an eigenvalue only appears through rounding, if at all. With Settings::verify, once
// nev pairs have converged the search goes on from a fresh random vector orthogonal to everything
// locked (verification.cpp), until the best Ritz value of that complement has converged and is worse
// than the nev-th wanted value; a round that found new wanted values is followed by another.
//
// Block steps (block_steps.cpp) run the same loop. A block Krylov space of b random vectors holds b
// directions of each eigenspace, so its round runs only where the Ritz values show b copies of a
// wanted value (round_settings).
#include "core/driver/driver.hpp"

#include <algorithm>
#include <cmath>

namespace cudalanczos::detail {

Result Driver::thick_restart()
{
  begin_cycles();
  Result r;
  for (r.its = 1;; ++r.its) {
    its_ = r.its;
    const int start = t_.start;
    const int mc = extend_cycle(t_.exhausted); // where this cycle ends: m_, or earlier when a look allows
    RitzPairs rp = cycle_ritz_pairs(mc);
    const int newconv = leading_converged(rp);
    const int nconv = t_.locked + newconv;
    all_approximations(s_, t_.locked_theta, t_.locked_err, rp, t_.theta_all, t_.err_all);
    if (c_.monitor) c_.monitor(r.its, nconv, t_.theta_all.data(), t_.err_all.data(), mc);
    if (partial_blocked_ && !restarted_full_) {
      start_over_with_full_reorthogonalization(rp, mc);
      continue;
    }
    const bool fresh_cycle = verify_fresh_;
    CycleDecision d = decide_cycle_end(r, rp, t_.exhausted, nconv, newconv, mc - start);
    size_next_cycle(d, rp, newconv, fresh_cycle);
    if (!d.done && !d.inject) adapt_to_slow_convergence(rp, newconv, mc - start);
    const int keep = kept_pairs(d, rp.na, newconv);
    rotate_to_kept(b_, rp, t_.locked, mc, keep);
    if (d.done) return finish(r, rp, mc, nconv, keep);
    // Restart: the residual direction (or block) follows the kept vectors at column kcols; starting a
    // verification round, a fresh random vector (or block) orthogonal to the locked ones does.
    const int kcols = t_.locked + keep;
    const int lock = lock_converged(rp, mc, newconv, keep, d.inject);
    if (!d.inject) restart_from_residual(rp, mc, kcols, lock, keep);
    else if (!start_round(kcols)) { // the locked vectors span everything
      r.nconv = nconv;
      r.reason = Reason::Converged;
      return return_pairs(r, kcols);
    }
    t_.locked += lock;
    t_.start = kcols;
    after_restart(kcols);
  }
}

// The first cycle's state: no locked columns, the projected matrix zero; block steps orthonormalize
// their start block here (single vectors normalized theirs in run()).
void Driver::begin_cycles()
{
  m_ = s_.ncv; // this cycle's basis size: single vectors' grows (adapt_to_slow_convergence) when convergence is slow
  t_ = RestartState{};
  if (!blocks()) {
    S_.assign(static_cast<std::size_t>(lds_) * lds_, 0.0);
    s_off_ = 0;
    return;
  }
  blk_.H.assign(static_cast<std::size_t>(blk_.ld) * blk_.ld, Scalar(0));
  blk_.omega.begin_segment(0);
  t_.exhausted = !start_block();
}

// Where this cycle ends at the latest: the basis's m_ columns, and mpd columns past the locked ones
// (Settings::mpd), which bounds the projected problem's order.
int Driver::cycle_end() const { return std::min(m_, t_.locked + lds_); }

// Extends the basis from t_.start to cycle_end(); returns where the cycle ended.
int Driver::extend_cycle(bool &exhausted)
{
  if (blocks()) return extend_block_cycle(exhausted);
  exhausted = false;
  segment_start_ = t_.start;
  look_hint_ = 0;
  // (A verification round's random vector meets the locked vectors in every partial step's pass.)
  if (!partial_active()) return extend_full(t_.start, cycle_end(), exhausted, t_.beta);
  return extend_partial(t_.start, cycle_end(), exhausted, t_.beta);
}

// Whether the cycle may end after e columns, before m (see extend_full). A value better than the ones
// that converged may still surface in the rest of the cycle, and only the verification round would
// then look for it: without the verification, only once the solve has looked as far as plain thick
// restart's first convergence test (unverified_early_end_products). Two cases pay: the last missing
// wanted pairs have converged (k = 1 converges in a few steps where a cycle is ncv, and a restart one
// step short of tol would otherwise run a whole second cycle), and a verification round is complete or,
// in its first cycle, certified (verification_look). e = -1 asks whether to go in chunks at all.
bool Driver::end_early(int e)
{
  const bool may_end = s_.verify || matvecs_ >= unverified_early_end_products(s_, n_);
  const bool last_wanted = may_end && !t_.verifying && s_.nev - t_.locked <= 2;
  const int na = e - t_.locked;
  if (!t_.verifying && !last_wanted) return false;
  if (e < 0) return true;
  if (na < 2 || e >= cycle_end() || m_ >= n_) return false; // a cycle that can hold the whole space ends exact
  const RitzPairs rp = ritz_pairs(t_.locked, e, S(e - 1, e), false); // values and residuals only
  if (t_.verifying) return verification_look(rp, e);
  // Two digits beyond tol: a locked pair's residual is dropped from the projected matrix and so
  // limits every pair computed after it (the verification's), and a full cycle would usually have
  // taken it far below tol anyway. Without the verification no pair follows: one digit, for the
  // floor partial reorthogonalization puts under the residuals at the cycle's end.
  const double margin = s_.verify ? 1e-2 : 1e-1;
  int newconv = 0;
  while (newconv < na && rp.err[newconv] < margin * s_.tol) ++newconv;
  return t_.locked + newconv >= s_.nev;
}

// The Ritz pairs of the cycle's active block, columns t_.locked..e-1.
RitzPairs Driver::cycle_ritz_pairs(int e) { return blocks() ? block_ritz_pairs(t_.locked, e, true) : ritz_pairs(t_.locked, e, t_.beta); }

// The Ritz pairs of the active block S[locked:e, locked:e], with residuals |b y_last| (b: the coupling
// of column e-1 to the residual direction v_e).
RitzPairs Driver::ritz_pairs(int locked, int e, double b, bool vectors)
{
  const int na = e - locked;
  return projected_.time(na, [&] {
    std::vector<double> A(static_cast<std::size_t>(na) * na);
    for (int jj = 0; jj < na; ++jj)
      for (int ii = 0; ii < na; ++ii) A[ii + static_cast<std::size_t>(jj) * na] = S(locked + ii, locked + jj);
    // A look stays on the host (its tail rows, O(na^2)); a restart's vectors go where the backend is faster.
    return detail::ritz_pairs(s_, c_, na, std::move(A), 1, vectors, [&](const Scalar *y_last) { return std::abs(b * *y_last); },
                              vectors ? &b_ : nullptr);
  });
}

// The leading converged Ritz pairs of the active block (in the order of `which`, stopping at the first
// that is not). With a semi-orthogonal basis the true residual is only known down to about
// omega ||A||: claim no more. A wanted pair stopped by that floor switches the solve to full
// reorthogonalization (partial_blocked_): one that has reached it, or, as soon as it is seen, one whose
// value is so small against ||A|| that the floor itself misses tol (the smallest eigenvalues of a
// Laplacian; docs/tuning.md#core-partial-reorthogonalizations-residual-floor). Only the leading half of
// the active block stands for wanted pairs: with more pairs missing than a cycle holds (Settings::mpd),
// its far end holds Ritz values from the other side of the spectrum, near 0 for a spectrum around it,
// which no wanted pair is.
int Driver::leading_converged(RitzPairs &rp)
{
  const int wanted_positions = std::min(s_.nev - t_.locked, rp.na / 2);
  // (Block steps raised their Ritz pairs to the floor in block_ritz_pairs, which their looks share.)
  if (!blocks() && partial_active() && raise_to_partial_floor(s_, c_, rp, wanted_positions, anorm_)) partial_blocked_ = true;
  int newconv = 0;
  while (newconv < rp.na && rp.err[newconv] < s_.tol) ++newconv;
  return newconv;
}

// A wanted pair needs more orthogonality than partial reorthogonalization kept (partial_blocked_): the
// kept vectors carry that loss, so start over with full reorthogonalization from the sum of the current
// best Ritz vectors, which keeps most of the progress in one start vector.
void Driver::start_over_with_full_reorthogonalization(const RitzPairs &rp, int mc)
{
  if (blocks()) return start_blocks_over(rp, mc);
  restarted_full_ = true;
  const std::vector<Scalar> coef = sum_of_best_vectors(rp, t_.locked, s_.nev, mc);
  b_.combine(0, mc, coef.data(), m_ + 1);
  b_.copy_column(m_ + 1, 0);
  const double nrm2 = squared_norm(b_, 0);
  ++reductions_;
  b_.scale(0, 1.0 / std::sqrt(nrm2));
  std::fill(S_.begin(), S_.end(), 0.0);
  s_off_ = 0;
  t_.locked_theta.clear();
  t_.locked_err.clear();
  t_.locked_res.clear();
  pur_.clear();
  t_.locked = t_.start = 0;
  t_.verifying = false;
  t_.found = 0;
}

// Stop, start a verification round, or restart as usual (end_cycle); a round needs two steps past the
// converged pairs. `columns`: the columns this cycle added.
CycleDecision Driver::decide_cycle_end(Result &r, const RitzPairs &rp, bool exhausted, int nconv, int newconv, int columns)
{
  const int room = 2 * B_;
  const CycleEnd end = end_cycle(round_settings(r, rp, nconv), c_, r, exhausted, nconv, newconv, m_ - nconv >= room, verify_fresh_, rp,
                                 t_.locked_theta, anorm_, t_.verifying, t_.found, [&](double worst, double slack) {
                                   return first_cycle_certified(rp, columns, worst, slack);
                                 });
  if (matvecs_to_nev_ < 0 && nconv >= s_.nev) matvecs_to_nev_ = matvecs_; // what follows is verification
  CycleDecision d;
  d.done = end.done;
  d.inject = end.inject;
  d.keep_limit = cap_;
  verify_fresh_ = d.inject; // the next cycle is the Krylov space of the fresh vector (or block) alone
  if (d.inject) {
    t_.found = 0;
    if (m_ - nconv < room) d.done = true, r.reason = Reason::Converged, r.verification_cut = true; // no room left for a complement
  }
  return d;
}

// The settings the end of a cycle decides with. A block Krylov space of a random block of b vectors holds
// b directions of every eigenspace, so it finds every copy of an eigenvalue of multiplicity up to b
// without the verification (BlockSteps.FindEveryCopyOfATripleEigenvalueWithoutVerification). Only a
// wanted value that the Ritz values at hand show b times may have more copies than the block could see:
// then the round runs; otherwise these Ritz values certify it, and it costs no product (counted in
// Result::block_certified).
Settings Driver::round_settings(Result &r, const RitzPairs &rp, int nconv) const
{
  Settings s = s_;
  if (blocks() && s_.verify && !t_.verifying && !t_.exhausted && nconv >= s_.nev && !block_may_hide_copies(rp, t_.locked_theta))
    s.verify = false, ++r.block_certified;
  return s;
}

// A round's first cycle is certified (certified_complement): its active block spans the Krylov space of
// the fresh vector's complement, of dimension na for single vectors, and for blocks K_s(A, X), which
// contains K_s(A, x_1), for the s block steps it took.
bool Driver::first_cycle_certified(const RitzPairs &rp, int columns, double worst, double slack) const
{
  if (!blocks()) return complement_certified(rp.w, t_.locked, worst, slack);
  return certified_complement(s_, c_, rp.w, columns / B_, n_, t_.locked, worst, slack);
}

// A cycle that converged nothing and kept no round going: the basis may grow (BasisGrowth), and the
// restart fraction rise after a stall (RestartStall); `steps`: the steps the cycle took.
void Driver::adapt_to_slow_convergence(const RitzPairs &rp, int newconv, int steps)
{
  if (blocks()) return; // block steps keep their basis and restart fraction
  const int q = std::min(newconv, rp.na - 1); // the leading unconverged pair
  if (!t_.verifying) m_ = growth_.after_cycle(newconv, rp.err[q], steps, t_.locked, m_, cap_, s_.tol);
  if (!s_.restart_raise || restart_ >= 0.5) return;
  if (stall_.after_cycle(newconv, rp.err[q], rp.w[rp.order[q]], rp.res[q], t_.locked)) restart_ = 0.5, restart_raised_ = true;
}

// How many Ritz vectors of the active block to keep (driver_support's kept_pairs), with room for one more
// step (or block step) and within the decision's limit; the restart fraction is the solve's own (raised
// after a stall).
int Driver::kept_pairs(const CycleDecision &d, int na, int newconv) const
{
  const int missing = s_.nev - t_.locked;
  const int room = blocks() ? std::min(na, cycle_end() - B_ - t_.locked) : std::min(na - 1, d.keep_limit);
  return detail::kept_pairs(d.done, d.inject, na, newconv, missing, restart_keep(restart_, na - newconv, missing - newconv, mpd_bounds()),
                            room);
}

// Pairs are locked once their error is below this (lock_converged). Block steps lock two digits beyond
// where single vectors do: a locked pair's coupling is dropped from the projected matrix and its
// residual then adds to the true residual of every pair computed after it
// (docs/tuning.md#core-block-steps-lock-at-tol100); a pair converged to tol but not locked stays among
// the kept ones and keeps improving.
double Driver::lock_tolerance() const
{
  constexpr double kBlockLockFactor = 1e-2;
  return (blocks() ? kBlockLockFactor : 1.0) * s_.lock_margin * s_.tol;
}

// Newly converged pairs are locked once their error is below lock_tolerance() (all of them when a
// verification round starts; never more than the basis keeps); the others stay among the kept ones and
// keep improving. The projected matrix restarts past the locked columns, whose values t_.locked_theta
// keeps. Returns how many were locked.
int Driver::lock_converged(const RitzPairs &rp, int mc, int newconv, int keep, bool inject)
{
  const int lock = pairs_to_lock(rp, newconv, keep, lock_tolerance(), inject);
  record_locked(rp, lock, s_.shift, t_.locked_theta, t_.locked_err, t_.locked_res);
  if (blocks()) {
    restart_block_matrix(rp, lock, keep);
    return lock;
  }
  std::fill(S_.begin(), S_.end(), 0.0);
  pur_.keep(b_, mc, rp, t_.beta, 0, lock); // before column mc is overwritten
  s_off_ = t_.locked + lock;
  return lock;
}

// The residual direction v_mc becomes column kcols; the arrow couples it to the kept non-locked Ritz
// vectors (locked + lock .. kcols - 1). Block steps: the residual block moves, and its next step
// computes the arrow.
void Driver::restart_from_residual(const RitzPairs &rp, int mc, int kcols, int lock, int keep)
{
  if (blocks()) {
    for (int j = 0; j < B_; ++j) b_.copy_column(mc + j, kcols + j); // ascending: safe if they overlap
    return;
  }
  b_.copy_column(mc, kcols);
  if (partial_active()) reorthogonalize_restart_column(kcols);
  for (int q = lock; q < keep; ++q) {
    const int i = rp.order[q];
    S(t_.locked + q, t_.locked + q) = rp.w[i];
    S(t_.locked + q, kcols) = S(kcols, t_.locked + q) = t_.beta * real_part(rp.Y[(rp.na - 1) + static_cast<std::size_t>(i) * rp.na]);
  }
}

// A verification round starts from a fresh random vector (or block) at column kcols, orthonormal to the
// locked vectors; false when they span everything.
bool Driver::start_round(int kcols) { return blocks() ? start_round_block(kcols) : fresh_direction(kcols, kcols, false); }

// After a restart: a verification round keeps room for the complement in single vectors' cycle; block
// steps' omega recurrence begins a segment at the residual block.
void Driver::after_restart(int kcols)
{
  if (blocks()) blk_.omega.begin_segment(kcols);
  else if (t_.verifying) keep_room_for_complement();
}

// The solve ends after this cycle: the kept pairs are returned, with their proven residual bounds
// (Settings::exact_operator) and, for the purification, this cycle's residual direction. Partial block
// steps leave couplings to columns outside the window out of the projected matrix; the bound takes them
// in as a whole (partial_coupling_bound).
Result Driver::finish(Result &r, const RitzPairs &rp, int mc, int nconv, int keep)
{
  const int kcols = t_.locked + keep;
  r.nconv = std::min(nconv, kcols);
  if (s_.exact_operator) {
    const int basis = blocks() ? blk_.ld : m_;
    r.residual_bounds = residual_bounds(t_.locked_res, std::vector<double>(rp.res.begin(), rp.res.begin() + keep), anorm_, matvecs_, basis);
    if (blocks() && blk_.partial_steps > 0)
      for (double &bound : r.residual_bounds) bound += partial_coupling_bound(anorm_, basis);
  }
  pur_.keep(b_, mc, rp, t_.beta, 0, keep);
  return return_pairs(r, kcols);
}

// Columns 0..kcols-1 are returned: their values and errors, converged ones in the order of `which`.
Result Driver::return_pairs(Result &r, int kcols)
{
  r.eigenvalues.assign(t_.theta_all.begin(), t_.theta_all.begin() + kcols);
  r.errors.assign(t_.err_all.begin(), t_.err_all.begin() + kcols);
  pur_.fill(r, r.eigenvalues.size());
  sort_converged(b_, r, [&](double value) { return badness(s_, c_.eigenvalue(value)); });
  orthonormalize_returned(static_cast<int>(r.eigenvalues.size()));
  return r;
}

} // namespace cudalanczos::detail
