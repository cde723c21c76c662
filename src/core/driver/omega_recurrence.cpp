// Simon's omega recurrence (omega_recurrence.hpp).
#include "core/driver/omega_recurrence.hpp"

#include <algorithm>

namespace cudalanczos::detail {

bool OmegaRecurrence::step(const double *S, int ld, int offset, int j, int segment_start, double alpha, double beta, double anorm)
{
  const auto s = [&](int i, int k) { return S[(i - offset) + static_cast<std::size_t>(k - offset) * ld]; };
  std::vector<double> &next = next_;
  next.assign(cap_ + 1, 0.0);
  double worst = 0;
  if (beta > 0) {
    const double beta_prev = s(j - 1, j);
    for (int k = 0; k < segment_start; ++k) next[k] = eps; // orthogonalized explicitly every step
    for (int k = segment_start; k < j; ++k) {
      double t = 0;
      for (int i = std::max(segment_start, k - 1); i <= std::min(j, k + 1); ++i) t += s(i, k) * cur_[i];
      double w = (t - alpha * cur_[k] - beta_prev * prev_[k]) / beta;
      w += std::copysign(2 * eps * anorm / beta, w); // rounding of this step, always growing
      next[k] = w;
      worst = std::max(worst, std::abs(w));
    }
    next[j] = eps * anorm / beta; // one local Gram-Schmidt pass against v_j
  }
  next[j + 1] = 1;
  prev_.swap(cur_);
  cur_.swap(next_);
  growth_ = worst_ > 0 && worst > worst_ ? worst / worst_ : 0.0;
  growth_max_ = std::max(growth_max_, growth_);
  worst_ = worst;
  return worst > omega_limit;
}

// The estimate's growth speeds up as Ritz values converge (the loss of orthogonality Simon's recurrence
// models goes towards them), so the last step's factor alone predicts too many steps: the chunk that
// runs past the pass discards the rest. The largest factor of the chunk predicts fewer, and the
// prediction is never less than half the last factor's, so a single jump does not cut every later chunk
// short. Chunking changes no bit, only which steps are thrown away and how often the host waits (see
// docs/tuning.md#core-partial-reorthogonalizations-chunk-prediction).
int OmegaRecurrence::steps_left() const
{
  if (!(growth_ > 1) || !(worst_ > 0)) return 0;
  const double to_limit = std::log(omega_limit / worst_);
  double steps = std::ceil(to_limit / std::log(growth_));
  if (growth_max_ > growth_) steps = std::max(std::ceil(to_limit / std::log(growth_max_)), std::ceil(0.5 * steps));
  return static_cast<int>(std::clamp(steps, 1.0, static_cast<double>(cap_)));
}

void OmegaRecurrence::after_full(int j, int segment_start)
{
  if (cur_.size() != static_cast<std::size_t>(cap_ + 1)) {
    cur_.assign(cap_ + 1, eps);
    prev_.assign(cap_ + 1, eps);
  }
  // v_j against the older vectors: the estimate of the last step, or, right after a restart (the kept
  // vectors are new combinations), rounding level.
  if (j == segment_start) std::fill(prev_.begin(), prev_.end(), eps);
  else prev_ = cur_;
  std::fill(cur_.begin(), cur_.end(), eps);
  prev_[j] = 1;
  cur_[j + 1] = 1;
  worst_ = growth_ = growth_max_ = 0;
}

} // namespace cudalanczos::detail
