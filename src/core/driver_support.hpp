// What the driver (driver/) shares between single-vector and block steps and with the interval solve:
// the ordering key of `which`, the check for non-finite scalars, the verification's probabilistic
// certificate, and what the end of a cycle decides (end_cycle). Internal to src/core.
#pragma once

#include "core/backend.hpp"
#include "core/solve_types.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace cudalanczos::detail {

inline constexpr double eps = std::numeric_limits<double>::epsilon();

/// Partial reorthogonalization (single-vector and block steps) keeps |v_i^H v_j| below eps^(3/4) rather
/// than Simon's sqrt(eps): the Ritz vectors' true residuals are then good to about eps^(3/4) ||A||, which
/// relative tolerances down to 1e-8 on eigenvalues above 1e-4 ||A|| need
/// (docs/tuning.md#core-partial-reorthogonalizations-limit).
inline const double omega_limit = std::pow(eps, 0.75);

/// A verification round may end on a certificate whose chance of having missed a wanted eigenvalue is
/// at most this (certified_complement).
inline constexpr double kCertificateMissProbability = 1e-8;

/// The callbacks with Callbacks::error (relative: res / |theta|) and Callbacks::eigenvalue (value +
/// shift) filled in where the caller left them empty.
Callbacks with_defaults(Callbacks c, const Settings &s);

/// Ordering key for `which` on an eigenvalue of the user's problem: smaller is better.
double badness(const Settings &s, double lambda);

/// v_col^H v_col (one reduction): project() with no columns, its real part (the imaginary one is 0).
inline double squared_norm(BasisStorage &b, int col)
{
  Scalar q = 0;
  b.project(col, 0, col, &q);
  return real_part(q);
}

/// Without the verification, a cycle ends before its last column only once the solve has applied the
/// operator this many times: SLEPc's default ncv for nev (max(2 nev, nev + 15), at most n), the Krylov
/// space krylovschur's first convergence test looks at. Before that, a value better than the converged
/// ones could still surface in the rest of the cycle, and no verification round would look for it
/// afterwards; after it, the solve has looked at least as far as plain thick restart does.
inline long unverified_early_end_products(const Settings &s, index_t n)
{
  return static_cast<long>(std::min<index_t>(n, std::max(2 * s.nev, s.nev + 15)));
}

/// Throws Error naming `what` when x is NaN or Inf (the operator produced it).
void check_finite(double x, const char *what);
/// The same for both parts of a complex value.
inline void check_finite(const std::complex<double> &z, const char *what)
{
  check_finite(z.real(), what);
  check_finite(z.imag(), what);
}

/// Verification, first cycle of a round: `w` holds the Ritz values (of the operator, before the shift
/// is removed) of a Krylov space K_k(A, X) of the complement of `locked` vectors, X random (one vector,
/// or a block: K_k(A, X) contains K_k(A, x_1)). Whether the Kuczynski-Wozniakowski bound says that an
/// eigenvalue at least as good as `worst` (within `slack`) hides in the complement with probability
/// at most kCertificateMissProbability. Only for wanted values at an end of the spectrum and an
/// eigenvalue map that is a translation; false otherwise.
bool certified_complement(const Settings &s, const Callbacks &c, const std::vector<double> &w, int k,
                          index_t n, int locked, double worst, double slack);

/// Indices of the Ritz values theta (of the applied operator) sorted best first by `which`.
std::vector<int> order_by_which(const Settings &s, const Callbacks &c, const std::vector<double> &theta);

/// The Ritz pairs of an active block: values w, vectors Y (na x na, column i for w[i]), `order` (best
/// first by `which`) and, in that order, each pair's residual ||A x - theta x|| and its error
/// (Callbacks::error).
struct RitzPairs {
  int na = 0;
  int rows = 0; ///< rows of each vector in Y: na, or the last `tail` ones only (ritz_pairs)
  std::vector<double> w, res, err;
  std::vector<Scalar> Y; ///< Scalar, as rotate() and combine() take it (real values for a real symmetric A)
  std::vector<int> order;
};

/// The projected problems a thick-restart solve diagonalized (on the host, or by the backend): how many,
/// the largest order, the wall time (Result::projected_*).
struct ProjectedTime {
  int solves = 0, order = 0;
  double seconds = 0;
  /// solve() (one projected problem of order n), counted and timed.
  template <class Solve>
  RitzPairs time(int n, Solve &&solve)
  {
    const auto t0 = std::chrono::steady_clock::now();
    RitzPairs rp = solve();
    ++solves;
    order = n > order ? n : order;
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rp;
  }
  void report(Result &r) const
  {
    r.projected_solves = solves;
    r.projected_order = order;
    r.projected_seconds = seconds;
  }
};

/// Thick restart: how many Ritz vectors of the active block a restart keeps beyond the newly converged
/// ones: the fraction `restart` (Settings::restart) of the `unconverged` others rounded down (SLEPc's rule), but never
/// fewer than the `missing` wanted pairs that have not converged, and at least one. The drivers cap the
/// count by the room left. With `bounded` (Settings::mpd below the basis: more pairs wanted than a cycle
/// holds), the missing pairs keep at most half of the unconverged ones: keeping them all would leave a
/// cycle a handful of new steps, and the solve would restart every few products.
inline int restart_keep(double restart, int unconverged, int missing, bool bounded = false)
{
  if (bounded) missing = std::min(missing, unconverged / 2);
  return std::max({1, static_cast<int>(restart * unconverged), std::min(unconverged, missing)});
}

/// How many Ritz vectors of the active block (na of them, the newconv leading ones converged) a thick
/// restart keeps: when the solve ends, the converged ones or the `missing` wanted ones not yet locked,
/// whichever is more; when a verification round starts, the converged ones only (the complement starts
/// afresh); otherwise the converged plus `more` others (restart_keep), at most `room`, which each driver
/// sets to leave room for its next step.
inline int kept_pairs(bool done, bool round, int na, int newconv, int missing, int more, int room)
{
  if (done) return std::min(na, std::max(newconv, missing));
  if (round) return newconv;
  return std::min(room, newconv + more);
}

/// Diagonalizes the real symmetric active block A (na x na, column-major: single-vector steps'
/// tridiagonal/arrowhead matrix, real in either build); `residual` gives a pair's
/// residual norm from the last `tail` entries of its vector y (all a residual estimate reads: beta
/// y_last, or R times the last block). With vectors, Y holds the whole vectors (na x na); without, only
/// their last `tail` rows (tail x na), which costs O(na^2 tail) instead of O(na^3): for the looks
/// inside a cycle, which need the values and the residuals only. `dense` (the solve's backend), where
/// given, solves it whole where it offers a faster eigensolver for this order (Backend::projected_eigen);
/// without vectors only the tail rows are then kept. Either way the values and the tail rows are the
/// bits the whole decomposition on the same side gives.
RitzPairs ritz_pairs(const Settings &s, const Callbacks &c, int na, std::vector<double> A, int tail, bool vectors,
                     const std::function<double(const Scalar *y_tail)> &residual, Backend *dense = nullptr);

/// The same for a Hermitian A of Scalars (block steps' projected matrix, whose blocks are complex
/// in the complex build: hermitian_eigen on the host there; in the real build ritz_pairs, `dense`
/// included).
RitzPairs ritz_pairs_hermitian(const Settings &s, const Callbacks &c, int na, std::vector<Scalar> A, int tail, bool vectors,
                               const std::function<double(const Scalar *y_tail)> &residual, Backend *dense = nullptr);

/// The worst wanted value so far (key of the nev-th best locked value) and the slack within which a
/// complement value counts as a copy of it: what a verification round compares with.
void wanted_edge(const Settings &s, const Callbacks &c, const std::vector<double> &locked_theta, double anorm, double &worst,
                 double &slack);

/// How many of the `newconv` leading converged Ritz values of a verification round count as wanted
/// (copies of wanted eigenvalues): no worse than the worst wanted value, within slack (wanted_edge).
int copies_found(const Settings &s, const Callbacks &c, const RitzPairs &rp, int newconv, double worst, double slack);

/// A verification round is complete when the best Ritz value of the complement has settled on an
/// eigenvalue (error below sqrt(tol): the verification needs to know where it is, not to tol) and its
/// residual interval [theta - r, theta + r] lies entirely on the unwanted side; or when a converged
/// one (of the newconv leading converged) is worse than every wanted value. A Ritz value that has not
/// settled says nothing: a copy of a wanted eigenvalue may still be on its way (small active spaces,
/// clustered spectra).
bool round_complete(const Settings &s, const Callbacks &c, const RitzPairs &rp, int newconv, double worst, double slack);

/// What the end of a thick-restart cycle decides: stop (Result::reason says why), or start the next
/// cycle from a fresh random vector (a verification round begins or goes on), or neither (restart as
/// usual).
struct CycleEnd {
  bool done = false;
  bool inject = false;
};

/// The end of a cycle, as the driver decides it for single vectors and blocks. Stop on exhaustion; at
/// nev converged pairs when the verification is off; when a verification round is complete
/// (round_complete) or, in its first cycle (`fresh`), certified by `certified(worst, slack)`, and
/// found no new wanted value; at max_it or the user's stop. A round that found wanted values (copies)
/// is followed by another. `room`: the basis can hold a complement past the nconv converged pairs
/// (two more steps, or two blocks). Updates `verifying`, `found` (wanted values the current round
/// turned up), r.reason and r.certificates.
CycleEnd end_cycle(const Settings &s, const Callbacks &c, Result &r, bool exhausted, int nconv, int newconv, bool room,
                   bool fresh, const RitzPairs &rp, const std::vector<double> &locked_theta, double anorm, bool &verifying,
                   int &found, const std::function<bool(double worst, double slack)> &certified);

/// The current approximations for the monitor and the result: the locked values and errors, then the
/// active block's in the order of `which`.
void all_approximations(const Settings &s, const std::vector<double> &locked_theta, const std::vector<double> &locked_err,
                        const RitzPairs &rp, std::vector<double> &theta, std::vector<double> &err);

/// Upper bounds on the true residuals ||A x - theta x|| of the returned pairs, from the Lanczos relation
/// A V = V S + f e^T + E of a thick-restart solve. A pair's own Lanczos residual (|beta y_last|, or
/// ||R y_last||: the f term) is exact in it; E holds what locking dropped and rounding. Locking drops a
/// locked pair's coupling to the basis from S (it is that pair's residual r_i), so a Ritz vector x
/// computed after that carries sum_i x_i (r_i^H x) more, at most sqrt(sum_i ||r_i||^2) over the pairs
/// locked before it; a locked pair's vector is final, so pairs locked after it do not touch its residual.
/// The drivers keep, per locked pair, its residual plus that sum at its locking (LockedResiduals);
/// `active` holds the Lanczos residuals of the returned pairs that were not locked, which every drop
/// reached. Rounding adds at most 64 eps ||A|| sqrt(products + basis) (full reorthogonalization drops
/// only rounding-level coefficients; partial reorthogonalization's larger ones are already in the
/// residuals, raised to its residual floor). Only for an operator applied exactly to rounding
/// (Settings::exact_operator): an inexact one (an iterative inner solve) is outside the relation and keeps
/// the product check. Returns the locked pairs'
/// bounds, then the active ones', in the order given.
struct LockedResiduals {
  std::vector<double> bound; ///< per locked pair: its residual + sqrt(dropped2 when it was locked)
  double dropped2 = 0;       ///< sum of the squared residuals of the pairs locked so far
  /// Records the pairs locked at one restart (their residuals `res`, in locking order): each is bounded by
  /// the drops of earlier restarts only.
  void lock(const std::vector<double> &res, int count);
  void clear() { bound.clear(), dropped2 = 0; }
};
std::vector<double> residual_bounds(const LockedResiduals &locked, const std::vector<double> &active, double anorm, long products,
                                    int basis);

/// What the couplings that partial block steps leave out of the projected matrix can add to a Ritz pair's
/// true residual, in a basis of `basis` columns: the omega recurrence keeps each below 16 omega_limit ||A||
/// (the floor of raise_to_partial_floor), and the residual grows by at most the norm of the matrix they
/// form, whose Frobenius norm over at most basis^2 / 2 entries bounds it.
double partial_coupling_bound(double anorm, int basis);

/// max |V^H V - I| over the basis's first k columns (k reductions; once per solve).
double orthogonality(BasisStorage &b, int k);

/// With a semi-orthogonal basis (partial reorthogonalization) the true residual of a Ritz pair is only
/// known down to about omega_limit ||A||: each pair's residual is raised to 16 omega_limit ||A|| and its
/// error with it, in the order of `which`. Returns true at the first of the leading `wanted_positions` whose
/// value is so small against ||A|| that the floor itself misses tol, after raising that one and leaving the
/// rest as they were: the caller then gives partial reorthogonalization up.
bool raise_to_partial_floor(const Settings &s, const Callbacks &c, RitzPairs &rp, int wanted_positions, double anorm);

/// The coefficients over basis columns 0..columns-1 of the sum of the `locked` locked vectors and the best
/// nev - locked Ritz vectors of the active block (rp, from column `locked`): a start vector that keeps most
/// of a solve's progress when it starts over.
std::vector<Scalar> sum_of_best_vectors(const RitzPairs &rp, int locked, int nev, int columns);

/// A thick restart's rotation to the kept Ritz vectors: V[:, locked:locked+keep] = V[:, locked:end]
/// Y(:, order[0:keep]) (rp of the active block locked..end-1); the locked columns stay.
void rotate_to_kept(BasisStorage &b, const RitzPairs &rp, int locked, int end, int keep);

/// The pairs a restart locks: of the newconv leading converged ones (in the order of `which`), those whose
/// error is below `margin`, all newconv when a verification round starts (`all`), never more than `keep`.
int pairs_to_lock(const RitzPairs &rp, int newconv, int keep, double margin, bool all);

/// Records `count` newly locked pairs (the leading ones of rp): values without the shift, errors, and
/// their residuals for the residual bounds.
void record_locked(const RitzPairs &rp, int count, double shift, std::vector<double> &theta, std::vector<double> &err,
                   LockedResiduals &res);

/// Columns 0..k-1 made orthonormal in order by two classical Gram-Schmidt passes each: what partial
/// reorthogonalization left of their loss of orthogonality (about omega_limit) is taken out, each column
/// moving by about that much. Adds its reductions (4 a column) to `reductions`.
void orthonormalize_in_order(BasisStorage &b, int k, long &reductions);

/// r's counts (iterations, products by part, reductions, passes, checks) added to sum's: a run that
/// continued another (solve's second run after the residual check, an interval solve's chunks).
void add_counts(Result &sum, const Result &r);

/// Puts the converged pairs (basis columns 0..r.nconv-1, with r's eigenvalues and errors) in the order
/// of `key` (smaller first): locking and verification rounds append them in the order they converged.
void sort_converged(BasisStorage &b, Result &r, const std::function<double(double)> &key);

} // namespace cudalanczos::detail
