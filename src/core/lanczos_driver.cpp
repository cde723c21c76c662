#include "core/lanczos_driver.hpp"

#include "core/block_lanczos.hpp"
#include "core/driver_support.hpp"
#include "core/scaling.hpp"
#include "core/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

namespace cudalanczos {

const char *to_string(Variant v)
{
  return v == Variant::Thesis ? "thesis" : "thick-restart";
}

const char *to_string(Reorthogonalization r)
{
  switch (r) {
  case Reorthogonalization::Full: return "full";
  case Reorthogonalization::Partial: return "partial";
  case Reorthogonalization::None: return "none";
  }
  return "?";
}

const char *to_string(Reason r)
{
  switch (r) {
  case Reason::Converged: return "converged";
  case Reason::MaxIterations: return "maximum iterations";
  case Reason::Breakdown: return "breakdown";
  case Reason::UserStop: return "stopped by user";
  case Reason::ResidualCheck: return "true residual check";
  }
  return "?";
}

int basis_columns_needed(const Settings &s)
{
  // ncv Lanczos vectors (ncv_max, if the basis may grow), the next one (residual direction), and two
  // work columns (x and A x for the explicit residual of the thesis variant, and the orthogonality check).
  // The block variant: ncv columns and the residual block.
  const int most = s.variant == Variant::ThickRestart ? std::max(s.ncv, s.ncv_max) : s.ncv;
  const int block = s.variant == Variant::ThickRestart && s.block_size > 1 ? s.ncv + s.block_size : 0;
  return std::max(most + 3, block) + purify_columns(s);
}

int purify_columns(const Settings &s)
{
  // Settings::purify: one residual direction per restart that locks, and the last cycle's.
  return s.purify && s.variant == Variant::ThickRestart && s.block_size <= 1 ? s.nev + 1 : 0;
}


namespace {

using detail::all_approximations;
using detail::badness;
using detail::CycleEnd;
using detail::end_cycle;
using detail::RitzPairs;
using detail::round_complete;
using detail::wanted_edge;
using detail::check_finite;
using detail::copies_found;
using detail::eps;
constexpr double dgks_eta2 = kDgksEta2; // DGKS: a second Gram-Schmidt pass below 1/sqrt(2) of the norm
// grow_basis: the basis grows when tol is predicted more than this many cycles away.
constexpr double kGrowthCycles = 10;
// raise_restart_on_stall: a stall is this many cycles without a converged pair, each leaving the leading
// error above (1 - kStallProgress) times its lowest.
constexpr int kStallCycles = 4;
constexpr double kStallProgress = 1e-3;
// Partial reorthogonalization keeps |v_i^T v_j| below eps^(3/4) rather than Simon's sqrt(eps): the Ritz
// vectors' true residuals are then good to ~eps^(3/4) ||A||, which relative tolerances down to 1e-8 on
// eigenvalues above 1e-4 ||A|| need (sqrt(eps) ||A|| was seen to miss tol 1e-10 on small eigenvalues).
const double omega_limit = std::pow(eps, 0.75);

class Driver {
public:
  Driver(Backend &b, const Settings &s, const Callbacks &c) : b_(b), s_(s), c_(detail::with_defaults(c, s))
  {
    n_ = b_.global_size();
    m_ = s_.ncv;
    restart_ = s_.restart;
    pur_slots_ = purify_columns(s_);
    pur_base_ = basis_columns_needed(s_) - pur_slots_;
    pur_slots_ = std::max(0, std::min(pur_slots_, b_.basis_columns() - pur_base_)); // a caller's smaller basis: fewer
    cap_ = s_.variant == Variant::ThickRestart ? static_cast<int>(std::max<index_t>(s_.ncv, std::min<index_t>(s_.ncv_max, n_))) : s_.ncv;
  }

  Result run()
  {
    validate();
    start_vector();
    Result r = s_.variant == Variant::Thesis ? thesis() : thick_restart();
    r.matvecs = matvecs_;
    r.reductions = reductions_;
    r.breakdowns = breakdowns_;
    r.orthogonality = detail::orthogonality(b_, static_cast<int>(r.eigenvalues.size()));
    r.full_reorthogonalizations = full_passes_;
    r.discarded_steps = discarded_;
    r.lookahead_discarded = lookahead_discarded_;
    r.lookahead_dropped_steps = lookahead_dropped_steps_;
    r.matvecs_before_nev = matvecs_to_nev_ >= 0 ? matvecs_to_nev_ : matvecs_;
    r.matvecs_verification = matvecs_ - r.matvecs_before_nev;
    r.operator_passes = matvecs_; // one vector per product
    r.switched_to_full = restarted_full_;
    r.restart_raised = restart_raised_;
    r.ncv_used = m_;
    return r;
  }

private:
  void validate() const
  {
    if (n_ <= 0) throw Error("the operator has no rows");
    if (s_.nev < 1) throw Error("nev must be at least 1");
    if (s_.ncv < 1) throw Error("ncv must be at least 1");
    if (s_.ncv > n_) throw Error("ncv (" + std::to_string(s_.ncv) + ") exceeds the problem size (" + std::to_string(n_) + ")");
    if (s_.variant == Variant::ThickRestart && s_.nev > s_.ncv)
      throw Error("ncv (" + std::to_string(s_.ncv) + ") must be at least nev (" + std::to_string(s_.nev) + ")");
    if (s_.variant == Variant::Thesis && s_.reorthogonalization == Reorthogonalization::Partial)
      throw Error("the thesis variant has no reorthogonalization; partial reorthogonalization needs the thick-restart variant");
    if (s_.variant == Variant::Thesis && s_.nev != 1)
      throw Error("the thesis variant computes one eigenpair; use the thick-restart variant for nev > 1");
    if (!(s_.tol > 0)) throw Error("tol must be positive");
    if (s_.max_it < 1) throw Error("max_it must be at least 1");
    if (!(s_.lock_margin > 0 && s_.lock_margin <= 1)) throw Error("lock_margin must lie in (0, 1]");
    if (b_.basis_columns() < cap_ + 3) throw Error("the backend's basis is too small for ncv");
  }

  // Column 0: the caller's start vector, or a random one; normalized.
  void start_vector()
  {
    if (!s_.initial_vector) b_.set_random(0, s_.seed);
    // The caller's vector may have entries of any size: its squared norm taken in range (exact powers of
    // two), so that a tiny one is not mistaken for zero nor a huge one for Inf.
    int t = 0;
    double nrm2 = detail::squared_norm_in_range(b_, 0, t, reductions_);
    check_finite(nrm2, "the start vector's norm");
    if (nrm2 == 0) { // a zero initial vector carries no information: fall back to a random one
      b_.set_random(0, s_.seed);
      nrm2 = detail::squared_norm(b_, 0);
      ++reductions_;
    }
    b_.scale(0, 1.0 / std::sqrt(nrm2));
  }

  // Orthogonalizes column `col` against columns 0..k-1 by classical Gram-Schmidt, a second pass when
  // the first lost too much (DGKS). h[0..k-1] receives the total coefficients. Returns ||w||^2 after and
  // sets `before` to ||w||^2 before. `lost` is set when even the second pass lost more than eta: the
  // vector is numerically inside the span.
  double orthogonalize(int k, int col, std::vector<Scalar> &h, double &before, bool &lost)
  {
    h.assign(k + 1, Scalar(0));
    b_.project(0, k, col, h.data());
    ++reductions_;
    before = real_part(h[k]);
    check_finite(before, "||A v||");
    double after = b_.subtract(0, k, h.data(), col);
    ++reductions_;
    lost = false;
    if (after < dgks_eta2 * before) {
      std::vector<Scalar> h2(k + 1);
      b_.project(0, k, col, h2.data());
      ++reductions_;
      const double again = b_.subtract(0, k, h2.data(), col);
      ++reductions_;
      for (int i = 0; i < k; ++i) h[i] += h2[i];
      lost = again < dgks_eta2 * after;
      after = again;
    }
    return after;
  }

  // Breakdown: column `col` is replaced by a random unit vector orthogonal to columns 0..k-1. Returns
  // false when no such vector exists numerically (the basis spans the whole space).
  bool fresh_direction(int k, int col, bool breakdown = true)
  {
    if (breakdown) ++breakdowns_;
    ++fresh_;
    std::vector<Scalar> h;
    for (int attempt = 0; attempt < 3; ++attempt) {
      b_.set_random(col, s_.seed + 0x9e37ULL * static_cast<std::uint64_t>(fresh_ * 3 + attempt + 1));
      double before = 0;
      bool lost = false;
      const double after = orthogonalize(k, col, h, before, lost);
      if (!lost && after > 0) {
        b_.scale(col, 1.0 / std::sqrt(after));
        return true;
      }
    }
    return false;
  }

  // The Lanczos step j of the thesis variant: w = A v_j into column j+1, orthogonalized (full, or the
  // three-term recurrence alone); returns alpha_j and beta_j (beta_j = 0 on breakdown, column j+1 then
  // holds a fresh orthogonal direction or zero).
  // With full reorthogonalization, coefficients other than alpha_j are rounding-level corrections and
  // are discarded (the projected matrix stays tridiagonal / arrowhead).
  void step(int j, double beta_prev, bool full, double &alpha, double &beta, bool &exhausted)
  {
    b_.apply_operator(j, j + 1);
    ++matvecs_;
    exhausted = false;
    double before = 0, after = 0;
    bool lost = false;
    if (full) {
      after = orthogonalize(j + 1, j + 1, h_, before, lost);
      alpha = real_part(h_[j]); // v_j^H A v_j: real for a Hermitian operator, up to rounding
      ++full_passes_;
    } else {
      // Algorithm 2, lines 4-6: alpha = v_j^T A v_j; r = A v_j - alpha v_j - beta_{j-1} v_{j-1}.
      Scalar p[2];
      b_.project(j, 1, j + 1, p);
      ++reductions_;
      alpha = real_part(p[0]);
      before = real_part(p[1]);
      check_finite(before, "||A v||");
      if (j > 0) {
        const Scalar coef[2] = {beta_prev, alpha};
        after = b_.subtract(j - 1, 2, coef, j + 1);
      } else {
        const Scalar coef = alpha;
        after = b_.subtract(j, 1, &coef, j + 1);
      }
      ++reductions_;
    }
    check_finite(alpha, "alpha");
    check_finite(after, "beta");
    anorm_ = std::max({anorm_, std::sqrt(before), std::abs(alpha)});
    beta = std::sqrt(after);
    finish_column(j + 1, beta, beta, lost, exhausted);
  }

  // The end of a step whose new vector, column col, has norm `norm` and coupling `beta` after its
  // orthogonalization. Invariant subspace (DGKS found it inside the span, or beta is at rounding level
  // relative to ||A||): beta = 0 and the column becomes a fresh direction (fresh_or_zero); otherwise
  // it is normalized.
  void finish_column(int col, double &beta, double norm, bool lost, bool &exhausted)
  {
    if (lost || beta <= 16 * eps * anorm_ * std::sqrt(static_cast<double>(col + 1))) {
      beta = 0;
      fresh_or_zero(col, exhausted);
    } else {
      b_.scale(col, 1.0 / norm);
    }
  }

  // After a breakdown: column col becomes a fresh random direction orthogonal to the basis before it, or
  // zero when there is none (the space is exhausted).
  void fresh_or_zero(int col, bool &exhausted)
  {
    if (!fresh_direction(col, col)) {
      b_.scale(col, 0.0);
      exhausted = true;
    }
  }

  // Steps start..m-1 with full reorthogonalization, as Backend::expand calls: one, and one more after
  // each breakdown (a fresh direction, then the steps continue from there). The records fill the
  // projected matrix S; `beta` receives the last one (the coupling to the residual direction). Where
  // end_early might end the cycle, the steps go in growing chunks (2, 2, 2, 3, 4, ... steps: one host
  // wait each) and end_early(e) is asked after each; returns the cycle's end e (m, or earlier).
  int extend_full(int start, int m, bool &exhausted, double &beta, const std::function<bool(int)> &end_early)
  {
    records_.resize(static_cast<std::size_t>(m));
    exhausted = false;
    const bool looks = end_early(-1); // -1: "may this cycle end early at all?"
    const auto chunk_end = [&](int j) { return looks ? hinted(j, std::min(m, j + std::max(2, (j - start) / 3))) : m; };
    bool queued = false; // the steps from j were queued before the last look (look_ahead)
    for (int j = start; j < m;) {
      const int stop = queued ? queued_end_ : chunk_end(j); // a look after the queue may have moved the hint
      if (queued) b_.collect_steps(records_.data());
      else b_.expand(j, stop, anorm_, records_.data());
      queued = false;
      matvecs_ += stop - j;
      full_passes_ += stop - j;
      int next = stop;
      for (int jj = j; jj < stop; ++jj) {
        if (take_record(jj, records_[static_cast<std::size_t>(jj - j)], m, beta, exhausted)) {
          if (exhausted) return m; // the cycle's analysis sees the rest of S as zero, as before the chunks
          next = jj + 1;           // the later records ran on v_{jj+1} = 0: discard them
          break;
        }
      }
      if (next == stop && looks && stop < m) {
        if (look_ahead(stop, chunk_end(stop), -1, end_early, queued)) return stop;
      }
      j = next;
    }
    return m;
  }

  // The end of a chunk from j that would end at `end`: earlier where a look predicted the step at which
  // the cycle may end (look_hint_, the verification's certificate).
  int hinted(int j, int end) const { return look_hint_ > j && look_hint_ < end ? look_hint_ : end; }

  // A look between chunks, with the next chunk (steps stop..next_stop, pass over 0..reach-1 or the whole
  // basis) queued first, so that a device runs it while the host computes the Ritz values: the same
  // steps the cycle would take after a look that does not end it, and the same bits (Backend::
  // queue_steps). Returns end_early(stop); when it ends the cycle the queued steps are dropped, and
  // those a device ran anyway count as products (lookahead_discarded_).
  bool look_ahead(int stop, int next_stop, int reach, const std::function<bool(int)> &end_early, bool &queued)
  {
    // At the step a look predicted the end for, the look most likely ends the cycle: nothing queued,
    // so that a device runs no steps to throw away (the next chunk, if it does not, runs after the look).
    queued = stop != look_hint_;
    if (!queued) return end_early(stop);
    b_.queue_steps(stop, next_stop, reach, anorm_);
    queued_end_ = next_stop;
    bool ends = false;
    try {
      ends = end_early(stop);
    } catch (...) {
      b_.cancel_steps();
      throw;
    }
    if (!ends) return false;
    lookahead_dropped_steps_ += next_stop - stop;
    const int ran = b_.cancel_steps();
    matvecs_ += ran;
    if (reach < 0) full_passes_ += ran;
    lookahead_discarded_ += ran;
    return true;
  }

  // Step jj's record into S (alpha, and beta as the coupling to v_{jj+1} when jj + 1 < m) and `beta`.
  // On a breakdown v_{jj+1} becomes a fresh direction (or zero, `exhausted`, when none is left) and
  // true is returned: the later records of the same call ran on v_{jj+1} = 0.
  bool take_record(int jj, const StepRecord &rec, int m, double &beta, bool &exhausted)
  {
    reductions_ += rec.second_pass ? 5 : 3; // the window's projection, the pass, its repeat
    check_finite(rec.norm_before, "||A v||");
    check_finite(rec.alpha, "alpha");
    check_finite(rec.beta, "beta");
    anorm_ = rec.anorm;
    S(jj, jj) = rec.alpha;
    if (jj + 1 < m) S(jj, jj + 1) = S(jj + 1, jj) = rec.beta;
    beta = rec.beta;
    if (!rec.breakdown) return false;
    fresh_or_zero(jj + 1, exhausted);
    return true;
  }

  // Steps start..m-1 with partial reorthogonalization, ending early where end_early allows (looks
  // between chunks, as extend_full's; returns the cycle's end). The first step after the restart meets the
  // arrow and gets the full pass (expand); the others come in chunks of expand_partial, whose pass
  // covers the kept and locked vectors 0..start-1 only (where converged directions live and orthogonality
  // is lost first, Paige), with the three-term window. The omega recurrence (omega_step) runs over each
  // chunk's records; where it says step t lost too much, v_{t+1} gets the full pass here
  // (reorthogonalize_column), the chunk's later steps are discarded (they ran on the vector before that
  // pass; their products still count) and step t+1 gets a full pass too (Simon). The chunks shrink to
  // the steps the estimate took to grow, so a discarded tail stays short.
  int extend_partial(int start, int m, bool &exhausted, double &beta, const std::function<bool(int)> &end_early)
  {
    records_.resize(static_cast<std::size_t>(m));
    exhausted = false;
    bool full_next = true;
    const bool looks = end_early(-1);
    const auto chunk_end = [&](int j) { return hinted(j, std::min({m, j + chunk_, looks ? j + std::max(2, (j - start) / 3) : m})); };
    bool queued = false; // the steps from j were queued before the last look (look_ahead)
    for (int j = start; j < m && !exhausted;) {
      if (full_next) {
        b_.expand(j, j + 1, anorm_, records_.data());
        ++matvecs_;
        ++full_passes_;
        full_next = take_record(j, records_[0], m, beta, exhausted); // after a fresh direction: full again
        omega_after_full(j);
        ++j;
        continue;
      }
      // Where the cycle may end early, the chunks also end where extend_full would look.
      const int stop = queued ? queued_end_ : chunk_end(j); // a look after the queue may have moved the hint
      if (queued) b_.collect_steps(records_.data());
      else b_.expand_partial(j, stop, start, anorm_, records_.data());
      queued = false;
      omega_growth_max_ = 0;
      matvecs_ += stop - j;
      int next = stop;
      for (int t = j; t < stop; ++t) {
        if (take_record(t, records_[static_cast<std::size_t>(t - j)], m, beta, exhausted)) {
          next = t + 1;
          full_next = true;
          break;
        }
        if (omega_step(t, S(t, t), beta)) {
          reorthogonalize_column(t, m, beta, exhausted);
          omega_after_full(t);
          chunk_ = std::max(2, t + 1 - j); // the estimate took this long to grow from rounding level
          discarded_ += stop - (t + 1);
          next = t + 1;
          full_next = true;
          break;
        }
      }
      // Without a full pass: as many steps as the estimate's growth leaves before the limit (a chunk
      // that ends on the step that needs the pass discards nothing), else a longer chunk.
      if (const int left = omega_steps_left(); next == stop) chunk_ = left > 0 ? left : std::min(cap_, chunk_ + std::max(1, chunk_ / 2));
      if (next == stop && looks && stop < m) {
        // The next partial chunk can be queued unless step `stop` is due a full pass (a breakdown or
        // the estimate at the chunk's last step): that one is expand's, after the look.
        if (full_next ? end_early(stop) : look_ahead(stop, chunk_end(stop), start, end_early, queued)) return stop;
        if (full_next) queued = false;
      }
      j = next;
    }
    return m;
  }

  // The full pass on v_{t+1} = w / beta_t after a partial step t: v_{t+1} -= V[:, 0:t+1] h (DGKS), then
  // alpha_t += beta_t h_t and beta_t *= ||v_{t+1}||, the same recurrence as a full pass on w before
  // the normalization.
  void reorthogonalize_column(int t, int m, double &beta, bool &exhausted)
  {
    std::vector<Scalar> h;
    double before = 0;
    bool lost = false;
    const double nrm2 = orthogonalize(t + 1, t + 1, h, before, lost);
    ++full_passes_;
    S(t, t) += beta * real_part(h[t]);
    beta *= std::sqrt(nrm2);
    finish_column(t + 1, beta, std::sqrt(nrm2), lost, exhausted);
    if (t + 1 < m) S(t, t + 1) = S(t + 1, t) = beta;
  }

  // ---------------------------------------------------------------------------------------------
  // Partial reorthogonalization (Simon 1984) inside the current segment. The new vector is orthogonalized
  // every step against the kept vectors 0..start-1 (extend_partial); within the segment start..j the
  // three-term recurrence holds, and omega_cur_[k] estimates v_j^T v_k, omega_prev_[k] v_{j-1}^T v_k:
  //   beta_j omega_{j+1,k} = beta_k omega_{j,k+1} + (alpha_k - alpha_j) omega_{j,k} + beta_{k-1} omega_{j,k-1}
  //                          - beta_{j-1} omega_{j-1,k} + rounding.
  // Returns true when the estimate exceeds omega_limit: then the new vector, and the next one (Simon's
  // rule: v_j itself was not reorthogonalized), get a full pass (extend_partial sees to both).
  // Partial reorthogonalization is on unless a wanted pair needed more, or the basis can hold the whole
  // space (nothing to save, and an exhausted space must be exactly orthogonal).
  bool partial_active() const
  {
    return s_.reorthogonalization == Reorthogonalization::Partial && !partial_blocked_ && m_ < n_;
  }

  bool omega_step(int j, double alpha, double beta)
  {
    std::vector<double> next(cap_ + 1, 0.0);
    double worst = 0;
    if (beta > 0) {
      const double beta_prev = S(j - 1, j);
      for (int k = 0; k < segment_start_; ++k) next[k] = eps; // orthogonalized explicitly every step
      for (int k = segment_start_; k < j; ++k) {
        double t = 0;
        for (int i = std::max(segment_start_, k - 1); i <= std::min(j, k + 1); ++i) t += S(i, k) * omega_cur_[i];
        double w = (t - alpha * omega_cur_[k] - beta_prev * omega_prev_[k]) / beta;
        w += std::copysign(2 * eps * anorm_ / beta, w); // rounding of this step, always growing
        next[k] = w;
        worst = std::max(worst, std::abs(w));
      }
      next[j] = eps * anorm_ / beta; // one local Gram-Schmidt pass against v_j
    }
    next[j + 1] = 1;
    omega_prev_.swap(omega_cur_);
    omega_cur_.swap(next);
    omega_growth_ = omega_worst_ > 0 && worst > omega_worst_ ? worst / omega_worst_ : 0.0;
    omega_growth_max_ = std::max(omega_growth_max_, omega_growth_);
    omega_worst_ = worst;
    return worst > omega_limit;
  }

  // Steps until the omega estimate passes omega_limit; 0 when it did not grow at the last step. The
  // estimate's growth speeds up as Ritz values converge (the loss of orthogonality Simon's recurrence
  // models goes towards them), so the last step's factor alone predicts too many steps: the chunk
  // that runs past the pass discards the rest. The largest factor of the chunk predicts fewer, and
  // the prediction is never less than half the last factor's, so a single jump does not cut every
  // later chunk short. Chunking changes no bit, only which steps are thrown away and how often the
  // host waits: on the 3-D Laplacian 34³ at nev 50 (host) 93 steps were thrown away in 102 chunks
  // with the last factor, 25 in 145 with this (a step there costs what 5-10 waits do on a GPU).
  int omega_steps_left() const
  {
    if (!(omega_growth_ > 1) || !(omega_worst_ > 0)) return 0;
    const double to_limit = std::log(omega_limit / omega_worst_);
    double steps = std::ceil(to_limit / std::log(omega_growth_));
    if (omega_growth_max_ > omega_growth_) steps = std::max(std::ceil(to_limit / std::log(omega_growth_max_)), std::ceil(0.5 * steps));
    return static_cast<int>(std::clamp(steps, 1.0, static_cast<double>(cap_)));
  }

  // After a full pass at step j: v_{j+1} is orthogonal to everything to rounding level.
  void omega_after_full(int j)
  {
    if (omega_cur_.size() != static_cast<std::size_t>(cap_ + 1)) {
      omega_cur_.assign(cap_ + 1, eps);
      omega_prev_.assign(cap_ + 1, eps);
    }
    // v_j against the older vectors: the estimate of the last step, or, right after a restart (the kept
    // vectors are new combinations), rounding level.
    if (j == segment_start_) std::fill(omega_prev_.begin(), omega_prev_.end(), eps);
    else omega_prev_ = omega_cur_;
    std::fill(omega_cur_.begin(), omega_cur_.end(), eps);
    omega_prev_[j] = 1;
    omega_cur_[j + 1] = 1;
    omega_worst_ = omega_growth_ = omega_growth_max_ = 0;
  }

  // The Ritz pairs of the active block S[locked:e, locked:e], with residuals |b y_last| (b: the coupling
  // of column e-1 to the residual direction v_e).
  RitzPairs ritz_pairs(int locked, int e, double b, bool vectors = true) const
  {
    const int na = e - locked;
    std::vector<double> A(static_cast<std::size_t>(na) * na);
    for (int jj = 0; jj < na; ++jj)
      for (int ii = 0; ii < na; ++ii) A[ii + static_cast<std::size_t>(jj) * na] = S(locked + ii, locked + jj);
    return detail::ritz_pairs(s_, c_, na, std::move(A), 1, vectors, [&](const Scalar *y_last) { return std::abs(b * *y_last); });
  }

  // ---------------------------------------------------------------------------------------------
  // Thick-restart Lanczos (Wu & Simon 2000; Stathopoulos, Saad & Wu 1998) with locking.
  // After m steps: A V_m = V_m S + beta v_m e_m^T, S symmetric: diagonal on the locked part, arrowhead
  // plus tridiagonal on the active part. S's active block is diagonalized, the best Ritz vectors kept,
  // converged ones locked (their coupling dropped: it is below tol), and the recurrence resumes.
  //
  // Multiplicities: a Krylov space grown from one vector holds one direction of each eigenspace, so a
  // second copy of an eigenvalue only appears through rounding, if at all. With Settings::verify, once
  // nev pairs have converged the search goes on from a fresh random vector orthogonal to everything
  // locked, until the best Ritz value of that complement has converged and is worse than the nev-th
  // wanted value; a round that found new wanted values is followed by another.
  Result thick_restart()
  {
    m_ = s_.ncv;
    int &m = m_; // this cycle's basis size: grows (grow_basis) when convergence is slow
    S_.assign(static_cast<std::size_t>(cap_) * cap_, 0.0);
    auto key = [&](double value) { return badness(s_, c_.eigenvalue(value)); };
    int locked = 0;  // columns 0..locked-1: converged, final
    int start = 0;   // first column whose step is still to be taken
    double beta = 0; // coupling of the last column to the residual direction v_m
    bool verifying = false;
    int found = 0; // wanted values found in the current verification round
    std::vector<double> locked_theta, locked_err;
    detail::LockedResiduals locked_res; // for the residual bounds
    Result r;
    std::vector<double> theta_all, err_all;

    // Whether the cycle may end after e columns, before m (see extend_full). A value better than the ones
    // that converged may still surface in the rest of the cycle, and only the verification round would
    // then look for it: without the verification, only once the solve has looked as far as plain thick
    // restart's first convergence test (detail::unverified_early_end_products). Two cases pay: the last
    // missing wanted pairs have converged (k = 1 converges in a few steps where a cycle is ncv, and a
    // restart one step short of tol would otherwise run a whole second cycle), and a verification round
    // is complete (round_complete) or, in its first cycle, certified (complement_certified). A copy of a
    // wanted value turning up in the partial cycle lets the cycle run to its end.
    auto end_early = [&](int e) -> bool {
      const bool may_end = s_.verify || matvecs_ >= detail::unverified_early_end_products(s_, n_);
      const bool last_wanted = may_end && !verifying && s_.nev - locked <= 2;
      const int na = e - locked;
      if (!verifying && !last_wanted) return false;
      if (e < 0) return true; // asked whether to go in chunks at all
      if (na < 2 || e >= m || m >= n_) return false; // a cycle that can hold the whole space ends exact
      const RitzPairs rp = ritz_pairs(locked, e, S(e - 1, e), false); // values and residuals only
      const std::vector<double> &w = rp.w, &err = rp.err;
      if (verifying) {
        double worst = 0, slack = 0;
        wanted_edge(s_, c_, locked_theta, anorm_, worst, slack);
        int newconv = 0;
        while (newconv < na && err[newconv] < s_.tol) ++newconv;
        if (copies_found(s_, c_, rp, newconv, worst, slack) > 0) return false; // a copy: the full cycle
        if (round_complete(s_, c_, rp, newconv, worst, slack)) return true;
        if (!verify_fresh_) return false;
        if (complement_certified(w, locked, worst, slack)) return true;
        // The certificate's bound falls by e^(-2 sqrt(e)) per step: with these Ritz values, the step at
        // which it would hold is where the next look should be (a chunk that runs past it costs products
        // the look would have saved).
        for (int k = na + 1; locked + k < m; ++k)
          if (detail::certified_complement(s_, c_, w, k, n_, locked, worst, slack)) {
            look_hint_ = locked + k;
            break;
          }
        return false;
      }
      // Two digits beyond tol: a locked pair's residual is dropped from the projected matrix and so
      // limits every pair computed after it (the verification's), and a full cycle would usually have
      // taken it far below tol anyway. Without the verification no pair follows: one digit, for the
      // floor partial reorthogonalization puts under the residuals at the cycle's end.
      const double margin = s_.verify ? 1e-2 : 1e-1;
      int newconv = 0;
      while (newconv < na && err[newconv] < margin * s_.tol) ++newconv;
      return locked + newconv >= s_.nev;
    };

    for (r.its = 1;; ++r.its) {
      // Extend the basis from `start` to m columns.
      bool exhausted = false;
      segment_start_ = start;
      look_hint_ = 0;
      int mc = m; // where this cycle ends: m, or earlier when end_early allows
      // (A verification round's random vector meets the locked vectors in every partial step's pass.)
      if (!partial_active()) mc = extend_full(start, m, exhausted, beta, end_early);
      else mc = extend_partial(start, m, exhausted, beta, end_early);
      // Active block: columns locked..mc-1. Count the leading converged Ritz pairs (in the order of
      // `which`, stopping at the first that is not).
      RitzPairs rp = ritz_pairs(locked, mc, beta);
      const int na = rp.na;
      const std::vector<double> &w = rp.w;
      const std::vector<Scalar> &Y = rp.Y;
      const std::vector<int> &order = rp.order;
      std::vector<double> &err = rp.err, &res = rp.res;
      int newconv = 0;
      bool leading = true;
      for (int q = 0; q < na; ++q) {
        const int i = order[q];
        // With a semi-orthogonal basis the true residual is only known down to about omega ||A||: claim no
        // more. A wanted pair stopped by that floor switches the solve to full reorthogonalization: one
        // that has reached it, or, as soon as it is seen, one whose value is so small against ||A|| that
        // the floor itself misses tol (the smallest eigenvalues of a Laplacian: waiting for that pair to
        // reach the floor cost the 2-D Laplacian's smallest 10 half as many products again).
        if (partial_active()) {
          const double floor = 16 * omega_limit * anorm_;
          const bool out_of_reach = q < s_.nev - locked && c_.error(w[i] - s_.shift, floor) >= s_.tol;
          if (out_of_reach) partial_blocked_ = true;
          res[q] = std::max(res[q], floor);
          err[q] = c_.error(w[i] - s_.shift, res[q]);
        }
        if (leading && err[q] < s_.tol) ++newconv;
        else leading = false;
      }
      const int nconv = locked + newconv;

      all_approximations(s_, locked_theta, locked_err, rp, theta_all, err_all);
      if (c_.monitor) c_.monitor(r.its, nconv, theta_all.data(), err_all.data(), mc);

      // A wanted pair needs more orthogonality than partial reorthogonalization kept (partial_blocked_):
      // the kept vectors carry that loss, so start over with full reorthogonalization from the sum of
      // the current best Ritz vectors, which keeps most of the progress in one start vector.
      if (partial_blocked_ && !restarted_full_) {
        restarted_full_ = true;
        std::vector<Scalar> coef(mc, Scalar(0));
        for (int i = 0; i < locked; ++i) coef[i] = 1.0;
        for (int q = 0; q < std::min(na, s_.nev - locked); ++q)
          for (int ii = 0; ii < na; ++ii) coef[locked + ii] += Y[ii + static_cast<std::size_t>(order[q]) * na];
        b_.combine(0, mc, coef.data(), m + 1);
        b_.copy_column(m + 1, 0);
        const double nrm2 = detail::squared_norm(b_, 0);
        ++reductions_;
        b_.scale(0, 1.0 / std::sqrt(nrm2));
        std::fill(S_.begin(), S_.end(), 0.0);
        locked_theta.clear();
        locked_err.clear();
        locked_res.clear();
        pur_scale_.clear();
        pur_column_.clear();
        pur_used_ = 0;
        locked = start = 0;
        verifying = false;
        found = 0;
        continue;
      }

      const CycleEnd end = end_cycle(s_, c_, r, exhausted, nconv, newconv, m - nconv >= 2, verify_fresh_, rp, locked_theta,
                                     anorm_, verifying, found, [&](double worst, double slack) {
                                       return complement_certified(w, locked, worst, slack);
                                     });
      if (matvecs_to_nev_ < 0 && nconv >= s_.nev) matvecs_to_nev_ = matvecs_; // what follows is verification
      bool done = end.done;
      const bool inject = end.inject;
      const bool fresh_cycle = verify_fresh_;
      verify_fresh_ = inject; // the next cycle is the Krylov space of the fresh vector alone
      int keep_limit = cap_;  // most columns to keep past the locked ones
      if (inject) {
        found = 0;
        if (m - nconv < 2) done = true, r.reason = Reason::Converged, r.verification_cut = true; // no room left for a complement
        // The certificate's exponent grows with the steps of that first cycle, and the looks inside it
        // end the cycle as soon as it fires: where the predicted steps, half as many again for the
        // guess, fit in the columns the basis may grow to, make the cycle that long, then go back to
        // the cycle length of the solve (below) if the round goes on. (Power-law graph at k = 1: 105
        // products -> 49; where the prediction did not fit, a cycle up to the cap cost 6 % more.)
        else if (const int k = certificate_steps(rp, newconv, locked_theta, locked + newconv); k > 0) {
          const int want = locked + newconv + (3 * k + 1) / 2 + 1;
          if (want > m && want <= cap_) {
            if (m_resume_ == 0) m_resume_ = m; // a round after a round: the solve's length is already saved
            m = want;
          }
        }
      } else if (fresh_cycle && !done && m_resume_ > 0) {
        if (m_resume_ - 1 - locked >= newconv + 1) m = m_resume_, keep_limit = m - 1 - locked; // room for a step
        m_resume_ = 0;
      }

      if (!done && !inject && !verifying) grow_basis(newconv, err[std::min(newconv, na - 1)], mc - start, locked);
      if (!done && !inject) {
        const int q = std::min(newconv, na - 1); // the leading unconverged pair
        raise_restart_on_stall(newconv, err[q], w[order[q]], res[q], locked);
      }

      // How many Ritz vectors of the active block to keep: the newly converged plus the fraction
      // Settings::restart of the rest, at least one, and room for one more step. A verification
      // round keeps only the converged ones and starts the complement afresh.
      int keep;
      if (done) keep = std::min(na, std::max(newconv, s_.nev - locked));
      else if (inject) keep = newconv;
      else keep = std::min({na - 1, keep_limit, newconv + detail::restart_keep(restart_, na - newconv, s_.nev - locked - newconv)});

      // V[:, locked:locked+keep] = V[:, locked:mc] Y(:, order[0:keep]); the identity on the locked part.
      const int kcols = locked + keep;
      std::vector<Scalar> Q(static_cast<std::size_t>(mc) * kcols, Scalar(0));
      for (int i = 0; i < locked; ++i) Q[i + static_cast<std::size_t>(i) * mc] = 1.0;
      for (int q = 0; q < keep; ++q)
        for (int ii = 0; ii < na; ++ii)
          Q[(locked + ii) + static_cast<std::size_t>(locked + q) * mc] = Y[ii + static_cast<std::size_t>(order[q]) * na];
      b_.rotate(mc, kcols, Q.data(), mc);

      if (done) {
        r.nconv = std::min(nconv, kcols);
        r.eigenvalues.assign(theta_all.begin(), theta_all.begin() + kcols);
        r.errors.assign(err_all.begin(), err_all.begin() + kcols);
        if (s_.exact_operator)
          r.residual_bounds = detail::residual_bounds(locked_res, std::vector<double>(res.begin(), res.begin() + keep), anorm_, matvecs_, m_);
        keep_residual_direction(mc, rp, beta, 0, keep);
        purification_result(r, r.eigenvalues.size());
        detail::sort_converged(b_, r, key);
        orthonormalize_returned(static_cast<int>(r.eigenvalues.size()));
        return r;
      }

      // Restart: the residual direction v_m (or, starting a verification round, a fresh random vector
      // orthogonal to the locked ones) becomes column kcols; the arrow couples it to the kept non-locked
      // Ritz vectors; newly converged ones are locked with their coupling dropped.
      // Newly converged pairs are locked once their error is below lock_margin * tol (all of them when a
      // verification round starts); the others stay among the kept ones and keep improving.
      int lockable = 0;
      while (lockable < newconv && err[lockable] < s_.lock_margin * s_.tol) ++lockable;
      const int lock = std::min(inject ? newconv : lockable, keep); // never more than the basis keeps (all-converged blocks)
      std::fill(S_.begin(), S_.end(), 0.0);
      for (int q = 0; q < lock; ++q) {
        locked_theta.push_back(w[order[q]] - s_.shift);
        locked_err.push_back(err[q]);
      }
      locked_res.lock(res, lock);
      keep_residual_direction(mc, rp, beta, 0, lock); // before column mc is overwritten
      for (int i = 0; i < locked + lock; ++i) S(i, i) = locked_theta[i] + s_.shift;
      if (inject) {
        if (!fresh_direction(kcols, kcols, false)) { // the locked vectors span everything
          r.nconv  = nconv;
          r.reason = Reason::Converged;
          r.eigenvalues.assign(theta_all.begin(), theta_all.begin() + kcols);
          r.errors.assign(err_all.begin(), err_all.begin() + kcols);
          purification_result(r, r.eigenvalues.size());
          detail::sort_converged(b_, r, key);
          orthonormalize_returned(static_cast<int>(r.eigenvalues.size()));
          return r;
        }
      } else {
        b_.copy_column(mc, kcols);
        if (partial_active()) {
          // The residual direction is only semi-orthogonal to the basis it came from, and the omega model
          // restarts from rounding level: make that true (one pass per restart, not per step).
          std::vector<Scalar> h;
          double before = 0;
          bool lost = false;
          const double nrm2 = orthogonalize(kcols, kcols, h, before, lost);
          if (nrm2 > 0) b_.scale(kcols, 1.0 / std::sqrt(nrm2));
          ++full_passes_;
        }
        for (int q = lock; q < keep; ++q) {
          const int i = order[q];
          S(locked + q, locked + q) = w[i];
          S(locked + q, kcols) = S(kcols, locked + q) = beta * real_part(Y[(na - 1) + static_cast<std::size_t>(i) * na]);
        }
      }
      locked += lock;
      start = kcols;
      // A verification round locks every copy it finds, and the values converged past the wanted ones
      // with them: each takes a column from the complement's cycle. Keep the room the solve started
      // with (ncv - nev columns past the locked ones), growing the cycle up to the basis's cap; a cycle
      // of a few columns cannot converge the complement's best value on a clustered spectrum, and the
      // rounds would go on to max_it without finding the copies still missing (the Hofstadter torus at
      // flux 1/4: 8-fold eigenvalues, 3 copies of 8 missed with 4 free columns of 27).
      if (verifying) {
        const int room = std::max(2, s_.ncv - s_.nev);
        if (m - locked < room && m < cap_) m = std::min(cap_, locked + room);
      }
    }
  }

  // Partial reorthogonalization leaves the returned Ritz vectors orthogonal to about omega_limit, not to
  // rounding: two classical Gram-Schmidt passes over them, in the returned order, make them orthonormal.
  // Each moves by about omega_limit, so its residual by about omega_limit ||A||, which the residual
  // floor (16 omega_limit ||A||, below tol |theta| for every wanted value partial keeps) already allows
  // for. k reductions twice, once per solve. Nothing to do when full reorthogonalization built them.
  void orthonormalize_returned(int k)
  {
    if (s_.reorthogonalization != Reorthogonalization::Partial || restarted_full_ || m_ >= n_) return;
    std::vector<Scalar> h;
    for (int j = 0; j < k; ++j) {
      double nrm2 = 0;
      for (int pass = 0; pass < 2; ++pass) {
        h.assign(static_cast<std::size_t>(j) + 1, Scalar(0));
        b_.project(0, j, j, h.data());
        nrm2 = b_.subtract(0, j, h.data(), j);
        reductions_ += 2;
      }
      if (nrm2 > 0) b_.scale(j, 1.0 / std::sqrt(nrm2));
    }
  }

  // Settings::restart_raise: a fraction below krylovschur's 0.5 can stall thick restart on a cluster at
  // the wanted end (the seeded sweep at 0.33: one case of 300 went round a cycle of two restarts with a
  // cluster of five near-copies at the nev-th value, 2000 restarts without converging it). A stall here:
  // kStallCycles cycles in a row that converged no pair and did not take the leading unconverged error
  // kStallProgress below its lowest since a pair last converged or locked or another pair took the lead
  // (a cycle of restarts drifts by rounding). The fraction then rises to 0.5 for the rest of the solve; convergence, however slow,
  // keeps the smaller one (with 3 cycles and 10 %, the GPU suite's Laplacians raised it in 5 of 6 solves,
  // and the 2-D Laplacian at k = 50 lost half of its gain: bench/results/2026-12-02-h200-restart.md).
  void raise_restart_on_stall(int newconv, double lead, double value, double residual, int locked)
  {
    if (!s_.restart_raise || restart_ >= 0.5) return;
    // Another leading pair: new locked pairs, a verification round's fresh vector, or a Ritz value that
    // moved further than its residual allows (a better value surfaced ahead of the one that was leading).
    if (locked != stall_locked_ || !(std::abs(value - stall_value_) <= residual)) {
      stall_locked_ = locked;
      stall_value_ = value;
      stall_lowest_ = std::numeric_limits<double>::infinity();
      stall_cycles_ = 0;
    }
    if (newconv > 0 || lead < (1 - kStallProgress) * stall_lowest_) {
      stall_lowest_ = newconv > 0 ? std::numeric_limits<double>::infinity() : lead;
      stall_value_ = value;
      stall_cycles_ = 0;
      return;
    }
    if (++stall_cycles_ >= kStallCycles) restart_ = 0.5, restart_raised_ = true;
  }

  // Slow convergence: the basis grows by half (up to cap_) after two cycles in a row that converged no
  // pair and whose rate (how fast the error of the leading unconverged pair `lead` fell over the cycle's
  // `steps` steps) puts tol more than kGrowthCycles such cycles away. A longer cycle keeps more of the
  // Krylov space across each restart; on clustered spectra (Laplacians) the steps to convergence then
  // fall faster than the orthogonalization per step grows. One slow cycle is not enough: convergence
  // is superlinear, and the first cycles after a pair locks are often slow on spectra that then
  // converge pair by pair at any basis size. Rates are only compared between cycles of the same size
  // and the same pair.
  void grow_basis(int newconv, double lead, int steps, int locked)
  {
    const bool comparable = newconv == 0 && locked == growth_locked_ && m_ == growth_m_ && growth_lead_ > 0 && lead > 0;
    const double rate = comparable ? std::log(lead / growth_lead_) / std::max(steps, 1) : 0.0; // per step
    growth_lead_ = newconv == 0 ? lead : 0.0;
    growth_locked_ = locked;
    growth_m_ = m_;
    const double predicted = rate < 0 ? std::log(s_.tol / lead) / rate : std::numeric_limits<double>::infinity();
    // Slow: tol far away at this rate, and the rate not picking up (a rate 25 % faster than the last
    // cycle's is convergence turning superlinear, which a larger basis would not have sped up much).
    const bool slow = comparable && lead > s_.tol && predicted > kGrowthCycles * steps && !(rate < 1.25 * growth_rate_);
    slow_cycles_ = slow ? slow_cycles_ + 1 : 0;
    growth_rate_ = comparable ? rate : 0.0;
    if (slow_cycles_ >= 2 && m_ < cap_) {
      m_ = std::min(cap_, m_ + std::max(1, m_ / 2));
      slow_cycles_ = 0;
    }
  }

  // Before a verification round: the steps after which its first cycle would be certified if the
  // complement's Ritz values were this cycle's unconverged ones (the best guess before the round runs;
  // they sit near the complement's ends), with the `newconv` newly converged values counted as wanted.
  // 0 when even the largest basis would not reach it: a gap far below the Ritz width, as on a grid
  // Laplacian, or many wanted values.
  int certificate_steps(const RitzPairs &rp, int newconv, const std::vector<double> &locked_theta, int locked_after) const
  {
    std::vector<double> theta(locked_theta), rest;
    for (int q = 0; q < rp.na; ++q) {
      const double value = rp.w[rp.order[q]];
      if (q < newconv) theta.push_back(value - s_.shift); // as locked_theta holds them
      else rest.push_back(value);                          // as certified_complement reads Ritz values
    }
    if (static_cast<int>(theta.size()) < s_.nev || rest.size() < 2) return 0;
    double worst = 0, slack = 0;
    wanted_edge(s_, c_, theta, anorm_, worst, slack);
    for (int k = 2; locked_after + k < cap_; ++k)
      if (detail::certified_complement(s_, c_, rest, k, n_, locked_after, worst, slack)) return k;
    return 0;
  }

  // Verification, first cycle of a round: the active block w (na Ritz values) spans the Krylov space of
  // dimension na of a random vector in the complement of the `locked` vectors (driver_support.hpp).
  bool complement_certified(const std::vector<double> &w, int locked, double worst, double slack) const
  {
    return detail::certified_complement(s_, c_, w, static_cast<int>(w.size()), n_, locked, worst, slack);
  }

  // ---------------------------------------------------------------------------------------------
  // The thesis: Algorithm 2 (tridiagonalization, three-term recurrence, no reorthogonalization),
  // Algorithm 3 (implicit QR with Wilkinson shift on T_k, accumulating Z) after every step, and
  // Algorithm 4 (x = Q z, err = ||A x - theta x|| / ||theta x||). The explicit residual costs a second
  // operator application, so it is computed only once the Lanczos estimate |beta_k z_k| says the pair
  // may have converged; the stop decision is always the explicit one.
  Result thesis()
  {
    const int m = s_.ncv;
    const int X = m + 1, AX = m + 2; // work columns
    std::vector<double> alpha, beta;
    Result r;
    double beta_prev = 0;
    for (int j = 0; j < m; ++j) {
      double a = 0, b = 0;
      bool exhausted = false;
      step(j, beta_prev, s_.reorthogonalization == Reorthogonalization::Full, a, b, exhausted);
      alpha.push_back(a);
      beta.push_back(b);
      beta_prev = b;
      r.its = j + 1;

      const int k = j + 1;
      std::vector<double> d(alpha), e(beta.begin(), beta.end() - 1), Z(static_cast<std::size_t>(k) * k, 0.0);
      for (int i = 0; i < k; ++i) Z[i + static_cast<std::size_t>(i) * k] = 1.0;
      tridiagonal_qr(k, d.data(), e.data(), Z.data(), k);
      const std::vector<int> order = detail::order_by_which(s_, c_, d);
      const int best = order[0];
      const double theta = d[best];
      const double *z = Z.data() + static_cast<std::size_t>(best) * k;

      double err = c_.error(theta - s_.shift, std::abs(b * z[k - 1]));
      if (err < s_.tol || b == 0 || j == m - 1 || r.its >= s_.max_it) {
        // Algorithm 4: the explicit residual of x = V_k z.
        const std::vector<Scalar> zs(z, z + k); // T's eigenvector is real; combine takes Scalars
        b_.combine(0, k, zs.data(), X);
        b_.apply_operator(X, AX);
        ++matvecs_;
        const double xx = detail::squared_norm(b_, X);
        const Scalar theta_s = theta;
        const double rr = b_.subtract(X, 1, &theta_s, AX);
        reductions_ += 2;
        err = c_.error(theta - s_.shift, std::sqrt(rr / xx));
        if (err < s_.tol || b == 0 || j == m - 1 || r.its >= s_.max_it) {
          if (c_.monitor) {
            const double t = theta - s_.shift;
            c_.monitor(r.its, err < s_.tol ? 1 : 0, &t, &err, 1);
          }
          b_.copy_column(X, 0);
          b_.scale(0, 1.0 / std::sqrt(xx));
          r.eigenvalues = {theta - s_.shift};
          r.errors = {err};
          r.nconv = err < s_.tol ? 1 : 0;
          r.reason = r.nconv ? Reason::Converged : b == 0 ? Reason::Breakdown : Reason::MaxIterations;
          return r;
        }
      }
      if (c_.monitor) {
        const double t = theta - s_.shift;
        c_.monitor(r.its, 0, &t, &err, 1);
      }
      if (c_.stop && c_.stop(r.its, 0)) {
        r.reason = Reason::UserStop;
        return r;
      }
    }
    return r; // not reached: the last step always returns above
  }

  // The projected matrix, column-major with leading dimension cap_ (the largest basis a solve may grow to).
  double &S(int i, int j) { return S_[i + static_cast<std::size_t>(j) * cap_]; }
  double S(int i, int j) const { return S_[i + static_cast<std::size_t>(j) * cap_]; }

  Backend &b_;
  Settings s_;
  Callbacks c_;
  index_t n_ = 0;
  int cap_ = 0; // thick restart: most basis columns (ncv, or ncv_max when the basis may grow)
  int m_ = 0;   // thick restart: basis columns of the current cycle, ncv <= m_ <= cap_
  double anorm_ = 0;         // running estimate of ||A||: max ||A v_j||
  std::vector<Scalar> h_;    // orthogonalization coefficients of the current step
  std::vector<StepRecord> records_; // what Backend::expand reports
  std::vector<double> S_;    // projected matrix (thick restart), cap_ x cap_ column-major
  long matvecs_ = 0, reductions_ = 0;
  int breakdowns_ = 0;
  int fresh_ = 0; // fresh random directions drawn (each gets its own seed)
  int chunk_ = 8; // extend_partial: steps per expand_partial call
  long discarded_ = 0; // extend_partial: steps run past one that needed a full pass
  long lookahead_discarded_ = 0; // look_ahead: queued steps a device ran before a look ended the cycle
  long lookahead_dropped_steps_ = 0; // look_ahead: queued steps dropped, whether a device ran them or not
  long matvecs_to_nev_ = -1;         // products when nev pairs had first converged (-1: not yet)
  int look_hint_ = 0;                // where a look predicted the cycle may end (0: nowhere); see hinted()
  int queued_end_ = 0;               // the end of the steps look_ahead queued
  double omega_growth_max_ = 0; // the largest growth factor of the current chunk's steps (omega_steps_left)
  double omega_worst_ = 0, omega_growth_ = 0; // the last omega_step's largest estimate, and its growth factor
  long full_passes_ = 0;                        // steps orthogonalized against the whole basis
  std::vector<double> omega_cur_, omega_prev_;  // partial reorthogonalization: estimated v_j^T v_k, v_{j-1}^T v_k
  int segment_start_ = 0;                       // first step after the last restart
  bool partial_blocked_ = false;                // a wanted pair needs more than semi-orthogonality: full from now on
  bool restarted_full_ = false;                 // the solve started over with full reorthogonalization
  bool verify_fresh_ = false;                   // this cycle extends a fresh verification vector alone
  int m_resume_ = 0;                            // the cycle length to return to after a round's long first cycle
  double restart_ = 0.5;                        // the restart fraction in effect (Settings::restart, raised on a stall)
  bool restart_raised_ = false;                 //   whether raise_restart_on_stall raised it
  double stall_lowest_ = std::numeric_limits<double>::infinity(); // raise_restart_on_stall: the lowest leading
  int stall_cycles_ = 0;                        //   error since a pair last converged, and cycles without a lower one,
  int stall_locked_ = -1;                       //   with this many locked and the leading Ritz value at it
  double stall_value_ = std::numeric_limits<double>::quiet_NaN();
  double growth_lead_ = 0;                      // grow_basis: the leading unconverged error after the last cycle,
  int growth_locked_ = -1, growth_m_ = 0;       //   the locked count and basis size it was measured with
  double growth_rate_ = 0;                      //   the rate measured then (0: none)
  int slow_cycles_ = 0;                         //   and how many cycles in a row were slow
  // Settings::purify: residual directions kept in columns pur_base_..pur_base_+pur_slots_-1 (pur_used_ of
  // them so far), and for each locked vector the c / theta of its purification and its direction's column
  // (NaN and -1 where no column was left or theta is 0).
  int pur_base_ = 0, pur_slots_ = 0, pur_used_ = 0;
  std::vector<double> pur_scale_;
  std::vector<int> pur_column_;

  // Keeps column `col` (this cycle's residual direction) for the purification of the pairs order[q0..q1)
  // of the active block (Ritz vectors Y, values w, coupling beta); appends their scale and column.
  void keep_residual_direction(int col, const detail::RitzPairs &rp, double beta, int q0, int q1)
  {
    if (!s_.purify || q1 <= q0) return;
    const int slot = pur_used_ < pur_slots_ ? pur_base_ + pur_used_ : -1;
    if (slot >= 0) {
      b_.copy_column(col, slot);
      ++pur_used_;
    }
    for (int q = q0; q < q1; ++q) {
      const int i = rp.order[q];
      // A x = w x + beta y_last u: x <- A x / w = x + (beta y_last / w) u.
      const double c = beta * real_part(rp.Y[(rp.na - 1) + static_cast<std::size_t>(i) * rp.na]);
      const bool ok = slot >= 0 && rp.w[i] != 0 && std::isfinite(c / rp.w[i]);
      pur_scale_.push_back(ok ? c / rp.w[i] : std::numeric_limits<double>::quiet_NaN());
      pur_column_.push_back(ok ? slot : -1);
    }
  }

  // The returned vectors' purification data, aligned with r.eigenvalues before sort_converged.
  void purification_result(Result &r, std::size_t returned) const
  {
    if (!s_.purify) return;
    r.purify_base = pur_slots_ > 0 ? pur_base_ : -1;
    r.purify_directions = pur_used_;
    r.purify_scale = pur_scale_;
    r.purify_column = pur_column_;
    r.purify_scale.resize(returned, std::numeric_limits<double>::quiet_NaN());
    r.purify_column.resize(returned, -1);
  }
};

// Settings::purify, after the solve and its true-residual check: x_j <- A x_j / theta_j from the Lanczos
// relation, for each converged x_j the driver kept a residual direction for (Settings::purify):
//   A x_j = theta_j x_j + c_j u_(j) + sum_i c_i (u_(i)^H x_j) x_i,   c = t theta (Result::purify_scale),
// the sum over the other purifiable returned vectors x_i (the couplings their locking dropped; zero for
// those whose direction x_j is orthogonal to). All the u^H x first, from the vectors as returned; then each
// x_j in place (a term from an x_i purified before it differs by t_i^2 relative: rounding where it
// matters). x_j, u_(j) and the x_i are orthonormal, so the sum's norm is known: no second reduction.
void purify_returned(Backend &b, const Settings &s, Result &r)
{
  const int k = std::min(r.nconv, static_cast<int>(r.purify_scale.size()));
  const int nd = r.purify_directions;
  if (k <= 0 || nd <= 0 || r.purify_base < 0) return;
  std::vector<char> ok(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) ok[j] = std::isfinite(r.purify_scale[j]) && r.purify_column[j] >= 0;
  // d(j, q) = u_q^H x_j, nd + 1 entries a vector: project writes x_j^H x_j after the nd products
  std::vector<Scalar> d(static_cast<std::size_t>(k) * (nd + 1), Scalar(0));
  for (int j = 0; j < k; ++j)
    if (ok[j]) b.project(r.purify_base, nd, j, &d[static_cast<std::size_t>(j) * (nd + 1)]), ++r.reductions;
  std::vector<Scalar> coef(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) {
    if (!ok[j]) continue;
    const double theta_j = r.eigenvalues[j] + s.shift, t = r.purify_scale[j];
    double norm2 = 1 + t * t;
    for (int i = 0; i < k; ++i) {
      coef[i] = 0;
      if (i == j || !ok[i]) continue;
      const double theta_i = r.eigenvalues[i] + s.shift;
      coef[i] = -(r.purify_scale[i] * theta_i / theta_j) * d[static_cast<std::size_t>(j) * (nd + 1) + (r.purify_column[i] - r.purify_base)];
      norm2 += abs2(coef[i]);
    }
    // the other vectors: columns 0..j-1 and j+1..k-1 (update's source and destination do not overlap)
    if (j > 0) b.update(0, j, coef.data(), j);
    if (j + 1 < k) b.update(j + 1, k - j - 1, coef.data() + j + 1, j);
    const Scalar own = -t; // update subtracts
    if (t != 0) b.update(r.purify_column[j], 1, &own, j);
    if (norm2 != 1) b.scale(j, 1 / std::sqrt(norm2));
    ++r.purified;
  }
}

} // namespace

Result solve(Backend &backend, const Settings &settings, const Callbacks &callbacks)
{
  if (settings.block_size < 1) throw Error("the block size must be at least 1");
  if (!(settings.restart >= 0.1 && settings.restart <= 0.9))
    throw Error("the restart fraction must lie in [0.1, 0.9] (" + std::to_string(settings.restart) + " given)");
  if (settings.block_size > 1 && settings.variant == Variant::Thesis)
    throw Error("the thesis variant takes one vector per step; block size " + std::to_string(settings.block_size) +
                " needs the thick-restart variant");
  // Scaling into range (scaling.hpp): the driver runs on 2^e A, with the shift, the target and the
  // callbacks' values in the same units, and the eigenvalues come back in the user's.
  const bool given = settings.norm_estimate > 0 && std::isfinite(settings.norm_estimate);
  long measured = 0; // products of measure_norm
  const double norm = given ? settings.norm_estimate : detail::measure_norm(backend, settings.seed, measured);
  const int e = detail::scale_exponent(norm);
  struct Unscale { // the backend applies A again afterwards, whatever happens
    Backend &b;
    ~Unscale()
    {
      try {
        b.set_operator_scale(0); // never throws for 0; a destructor must not let anything escape
      } catch (...) {
      }
    }
  } unscale{backend};
  backend.set_operator_scale(e);
  const Settings s = detail::scaled_settings(settings, e);
  const Callbacks c = detail::with_defaults(detail::scaled_callbacks(callbacks, e, settings.translation_map), s);
  const bool block = detail::block_variant_applies(s, backend.global_size());
  const auto run = [&](const Settings &settings_now) {
    Result out = block ? detail::solve_block(backend, settings_now, c) : Driver(backend, settings_now, c).run();
    // The thesis variant's stop decision is its explicit residual already.
    if (s.variant == Variant::ThickRestart) detail::check_residuals(backend, settings_now, c, block ? s.block_size : 1, out);
    return out;
  };
  Result r = run(s);
  // The check left fewer than nev: the pairs locked first dropped couplings larger than a later pair's
  // tolerance (a graded spectrum), or converged values were too small against ||A|| to meet tol. Go on
  // from the sum of the returned vectors, which keeps most of the progress in one start vector, with
  // pairs locked only two digits beyond tol; once, with the iterations left.
  if (r.reason == Reason::ResidualCheck && r.its < s.max_it) {
    Settings again = s;
    again.lock_margin = 1e-2 * s.lock_margin;
    again.max_it = s.max_it - r.its;
    again.initial_vector = true;
    const int returned = static_cast<int>(r.eigenvalues.size());
    const std::vector<Scalar> ones(static_cast<std::size_t>(returned), Scalar(1));
    backend.combine(0, returned, ones.data(), returned);
    backend.copy_column(returned, 0);
    Result second = run(again);
    second.its += r.its;
    second.matvecs += r.matvecs;
    second.reductions += r.reductions;
    second.breakdowns += r.breakdowns;
    second.full_reorthogonalizations += r.full_reorthogonalizations;
    second.discarded_steps += r.discarded_steps;
    second.lookahead_discarded += r.lookahead_discarded;
    second.certificates += r.certificates;
    second.block_certified += r.block_certified;
    second.lookahead_dropped_steps += r.lookahead_dropped_steps;
    second.matvecs_before_nev += r.matvecs_before_nev;
    second.matvecs_verification += r.matvecs_verification;
    second.matvecs_check += r.matvecs_check;
    second.operator_passes += r.operator_passes;
    second.residuals_checked += r.residuals_checked;
    second.residuals_proven += r.residuals_proven;
    second.residual_rejected += r.residual_rejected;
    second.residual_retries = 1;
    r = std::move(second);
  }
  purify_returned(backend, s, r);
  r.matvecs += measured;
  r.matvecs_before_nev += measured;
  r.operator_passes += measured;
  for (double &v : r.eigenvalues) v = std::ldexp(v, -e);
  r.scale_exponent = e;
  r.norm_estimate = norm;
  return r;
}

} // namespace cudalanczos
