// Eigensolvers for the small projected problem of the Lanczos driver (host, serial, O(m^2)..O(m^3)).
//
// tridiagonal_qr is the thesis's Algorithm 3: implicit symmetric QR with Wilkinson shift on a
// tridiagonal matrix, accumulating the Givens rotations into Z. symmetric_eigen reduces a dense
// symmetric matrix (the arrowhead left by a thick restart) to tridiagonal form by Householder
// reflections first. Both are our own code; tests/core compares them with LAPACK's dstev/dsyev.
#pragma once

#include <complex>

namespace cudalanczos {

/// Eigen-decomposition of the symmetric tridiagonal T = tridiag(e, d, e) of order n.
///   d[0..n-1]  diagonal; on return the eigenvalues, in no particular order
///   e[0..n-2]  off-diagonal; destroyed
///   Z          n x n, column-major, leading dimension ldz >= n; on return Z_in * Q where T = Q diag(d) Q^T
///              (pass the identity to get T's eigenvectors). Z may be null: then only eigenvalues.
/// Off-diagonals are deflated when |e_k| <= eps * (|d_k| + |d_k+1|), eps the machine epsilon, anywhere
/// in the matrix (not only at the bottom), so graded and already-diagonal matrices converge.
/// Each sweep works on the bottom-most unreduced block, rescaled by a power of two (exact) so that
/// entries near overflow or underflow are safe; a 2 x 2 block is diagonalized directly by one rotation.
/// As in LAPACK's dsteqr, a sweep chases from the block's larger-|d| end towards the smaller one (QR or,
/// on the reversed block, QL), which graded matrices need.
/// Cost: O(n) flops per sweep plus O(n) per rotation applied to Z, i.e. O(n^2) per eigenvalue with Z.
/// Returns the number of sweeps (2 x 2 solves included); n = 0 and 1 need none, nor does a diagonal T.
/// Throws cudalanczos::Error after 30 n sweeps without convergence (never seen on finite input), for
/// NaN/Inf input (naming the entry) and for n < 0 or ldz < n.
int tridiagonal_qr(int n, double *d, double *e, double *Z, int ldz);

/// The same with Z of `zrows` rows (ldz >= zrows): each rotation acts on Z's rows independently, so
/// passing the last rows of Z_in gives the last rows of Z_in * Q, bit for bit as the full Z would.
int tridiagonal_qr(int n, double *d, double *e, double *Z, int ldz, int zrows);

/// Eigen-decomposition of the dense symmetric S (n x n, column-major, lds >= n; only the lower
/// triangle is read; S is destroyed): Householder tridiagonalization, then tridiagonal_qr.
/// On return w[0..n-1] holds the eigenvalues in ascending order and Z (n x n, ldz >= n) the
/// orthonormal eigenvectors, column j belonging to w[j]. Z may be null: then only eigenvalues.
/// Throws cudalanczos::Error for NaN/Inf in the lower triangle and for n < 0, lds < n or ldz < n.
void symmetric_eigen(int n, double *S, int lds, double *w, double *Z, int ldz);

/// The same, Z (zrows x n, ldz >= zrows) receiving only the last zrows rows of the eigenvectors, bit for
/// bit those of the full Z, in O(n^2 zrows) instead of O(n^3) for them: what a Ritz pair's residual
/// estimate |beta y_last| needs, at every look inside a cycle (Driver's end_early).
void symmetric_eigen(int n, double *S, int lds, double *w, double *Z, int ldz, int zrows);

/// Eigen-decomposition of the dense complex Hermitian S (n x n, column-major, lds >= n; only the lower
/// triangle is read, the imaginary parts of the diagonal are ignored; S is destroyed): the block
/// variant's projected matrix and Gram matrices in the complex build. Householder reflections
/// I - tau v v^H (tau real) reduce S to a Hermitian tridiagonal matrix, a diagonal unitary similarity
/// makes its off-diagonal real and non-negative, tridiagonal_qr diagonalizes that, and the
/// eigenvectors are the reflections times the phases times the real ones. w and Z as symmetric_eigen
/// (ascending, orthonormal columns); Z (zrows x n, ldz >= zrows) receives the last zrows rows. A
/// real symmetric S gives symmetric_eigen's eigenvalues to rounding (not bit for bit: other reflections).
/// Tests compare it with LAPACK's zheev.
void hermitian_eigen(int n, std::complex<double> *S, int lds, double *w, std::complex<double> *Z, int ldz, int zrows);
void hermitian_eigen(int n, std::complex<double> *S, int lds, double *w, std::complex<double> *Z, int ldz);

/// A real symmetric matrix is Hermitian: symmetric_eigen, so that code written for Scalar (double in the
/// real build) calls hermitian_eigen in either build and the real build keeps its own solver.
inline void hermitian_eigen(int n, double *S, int lds, double *w, double *Z, int ldz) { symmetric_eigen(n, S, lds, w, Z, ldz); }
inline void hermitian_eigen(int n, double *S, int lds, double *w, double *Z, int ldz, int zrows)
{
  symmetric_eigen(n, S, lds, w, Z, ldz, zrows);
}

} // namespace cudalanczos
