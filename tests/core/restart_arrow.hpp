// A basis as the first step after a thick restart sees it, for the tests of Backend::expand (core:
// ArrowStepRepeatsTheFullPass; cuda: ArrowStepIsEquivalentToRef). Works through the Backend interface
// only, so the same columns can be built on any backend. orthonormalize() also makes the tests' unit
// start vectors.
#pragma once

#include "core/backend.hpp"

#include <cmath>
#include <vector>

namespace cudalanczos::testing {

/// Column c orthogonalized against columns first..first+k-1 (two classical Gram-Schmidt passes) and
/// normalized.
inline void orthonormalize(Backend &b, int c, int first, int k)
{
  std::vector<Scalar> h(static_cast<std::size_t>(k) + 1);
  for (int pass = 0; pass < 2 && k > 0; ++pass) {
    b.project(first, k, c, h.data());
    b.subtract(first, k, h.data(), c);
  }
  Scalar nrm2 = 0;
  b.project(c, 0, c, &nrm2);
  b.scale(c, 1 / std::sqrt(real_part(nrm2)));
}

/// Orthonormal columns 0..2 with v_0 near the direction of A v_2 outside span(v_1, v_2): A v_2 has a
/// large component outside the three-term window {v_1, v_2}, as after a restart, where the arrow couples
/// v_j to every kept vector. A fifth of a random direction in v_0 keeps A v_2 out of the span. Uses
/// columns 4 and 5 as scratch (the basis needs 6 columns). Returns the step to start from: 2.
inline int plant_restart_arrow(Backend &b)
{
  b.set_random(1, 101);
  orthonormalize(b, 1, 1, 0);
  b.set_random(2, 102);
  orthonormalize(b, 2, 1, 1);
  b.apply_operator(2, 4);
  orthonormalize(b, 4, 1, 2); // u: the direction of A v_2 outside span(v_1, v_2)
  b.set_random(5, 103);
  orthonormalize(b, 5, 1, 2);
  const Scalar coef[2] = {1.0, 0.2};
  b.combine(4, 2, coef, 0); // v_0 = u + random / 5, then made orthonormal
  orthonormalize(b, 0, 1, 2);
  return 2;
}

} // namespace cudalanczos::testing
