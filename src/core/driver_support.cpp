// The pieces both thick-restart drivers share (driver_support.hpp).
#include "core/driver_support.hpp"

#include "core/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

namespace cudalanczos {

namespace detail {

Callbacks with_defaults(Callbacks c, const Settings &s)
{
  if (!c.error) c.error = [](double theta, double res) { return theta != 0 ? res / std::abs(theta) : res; };
  if (!c.eigenvalue) c.eigenvalue = [shift = s.shift](double value) { return value + shift; };
  return c;
}

double badness(const Settings &s, double lambda)
{
  switch (s.which) {
  case Which::LargestAlgebraic: return -lambda;
  case Which::SmallestAlgebraic: return lambda;
  case Which::LargestMagnitude: return -std::abs(lambda);
  case Which::SmallestMagnitude: return std::abs(lambda);
  case Which::TargetMagnitude:
  case Which::TargetReal: return std::abs(lambda - s.target);
  }
  return 0;
}

void check_finite(double x, const char *what)
{
  if (!std::isfinite(x))
    throw Error(std::string("the operator produced a non-finite value (") + what +
                " is NaN or Inf): check the matrix for NaN/Inf entries");
}

// Kuczynski & Wozniakowski (SIAM J. Matrix Anal. Appl. 13(4), 1992, Thm 4.2): for B symmetric positive
// semidefinite of order n and a start uniform on the unit sphere, k Lanczos steps leave the largest
// Ritz value below (1 - e) lambda_max(B) with probability at most 1.648 sqrt(n) e^(-sqrt(e)(2k-1)).
// At each wanted end, B = +-(A - c I) with c beyond the complement's other end; a complement
// eigenvalue as good as the worst wanted one (within slack) would then have left the Ritz values that
// far behind only with that probability. The far end c is the extreme Ritz value one Ritz width
// further out (extreme Ritz values converge from both ends alike; a rigorous bound such as ||A||_1
// costs a pass over A and weakens e). Interior targets keep the convergence test.
bool certified_complement(const Settings &s, const Callbacks &c, const std::vector<double> &w, int k, index_t n,
                          int locked, double worst, double slack)
{
  if (!s.translation_map || w.size() < 2 || k < 1) return false;
  const bool top = s.which == Which::LargestAlgebraic || s.which == Which::LargestMagnitude;
  const bool bottom = s.which == Which::SmallestAlgebraic || s.which == Which::LargestMagnitude;
  if (!top && !bottom) return false;
  double hi = -std::numeric_limits<double>::infinity(), lo = -hi;
  for (double t : w) {
    const double lambda = c.eigenvalue(t - s.shift);
    hi = std::max(hi, lambda);
    lo = std::min(lo, lambda);
  }
  const double width = hi - lo;
  const double steps = static_cast<double>(k);
  const double dim = static_cast<double>(n - locked);
  // Probability bound that an eigenvalue at distance `threshold` from c hides behind a Ritz value at
  // distance `ritz` (both measured from c, on the same side).
  auto miss = [&](double ritz, double threshold) {
    if (!(ritz < threshold) || !(width > 0)) return 1.0;
    const double e = 1 - ritz / threshold;
    return 1.648 * std::sqrt(dim) * std::exp(-std::sqrt(e) * (2 * steps - 1));
  };
  // The wanted region in eigenvalues: LA lambda >= -worst - slack, SA lambda <= worst + slack,
  // LM |lambda| >= -worst - slack (badness() is -lambda, lambda, -|lambda|).
  double p = 0;
  if (s.which == Which::LargestAlgebraic) p = miss(2 * width, -worst - slack - (lo - width));
  if (s.which == Which::SmallestAlgebraic) p = miss(2 * width, (hi + width) - (worst + slack));
  if (s.which == Which::LargestMagnitude) {
    const double a = -worst - slack;
    p = miss(2 * width, a - (lo - width)) + miss(2 * width, (hi + width) + a);
  }
  return p <= kCertificateMissProbability;
}

void LockedResiduals::lock(const std::vector<double> &res, int count)
{
  const double before = std::sqrt(dropped2);
  for (int q = 0; q < count; ++q) bound.push_back(res[q] + before);
  for (int q = 0; q < count; ++q) dropped2 += res[q] * res[q];
}

std::vector<double> residual_bounds(const LockedResiduals &locked, const std::vector<double> &active, double anorm, long products,
                                    int basis)
{
  const double rounding = 64 * eps * anorm * std::sqrt(static_cast<double>(products + basis + 1));
  std::vector<double> bound;
  for (double b : locked.bound) bound.push_back(b + rounding);
  for (double r : active) bound.push_back(r + std::sqrt(locked.dropped2) + rounding);
  return bound;
}

namespace {
// How far down a semi-orthogonal basis knows a Ritz pair's residual: 16 omega_limit ||A||.
double partial_residual_floor(double anorm) { return 16 * omega_limit * anorm; }
} // namespace

double partial_coupling_bound(double anorm, int basis) { return partial_residual_floor(anorm) * basis / std::sqrt(2.0); }

bool raise_to_partial_floor(const Settings &s, const Callbacks &c, RitzPairs &rp, int wanted_positions, double anorm)
{
  const double floor = partial_residual_floor(anorm);
  for (int q = 0; q < rp.na; ++q) {
    const double value = rp.w[rp.order[q]] - s.shift;
    const bool out_of_reach = q < wanted_positions && c.error(value, floor) >= s.tol;
    rp.res[q] = std::max(rp.res[q], floor);
    rp.err[q] = c.error(value, rp.res[q]);
    if (out_of_reach) return true;
  }
  return false;
}

std::vector<Scalar> sum_of_best_vectors(const RitzPairs &rp, int locked, int nev, int columns)
{
  const int na = rp.na;
  std::vector<Scalar> coef(static_cast<std::size_t>(columns), Scalar(0));
  for (int i = 0; i < locked; ++i) coef[i] = 1.0;
  for (int q = 0; q < std::min(na, nev - locked); ++q)
    for (int i = 0; i < na; ++i) coef[locked + i] += rp.Y[i + static_cast<std::size_t>(rp.order[q]) * na];
  return coef;
}

void rotate_to_kept(BasisStorage &b, const RitzPairs &rp, int locked, int end, int keep)
{
  const int na = rp.na;
  std::vector<Scalar> Q(static_cast<std::size_t>(na) * keep);
  for (int q = 0; q < keep; ++q)
    std::copy_n(rp.Y.begin() + static_cast<std::ptrdiff_t>(rp.order[q]) * na, na, Q.begin() + static_cast<std::ptrdiff_t>(q) * na);
  b.rotate_from(locked, end - locked, keep, Q.data(), na);
}

int pairs_to_lock(const RitzPairs &rp, int newconv, int keep, double margin, bool all)
{
  int lockable = 0;
  while (lockable < newconv && rp.err[lockable] < margin) ++lockable;
  return std::min(all ? newconv : lockable, keep);
}

void record_locked(const RitzPairs &rp, int count, double shift, std::vector<double> &theta, std::vector<double> &err,
                   LockedResiduals &res)
{
  for (int q = 0; q < count; ++q) {
    theta.push_back(rp.w[rp.order[q]] - shift);
    err.push_back(rp.err[q]);
  }
  res.lock(rp.res, count);
}

void orthonormalize_in_order(BasisStorage &b, int k, long &reductions)
{
  std::vector<Scalar> h;
  for (int j = 0; j < k; ++j) {
    double nrm2 = 0;
    for (int pass = 0; pass < 2; ++pass) {
      h.assign(static_cast<std::size_t>(j) + 1, Scalar(0));
      b.project(0, j, j, h.data());
      nrm2 = b.subtract(0, j, h.data(), j);
      reductions += 2;
    }
    if (nrm2 > 0) b.scale(j, 1.0 / std::sqrt(nrm2));
  }
}

double orthogonality(BasisStorage &b, int k)
{
  double worst = 0;
  std::vector<Scalar> h(static_cast<std::size_t>(k) + 1);
  for (int j = 0; j < k; ++j) {
    b.project(0, j + 1, j, h.data());
    for (int i = 0; i <= j; ++i) worst = std::max(worst, std::abs(h[i] - Scalar(i == j ? 1.0 : 0.0)));
  }
  return worst;
}

void add_counts(Result &sum, const Result &r)
{
  sum.its += r.its;
  sum.matvecs += r.matvecs;
  sum.reductions += r.reductions;
  sum.breakdowns += r.breakdowns;
  sum.full_reorthogonalizations += r.full_reorthogonalizations;
  sum.discarded_steps += r.discarded_steps;
  sum.lookahead_discarded += r.lookahead_discarded;
  sum.certificates += r.certificates;
  sum.block_certified += r.block_certified;
  sum.lookahead_dropped_steps += r.lookahead_dropped_steps;
  sum.matvecs_before_nev += r.matvecs_before_nev;
  sum.matvecs_verification += r.matvecs_verification;
  sum.matvecs_check += r.matvecs_check;
  sum.operator_passes += r.operator_passes;
  sum.residuals_checked += r.residuals_checked;
  sum.residuals_proven += r.residuals_proven;
  sum.residual_rejected += r.residual_rejected;
  sum.projected_solves += r.projected_solves;
  sum.projected_order = std::max(sum.projected_order, r.projected_order);
  sum.projected_seconds += r.projected_seconds;
}

void sort_converged(BasisStorage &b, Result &r, const std::function<double(double)> &key)
{
  const int k = r.nconv;
  std::vector<int> perm(k);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int x, int y) { return key(r.eigenvalues[x]) < key(r.eigenvalues[y]); });
  bool identity = true;
  for (int i = 0; i < k; ++i) identity = identity && perm[i] == i;
  if (identity) return;
  std::vector<Scalar> P(static_cast<std::size_t>(k) * k, Scalar(0));
  const bool bounds = r.residual_bounds.size() >= static_cast<std::size_t>(k);
  const bool purify = r.purify_scale.size() >= static_cast<std::size_t>(k);
  std::vector<double> ev(k), er(k), bd(bounds ? k : 0), ps(purify ? k : 0);
  std::vector<int> pc(purify ? k : 0);
  for (int j = 0; j < k; ++j) {
    P[perm[j] + static_cast<std::size_t>(j) * k] = 1.0;
    ev[j] = r.eigenvalues[perm[j]];
    er[j] = r.errors[perm[j]];
    if (bounds) bd[j] = r.residual_bounds[perm[j]];
    if (purify) ps[j] = r.purify_scale[perm[j]], pc[j] = r.purify_column[perm[j]];
  }
  b.rotate(k, k, P.data(), k);
  std::copy(ev.begin(), ev.end(), r.eigenvalues.begin());
  std::copy(er.begin(), er.end(), r.errors.begin());
  std::copy(bd.begin(), bd.end(), r.residual_bounds.begin());
  std::copy(ps.begin(), ps.end(), r.purify_scale.begin());
  std::copy(pc.begin(), pc.end(), r.purify_column.begin());
}

std::vector<int> order_by_which(const Settings &s, const Callbacks &c, const std::vector<double> &theta)
{
  std::vector<double> key(theta.size());
  for (std::size_t i = 0; i < theta.size(); ++i) key[i] = badness(s, c.eigenvalue(theta[i] - s.shift));
  std::vector<int> idx(theta.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return key[a] < key[b]; });
  return idx;
}

namespace {
// What ritz_pairs and ritz_pairs_hermitian share after the eigensolver: the order and the residuals.
void order_and_residuals(const Settings &s, const Callbacks &c, int tail, RitzPairs &rp,
                         const std::function<double(const Scalar *y_tail)> &residual)
{
  const int na = rp.na;
  rp.order = order_by_which(s, c, rp.w);
  rp.res.resize(na);
  rp.err.resize(na);
  for (int q = 0; q < na; ++q) {
    const int i = rp.order[q];
    rp.res[q] = residual(rp.Y.data() + static_cast<std::size_t>(i) * rp.rows + (rp.rows - tail));
    rp.err[q] = c.error(rp.w[i] - s.shift, rp.res[q]);
  }
}
} // namespace

RitzPairs ritz_pairs_hermitian(const Settings &s, const Callbacks &c, int na, std::vector<Scalar> A, int tail, bool vectors,
                               const std::function<double(const Scalar *y_tail)> &residual, Backend *dense)
{
#if !(defined(CUDALANCZOS_USE_COMPLEX) && CUDALANCZOS_USE_COMPLEX)
  return ritz_pairs(s, c, na, std::move(A), tail, vectors, residual, dense);
#else
  {
    (void)dense; // Backend::projected_eigen is real symmetric
    if (tail < 0 || tail > na) throw Error("ritz_pairs: tail " + std::to_string(tail) + " outside 0.." + std::to_string(na));
    RitzPairs rp;
    rp.na = na;
    rp.rows = vectors ? na : tail;
    rp.Y.resize(static_cast<std::size_t>(rp.rows) * na);
    rp.w.resize(na);
    hermitian_eigen(na, A.data(), na, rp.w.data(), rp.Y.data(), std::max(rp.rows, 1), rp.rows);
    order_and_residuals(s, c, tail, rp, residual);
    return rp;
  }
#endif
}

RitzPairs ritz_pairs(const Settings &s, const Callbacks &c, int na, std::vector<double> A, int tail, bool vectors,
                     const std::function<double(const Scalar *y_tail)> &residual, Backend *dense)
{
  if (tail < 0 || tail > na) throw Error("ritz_pairs: tail " + std::to_string(tail) + " outside 0.." + std::to_string(na));
  RitzPairs rp;
  rp.na = na;
  rp.rows = vectors ? na : tail;
  rp.w.resize(na);
  // The backend's eigensolver gives whole vectors (na x na); the host's only the rows asked for.
  std::vector<double> Y(static_cast<std::size_t>(dense ? na : rp.rows) * na);
  const bool on_backend = dense && na > 0 && dense->projected_eigen(na, A.data(), na, rp.w.data(), Y.data(), na);
  if (!on_backend) symmetric_eigen(na, A.data(), na, rp.w.data(), Y.data(), std::max(rp.rows, 1), rp.rows);
  const int from = on_backend ? na - rp.rows : 0, ld = on_backend ? na : rp.rows; // where Y's kept rows start
#if !(defined(CUDALANCZOS_USE_COMPLEX) && CUDALANCZOS_USE_COMPLEX)
  if (from == 0 && ld == rp.rows) { // the rows kept are Y's first: no copy
    Y.resize(static_cast<std::size_t>(rp.rows) * na);
    rp.Y = std::move(Y);
    order_and_residuals(s, c, tail, rp, residual);
    return rp;
  }
#endif
  // Real eigenvectors (A is real symmetric), into the Scalars that rotate() and combine() take.
  rp.Y.resize(static_cast<std::size_t>(rp.rows) * na);
  for (int j = 0; j < na; ++j)
    for (int i = 0; i < rp.rows; ++i)
      rp.Y[i + static_cast<std::size_t>(j) * rp.rows] = Y[from + i + static_cast<std::size_t>(j) * ld];
  order_and_residuals(s, c, tail, rp, residual);
  return rp;
}

void wanted_edge(const Settings &s, const Callbacks &c, const std::vector<double> &locked_theta, double anorm, double &worst,
                 double &slack)
{
  std::vector<std::pair<double, double>> keys; // (key, eigenvalue)
  for (double t : locked_theta) {
    const double lambda = c.eigenvalue(t);
    keys.emplace_back(badness(s, lambda), lambda);
  }
  std::nth_element(keys.begin(), keys.begin() + (s.nev - 1), keys.end());
  worst = keys[s.nev - 1].first;
  // ||A|| is in the eigenvalues' units only when the map is a translation; otherwise (shift-and-invert:
  // sigma + 1/theta) the worst wanted eigenvalue itself gives the scale.
  slack = s.tol * std::max(std::abs(worst), s.translation_map ? anorm : std::abs(keys[s.nev - 1].second));
}

namespace {
/// badness() of the active block's q-th Ritz value in the order of `which`.
double ritz_key(const Settings &s, const Callbacks &c, const RitzPairs &rp, int q)
{
  return badness(s, c.eigenvalue(rp.w[rp.order[q]] - s.shift));
}
} // namespace

int copies_found(const Settings &s, const Callbacks &c, const RitzPairs &rp, int newconv, double worst, double slack)
{
  int found = 0;
  for (int q = 0; q < newconv; ++q)
    if (ritz_key(s, c, rp, q) <= worst + slack) ++found;
  return found;
}

bool round_complete(const Settings &s, const Callbacks &c, const RitzPairs &rp, int newconv, double worst, double slack)
{
  auto key = [&](int q) { return ritz_key(s, c, rp, q); };
  const bool settled = rp.err[0] <= std::sqrt(s.tol);
  return (newconv > 0 && key(newconv - 1) > worst + slack) || (newconv == 0 && settled && key(0) - rp.res[0] > worst + slack);
}

CycleEnd end_cycle(const Settings &s, const Callbacks &c, Result &r, bool exhausted, int nconv, int newconv, bool room,
                   bool fresh, const RitzPairs &rp, const std::vector<double> &locked_theta, double anorm, bool &verifying,
                   int &found, const std::function<bool(double, double)> &certified)
{
  CycleEnd e;
  const auto stop = [&](Reason why) { e.done = true, r.reason = why; };
  if (exhausted) {
    stop(nconv >= s.nev ? Reason::Converged : Reason::Breakdown);
  } else if (nconv >= s.nev && verifying) {
    // Wanted so far: the nev best locked values. The round ends when the best Ritz value of the
    // complement has converged and is worse than all of them.
    double worst = 0, slack = 0;
    wanted_edge(s, c, locked_theta, anorm, worst, slack);
    found += copies_found(s, c, rp, newconv, worst, slack);
    const bool complete = round_complete(s, c, rp, newconv, worst, slack);
    // The first cycle of a round is a plain Krylov space of a random vector: a probabilistic
    // certificate can end the round long before the complement's best Ritz value converges.
    const bool is_certified = fresh && found == 0 && certified(worst, slack);
    if (is_certified) ++r.certificates;
    if ((complete || is_certified) && found == 0) stop(Reason::Converged);
    else if (!room) stop(Reason::Converged), r.verification_cut = true;
    else if (complete) e.inject = true; // new wanted values turned up: look once more
    else if (r.its >= s.max_it || (c.stop && c.stop(r.its, nconv))) stop(Reason::Converged), r.verification_cut = true;
  } else if (nconv >= s.nev) {
    if (!s.verify || !room) stop(Reason::Converged);
    else verifying = e.inject = true;
  } else if (c.stop && c.stop(r.its, nconv)) {
    stop(Reason::UserStop);
  } else if (r.its >= s.max_it) {
    stop(Reason::MaxIterations);
  }
  return e;
}

void all_approximations(const Settings &s, const std::vector<double> &locked_theta, const std::vector<double> &locked_err,
                        const RitzPairs &rp, std::vector<double> &theta, std::vector<double> &err)
{
  theta.assign(locked_theta.begin(), locked_theta.end());
  err.assign(locked_err.begin(), locked_err.end());
  for (int q = 0; q < rp.na; ++q) {
    theta.push_back(rp.w[rp.order[q]] - s.shift);
    err.push_back(rp.err[q]);
  }
}

} // namespace detail

} // namespace cudalanczos
