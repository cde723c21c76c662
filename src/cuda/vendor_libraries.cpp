// cuBLAS, cuSPARSE and cuSOLVER opened at their first call, not when the plugin loads.
//
// Linked the usual way, the three libraries (and cuBLASLt, which cuBLAS needs: over 500 MB of code) are
// mapped and relocated by every program that loads the plugin, also one that never selects cudalanczos
// (docs/tuning.md#petsc-loading-the-plugin). Instead each function the backend calls is defined here with the
// header's own signature, which the compiler checks: its first call opens the library (dlopen of the
// soname the build was linked against) and looks the function up once. A program whose PETSc links the
// libraries itself (a CUDA PETSc) finds them loaded already. Where a library cannot be opened, its
// functions return the library's "not initialized" status and its message functions say why, so that
// the caller's CUDALANCZOS_CHECK reports the loader's message.
//
// Compiled with hidden visibility (CMakeLists.txt): the definitions serve this library alone and never
// stand in for the real functions in the rest of the process.
#include "cuda/vendor_libraries.hpp"

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

namespace {

class VendorLibrary {
public:
  explicit VendorLibrary(const char *soname) : soname_(soname) {}

  /// The address of `name` in the library, opened at the first call; null where it cannot be had.
  void *symbol(const char *name)
  {
    std::call_once(opened_, [this] {
      handle_ = dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
      if (handle_) failure_ = std::string(soname_) + " lacks a function the plugin calls: older than the toolkit it was built with?";
      else failure_ = std::string("cudalanczos could not open ") + soname_ + ": " + dlerror();
    });
    return handle_ ? dlsym(handle_, name) : nullptr;
  }

  /// Why symbol() returned null (written once, when the library is opened), for its message functions.
  const char *failure() const { return failure_.c_str(); }

private:
  const char *soname_;
  std::once_flag opened_;
  void *handle_ = nullptr;
  std::string failure_;
};

// The sonames come from the toolkit the plugin was built with (CMakeLists.txt).
VendorLibrary cublas_library{CUDALANCZOS_CUBLAS_SONAME};
VendorLibrary cusparse_library{CUDALANCZOS_CUSPARSE_SONAME};
VendorLibrary cusolver_library{CUDALANCZOS_CUSOLVER_SONAME};

// The function `name` of `library`, looked up at the first call of this definition.
template <class Function>
Function lookup(VendorLibrary &library, const char *name)
{
  return reinterpret_cast<Function>(library.symbol(name));
}

} // namespace

void cudalanczos::cuda::open_vendor_libraries() noexcept
{
  (void)cublas_library.symbol("cublasCreate_v2");
  (void)cusparse_library.symbol("cusparseCreate");
  (void)cusolver_library.symbol("cusolverDnCreate");
}

// Each definition forwards its arguments to the library's function of the same name, or returns
// `failure` where there is none. `params` and `args` are the parameter list and its names.
#define CUDALANCZOS_VENDOR_FUNCTION(library, failure, result, name, params, args) \
  extern "C" result name params                                                    \
  {                                                                                \
    using Function          = result(*) params;                                   \
    static Function forward = lookup<Function>(library, #name);                   \
    return forward ? forward args : failure;                                       \
  }

#define CUDALANCZOS_CUBLAS(name, params, args) \
  CUDALANCZOS_VENDOR_FUNCTION(cublas_library, CUBLAS_STATUS_NOT_INITIALIZED, cublasStatus_t, name, params, args)
#define CUDALANCZOS_CUSPARSE(name, params, args) \
  CUDALANCZOS_VENDOR_FUNCTION(cusparse_library, CUSPARSE_STATUS_NOT_INITIALIZED, cusparseStatus_t, name, params, args)
#define CUDALANCZOS_CUSOLVER(name, params, args) \
  CUDALANCZOS_VENDOR_FUNCTION(cusolver_library, CUSOLVER_STATUS_NOT_INITIALIZED, cusolverStatus_t, name, params, args)

// ---- cuBLAS (the _v2 names are what cublas_v2.h's macros call)

CUDALANCZOS_CUBLAS(cublasCreate_v2, (cublasHandle_t * handle), (handle))
CUDALANCZOS_CUBLAS(cublasDestroy_v2, (cublasHandle_t handle), (handle))
CUDALANCZOS_CUBLAS(cublasSetStream_v2, (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
CUDALANCZOS_CUBLAS(cublasSetPointerMode_v2, (cublasHandle_t handle, cublasPointerMode_t mode), (handle, mode))
CUDALANCZOS_VENDOR_FUNCTION(cublas_library, cublas_library.failure(), const char *, cublasGetStatusName, (cublasStatus_t status), (status))
CUDALANCZOS_VENDOR_FUNCTION(cublas_library, cublas_library.failure(), const char *, cublasGetStatusString, (cublasStatus_t status), (status))
CUDALANCZOS_CUBLAS(cublasDdot_v2_64,
                   (cublasHandle_t handle, int64_t n, const double *x, int64_t incx, const double *y, int64_t incy, double *result),
                   (handle, n, x, incx, y, incy, result))
CUDALANCZOS_CUBLAS(cublasZdotc_v2_64,
                   (cublasHandle_t handle, int64_t n, const cuDoubleComplex *x, int64_t incx, const cuDoubleComplex *y, int64_t incy,
                    cuDoubleComplex *result),
                   (handle, n, x, incx, y, incy, result))
CUDALANCZOS_CUBLAS(cublasDscal_v2_64, (cublasHandle_t handle, int64_t n, const double *alpha, double *x, int64_t incx),
                   (handle, n, alpha, x, incx))
CUDALANCZOS_CUBLAS(cublasZdscal_v2_64, (cublasHandle_t handle, int64_t n, const double *alpha, cuDoubleComplex *x, int64_t incx),
                   (handle, n, alpha, x, incx))
CUDALANCZOS_CUBLAS(cublasDgemv_v2_64,
                   (cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n, const double *alpha, const double *A, int64_t lda,
                    const double *x, int64_t incx, const double *beta, double *y, int64_t incy),
                   (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
CUDALANCZOS_CUBLAS(cublasZgemv_v2_64,
                   (cublasHandle_t handle, cublasOperation_t trans, int64_t m, int64_t n, const cuDoubleComplex *alpha,
                    const cuDoubleComplex *A, int64_t lda, const cuDoubleComplex *x, int64_t incx, const cuDoubleComplex *beta,
                    cuDoubleComplex *y, int64_t incy),
                   (handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy))
CUDALANCZOS_CUBLAS(cublasDgemm_v2_64,
                   (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                    const double *alpha, const double *A, int64_t lda, const double *B, int64_t ldb, const double *beta, double *C,
                    int64_t ldc),
                   (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
CUDALANCZOS_CUBLAS(cublasZgemm_v2_64,
                   (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                    const cuDoubleComplex *alpha, const cuDoubleComplex *A, int64_t lda, const cuDoubleComplex *B, int64_t ldb,
                    const cuDoubleComplex *beta, cuDoubleComplex *C, int64_t ldc),
                   (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))

// ---- cuSPARSE

CUDALANCZOS_CUSPARSE(cusparseCreate, (cusparseHandle_t * handle), (handle))
CUDALANCZOS_CUSPARSE(cusparseDestroy, (cusparseHandle_t handle), (handle))
CUDALANCZOS_CUSPARSE(cusparseSetStream, (cusparseHandle_t handle, cudaStream_t stream), (handle, stream))
CUDALANCZOS_VENDOR_FUNCTION(cusparse_library, cusparse_library.failure(), const char *, cusparseGetErrorName, (cusparseStatus_t status), (status))
CUDALANCZOS_VENDOR_FUNCTION(cusparse_library, cusparse_library.failure(), const char *, cusparseGetErrorString, (cusparseStatus_t status), (status))
CUDALANCZOS_CUSPARSE(cusparseCreateCsr,
                     (cusparseSpMatDescr_t * descr, int64_t rows, int64_t cols, int64_t nnz, void *offsets, void *columns, void *values,
                      cusparseIndexType_t offset_type, cusparseIndexType_t column_type, cusparseIndexBase_t base, cudaDataType value_type),
                     (descr, rows, cols, nnz, offsets, columns, values, offset_type, column_type, base, value_type))
CUDALANCZOS_CUSPARSE(cusparseDestroySpMat, (cusparseConstSpMatDescr_t descr), (descr))
CUDALANCZOS_CUSPARSE(cusparseCreateDnVec, (cusparseDnVecDescr_t * descr, int64_t size, void *values, cudaDataType value_type),
                     (descr, size, values, value_type))
CUDALANCZOS_CUSPARSE(cusparseDestroyDnVec, (cusparseConstDnVecDescr_t descr), (descr))
CUDALANCZOS_CUSPARSE(cusparseDnVecSetValues, (cusparseDnVecDescr_t descr, void *values), (descr, values))
CUDALANCZOS_CUSPARSE(cusparseCreateDnMat,
                     (cusparseDnMatDescr_t * descr, int64_t rows, int64_t cols, int64_t ld, void *values, cudaDataType value_type,
                      cusparseOrder_t order),
                     (descr, rows, cols, ld, values, value_type, order))
CUDALANCZOS_CUSPARSE(cusparseDestroyDnMat, (cusparseConstDnMatDescr_t descr), (descr))
CUDALANCZOS_CUSPARSE(cusparseDnMatSetValues, (cusparseDnMatDescr_t descr, void *values), (descr, values))
CUDALANCZOS_CUSPARSE(cusparseSpMV_bufferSize,
                     (cusparseHandle_t handle, cusparseOperation_t op, const void *alpha, cusparseConstSpMatDescr_t A,
                      cusparseConstDnVecDescr_t x, const void *beta, cusparseDnVecDescr_t y, cudaDataType compute_type,
                      cusparseSpMVAlg_t alg, size_t *bytes),
                     (handle, op, alpha, A, x, beta, y, compute_type, alg, bytes))
CUDALANCZOS_CUSPARSE(cusparseSpMV_preprocess,
                     (cusparseHandle_t handle, cusparseOperation_t op, const void *alpha, cusparseConstSpMatDescr_t A,
                      cusparseConstDnVecDescr_t x, const void *beta, cusparseDnVecDescr_t y, cudaDataType compute_type,
                      cusparseSpMVAlg_t alg, void *buffer),
                     (handle, op, alpha, A, x, beta, y, compute_type, alg, buffer))
CUDALANCZOS_CUSPARSE(cusparseSpMV,
                     (cusparseHandle_t handle, cusparseOperation_t op, const void *alpha, cusparseConstSpMatDescr_t A,
                      cusparseConstDnVecDescr_t x, const void *beta, cusparseDnVecDescr_t y, cudaDataType compute_type,
                      cusparseSpMVAlg_t alg, void *buffer),
                     (handle, op, alpha, A, x, beta, y, compute_type, alg, buffer))
CUDALANCZOS_CUSPARSE(cusparseSpMM_bufferSize,
                     (cusparseHandle_t handle, cusparseOperation_t op_a, cusparseOperation_t op_b, const void *alpha,
                      cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta, cusparseDnMatDescr_t C,
                      cudaDataType compute_type, cusparseSpMMAlg_t alg, size_t *bytes),
                     (handle, op_a, op_b, alpha, A, B, beta, C, compute_type, alg, bytes))
CUDALANCZOS_CUSPARSE(cusparseSpMM_preprocess,
                     (cusparseHandle_t handle, cusparseOperation_t op_a, cusparseOperation_t op_b, const void *alpha,
                      cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta, cusparseDnMatDescr_t C,
                      cudaDataType compute_type, cusparseSpMMAlg_t alg, void *buffer),
                     (handle, op_a, op_b, alpha, A, B, beta, C, compute_type, alg, buffer))
CUDALANCZOS_CUSPARSE(cusparseSpMM,
                     (cusparseHandle_t handle, cusparseOperation_t op_a, cusparseOperation_t op_b, const void *alpha,
                      cusparseConstSpMatDescr_t A, cusparseConstDnMatDescr_t B, const void *beta, cusparseDnMatDescr_t C,
                      cudaDataType compute_type, cusparseSpMMAlg_t alg, void *buffer),
                     (handle, op_a, op_b, alpha, A, B, beta, C, compute_type, alg, buffer))

// ---- cuSOLVER

CUDALANCZOS_CUSOLVER(cusolverDnCreate, (cusolverDnHandle_t * handle), (handle))
CUDALANCZOS_CUSOLVER(cusolverDnDestroy, (cusolverDnHandle_t handle), (handle))
CUDALANCZOS_CUSOLVER(cusolverDnSetStream, (cusolverDnHandle_t handle, cudaStream_t stream), (handle, stream))
CUDALANCZOS_CUSOLVER(cusolverDnDsyevd_bufferSize,
                     (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, const double *A, int lda,
                      const double *W, int *lwork),
                     (handle, jobz, uplo, n, A, lda, W, lwork))
CUDALANCZOS_CUSOLVER(cusolverDnDsyevd,
                     (cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double *A, int lda, double *W,
                      double *work, int lwork, int *info),
                     (handle, jobz, uplo, n, A, lda, W, work, lwork, info))
