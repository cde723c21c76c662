// The decisions that end a Lanczos step, written once for the three places that take them: the host
// reference (Backend::expand), the driver's own steps (driver/lanczos_steps.cpp, driver/block_steps.cpp) and
// the device kernel (cuda/kernels/lanczos_step.cu). Host and device evaluate the same expressions in the
// same order, so they decide alike on the same numbers.
#pragma once

#include "core/host_device.hpp"

#include <cfloat>
#include <cmath>

namespace cudalanczos::step_rule {

/// DGKS: one more Gram-Schmidt pass when ||w||^2 dropped below this fraction of what it was (Daniel,
/// Gragg, Kaufman and Stewart's eta = 1/sqrt(2), squared).
inline constexpr double kDgksEta2 = 0.5;

/// A new vector whose norm is at most this many rounding units of ||A||, times the square root of the
/// basis size it would join, is in the span of the basis (Paige's bound on the loss of orthogonality
/// of one Gram-Schmidt step, with room for the reductions' rounding).
inline constexpr double kBreakdownUnits = 16;

/// ||w||^2 = `after` after a pass that met `before`: does DGKS repeat the pass (or, after a repeat,
/// is w lost in the span)?
CUDALANCZOS_HOST_DEVICE inline bool lost_too_much(double after, double before, double eta2 = kDgksEta2)
{
  return after < eta2 * before;
}

/// The norm below which a vector joining a basis of `columns` columns (itself included) is rounding.
CUDALANCZOS_HOST_DEVICE inline double breakdown_floor(double anorm, int columns)
{
  return kBreakdownUnits * DBL_EPSILON * anorm * sqrt(static_cast<double>(columns));
}

/// Breakdown of step j, whose beta would join v_0..v_{j+1}: DGKS lost the vector, or beta is rounding.
CUDALANCZOS_HOST_DEVICE inline bool is_breakdown(bool lost, double beta, double anorm, int j)
{
  return lost || beta <= breakdown_floor(anorm, j + 2);
}

} // namespace cudalanczos::step_rule
