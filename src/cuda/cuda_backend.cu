// The CUDA backend: the basis in device memory, every operation queued on one stream.
//
// On one process, expand() queues whole Lanczos steps with every scalar on the device (the DGKS
// decision through a Gate, alpha/beta/breakdown in finish_lanczos_step) and waits once, at the end, for
// the step records. On several ranks the scalars must meet MPI on the host: expand() then falls back to
// Backend::expand, where each project() / subtract() fetches its reduced scalars (device -> pinned host
// buffer, then Reducer) and the coefficients go down through a pinned staging buffer. Everything is
// allocated in resize_basis(), set_operator_filter() or the constructor; the per-step operations
// allocate nothing.
//
// The block operations (block Lanczos, b columns at once) are matrix products: cuBLAS dgemm on the
// basis for project_block / update_block / transform_block, DeviceOperator::apply_block for the
// operator. Their small matrices (the (k+b) x b projections, C, M) go through grow-only buffers, made
// on a block operation's first call with a larger size than before: the steady state allocates nothing.
//
// The basis and every coefficient are Scalars (core/scalar.hpp); with complex ones the cuBLAS calls are
// the Z routines (blas.hpp: V^H w through the conjugate transpose), the reduced scalars go to the
// Reducer as twice as many doubles, and the norms (subtract's, the step records) stay double.
#include "core/chebyshev_filter.hpp"
#include "cuda/blas.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/kernels.cuh"
#include "cuda/projected_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudalanczos::cuda {
namespace {

// Vector operations for KernelFlavor::Default: the fused custom kernels read w once per project or
// subtract where cuBLAS needs gemv + dot, and were never slower per call (docs/tuning.md#cuda-vector-operations-custom-by-default).
constexpr KernelFlavor kVectorDefault = KernelFlavor::Custom;

// rotate() multiplies V[:,0:k] Q in blocks of rows into a workspace of at most this many Scalars, so
// the workspace stays small however long the vectors are.
constexpr std::size_t kRotateWorkspaceScalars = (std::size_t(1) << 23) / kDoublesPerScalar; // 64 MiB

/// The real part of a Scalar in device memory, as a double (std::complex<double> is [re, im]): the
/// squared norm that a reduction left in a Scalar slot, for a Gate or a norm read.
double *real_slot(Scalar *p) { return reinterpret_cast<double *>(p); }

class CudaBackend final : public Backend {
public:
  CudaBackend(const BackendConfig &config, std::shared_ptr<const DeviceOperator> op, HostApply host_apply)
      : n_(config.local_size), global_(config.global_size), offset_(config.row_offset), op_(std::move(op)),
        host_apply_(std::move(host_apply)), reduce_(config.reduce ? config.reduce : serial_reducer()),
        single_process_(!config.reduce),
        flavor_(config.flavor == KernelFlavor::Default ? kVectorDefault : config.flavor)
    {
    if (n_ < 0 || global_ < n_ || offset_ < 0 || offset_ + n_ > global_)
      throw Error("make_cuda_backend: inconsistent sizes (local " + std::to_string(n_) + ", global " +
                  std::to_string(global_) + ", offset " + std::to_string(offset_) + ")");
    if (!op_ && !host_apply_) throw Error("make_cuda_backend: neither a device operator nor a host apply function");
    if (config.device >= 0) {
      if (config.device >= device_count())
        throw Error("make_cuda_backend: device " + std::to_string(config.device) + " requested, " +
                    std::to_string(device_count()) + " present");
      CUDALANCZOS_CHECK(cudaSetDevice(config.device)); // the PETSc layer's later CUDA calls land here too
    }
    CUDALANCZOS_CHECK(cudaGetDevice(&device_));
    if (op_) check_operator(*op_, "make_cuda_backend");
    // Column stride: a multiple of 32 Scalars, so every column starts on a 256-byte boundary and the
    // kernels can use 16-byte loads whatever n is.
    ldv_ = (n_ + 31) / 32 * 32;
    stream_ = make_stream();
    stage_done_ = make_event();
    projections_copied_ = make_event();
    caller_ready_ = make_event();
    copy_done_ = make_event();
    cublas_ = make_cublas(stream_.get());
    constants_ = DeviceBuffer<Scalar>(3, "cuBLAS constants");
    const Scalar c[3] = {1.0, 0.0, -1.0};
    CUDALANCZOS_CHECK(cudaMemcpyAsync(constants_.data(), c, sizeof c, cudaMemcpyHostToDevice, stream_.get()));
    // c lives on this stack frame (the copy may be asynchronous for such a small pageable source)
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    if (!op_) {
      host_x_ = PinnedBuffer<Scalar>(static_cast<std::size_t>(n_), "host-apply input");
      host_y_ = PinnedBuffer<Scalar>(static_cast<std::size_t>(n_), "host-apply output");
    }
  }

  /// The operator checks of the constructor, for rebind() too.
  void check_operator(const DeviceOperator &op, const char *who) const
  {
    if (op.rows() != n_ || op.cols() != n_)
      throw Error(std::string(who) + ": the operator is " + std::to_string(op.rows()) + "x" + std::to_string(op.cols()) +
                  " but the backend holds " + std::to_string(n_) +
                  " local rows (an operator over several ranks must gather x itself: make_callback_operator)");
    if (op.device() != device_)
      throw Error(std::string(who) + ": the operator lives on device " + std::to_string(op.device()) + ", the backend on device " +
                  std::to_string(device_));
  }

  /// rebind_operator(): another operator of the same shape (or none, while the backend is unused).
  void rebind(std::shared_ptr<const DeviceOperator> op)
  {
    if (host_apply_) throw Error("rebind_operator: a backend of the host-apply fallback keeps its operator");
    if (op) check_operator(*op, "rebind_operator");
    ScopedDevice guard(device_);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get())); // queued products of the old operator finish first
    op_ = std::move(op);
  }

  ~CudaBackend() override
  {
    // Queued work may still read the buffers (or write the pinned ones): let it finish first.
    if (stream_) CUDALANCZOS_CHECK_NOTHROW(cudaStreamSynchronize(stream_.get()));
  }

  std::string name() const override { return "cuda"; }
  BackendKind kind() const override { return BackendKind::Cuda; }
  index_t local_size() const override { return n_; }
  index_t global_size() const override { return global_; }
  int basis_columns() const override { return ncols_; }

  void resize_basis(int ncols) override
  {
    if (ncols < 0) throw Error("CudaBackend::resize_basis: negative column count");
    if (ncols == ncols_ && ncols > 0) return; // a backend reused for another solve of the same size
    ScopedDevice guard(device_);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    // Release first, then allocate: the peak is the new size, not old + new.
    basis_.reset();
    partials_.reset();
    rotate_ws_.reset();
    block_dev_.reset();
    block_coef_.reset();
    block_host_.reset();
    block_stage_.reset();
    ncols_ = 0;
    const std::size_t nc = static_cast<std::size_t>(ncols);
    basis_ = DeviceBuffer<Scalar>(nc * static_cast<std::size_t>(ldv_), "Lanczos basis");
    partials_ = DeviceBuffer<double>(kernels::reduction_workspace_doubles(ncols), "reduction workspace");
    CUDALANCZOS_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream_.get())); // its counters
    scalars_ = DeviceBuffer<Scalar>(nc + 1, "reduced scalars");
    coef_ = DeviceBuffer<Scalar>(std::max<std::size_t>(nc, 1), "coefficients");
    // Q (k x m, k <= nc), or its transpose with rows padded to a multiple of kRotateOutputs (kernels::rotate).
    q_ = DeviceBuffer<Scalar>(nc * ((nc + kernels::kRotateOutputs - 1) / kernels::kRotateOutputs * kernels::kRotateOutputs),
                              "rotation matrix");
    host_scalars_ = PinnedBuffer<Scalar>(nc + 1, "reduced scalars (host)");
    host_stage_ = PinnedBuffer<Scalar>(std::max<std::size_t>(nc, 1), "coefficient staging");
    h2_ = DeviceBuffer<Scalar>(nc + 1, "second-pass coefficients");
    window_ = DeviceBuffer<Scalar>(3, "three-term window coefficients");
    after_ = DeviceBuffer<double>(3, "norms after each pass");
    records_ = DeviceBuffer<kernels::DeviceStepRecord>(nc + 1, "step records");
    host_records_ = PinnedBuffer<kernels::DeviceStepRecord>(nc + 1, "step records (host)");
    rotate_rows_ = ncols == 0 ? 0 : std::min<index_t>(n_, std::max<index_t>(1, kRotateWorkspaceScalars / nc));
    rotate_ws_ = DeviceBuffer<Scalar>(static_cast<std::size_t>(rotate_rows_) * nc, "rotate workspace");
    ncols_ = ncols;
  }

  void set_random(int j, std::uint64_t seed) override
  {
    check_column(j);
    ScopedDevice guard(device_);
    kernels::set_random(n_, seed, offset_, col(j), stream_.get());
  }

  void set_column(int j, const Scalar *x) override
  {
    check_column(j);
    ScopedDevice guard(device_);
    if (n_ == 0) return;
    CUDALANCZOS_CHECK(cudaMemcpyAsync(col(j), x, bytes(n_), cudaMemcpyHostToDevice, stream_.get()));
    // x is the caller's and may be page-locked (then the copy is truly asynchronous): wait for it.
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  void get_column(int j, Scalar *x) const override
  {
    check_column(j);
    ScopedDevice guard(device_);
    if (n_ == 0) return;
    CUDALANCZOS_CHECK(cudaMemcpyAsync(x, col(j), bytes(n_), cudaMemcpyDeviceToHost, stream_.get()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
  }

  bool get_column_device(int j, Scalar *x, void *stream) const override
  {
    check_column(j);
    copy_ordered(x, col(j), static_cast<cudaStream_t>(stream));
    return true;
  }

  bool set_column_device(int j, const Scalar *x, void *stream) override
  {
    check_column(j);
    copy_ordered(col(j), x, static_cast<cudaStream_t>(stream));
    return true;
  }

  /// apply_to_columns(): column dst = op column src on this backend's stream.
  void apply_other(const DeviceOperator &op, int src, int dst)
  {
    check_column(src);
    check_column(dst);
    if (src == dst) throw Error("apply_to_columns: src and dst must differ");
    if (op.rows() != n_ || op.cols() != n_ || op.device() != device_)
      throw Error("apply_to_columns: the operator (" + std::to_string(op.rows()) + "x" + std::to_string(op.cols()) + " on device " +
                  std::to_string(op.device()) + ") does not fit this backend's " + std::to_string(n_) + " rows on device " +
                  std::to_string(device_));
    ScopedDevice guard(device_);
    op.apply(col(src), col(dst), stream_.get());
  }

  /// wait_for_stream(): this backend's later work waits for the work queued on `s` so far.
  void wait_for(cudaStream_t s)
  {
    ScopedDevice guard(device_);
    CUDALANCZOS_CHECK(cudaEventRecord(caller_ready_.get(), s));
    CUDALANCZOS_CHECK(cudaStreamWaitEvent(stream_.get(), caller_ready_.get(), 0));
  }

  /// backend_device_bytes(): the basis and every scratch buffer (not the operator's).
  std::size_t device_bytes() const
  {
    std::size_t total = 0;
    for (const DeviceBuffer<Scalar> *b : {&constants_, &basis_, &scalars_, &coef_, &q_, &rotate_ws_, &window_, &h2_, &block_dev_,
                                          &block_coef_, &filter_w_, &filter_a_, &filter_b_, &filter_y_})
      total += b->bytes();
    for (const DeviceBuffer<double> *b : {&partials_, &after_}) total += b->bytes();
    total += records_.bytes();
    if (projected_) total += projected_->device_bytes();
    return total;
  }

  void apply_operator(int src, int dst) override
  {
    check_column(src);
    check_column(dst);
    if (src == dst) throw Error("CudaBackend::apply_operator: src and dst must differ");
    ScopedDevice guard(device_);
    if (filter_) return apply_filter(col(src), col(dst)); // unscaled while filtered (set_operator_scale)
    scaled_apply(src, dst, 1, [&] { apply_unscaled(col(src), col(dst)); });
  }

  void set_operator_scale(int e) override
  {
    check_scale_exponent("CudaBackend::set_operator_scale", e);
    if (filter_ && e != 0)
      throw Error("CudaBackend::set_operator_scale: the operator is filtered (set_operator_filter); it stays unscaled");
    scale_ = e; // kept on the host: scaled_apply passes 2^scale_ to the scale kernels by value
  }

  void set_operator_filter(const ChebyshevFilter *filter) override
  {
    if (!filter) {
      filter_.reset(); // the work vectors stay: a driver that switches between p(A) and A allocates once
      return;
    }
    check_filter("CudaBackend::set_operator_filter", *filter, scale_);
    ScopedDevice guard(device_);
    const auto n = static_cast<std::size_t>(n_);
    grow(filter_w_, n, "filter work vector (A T_k x)");
    grow(filter_a_, n, "filter work vector (T_k x)");
    grow(filter_b_, n, "filter work vector (T_k x)");
    filter_ = *filter;
  }

  void project(int first, int k, int c, Scalar *out) override
  {
    check_column(c);
    check_range(first, k);
    ScopedDevice guard(device_);
    if (n_ == 0) {
      std::fill(out, out + k + 1, Scalar{});
    } else {
      if (flavor_ == KernelFlavor::Custom) {
        // out[0..k-1] = V^H w and out[k] = w^H w in one pass over w
        kernels::multi_dot(n_, k, col(first), ldv_, col(c), scalars_.data(), partials_.data(), stream_.get());
      } else {
        CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_DEVICE));
        if (k > 0) // out[0..k-1] = V^H w
          CUDALANCZOS_CHECK(blas::gemv(cublas_.get(), blas::kAdjoint, n_, k, one(), col(first), ldv_, col(c), 1, zero(),
                                       scalars_.data(), 1));
        CUDALANCZOS_CHECK(blas::self_dot(cublas_.get(), n_, col(c), real_slot(scalars_.data() + k))); // w^H w
      }
      fetch_scalars(k + 1, out);
      // w^H w is real: self_dot wrote the real part only (the custom kernel's imaginary part is 0 already)
      out[k] = real_part(out[k]);
    }
    reduce_(real_slot(out), (k + 1) * kDoublesPerScalar);
  }

  void project_with(int first, int k, int c, int with, Scalar *out) override
  {
    check_column(c);
    check_column(with);
    check_range(first, k);
    ScopedDevice guard(device_);
    if (n_ == 0) {
      std::fill(out, out + k + 1, Scalar{});
    } else {
      // out[0..k-1] = V^H u and out[k] = w^H u (u = v_with): the B-inner products of BInnerProductBackend,
      // one gemv and one dot, one fetch (cuBLAS for both kernel flavors: not on a hot path of HEP)
      CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_DEVICE));
      if (k > 0)
        CUDALANCZOS_CHECK(blas::gemv(cublas_.get(), blas::kAdjoint, n_, k, one(), col(first), ldv_, col(with), 1, zero(),
                                     scalars_.data(), 1));
      CUDALANCZOS_CHECK(blas::dotc(cublas_.get(), n_, col(c), 1, col(with), 1, scalars_.data() + k));
      fetch_scalars(k + 1, out);
    }
    reduce_(real_slot(out), (k + 1) * kDoublesPerScalar);
  }

  double subtract(int first, int k, const Scalar *coef, int c) override
  {
    ScopedDevice guard(device_);
    double s = 0.0;
    if (queue_subtract("subtract", first, k, coef, c, true)) fetch_norm(&s);
    reduce_(&s, 1);
    return s;
  }

  void update(int first, int k, const Scalar *coef, int c) override
  {
    ScopedDevice guard(device_);
    queue_subtract("update", first, k, coef, c, false); // no wait, no reduction
  }

  void scale(int c, double alpha) override
  {
    check_column(c);
    ScopedDevice guard(device_);
    if (n_ == 0) return;
    if (flavor_ == KernelFlavor::Custom) {
      kernels::scale(n_, alpha, col(c), stream_.get());
    } else {
      CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
      CUDALANCZOS_CHECK(blas::scal(cublas_.get(), n_, &alpha, col(c), 1));
    }
  }

  void combine(int first, int k, const Scalar *coef, int dst) override
  {
    check_column(dst);
    check_range(first, k);
    if (k > 0 && dst >= first && dst < first + k)
      throw Error("CudaBackend::combine: destination " + std::to_string(dst) + " is among the columns combined");
    ScopedDevice guard(device_);
    if (n_ == 0) return;
    if (k == 0) { // an empty sum; cuBLAS would return without touching dst
      CUDALANCZOS_CHECK(cudaMemsetAsync(col(dst), 0, bytes(n_), stream_.get()));
      return;
    }
    stage_coefficients(coef, k);
    if (flavor_ == KernelFlavor::Custom) {
      kernels::combine(n_, k, col(first), ldv_, coef_.data(), col(dst), stream_.get()); // dst = V coef
    } else {
      CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_DEVICE));
      CUDALANCZOS_CHECK(blas::gemv(cublas_.get(), CUBLAS_OP_N, n_, k, one(), col(first), ldv_, coef_.data(), 1, zero(),
                                   col(dst), 1));
    }
  }

  void rotate(int k, int m, const Scalar *Q, int ldq) override
  {
    if (m < 0 || m > k || ldq < k) throw Error("CudaBackend::rotate: need m <= k <= ldq");
    if (k > 0) check_column(k - 1);
    // Leading columns of Q that are unit vectors e_i with nothing else in their rows keep V's columns as
    // they are (a Q padded by an identity, as Backend::rotate_from's default builds it): only the rest
    // is multiplied, which saves reading and rewriting those columns.
    int p = 0;
    for (bool unit = true; unit && p < m; p += unit) {
      for (int i = 0; i < k && unit; ++i) unit = Q[i + static_cast<std::size_t>(p) * ldq] == (i == p ? 1.0 : 0.0);
      for (int j = p + 1; j < m && unit; ++j) unit = Q[p + static_cast<std::size_t>(j) * ldq] == 0.0;
    }
    if (m > p) rotate_from(p, k - p, m - p, Q + p + static_cast<std::size_t>(p) * ldq, ldq);
  }

  bool projected_eigen(int n, const double *S, int lds, double *w, double *Z, int ldz) override
  {
    if (n < kDeviceProjectedOrder) return false;
    ScopedDevice guard(device_);
    if (!projected_) projected_ = std::make_unique<ProjectedEigen>(stream_.get());
    projected_->solve(n, S, lds, w, Z, ldz);
    return true;
  }

  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override
  {
    if (first < 0 || m < 0 || m > k || ldq < k) throw Error("CudaBackend::rotate: need first >= 0 and m <= k <= ldq");
    if (k > 0) check_column(first + k - 1);
    if (m == 0 || n_ == 0) return;
    ScopedDevice guard(device_);
    Scalar *const V = basis_.data() + static_cast<std::size_t>(first) * ldv_;
    if (flavor_ == KernelFlavor::Custom && m <= kernels::kRotateMaxOutputs) {
      // One pass over the rows, in place (kernels::rotate), with Q transposed and its rows padded. As below,
      // the wait for the copy is cheaper than pinned staging of that size.
      const int ldqt = (m + kernels::kRotateOutputs - 1) / kernels::kRotateOutputs * kernels::kRotateOutputs;
      qt_host_.assign(static_cast<std::size_t>(k) * ldqt, 0.0);
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < k; ++i) qt_host_[static_cast<std::size_t>(i) * ldqt + j] = Q[i + static_cast<std::size_t>(j) * ldq];
      CUDALANCZOS_CHECK(cudaMemcpyAsync(q_.data(), qt_host_.data(), bytes(static_cast<index_t>(qt_host_.size())),
                                        cudaMemcpyHostToDevice, stream_.get()));
      CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
      kernels::rotate(n_, k, m, V, ldv_, q_.data(), ldqt, stream_.get());
      return;
    }
    // Q (k x m) to the device, packed with leading dimension k. Rotations are rare (one per restart),
    // so waiting for the copy is cheaper than a staging buffer of ncols^2 pinned doubles.
    CUDALANCZOS_CHECK(cudaMemcpy2DAsync(q_.data(), k * sizeof(Scalar), Q, ldq * sizeof(Scalar), k * sizeof(Scalar), m,
                                        cudaMemcpyHostToDevice, stream_.get()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    // Vendor kernels, or more output columns than kernels::rotate takes: row block by row block,
    // W = V[r, 0:k] Q (cuBLAS dgemm), then V[r, 0:m] = W. Rows of the result depend only on the same rows
    // of V, so overwriting block by block is safe. The copy back through the workspace is what the
    // custom kernel saves: a thick restart's product is a few columns deep and as long as the vectors,
    // so it moves bytes, not flops.
    CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
    const Scalar one = 1.0, zero = 0.0;
    for (index_t r = 0; r < n_; r += rotate_rows_) {
      const index_t rb = std::min(rotate_rows_, n_ - r);
      CUDALANCZOS_CHECK(blas::gemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, rb, m, k, &one, V + r, ldv_, q_.data(), k, &zero,
                                   rotate_ws_.data(), rb));
      CUDALANCZOS_CHECK(cudaMemcpy2DAsync(V + r, ldv_ * sizeof(Scalar), rotate_ws_.data(), rb * sizeof(Scalar),
                                          rb * sizeof(Scalar), m, cudaMemcpyDeviceToDevice, stream_.get()));
    }
  }

  void expand(int first, int last, double anorm, StepRecord *records) override
  {
    if (!single_process_ || flavor_ != KernelFlavor::Custom) return Backend::expand(first, last, anorm, records);
    if (first < 0 || last < first) throw Error("CudaBackend::expand: need 0 <= first <= last");
    device_steps(first, last, -1, anorm, records);
  }

  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override
  {
    if (!single_process_ || flavor_ != KernelFlavor::Custom)
      return Backend::expand_partial(first, last, reach, anorm, records);
    if (first < 0 || last < first) throw Error("CudaBackend::expand_partial: need 0 <= first <= last");
    check_partial_reach("CudaBackend::expand_partial", first, reach);
    device_steps(first, last, reach, anorm, records);
  }

  // Queued steps run on the device at once (the driver's look on the host overlaps them); on several
  // ranks, or with vendor kernels, the default queue defers the call to collect_steps.
  void queue_steps(int first, int last, int reach, double anorm) override
  {
    if (device_queued_ >= 0) throw Error("CudaBackend::queue_steps: steps are already queued (collect_steps or cancel_steps first)");
    if (!single_process_ || flavor_ != KernelFlavor::Custom) return Backend::queue_steps(first, last, reach, anorm);
    if (first < 0 || last < first) throw Error("CudaBackend::queue_steps: need 0 <= first <= last");
    if (reach >= 0) check_partial_reach("CudaBackend::queue_steps", first, reach);
    enqueue_steps(first, last, reach, anorm);
    device_queued_ = last - first;
  }

  void collect_steps(StepRecord *records) override
  {
    if (device_queued_ < 0) return Backend::collect_steps(records);
    const int count = device_queued_;
    device_queued_  = -1;
    read_records(count, records);
  }

  int cancel_steps() override
  {
    if (device_queued_ < 0) return Backend::cancel_steps();
    const int count = device_queued_;
    device_queued_  = -1;
    // The steps ran or will: later work on the stream follows them. Wait anyway, so that their errors
    // surface here and the pinned records are free for the next call.
    ScopedDevice guard(device_);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    return count;
  }

  // The steps of expand (reach < 0: the pass covers 0..j) and expand_partial (0..reach-1), queued with
  // every scalar on the device; one wait at the end for the records.
  void device_steps(int first, int last, int reach, double anorm, StepRecord *records)
  {
    if (device_queued_ >= 0) throw Error("CudaBackend: steps are queued (collect_steps or cancel_steps first)");
    enqueue_steps(first, last, reach, anorm);
    read_records(last - first, records);
  }

  // Queues the steps and the copy of their records to the pinned host buffer; does not wait.
  void enqueue_steps(int first, int last, int reach, double anorm)
  {
    if (last == first) return;
    check_column(last); // the steps write columns first+1 .. last
    ScopedDevice guard(device_);
    // Record 0 carries the incoming anorm; step j writes record j - first + 1.
    host_records_.data()[0].anorm = anorm;
    CUDALANCZOS_CHECK(cudaMemcpyAsync(records_.data(), host_records_.data(), sizeof(kernels::DeviceStepRecord),
                                      cudaMemcpyHostToDevice, stream_.get()));
    Scalar *g = window_.data(), *h1 = scalars_.data(), *h2 = h2_.data();
    double *after = after_.data();
    for (int j = first; j < last; ++j) {
      const int k = reach < 0 ? j + 1 : reach, lo = std::max(0, j - 1), kl = j - lo + 1;
      Scalar *w = col(j + 1);
      // ||w||^2 after the full pass < eta before it (h1[k]: w^H w, real)
      const kernels::Gate repeat{after + 1, real_slot(h1 + k), kDgksEta2};
      apply_operator(j, j + 1);
      // The three-term window, then the full pass and its DGKS repeat (backend.hpp). The window's
      // subtraction rides along with the full pass: window_multi_dot projects w - V_L g without
      // storing it, window_subtract_norm2 subtracts both in one pass over w (same rounding).
      kernels::multi_dot(n_, kl, col(lo), ldv_, w, g, partials_.data(), stream_.get());
      kernels::window_multi_dot(n_, k, col(0), ldv_, lo, kl, g, w, h1, partials_.data(), stream_.get());
      kernels::window_subtract_norm2(n_, k, col(0), ldv_, lo, kl, g, h1, w, after + 1, partials_.data(), stream_.get());
      kernels::multi_dot(n_, k, col(0), ldv_, w, h2, partials_.data(), stream_.get(), repeat);
      kernels::subtract_norm2(n_, k, col(0), ldv_, h2, w, after + 2, partials_.data(), stream_.get(), repeat);
      const std::size_t r = static_cast<std::size_t>(j - first);
      kernels::finish_lanczos_step(n_, j, k, kl, g, h1, h2, after, kDgksEta2, records_.data() + r, records_.data() + r + 1, w,
                                   stream_.get());
    }
    const std::size_t count = static_cast<std::size_t>(last - first);
    CUDALANCZOS_CHECK(cudaMemcpyAsync(host_records_.data() + 1, records_.data() + 1, count * sizeof(kernels::DeviceStepRecord),
                                      cudaMemcpyDeviceToHost, stream_.get()));
  }

  // Waits for the queued steps and reads their `count` records (enqueue_steps).
  void read_records(int count_steps, StepRecord *records)
  {
    if (count_steps == 0) return;
    ScopedDevice guard(device_);
    const std::size_t count = static_cast<std::size_t>(count_steps);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    for (std::size_t i = 0; i < count; ++i) {
      const kernels::DeviceStepRecord &rec = host_records_.data()[i + 1];
      const int flags = static_cast<int>(rec.flags);
      records[i] = StepRecord{rec.alpha, rec.beta, rec.norm_before, rec.anorm, (flags & kernels::DeviceStepRecord::kBreakdown) != 0,
                              (flags & kernels::DeviceStepRecord::kSecondPass) != 0};
    }
  }

  void copy_column(int src, int dst) override
  {
    check_column(src);
    check_column(dst);
    ScopedDevice guard(device_);
    if (n_ == 0 || src == dst) return;
    CUDALANCZOS_CHECK(cudaMemcpyAsync(col(dst), col(src), bytes(n_), cudaMemcpyDeviceToDevice, stream_.get()));
  }

  void apply_operator_block(int src, int dst, int b) override
  {
    if (b < 0) throw Error("CudaBackend::apply_operator_block: negative block size " + std::to_string(b));
    if (b == 0) return;
    check_range(src, b);
    check_range(dst, b);
    if (src < dst + b && dst < src + b)
      throw Error("CudaBackend::apply_operator_block: source columns " + range_text(src, b) + " and destination " +
                  range_text(dst, b) + " overlap");
    if (filter_ && b > 1 && op_ && op_->fuses_chebyshev_steps()) {
      ScopedDevice guard(device_);
      return apply_filter_block(src, dst, b);
    }
    if (!op_ || filter_) { // the host fallback, or p(A) without fused steps: column by column (the pinned buffers, the filter's vectors)
      for (int j = 0; j < b; ++j) apply_operator(src + j, dst + j);
      return;
    }
    ScopedDevice guard(device_);
    scaled_apply(src, dst, b, [&] { op_->apply_block(col(src), ldv_, col(dst), ldv_, b, stream_.get()); });
  }

  void project_block(int first, int k, int c, int b, Scalar *out) override
  {
    if (k < 0 || b < 0) throw Error("CudaBackend::project_block: negative column count");
    if (b == 0) return; // an empty result, as the reference: no reduction either
    check_range(first, k);
    check_range(c, b);
    ScopedDevice guard(device_);
    const int ld = k + b;
    const std::size_t count = static_cast<std::size_t>(ld) * static_cast<std::size_t>(b);
    if (n_ == 0) {
      std::fill(out, out + count, Scalar{});
    } else {
      grow(block_dev_, count + 1, "block projections");
      grow(block_host_, count, "block projections (host)");
      // [V_first V_c]^H V_c: with the custom kernels and a block of at most kBlockDotColumns, one pass over
      // both (block_multi_dot). Else cuBLAS: one gemm over k + b columns when the block follows the others,
      // else the k x b projections and the b x b Gram matrix into the rows below them.
      if (block_kernels_pay(b)) {
        kernels::block_multi_dot(n_, k, col(first), ldv_, b, col(c), ldv_, block_dev_.data(), partials_.data(), partials_.size(),
                                 stream_.get());
      } else {
        CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
        const Scalar one = 1.0, zero = 0.0;
        const auto gram = [&](int from, int rows, Scalar *dst) {
          CUDALANCZOS_CHECK(blas::gemm(cublas_.get(), blas::kAdjoint, CUBLAS_OP_N, rows, b, n_, &one, col(from), ldv_, col(c),
                                       ldv_, &zero, dst, ld));
        };
        if (k == 0 || c == first + k) { // the block follows the others
          gram(k == 0 ? c : first, ld, block_dev_.data());
        } else {
          gram(first, k, block_dev_.data());
          gram(c, b, block_dev_.data() + k);
        }
      }
      CUDALANCZOS_CHECK(cudaMemcpyAsync(block_host_.data(), block_dev_.data(), bytes(static_cast<index_t>(count)),
                                        cudaMemcpyDeviceToHost, stream_.get()));
      CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
      std::memcpy(out, block_host_.data(), bytes(static_cast<index_t>(count)));
    }
    reduce_(real_slot(out), static_cast<int>(count) * kDoublesPerScalar);
  }

  void update_block(int first, int k, const Scalar *C, int ldc, int c, int b) override
  {
    if (k < 0 || b < 0) throw Error("CudaBackend::update_block: negative column count");
    if (ldc < k) throw Error("CudaBackend::update_block: ldc = " + std::to_string(ldc) + " < k = " + std::to_string(k));
    if (b == 0) return;
    check_range(first, k);
    check_range(c, b);
    if (k > 0 && first < c + b && c < first + k)
      throw Error("CudaBackend::update_block: the updated columns " + range_text(c, b) + " overlap the columns " +
                  range_text(first, k) + " subtracted");
    ScopedDevice guard(device_);
    if (n_ == 0 || k == 0) return;
    stage_block(C, k, ldc, b); // C, packed k x b, to block_coef_
    // V_c = V_c - V_first C, queued: no wait, no reduction (as update()); one pass over both for a small
    // block with the custom kernels (block_subtract).
    if (block_kernels_pay(b)) {
      kernels::block_subtract(n_, k, col(first), ldv_, block_coef_.data(), k, b, col(c), ldv_, stream_.get());
      return;
    }
    CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
    const Scalar minus_one = -1.0, one = 1.0;
    CUDALANCZOS_CHECK(blas::gemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, n_, b, k, &minus_one, col(first), ldv_,
                                 block_coef_.data(), k, &one, col(c), ldv_));
  }

  // Both passes subtract with their projections still on the device (no staging from the host), and
  // both projections come back in one copy: one host round trip a block step. The host waits for the
  // copy only, so its work on the projections (Gram matrix, SVQB) overlaps the second subtraction.
  // Only where this rank holds the whole vectors, since elsewhere the coefficients are the reduced ones;
  // the same kernels in the same order as the reference's calls, so the same bits.
  void window_then_pass_block(int lo, int kw, int first, int k, int c, int b, Scalar *out_w, Scalar *out_p) override
  {
    if (kw < 1 || k < 0 || b < 0) throw Error("CudaBackend::window_then_pass_block: the window needs a column, k and b >= 0");
    check_range(lo, kw);
    check_range(first, k);
    check_range(c, b);
    if (b > 0 && lo < c + b && c < lo + kw)
      throw Error("CudaBackend::window_then_pass_block: the window " + range_text(lo, kw) + " overlaps the block " + range_text(c, b));
    if (b > 0 && k > 0 && first < c + b && c < first + k)
      throw Error("CudaBackend::window_then_pass_block: the pass's columns " + range_text(first, k) + " overlap the block " + range_text(c, b));
    if (b == 0 || n_ == 0 || n_ != global_ || !block_kernels_pay(b))
      return BasisStorage::window_then_pass_block(lo, kw, first, k, c, b, out_w, out_p);
    ScopedDevice guard(device_);
    const int ldw = kw + b, ldp = k + b;
    const std::size_t cw = static_cast<std::size_t>(ldw) * b, cp = static_cast<std::size_t>(ldp) * b;
    grow(block_dev_, cw + cp + 1, "block projections");
    grow(block_host_, cw + cp, "block projections (host)");
    Scalar *const dw = block_dev_.data(), *const dp = block_dev_.data() + cw;
    kernels::block_multi_dot(n_, kw, col(lo), ldv_, b, col(c), ldv_, dw, partials_.data(), partials_.size(), stream_.get());
    kernels::block_subtract(n_, kw, col(lo), ldv_, dw, ldw, b, col(c), ldv_, stream_.get());
    kernels::block_multi_dot(n_, k, col(first), ldv_, b, col(c), ldv_, dp, partials_.data(), partials_.size(), stream_.get());
    CUDALANCZOS_CHECK(cudaMemcpyAsync(block_host_.data(), dw, bytes(static_cast<index_t>(cw + cp)), cudaMemcpyDeviceToHost, stream_.get()));
    CUDALANCZOS_CHECK(cudaEventRecord(projections_copied_.get(), stream_.get()));
    kernels::block_subtract(n_, k, col(first), ldv_, dp, ldp, b, col(c), ldv_, stream_.get());
    CUDALANCZOS_CHECK(cudaEventSynchronize(projections_copied_.get()));
    std::memcpy(out_w, block_host_.data(), bytes(static_cast<index_t>(cw)));
    std::memcpy(out_p, block_host_.data() + cw, bytes(static_cast<index_t>(cp)));
    reduce_(real_slot(out_w), static_cast<int>(cw) * kDoublesPerScalar); // two reductions, as the reference's
    reduce_(real_slot(out_p), static_cast<int>(cp) * kDoublesPerScalar);
  }

  void transform_block(int c, int b, const Scalar *M, int ldm) override
  {
    if (b < 0) throw Error("CudaBackend::transform_block: negative block size " + std::to_string(b));
    if (ldm < b) throw Error("CudaBackend::transform_block: ldm = " + std::to_string(ldm) + " < b = " + std::to_string(b));
    if (b == 0) return;
    check_range(c, b);
    ScopedDevice guard(device_);
    if (n_ == 0) return;
    if (b <= kernels::kTransformColumns) { // a block step's: in place, in one launch
      kernels::transform_columns(n_, b, col(c), ldv_, M, ldm, stream_.get());
      return;
    }
    stage_block(M, b, ldm, b); // M, packed b x b, to block_coef_
    // As rotate(): row block by row block through rotate's workspace (rotate_rows_ x ncols_ >= rows x b),
    // W = V[r, c:c+b] M, then V[r, c:c+b] = W.
    CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_HOST));
    const Scalar one = 1.0, zero = 0.0;
    Scalar *const V = col(c);
    for (index_t r = 0; r < n_; r += rotate_rows_) {
      const index_t rb = std::min(rotate_rows_, n_ - r);
      CUDALANCZOS_CHECK(blas::gemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, rb, b, b, &one, V + r, ldv_, block_coef_.data(), b,
                                   &zero, rotate_ws_.data(), rb));
      CUDALANCZOS_CHECK(cudaMemcpy2DAsync(V + r, ldv_ * sizeof(Scalar), rotate_ws_.data(), rb * sizeof(Scalar),
                                          rb * sizeof(Scalar), b, cudaMemcpyDeviceToDevice, stream_.get()));
    }
  }

  void synchronize() override
  {
    ScopedDevice guard(device_);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
  }

private:
  /// Bytes of `count` Scalars.
  static std::size_t bytes(index_t count) { return static_cast<std::size_t>(count) * sizeof(Scalar); }
  Scalar *col(int j) const { return basis_.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(ldv_); }
  const Scalar *one() const { return constants_.data(); }
  const Scalar *zero() const { return constants_.data() + 1; }
  const Scalar *minus_one() const { return constants_.data() + 2; }

  void check_column(int j) const
  {
    if (j < 0 || j >= ncols_)
      throw Error("CudaBackend: column " + std::to_string(j) + " outside the basis of " + std::to_string(ncols_));
  }
  void check_range(int first, int k) const
  {
    if (k < 0) throw Error("CudaBackend: negative column count");
    if (k > 0) {
      check_column(first);
      check_column(first + k - 1);
    }
  }
  static std::string range_text(int first, int k)
  {
    return std::to_string(first) + ".." + std::to_string(first + k - 1);
  }

  /// cuda::grow for the backend's scratch, whose users are all on the backend's stream.
  template <class Buffer>
  void grow(Buffer &buffer, std::size_t count, const char *what)
  {
    cuda::grow(buffer, count, what, [this] { CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get())); });
  }

  // project_block / update_block of b columns against k: block_multi_dot and block_subtract read the k
  // columns once for all b, near the copy bandwidth; cuBLAS's gemm reads them once but far from it on such
  // skinny shapes (docs/tuning.md#cuda-block-projections). Wider blocks stay with cuBLAS.
  bool block_kernels_pay(int b) const { return flavor_ == KernelFlavor::Custom && b <= kernels::kBlockDotColumns; }

  /// A (rows x cols, leading dimension lda) packed to block_coef_ (leading dimension rows) through the
  /// pinned block_stage_, which is rewritten only once its previous upload has completed: stage_done_
  /// marks the latest upload from either staging buffer, and they all run in order on the one stream.
  void stage_block(const Scalar *A, int rows, int lda, int cols)
  {
    const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    grow(block_coef_, count, "block coefficients");
    grow(block_stage_, count, "block coefficient staging");
    CUDALANCZOS_CHECK(cudaEventSynchronize(stage_done_.get()));
    for (int j = 0; j < cols; ++j)
      std::memcpy(block_stage_.data() + static_cast<std::size_t>(j) * rows, A + static_cast<std::size_t>(j) * lda, bytes(rows));
    CUDALANCZOS_CHECK(cudaMemcpyAsync(block_coef_.data(), block_stage_.data(), bytes(static_cast<index_t>(count)),
                                      cudaMemcpyHostToDevice, stream_.get()));
    CUDALANCZOS_CHECK(cudaEventRecord(stage_done_.get(), stream_.get()));
  }

  // 2^scale_ A on b columns from src to dst (backend.hpp): a tiny operator gets its input scaled up before
  // the product and restored after it, a huge one its output scaled down; powers of two, so every bit is
  // the unscaled product's times 2^scale_, as on the host. Queued on the stream, no wait: one or two more
  // passes over the columns, only where the norm left the safe range.
  template <class Apply>
  void scaled_apply(int src, int dst, int b, Apply &&apply)
  {
    if (scale_ == 0 || n_ == 0) return apply();
    const auto scale_block = [&](int first, int e) {
      for (int j = 0; j < b; ++j) scale(first + j, std::ldexp(1.0, e));
    };
    if (scale_ > 0) {
      scale_block(src, scale_);
      try {
        apply();
      } catch (...) {
        scale_block(src, -scale_);
        throw;
      }
      scale_block(src, -scale_);
    } else {
      apply();
      scale_block(dst, scale_);
    }
  }

  /// y = A x for device arrays of n_ entries (basis columns or the filter's work vectors).
  void apply_unscaled(const Scalar *x, Scalar *y)
  {
    if (op_) {
      op_->apply(x, y, stream_.get());
      return;
    }
    // Fallback for an operator that only exists on the host: down, apply, up. The pinned buffers make
    // both copies DMA; host_y_ is only rewritten after the next synchronize, so its upload is safe.
    if (n_ > 0) CUDALANCZOS_CHECK(cudaMemcpyAsync(host_x_.data(), x, bytes(n_), cudaMemcpyDeviceToHost, stream_.get()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    host_apply_(host_x_.data(), host_y_.data());
    if (n_ > 0) CUDALANCZOS_CHECK(cudaMemcpyAsync(y, host_y_.data(), bytes(n_), cudaMemcpyHostToDevice, stream_.get()));
  }

  /// y = p(A) x (set_operator_filter), the steps of for_each_chebyshev_step as the host backend runs them:
  /// per step the operator's fused product and step where it has one (DeviceOperator::apply_chebyshev_step),
  /// else one product with A into filter_w_, then the step. Queued on the stream like any product: no
  /// host wait beyond the host-apply fallback's own.
  void apply_filter(const Scalar *x, Scalar *y)
  {
    Scalar *w = filter_w_.data();
    for_each_chebyshev_step(
      *filter_, x, filter_a_.data(), filter_b_.data(), [](const Scalar *) {}, // the product is taken in the step
      [&](const ChebyshevStep &st, const Scalar *cur, const Scalar *prev, Scalar *next) {
        if (op_ && op_->apply_chebyshev_step(st, cur, prev, next, y, stream_.get())) return;
        apply_unscaled(cur, w);
        kernels::chebyshev_step(n_, st, w, cur, prev, next, y, stream_.get());
      });
  }

  /// V[:, dst:dst+b] = p(A) V[:, src:src+b] by the operator's fused block steps, over interleaved copies
  /// of the columns (filter_w_: the input; filter_a_, filter_b_: the recurrence; filter_y_: the sum): the
  /// matrix is read once per step for all b columns, and column c is bit for bit apply_filter's.
  void apply_filter_block(int src, int dst, int b)
  {
    const auto count = static_cast<std::size_t>(n_) * static_cast<std::size_t>(b);
    grow(filter_w_, count, "block filter work (interleaved input)");
    grow(filter_a_, count, "block filter work (T_k X)");
    grow(filter_b_, count, "block filter work (T_k X)");
    grow(filter_y_, count, "block filter work (p(A) X)");
    kernels::interleave_columns(n_, b, col(src), ldv_, filter_w_.data(), stream_.get());
    for_each_chebyshev_step(
      *filter_, filter_w_.data(), filter_a_.data(), filter_b_.data(), [](const Scalar *) {},
      [&](const ChebyshevStep &st, const Scalar *cur, const Scalar *prev, Scalar *next) {
        op_->apply_chebyshev_step_block(st, b, cur, prev, next, filter_y_.data(), stream_.get());
      });
    kernels::deinterleave_columns(n_, b, filter_y_.data(), col(dst), ldv_, stream_.get());
  }

  /// Queues w -= V[:, first:first+k] coef (w the column c) and, if `norm`, w^H w into the real part of
  /// scalars_[0] (the fused kernel always forms it; fetch_norm reads it). Returns false when there is
  /// nothing to queue (no rows; or k = 0 without the norm). subtract() and update() share it.
  bool queue_subtract(const char *what, int first, int k, const Scalar *coef, int c, bool norm)
  {
    check_column(c);
    check_range(first, k);
    if (k > 0 && c >= first && c < first + k)
      throw Error(std::string("CudaBackend::") + what + ": column " + std::to_string(c) + " is among the columns subtracted");
    if (n_ == 0 || (k == 0 && !norm)) return false;
    if (k > 0) stage_coefficients(coef, k);
    if (flavor_ == KernelFlavor::Custom) {
      // w -= V coef; w.w, in one pass over w
      kernels::subtract_norm2(n_, k, col(first), ldv_, coef_.data(), col(c), real_slot(scalars_.data()), partials_.data(),
                              stream_.get());
      return true;
    }
    CUDALANCZOS_CHECK(cublasSetPointerMode(cublas_.get(), CUBLAS_POINTER_MODE_DEVICE));
    if (k > 0) // w = w - V coef
      CUDALANCZOS_CHECK(blas::gemv(cublas_.get(), CUBLAS_OP_N, n_, k, minus_one(), col(first), ldv_, coef_.data(), 1, one(),
                                   col(c), 1));
    if (norm) CUDALANCZOS_CHECK(blas::self_dot(cublas_.get(), n_, col(c), real_slot(scalars_.data()))); // w^H w
    return true;
  }

  /// coef[0..k-1] to coef_ on the device, through the pinned staging buffer. The buffer is rewritten
  /// only once the previous upload from it has completed (usually long ago: project/subtract wait).
  void stage_coefficients(const Scalar *coef, int k)
  {
    CUDALANCZOS_CHECK(cudaEventSynchronize(stage_done_.get()));
    std::memcpy(host_stage_.data(), coef, bytes(k));
    CUDALANCZOS_CHECK(cudaMemcpyAsync(coef_.data(), host_stage_.data(), bytes(k), cudaMemcpyHostToDevice, stream_.get()));
    CUDALANCZOS_CHECK(cudaEventRecord(stage_done_.get(), stream_.get()));
  }

  /// dst = src (n_ entries, device memory: the basis and a caller's array) on the backend's stream, ordered
  /// with the caller's stream s both ways by events, no host wait: the copy waits for s's work queued so
  /// far (the caller may still be writing src or reading dst there), and s's later work waits for the
  /// copy (the caller reads dst or overwrites src next).
  void copy_ordered(Scalar *dst, const Scalar *src, cudaStream_t s) const
  {
    ScopedDevice guard(device_);
    if (n_ == 0) return;
    CUDALANCZOS_CHECK(cudaEventRecord(caller_ready_.get(), s));
    CUDALANCZOS_CHECK(cudaStreamWaitEvent(stream_.get(), caller_ready_.get(), 0));
    CUDALANCZOS_CHECK(cudaMemcpyAsync(dst, src, bytes(n_), cudaMemcpyDefault, stream_.get()));
    CUDALANCZOS_CHECK(cudaEventRecord(copy_done_.get(), stream_.get()));
    CUDALANCZOS_CHECK(cudaStreamWaitEvent(s, copy_done_.get(), 0));
  }

  /// The `count` reduced scalars from the device to `out`: the one host round trip of a step.
  void fetch_scalars(int count, Scalar *out)
  {
    CUDALANCZOS_CHECK(cudaMemcpyAsync(host_scalars_.data(), scalars_.data(), bytes(count), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    std::memcpy(out, host_scalars_.data(), bytes(count));
  }

  /// The squared norm queue_subtract left in the real part of scalars_[0], to `out`.
  void fetch_norm(double *out)
  {
    CUDALANCZOS_CHECK(cudaMemcpyAsync(host_scalars_.data(), scalars_.data(), sizeof(double), cudaMemcpyDeviceToHost,
                                      stream_.get()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_.get()));
    std::memcpy(out, host_scalars_.data(), sizeof(double));
  }

  index_t n_, global_, offset_;
  index_t ldv_ = 0;
  int ncols_ = 0;
  int device_ = 0;
  std::shared_ptr<const DeviceOperator> op_;
  HostApply host_apply_;
  Reducer reduce_;
  bool single_process_; // no reducer given: expand() may keep its scalars on the device
  int  scale_ = 0;      // the operator is 2^scale_ A (set_operator_scale)
  std::optional<ChebyshevFilter> filter_; // the operator is p(A) while set (set_operator_filter)
  int  device_queued_ = -1; // queue_steps on the device: the steps queued (-1: none)
  KernelFlavor flavor_;

  Stream stream_;
  Event stage_done_;
  Event projections_copied_; // window_then_pass_block: its projections are on the host
  Event caller_ready_, copy_done_; // ordering with a caller's stream (copy_ordered, wait_for)
  CublasHandle cublas_;
  DeviceBuffer<Scalar> constants_; // 1, 0, -1 for cuBLAS calls in device pointer mode
  DeviceBuffer<Scalar> basis_;     // ncols_ columns of stride ldv_
  DeviceBuffer<double> partials_;  // per-block partial sums of the reductions (kernels' workspace, in doubles)
  DeviceBuffer<Scalar> scalars_;   // the reduced scalars of project/subtract, before they go to the host
  DeviceBuffer<Scalar> coef_;      // coefficients of subtract/combine
  DeviceBuffer<Scalar> q_;         // rotate's Q, packed k x m (vendor), or transposed and padded (custom)
  std::vector<Scalar> qt_host_;    // rotate: Q transposed on its way to q_ (reused: one per restart)
  DeviceBuffer<Scalar> rotate_ws_; // rotate_rows_ x ncols_
  index_t rotate_rows_ = 0;
  DeviceBuffer<Scalar> window_;    // expand(): coefficients of the three-term window and ||A v_j||^2
  DeviceBuffer<Scalar> h2_;        // expand(): coefficients of the full pass's DGKS repeat
  DeviceBuffer<double> after_;     // expand(): ||w||^2 after the full pass (1) and its repeat (2); 0 unused
  DeviceBuffer<kernels::DeviceStepRecord> records_; // expand(): step records
  DeviceBuffer<Scalar> block_dev_;   // project_block's (k+b) x b results (grow-only)
  DeviceBuffer<Scalar> block_coef_;  // update_block's C / transform_block's M, packed (grow-only)
  PinnedBuffer<Scalar> block_host_;  // project_block's results on their way to the host
  PinnedBuffer<Scalar> block_stage_; // C / M on their way to block_coef_
  PinnedBuffer<Scalar> host_scalars_, host_stage_;
  PinnedBuffer<kernels::DeviceStepRecord> host_records_;
  PinnedBuffer<Scalar> host_x_, host_y_; // the host-apply fallback
  DeviceBuffer<Scalar> filter_w_, filter_a_, filter_b_; // apply_filter: A T_k x and two Chebyshev vectors (grow-only)
  DeviceBuffer<Scalar> filter_y_;                       // apply_filter_block: the interleaved sum (grow-only)
  std::unique_ptr<ProjectedEigen> projected_;          // projected_eigen's cuSOLVER handle and workspaces (made at first use)
};

} // namespace

std::unique_ptr<Backend> make_cuda_backend(const BackendConfig &config, std::shared_ptr<const DeviceOperator> op,
                                           HostApply host_apply)
{
  return std::make_unique<CudaBackend>(config, std::move(op), std::move(host_apply));
}

void rebind_operator(Backend &backend, std::shared_ptr<const DeviceOperator> op)
{
  auto *cuda = dynamic_cast<CudaBackend *>(&backend);
  if (!cuda) throw Error("rebind_operator: not a backend of make_cuda_backend");
  cuda->rebind(std::move(op));
}

void wait_for_stream(Backend &backend, void *stream)
{
  auto *cuda = dynamic_cast<CudaBackend *>(&backend);
  if (!cuda) throw Error("wait_for_stream: not a backend of make_cuda_backend");
  cuda->wait_for(static_cast<cudaStream_t>(stream));
}

void apply_to_columns(Backend &backend, const DeviceOperator &op, int src, int dst)
{
  auto *cuda = dynamic_cast<CudaBackend *>(&backend);
  if (!cuda) throw Error("apply_to_columns: not a backend of make_cuda_backend");
  cuda->apply_other(op, src, dst);
}

std::size_t backend_device_bytes(const Backend &backend)
{
  const auto *cuda = dynamic_cast<const CudaBackend *>(&backend);
  return cuda ? cuda->device_bytes() : 0;
}

void order_streams(void *producer, void *consumer, int device)
{
  ScopedDevice guard(device);
  Event done = make_event();
  CUDALANCZOS_CHECK(cudaEventRecord(done.get(), static_cast<cudaStream_t>(producer)));
  CUDALANCZOS_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(consumer), done.get(), 0));
  // destroying an event whose record is still pending is allowed: the wait above already holds it
}

} // namespace cudalanczos::cuda
