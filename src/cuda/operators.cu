// Device operators: a dense matrix, a CSR matrix (cuSPARSE or our kernel; without its values where the
// off-diagonal entries all share one, PatternCsrOperator), or a user's device matvec, uploaded once and applied
// once per Lanczos step. apply() is const for the caller but uses per-operator scratch (the gemv
// workspace, the library handle's stream), so one operator serves one stream at a time. apply_block()
// (block Lanczos: b columns at once) reads the matrix once: cuBLAS dgemm for a dense matrix, cuSPARSE
// SpMM for CSR; its library state (the custom dense flavor's cuBLAS handle, the SpMM descriptors and
// buffer) is made on first use, mutable scratch like the rest. The dense and the general CSR operator
// also run on a matrix the caller already holds on the device (make_*_operator_on_device): the same
// kernels on the caller's pointers, with only the scratch of their own. Values and vectors are Scalars:
// with complex ones the cuBLAS calls are the Z routines and the cuSPARSE data type is CUDA_C_64F
// (blas.hpp).
#include "cuda/blas.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/csr_scan.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/kernels.cuh"
#include "cuda/upload.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudalanczos::cuda {
namespace text {
// A value for description(): "%g", or "re+imi" for a complex one. (Not in the anonymous namespace: a
// build uses one of the two, and an unused function of internal linkage is a warning.)
inline std::string scalar_text(double x)
{
  char c[32];
  std::snprintf(c, sizeof c, "%g", x);
  return c;
}
inline std::string scalar_text(const std::complex<double> &z)
{
  char c[64];
  std::snprintf(c, sizeof c, "%g%+gi", z.real(), z.imag());
  return c;
}
} // namespace text

namespace {
using text::scalar_text;

// KernelFlavor::Default per matrix type (the measurements: docs/tuning.md#cuda-operator-flavors-by-matrix-type):
//  dense: custom: as fast as cuBLAS's dgemv where both stream the matrix at the bandwidth, faster
//         below that, where cuBLAS costs more per launch.
//  CSR:   vendor for single vectors (cuSPARSE beats the custom kernel at its own lane rule), but for
//         short regular rows: rows of at most kShortRows entries on average, none longer than 4 times
//         that (stencils, low-order finite elements), take the custom kernel at kernels::pattern_lanes'
//         count, which is faster there. Blocks (apply_block) take kernels::csr_spmm whatever the flavor
//         but an explicit vendor: faster than cuSPARSE's SpMM, or level with it.
constexpr KernelFlavor kDenseDefault = KernelFlavor::Custom;
constexpr double kShortRows = 8;

/// The lanes a row for the custom CSR kernel where the default flavor takes it (short regular rows), else 0.
int short_row_lanes(index_t rows, index_t nnz, index_t longest)
{
  if (rows <= 0 || nnz <= 0) return 0;
  const double mean = static_cast<double>(nnz) / static_cast<double>(rows);
  if (mean > kShortRows || static_cast<double>(longest) > 4 * mean) return 0;
  return kernels::pattern_lanes(rows, nnz, longest);
}
constexpr KernelFlavor kCsrDefault = KernelFlavor::Vendor;

KernelFlavor resolve(KernelFlavor f, KernelFlavor fallback) { return f == KernelFlavor::Default ? fallback : f; }

int resolve_device(int device)
{
  if (device >= 0) return device;
  int current = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&current));
  return current;
}

/// The upload's first CUDA call, after its host passes: it waits for the context a warm_up() is making
/// (upload.hpp), and the wait shows as its own phase.
void context_for_upload(int device)
{
  if (device < 0) return;
  UploadPhaseScope phase(UploadPhase::Context);
  initialize_context(device);
}

/// cudaMemcpy from pageable memory and cudaMemset may return before the device has finished them, and
/// they run on the default stream, which the backend's non-blocking stream does not wait for: without
/// this wait the first apply() could read a half-uploaded matrix or a workspace not yet zeroed.
void wait_for_uploads() { CUDALANCZOS_CHECK(cudaStreamSynchronize(nullptr)); }

std::string size_text(index_t rows, index_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }


/// A device copy of count host values (none for count = 0), staged through pinned memory (upload.hpp).
template <class T>
DeviceBuffer<T> upload(const T *host, std::size_t count, const char *what)
{
  DeviceBuffer<T> d(count, what);
  upload_bytes(d.data(), host, d.bytes());
  return d;
}

/// Y[0:rows, 0:b] = 0 on `s`: an empty product (cuBLAS and cuSPARSE return at once and leave Y unset).
void zero_block(Scalar *Y, index_t ldy, index_t rows, int b, cudaStream_t s)
{
  if (rows > 0 && b > 0)
    CUDALANCZOS_CHECK(cudaMemset2DAsync(Y, ldy * sizeof(Scalar), 0, rows * sizeof(Scalar), b, s));
}

/// An operator's scratch, made by its first use of that size and grown, never shrunk, so a solve's
/// steady state allocates nothing. An operator serves one stream at a time but not always the same
/// one: the whole device finishes before the old storage goes.
template <class T>
T *scratch(DeviceBuffer<T> &buffer, std::size_t count, const char *what)
{
  grow(buffer, count, what, [] { CUDALANCZOS_CHECK(cudaDeviceSynchronize()); });
  return buffer.data();
}

/// The interleaved copy of a block of b columns of `cols` rows (kernels::csr_spmm, pattern_spmm).
Scalar *interleaved_scratch(DeviceBuffer<Scalar> &buffer, index_t cols, int b)
{
  return scratch(buffer, static_cast<std::size_t>(std::max<index_t>(cols, 1)) * static_cast<std::size_t>(std::max(b, 1)),
                 "interleaved block");
}

struct DestroyDnMat {
  void operator()(cusparseDnMatDescr_t d) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cusparseDestroyDnMat(d)); }
};
using CusparseDnMat = UniqueHandle<cusparseDnMatDescr_t, DestroyDnMat>;

CusparseDnMat make_dense_matrix(index_t rows, index_t cols, index_t ld, const Scalar *values)
{
  cusparseDnMatDescr_t d{};
  CUDALANCZOS_CHECK(cusparseCreateDnMat(&d, rows, cols, ld, const_cast<Scalar *>(values), blas::kDataType, CUSPARSE_ORDER_COL));
  return CusparseDnMat(d);
}

/// Throws unless p is device memory of `device` (or managed memory, which every device reaches): the
/// matrix of an operator made on the caller's device memory (make_*_operator_on_device).
void check_device_pointer(const void *p, int device, const char *what)
{
  cudaPointerAttributes a{};
  CUDALANCZOS_CHECK(cudaPointerGetAttributes(&a, p));
  if (a.type == cudaMemoryTypeManaged) return;
  if (a.type != cudaMemoryTypeDevice)
    throw Error(std::string(what) + " is not device memory (a host pointer?); the *_on_device operators use device memory in place");
  if (a.device != device)
    throw Error(std::string(what) + " lives on device " + std::to_string(a.device) + ", the operator was asked for device " +
                std::to_string(device));
}

/// An array of an operator's matrix: its own device copy (`owned` holds it), or the caller's device
/// memory used in place (`owned` empty).
template <class T>
struct MatrixArray {
  DeviceBuffer<T> owned;
  const T *data = nullptr; // what the kernels read: owned.data() or the caller's pointer

  static MatrixArray own(DeviceBuffer<T> buffer)
  {
    MatrixArray a;
    a.owned = std::move(buffer);
    a.data = a.owned.data();
    return a;
  }
  static MatrixArray borrow(const T *device_pointer)
  {
    MatrixArray a;
    a.data = device_pointer;
    return a;
  }
};

class DenseOperator final : public DeviceOperator {
public:
  /// A copy of the host matrix A in our own layout.
  DenseOperator(const DenseView &A, KernelFlavor flavor, int device)
      : device_(resolve_device(device)), rows_(A.rows), cols_(A.cols), flavor_(resolve(flavor, kDenseDefault))
  {
    check_view(A, "make_dense_operator");
    ScopedDevice guard(device_);
    // Our own leading dimension, a multiple of 16 Scalars: every column starts on a 128-byte line, so
    // the gemv's 16-byte loads are aligned and each warp's column segment is whole cache lines. The
    // padding is zeroed (the gemv never reads it for a full tile, but it must never be NaN).
    ld_ = (std::max<index_t>(rows_, 1) + 15) / 16 * 16;
    const std::size_t count = static_cast<std::size_t>(ld_) * static_cast<std::size_t>(cols_);
    values_ = MatrixArray<Scalar>::own(DeviceBuffer<Scalar>(count, "dense operator matrix"));
    upload_matrix(values_.owned.data(), static_cast<std::size_t>(ld_), A.values, static_cast<std::size_t>(A.ld),
                  static_cast<std::size_t>(rows_), static_cast<std::size_t>(cols_)); // the padding as zeros
    make_scratch();
  }

  /// The caller's device matrix A, used in place with its own leading dimension.
  DenseOperator(const DenseView &A, KernelFlavor flavor, int device, std::string origin)
      : device_(resolve_device(device)), rows_(A.rows), cols_(A.cols), ld_(A.ld), in_place_(true), origin_(std::move(origin))
  {
    check_view(A, "make_dense_operator_on_device");
    ScopedDevice guard(device_);
    if (rows_ * cols_ > 0) check_device_pointer(A.values, device_, "make_dense_operator_on_device: the values");
    values_ = MatrixArray<Scalar>::borrow(A.values);
    // kDenseDefault (custom) was measured on our own layout; another one gets cuBLAS unless custom is asked for.
    const bool our_layout = ld_ % 16 == 0 && reinterpret_cast<std::uintptr_t>(A.values) % 128 == 0;
    flavor_ = resolve(flavor, our_layout ? kDenseDefault : KernelFlavor::Vendor);
    vendor_for_layout_ = flavor == KernelFlavor::Default && !our_layout;
    make_scratch();
  }

  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  int device() const override { return device_; }

  void apply(const Scalar *x, Scalar *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (flavor_ == KernelFlavor::Custom) {
      kernels::dense_gemv(rows_, cols_, values_.data, ld_, x, y, workspace_.data(), workspace_.bytes(), s);
      return;
    }
    if (rows_ == 0) return;
    if (cols_ == 0) { // cuBLAS returns at once for an empty product and would leave y unset
      CUDALANCZOS_CHECK(cudaMemsetAsync(y, 0, rows_ * sizeof(Scalar), s));
      return;
    }
    const Scalar one = 1.0, zero = 0.0;
    CUDALANCZOS_CHECK(cublasSetStream(cublas_.get(), s));
    CUDALANCZOS_CHECK(blas::gemv(cublas_.get(), CUBLAS_OP_N, rows_, cols_, &one, values_.data, ld_, x, 1, &zero, y, 1));
  }

  // One dgemm for both flavors: b gemvs would stream the matrix b times. b = 1 stays the gemv apply().
  void apply_block(const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, int b, void *stream) const override
  {
    check_block(ldx, ldy, b);
    if (b == 1) return apply(X, Y, stream);
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (rows_ == 0 || b == 0) return;
    if (cols_ == 0) return zero_block(Y, ldy, rows_, b, s);
    if (!cublas_) cublas_ = make_cublas(s); // the custom flavor's, made on the first block product
    const Scalar one = 1.0, zero = 0.0;
    CUDALANCZOS_CHECK(cublasSetStream(cublas_.get(), s));
    CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
    CUDALANCZOS_CHECK(blas::gemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, rows_, b, cols_, &one, values_.data, ld_, X, ldx,
                                 &zero, Y, ldy));
  }

  std::string description() const override
  {
    std::string d = "dense " + size_text(rows_, cols_) + (flavor_ == KernelFlavor::Custom ? ", custom tiled gemv" : ", cuBLAS dgemv");
    if (vendor_for_layout_)
      d += " (leading dimension " + std::to_string(ld_) + ": not the 16-aligned layout the custom gemv was measured on)";
    if (in_place()) d += " (" + origin_ + ", used in place)";
    return d;
  }
  std::size_t device_bytes() const override { return values_.owned.bytes() + workspace_.bytes(); }
  bool in_place() const override { return in_place_; }

private:
  static void check_view(const DenseView &A, const char *what)
  {
    if (A.rows < 0 || A.cols < 0 || A.ld < std::max<index_t>(1, A.rows) || (A.rows * A.cols > 0 && !A.values))
      throw Error(std::string(what) + ": need rows, cols >= 0, ld >= max(1, rows) and values (rows = " + std::to_string(A.rows) +
                  ", cols = " + std::to_string(A.cols) + ", ld = " + std::to_string(A.ld) + ")");
  }

  // The custom gemv's workspace (zeroed) or the vendor flavor's cuBLAS handle, on the current device.
  void make_scratch()
  {
    if (flavor_ == KernelFlavor::Custom) {
      workspace_ = DeviceBuffer<unsigned char>(kernels::dense_gemv_workspace_bytes(rows_, cols_), "dense gemv workspace");
      if (workspace_.bytes()) CUDALANCZOS_CHECK(cudaMemset(workspace_.data(), 0, workspace_.bytes()));
    } else {
      cublas_ = make_cublas(nullptr);
    }
    wait_for_uploads();
  }

  int device_;
  index_t rows_, cols_, ld_ = 1;
  KernelFlavor flavor_ = KernelFlavor::Custom;
  bool in_place_ = false;          // the caller's device matrix (make_dense_operator_on_device)
  bool vendor_for_layout_ = false; // in place, default flavor: cuBLAS because of the caller's layout
  std::string origin_;             // in place: whose memory (description)
  MatrixArray<Scalar> values_;
  DeviceBuffer<unsigned char> workspace_; // custom: the gemv's split partial sums and tile counters
  // Vendor: made here; custom: made by the first apply_block. Its stream is set to the caller's at each
  // apply.
  mutable CublasHandle cublas_;
};

class CsrOperator final : public DeviceOperator {
public:
  /// A copy of the host matrix A, which has been through validate_csr (make_csr_operator).
  CsrOperator(const CsrView &A, KernelFlavor flavor, int device)
      : device_(resolve_device(device)), rows_(A.rows), cols_(A.cols), nnz_(A.nnz), flavor_(resolve(flavor, kCsrDefault)),
        interleaved_blocks_(flavor != KernelFlavor::Vendor), block_lanes_(default_block_lanes(flavor, A))
  {
    if (flavor == KernelFlavor::Default) {
      UploadPhaseScope phase(UploadPhase::Prepare);
      choose_short_rows(longest_row_on_host(A.rowptr, rows_));
    }
    ScopedDevice guard(device_);
    rowptr_ = MatrixArray<int>::own(upload(A.rowptr, static_cast<std::size_t>(rows_) + 1, "CSR row pointers"));
    colind_ = MatrixArray<int>::own(upload(A.colind, static_cast<std::size_t>(nnz_), "CSR column indices"));
    values_ = MatrixArray<Scalar>::own(upload(A.values, static_cast<std::size_t>(nnz_), "CSR values"));
    if (flavor_ == KernelFlavor::Vendor && rows_ > 0 && nnz_ > 0) setup_cusparse();
    wait_for_uploads();
  }

  /// The caller's device CSR matrix A, used in place. Only the sizes and where the arrays live are
  /// checked: the indices are on the device (see make_csr_operator_on_device).
  CsrOperator(const CsrView &A, KernelFlavor flavor, int device, std::string origin)
      : device_(resolve_device(device)), rows_(A.rows), cols_(A.cols), nnz_(A.nnz), flavor_(resolve(flavor, kCsrDefault)),
        interleaved_blocks_(flavor != KernelFlavor::Vendor), block_lanes_(default_block_lanes(flavor, A)), in_place_(true),
        origin_(std::move(origin))
  {
    const auto fail = [&](const std::string &why) {
      throw Error("make_csr_operator_on_device: " + why + " (rows = " + std::to_string(A.rows) + ", cols = " +
                  std::to_string(A.cols) + ", nnz = " + std::to_string(A.nnz) + ")");
    };
    if (A.rows < 0 || A.cols < 0 || A.nnz < 0) fail("negative size");
    if (A.nnz > 2147483647 || A.rows > 2147483646 || A.cols > 2147483647) fail("32-bit indices cannot address this matrix");
    if (!A.rowptr || (A.nnz > 0 && (!A.colind || !A.values))) fail("missing arrays");
    ScopedDevice guard(device_);
    check_device_pointer(A.rowptr, device_, "make_csr_operator_on_device: the row pointers");
    if (nnz_ > 0) {
      check_device_pointer(A.colind, device_, "make_csr_operator_on_device: the column indices");
      check_device_pointer(A.values, device_, "make_csr_operator_on_device: the values");
    }
    rowptr_ = MatrixArray<int>::borrow(A.rowptr);
    colind_ = MatrixArray<int>::borrow(A.colind);
    values_ = MatrixArray<Scalar>::borrow(A.values);
    if (flavor == KernelFlavor::Default && rows_ > 0 && nnz_ > 0) { // the row lengths from the device, once
      DeviceBuffer<int> longest(1, "longest row");
      kernels::longest_row(rows_, rowptr_.data, longest.data(), nullptr);
      int host = 0;
      CUDALANCZOS_CHECK(cudaMemcpy(&host, longest.data(), sizeof host, cudaMemcpyDeviceToHost));
      choose_short_rows(host);
    }
    if (flavor_ == KernelFlavor::Vendor && rows_ > 0 && nnz_ > 0) setup_cusparse();
    wait_for_uploads();
  }

  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  int device() const override { return device_; }

  void apply(const Scalar *x, Scalar *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (rows_ == 0) return;
    if (flavor_ == KernelFlavor::Custom) {
      kernels::csr_spmv(rows_, nnz_, rowptr_.data, colind_.data, values_.data, x, y, s, short_row_lanes_);
      return;
    }
    if (nnz_ == 0) {
      CUDALANCZOS_CHECK(cudaMemsetAsync(y, 0, rows_ * sizeof(Scalar), s));
      return;
    }
    const Scalar one = 1.0, zero = 0.0;
    CUDALANCZOS_CHECK(cusparseSetStream(cusparse_.get(), s));
    CUDALANCZOS_CHECK(cusparseDnVecSetValues(x_.get(), const_cast<Scalar *>(x)));
    CUDALANCZOS_CHECK(cusparseDnVecSetValues(y_.get(), y));
    CUDALANCZOS_CHECK(cusparseSpMV(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_.get(), x_.get(), &zero,
                                   y_.get(), blas::kDataType, kAlgorithm, buffer_.data()));
  }

  // The step fused into the custom kernel where the default flavor took it for short rows (1 lane a
  // row): from 4 lanes a row the fused step was slower than the two kernels
  // (docs/tuning.md#cuda-filter-steps-with-the-product-fused-in), and cuSPARSE's product has no place for it.
  bool apply_chebyshev_step(const ChebyshevStep &st, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                            void *stream) const override
  {
    if (!fuses_chebyshev_steps()) return false;
    ScopedDevice guard(device_);
    kernels::csr_chebyshev_step(rows_, nnz_, rowptr_.data, colind_.data, values_.data, st, cur, prev, next, y,
                                static_cast<cudaStream_t>(stream), short_row_lanes_);
    return true;
  }

  bool fuses_chebyshev_steps() const override { return short_row_lanes_ > 0 && short_row_lanes_ <= 2 && rows_ == cols_; }

  bool apply_chebyshev_step_block(const ChebyshevStep &st, int b, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                                  void *stream) const override
  {
    if (!fuses_chebyshev_steps()) return false;
    ScopedDevice guard(device_);
    kernels::csr_chebyshev_step_block(rows_, nnz_, rowptr_.data, colind_.data, values_.data, st, b, cur, prev, next, y,
                                      static_cast<cudaStream_t>(stream), short_row_lanes_);
    return true;
  }

  // The matrix read once for the b columns: kernels::csr_spmm (interleaved columns), or one cuSPARSE
  // SpMM when the vendor flavor was asked for. b = 1: apply().
  void apply_block(const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, int b, void *stream) const override
  {
    if (b == 1) return DeviceOperator::apply_block(X, ldx, Y, ldy, b, stream);
    check_block(ldx, ldy, b);
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (rows_ == 0 || b == 0) return;
    if (interleaved_blocks_)
      return kernels::csr_spmm(rows_, cols_, nnz_, rowptr_.data, colind_.data, values_.data, b, X, ldx, Y, ldy,
                               interleaved_scratch(interleaved_, cols_, b), s, block_lanes_);
    if (nnz_ == 0) return zero_block(Y, ldy, rows_, b, s);
    const Scalar one = 1.0, zero = 0.0;
    CUDALANCZOS_CHECK(cusparseSetStream(cusparse_.get(), s));
    prepare_spmm(X, ldx, Y, ldy, b);
    CUDALANCZOS_CHECK(cusparseDnMatSetValues(spmm_x_.get(), const_cast<Scalar *>(X)));
    CUDALANCZOS_CHECK(cusparseDnMatSetValues(spmm_y_.get(), Y));
    CUDALANCZOS_CHECK(cusparseSpMM(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                   spmm_matrix_.get(), spmm_x_.get(), &zero, spmm_y_.get(), blas::kDataType, kBlockAlgorithm,
                                   spmm_buffer_.data()));
  }

  std::string description() const override
  {
    const bool narrowed = rowptr_.owned.data() != nullptr;
    return "CSR " + size_text(rows_, cols_) + ", " + std::to_string(nnz_) + " nonzeros, " +
           (short_row_lanes_ > 0 ? "short rows: custom SpMV, " + lanes_text(short_row_lanes_) + ", interleaved block products" +
                                       block_lanes_text()
            : flavor_ == KernelFlavor::Custom ? "custom vector-per-row SpMV"
            : interleaved_blocks_             ? "cuSPARSE SpMV, interleaved block products" + block_lanes_text()
                                              : "cuSPARSE SpMV and SpMM") +
           (!in_place_ ? ""
            : narrowed ? " (" + origin_ + ": the values used in place, the 64-bit indices narrowed to 32 bits)"
                       : " (" + origin_ + ", used in place)");
  }
  /// An in-place operator made on 64-bit indices narrowed into `rowptr` and `colind` (the arrays its
  /// row pointers and column indices already point into) takes them over: the pointers, the cuSPARSE
  /// descriptors made on them and the values (the caller's) are unchanged.
  void keep_indices(DeviceBuffer<int> rowptr, DeviceBuffer<int> colind)
  {
    if (!in_place_ || rowptr.data() != rowptr_.data || colind.data() != (nnz_ > 0 ? colind_.data : nullptr))
      throw Error("CsrOperator::keep_indices: the arrays are not the ones the operator reads");
    rowptr_ = MatrixArray<int>::own(std::move(rowptr));
    if (nnz_ > 0) colind_ = MatrixArray<int>::own(std::move(colind));
  }
  std::size_t device_bytes() const override
  {
    return rowptr_.owned.bytes() + colind_.owned.bytes() + values_.owned.bytes() + buffer_.bytes() + spmm_buffer_.bytes() +
           interleaved_.bytes();
  }
  bool in_place() const override { return in_place_; }

private:
  /// The default flavor's lanes a row for block products (kernels::csr_block_lanes); 0, csr_spmm's own
  /// rule, for an explicit flavor.
  static int default_block_lanes(KernelFlavor flavor, const CsrView &A)
  {
    return flavor == KernelFlavor::Default ? kernels::csr_block_lanes(A.rows, A.nnz) : 0;
  }
  static std::string lanes_text(int lanes) { return std::to_string(lanes) + (lanes > 1 ? " lanes" : " lane") + " a row"; }
  std::string block_lanes_text() const { return block_lanes_ > 0 ? " at " + lanes_text(block_lanes_) : ""; }

  /// The default flavor's choice for short regular rows (short_row_lanes): the custom kernel at that many
  /// lanes a row instead of cuSPARSE.
  void choose_short_rows(index_t longest)
  {
    short_row_lanes_ = short_row_lanes(rows_, nnz_, longest);
    if (short_row_lanes_ > 0) flavor_ = KernelFlavor::Custom;
  }

  static constexpr cusparseSpMVAlg_t kAlgorithm = CUSPARSE_SPMV_CSR_ALG1;
  // CSR_ALG1 takes column-major dense blocks with any leading dimension (ALG2 and ALG3 want row-major).
  static constexpr cusparseSpMMAlg_t kBlockAlgorithm = CUSPARSE_SPMM_CSR_ALG1;

  // The SpMM descriptors and buffer for blocks of b columns with these leading dimensions, made on the
  // first product of that shape and kept: a solve uses one shape, so the steady state allocates nothing.
  // The matrix gets a descriptor of its own (the SpMV one carries that algorithm's preprocessing). The
  // buffer only grows; the preprocessing is redone for each new shape, as it belongs to the buffer.
  void prepare_spmm(const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, int b) const
  {
    if (spmm_b_ == b && spmm_ldx_ == ldx && spmm_ldy_ == ldy) return;
    spmm_b_ = 0; // until the shape is complete: a throw below leaves no half-made shape behind
    if (!spmm_matrix_) spmm_matrix_ = matrix_descriptor();
    spmm_x_ = make_dense_matrix(cols_, b, ldx, X);
    spmm_y_ = make_dense_matrix(rows_, b, ldy, Y);
    const Scalar one = 1.0, zero = 0.0;
    std::size_t bytes = 0;
    CUDALANCZOS_CHECK(cusparseSpMM_bufferSize(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                              CUSPARSE_OPERATION_NON_TRANSPOSE, &one, spmm_matrix_.get(), spmm_x_.get(),
                                              &zero, spmm_y_.get(), blas::kDataType, kBlockAlgorithm, &bytes));
    scratch(spmm_buffer_, bytes, "cuSPARSE SpMM buffer");
    const cusparseStatus_t preprocess = cusparseSpMM_preprocess(
        cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, spmm_matrix_.get(),
        spmm_x_.get(), &zero, spmm_y_.get(), blas::kDataType, kBlockAlgorithm, spmm_buffer_.data());
    if (preprocess != CUSPARSE_STATUS_NOT_SUPPORTED) CUDALANCZOS_CHECK(preprocess); // an optimization only
    spmm_b_ = b, spmm_ldx_ = ldx, spmm_ldy_ = ldy;
  }

  // A cuSPARSE descriptor of the matrix. It takes non-const pointers, but SpMV and SpMM only read the
  // matrix (the caller's device arrays, when in place, are never written).
  CusparseSpMat matrix_descriptor() const
  {
    cusparseSpMatDescr_t m{};
    CUDALANCZOS_CHECK(cusparseCreateCsr(&m, rows_, cols_, nnz_, const_cast<int *>(rowptr_.data), const_cast<int *>(colind_.data),
                                        const_cast<Scalar *>(values_.data), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, blas::kDataType));
    return CusparseSpMat(m);
  }

  // Descriptors and the SpMV buffer are made once here, so apply() allocates nothing. The dense-vector
  // descriptors get their pointers at each apply; scratch vectors stand in for them during the
  // buffer-size query and the preprocessing, which analyse the matrix only.
  void setup_cusparse()
  {
    UploadPhaseScope phase(UploadPhase::Analysis);
    cusparse_ = make_cusparse(nullptr);
    matrix_ = matrix_descriptor();
    DeviceBuffer<Scalar> xs(static_cast<std::size_t>(std::max<index_t>(cols_, 1)), "SpMV setup scratch");
    DeviceBuffer<Scalar> ys(static_cast<std::size_t>(rows_), "SpMV setup scratch");
    CUDALANCZOS_CHECK(cudaMemset(xs.data(), 0, xs.bytes()));
    cusparseDnVecDescr_t v{};
    CUDALANCZOS_CHECK(cusparseCreateDnVec(&v, cols_, xs.data(), blas::kDataType));
    x_ = CusparseDnVec(v);
    CUDALANCZOS_CHECK(cusparseCreateDnVec(&v, rows_, ys.data(), blas::kDataType));
    y_ = CusparseDnVec(v);
    const Scalar one = 1.0, zero = 0.0;
    std::size_t bytes = 0;
    CUDALANCZOS_CHECK(cusparseSpMV_bufferSize(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, matrix_.get(),
                                              x_.get(), &zero, y_.get(), blas::kDataType, kAlgorithm, &bytes));
    buffer_ = DeviceBuffer<unsigned char>(bytes, "cuSPARSE SpMV buffer");
    // Preprocessing analyses the matrix once for faster products; it is an optimization, so a library
    // that does not offer it for this algorithm is not an error.
    const cusparseStatus_t preprocess = cusparseSpMV_preprocess(cusparse_.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                                matrix_.get(), x_.get(), &zero, y_.get(), blas::kDataType,
                                                                kAlgorithm, buffer_.data());
    if (preprocess != CUSPARSE_STATUS_NOT_SUPPORTED) CUDALANCZOS_CHECK(preprocess);
    wait_for_uploads(); // the scratch vectors go out of scope next
  }

  int device_;
  index_t rows_, cols_, nnz_;
  KernelFlavor flavor_;
  bool interleaved_blocks_; // apply_block: kernels::csr_spmm (else cuSPARSE SpMM)
  int block_lanes_;         // csr_spmm's lanes a row; 0: its own rule (an explicit flavor)
  int short_row_lanes_ = 0; // > 0: the default flavor took the custom kernel at this many lanes (choose_short_rows)
  bool in_place_ = false; // the caller's device matrix (make_csr_operator_on_device)
  std::string origin_;    // in place: whose memory (description)
  MatrixArray<int> rowptr_, colind_;
  MatrixArray<Scalar> values_;
  CusparseHandle cusparse_;
  CusparseSpMat matrix_;
  CusparseDnVec x_, y_;
  DeviceBuffer<unsigned char> buffer_;
  // apply_block (vendor): the shape the descriptors and the buffer were made for (b = 0: none yet)
  mutable int spmm_b_ = 0;
  mutable index_t spmm_ldx_ = 0, spmm_ldy_ = 0;
  mutable CusparseSpMat spmm_matrix_;
  mutable CusparseDnMat spmm_x_, spmm_y_;
  mutable DeviceBuffer<unsigned char> spmm_buffer_;
  mutable DeviceBuffer<Scalar> interleaved_; // apply_block, unless the vendor flavor was asked for
};

// The general CSR kernels move 12 bytes per stored entry (value and column index) and gather x; when
// every off-diagonal value is the same (graph adjacency, unweighted graph Laplacians, constant-
// coefficient stencils) the values carry nothing, and kernels::pattern_spmv moves 4.
class PatternCsrOperator final : public DeviceOperator {
public:
  PatternCsrOperator(const CsrView &A, const UniformPattern &p, int device)
      : device_(resolve_device(device)), rows_(A.rows), nnz_(A.nnz), entries_(static_cast<index_t>(p.colind.size())),
        offdiagonal_(p.offdiagonal), diagonal_(p.diagonal)
  {
    {
      UploadPhaseScope phase(UploadPhase::Prepare);
      lanes_ = kernels::pattern_lanes(rows_, entries_, longest_row_on_host(p.rowptr.data(), rows_));
    }
    ScopedDevice guard(device_);
    rowptr_ = upload(p.rowptr.data(), p.rowptr.size(), "pattern row pointers");
    colind_ = upload(p.colind.data(), p.colind.size(), "pattern column indices");
    diagonal_vector_ = upload(p.diagonal_vector.data(), p.diagonal_vector.size(), "pattern diagonal"); // empty: one value
    wait_for_uploads();
  }

  /// The split made on the device from the caller's device matrix (uniform_pattern_on_device), kept.
  PatternCsrOperator(index_t nnz, DeviceUniformPattern p, int device, std::string origin)
      : device_(device), rows_(static_cast<index_t>(p.rowptr.size()) - 1), nnz_(nnz), entries_(p.entries),
        lanes_(kernels::pattern_lanes(rows_, entries_, p.longest)), offdiagonal_(p.offdiagonal), diagonal_(p.diagonal),
        rowptr_(std::move(p.rowptr)), colind_(std::move(p.colind)), diagonal_vector_(std::move(p.diagonal_vector)),
        origin_(std::move(origin))
  {
  }

  index_t rows() const override { return rows_; }
  index_t cols() const override { return rows_; }
  int device() const override { return device_; }

  void apply(const Scalar *x, Scalar *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    kernels::pattern_spmv(rows_, entries_, rowptr_.data(), colind_.data(), offdiagonal_, diagonal_, diagonal_vector_.data(), x, y,
                          static_cast<cudaStream_t>(stream), lanes_);
  }

  bool apply_chebyshev_step(const ChebyshevStep &st, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                            void *stream) const override
  {
    ScopedDevice guard(device_);
    kernels::pattern_chebyshev_step(rows_, entries_, rowptr_.data(), colind_.data(), offdiagonal_, diagonal_,
                                    diagonal_vector_.data(), st, cur, prev, next, y, static_cast<cudaStream_t>(stream), lanes_);
    return true;
  }

  bool fuses_chebyshev_steps() const override { return true; }

  bool apply_chebyshev_step_block(const ChebyshevStep &st, int b, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                                  void *stream) const override
  {
    ScopedDevice guard(device_);
    kernels::pattern_chebyshev_step_block(rows_, entries_, rowptr_.data(), colind_.data(), offdiagonal_, diagonal_,
                                          diagonal_vector_.data(), st, b, cur, prev, next, y, static_cast<cudaStream_t>(stream), lanes_);
    return true;
  }

  // kernels::pattern_spmm: the pattern read once for the b columns.
  void apply_block(const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, int b, void *stream) const override
  {
    if (b == 1) return DeviceOperator::apply_block(X, ldx, Y, ldy, b, stream);
    check_block(ldx, ldy, b);
    ScopedDevice guard(device_);
    if (b == 0) return;
    kernels::pattern_spmm(rows_, entries_, rowptr_.data(), colind_.data(), offdiagonal_, diagonal_,
                          diagonal_vector_.data(), b, X, ldx, Y, ldy,
                          interleaved_scratch(interleaved_, rows_, b), static_cast<cudaStream_t>(stream), lanes_);
  }

  std::string description() const override
  {
    const std::string c = scalar_text(offdiagonal_);
    return "CSR " + size_text(rows_, rows_) + ", " + std::to_string(nnz_) + " nonzeros, pattern SpMV (off-diagonal entries all " +
           c + (diagonal_vector_.size() ? ", diagonal stored apart)" : ")") +
           (origin_.empty() ? "" : " (split on the device from " + origin_ + ")");
  }
  std::size_t device_bytes() const override
  {
    return rowptr_.bytes() + colind_.bytes() + diagonal_vector_.bytes() + interleaved_.bytes();
  }

private:
  int device_;
  index_t rows_, nnz_, entries_;
  int lanes_ = 1; // per row, kernels::pattern_lanes
  Scalar offdiagonal_, diagonal_;
  DeviceBuffer<int> rowptr_, colind_;
  DeviceBuffer<Scalar> diagonal_vector_; // empty (data() null: the kernels take diagonal_ for every row) or one a row
  std::string origin_; // split on the device from the caller's matrix: whose (description); empty: uploaded
  mutable DeviceBuffer<Scalar> interleaved_; // apply_block
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
  void apply(const Scalar *x, Scalar *y, void *stream) const override
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
  context_for_upload(device);
  return std::make_shared<DenseOperator>(A, flavor, device);
}

std::shared_ptr<DeviceOperator> make_csr_operator(const CsrView &A, KernelFlavor flavor, int device)
{
  std::optional<UniformPattern> pattern;
  {
    UploadPhaseScope phase(UploadPhase::Prepare);
    validate_csr(A); // once, for either operator: both read every index
    if (flavor == KernelFlavor::Default) pattern = uniform_pattern(A);
  }
  context_for_upload(device);
  if (pattern) return std::make_shared<PatternCsrOperator>(A, *pattern, device);
  return std::make_shared<CsrOperator>(A, flavor, device);
}

std::shared_ptr<DeviceOperator> make_callback_operator(index_t rows, index_t cols, DeviceApply apply,
                                                       std::string description, int device)
{
  return std::make_shared<CallbackOperator>(rows, cols, std::move(apply), std::move(description), device);
}

std::shared_ptr<DeviceOperator> make_dense_operator_on_device(const DenseView &deviceA, KernelFlavor flavor, int device,
                                                              std::string origin)
{
  return std::make_shared<DenseOperator>(deviceA, flavor, device, std::move(origin));
}

std::shared_ptr<DeviceOperator> make_csr_operator_on_device(const CsrView &deviceA, KernelFlavor flavor, int device,
                                                            std::string origin)
{
  return std::make_shared<CsrOperator>(deviceA, flavor, device, std::move(origin));
}

std::shared_ptr<DeviceOperator> make_pattern_operator_on_device(const CsrView &deviceA, int device, std::string origin)
{
  const int d = resolve_device(device);
  ScopedDevice guard(d);
  check_device_pointer(deviceA.rowptr, d, "make_pattern_operator_on_device: the row pointers");
  if (deviceA.nnz > 0) {
    check_device_pointer(deviceA.colind, d, "make_pattern_operator_on_device: the column indices");
    check_device_pointer(deviceA.values, d, "make_pattern_operator_on_device: the values");
  }
  std::optional<DeviceUniformPattern> p = uniform_pattern_on_device(deviceA);
  if (!p) return nullptr;
  return std::make_shared<PatternCsrOperator>(deviceA.nnz, std::move(*p), d, std::move(origin));
}

namespace {

/// A device CSR matrix with 64-bit indices as one with 32-bit ones: its row pointers and column indices
/// narrowed into arrays of its own (on the legacy default stream, as the in-place set-ups run), its
/// values the caller's.
struct NarrowedCsr {
  DeviceBuffer<int> rowptr, colind;
  CsrView view;
};

NarrowedCsr narrow_on_device(const WideCsrView &A, int device, const char *who)
{
  const auto fail = [&](const std::string &why) {
    throw Error(std::string(who) + ": " + why + " (rows = " + std::to_string(A.rows) + ", cols = " + std::to_string(A.cols) +
                ", nnz = " + std::to_string(A.nnz) + ")");
  };
  constexpr index_t most = std::numeric_limits<int>::max();
  if (A.rows < 0 || A.cols < 0 || A.nnz < 0) fail("negative size");
  if (A.nnz > most || A.rows >= most || A.cols > most)
    fail("the device kernels read 32-bit indices, and this matrix has more than 2^31 - 1 entries, rows or columns on one process: "
         "distribute it over more processes");
  if (!A.rowptr || (A.nnz > 0 && (!A.colind || !A.values))) fail("missing arrays");
  check_device_pointer(A.rowptr, device, (std::string(who) + ": the row pointers").c_str());
  if (A.nnz > 0) check_device_pointer(A.colind, device, (std::string(who) + ": the column indices").c_str());
  NarrowedCsr n;
  n.rowptr = DeviceBuffer<int>(static_cast<std::size_t>(A.rows) + 1, "row pointers narrowed to 32 bits");
  n.colind = DeviceBuffer<int>(static_cast<std::size_t>(A.nnz), "column indices narrowed to 32 bits");
  kernels::narrow_indices(A.rows + 1, A.rowptr, n.rowptr.data(), nullptr);
  kernels::narrow_indices(A.nnz, A.colind, n.colind.data(), nullptr);
  n.view = CsrView{A.rows, A.cols, A.nnz, n.rowptr.data(), n.colind.data(), A.values};
  return n;
}

} // namespace

std::shared_ptr<DeviceOperator> make_csr_operator_on_device(const WideCsrView &deviceA, KernelFlavor flavor, int device,
                                                            std::string origin)
{
  const int d = resolve_device(device);
  ScopedDevice guard(d);
  NarrowedCsr n = narrow_on_device(deviceA, d, "make_csr_operator_on_device");
  auto op = std::make_shared<CsrOperator>(n.view, flavor, d, std::move(origin));
  op->keep_indices(std::move(n.rowptr), std::move(n.colind));
  return op;
}

std::shared_ptr<DeviceOperator> make_pattern_operator_on_device(const WideCsrView &deviceA, int device, std::string origin)
{
  const int d = resolve_device(device);
  ScopedDevice guard(d);
  // The split copies what it keeps into arrays of its own, so the narrowed indices go when it is made.
  const NarrowedCsr n = narrow_on_device(deviceA, d, "make_pattern_operator_on_device");
  return make_pattern_operator_on_device(n.view, d, std::move(origin));
}

int device_of(const void *p)
{
  if (!p) return -1;
  cudaPointerAttributes a{};
  CUDALANCZOS_CHECK(cudaPointerGetAttributes(&a, p));
  return a.type == cudaMemoryTypeDevice ? a.device : -1;
}

} // namespace cudalanczos::cuda
