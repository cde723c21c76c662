// The CUDA backend: the Backend interface (core/backend.hpp) with the basis in device memory.
//
// This header is plain C++ (no CUDA headers) so that the PETSc layer, compiled by the host compiler,
// can build one. Everything device-side lives behind it in src/cuda/*.cu.
//
// Per Lanczos step only O(k) scalars cross to the host (inner products for the reduction); the
// matrix is uploaded once (DeviceOperator) and reused while the PETSc matrix is unchanged.
//
// Matrices, vectors and operators hold Scalars (core/scalar.hpp): double, or std::complex<double> in a
// build against a complex PETSc (PetscScalar then has that layout, so PETSc's arrays are passed as
// they are). Complex arrays must be 16-byte aligned (as cudaMalloc's and PetscMalloc's are).
#pragma once

#include "core/backend.hpp"
#include "core/chebyshev_filter.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace cudalanczos::cuda {

/// Which kernels run the operator and the vector operations.
enum class KernelFlavor {
  Default, ///< per matrix type, whichever measured faster (docs/tuning.md#cuda-operator-flavors-by-matrix-type)
  Custom,  ///< the thesis kernels: tiled shared-memory dense gemv, CSR SpMV, warp-shuffle reductions
  Vendor   ///< cuBLAS (gemv, dot, nrm2) and cuSPARSE (SpMV)
};
const char *to_string(KernelFlavor);

/// Local rows of a dense matrix: rows x cols, column-major, leading dimension ld >= rows. On the host
/// (make_dense_operator) or on the device (make_dense_operator_on_device).
struct DenseView {
  index_t rows = 0, cols = 0, ld = 0;
  const Scalar *values = nullptr;
};

/// Local rows of a CSR matrix with indices of type Index: PETSc's PetscInt, `int` or, in a PETSc
/// configured --with-64-bit-indices, `std::int64_t`. The kernels read 32-bit indices (CsrView): on the
/// host (make_csr_operator) the caller narrows 64-bit ones; on the device (make_csr_operator_on_device,
/// make_pattern_operator_on_device) a WideCsrView's are narrowed there into the operator's own arrays.
template <class Index>
struct BasicCsrView {
  index_t rows = 0, cols = 0, nnz = 0;
  const Index *rowptr = nullptr; ///< rows + 1 entries, rowptr[0] == 0
  const Index *colind = nullptr; ///< nnz entries
  const Scalar *values = nullptr;
};
using CsrView = BasicCsrView<int>;
using WideCsrView = BasicCsrView<std::int64_t>;

/// y = A x with x, y device pointers of cols / rows entries; stream is a cudaStream_t.
using DeviceApply = std::function<void(const Scalar *x, Scalar *y, void *stream)>;
/// y = A x with x, y host arrays (the fallback for operators that are not on the device).
using HostApply = std::function<void(const Scalar *x, Scalar *y)>;

/// An operator that lives on one device: uploaded once, applied many times.
class DeviceOperator {
public:
  virtual ~DeviceOperator() = default;
  virtual index_t rows() const = 0;
  virtual index_t cols() const = 0;
  virtual int device() const = 0;
  /// y = A x on `stream` (cudaStream_t); x and y are device pointers.
  virtual void apply(const Scalar *x, Scalar *y, void *stream) const = 0;
  /// Y = A X for b columns on `stream`: X is cols() x b with leading dimension ldx >= cols(), Y is
  /// rows() x b with ldy >= rows() (device pointers, column-major; Y must not overlap X). The default
  /// applies the columns one by one; the dense and the cuSPARSE CSR operators read the matrix once.
  virtual void apply_block(const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, int b, void *stream) const
  {
    check_block(ldx, ldy, b);
    for (int j = 0; j < b; ++j) apply(X + j * ldx, Y + j * ldy, stream);
  }
  /// One step of a polynomial filter with the product fused in (kernels::csr_chebyshev_step): next and y
  /// as kernels::chebyshev_step forms them from w = A cur, on `stream`, with w never stored. Returns
  /// false, having queued nothing, when the operator has no fused step (the default): the caller then
  /// forms w with apply() and runs the step on its own.
  virtual bool apply_chebyshev_step(const ChebyshevStep &, const Scalar * /*cur*/, const Scalar * /*prev*/,
                                    Scalar * /*next*/, Scalar * /*y*/, void * /*stream*/) const
  {
    return false;
  }
  /// Whether apply_chebyshev_step and apply_chebyshev_step_block take the product fused in (queue work
  /// and return true).
  virtual bool fuses_chebyshev_steps() const { return false; }
  /// apply_chebyshev_step for b columns at once (kernels::csr_chebyshev_step_block): cur, prev, next and
  /// y hold them interleaved, row i's b entries at [i * b, i * b + b). Returns false, having queued
  /// nothing, without a fused step (the default): the caller then filters column by column.
  virtual bool apply_chebyshev_step_block(const ChebyshevStep &, int /*b*/, const Scalar * /*cur*/, const Scalar * /*prev*/,
                                          Scalar * /*next*/, Scalar * /*y*/, void * /*stream*/) const
  {
    return false;
  }
  /// One line for -eps_view, e.g. "dense 4000x4000, custom tiled gemv".
  virtual std::string description() const = 0;
  /// Device memory held by the operator.
  virtual std::size_t device_bytes() const = 0;
  /// Whether the matrix is the caller's device memory, used in place (make_*_operator_on_device), rather
  /// than the operator's own.
  virtual bool in_place() const { return false; }

protected:
  /// apply_block's argument check, for overrides too.
  void check_block(index_t ldx, index_t ldy, int b) const
  {
    if (b < 0 || ldx < cols() || ldy < rows())
      throw Error("DeviceOperator::apply_block: need b >= 0, ldx >= cols and ldy >= rows (b = " + std::to_string(b) +
                  ", ldx = " + std::to_string(ldx) + ", ldy = " + std::to_string(ldy) + ", operator " +
                  std::to_string(rows()) + "x" + std::to_string(cols()) + ")");
  }
};

/// Upload a dense matrix / a CSR matrix / wrap a user's device matvec. `device` < 0: current device.
std::shared_ptr<DeviceOperator> make_dense_operator(const DenseView &A, KernelFlavor flavor, int device);
std::shared_ptr<DeviceOperator> make_csr_operator(const CsrView &A, KernelFlavor flavor, int device);
std::shared_ptr<DeviceOperator> make_callback_operator(index_t rows, index_t cols, DeviceApply apply,
                                                       std::string description, int device);

/// Operators on a matrix that is already on the device, used in place: the view's pointers are device
/// pointers on `device` (< 0: the current device), read by every apply and never copied. The caller keeps
/// that memory alive and unchanged while the operator exists; a changed matrix needs a new operator (the
/// cuSPARSE analysis and the dense kernel choice are made from it). description() ends with
/// "(<origin>, used in place)"; device_bytes() counts the operator's own scratch only. A pointer that is
/// not device memory of `device` (or managed memory) is an Error.
///  dense: KernelFlavor::Default takes the custom gemv only when ld is a multiple of 16 and the values are
///         128-byte aligned (the layout of make_dense_operator's own copy, on which the custom kernel was
///         measured faster than cuBLAS), otherwise cuBLAS, and description() says why. An explicit Custom
///         runs the custom gemv on any ld (it is correct for any; 16-byte loads need an even ld).
///  CSR:   the indices are not checked (they are not read on the host: the caller vouches for them, a bad
///         one would be an out-of-bounds read on the device), and there is no pattern analysis, so
///         KernelFlavor::Default is cuSPARSE, as for a general uploaded matrix.
std::shared_ptr<DeviceOperator> make_dense_operator_on_device(const DenseView &deviceA, KernelFlavor flavor, int device,
                                                              std::string origin = "the caller's device array");
std::shared_ptr<DeviceOperator> make_csr_operator_on_device(const CsrView &deviceA, KernelFlavor flavor, int device,
                                                            std::string origin = "the caller's device arrays");
/// The uniform-pattern operator (off-diagonal entries all one value: kernels::pattern_spmv) of a square
/// CSR matrix on the device, split on the device into arrays of its own (device_pattern.hpp): the
/// caller's arrays are read once, here, and not kept, so a changed matrix needs a new operator, as for
/// make_csr_operator. Null when the matrix has no such pattern (make_csr_operator_on_device then).
std::shared_ptr<DeviceOperator> make_pattern_operator_on_device(const CsrView &deviceA, int device,
                                                                std::string origin = "the caller's device arrays");
/// The same two for 64-bit indices: the row pointers and column indices are narrowed on the device into
/// arrays of the operator's own (4 bytes an entry, counted in device_bytes(); the values stay in place),
/// once per operator. An Error where they cannot be: more than 2^31 - 1 entries or columns.
std::shared_ptr<DeviceOperator> make_csr_operator_on_device(const WideCsrView &deviceA, KernelFlavor flavor, int device,
                                                            std::string origin = "the caller's device arrays");
std::shared_ptr<DeviceOperator> make_pattern_operator_on_device(const WideCsrView &deviceA, int device,
                                                                std::string origin = "the caller's device arrays");
/// The device whose memory `p` points into; -1 for host memory, managed memory or null.
int device_of(const void *p);

struct BackendConfig {
  index_t local_size = 0;   ///< rows on this rank
  index_t global_size = 0;  ///< rows on all ranks
  index_t row_offset = 0;   ///< global index of this rank's first row (for set_random)
  int device = -1;          ///< CUDA device; < 0 picks the current one
  KernelFlavor flavor = KernelFlavor::Default; ///< vector kernels: custom or cuBLAS
  /// Sums over ranks. Empty (the default): one process, and Backend::expand keeps every scalar of its
  /// steps on the device; a reducer makes every step's scalars go through it (and the host).
  Reducer reduce;
};

/// A backend whose operator is on the device (op != nullptr, op->rows() == local_size), or, when op is
/// null, applies `host_apply` with a copy to the host and back per product (correct, slower).
std::unique_ptr<Backend> make_cuda_backend(const BackendConfig &config, std::shared_ptr<const DeviceOperator> op,
                                           HostApply host_apply = {});

/// Gives a backend of make_cuda_backend (built with an operator) another operator of the same size on the
/// same device, or none (nullptr) while it waits unused for the next solve: its stream, handles, pinned
/// buffers and basis are kept. Waits for the work queued with the old operator.
void rebind_operator(Backend &backend, std::shared_ptr<const DeviceOperator> op);

/// Column dst = op times column src of the basis of a backend of make_cuda_backend, on the backend's stream
/// (no host wait): a second operator of the same local size on the same device, such as the B of a
/// generalized problem, whose products the B-inner products take (BInnerProductBackend). Unscaled
/// (set_operator_scale is for the solve's operator only); src != dst.
void apply_to_columns(Backend &backend, const DeviceOperator &op, int src, int dst);
/// Makes a backend of make_cuda_backend wait, on its own stream and without a host wait, for the work
/// queued on `stream` (a cudaStream_t, e.g. PETSc's) so far: its later products then read what that work
/// wrote (a CUDA PETSc's Mat arrays used in place).
void wait_for_stream(Backend &backend, void *stream);
/// Device memory held by a backend of make_cuda_backend: its basis and scratch, not its operator (0 for
/// other backends).
std::size_t backend_device_bytes(const Backend &backend);
/// The work queued on `consumer` from now on waits for the work queued on `producer` so far (cudaStream_t
/// both; null is the legacy default stream), on `device`: an event, no host wait.
void order_streams(void *producer, void *consumer, int device);

/// Number of CUDA devices usable by this process; 0 (never an exception) when there is no driver or GPU.
int device_count();
/// Makes `device` current on the calling thread with its primary context created: the first call of a
/// process creates it, or waits for the warm_up() (upload.hpp) creating it.
void initialize_context(int device);
/// The device's name, compute capability and memory, "<name> (sm_90, 139.8 GiB)", for -eps_view.
std::string device_description(int device);
/// Free and total bytes on `device`.
void device_memory(int device, std::size_t *free_bytes, std::size_t *total_bytes);

} // namespace cudalanczos::cuda
