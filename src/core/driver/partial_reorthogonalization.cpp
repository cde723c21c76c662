// Partial reorthogonalization (Simon 1984) of single-vector steps (driver.hpp): chunks of
// Backend::expand_partial watched by the omega recurrence (omega_recurrence.hpp), a full pass where it
// says orthogonality is lost, and the orthonormalization of the returned vectors at the end.
#include "core/driver/driver.hpp"

#include <algorithm>
#include <cmath>

namespace cudalanczos::detail {

// Partial reorthogonalization is on unless a wanted pair needed more, or the basis can hold the whole
// space (nothing to save, and an exhausted space must be exactly orthogonal).
bool Driver::partial_active() const
{
  return s_.reorthogonalization == Reorthogonalization::Partial && !partial_blocked_ && m_ < n_;
}

// Steps start..m-1 with partial reorthogonalization, ending early where end_early allows (looks
// between chunks, as extend_full's; returns the cycle's end). The first step after the restart meets the
// arrow and gets the full pass (expand); the others come in chunks of expand_partial, whose pass
// covers the kept and locked vectors 0..start-1 only (where converged directions live and orthogonality
// is lost first, Paige), with the three-term window. The omega recurrence runs over each chunk's
// records; where it says step t lost too much, v_{t+1} gets the full pass here (reorthogonalize_column),
// the chunk's later steps are discarded (they ran on the vector before that pass; their products still
// count) and step t+1 gets a full pass too (Simon). The chunks shrink to the steps the estimate took to
// grow, so a discarded tail stays short.
int Driver::extend_partial(int start, int m, bool &exhausted, double &beta)
{
  records_.resize(static_cast<std::size_t>(m));
  exhausted = false;
  bool full_next = true;
  const bool looks = end_early(-1);
  // With many pairs (mpd bounds the cycle, or the kept and locked vectors outnumber the cycle's new
  // steps), every partial step passes over hundreds of vectors: it costs about what a full pass costs,
  // and so does each step run past one that needed a full pass, while a host round trip per step costs
  // next to nothing. Chunks of one step then, none discarded. Not where the cycle may end early: its
  // looks come at chunk ends.
  const bool single = !looks && (mpd_bounds() || 2 * start >= m);
  const auto chunk_end = [&](int j) {
    return single ? j + 1 : hinted(j, std::min({m, j + chunk_, looks ? j + std::max(2, (j - start) / 3) : m}));
  };
  bool queued = false; // the steps from j were queued before the last look (look_ahead)
  for (int j = start; j < m && !exhausted;) {
    if (full_next) {
      expand_steps(j, j + 1, -1);
      ++matvecs_;
      ++full_passes_;
      full_next = take_record(j, records_[0], m, beta, exhausted); // after a fresh direction: full again
      omega_.after_full(j, segment_start_);
      ++j;
      continue;
    }
    // Where the cycle may end early, the chunks also end where extend_full would look.
    const int stop = queued ? queued_end_ : chunk_end(j); // a look after the queue may have moved the hint
    if (queued) b_.collect_steps(records_.data());
    else expand_steps(j, stop, start);
    queued = false;
    omega_.begin_chunk();
    matvecs_ += stop - j;
    int next = stop;
    for (int t = j; t < stop; ++t) {
      if (take_record(t, records_[static_cast<std::size_t>(t - j)], m, beta, exhausted)) {
        next = t + 1;
        full_next = true;
        break;
      }
      if (omega_.step(S_.data(), lds_, s_off_, t, segment_start_, S(t, t), beta, anorm_)) {
        reorthogonalize_column(t, m, beta, exhausted);
        omega_.after_full(t, segment_start_);
        chunk_ = std::max(2, t + 1 - j); // the estimate took this long to grow from rounding level
        discarded_ += stop - (t + 1);
        next = t + 1;
        full_next = true;
        break;
      }
    }
    // Without a full pass: as many steps as the estimate's growth leaves before the limit (a chunk
    // that ends on the step that needs the pass discards nothing), else a longer chunk.
    if (const int left = omega_.steps_left(); next == stop) chunk_ = left > 0 ? left : std::min(cap_, chunk_ + std::max(1, chunk_ / 2));
    if (next == stop && looks && stop < m) {
      // The next partial chunk can be queued unless step `stop` is due a full pass (a breakdown or
      // the estimate at the chunk's last step): that one is expand's, after the look.
      if (full_next ? end_early(stop) : look_ahead(stop, chunk_end(stop), start, queued)) return stop;
      if (full_next) queued = false;
    }
    j = next;
  }
  return m;
}

// The full pass on v_{t+1} = w / beta_t after a partial step t: v_{t+1} -= V[:, 0:t+1] h (DGKS), then
// alpha_t += beta_t h_t and beta_t *= ||v_{t+1}||, the same recurrence as a full pass on w before
// the normalization.
void Driver::reorthogonalize_column(int t, int m, double &beta, bool &exhausted)
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

// At a restart: the residual direction, now column `col`, is only semi-orthogonal to the basis it came
// from, and the omega model restarts from rounding level: make that true (one pass per restart, not per
// step).
void Driver::reorthogonalize_restart_column(int col)
{
  std::vector<Scalar> h;
  double before = 0;
  bool lost = false;
  const double nrm2 = orthogonalize(col, col, h, before, lost);
  if (nrm2 > 0) b_.scale(col, 1.0 / std::sqrt(nrm2));
  ++full_passes_;
}

// Partial reorthogonalization leaves the returned Ritz vectors orthogonal to about omega_limit, not to
// rounding: two classical Gram-Schmidt passes over them, in the returned order, make them orthonormal.
// Each moves by about omega_limit, so its residual by about omega_limit ||A||, which the residual
// floor (16 omega_limit ||A||, below tol |theta| for every wanted value partial keeps) already allows
// for. k reductions twice, once per solve. Nothing to do when full reorthogonalization built them (for
// block steps: when none of their steps was partial).
void Driver::orthonormalize_returned(int k)
{
  if (restarted_full_) return;
  if (blocks() ? blk_.partial_steps == 0 : s_.reorthogonalization != Reorthogonalization::Partial || m_ >= n_) return;
  orthonormalize_in_order(b_, k, reductions_);
}

} // namespace cudalanczos::detail
