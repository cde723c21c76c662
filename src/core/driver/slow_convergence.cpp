// Basis growth and the restart fraction's raise after a stall (slow_convergence.hpp).
#include "core/driver/slow_convergence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cudalanczos::detail {

int BasisGrowth::after_cycle(int newconv, double lead, int steps, int locked, int m, int cap, double tol)
{
  const bool comparable = newconv == 0 && locked == locked_ && m == m_ && lead_ > 0 && lead > 0;
  const double rate = comparable ? std::log(lead / lead_) / std::max(steps, 1) : 0.0; // per step
  lead_ = newconv == 0 ? lead : 0.0;
  locked_ = locked;
  m_ = m;
  const double predicted = rate < 0 ? std::log(tol / lead) / rate : std::numeric_limits<double>::infinity();
  // Slow: tol far away at this rate, and the rate not picking up (a rate 25 % faster than the last
  // cycle's is convergence turning superlinear, which a larger basis would not have sped up much).
  const bool slow = comparable && lead > tol && predicted > kGrowthCycles * steps && !(rate < 1.25 * rate_);
  slow_cycles_ = slow ? slow_cycles_ + 1 : 0;
  rate_ = comparable ? rate : 0.0;
  if (slow_cycles_ >= 2 && m < cap) {
    m = std::min(cap, m + std::max(1, m / 2));
    slow_cycles_ = 0;
  }
  return m;
}

bool RestartStall::after_cycle(int newconv, double lead, double value, double residual, int locked)
{
  // Another leading pair: new locked pairs, a verification round's fresh vector, or a Ritz value that
  // moved further than its residual allows (a better value surfaced ahead of the one that was leading).
  if (locked != locked_ || !(std::abs(value - value_) <= residual)) {
    locked_ = locked;
    value_ = value;
    lowest_ = std::numeric_limits<double>::infinity();
    cycles_ = 0;
  }
  if (newconv > 0 || lead < (1 - kStallProgress) * lowest_) {
    lowest_ = newconv > 0 ? std::numeric_limits<double>::infinity() : lead;
    value_ = value;
    cycles_ = 0;
    return false;
  }
  return ++cycles_ >= kStallCycles;
}

} // namespace cudalanczos::detail
