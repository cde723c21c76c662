// The thesis's measurements (tables 5.1-5.9) redone on one GPU, printed as markdown:
//   copy     device-to-device cudaMemcpy bandwidth: the ceiling every other number is compared with
//   gemv     dense y = A x, n = 256 .. 32768: custom tiled kernel vs cuBLAS dgemv vs a serial host loop
//   spmv     CSR y = A x: custom vs cuSPARSE on a 2-D Laplacian (10^6 rows) and a Chung-Lu graph (2*10^6),
//            and cuSPARSE's CSR_ALG1 vs CSR_ALG2 called directly, each checked against the other
//   ops      one project / subtract (the fused reductions, scalars back on the host) per flavor
//   lanczos  the thesis variant, largest eigenpair to 1e-8, on a 12288 x 12288 dense symmetric matrix
//   cycle    where a thick-restart solve's time goes: one step's kernels, whole cycles, restarts, the host
//   block    block operations (b = 4, 8 columns at once) vs b single-column calls on the Chung-Lu graph
//   filter   one step of a polynomial filter on a 10^6-row 3-D lattice (the Anderson model's pattern):
//            the sparse product then chebyshev_step against the fused step, pattern and CSR, by lanes
//   upload   a matrix's host-to-device copy: cudaMemcpy from pageable and from pinned memory against the
//            staged upload (src/cuda/upload.cu) with 1..16 host threads, 1 GiB, and a padded dense copy
// GPU times are medians of CUDA-event timings after warm-up; host times medians of steady_clock.
// Bandwidth counts the fewest bytes the operation must move (each input read once, output written once).
#include "core/lanczos_driver.hpp"
#include "core/random.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/kernels.cuh"
#include "cuda/upload.hpp"
#include "bench_timing.hpp"
#include "timed_backend.hpp"
#include "host/host_backend.hpp"
#include "test_matrices.hpp" // tests/cuda: the same generators the tests use

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace cudalanczos;
using namespace cudalanczos::cuda;

namespace {

using bench::gpu_median_ms;
using bench::host_median_ms;
using bench::median;

/// Runs body(begin, end) over [0, n) on all host cores (matrix generation only; never timed).
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)> &body)
{
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
  for (auto &th : pool) th.join();
}

/// y = A x, column-major, serial: the thesis's "C estándar" reference, in its cache-friendly order.
void host_gemv(std::int64_t n, const double *A, const double *x, double *y)
{
  std::fill(y, y + n, 0.0);
  for (std::int64_t j = 0; j < n; ++j) {
    const double xj = x[j];
    const double *a = A + j * n;
    for (std::int64_t i = 0; i < n; ++i) y[i] += a[i] * xj;
  }
}

double max_rel_diff(const std::vector<double> &a, const std::vector<double> &b)
{
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return s > 0 ? d / s : d;
}

std::vector<double> to_host(const double *d, std::size_t n)
{
  std::vector<double> h(n);
  CUDALANCZOS_CHECK(cudaMemcpy(h.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost));
  return h;
}

double copy_bandwidth = 0; // GB/s, read + write; set by bench_copy

CsrView view_of(const test::Csr &A)
{
  return {A.rows, A.cols, static_cast<index_t>(A.colind.size()), A.rowptr.data(), A.colind.data(), A.values.data()};
}

/// The CUDA backend of a one-GPU solve with `op` as its operator and `flavor` vector kernels.
std::unique_ptr<Backend> single_gpu_backend(std::shared_ptr<const DeviceOperator> op, KernelFlavor flavor = KernelFlavor::Default)
{
  BackendConfig config;
  config.local_size = config.global_size = op->rows();
  config.flavor = flavor;
  return make_cuda_backend(config, std::move(op));
}


// --- copy -----------------------------------------------------------------------------------------------------

void bench_copy(cudaStream_t s)
{
  const std::size_t bytes = std::size_t(1) << 31; // 2 GiB each way: far past the L2
  DeviceBuffer<unsigned char> a(bytes), b(bytes);
  CUDALANCZOS_CHECK(cudaMemset(a.data(), 1, bytes));
  const double ms = gpu_median_ms([&] { CUDALANCZOS_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s)); }, s, 20);
  copy_bandwidth = 2.0 * bytes / (ms * 1e6);
  std::printf("## Device-to-device copy (the bandwidth ceiling)\n\n| bytes copied | median (ms) | GB/s (read + write) |\n|---:|---:|---:|\n");
  std::printf("| %zu | %.3f | %.0f |\n\n", bytes, ms, copy_bandwidth);
}

// --- dense gemv -------------------------------------------------------------------------------------------------

void bench_gemv(cudaStream_t s)
{
  if (copy_bandwidth == 0) bench_copy(s);
  CublasHandle cublas = make_cublas(s);
  const std::vector<std::int64_t> sizes{256, 512, 1024, 2048, 4096, 6144, 8192, 12288, 16384, 32768};
  constexpr std::int64_t host_limit = 8192;
  struct Row {
    std::int64_t n;
    double host_ms, custom_ms, cublas_ms, diff;
  };
  std::vector<Row> rows;
  struct Variant {
    std::int64_t n;
    double ms[3];
  };
  std::vector<Variant> variants;
  for (std::int64_t n : sizes) {
    DeviceBuffer<double> A(static_cast<std::size_t>(n * n)), x(n), y1(n), y2(n);
    kernels::set_random(n * n, 11, 0, A.data(), s); // entries in [-1, 1)
    kernels::set_random(n, 12, 0, x.data(), s);
    DeviceBuffer<unsigned char> ws(kernels::dense_gemv_workspace_bytes(n, n));
    CUDALANCZOS_CHECK(cudaMemsetAsync(ws.data(), 0, ws.bytes(), s));
    const int reps = n <= 8192 ? 50 : 20;
    Row r{n, 0, 0, 0, 0};
    r.custom_ms = gpu_median_ms([&] { kernels::dense_gemv(n, n, A.data(), n, x.data(), y1.data(), ws.data(), ws.bytes(), s); }, s, reps);
    const double one = 1, zero = 0;
    r.cublas_ms = gpu_median_ms(
        [&] { CUDALANCZOS_CHECK(cublasDgemv_64(cublas.get(), CUBLAS_OP_N, n, n, &one, A.data(), n, x.data(), 1, &zero, y2.data(), 1)); },
        s, reps);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
    const std::vector<double> hy1 = to_host(y1.data(), n), hy2 = to_host(y2.data(), n);
    r.diff = max_rel_diff(hy1, hy2);
    if (n <= host_limit) {
      const std::vector<double> hA = to_host(A.data(), static_cast<std::size_t>(n * n)), hx = to_host(x.data(), n);
      std::vector<double> hy(n);
      r.host_ms = host_median_ms([&] { host_gemv(n, hA.data(), hx.data(), hy.data()); }, n <= 2048 ? 9 : 3);
      r.diff = std::max(r.diff, max_rel_diff(hy1, hy));
    }
    rows.push_back(r);
    if (n == 1024 || n == 4096 || n == 8192 || n == 16384 || n == 32768) {
      Variant v{n, {}};
      for (int i = 0; i < 3; ++i) {
        const kernels::GemvTuning t{1 << i, 0};
        v.ms[i] = gpu_median_ms([&] { kernels::dense_gemv(n, n, A.data(), n, x.data(), y1.data(), ws.data(), ws.bytes(), s, t); }, s, reps);
      }
      variants.push_back(v);
    }
  }
  std::printf("## Dense matrix-vector product y = A x (thesis tables 5.1-5.3)\n\n");
  std::printf("A is n x n, entries uniform in [-1, 1); bytes = 8 (n^2 + 2n); %% copy = GB/s over the copy bandwidth "
              "(%.0f GB/s). Host: one core, serial column-major loop, up to n = %lld. Matrices of at most 50 MB stay in "
              "the 60 MB L2 between repetitions (marked L2).\n\n",
              copy_bandwidth, static_cast<long long>(host_limit));
  std::printf("| n | host (ms) | custom (ms) | cuBLAS (ms) | custom GB/s | cuBLAS GB/s | custom %% copy | cuBLAS %% copy | "
              "cuBLAS / custom time | host / custom time | max rel. diff |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row &r : rows) {
    const double bytes = 8.0 * (double(r.n) * r.n + 2.0 * r.n);
    const double gc = bytes / (r.custom_ms * 1e6), gb = bytes / (r.cublas_ms * 1e6);
    char host[32] = "-", speed[32] = "-";
    if (r.host_ms > 0) {
      std::snprintf(host, sizeof host, "%.2f", r.host_ms);
      std::snprintf(speed, sizeof speed, "%.0f", r.host_ms / r.custom_ms);
    }
    std::printf("| %lld%s | %s | %.4f | %.4f | %.0f | %.0f | %.1f | %.1f | %.2f | %s | %.1e |\n", static_cast<long long>(r.n),
                bytes <= 50e6 ? " (L2)" : "", host, r.custom_ms, r.cublas_ms, gc, gb, 100 * gc / copy_bandwidth,
                100 * gb / copy_bandwidth, r.cublas_ms / r.custom_ms, speed, r.diff);
  }
  std::printf("\n### Custom gemv: rows per block tile (64, 128, 256 rows = row groups 1, 2, 4)\n\n| n | 64 rows GB/s | 128 rows GB/s | 256 rows GB/s |\n|---:|---:|---:|---:|\n");
  for (const Variant &v : variants) {
    const double bytes = 8.0 * (double(v.n) * v.n + 2.0 * v.n);
    std::printf("| %lld | %.0f | %.0f | %.0f |\n", static_cast<long long>(v.n), bytes / (v.ms[0] * 1e6), bytes / (v.ms[1] * 1e6),
                bytes / (v.ms[2] * 1e6));
  }
  std::printf("\n");
}

// --- CSR SpMV ---------------------------------------------------------------------------------------------------

/// max_rel_diff, except that a NaN or an infinity in either vector makes it NaN: std::max drops NaNs, so
/// max_rel_diff alone would print a clean 0 for a product that came out NaN.
double checked_rel_diff(const std::vector<double> &a, const std::vector<double> &b)
{
  if (a.size() != b.size()) return std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return std::numeric_limits<double>::quiet_NaN();
  return max_rel_diff(a, b);
}

/// cuSPARSE's generic SpMV y = A x with one algorithm, called directly rather than through CsrOperator
/// (which fixes CSR_ALG1), so that algorithms can be compared on the same arrays. Each algorithm gets a
/// matrix descriptor and a buffer of its own, since the preprocessing is kept in them; the vector
/// descriptors are bound to x and y once, so run() is the bare cusparseSpMV call.
class DirectSpmv {
public:
  DirectSpmv(cusparseHandle_t handle, cusparseSpMVAlg_t alg, std::int64_t rows, std::int64_t nnz, int *rowptr, int *colind,
             double *values, const double *x, double *y)
      : handle_(handle), alg_(alg)
  {
    cusparseSpMatDescr_t m{};
    CUDALANCZOS_CHECK(cusparseCreateCsr(&m, rows, rows, nnz, rowptr, colind, values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    matrix_ = CusparseSpMat(m);
    cusparseDnVecDescr_t v{};
    CUDALANCZOS_CHECK(cusparseCreateDnVec(&v, rows, const_cast<double *>(x), CUDA_R_64F));
    x_ = CusparseDnVec(v);
    CUDALANCZOS_CHECK(cusparseCreateDnVec(&v, rows, y, CUDA_R_64F));
    y_ = CusparseDnVec(v);
    std::size_t bytes = 0;
    CUDALANCZOS_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, matrix_.get(), x_.get(), &zero_,
                                              y_.get(), CUDA_R_64F, alg_, &bytes));
    buffer_ = DeviceBuffer<unsigned char>(bytes, "cuSPARSE SpMV buffer (bench)");
    // As in CsrOperator: the preprocessing is an optimization, and a library that does not offer it for
    // this algorithm answers NOT_SUPPORTED, which is recorded (the table says so) rather than thrown.
    const cusparseStatus_t pre = cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, matrix_.get(),
                                                         x_.get(), &zero_, y_.get(), CUDA_R_64F, alg_, buffer_.data());
    if (pre != CUSPARSE_STATUS_NOT_SUPPORTED) CUDALANCZOS_CHECK(pre);
    preprocessed_ = pre == CUSPARSE_STATUS_SUCCESS;
  }

  void run() const
  {
    CUDALANCZOS_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, matrix_.get(), x_.get(), &zero_, y_.get(),
                                   CUDA_R_64F, alg_, buffer_.data()));
  }
  bool preprocessed() const { return preprocessed_; }
  std::size_t buffer_bytes() const { return buffer_.bytes(); }

private:
  cusparseHandle_t handle_;
  cusparseSpMVAlg_t alg_;
  double one_ = 1.0, zero_ = 0.0;
  CusparseSpMat matrix_;
  CusparseDnVec x_, y_;
  DeviceBuffer<unsigned char> buffer_;
  bool preprocessed_ = false;
};

void bench_spmv(cudaStream_t s)
{
  if (copy_bandwidth == 0) bench_copy(s);
  CusparseHandle sparse = make_cusparse(s); // the direct calls' handle: declared first, destroyed last
  std::vector<std::string> direct_rows;     // the second table's rows, printed after the first table
  std::vector<std::string> lane_rows;       // the third table's (pattern kernel, lanes per row)
  std::printf("## CSR sparse matrix-vector product\n\nbytes = 12 nnz + 4 (rows + 1) + 8 cols + 8 rows (each array once). "
              "Custom: adaptive lanes per row (power of two at or above the mean row length).\n\n");
  std::printf("| matrix | rows | nnz | max row | custom (ms) | cuSPARSE (ms) | custom GB/s | cuSPARSE GB/s | cuSPARSE / custom "
              "time | max rel. diff | default (ms) | cuSPARSE / default time | default rel. diff | default operator |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  for (int which = 0; which < 2; ++which) {
    // 10^6 rows of 5 entries, and 2*10^6 rows averaging 16 with hubs of thousands
    const test::Csr A = which == 0 ? test::laplacian(1000) : test::chung_lu(2000000, 16, 0xc1u);
    const std::string name = which == 0 ? "2-D Laplacian 1000^2" : "Chung-Lu power law, degree 16";
    const std::int64_t nnz = static_cast<std::int64_t>(A.colind.size());
    int max_row = 0;
    for (std::int64_t r = 0; r < A.rows; ++r) max_row = std::max(max_row, A.rowptr[r + 1] - A.rowptr[r]);
    const CsrView view = view_of(A);
    const auto custom = make_csr_operator(view, KernelFlavor::Custom, -1);
    const auto vendor = make_csr_operator(view, KernelFlavor::Vendor, -1);
    DeviceBuffer<double> x(A.rows), y1(A.rows), y2(A.rows);
    kernels::set_random(A.rows, 21, 0, x.data(), s);
    const double tc = gpu_median_ms([&] { custom->apply(x.data(), y1.data(), s); }, s, 50);
    const double tv = gpu_median_ms([&] { vendor->apply(x.data(), y2.data(), s); }, s, 50);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
    const std::vector<double> hy2 = to_host(y2.data(), A.rows);
    const double diff = max_rel_diff(to_host(y1.data(), A.rows), hy2);
    const double bytes = 12.0 * nnz + 4.0 * (A.rows + 1) + 16.0 * A.rows;
    // The default flavor: the pattern kernel when the off-diagonal values are all equal (both here).
    const auto chosen = make_csr_operator(view, KernelFlavor::Default, -1);
    DeviceBuffer<double> y3(A.rows);
    const double td = gpu_median_ms([&] { chosen->apply(x.data(), y3.data(), s); }, s, 50);
    CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
    const double diff_default = checked_rel_diff(to_host(y3.data(), A.rows), hy2);
    {
      // The pattern kernel with every lane count: its default picks the power of two at or above the
      // mean row length. Both matrices hold -1 or 1 off the diagonal and 4 or nothing on it.
      std::vector<int> prow{0}, pcol;
      double c = 0, d = 0;
      for (std::int64_t r = 0; r < A.rows; ++r) {
        for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j)
          if (A.colind[j] == r) d = A.values[j];
          else pcol.push_back(A.colind[j]), c = A.values[j];
        prow.push_back(static_cast<int>(pcol.size()));
      }
      DeviceBuffer<int> dprow(prow.size()), dpcol(pcol.size());
      CUDALANCZOS_CHECK(cudaMemcpy(dprow.data(), prow.data(), dprow.bytes(), cudaMemcpyHostToDevice));
      CUDALANCZOS_CHECK(cudaMemcpy(dpcol.data(), pcol.data(), dpcol.bytes(), cudaMemcpyHostToDevice));
      std::string row = "| " + name;
      for (int lanes : {1, 2, 4, 8, 16, 32}) {
        const double t = gpu_median_ms([&] {
          kernels::pattern_spmv(A.rows, static_cast<index_t>(pcol.size()), dprow.data(), dpcol.data(), c, d, nullptr,
                                x.data(), y3.data(), s, lanes);
        }, s, 50);
        CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
        char cell[64];
        std::snprintf(cell, sizeof cell, " | %.4f (%.0e)", t, checked_rel_diff(to_host(y3.data(), A.rows), hy2));
        row += cell;
      }
      lane_rows.push_back(row + " |\n");
    }
    std::printf("| %s | %lld | %lld | %d | %.4f | %.4f | %.0f | %.0f | %.2f | %.1e | %.4f | %.2f | %.1e | %s |\n", name.c_str(),
                static_cast<long long>(A.rows), static_cast<long long>(nnz), max_row, tc, tv, bytes / (tc * 1e6),
                bytes / (tv * 1e6), tv / tc, diff, td, tv / td, diff_default, chosen->description().c_str());

    // cuSPARSE called directly with CSR_ALG1 (CsrOperator's choice) and CSR_ALG2 on copies of the same
    // arrays and the same x: CsrOperator owns its arrays and its algorithm, so it cannot run ALG2.
    DeviceBuffer<int> rowptr(static_cast<std::size_t>(A.rows) + 1), colind(static_cast<std::size_t>(nnz));
    DeviceBuffer<double> values(static_cast<std::size_t>(nnz)), ya(A.rows), yb(A.rows);
    CUDALANCZOS_CHECK(cudaMemcpy(rowptr.data(), A.rowptr.data(), rowptr.bytes(), cudaMemcpyHostToDevice));
    CUDALANCZOS_CHECK(cudaMemcpy(colind.data(), A.colind.data(), colind.bytes(), cudaMemcpyHostToDevice));
    CUDALANCZOS_CHECK(cudaMemcpy(values.data(), A.values.data(), values.bytes(), cudaMemcpyHostToDevice));
    const DirectSpmv alg1(sparse.get(), CUSPARSE_SPMV_CSR_ALG1, A.rows, nnz, rowptr.data(), colind.data(), values.data(),
                          x.data(), ya.data());
    const DirectSpmv alg2(sparse.get(), CUSPARSE_SPMV_CSR_ALG2, A.rows, nnz, rowptr.data(), colind.data(), values.data(),
                          x.data(), yb.data());
    const double t1 = gpu_median_ms([&] { alg1.run(); }, s, 50);
    const double t2 = gpu_median_ms([&] { alg2.run(); }, s, 50);
    // Checked on fresh products: y is first filled with bytes 0x7f (every double 1.4e306, finite, so
    // that a library computing beta * y with beta = 0 does not turn it into NaN), so a row the algorithm
    // left unwritten shows as a relative difference of order 1 instead of the timing runs' value. Each
    // algorithm runs twice to say whether it repeats bit for bit (ALG2 is documented to).
    const auto fresh = [&](const DirectSpmv &p, double *y) {
      CUDALANCZOS_CHECK(cudaMemsetAsync(y, 0x7f, static_cast<std::size_t>(A.rows) * sizeof(double), s));
      p.run();
      CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
      return to_host(y, A.rows);
    };
    const std::vector<double> a1 = fresh(alg1, ya.data()), b1 = fresh(alg2, yb.data());
    const std::vector<double> a2 = fresh(alg1, ya.data()), b2 = fresh(alg2, yb.data());
    const auto same_bits = [&](const std::vector<double> &p, const std::vector<double> &q) {
      return std::memcmp(p.data(), q.data(), p.size() * sizeof(double)) == 0 ? "yes" : "no";
    };
    const double d21 = checked_rel_diff(b1, a1), d1v = checked_rel_diff(a1, hy2);
    char row[512];
    std::snprintf(row, sizeof row, "| %s | %.4f | %.4f | %.0f | %.0f | %.2f | %.2f | %zu / %zu | %s / %s | %s / %s | %.1e | %.1e%s |\n",
                  name.c_str(), t1, t2, bytes / (t1 * 1e6), bytes / (t2 * 1e6), t2 / t1, t2 / tc, alg1.buffer_bytes(),
                  alg2.buffer_bytes(), alg1.preprocessed() ? "yes" : "no", alg2.preprocessed() ? "yes" : "no",
                  same_bits(a1, a2), same_bits(b1, b2), d1v, d21, d21 <= 1e-12 ? "" : " (over 1e-12: ALG2 wrong?)");
    direct_rows.push_back(row);
  }
  std::printf("\n### cuSPARSE SpMV algorithms, called directly (generic API)\n\n"
              "Same matrices, x and byte count as above. CSR_ALG1 is what the cuSPARSE operator uses (its time here "
              "lacks the operator's per-call descriptor updates); CSR_ALG2 is documented as deterministic. "
              "Preprocess: cusparseSpMV_preprocess succeeded (no: NOT_SUPPORTED for that algorithm). Differences are "
              "max |a - b| / max |b| on fresh products; ALG2 vs ALG1 must be rounding-level (<= 1e-12).\n\n");
  std::printf("| matrix | ALG1 (ms) | ALG2 (ms) | ALG1 GB/s | ALG2 GB/s | ALG2 / ALG1 time | ALG2 / custom time | buffer bytes "
              "ALG1 / ALG2 | preprocess ALG1 / ALG2 | bitwise repeatable ALG1 / ALG2 | ALG1 vs operator rel. diff | "
              "ALG2 vs ALG1 rel. diff |\n|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|\n");
  for (const std::string &r : direct_rows) std::printf("%s", r.c_str());
  std::printf("\n### The pattern kernel by lanes per row\n\nms (relative difference from cuSPARSE's product).\n\n"
              "| matrix | 1 | 2 | 4 | 8 | 16 | 32 |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string &r : lane_rows) std::printf("%s", r.c_str());
  std::printf("\n");
}

// --- block products ---------------------------------------------------------------------------------------------

/// Block products on the suite's sparse shapes: the interleaved kernels against cuSPARSE's SpMM.
void bench_spmm(cudaStream_t s)
{
  std::printf("## Sparse products of a block of b columns\n\nms per call, median of 30; in parentheses the time per "
              "column relative to one single-vector product of the same operator. Column-major blocks with ld = rows. "
              "Interleaved: kernels::csr_spmm / pattern_spmm (the block copied row-interleaved, then one gather per "
              "entry for up to 8 columns); cuSPARSE: one SpMM (CSR_ALG1, column-major). Max rel. diff: each block's "
              "result against b single-vector products of the cuSPARSE operator.\n\n");
  std::printf("| matrix | b | single product (ms) | interleaved, custom CSR | cuSPARSE SpMM | interleaved, pattern | "
              "max rel. diff |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (int which = 0; which < 3; ++which) {
    // the suite's three sparse shapes: a stencil, a power-law graph, random entries with random values
    const test::Csr A = which == 0   ? test::laplacian(1000)
                        : which == 1 ? test::chung_lu(2000000, 16, 0xc1u)
                                     : test::random_csr(1000000, 1000000, 16.0, 0xd2u);
    const char *name = which == 0 ? "2-D Laplacian 1000^2" : which == 1 ? "Chung-Lu power law, degree 16" : "random, 16 per row";
    const std::int64_t n = A.rows;
    const CsrView view = view_of(A);
    const auto custom = make_csr_operator(view, KernelFlavor::Custom, -1);
    const auto vendor = make_csr_operator(view, KernelFlavor::Vendor, -1);
    const auto chosen = make_csr_operator(view, KernelFlavor::Default, -1);
    const bool pattern = chosen->description().find("pattern") != std::string::npos;
    DeviceBuffer<double> X(static_cast<std::size_t>(n) * 8), Y(static_cast<std::size_t>(n) * 8), R(static_cast<std::size_t>(n) * 8);
    for (int j = 0; j < 8; ++j) kernels::set_random(n, 31 + j, 0, X.data() + j * n, s);
    const double t1 = gpu_median_ms([&] { (pattern ? chosen : vendor)->apply(X.data(), Y.data(), s); }, s, 30);
    for (int b : {2, 4, 8}) {
      for (int j = 0; j < b; ++j) vendor->apply(X.data() + j * n, R.data() + j * n, s);
      CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
      const std::vector<double> ref = to_host(R.data(), static_cast<std::size_t>(n) * b);
      double worst = 0;
      const auto time = [&](const DeviceOperator &op) {
        const double t = gpu_median_ms([&] { op.apply_block(X.data(), n, Y.data(), n, b, s); }, s, 30);
        CUDALANCZOS_CHECK(cudaMemsetAsync(Y.data(), 0x7f, static_cast<std::size_t>(n) * b * sizeof(double), s));
        op.apply_block(X.data(), n, Y.data(), n, b, s);
        CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
        const double d = checked_rel_diff(to_host(Y.data(), static_cast<std::size_t>(n) * b), ref);
        worst = std::isnan(d) || std::isnan(worst) ? std::numeric_limits<double>::quiet_NaN() : std::max(worst, d);
        return t;
      };
      const double tc = time(*custom), tv = time(*vendor), tp = pattern ? time(*chosen) : 0;
      char cell[64] = "-";
      if (pattern) std::snprintf(cell, sizeof cell, "%.4f (%.2f)", tp, tp / (b * t1));
      std::printf("| %s | %d | %.4f | %.4f (%.2f) | %.4f (%.2f) | %s | %.1e |\n", name, b, t1, tc, tc / (b * t1), tv,
                  tv / (b * t1), cell, worst);
    }
  }
  std::printf("\n");
}

// --- per-step vector operations ---------------------------------------------------------------------------------

void bench_ops()
{
  std::printf("## One project / subtract call (thesis tables 5.4-5.6: vector updates and dot products)\n\n"
              "Microseconds per call, median of 200, through the backend: kernels, the copy of the k + 1 scalars to "
              "pinned host memory and the wait for them. Custom: fused kernels; vendor: cuBLAS gemv + dot.\n\n");
  std::printf("| n | k | project custom | project vendor | subtract custom | subtract vendor |\n|---:|---:|---:|---:|---:|---:|\n");
  for (std::int64_t n : {std::int64_t(12288), std::int64_t(1000000), std::int64_t(1) << 24})
    for (int k : {1, 2, 8, 32}) {
      double t[2][2];
      for (int f = 0; f < 2; ++f) {
        auto b = single_gpu_backend(make_callback_operator(n, n, [](const double *, double *, void *) {}, "none", -1),
                                    f == 0 ? KernelFlavor::Custom : KernelFlavor::Vendor);
        b->resize_basis(k + 1);
        for (int j = 0; j <= k; ++j) b->set_random(j, 31 + j);
        std::vector<double> out(k + 1), coef(k, 1e-3);
        for (int i = 0; i < 5; ++i) b->project(0, k, k, out.data());
        t[0][f] = 1e3 * host_median_ms([&] { b->project(0, k, k, out.data()); }, 200);
        for (int i = 0; i < 5; ++i) b->subtract(0, k, coef.data(), k);
        t[1][f] = 1e3 * host_median_ms([&] { b->subtract(0, k, coef.data(), k); }, 200);
      }
      std::printf("| %lld | %d | %.1f | %.1f | %.1f | %.1f |\n", static_cast<long long>(n), k, t[0][0], t[0][1], t[1][0], t[1][1]);
    }
  std::printf("\n");
}

// --- the whole Lanczos ----------------------------------------------------------------------------------------

void bench_lanczos()
{
  const std::int64_t n = 12288;
  std::vector<double> A(static_cast<std::size_t>(n * n));
  parallel_for(n, [&](std::int64_t j0, std::int64_t j1) { // uniform in [0, 1], symmetric by construction
    for (std::int64_t j = j0; j < j1; ++j)
      for (std::int64_t i = 0; i < n; ++i)
        A[i + j * n] = 0.5 * (random_entry(41, std::min(i, j) * n + std::max(i, j)) + 1.0);
  });
  Settings s;
  s.variant = Variant::Thesis;
  s.reorthogonalization = Reorthogonalization::None;
  s.which = Which::LargestAlgebraic;
  s.nev = 1;
  s.ncv = 60;
  s.max_it = 60;
  s.tol = 1e-8;
  std::printf("## Whole Lanczos (thesis tables 5.7-5.9): thesis variant, largest eigenpair to 1e-8\n\n"
              "A is %lld x %lld, entries uniform in [0, 1], symmetric. Time of solve() only (the matrix is already on "
              "the device); host: the reference backend, serial.\n\n",
              static_cast<long long>(n), static_cast<long long>(n));
  std::printf("| backend | solve (s) | steps | matvecs | reductions | eigenvalue | error | speedup vs host |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  double host_s = 0;
  for (int which = 0; which < 4; ++which) {
    std::unique_ptr<Backend> b;
    std::string name;
    if (which == 0) {
      name = "host (serial)";
      b = std::make_unique<HostBackend>(n, n, 0, [&](const double *x, double *y) { host_gemv(n, A.data(), x, y); });
    } else {
      const KernelFlavor f = which == 1 ? KernelFlavor::Custom : which == 2 ? KernelFlavor::Vendor : KernelFlavor::Default;
      const auto op = make_dense_operator({n, n, n, A.data()}, f, -1);
      name = std::string("cuda ") + to_string(f) + ": " + op->description();
      b = single_gpu_backend(op, f);
    }
    b->resize_basis(basis_columns_needed(s));
    if (which > 0) solve(*b, s, {}); // warm-up: module load, handles
    Result r;
    const double sec = host_median_ms([&] { r = solve(*b, s, {}); }, which == 0 ? 1 : 5) / 1e3;
    if (which == 0) host_s = sec;
    std::printf("| %s | %.4f | %d | %ld | %ld | %.10g | %.1e | %.0f |\n", name.c_str(), sec, r.its, r.matvecs, r.reductions,
                r.eigenvalues.empty() ? 0.0 : r.eigenvalues[0], r.errors.empty() ? 0.0 : r.errors[0], host_s / sec);
  }
  std::printf("\n");
}

// --- where a thick-restart solve's time goes --------------------------------------------------------------------

using bench::TimedBackend;

void bench_cycle(cudaStream_t s)
{
  if (copy_bandwidth == 0) bench_copy(s);
  std::printf("## Where a thick-restart solve's time goes\n\n");
  for (int which = 0; which < 2; ++which) {
    const test::Csr A = which == 0 ? test::laplacian(1000) : test::chung_lu(2000000, 16, 0xc1u);
    const std::string mname = which == 0 ? "2-D Laplacian 1000^2" : "Chung-Lu power law, 2*10^6, degree 16";
    const std::int64_t n = A.rows, nnz = static_cast<std::int64_t>(A.colind.size());
    const auto op = make_csr_operator(view_of(A), KernelFlavor::Default, -1);
    auto b = single_gpu_backend(op);
    const int cols = 64;
    b->resize_basis(cols + 1);
    std::printf("### %s (n = %lld, nnz = %lld): %s\n\n", mname.c_str(), static_cast<long long>(n), static_cast<long long>(nnz),
                op->description().c_str());
    // One step's pieces, timed alone (device events, median of 50).
    DeviceBuffer<double> V(static_cast<std::size_t>(n) * (cols + 1)), out(cols + 2), work(kernels::reduction_workspace_doubles(cols + 1));
    CUDALANCZOS_CHECK(cudaMemset(work.data(), 0, work.bytes())); // the reductions' finish counters
    for (int j = 0; j <= cols; ++j) kernels::set_random(n, 51 + j, 0, V.data() + j * n, s);
    std::vector<double> coef(cols + 1, 1e-3);
    DeviceBuffer<double> dcoef(cols + 1);
    CUDALANCZOS_CHECK(cudaMemcpy(dcoef.data(), coef.data(), coef.size() * sizeof(double), cudaMemcpyHostToDevice));
    double *w = V.data() + static_cast<std::size_t>(cols) * n;
    const double t_mv = gpu_median_ms([&] { op->apply(V.data(), w, s); }, s, 50);
    const double mv_bytes = 12.0 * nnz + 4.0 * (n + 1) + 16.0 * n;
    std::printf("matrix-vector product: %.4f ms (%.0f GB/s; copy ceiling %.0f GB/s)\n\n", t_mv, mv_bytes / (t_mv * 1e6), copy_bandwidth);
    std::printf("| k | multi_dot (ms) | GB/s | subtract_norm2 (ms) | GB/s | finish_step (ms) |\n|---:|---:|---:|---:|---:|---:|\n");
    for (int k : {1, 8, 16, 24, 32, 48, 64}) {
      const double td = gpu_median_ms([&] { kernels::multi_dot(n, k, V.data(), n, w, out.data(), work.data(), s); }, s, 50);
      const double ts = gpu_median_ms([&] { kernels::subtract_norm2(n, k, V.data(), n, dcoef.data(), w, out.data(), work.data(), s); }, s, 50);
      std::printf("| %d | %.4f | %.0f | %.4f | %.0f | |\n", k, td, 8.0 * (k + 1) * n / (td * 1e6), ts, 8.0 * (k + 2) * n / (ts * 1e6));
    }
    std::printf("\n");
    // Whole cycles through Backend::expand: steps first..last-1 from a random start, host-timed with the wait.
    std::printf("| cycle | steps | ms | ms per step | per step / matvec | second passes |\n|---|---:|---:|---:|---:|---:|\n");
    for (auto [first, last] : {std::pair{0, 16}, std::pair{8, 16}, std::pair{0, 32}, std::pair{16, 32}, std::pair{0, 64}, std::pair{32, 64}}) {
      std::vector<StepRecord> rec(static_cast<std::size_t>(last - first));
      std::vector<double> t;
      int second = 0;
      for (int rep = 0; rep < 7; ++rep) {
        b->set_random(0, 7);
        double nrm2 = 0;
        b->project(0, 0, 0, &nrm2);
        b->scale(0, 1.0 / std::sqrt(nrm2));
        if (first > 0) b->expand(0, first, 0.0, rec.data());
        b->synchronize();
        const auto a = std::chrono::steady_clock::now();
        b->expand(first, last, 0.0, rec.data());
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
        second = 0;
        for (int i = 0; i < last - first; ++i) second += rec[static_cast<std::size_t>(i)].second_pass;
      }
      const double ms = median(t);
      std::printf("| %d..%d | %d | %.3f | %.4f | %.2f | %d |\n", first, last, last - first, ms, ms / (last - first),
                  ms / (last - first) / t_mv, second);
    }
    std::printf("\n");
    // Whole solves, largest eigenvalue, tol 1e-8, split by backend call.
    std::printf("| nev | ncv | grows to | verify | solve (s) | its | matvecs | ended at | ms / matvec | steps (s) | calls | rotate (s) | calls | other backend (s) | driver host (s) |\n"
                "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int nev : {1, 10})
      for (int config = 0; config < 3; ++config) // SLEPc's ncv fixed, growing as the PETSc default allows, 48 fixed
        for (bool verify : {false, true}) {
          if (which == 0 && nev == 10) continue; // 10-40 s a solve
          Settings st;
          st.which = Which::LargestAlgebraic;
          st.nev = nev;
          st.ncv = config == 2 ? 48 : std::max(2 * nev, nev + 15);
          st.ncv_max = config == 1 ? std::max(2 * st.ncv, st.ncv + 32) : 0;
          st.max_it = 100000;
          st.tol = 1e-8;
          st.verify = verify;
          b->resize_basis(basis_columns_needed(st));
          solve(*b, st, {}); // warm-up
          TimedBackend tb(*b);
          const auto a = std::chrono::steady_clock::now();
          const Result r = solve(tb, st, {});
          const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
          std::printf("| %d | %d | %d | %s | %.3f | %d | %ld | %d | %.4f | %.3f | %ld | %.3f | %ld | %.3f | %.3f |\n", nev, st.ncv,
                      std::max(st.ncv, st.ncv_max), verify ? "on" : "off", sec, r.its, r.matvecs, r.ncv_used, 1e3 * sec / r.matvecs,
                      tb.steps_s, tb.step_calls, tb.rotate_s, tb.rotate_calls, tb.other_s,
                      sec - tb.steps_s - tb.rotate_s - tb.other_s);
        }
    std::printf("\n");
  }
}

// --- block operations -------------------------------------------------------------------------------------------

/// Median milliseconds of one call of `f` on backend `b`, host-timed from an idle device to the end of the
/// call's device work. The backend queues on a stream of its own, which events on the bench's stream cannot
/// bracket, hence the host clock; `inner` calls per timing spread the final wait (tens of microseconds)
/// over calls that do not wait by themselves (inner = 1 for those that do, as project).
double backend_median_ms(Backend &b, const std::function<void()> &f, int inner, int reps)
{
  for (int i = 0; i < 3; ++i) f(); // warm-up: first-call allocations (SpMM descriptors, grow-only buffers)
  b.synchronize();
  return host_median_ms(
             [&] {
               for (int i = 0; i < inner; ++i) f();
               b.synchronize();
             },
             reps) /
         inner;
}

void bench_block(cudaStream_t s)
{
  if (copy_bandwidth == 0) bench_copy(s);
  const test::Csr A = test::chung_lu(2000000, 16, 0xc1u);
  const std::int64_t n = A.rows, nnz = static_cast<std::int64_t>(A.colind.size());
  const auto op = make_csr_operator(view_of(A), KernelFlavor::Default, -1);
  auto be = single_gpu_backend(op);
  const double nd = static_cast<double>(n), matrix_bytes = 12.0 * nnz + 4.0 * (n + 1);

  struct Row {
    int op, k, b; // op: 0 apply, 1 project, 2 update; k = 0 for apply (it does not depend on k)
    double block_ms, cols_ms, bytes, diff;
  };
  std::vector<Row> rows;
  // Returns columns first..first+count-1 of the basis, one after the other, on the host.
  const auto columns = [&](int first, int count) {
    std::vector<double> h(static_cast<std::size_t>(count) * static_cast<std::size_t>(n));
    for (int j = 0; j < count; ++j) be->get_column(first + j, h.data() + static_cast<std::size_t>(j) * n);
    return h;
  };
  for (int b : {4, 8})
    for (int k : {24, 48, 72}) {
      be->resize_basis(k + b); // contents unspecified afterwards: every column is set before use
      const auto fill = [&] {
        for (int j = 0; j < k + b; ++j) be->set_random(j, 61 + static_cast<std::uint64_t>(j));
      };
      fill();

      // V[:, k:k+b] = A V[:, 0:b] (one cuSPARSE SpMM) vs b SpMVs. Checked on fresh outputs: the
      // destination is overwritten with other random vectors before each, so a column the block product
      // left unwritten cannot keep the column-by-column result.
      if (k == 24) {
        Row r{0, 0, b, 0, 0, matrix_bytes + 16.0 * b * nd, 0};
        r.block_ms = backend_median_ms(*be, [&] { be->apply_operator_block(0, k, b); }, 5, 15);
        r.cols_ms = backend_median_ms(
            *be,
            [&] {
              for (int j = 0; j < b; ++j) be->apply_operator(j, k + j);
            },
            5, 15);
        for (int j = 0; j < b; ++j) be->set_random(k + j, 91 + static_cast<std::uint64_t>(j));
        for (int j = 0; j < b; ++j) be->apply_operator(j, k + j);
        const std::vector<double> yc = columns(k, b);
        for (int j = 0; j < b; ++j) be->set_random(k + j, 91 + static_cast<std::uint64_t>(j));
        be->apply_operator_block(0, k, b);
        r.diff = checked_rel_diff(columns(k, b), yc);
        rows.push_back(r);
        fill();
      }

      // [V_0..k-1 V_k..k+b-1]^T V_k..k+b-1 (one gemm, (k+b) x b to the host) vs b calls of project(0, k, k+j),
      // each k + 1 scalars to the host and a wait; both host-timed, each call with its own wait.
      {
        Row r{1, k, b, 0, 0, 8.0 * (k + b) * nd, 0};
        std::vector<double> blk(static_cast<std::size_t>(k + b) * b), one(static_cast<std::size_t>(k + 1) * b);
        r.block_ms = backend_median_ms(*be, [&] { be->project_block(0, k, k, b, blk.data()); }, 1, 30);
        r.cols_ms = backend_median_ms(
            *be,
            [&] {
              for (int j = 0; j < b; ++j) be->project(0, k, k + j, one.data() + static_cast<std::size_t>(j) * (k + 1));
            },
            1, 30);
        // Same quantities from both: the k projections of each block column and its squared norm (the
        // Gram matrix's diagonal). Compared separately, as the norms (about n / 3) dwarf the projections.
        std::vector<double> pb, pc, nb, nc;
        for (int j = 0; j < b; ++j) {
          const double *bj = blk.data() + static_cast<std::size_t>(j) * (k + b);
          const double *cj = one.data() + static_cast<std::size_t>(j) * (k + 1);
          pb.insert(pb.end(), bj, bj + k);
          pc.insert(pc.end(), cj, cj + k);
          nb.push_back(bj[k + j]);
          nc.push_back(cj[k]);
        }
        const double dp = checked_rel_diff(pb, pc), dn = checked_rel_diff(nb, nc);
        r.diff = std::isnan(dp) || std::isnan(dn) ? std::numeric_limits<double>::quiet_NaN() : std::max(dp, dn);
        rows.push_back(r);
      }

      // V[:, k:k+b] -= V[:, 0:k] C (one gemm) vs b calls of update(0, k, C[:, j], k+j); no reductions, no
      // waits. Checked from the same start (fill() again): C's effect, about 1e-3 of the columns, is far
      // above rounding, so a block column left untouched would show.
      {
        Row r{2, k, b, 0, 0, 8.0 * (k + 2.0 * b) * nd, 0};
        std::vector<double> C(static_cast<std::size_t>(k) * b);
        for (std::size_t i = 0; i < C.size(); ++i) C[i] = 1e-3 * random_entry(71, static_cast<std::int64_t>(i));
        r.block_ms = backend_median_ms(*be, [&] { be->update_block(0, k, C.data(), k, k, b); }, 5, 15);
        r.cols_ms = backend_median_ms(
            *be,
            [&] {
              for (int j = 0; j < b; ++j) be->update(0, k, C.data() + static_cast<std::size_t>(j) * k, k + j);
            },
            5, 15);
        fill();
        be->update_block(0, k, C.data(), k, k, b);
        const std::vector<double> yb = columns(k, b);
        fill();
        for (int j = 0; j < b; ++j) be->update(0, k, C.data() + static_cast<std::size_t>(j) * k, k + j);
        r.diff = checked_rel_diff(yb, columns(k, b));
        rows.push_back(r);
      }
    }
  std::sort(rows.begin(), rows.end(), [](const Row &p, const Row &q) {
    return p.op != q.op ? p.op < q.op : p.k != q.k ? p.k < q.k : p.b < q.b;
  });

  std::printf("## Block operations vs b single-column calls (block Lanczos)\n\n"
              "Chung-Lu power law, n = %lld, nnz = %lld: %s; the CUDA backend, default flavor. Host-timed medians from "
              "an idle device to the end of the work (the backend's stream is its own), apply and update averaged over 5 "
              "calls per timing, project one call (it waits anyway). Columns: apply_operator(j, k+j) / project(0, k, k+j) "
              "/ update(0, k, C[:, j], k+j) for j < b. Block GB/s counts the fewest bytes: apply the CSR arrays + 8 b n "
              "read + 8 b n written; project 8 k n + 8 b n read; update 8 k n read + 8 b n read and written "
              "(%% copy: of %.0f GB/s). Max rel. diff: block result vs the columns' (project: projections and norms, "
              "the larger).\n\n",
              static_cast<long long>(n), static_cast<long long>(nnz), op->description().c_str(), copy_bandwidth);
  std::printf("| op | k | b | block (ms) | columns one by one (ms) | columns / block time | block GB/s | block %% copy | "
              "max rel. diff |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const char *const names[] = {"apply_operator_block", "project_block", "update_block"};
  for (const Row &r : rows) {
    char k[16] = "-";
    if (r.op != 0) std::snprintf(k, sizeof k, "%d", r.k);
    const double gbs = r.bytes / (r.block_ms * 1e6);
    std::printf("| %s | %s | %d | %.4f | %.4f | %.2f | %.0f | %.1f | %.1e |\n", names[r.op], k, r.b, r.block_ms, r.cols_ms,
                r.cols_ms / r.block_ms, gbs, 100 * gbs / copy_bandwidth, r.diff);
  }
  std::printf("\n");
}

// Partial steps (expand_partial: the three-term window and a pass over columns 0..reach-1) against full
// steps, on the suite's shapes, from a basis of 33 full steps: what one column of the pass costs and what
// a step costs besides its product and its pass. Host-timed medians of 7 calls of 16 steps, each call
// ending with the wait for its records (one host round trip per 16 steps, as in a cycle).
void bench_steps(cudaStream_t s)
{
  if (copy_bandwidth == 0) bench_copy(s);
  std::printf("## One partial step against its pass\n\n"
              "Steps 33..48 from the Krylov basis of 33 full steps, the CUDA backend; `reach r`: expand_partial "
              "with the pass over columns 0..r-1 (plus the window v_{j-1}, v_j), `full`: expand. Floor: the "
              "product's time plus the bytes of the pass (read twice: projection and subtraction) and the window "
              "(w read and written four times, v_{j-1}, v_j twice) at the copy bandwidth (%.0f GB/s).\n\n",
              copy_bandwidth);
  std::printf("| matrix | n | product (ms) | pass | ms per step | step - product (ms) | floor (ms) | step / floor | second passes |\n"
              "|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (int which = 0; which < 4; ++which) {
    const int first = 33, last = 49;
    std::shared_ptr<const DeviceOperator> op;
    std::vector<double> dense;
    std::int64_t n = 0;
    std::string name;
    if (which < 3) {
      const test::Csr A = which == 0   ? test::laplacian(1000)
                          : which == 1 ? test::chung_lu(2000000, 16, 0xc1u)
                                       : test::random_csr(1000000, 1000000, 16.0, 0xd2u);
      name = which == 0 ? "2-D Laplacian 1000^2" : which == 1 ? "Chung-Lu power law, degree 16" : "random, 16 per row";
      n = A.rows;
      op = make_csr_operator(view_of(A), KernelFlavor::Default, -1);
    } else {
      n = 4096;
      dense.resize(static_cast<std::size_t>(n) * n);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i <= j; ++i)
          dense[i + j * n] = dense[j + i * n] = 0.5 * (1 + random_entry(17, i + j * n));
      name = "dense 4096";
      op = make_dense_operator({n, n, n, dense.data()}, KernelFlavor::Default, -1);
    }
    auto b = single_gpu_backend(op);
    b->resize_basis(last + 1);
    b->set_random(0, 7);
    double nrm2 = 0;
    b->project(0, 0, 0, &nrm2);
    b->scale(0, 1.0 / std::sqrt(nrm2));
    std::vector<StepRecord> rec(static_cast<std::size_t>(last));
    b->expand(0, first, 0.0, rec.data());
    const double t_mv = backend_median_ms(*b, [&] { b->apply_operator(0, last); }, 10, 15);
    for (int reach : {-1, 0, 8, 16, 32}) {
      const double ms = backend_median_ms(
                            *b,
                            [&] {
                              if (reach < 0) b->expand(first, last, 0.0, rec.data());
                              else b->expand_partial(first, last, reach, 0.0, rec.data());
                            },
                            1, 7) /
                        (last - first);
      int second = 0;
      for (int i = 0; i < last - first; ++i) second += rec[static_cast<std::size_t>(i)].second_pass;
      const double cols = reach < 0 ? 0.5 * (first + last) + 1 : reach; // the full pass covers 0..j
      const double floor = t_mv + (16.0 * cols + 8.0 * 12) * static_cast<double>(n) / (copy_bandwidth * 1e6);
      std::printf("| %s | %lld | %.4f | %s | %.4f | %.4f | %.4f | %.2f | %d |\n", name.c_str(), static_cast<long long>(n), t_mv,
                  reach < 0 ? "full" : ("reach " + std::to_string(reach)).c_str(), ms, ms - t_mv, floor, ms / floor, second);
    }
  }
  std::printf("\n");
  // A thick restart's rotation V[:, 0:m] = V[:, 0:k] Q: the custom kernel against cuBLAS's dgemm and the
  // copy back (the vendor flavor), Q near the identity so that repeats stay finite.
  std::printf("| n | k | m | rotate, custom (ms) | rotate, cuBLAS (ms) | cuBLAS / custom | custom GB/s | max rel. diff |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::int64_t n : {std::int64_t(4096), std::int64_t(1000000), std::int64_t(2000000)}) {
    const auto host_op = [](const double *, double *) {};
    std::unique_ptr<Backend> be[2];
    for (int f = 0; f < 2; ++f) {
      BackendConfig config;
      config.local_size = config.global_size = n;
      config.flavor = f == 0 ? KernelFlavor::Custom : KernelFlavor::Vendor;
      be[f] = make_cuda_backend(config, nullptr, host_op);
      be[f]->resize_basis(201);
    }
    for (auto [k, m] : {std::pair{25, 12}, std::pair{48, 24}, std::pair{100, 50}, std::pair{200, 100}}) {
      std::vector<double> Q(static_cast<std::size_t>(k) * m);
      for (int j = 0; j < m; ++j)
        for (int i = 0; i < k; ++i) Q[i + static_cast<std::size_t>(j) * k] = (i == j) + 1e-3 * random_entry(81, i + j * k);
      double ms[2];
      std::vector<double> col[2];
      for (int f = 0; f < 2; ++f) {
        for (int j = 0; j < k; ++j) be[f]->set_random(j, 500 + j);
        ms[f] = backend_median_ms(*be[f], [&] { be[f]->rotate(k, m, Q.data(), k); }, 1, 11);
        for (int j = 0; j < k; ++j) be[f]->set_random(j, 500 + j); // one rotation from the same start, compared
        be[f]->rotate(k, m, Q.data(), k);
        col[f].resize(static_cast<std::size_t>(n) * m);
        for (int j = 0; j < m; ++j) be[f]->get_column(j, col[f].data() + static_cast<std::size_t>(j) * n);
      }
      const double bytes = 8.0 * (k + m) * static_cast<double>(n);
      std::printf("| %lld | %d | %d | %.4f | %.4f | %.2f | %.0f | %.1e |\n", static_cast<long long>(n), k, m, ms[0], ms[1],
                  ms[1] / ms[0], bytes / (ms[0] * 1e6), checked_rel_diff(col[0], col[1]));
    }
  }
  std::printf("\n");
}

// Host-to-device bandwidth of a 1 GiB matrix: the floor (cudaMemcpy from pinned memory), what a plain
// cudaMemcpy of the user's pageable array gets, and the staged upload by thread count. Medians of 5,
// wall time with the copy finished (each call returns once the data is on the device).
void bench_upload()
{
  const std::size_t bytes = std::size_t(1) << 30, count = bytes / sizeof(double);
  std::vector<double> host(count);
  for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<double>(i % 977) * 0.5; // touched: pages exist
  DeviceBuffer<double> dev(count + 4096, "upload target");
  PinnedBuffer<double> pinned(count, "pinned source");
  std::memcpy(pinned.data(), host.data(), bytes);
  const auto wall_median = [](const std::function<void()> &f) {
    f(); // warm-up: the staging chunks are made here
    std::vector<double> t;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(t);
  };
  std::printf("## Upload: 1 GiB host to device\n\n| path | GB/s | of pinned |\n|---|---:|---:|\n");
  const double pinned_s = wall_median([&] { CUDALANCZOS_CHECK(cudaMemcpy(dev.data(), pinned.data(), bytes, cudaMemcpyHostToDevice)); });
  const double gbs = bytes / pinned_s / 1e9;
  std::printf("| cudaMemcpy from pinned memory | %.1f | 1.00 |\n", gbs);
  const double pageable_s = wall_median([&] { CUDALANCZOS_CHECK(cudaMemcpy(dev.data(), host.data(), bytes, cudaMemcpyHostToDevice)); });
  std::printf("| cudaMemcpy from pageable memory | %.1f | %.2f |\n", bytes / pageable_s / 1e9, pinned_s / pageable_s);
  for (int threads : {1, 2, 4, 8, 16}) {
    set_upload_threads(threads);
    const double s = wall_median([&] { upload_bytes(dev.data(), host.data(), bytes); });
    std::printf("| staged upload, %d thread%s | %.1f | %.2f |\n", threads, threads > 1 ? "s" : "", bytes / s / 1e9, pinned_s / s);
  }
  set_upload_threads(0);
  { // a dense matrix whose leading dimension gets padding on the device (rows not a multiple of 16)
    const std::size_t rows = 11585, ld = (rows + 15) / 16 * 16, cols = count / ld; // the image fits in dev
    const double s = wall_median([&] { upload_matrix(dev.data(), ld, host.data(), rows, rows, cols); });
    std::printf("| staged upload_matrix %zu x %zu, ld %zu (default threads) | %.1f | %.2f |\n", rows, cols, ld, rows * cols * 8.0 / s / 1e9,
                pinned_s / s * (rows * cols * 8.0 / bytes));
    // check: the device image against the host, column by column, padding zero
    std::vector<double> back(ld * 3);
    CUDALANCZOS_CHECK(cudaMemcpy(back.data(), dev.data(), back.size() * sizeof(double), cudaMemcpyDeviceToHost));
    bool same = true;
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t i = 0; i < ld; ++i) same = same && back[j * ld + i] == (i < rows ? host[j * rows + i] : 0.0);
    std::printf("\n(upload_matrix image checked on its first 3 columns: %s)\n", same ? "identical" : "DIFFERENT");
  }
  std::printf("\nStaging chunks held afterwards: %.0f MiB pinned.\n\n", upload_staging_bytes() / 1048576.0);
}

/// The periodic 3-D lattice of m^3 sites, 6 neighbours each at -1, a random diagonal in [-w/2, w/2]: the
/// Anderson model's matrix, as its pattern (rowptr, colind without the diagonal) and the diagonal.
struct Lattice3d {
  index_t rows = 0;
  std::vector<int> rowptr{0}, colind;
  std::vector<double> diagonal;
};
Lattice3d lattice_3d(int m, double w)
{
  Lattice3d L;
  L.rows = static_cast<index_t>(m) * m * m;
  const auto site = [m](int x, int y, int z) { return ((z + m) % m * m + (y + m) % m) * m + (x + m) % m; };
  for (int z = 0; z < m; ++z)
    for (int y = 0; y < m; ++y)
      for (int x = 0; x < m; ++x) {
        int nb[6] = {site(x, y, z - 1), site(x, y - 1, z), site(x - 1, y, z), site(x + 1, y, z), site(x, y + 1, z), site(x, y, z + 1)};
        std::sort(nb, nb + 6);
        L.colind.insert(L.colind.end(), nb, nb + 6);
        L.rowptr.push_back(static_cast<int>(L.colind.size()));
        L.diagonal.push_back(0.5 * w * random_entry(0xa2de, static_cast<std::int64_t>(L.diagonal.size())));
      }
  return L;
}

void bench_filter(cudaStream_t s)
{
  const Lattice3d L = lattice_3d(100, 16.5);
  const index_t n = L.rows, entries = static_cast<index_t>(L.colind.size());
  // The same matrix as CSR with values (the diagonal in place), as a device Mat holds it.
  std::vector<int> crow{0}, ccol;
  std::vector<double> cval;
  for (index_t r = 0; r < n; ++r) {
    bool placed = false;
    for (int j = L.rowptr[r]; j < L.rowptr[r + 1]; ++j) {
      if (!placed && L.colind[j] > r) ccol.push_back(static_cast<int>(r)), cval.push_back(L.diagonal[r]), placed = true;
      ccol.push_back(L.colind[j]), cval.push_back(-1.0);
    }
    if (!placed) ccol.push_back(static_cast<int>(r)), cval.push_back(L.diagonal[r]);
    crow.push_back(static_cast<int>(ccol.size()));
  }
  const auto up = [](const auto &v) {
    DeviceBuffer<std::decay_t<decltype(v[0])>> d(v.size());
    CUDALANCZOS_CHECK(cudaMemcpy(d.data(), v.data(), d.bytes(), cudaMemcpyHostToDevice));
    return d;
  };
  DeviceBuffer<int> prow = up(L.rowptr), pcol = up(L.colind), rowptr = up(crow), colind = up(ccol);
  DeviceBuffer<double> dvec = up(L.diagonal), values = up(cval), cur(n), prev(n), next(n), y(n), w(n);
  kernels::set_random(n, 31, 0, cur.data(), s);
  kernels::set_random(n, 32, 0, prev.data(), s);
  kernels::set_random(n, 33, 0, y.data(), s);
  ChebyshevStep st{0.18, 0.01, -1.0, 0.0, 1e-3, true}; // a later step: next = 2 t(A) cur - prev, y += mu next
  const double vec = 8.0 * n, fused_pattern = 4.0 * (n + 1) + 4.0 * entries + vec + 5 * vec;
  const double fused_csr = 4.0 * (n + 1) + 12.0 * static_cast<double>(ccol.size()) + 5 * vec;
  std::printf("## One step of a polynomial filter\n\nThe periodic 100^3 lattice, 6 neighbours at -1 and a random diagonal "
              "(10^6 rows): a later Chebyshev step (next = alpha A cur + beta cur - prev, y += mu next). Unfused: the "
              "product into w, then chebyshev_step; fused: the product's rows handed to the step in registers. GB/s "
              "counts the fused step's bytes (pattern: 4 (rows + 1) + 4 entries + 8 rows diagonal + 5 vectors; CSR: "
              "12 bytes an entry with the diagonal, no diagonal vector) for both.\n\n"
              "| matrix | lanes | unfused (ms) | fused (ms) | unfused / fused | fused GB/s |\n|---|---:|---:|---:|---:|---:|\n");
  for (int lanes : {1, 2, 4}) {
    const double tu = gpu_median_ms([&] {
      kernels::pattern_spmv(n, entries, prow.data(), pcol.data(), -1.0, 0.0, dvec.data(), cur.data(), w.data(), s, lanes);
      kernels::chebyshev_step(n, st, w.data(), cur.data(), prev.data(), next.data(), y.data(), s);
    }, s, 50);
    const double tf = gpu_median_ms([&] {
      kernels::pattern_chebyshev_step(n, entries, prow.data(), pcol.data(), -1.0, 0.0, dvec.data(), st, cur.data(), prev.data(),
                                      next.data(), y.data(), s, lanes);
    }, s, 50);
    std::printf("| pattern | %d | %.4f | %.4f | %.2f | %.0f |\n", lanes, tu, tf, tu / tf, fused_pattern / (tf * 1e6));
  }
  for (int lanes : {1, 2, 4, 8}) {
    const index_t nnz = static_cast<index_t>(ccol.size());
    const double tu = gpu_median_ms([&] {
      kernels::csr_spmv(n, nnz, rowptr.data(), colind.data(), values.data(), cur.data(), w.data(), s, lanes);
      kernels::chebyshev_step(n, st, w.data(), cur.data(), prev.data(), next.data(), y.data(), s);
    }, s, 50);
    const double tf = gpu_median_ms([&] {
      kernels::csr_chebyshev_step(n, nnz, rowptr.data(), colind.data(), values.data(), st, cur.data(), prev.data(), next.data(),
                                  y.data(), s, lanes);
    }, s, 50);
    std::printf("| CSR | %d | %.4f | %.4f | %.2f | %.0f |\n", lanes, tu, tf, tu / tf, fused_csr / (tf * 1e6));
  }
  std::printf("\n");
}

} // namespace

int main(int argc, char **argv)
{
  try {
    if (device_count() == 0) {
      std::fprintf(stderr, "bench_cudalanczos: no CUDA device\n");
      return 2;
    }
    std::set<std::string> want(argv + 1, argv + argc);
    const auto on = [&](const char *s) { return want.empty() || want.count(s); };
    std::string command;
    for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    int driver = 0, runtime = 0;
    CUDALANCZOS_CHECK(cudaDriverGetVersion(&driver));
    CUDALANCZOS_CHECK(cudaRuntimeGetVersion(&runtime));
    std::printf("# cudalanczos benchmarks\n\n- GPU: %s\n- CUDA driver %d, runtime %d\n- host threads: %u\n- date: %s\n- command: `%s`\n\n",
                device_description(0).c_str(), driver, runtime, std::thread::hardware_concurrency(), date, command.c_str());
    Stream stream = make_stream();
    if (on("copy")) bench_copy(stream.get());
    if (on("gemv")) bench_gemv(stream.get());
    if (on("spmv")) bench_spmv(stream.get());
    if (on("spmm")) bench_spmm(stream.get());
    if (on("ops")) bench_ops();
    if (on("lanczos")) bench_lanczos();
    if (on("cycle")) bench_cycle(stream.get());
    if (on("block")) bench_block(stream.get());
    if (on("steps")) bench_steps(stream.get());
    if (on("filter")) bench_filter(stream.get());
    if (want.count("upload")) bench_upload(); // not in the default set: 3 GiB of host memory
    std::fflush(stdout);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_cudalanczos: %s\n", e.what());
    return 1;
  }
}
