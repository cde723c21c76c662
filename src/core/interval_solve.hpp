// Every eigenpair in a window [a, b] (SLEPc's EPS_ALL with EPSSetInterval), and every eigenpair on the
// wanted side of a threshold (EPSSetThreshold), on any Backend.
//
// An interval solve (Li, Xi, Vecharynski, Yang & Saad 2016, the method of EVSL):
//   1. bounds of the spectrum, from two short solves for its ends;
//   2. a polynomial filter p whose values >= p(a) = p(b) belong to the eigenvalues in [a, b]
//      (polynomial_filter.hpp), and a stochastic estimate of their number, the trace of an indicator
//      polynomial (the kernel polynomial method), which sizes the basis and checks the result;
//   3. thick-restart Lanczos on p(A) for its largest values, every product on the backend
//      (Backend::set_operator_filter), in chunks on the orthogonal complement of what the chunks before
//      found (ConstrainedBackend), until a converged value falls below p(a): every eigenvalue above it
//      has converged before it, copies of multiple eigenvalues included (the verification round);
//   4. a Rayleigh-Ritz step with A on everything found, the true residuals ||A x - lambda x||, and the
//      pairs whose eigenvalue lies in [a, b], ascending.
// A threshold solve is step 3 on A itself: chunks of nev until a converged value lies beyond the
// threshold.
#pragma once

#include "core/solve_types.hpp"

namespace cudalanczos {

struct IntervalSettings {
  double a = 0, b = 0;     ///< the window, a < b; an infinite end takes everything on its side
  int degree = 0;          ///< the filter's degree; 0: the smallest with p(a) = p(b) <= end_value
  double end_value = 0.8;  ///< see degree (polynomial_filter.hpp) (docs/tuning.md#core-filter-end-value)
  /// Random vectors of the count estimate (degree products each); 0: no estimate. It sizes the chunks and
  /// is told to the user; where a window holds a few values it was a fifth of the solve at 16
  /// (docs/tuning.md#core-count-estimate-vectors).
  int count_vectors = 8;
  /// Vectors per filtered step: b > 1 runs the filtered solves as block Lanczos, p(A) applied to b vectors
  /// in each pass over A (Backend::apply_operator_block), degree passes for b vectors instead of b degree.
  int block_size = 1;
  /// The most basis columns the backend may hold (its device memory); 0: no limit. A window that needs
  /// more is solved in the room there is and reported short (IntervalResult::capacity_reached).
  int max_columns = 0;
};

struct IntervalResult {
  Result result;               ///< the pairs in [a, b], ascending; basis columns 0.. hold their vectors
  double lo = 0, hi = 0;       ///< the bounds of the spectrum the filter was built on
  int degree = 0;              ///< the filter's degree
  double end_value = 0;        ///< p(a) = p(b)
  double count_estimate = -1;  ///< eigenvalues in [a, b] by the kernel polynomial method (-1: not estimated)
  double count_error = 0;      ///< its standard error
  int chunks = 0;              ///< filtered solves, each on the complement of the ones before
  int found = 0;               ///< filtered pairs converged (the window's, and the first ones beyond its ends)
  long filter_applications = 0; ///< applications of p(A), degree products each
  bool capacity_reached = false; ///< no room for another chunk: the window may hold more
  int columns = 0;             ///< basis columns the solve held
};

/// All eigenpairs of the backend's operator in [w.a, w.b]. `base` gives the tolerance, the iteration
/// limit per chunk, the reorthogonalization, the seed and the norm estimate; which, nev and ncv are the
/// solve's own. Callbacks::error and Callbacks::stop apply; Callbacks::monitor sees the filtered values
/// p(theta) during step 3. The backend's basis is resized here. Throws Error on bad settings.
IntervalResult solve_interval(Backend &backend, const Settings &base, const Callbacks &callbacks, const IntervalSettings &w);

/// Every eigenpair at least as good as `threshold` by base.which (LargestAlgebraic: lambda >= threshold,
/// SmallestAlgebraic: lambda <= threshold, LargestMagnitude: |lambda| >= |threshold|); `relative`: the
/// threshold is that fraction of the first eigenvalue converged (LargestAlgebraic, LargestMagnitude), as
/// SLEPc's EPSSetThreshold takes it. In chunks of
/// base.nev pairs with base.ncv columns, until a converged value lies beyond the threshold; columns 0..
/// hold the vectors, best first. There is room for max(8 nev, 256) pairs, fewer where `max_columns` (as
/// in IntervalSettings) says so; when the room ran out first, Result::reason is MaxIterations and
/// Result::room_exhausted is set. The
/// backend's basis is resized here.
Result solve_to_threshold(Backend &backend, const Settings &base, const Callbacks &callbacks, double threshold, bool relative = false,
                          int max_columns = 0);

} // namespace cudalanczos
