// What the single-vector driver (lanczos_driver.cpp) and the block driver (block_lanczos.cpp) share:
// the ordering key of `which`, the check for non-finite scalars, and the verification's probabilistic
// certificate. Internal to src/core.
#pragma once

#include "core/lanczos_driver.hpp"

#include <functional>
#include <limits>
#include <vector>

namespace cudalanczos::detail {

inline constexpr double eps = std::numeric_limits<double>::epsilon();

/// A verification round may end on a certificate whose chance of having missed a wanted eigenvalue is
/// at most this (certified_complement).
inline constexpr double kCertificateMissProbability = 1e-8;

/// The callbacks with Callbacks::error (relative: res / |theta|) and Callbacks::eigenvalue (value +
/// shift) filled in where the caller left them empty.
Callbacks with_defaults(Callbacks c, const Settings &s);

/// Ordering key for `which` on an eigenvalue of the user's problem: smaller is better.
double badness(const Settings &s, double lambda);

/// Throws Error naming `what` when x is NaN or Inf (the operator produced it).
void check_finite(double x, const char *what);

/// Verification, first cycle of a round: `w` holds the Ritz values (of the operator, before the shift
/// is removed) of a Krylov space K_k(A, X) of the complement of `locked` vectors, X random (one vector,
/// or a block: K_k(A, X) contains K_k(A, x_1)). Whether the Kuczynski-Wozniakowski bound says that an
/// eigenvalue at least as good as `worst` (within `slack`) hides in the complement with probability
/// at most kCertificateMissProbability. Only for wanted values at an end of the spectrum and an
/// eigenvalue map that is a translation; false otherwise.
bool certified_complement(const Settings &s, const Callbacks &c, const std::vector<double> &w, int k,
                          index_t n, int locked, double worst, double slack);

/// max |V^T V - I| over the basis's first k columns (k reductions; once per solve).
double orthogonality(Backend &b, int k);

/// Puts the converged pairs (basis columns 0..r.nconv-1, with r's eigenvalues and errors) in the order
/// of `key` (smaller first): locking and verification rounds append them in the order they converged.
void sort_converged(Backend &b, Result &r, const std::function<double(double)> &key);

} // namespace cudalanczos::detail
