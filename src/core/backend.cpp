#include "core/backend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cudalanczos {

// The reference for every override (tests/cuda: ExpandIsEquivalentToRef): each scalar goes through a
// project/subtract reduction, so this runs on any number of ranks: three reductions a step, five when
// DGKS repeats the full pass.
void Backend::expand(int first, int last, double anorm, StepRecord *records)
{
  constexpr double eps = std::numeric_limits<double>::epsilon();
  std::vector<double> g(3), h, h2;
  for (int j = first; j < last; ++j) {
    StepRecord &r = records[j - first];
    const int k = j + 1, w = j + 1;
    apply_operator(j, w);
    // The three-term window v_{j-1}, v_j.
    const int lo = std::max(0, j - 1), kl = j - lo + 1;
    project(lo, kl, w, g.data());
    r.norm_before = g[kl];
    update(lo, kl, g.data(), w); // ||w||^2 after it comes with the full pass's projection
    // Full reorthogonalization; DGKS compares with ||w|| before this pass.
    h.assign(k + 1, 0.0);
    project(0, k, w, h.data());
    const double mid = h[k];
    const double after1 = subtract(0, k, h.data(), w);
    double after = after1;
    r.alpha = g[kl - 1] + h[j];
    bool lost = false;
    r.second_pass = after1 < kDgksEta2 * mid;
    if (r.second_pass) {
      h2.assign(k + 1, 0.0);
      project(0, k, w, h2.data());
      after = subtract(0, k, h2.data(), w);
      r.alpha += h2[j];
      lost = after < kDgksEta2 * after1;
    }
    anorm = std::max({anorm, std::sqrt(r.norm_before), std::abs(r.alpha)});
    r.anorm = anorm;
    r.beta = std::sqrt(after);
    r.breakdown = lost || r.beta <= 16 * eps * anorm * std::sqrt(static_cast<double>(j + 2));
    if (r.breakdown) r.beta = 0;
    scale(w, r.breakdown ? 0.0 : 1.0 / r.beta);
  }
}

} // namespace cudalanczos
