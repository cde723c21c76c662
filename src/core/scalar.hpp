// The scalar type of the long vectors: double, or std::complex<double> in a build against a PETSc
// configured with complex scalars (CMake defines CUDALANCZOS_USE_COMPLEX=1 there, from PETSc's own
// PETSC_USE_COMPLEX, so that Scalar is always PetscScalar's layout).
//
// The Lanczos recurrence of a Hermitian operator is real either way: alpha_j = v_j^H A v_j and
// beta_j = ||w|| are real, so the projected matrix (tridiagonal, or arrowhead after a thick restart) is
// real symmetric and its eigenvectors are real. What becomes complex are the vectors and every
// coefficient that multiplies them: Gram-Schmidt's projections V^H w, the block variant's projected
// blocks, the Ritz vectors' combinations. Norms, alpha, beta, Ritz values and errors stay double.
#pragma once

#include <complex>

namespace cudalanczos {

#if defined(CUDALANCZOS_USE_COMPLEX) && CUDALANCZOS_USE_COMPLEX
using Scalar = std::complex<double>;
inline constexpr bool kComplexScalars = true;
#else
using Scalar = double;
inline constexpr bool kComplexScalars = false;
#endif

/// How many doubles one Scalar is: a Reducer sums an array of Scalars as this many times as many doubles
/// (std::complex<double> is laid out as two doubles, [complex.numbers]).
inline constexpr int kDoublesPerScalar = static_cast<int>(sizeof(Scalar) / sizeof(double));

// The operations below are the identity on double, so that the real build's arithmetic is unchanged
// (std::conj and std::real of a double would return std::complex<double> and double respectively, the
// first of which must not leak into real code).
inline double real_part(double x) { return x; }
inline double real_part(const std::complex<double> &z) { return z.real(); }
inline double conj_of(double x) { return x; }
inline std::complex<double> conj_of(const std::complex<double> &z) { return std::conj(z); }
/// |x|^2 without a square root.
inline double abs2(double x) { return x * x; }
inline double abs2(const std::complex<double> &z) { return std::norm(z); }

} // namespace cudalanczos
