// The Lanczos step and a cycle's expansion with full reorthogonalization (driver.hpp): Gram-Schmidt with
// DGKS, breakdowns, the chunks of Backend::expand with looks between them, and the look-ahead.
#include "core/driver/driver.hpp"

#include <algorithm>
#include <cmath>

namespace cudalanczos::detail {

// Orthogonalizes column `col` against columns 0..k-1 by classical Gram-Schmidt, a second pass when
// the first lost too much (DGKS). h[0..k-1] receives the total coefficients. Returns ||w||^2 after and
// sets `before` to ||w||^2 before. `lost` is set when even the second pass lost more than eta: the
// vector is numerically inside the span.
double Driver::orthogonalize(int k, int col, std::vector<Scalar> &h, double &before, bool &lost)
{
  h.assign(k + 1, Scalar(0));
  b_.project(0, k, col, h.data());
  ++reductions_;
  before = real_part(h[k]);
  check_finite(before, "||A v||");
  double after = b_.subtract(0, k, h.data(), col);
  ++reductions_;
  lost = false;
  if (step_rule::lost_too_much(after, before)) { // DGKS: a second pass below 1/sqrt(2) of the norm
    std::vector<Scalar> h2(k + 1);
    b_.project(0, k, col, h2.data());
    ++reductions_;
    const double again = b_.subtract(0, k, h2.data(), col);
    ++reductions_;
    for (int i = 0; i < k; ++i) h[i] += h2[i];
    lost = step_rule::lost_too_much(again, after);
    after = again;
  }
  return after;
}

// Breakdown: column `col` is replaced by a random unit vector orthogonal to columns 0..k-1. Returns
// false when no such vector exists numerically (the basis spans the whole space).
bool Driver::fresh_direction(int k, int col, bool breakdown)
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

// The Lanczos step j of the unrestarted variant: w = A v_j into column j+1, orthogonalized (full, or the
// three-term recurrence alone); returns alpha_j and beta_j (beta_j = 0 on breakdown, column j+1 then
// holds a fresh orthogonal direction or zero).
// With full reorthogonalization, coefficients other than alpha_j are rounding-level corrections and
// are discarded (the projected matrix stays tridiagonal).
void Driver::step(int j, double beta_prev, bool full, double &alpha, double &beta, bool &exhausted)
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
void Driver::finish_column(int col, double &beta, double norm, bool lost, bool &exhausted)
{
  if (step_rule::is_breakdown(lost, beta, anorm_, col - 1)) {
    beta = 0;
    fresh_or_zero(col, exhausted);
  } else {
    b_.scale(col, 1.0 / norm);
  }
}

// After a breakdown: column col becomes a fresh random direction orthogonal to the basis before it, or
// zero when there is none (the space is exhausted).
void Driver::fresh_or_zero(int col, bool &exhausted)
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
int Driver::extend_full(int start, int m, bool &exhausted, double &beta)
{
  records_.resize(static_cast<std::size_t>(m));
  exhausted = false;
  const bool looks = end_early(-1); // -1: "may this cycle end early at all?"
  const auto chunk_end = [&](int j) { return looks ? hinted(j, std::min(m, j + std::max(2, (j - start) / 3))) : m; };
  bool queued = false; // the steps from j were queued before the last look (look_ahead)
  for (int j = start; j < m;) {
    const int stop = queued ? queued_end_ : chunk_end(j); // a look after the queue may have moved the hint
    if (queued) b_.collect_steps(records_.data());
    else expand_steps(j, stop, -1);
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
      if (look_ahead(stop, chunk_end(stop), -1, queued)) return stop;
    }
    j = next;
  }
  return m;
}

// Steps j..stop-1 on the backend, their records from records_[0]: full passes (reach < 0) or partial
// steps against columns 0..reach-1 and the last two. With Callbacks::tick, one step a call, each followed
// by a tick: the same steps with the same anorm, so the same records, and a caller that sees progress
// within a chunk of steps that takes minutes.
void Driver::expand_steps(int j, int stop, int reach)
{
  for (int k = j; k < stop;) {
    const int end = c_.tick ? k + 1 : stop;
    StepRecord *records = records_.data() + (k - j);
    if (reach < 0) b_.expand(k, end, anorm_, records);
    else b_.expand_partial(k, end, reach, anorm_, records);
    k = end;
    if (c_.tick) c_.tick(its_, t_.locked, matvecs_ + (k - j));
  }
}

// The end of a chunk from j that would end at `end`: earlier where a look predicted the step at which
// the cycle may end (look_hint_, the verification's certificate).
int Driver::hinted(int j, int end) const
{
  return look_hint_ > j && look_hint_ < end ? look_hint_ : end;
}

// A look between chunks, with the next chunk (steps stop..next_stop, pass over 0..reach-1 or the whole
// basis) queued first, so that a device runs it while the host computes the Ritz values: the same
// steps the cycle would take after a look that does not end it, and the same bits (Backend::
// queue_steps). Returns end_early(stop); when it ends the cycle the queued steps are dropped, and
// those a device ran anyway count as products (lookahead_discarded_).
bool Driver::look_ahead(int stop, int next_stop, int reach, bool &queued)
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
bool Driver::take_record(int jj, const StepRecord &rec, int m, double &beta, bool &exhausted)
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

} // namespace cudalanczos::detail
