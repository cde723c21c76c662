// cuBLAS and cuSPARSE in the build's Scalar (core/scalar.hpp): one overload per routine for double (the
// D routines, CUDA_R_64F) and one for std::complex<double> (the Z routines, CUDA_C_64F; the complex
// passed as cuDoubleComplex, which has its layout). Each returns the library's status, so that the call
// sites keep CUDALANCZOS_CHECK around the call as for any other library call.
//
// kAdjoint is V^H's operation: the transpose for double (the real build's calls are the ones it always
// made), the conjugate transpose for complex. dotc conjugates its first argument (cublasZdotc; Ddot).
#pragma once

#include "core/scalar.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <complex>
#include <cstdint>

namespace cudalanczos::cuda::blas {

inline constexpr cublasOperation_t kAdjoint = kComplexScalars ? CUBLAS_OP_C : CUBLAS_OP_T;
/// The cuSPARSE / CUDA data type of a Scalar (values, vectors and the compute type).
inline constexpr cudaDataType kDataType = kComplexScalars ? CUDA_C_64F : CUDA_R_64F;

using std::int64_t;
using Z = std::complex<double>;

inline cuDoubleComplex *z(Z *p) { return reinterpret_cast<cuDoubleComplex *>(p); }
inline const cuDoubleComplex *z(const Z *p) { return reinterpret_cast<const cuDoubleComplex *>(p); }

inline cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int64_t m, int64_t n, const double *alpha, const double *A,
                           int64_t lda, const double *x, int64_t incx, const double *beta, double *y, int64_t incy)
{
  return cublasDgemv_64(h, op, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
inline cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int64_t m, int64_t n, const Z *alpha, const Z *A, int64_t lda,
                           const Z *x, int64_t incx, const Z *beta, Z *y, int64_t incy)
{
  return cublasZgemv_64(h, op, m, n, z(alpha), z(A), lda, z(x), incx, z(beta), z(y), incy);
}

inline cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                           const double *alpha, const double *A, int64_t lda, const double *B, int64_t ldb, const double *beta,
                           double *C, int64_t ldc)
{
  return cublasDgemm_64(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                           const Z *alpha, const Z *A, int64_t lda, const Z *B, int64_t ldb, const Z *beta, Z *C, int64_t ldc)
{
  return cublasZgemm_64(h, ta, tb, m, n, k, z(alpha), z(A), lda, z(B), ldb, z(beta), z(C), ldc);
}

/// result = x^H y
inline cublasStatus_t dotc(cublasHandle_t h, int64_t n, const double *x, int64_t incx, const double *y, int64_t incy,
                           double *result)
{
  return cublasDdot_64(h, n, x, incx, y, incy, result);
}
inline cublasStatus_t dotc(cublasHandle_t h, int64_t n, const Z *x, int64_t incx, const Z *y, int64_t incy, Z *result)
{
  return cublasZdotc_64(h, n, z(x), incx, z(y), incy, z(result));
}

/// *result = x^H x, one double: for complex x the real dot of its 2n doubles, a plain sum of squares. It
/// overflows to Inf as the real build's does, where zdotc's complex products gave NaN (Inf - Inf) for
/// entries near 1e303; Inf is what the driver's scaling into range handles
/// (docs/tuning.md#cuda-complex-squared-norms-as-a-real-dot).
inline cublasStatus_t self_dot(cublasHandle_t h, int64_t n, const double *x, double *result)
{
  return cublasDdot_64(h, n, x, 1, x, 1, result);
}
inline cublasStatus_t self_dot(cublasHandle_t h, int64_t n, const Z *x, double *result)
{
  const double *d = reinterpret_cast<const double *>(x);
  return cublasDdot_64(h, 2 * n, d, 1, d, 1, result);
}

/// x *= alpha, alpha real
inline cublasStatus_t scal(cublasHandle_t h, int64_t n, const double *alpha, double *x, int64_t incx)
{
  return cublasDscal_64(h, n, alpha, x, incx);
}
inline cublasStatus_t scal(cublasHandle_t h, int64_t n, const double *alpha, Z *x, int64_t incx)
{
  return cublasZdscal_64(h, n, alpha, z(x), incx);
}

} // namespace cudalanczos::cuda::blas
