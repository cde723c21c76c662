// Designing the polynomial filters of an interval solve (interval_solve.hpp): the window filter whose
// largest values belong to the eigenvalues in [a, b], and the indicator whose trace counts them.
//
// Both are damped Chebyshev series on the spectrum's bounds [lo, hi] (Di Napoli, Polizzi & Saad 2016;
// Li, Xi, Vecharynski, Yang & Saad 2016, whose EVSL this follows). The window filter is the series of a
// Dirac delta at a point gamma of the window with Lanczos' sigma factors, normalized to p(gamma) = 1 and
// balanced so that p(a) = p(b): its kernel falls off monotonically from its peak in the angle
// theta = acos(t) to its first zero, and its side lobes stay below the end values a solve uses, so an
// eigenvalue lies in [a, b] exactly when p(lambda) >= p(a). The degree is the smallest for which
// p(a) = p(b) drops to the end value asked for: a narrow window gets a sharp peak. Sigma's peak is
// narrower than Jackson's at the same degree, so the same end value takes about 3/4 of the degree
// (docs/tuning.md#core-filter-damping). The counting indicator keeps Jackson's positive kernel: its trace
// sums over every eigenvalue, where side lobes would add up.
#pragma once

#include "core/chebyshev_filter.hpp"

#include <vector>

namespace cudalanczos {

/// Jackson's damping factors g_0..g_degree (g_0 = 1), which keep the truncated series of a positive
/// function positive and free of Gibbs oscillations.
std::vector<double> jackson_damping(int degree);

/// Lanczos' sigma factors g_k = sin(x_k) / x_k, x_k = k pi / (degree + 1) (g_0 = 1): the Gibbs
/// oscillations damped to side lobes of a few percent, with a narrower peak than Jackson's.
std::vector<double> sigma_damping(int degree);

/// The filter of the window [a, b] for an operator whose spectrum lies in [lo, hi].
struct WindowFilter {
  ChebyshevFilter p;
  double end_value = 0; ///< p(a) = p(b) (the ends clipped to [lo, hi]): the eigenvalues in [a, b] have p >= this
  double gamma = 0;     ///< the peak, p(gamma) = 1
};

/// The degree a window filter takes at most, whatever end value it then reaches.
inline constexpr int kMaxFilterDegree = 100000;

/// The balanced (sigma-damped) delta filter of [a, b] on [lo, hi] (lo < hi, a < b, [a, b] meeting
/// [lo, hi]); `degree` > 0 fixes the degree, 0 takes the smallest one (at most kMaxFilterDegree) with
/// p(a) = p(b) <= end_value. Throws Error for arguments outside these ranges.
WindowFilter window_filter(double lo, double hi, double a, double b, int degree, double end_value);

/// The Jackson-damped Chebyshev series of the indicator function of [a, b] on [lo, hi], of `degree`:
/// tr p(A) estimates the number of eigenvalues in [a, b] (the kernel polynomial method), those within
/// the kernel's width of an end counting in part.
ChebyshevFilter interval_indicator(double lo, double hi, double a, double b, int degree);

/// How far interval_indicator of `degree` on [lo, hi] blurs an end at x: Jackson's kernel is about
/// pi / (degree + 1) wide in the angle theta = acos((x - c) / h), which is h sin(theta) pi / (degree + 1)
/// at x (at least h (pi / (degree + 1))^2 / 2, near the spectrum's ends). The indicator rises from near 0
/// to near 1 within a few of these around each end, and the count estimate counts the eigenvalues there
/// in part: where the density changes within them, the estimate is off by more than its stochastic error.
/// An x outside [lo, hi] counts as the nearer bound.
double indicator_blur(double lo, double hi, double x, int degree);

} // namespace cudalanczos
