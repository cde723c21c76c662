// The Lanczos driver: one class, its members defined by concept across this folder. Thick restart with
// locking runs one cycle loop whose step takes b >= 1 vectors (Settings::block_size); where single
// vectors (b = 1) and blocks differ, a member named for the difference says how.
//
//   driver.cpp                      set-up: validation, the start vector, what a solve reports
//   lanczos_steps.cpp               the single-vector step, and a cycle's expansion with full
//                                   reorthogonalization (chunks of Backend::expand, looks between them,
//                                   the look-ahead)
//   partial_reorthogonalization.cpp the single-vector expansion with partial reorthogonalization
//   omega_recurrence.hpp            Simon's estimate of the loss of orthogonality that partial watches
//   block_steps.cpp                 the block step: a block product, block Gram-Schmidt and SVQB
//   block_cycle.cpp                 a cycle of block steps: its looks, its projected matrix and Ritz pairs
//   thick_restart.cpp               thick restart with locking: the cycle loop and its steps
//   verification.cpp                the verification round: its looks, its certificate, its cycle length
//   slow_convergence.hpp            basis growth and the restart fraction's raise after a stall
//   unrestarted_lanczos.cpp         the thesis variant: Lanczos without restart, tridiagonal QR, explicit residual
//
// Private to src/core: solve() (lanczos_driver.cpp) runs it.
#pragma once

#include "core/block_omega.hpp"
#include "core/driver/omega_recurrence.hpp"
#include "core/driver/slow_convergence.hpp"
#include "core/driver_support.hpp"
#include "core/purification.hpp"
#include "core/solve_types.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace cudalanczos::detail {

/// Block steps: whether solve() takes blocks for these settings on a problem of n rows: block_size > 1
/// and room for ncv + block_size columns (a smaller problem takes single vectors, which end exact on a
/// space they exhaust).
bool block_variant_applies(const Settings &s, index_t n);

/// What a thick-restart solve carries from one cycle to the next.
struct RestartState {
  int locked = 0;         ///< columns 0..locked-1: converged, final
  int start = 0;          ///< first column whose step is still to be taken
  double beta = 0;        ///< single vectors: coupling of the last column to the residual direction v_m
  bool exhausted = false; ///< the basis spans the whole space (single vectors find it anew each cycle;
                          ///< a block start that died carries it into the first)
  bool verifying = false;
  int found = 0;          ///< wanted values found in the current verification round
  std::vector<double> locked_theta, locked_err; ///< the locked pairs' values (as reported) and errors
  LockedResiduals locked_res;                   ///< for the residual bounds
  std::vector<double> theta_all, err_all;       ///< the current approximations (all_approximations)
};

/// What the end of a cycle decided: stop, or start a verification round from a fresh vector (inject),
/// and the most columns a restart may keep past the locked ones.
struct CycleDecision {
  bool done = false;
  bool inject = false;
  int keep_limit = 0;
};

/// What block steps (b > 1) keep beside the cycle loop's state: the projected matrix as the block
/// Gram-Schmidt coefficients give it (Hermitian, banded plus the restart's arrow, kept dense), the block
/// omega recurrence of partial reorthogonalization, and the block's own seeds.
struct BlockSteps {
  BlockSteps(int b, int ncv) : b(b), ld(ncv + b), omega(ld, b) {}
  int b;                          ///< vectors per step
  int ld;                         ///< ncv + b: the projected matrix's order, with the residual block's coupling
  std::vector<Scalar> H;          ///< the projected matrix, ld x ld column-major
  BlockOmegaRecurrence omega;     ///< partial reorthogonalization's estimate, by blocks
  bool force_full = false;        ///< Simon's rule: the step after a full pass's trigger passes fully too
  long partial_steps = 0;         ///< block steps that passed over the window and the kept columns only
  int seeds = 0;                  ///< random columns drawn (each gets its own seed)
  /// The cycle's looks (block_ends_early): the next step end to look at, and the last look's end and
  /// how far its wanted pairs were from ending the cycle (0: no look yet this cycle).
  struct Looks {
    int next = 0, last = 0;
    double gap = 0;
  } looks;
};

/// Thick-restart Lanczos with locking, one vector or a block per step (or, Variant::Thesis, Lanczos
/// without restart) on a Backend.
class Driver {
public:
  /// `directions`: where Settings::purify keeps its residual directions (purification.hpp).
  Driver(Backend &b, const Settings &s, const Callbacks &c, ResidualDirections directions);

  /// Runs the chosen variant (Settings::variant) and fills in what it counted.
  Result run();

private:
  // driver.cpp: set-up.
  void validate() const;
  void validate_blocks() const;
  void start_vector();

  // lanczos_steps.cpp: the single-vector step and a cycle's expansion.
  double orthogonalize(int k, int col, std::vector<Scalar> &h, double &before, bool &lost);
  bool fresh_direction(int k, int col, bool breakdown = true);
  void step(int j, double beta_prev, bool full, double &alpha, double &beta, bool &exhausted);
  void finish_column(int col, double &beta, double norm, bool lost, bool &exhausted);
  void fresh_or_zero(int col, bool &exhausted);
  int extend_full(int start, int m, bool &exhausted, double &beta);
  void expand_steps(int j, int stop, int reach);
  int hinted(int j, int end) const;
  bool look_ahead(int stop, int next_stop, int reach, bool &queued);
  bool take_record(int jj, const StepRecord &rec, int m, double &beta, bool &exhausted);

  // partial_reorthogonalization.cpp: single-vector partial reorthogonalization.
  bool partial_active() const;
  int extend_partial(int start, int m, bool &exhausted, double &beta);
  void reorthogonalize_column(int t, int m, double &beta, bool &exhausted);
  void reorthogonalize_restart_column(int col);
  void orthonormalize_returned(int k);

  // block_steps.cpp: the block step (b > 1).
  using Matrix = std::vector<Scalar>; // column-major
  bool block_step(int c, int locked);
  bool orthonormalize_block(int k, int col, bool from_operator, Matrix &C, Matrix &R, std::vector<double> &before);
  bool partial_block_step(int k) const;
  void first_pass(int k, int col, int window, int next, Matrix &C, Matrix &G, std::vector<double> &before, Matrix &P);
  double dgks_passes(int count, int k, int col, int passes, Matrix &C, Matrix &G, const Matrix &projected);
  double range_pass(int first, int count, int ldc, int col, Matrix &C, Matrix &G, const Matrix &projected);
  void repeat_pass(int k, int col, Matrix &P, Matrix &G, Matrix &C, Matrix &R, std::vector<char> &dead);
  double largest_diagonal(const Matrix &G) const;
  void accumulate(const Matrix &P, int k, Matrix &C, int lo, int ldc) const;
  void gram_after(const Matrix &P, int k, Matrix &G) const;
  double svqb(Matrix G, double floor2, Matrix &M, Matrix &R, std::vector<char> &dead) const;
  bool fresh_column(int j, int end);
  std::uint64_t next_block_seed();
  bool start_block(bool given_start = false);
  bool start_round_block(int kcols);

  // block_cycle.cpp: a cycle of block steps, its looks and its projected matrix.
  int extend_block_cycle(bool &exhausted);
  bool block_ends_early(int locked, int e, bool verifying);
  void schedule_block_look(int e, double gap);
  bool block_may_hide_copies(const RitzPairs &rp, const std::vector<double> &locked_theta) const;
  RitzPairs block_ritz_pairs(int locked, int e, bool vectors);
  RitzPairs block_projected_pairs(int locked, int e, bool vectors);
  bool block_partial_floor() const;
  void restart_block_matrix(const RitzPairs &rp, int lock, int keep);
  void start_blocks_over(const RitzPairs &rp, int e);
  Scalar &H(int i, int j) { return blk_.H[i + static_cast<std::size_t>(j) * blk_.ld]; }
  Scalar H(int i, int j) const { return blk_.H[i + static_cast<std::size_t>(j) * blk_.ld]; }

  // thick_restart.cpp: thick restart with locking, the one cycle loop, and where the two steps differ.
  Result thick_restart();
  /// Whether a step takes a block of vectors (Settings::block_size > 1) rather than one.
  bool blocks() const { return B_ > 1; }
  void begin_cycles();
  int cycle_end() const;
  /// Whether Settings::mpd bounds the cycle below the basis (more pairs wanted than a cycle holds).
  bool mpd_bounds() const { return lds_ < cap_; }
  int extend_cycle(bool &exhausted);
  bool end_early(int e);
  RitzPairs cycle_ritz_pairs(int e);
  RitzPairs ritz_pairs(int locked, int e, double b, bool vectors = true);
  int leading_converged(RitzPairs &rp);
  void start_over_with_full_reorthogonalization(const RitzPairs &rp, int mc);
  CycleDecision decide_cycle_end(Result &r, const RitzPairs &rp, bool exhausted, int nconv, int newconv, int columns);
  Settings round_settings(Result &r, const RitzPairs &rp, int nconv) const;
  bool first_cycle_certified(const RitzPairs &rp, int columns, double worst, double slack) const;
  void adapt_to_slow_convergence(const RitzPairs &rp, int newconv, int steps);
  int kept_pairs(const CycleDecision &d, int na, int newconv) const;
  double lock_tolerance() const;
  int lock_converged(const RitzPairs &rp, int mc, int newconv, int keep, bool inject);
  void restart_from_residual(const RitzPairs &rp, int mc, int kcols, int lock, int keep);
  bool start_round(int kcols);
  void after_restart(int kcols);
  Result finish(Result &r, const RitzPairs &rp, int mc, int nconv, int keep);
  Result return_pairs(Result &r, int kcols);

  // verification.cpp: the verification round.
  bool verification_look(const RitzPairs &rp, int e);
  void size_next_cycle(CycleDecision &d, const RitzPairs &rp, int newconv, bool fresh_cycle);
  void keep_room_for_complement();
  int certificate_steps(const RitzPairs &rp, int newconv, const std::vector<double> &locked_theta, int locked_after) const;
  bool complement_certified(const std::vector<double> &w, int locked, double worst, double slack) const;

  // unrestarted_lanczos.cpp: the thesis variant.
  Result unrestarted_lanczos();
  double explicit_residual_error(int k, const double *z, double theta, double &xx);

  /// Single vectors: the projected matrix's active block: entry (i, j) of the basis's indices, i, j >=
  /// s_off_ (the locked columns' part is their values on the diagonal, in t_.locked_theta), column-major
  /// with leading dimension lds_ (the most columns a cycle holds past the locked ones).
  double &S(int i, int j) { return S_[(i - s_off_) + static_cast<std::size_t>(j - s_off_) * lds_]; }
  double S(int i, int j) const { return S_[(i - s_off_) + static_cast<std::size_t>(j - s_off_) * lds_]; }

  Backend &b_;
  Settings s_;
  Callbacks c_;
  index_t n_ = 0;
  int B_ = 1;   // vectors per step (Settings::block_size where block_variant_applies, else 1)
  int cap_ = 0; // thick restart: most basis columns (ncv, or ncv_max when single vectors' basis may grow)
  int m_ = 0;   // thick restart: basis columns of the current cycle, ncv <= m_ <= cap_
  double anorm_ = 0;                // running estimate of ||A||: max ||A v_j||
  std::vector<Scalar> h_;           // orthogonalization coefficients of the current step
  std::vector<StepRecord> records_; // what Backend::expand reports
  std::vector<double> S_;           // single vectors' projected matrix's active block, lds_ x lds_ column-major
  int lds_ = 0;                     //   its order: min(cap_, Settings::mpd)
  int s_off_ = 0;                   //   the basis column of its first row and column
  BlockSteps blk_;                  // block steps' own state (unused for single vectors)
  RestartState t_;                  // thick restart: what carries from cycle to cycle
  long matvecs_ = 0, reductions_ = 0;
  long passes_ = 0;                 // passes over the operator: one per product, or per block product
  int breakdowns_ = 0;
  int fresh_ = 0;                    // fresh random directions drawn (each gets its own seed)
  int chunk_ = 8;                    // extend_partial: steps per expand_partial call
  long discarded_ = 0;               // extend_partial: steps run past one that needed a full pass
  long lookahead_discarded_ = 0;     // look_ahead: queued steps a device ran before a look ended the cycle
  long lookahead_dropped_steps_ = 0; // look_ahead: queued steps dropped, whether a device ran them or not
  long matvecs_to_nev_ = -1;         // products when nev pairs had first converged (-1: not yet)
  int look_hint_ = 0;                // where a look predicted the cycle may end (0: nowhere); see hinted()
  int queued_end_ = 0;               // the end of the steps look_ahead queued
  long full_passes_ = 0;             // steps orthogonalized against the whole basis
  int its_ = 0;                      // thick restart: the cycle under way (Callbacks::tick)
  OmegaRecurrence omega_;            // single vectors' partial reorthogonalization: the loss of orthogonality
  int segment_start_ = 0;            // first step after the last restart
  bool partial_blocked_ = false;     // a wanted pair needs more than semi-orthogonality: full from now on
  bool restarted_full_ = false;      // the solve started over with full reorthogonalization
  bool verify_fresh_ = false;        // this cycle extends a fresh verification vector (or block) alone
  int m_resume_ = 0;                 // the cycle length to return to after a round's long first cycle
  double restart_ = 0.5;             // the restart fraction in effect (Settings::restart, raised on a stall)
  bool restart_raised_ = false;      //   whether a stall raised it
  RestartStall stall_;               // Settings::restart_raise
  BasisGrowth growth_;               // Settings::ncv_max
  ResidualDirections pur_;           // Settings::purify
  ProjectedTime projected_;          // the projected problems' count, largest order and host time
};

} // namespace cudalanczos::detail
