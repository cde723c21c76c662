// Device operators: a dense matrix, a CSR matrix, or a user's device matvec, uploaded once and applied
// once per Lanczos step. apply() is const for the caller but uses per-operator scratch (the gemv
// workspace, the library handle's stream), so one operator serves one stream at a time.
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/kernels.cuh"

#include <string>
#include <utility>

namespace cudalanczos::cuda {
namespace {

// KernelFlavor::Default per matrix type, from bench/results/2026-11-30-h200.md (H200, copy 4202 GB/s):
//  dense: custom. From n = 6144 up both stream the matrix at 91-109 % of the copy bandwidth (custom
//         4209 GB/s at n = 8192, cuBLAS 3979) and the custom kernel is never slower; below that it is
//         ahead by 6-87 % (n = 4096 .. 256), where cuBLAS's dgemv costs more per launch.
//  CSR:   vendor. cuSPARSE was 1.47x faster on the 2-D Laplacian (5 per row) and 1.16x on the
//         Chung-Lu graph (16 per row, rows up to 4103); the custom kernel stays as KernelFlavor::Custom.
constexpr KernelFlavor kDenseDefault = KernelFlavor::Custom;
constexpr KernelFlavor kCsrDefault = KernelFlavor::Vendor;

KernelFlavor resolve(KernelFlavor f, KernelFlavor fallback) { return f == KernelFlavor::Default ? fallback : f; }

int resolve_device(int device)
{
  if (device >= 0) return device;
  int current = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&current));
  return current;
}

/// cudaMemcpy from pageable memory and cudaMemset may return before the device has finished them, and
/// they run on the default stream, which the backend's non-blocking stream does not wait for: without
/// this wait the first apply() could read a half-uploaded matrix or a workspace not yet zeroed.
void wait_for_uploads() { CUDALANCZOS_CHECK(cudaStreamSynchronize(nullptr)); }

std::string size_text(index_t rows, index_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

class DenseOperator final : public DeviceOperator {
public:
  DenseOperator(const DenseView &A, KernelFlavor flavor, int device)
      : device_(resolve_device(device)), rows_(A.rows), cols_(A.cols), flavor_(resolve(flavor, kDenseDefault))
  {
    if (A.rows < 0 || A.cols < 0 || A.ld < std::max<index_t>(1, A.rows) || (A.rows * A.cols > 0 && !A.values))
      throw Error("make_dense_operator: need rows, cols >= 0, ld >= max(1, rows) and values (rows = " +
                  std::to_string(A.rows) + ", cols = " + std::to_string(A.cols) + ", ld = " + std::to_string(A.ld) + ")");
    ScopedDevice guard(device_);
    // Our own leading dimension, a multiple of 16 doubles: every column starts on a 128-byte line, so
    // the gemv's 16-byte loads are aligned and each warp's column segment is whole cache lines. The
    // padding is zeroed (the gemv never reads it for a full tile, but it must never be NaN).
    ld_ = (std::max<index_t>(rows_, 1) + 15) / 16 * 16;
    const std::size_t count = static_cast<std::size_t>(ld_) * static_cast<std::size_t>(cols_);
    values_ = DeviceBuffer<double>(count, "dense operator matrix");
    if (count) {
      if (ld_ != rows_) CUDALANCZOS_CHECK(cudaMemset(values_.data(), 0, values_.bytes()));
      if (rows_ > 0)
        CUDALANCZOS_CHECK(cudaMemcpy2D(values_.data(), ld_ * sizeof(double), A.values, A.ld * sizeof(double),
                                       rows_ * sizeof(double), cols_, cudaMemcpyHostToDevice));
    }
    if (flavor_ == KernelFlavor::Custom) {
      workspace_ = DeviceBuffer<unsigned char>(kernels::dense_gemv_workspace_bytes(rows_, cols_), "dense gemv workspace");
      if (workspace_.bytes()) CUDALANCZOS_CHECK(cudaMemset(workspace_.data(), 0, workspace_.bytes()));
    } else {
      cublas_ = make_cublas(nullptr);
    }
    wait_for_uploads();
  }

  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  int device() const override { return device_; }

  void apply(const double *x, double *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (flavor_ == KernelFlavor::Custom) {
      kernels::dense_gemv(rows_, cols_, values_.data(), ld_, x, y, workspace_.data(), workspace_.bytes(), s);
      return;
    }
    if (rows_ == 0) return;
    if (cols_ == 0) { // cuBLAS returns at once for an empty product and would leave y unset
      CUDALANCZOS_CHECK(cudaMemsetAsync(y, 0, rows_ * sizeof(double), s));
      return;
    }
    const double one = 1.0, zero = 0.0;
    CUDALANCZOS_CHECK(cublasSetStream(cublas_.get(), s));
    CUDALANCZOS_CHECK(cublasDgemv_64(cublas_.get(), CUBLAS_OP_N, rows_, cols_, &one, values_.data(), ld_, x, 1, &zero, y, 1));
  }

  std::string description() const override
  {
    return "dense " + size_text(rows_, cols_) +
           (flavor_ == KernelFlavor::Custom ? ", custom tiled gemv" : ", cuBLAS dgemv");
  }
  std::size_t device_bytes() const override { return values_.bytes() + workspace_.bytes(); }

private:
  int device_;
  index_t rows_, cols_, ld_ = 1;
  KernelFlavor flavor_;
  DeviceBuffer<double> values_;
  DeviceBuffer<unsigned char> workspace_; // custom: the gemv's split partial sums and tile counters
  CublasHandle cublas_;                   // vendor: its stream is set to the caller's at each apply
};

class CsrOperator final : public DeviceOperator {
public:
  CsrOperator(const CsrView &A, KernelFlavor flavor, int device)
      : device_(resolve_device(device)), rows_(A.rows), cols_(A.cols), nnz_(A.nnz), flavor_(resolve(flavor, kCsrDefault))
  {
    validate(A);
    ScopedDevice guard(device_);
    rowptr_ = DeviceBuffer<int>(static_cast<std::size_t>(rows_) + 1, "CSR row pointers");
    CUDALANCZOS_CHECK(cudaMemcpy(rowptr_.data(), A.rowptr, rowptr_.bytes(), cudaMemcpyHostToDevice));
    if (nnz_ > 0) {
      colind_ = DeviceBuffer<int>(static_cast<std::size_t>(nnz_), "CSR column indices");
      values_ = DeviceBuffer<double>(static_cast<std::size_t>(nnz_), "CSR values");
      CUDALANCZOS_CHECK(cudaMemcpy(colind_.data(), A.colind, colind_.bytes(), cudaMemcpyHostToDevice));
      CUDALANCZOS_CHECK(cudaMemcpy(values_.data(), A.values, values_.bytes(), cudaMemcpyHostToDevice));
    }
    if (flavor_ == KernelFlavor::Vendor && rows_ > 0 && nnz_ > 0) setup_cusparse();
    wait_for_uploads();
  }

  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  int device() const override { return device_; }

  void apply(const double *x, double *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (rows_ == 0) return;
    if (flavor_ == KernelFlavor::Custom) {
      kernels::csr_spmv(rows_, nnz_, rowptr_.data(), colind_.data(), values_.data(), x, y, s);
      return;
    }
    if (nnz_ == 0) {
      CUDALANCZOS_CHECK(cudaMemsetAsync(y, 0, rows_ * sizeof(double), s));
      return;
    }
    const double one = 1.0, zero = 0.0;
    CUDALANCZOS_CHECK(cusparseSetStream(cusparse_.get(), s));
    CUDALANCZOS_CHECK(cusparseDnVecSetValues(x_.get(), const_cast<double *>(x)));
    CUDALANCZOS_CHECK(cusparseDnVecSetValues(y_.get(), y));
    CUDALANCZOS_CHECK(cusparseSpMV(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_.get(), x_.get(), &zero,
                                   y_.get(), CUDA_R_64F, kAlgorithm, buffer_.data()));
  }

  std::string description() const override
  {
    return "CSR " + size_text(rows_, cols_) + ", " + std::to_string(nnz_) + " nonzeros, " +
           (flavor_ == KernelFlavor::Custom ? "custom vector-per-row SpMV" : "cuSPARSE SpMV");
  }
  std::size_t device_bytes() const override
  {
    return rowptr_.bytes() + colind_.bytes() + values_.bytes() + buffer_.bytes();
  }

private:
  static constexpr cusparseSpMVAlg_t kAlgorithm = CUSPARSE_SPMV_CSR_ALG1;

  void validate(const CsrView &A) const
  {
    const auto fail = [&](const std::string &why) {
      throw Error("make_csr_operator: " + why + " (rows = " + std::to_string(A.rows) + ", cols = " +
                  std::to_string(A.cols) + ", nnz = " + std::to_string(A.nnz) + ")");
    };
    if (A.rows < 0 || A.cols < 0 || A.nnz < 0) fail("negative size");
    if (A.nnz > 2147483647 || A.rows > 2147483646) fail("32-bit indices cannot address this matrix");
    if (!A.rowptr || (A.nnz > 0 && (!A.colind || !A.values))) fail("missing arrays");
    if (A.rowptr[0] != 0 || A.rowptr[A.rows] != A.nnz) fail("rowptr must start at 0 and end at nnz");
    // An index outside the matrix would be an out-of-bounds read on the device: check once, here.
    for (index_t r = 0; r < A.rows; ++r)
      if (A.rowptr[r + 1] < A.rowptr[r]) fail("rowptr decreases at row " + std::to_string(r));
    for (index_t j = 0; j < A.nnz; ++j)
      if (A.colind[j] < 0 || A.colind[j] >= A.cols)
        fail("column index " + std::to_string(A.colind[j]) + " at entry " + std::to_string(j) + " is outside the matrix");
  }

  // Descriptors and the SpMV buffer are made once here, so apply() allocates nothing. The dense-vector
  // descriptors get their pointers at each apply; scratch vectors stand in for them during the
  // buffer-size query and the preprocessing, which analyse the matrix only.
  void setup_cusparse()
  {
    cusparse_ = make_cusparse(nullptr);
    cusparseSpMatDescr_t m{};
    CUDALANCZOS_CHECK(cusparseCreateCsr(&m, rows_, cols_, nnz_, rowptr_.data(), colind_.data(), values_.data(),
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    matrix_ = CusparseSpMat(m);
    DeviceBuffer<double> xs(static_cast<std::size_t>(std::max<index_t>(cols_, 1)), "SpMV setup scratch");
    DeviceBuffer<double> ys(static_cast<std::size_t>(rows_), "SpMV setup scratch");
    CUDALANCZOS_CHECK(cudaMemset(xs.data(), 0, xs.bytes()));
    cusparseDnVecDescr_t v{};
    CUDALANCZOS_CHECK(cusparseCreateDnVec(&v, cols_, xs.data(), CUDA_R_64F));
    x_ = CusparseDnVec(v);
    CUDALANCZOS_CHECK(cusparseCreateDnVec(&v, rows_, ys.data(), CUDA_R_64F));
    y_ = CusparseDnVec(v);
    const double one = 1.0, zero = 0.0;
    std::size_t bytes = 0;
    CUDALANCZOS_CHECK(cusparseSpMV_bufferSize(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_.get(),
                                              x_.get(), &zero, y_.get(), CUDA_R_64F, kAlgorithm, &bytes));
    buffer_ = DeviceBuffer<unsigned char>(bytes, "cuSPARSE SpMV buffer");
    // Preprocessing analyses the matrix once for faster products; it is an optimization, so a library
    // that does not offer it for this algorithm is not an error.
    const cusparseStatus_t preprocess = cusparseSpMV_preprocess(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                                matrix_.get(), x_.get(), &zero, y_.get(), CUDA_R_64F,
                                                                kAlgorithm, buffer_.data());
    if (preprocess != CUSPARSE_STATUS_NOT_SUPPORTED) CUDALANCZOS_CHECK(preprocess);
    wait_for_uploads(); // the scratch vectors go out of scope next
  }

  int device_;
  index_t rows_, cols_, nnz_;
  KernelFlavor flavor_;
  DeviceBuffer<int> rowptr_, colind_;
  DeviceBuffer<double> values_;
  CusparseHandle cusparse_;
  CusparseSpMat matrix_;
  CusparseDnVec x_, y_;
  DeviceBuffer<unsigned char> buffer_;
};

class CallbackOperator final : public DeviceOperator {
public:
  CallbackOperator(index_t rows, index_t cols, DeviceApply apply, std::string description, int device)
      : device_(resolve_device(device)), rows_(rows), cols_(cols), apply_(std::move(apply)),
        description_(std::move(description))
  {
    if (rows < 0 || cols < 0) throw Error("make_callback_operator: negative size");
    if (!apply_) throw Error("make_callback_operator: no apply function");
  }
  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  int device() const override { return device_; }
  void apply(const double *x, double *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    apply_(x, y, stream);
  }
  std::string description() const override { return description_; }
  std::size_t device_bytes() const override { return 0; }

private:
  int device_;
  index_t rows_, cols_;
  DeviceApply apply_;
  std::string description_;
};

} // namespace

std::shared_ptr<DeviceOperator> make_dense_operator(const DenseView &A, KernelFlavor flavor, int device)
{
  return std::make_shared<DenseOperator>(A, flavor, device);
}

std::shared_ptr<DeviceOperator> make_csr_operator(const CsrView &A, KernelFlavor flavor, int device)
{
  return std::make_shared<CsrOperator>(A, flavor, device);
}

std::shared_ptr<DeviceOperator> make_callback_operator(index_t rows, index_t cols, DeviceApply apply,
                                                       std::string description, int device)
{
  return std::make_shared<CallbackOperator>(rows, cols, std::move(apply), std::move(description), device);
}

} // namespace cudalanczos::cuda
