// What a solve takes and gives: the Settings, the Callbacks, the Result, and their enums. Shared by the
// driver (single-vector and block steps) and everything around it in src/core (which include this
// header, never lanczos_driver.hpp), and by the PETSc layer through lanczos_driver.hpp.
#pragma once

#include "core/backend.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cudalanczos {

enum class Variant {
  ThickRestart, ///< thick-restart Lanczos (Wu-Simon; symmetric Krylov-Schur) with locking
  Thesis        ///< the thesis: largest eigenpair, no restart, no reorthogonalization, explicit residual
};

enum class Reorthogonalization {
  Full,    ///< classical Gram-Schmidt against the whole basis, repeated once when ||w|| drops (DGKS)
  Partial, ///< Simon's partial reorthogonalization: the three-term recurrence while the estimated loss of
           ///< orthogonality (omega recurrence) stays below eps^(3/4), a full pass when it does not
  None     ///< three-term recurrence only (the thesis)
};

/// Which eigenvalues are wanted; "target" ones are measured from Settings::target.
enum class Which { LargestAlgebraic, SmallestAlgebraic, LargestMagnitude, SmallestMagnitude, TargetMagnitude, TargetReal };

const char *to_string(Variant);
const char *to_string(Reorthogonalization);

struct Settings {
  Variant variant = Variant::ThickRestart;
  Reorthogonalization reorthogonalization = Reorthogonalization::Full;
  Which which = Which::LargestMagnitude;
  double target = 0.0; ///< for TargetMagnitude / TargetReal (in the eigenvalues of A, before the shift)
  double shift = 0.0;  ///< the operator is A - shift I: reported eigenvalues are theta(A) - shift
  int nev = 1;         ///< wanted eigenpairs
  int ncv = 0;         ///< basis size (thick restart), or the most Lanczos steps (thesis)
  /// Thick restart: the basis may grow from ncv up to this many columns (at most the problem size) when
  /// a cycle converges nothing and its rate predicts many more such cycles (docs/algorithm.md); at or
  /// below ncv the basis stays at ncv. basis_columns_needed() allocates for it.
  int ncv_max = 0;
  /// Thick restart: the most columns a cycle holds past the locked ones, the order of its projected
  /// problem (SLEPc's mpd); 0: no bound but the basis. With thousands of wanted pairs a cycle of ncv
  /// columns would put an eigenproblem of order ncv on the host at every restart.
  int mpd = 0;
  /// Thick restart: vectors per Lanczos step. Above 1, the block variant (driver/block_steps.cpp): each step
  /// applies the operator to a block of this many vectors in one pass, which finds up to that many
  /// copies of an eigenvalue without the verification and costs fewer passes over A and the basis.
  int block_size = 1;
  double tol = 1e-8;   ///< convergence tolerance on the error returned by Callbacks::error
  int max_it = 100;    ///< restarts (thick restart) or Lanczos steps (thesis)
  std::uint64_t seed = 0x5eedULL; ///< random start and breakdown vectors
  bool initial_vector = false;    ///< basis column 0 already holds the caller's start vector
  /// Thick restart: once nev pairs converged, search the complement of the locked vectors from a fresh
  /// random vector for copies of multiple eigenvalues that a single Krylov space cannot see. The round
  /// ends when the complement's best Ritz value has converged on the unwanted side, or, for wanted
  /// values at an end of the spectrum, after one cycle when the Kuczynski-Wozniakowski bound says a
  /// missed copy is that improbable (below 1e-8). Off reproduces plain thick restart.
  bool verify = true;
  /// Callbacks::eigenvalue adds a constant (the default; SLEPc's STSHIFT). The wanted eigenvalues of
  /// LargestAlgebraic, SmallestAlgebraic and LargestMagnitude are then ends of the operator's spectrum,
  /// and a verification round may end on a probabilistic certificate (docs/algorithm.md).
  bool translation_map = true;
  /// The backend applies a fixed linear operator, exact up to rounding (an assembled matrix, or a direct
  /// solve with one; not an iterative inner solve or a user's shell). The true-residual check then takes
  /// each pair's proven bound (Result::residual_bounds) where that meets tol and computes only the others.
  bool exact_operator = true;
  /// An estimate of ||A||, the norm of the operator the backend applies (a factor of sqrt(n) either way
  /// is fine: only its binary exponent matters), or 0 when unknown: solve() then measures ||A v|| for a
  /// random unit v first (one product). An operator whose norm lies outside [2^-256, 2^256], where
  /// squared norms could underflow or overflow, is solved scaled by a power of two into [1/2, 1), and
  /// the results are scaled back (docs/algorithm.md, "Scaling into range").
  double norm_estimate = 0.0;
  /// Thick restart: a converged pair is locked (its coupling to the rest of the basis dropped) once its
  /// error is below lock_margin * tol; the block variant locks below lock_margin * tol / 100. A locked
  /// pair's dropped coupling adds to the true residual of every pair computed after it, so where the
  /// true-residual check at the end rejects pairs the solve goes on with a margin 100 times smaller.
  double lock_margin = 1.0;
  /// Thick restart: the fraction of the active block's unconverged Ritz vectors kept at a restart (the
  /// newly converged ones are always kept), at least one and never fewer than the wanted pairs still
  /// missing (detail::restart_keep); SLEPc's EPSKrylovSchurSetRestart, in [0.1, 0.9].
  /// Keeping more converges in fewer products, but every later step of the cycle orthogonalizes against
  /// the kept vectors: where a product costs a few vector passes, as on a GPU, that pass dominates a step.
  double restart = 0.5;
  /// Single-vector thick restart with restart below 0.5: where the leading unconverged error stops falling
  /// (four cycles without a converged pair or an error 0.1 % below the leading pair's lowest), the fraction
  /// rises to 0.5 for the rest of the solve (Result::restart_raised). For a fraction the solver chose rather
  /// than the user.
  bool restart_raise = false;
  /// Thick restart, single-vector steps: purify the returned converged vectors from the Lanczos relation,
  /// x <- A x / theta without a product (Ericsson & Ruhe 1980; Nour-Omid, Parlett, Ericsson & Jensen
  /// 1987; ARPACK's purification for shift-and-invert). For a Ritz vector x, A x = theta x + c u + the
  /// couplings locking dropped: u is the unit residual direction of the cycle in which x was locked or
  /// returned, c its coupling to it, and each locked x_i whose direction u_i x is not orthogonal to adds
  /// c_i (u_i^H x) x_i. Each u is kept in one of nev + 1 extra basis columns (basis_columns_needed), the
  /// u_i^H x take one reduction per vector, and x becomes that sum over theta, normalized. What this gives
  /// is SLEPc's EPSSetPurify for STSINVERT (A here its operator (A - sigma B)^-1 B): the range of the
  /// operator, which excludes what rounding put in B's null space. A pair this cannot purify (no column
  /// left, theta = 0, the block variant) is flagged in Result::purify_scale for the caller to purify
  /// with a product.
  bool purify = false;
};

/// What an interval solve has done so far (Callbacks::interval_progress).
struct IntervalProgress {
  bool counting = false;         ///< told first, once the degree is known: the count estimate is starting
  long count_products = 0;       ///< products with A the count estimate takes
  bool plan = false;             ///< the plan, told once before the filtered solves start
  int degree = 0;                ///< the filter's degree: products with A per filtered product
  double count_estimate = -1;    ///< eigenvalues in the window, estimated (-1: not estimated)
  double count_error = 0;        ///< its standard error
  int columns = 0;               ///< basis columns a filtered solve holds
  long first_cycle_products = 0; ///< products with A the first filtered cycle takes (degree x its steps)
  int chunk = 0;                 ///< the filtered solve under way (1, 2, ...)
  int restart = 0;               ///< its restart
  int found = 0;                 ///< filtered pairs converged so far: earlier solves' and this one's locked
  long products = 0;             ///< products with A so far
};

struct Callbacks {
  /// Error of a Ritz pair from its eigenvalue (as reported, i.e. minus the shift) and ||A x - theta x||
  /// for unit x. Default: relative, res / |theta|.
  std::function<double(double theta, double residual)> error;
  /// Called once per iteration with the current approximations (converged ones first).
  std::function<void(int its, int nconv, const double *theta, const double *errest, int count)> monitor;
  /// Returns true to stop now (a user stopping test).
  std::function<bool(int its, int nconv)> stop;
  /// The eigenvalue of the user's problem that a reported value stands for (SLEPc's STBackTransform);
  /// `which` orders these. Default: value + shift.
  std::function<double(double value)> eigenvalue;
  /// While set, the driver takes its steps one backend call at a time, with the same results, and
  /// calls this after each (block steps: after each block step, one call already) with the restart,
  /// the pairs locked and the products so far: progress inside
  /// cycles that take minutes (a narrow interval's filtered solves, thousands of products a step).
  std::function<void(int its, int locked, long matvecs)> tick;
  /// solve_interval's progress: its plan, once the filter and the count estimate are known, then, while
  /// `tick` is set, at every tick of its filtered solves (which `tick` itself does not see).
  std::function<void(const IntervalProgress &)> interval_progress;
};

/// Why a solve ended. ResidualCheck: the driver converged, but fewer than nev of its pairs passed the
/// check of their true residuals (Result::residual_rejected).
enum class Reason { Converged, MaxIterations, Breakdown, UserStop, ResidualCheck };
const char *to_string(Reason);

struct Result {
  Reason reason = Reason::MaxIterations;
  int nconv = 0;                   ///< converged eigenpairs (may exceed nev)
  int its = 0;                     ///< restarts (thick restart) or Lanczos steps (thesis)
  long matvecs = 0;                ///< operator applications
  long reductions = 0;             ///< global reductions (project/subtract calls)
  int breakdowns = 0;              ///< invariant subspaces found (beta ~ 0) and continued past
  std::vector<double> eigenvalues; ///< converged first, best first by `which`; reported = theta(A) - shift
  std::vector<double> errors;      ///< error estimate of each eigenvalue (Callbacks::error)
  double orthogonality = 0.0;      ///< max |V^T V - I| over the returned vectors
  long full_reorthogonalizations = 0; ///< steps that orthogonalized against the whole basis
  long discarded_steps = 0;        ///< partial reorthogonalization: steps run past one that needed a full pass
                                   ///< (redone; their products are in matvecs)
  long lookahead_discarded = 0;     ///< steps a backend ran ahead of a look that then ended the cycle (in
                                   ///< matvecs; 0 on the host backend, which runs queued steps only when asked)
  bool switched_to_full = false;   ///< partial reorthogonalization gave way to full (a wanted value out of its reach)
  bool restart_raised = false;     ///< the restart fraction rose to 0.5 after a stall (Settings::restart_raise)
  int certificates = 0;            ///< verification rounds ended by the probabilistic certificate
  /// A verification round was cut short (max_it, a user's stop, or no basis column left for the
  /// complement): nev pairs converged, but copies of the wanted values may be missing.
  bool verification_cut = false;
  int block_certified = 0;         ///< block steps: verifications the Ritz values made unnecessary (no wanted value
                                   ///< at hand as many times as the block has vectors)
  int ncv_used = 0;                ///< thick restart: basis columns of the last cycle (ncv, or more once grown)
  /// solve_to_threshold: the room for found pairs ran out before a value beyond the threshold converged
  /// (reason MaxIterations): more pairs may qualify.
  bool room_exhausted = false;
  /// solve_to_threshold: the eigenvalues beyond the threshold by the kernel polynomial method, which sized
  /// the room, and its standard error (-1: not estimated, under a spectral transformation).
  double count_estimate = -1, count_error = 0;
  // The projected problems (thick restart): the host's share of each restart, which Settings::mpd bounds.
  int projected_solves = 0;        ///< eigen-decompositions of a cycle's active block, looks inside a cycle included
  int projected_order = 0;         ///< the largest order among them
  double projected_seconds = 0.0;  ///< their wall time (the backend's, Backend::projected_eigen, included)
  int block_size = 1;              ///< vectors per step of the solve (1 where the block variant fell back)
  int scale_exponent = 0;          ///< the solve ran on 2^scale_exponent A (0: unscaled; Settings::norm_estimate)
  double norm_estimate = 0.0;      ///< the ||A|| estimate the scale was chosen from (given, or measured; 0: none)
  /// A proven upper bound on ||A x - theta x|| of each returned pair (aligned with `eigenvalues`; empty
  /// where the driver proves none): its Lanczos residual plus the couplings locking dropped plus
  /// rounding (detail::residual_bounds). check_residuals skips the product of a pair whose bound
  /// already meets tol.
  std::vector<double> residual_bounds;
  int residuals_checked = 0;       ///< converged pairs whose true residual ||A x - theta x|| was computed at the end
  int residuals_proven = 0;        ///< converged pairs whose residual bound met tol: no product at the end
  int residual_rejected = 0;       ///< of those, the ones that failed the convergence test: not counted in nconv
  int residual_retries = 0;        ///< times the solve went on after the check left fewer than nev (Settings::lock_margin)
  // Where the operator applications went (matvecs = matvecs_before_nev + matvecs_verification + matvecs_check):
  long matvecs_before_nev = 0;     ///< up to the end of the cycle in which nev pairs had converged (all, if they never did),
                                   ///< with the product of the norm estimate
  long matvecs_verification = 0;   ///< after that: the verification rounds (Settings::verify)
  long matvecs_check = 0;          ///< the true-residual check of the converged pairs
  long lookahead_dropped_steps = 0; ///< steps queued ahead of a look that then ended its cycle: a one-process device runs
                                    ///< them all (lookahead_discarded there); the host backend runs none of them
  long operator_passes = 0;        ///< operator applications counted as calls: a block of b products is one pass over A
  /// Settings::purify: for each returned vector (aligned with `eigenvalues`), the c / theta its
  /// purification added along its residual direction, 0 where that direction was exact (an invariant
  /// subspace), NaN where the driver did not purify it (the caller applies the operator instead); empty
  /// where nothing was purified (purify off, the block variant, the thesis variant).
  std::vector<double> purify_scale;
  int purified = 0;                ///< converged vectors purified from the Lanczos relation
  /// Internal: the first basis column of the kept residual directions (Settings::purify), -1: none.
  /// The true-residual check's products use the columns before it.
  int purify_base = -1;
  std::vector<int> purify_column;  ///< internal: the column of each returned vector's residual direction (-1: none)
  int purify_directions = 0;       ///< internal: residual directions kept, in columns purify_base on
};

} // namespace cudalanczos
