// Where a Lanczos step's time goes, in the build's scalar type (real or complex): the operator product,
// each kernel of a device step, whole chunks of steps, and whole solves split by backend call. Built in
// both scalar builds, so that the real and the complex cost of the same lattice can be set side by side
// (bench_cudalanczos, the thesis's tables, is real only).
//
//   bench_step [m [flux_denominator [kernels]]]     kernels: the product, the step's kernels and the chunks only
//   bench_step blocks [rows | FILE.csr]             single-vector against block-2 steps on a power-law graph
//                                                   or a real matrix of bench/peers/gen_matrices
//
// The matrix is test::magnetic_laplacian(m, 2 pi / flux_denominator) (tests/cuda/test_matrices.hpp) with
// bench/peers' `hofstadter` disorder on its diagonal (W = 1: 4 + random_entry(0x40f, r) / 2), m = 1414
// (2 * 10^6 rows, 5 entries a row) and flux 1/16 by default: the `hofstadter` case up to the constant 4 on
// the diagonal and its boundary (open here, periodic in y there). Without the disorder the top of the
// spectrum is a degenerate Landau level, which takes 20 times the products. In the real build the
// horizontal hops are the phases' real parts: the same pattern, a real symmetric matrix.
// GPU times are medians of CUDA-event timings after warm-up; a chunk or a solve is host-timed with the
// final wait. Bytes count the fewest the operation must move (each input read once, output written once).
#include "core/lanczos_driver.hpp"
#include "core/random.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/kernels.cuh"
#include "bench_timing.hpp"
#include "peers/csr_file.hpp"
#include "timed_backend.hpp"
#include "test_matrices.hpp"     // tests/cuda

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <complex>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace cudalanczos;
using namespace cudalanczos::cuda;

namespace {

constexpr double kScalarBytes = sizeof(Scalar);

using bench::gpu_median_ms;
using bench::median;
using bench::seconds_since;

double copy_bandwidth_gbs(cudaStream_t s)
{
  const std::size_t bytes = std::size_t(1) << 30;
  DeviceBuffer<unsigned char> a(bytes), b(bytes);
  CUDALANCZOS_CHECK(cudaMemset(a.data(), 1, bytes));
  const double ms = gpu_median_ms([&] { CUDALANCZOS_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, s)); }, s, 10);
  return 2.0 * bytes / (ms * 1e6);
}

/// Settings of the PETSc layer's defaults on a sparse matrix at nev (partial reorthogonalization, ncv =
/// max(2 nev, nev + 15), growing), or, with block = 2, those of `-eps_cudalanczos_block_size 2
/// -eps_cudalanczos_reorthog partial` (ncv = nev + 16 b).
Settings sparse_settings(int nev, int block)
{
  Settings st;
  st.which = Which::LargestAlgebraic;
  st.reorthogonalization = Reorthogonalization::Partial;
  st.nev = nev;
  st.block_size = block;
  st.ncv = block > 1 ? std::max(std::max(2 * nev, nev + 15), nev + 16 * block) : std::max(2 * nev, nev + 15);
  st.ncv_max = std::max(2 * st.ncv, st.ncv + 32);
  st.max_it = 100000;
  st.tol = 1e-8;
  return st;
}

/// A solve's median wall time over 3 runs after a warm-up, with its result, and the wall time of one more
/// run through `timed` (a TimedBackend over b), which holds that run's split by backend call.
struct TimedSolve {
  double seconds = 0, timed_seconds = 0;
  Result result;
};

TimedSolve time_solve(Backend &b, bench::TimedBackend &timed, const Settings &st)
{
  b.resize_basis(basis_columns_needed(st));
  solve(b, st, {}); // warm-up
  std::vector<double> t;
  TimedSolve out;
  for (int rep = 0; rep < 3; ++rep) {
    const auto a = std::chrono::steady_clock::now();
    out.result = solve(b, st, {});
    t.push_back(seconds_since(a));
  }
  out.seconds = median(t);
  const auto a = std::chrono::steady_clock::now();
  solve(timed, st, {});
  out.timed_seconds = seconds_since(a);
  return out;
}

/// The block step's backend operations, one call each timed with its wait (project_block waits for its
/// result anyway), on a basis of `cols` random columns.
void block_operations(Backend &b, int cols)
{
  b.resize_basis(cols);
  for (int j = 0; j < cols; ++j) b.set_random(j, 90 + j);
  std::vector<Scalar> P(static_cast<std::size_t>(cols) * 2), M{1.0, 0.0, 0.0, 1.0};
  const auto ms = [&](const std::function<void()> &f) { return bench::host_median_ms([&] { f(); b.synchronize(); }, 30); };
  std::printf("| operation | ms |\n|---|---:|\n");
  std::printf("| product, 1 column | %.4f |\n", ms([&] { b.apply_operator(0, 1); }));
  std::printf("| product, block of 2 | %.4f |\n", ms([&] { b.apply_operator_block(0, 2, 2); }));
  for (int k : {4, 16, 34}) {
    std::printf("| project_block, %d columns x 2 | %.4f |\n", k, ms([&] { b.project_block(0, k, k, 2, P.data()); }));
    std::printf("| update_block, %d columns x 2 | %.4f |\n", k, ms([&] { b.update_block(0, k, P.data(), k + 2, k, 2); }));
  }
  std::printf("| transform_block, 2 x 2 | %.4f |\n\n", ms([&] { b.transform_block(0, 2, M.data(), 2); }));
}

/// The same projections and updates from the single-vector kernels, one call per block column: the
/// projection reads the k columns and the block once per column (the block follows the k columns, so
/// multi_dot over k + 2 columns gives the Gram block's column too), the update reads the k columns once
/// per column. Against cuBLAS's gemm in project_block / update_block (block_operations).
void block_as_column_kernels(index_t n, int cols)
{
  Stream stream = make_stream();
  const cudaStream_t s = stream.get();
  DeviceBuffer<Scalar> V(static_cast<std::size_t>(n) * cols), out(2 * (cols + 2) + 1), coef(2 * cols);
  DeviceBuffer<double> work(kernels::reduction_workspace_doubles(cols + 2)), after(2);
  CUDALANCZOS_CHECK(cudaMemset(work.data(), 0, work.bytes()));
  for (int j = 0; j < cols; ++j) kernels::set_random(n, 190 + j, 0, V.data() + static_cast<std::size_t>(j) * n, s);
  const std::vector<Scalar> c(2 * cols, Scalar(1e-3));
  CUDALANCZOS_CHECK(cudaMemcpy(coef.data(), c.data(), c.size() * sizeof(Scalar), cudaMemcpyHostToDevice));
  const auto column = [&](int j) { return V.data() + static_cast<std::size_t>(j) * n; };
  std::printf("| kernel, per block column | k | ms for the block of 2 |\n|---|---:|---:|\n");
  for (int k : {4, 16, 34}) {
    const double t_dot = gpu_median_ms(
        [&] {
          for (int j = 0; j < 2; ++j) kernels::multi_dot(n, k + 2, column(0), n, column(k + j), out.data() + j * (k + 2), work.data(), s);
        },
        s);
    const double t_sub = gpu_median_ms(
        [&] {
          for (int j = 0; j < 2; ++j)
            kernels::subtract_norm2(n, k, column(0), n, coef.data() + j * k, column(k + j), after.data() + j, work.data(), s);
        },
        s);
    std::printf("| multi_dot (k + 2 columns) x 2 | %d | %.4f |\n| subtract_norm2 x 2 | %d | %.4f |\n", k, t_dot, k, t_sub);
  }
  std::printf("\n");
}

/// Whole solves at nev = 1 and 10, single-vector and block-2 steps, split by backend call.
void block_solves(Backend &b)
{
  std::printf("| nev | block | solve (s) | products | passes over A | full passes | ms per pass | steps (s) | block product (s) | "
              "calls | block project (s) | calls | block update (s) | calls | block transform (s) | calls | rotate (s) | "
              "other (s) | driver host (s) | eigenvalue |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int nev : {1, 10})
    for (int block : {1, 2}) {
      bench::TimedBackend tb(b);
      const TimedSolve t = time_solve(b, tb, sparse_settings(nev, block));
      const double sec = t.seconds, timed = t.timed_seconds;
      const Result &r = t.result;
      const double blocks = tb.block_product.s + tb.block_project.s + tb.block_update.s + tb.block_transform.s;
      std::printf("| %d | %d | %.4f | %ld | %ld | %ld | %.4f | %.4f | %.4f | %ld | %.4f | %ld | %.4f | %ld | %.4f | %ld | %.4f | "
                  "%.4f | %.4f | %.12g |\n",
                  nev, block, sec, r.matvecs, r.operator_passes, r.full_reorthogonalizations,
                  1e3 * sec / static_cast<double>(std::max(1L, r.operator_passes)), tb.steps_s, tb.block_product.s,
                  tb.block_product.calls, tb.block_project.s, tb.block_project.calls, tb.block_update.s, tb.block_update.calls,
                  tb.block_transform.s, tb.block_transform.calls, tb.rotate_s, tb.other_s,
                  timed - tb.steps_s - tb.rotate_s - tb.other_s - blocks, r.eigenvalues.empty() ? 0.0 : r.eigenvalues[0]);
    }
  std::printf("\n");
}

/// The custom CSR kernels at each lane count, one column (csr_spmv) and a block of 2 (csr_spmm, its
/// interleaving included), on the caller's device CSR arrays, beside the operator's own choices.
void csr_lane_sweep(index_t n, index_t nnz, const int *rowptr, const int *colind, const Scalar *values)
{
  Stream stream = make_stream();
  const cudaStream_t s = stream.get();
  DeviceBuffer<Scalar> X(static_cast<std::size_t>(n) * 2), Y(static_cast<std::size_t>(n) * 2), inter(static_cast<std::size_t>(n) * 2);
  for (int j = 0; j < 2; ++j) kernels::set_random(n, 77 + j, 0, X.data() + static_cast<std::size_t>(j) * n, s);
  const double bytes1 = 12.0 * nnz + 4.0 * (n + 1) + 16.0 * n, bytes2 = 12.0 * nnz + 4.0 * (n + 1) + 32.0 * n;
  std::printf("| lanes a row | csr_spmv ms | GB/s | csr_spmm, b = 2, ms | GB/s | block / 2 columns |\n|---:|---:|---:|---:|---:|---:|\n");
  for (int lanes = 1; lanes <= 32; lanes *= 2) {
    const double t1 = gpu_median_ms([&] { kernels::csr_spmv(n, nnz, rowptr, colind, values, X.data(), Y.data(), s, lanes); }, s);
    const double t2 = gpu_median_ms(
        [&] { kernels::csr_spmm(n, n, nnz, rowptr, colind, values, 2, X.data(), n, Y.data(), n, inter.data(), s, lanes); }, s);
    std::printf("| %d | %.4f | %.0f | %.4f | %.0f | %.2f |\n", lanes, t1, bytes1 / (t1 * 1e6), t2, bytes2 / (t2 * 1e6), t2 / (2 * t1));
  }
  std::printf("\n");
}

/// A real matrix of bench/peers/gen_matrices from its file, in the real build.
test::Csr read_gen_matrices_file(const std::string &path)
{
  if (kDoublesPerScalar != 1) throw Error("a real matrix file needs the real build of bench_step");
  bench::CsrFile F;
  std::string err;
  if (!bench::read_csr_file(path, F, err)) throw Error(err);
  test::Csr A;
  A.rows = A.cols = F.rows;
  A.rowptr = std::move(F.rowptr);
  A.colind = std::move(F.colind);
  A.values.assign(F.values.begin(), F.values.end());
  return A;
}

/// Where a block step's time goes against a single-vector step's: on the power-law graph of bench/peers'
/// `powerlaw` (test::chung_lu, the value-less pattern product the PETSc layer uploads it as), or on a
/// gen_matrices file, with the product the PETSc layer chooses for it on one GPU (the pattern product
/// where the values allow it, else the CSR product).
int block_split(const std::string &what)
{
  const bool file = what.size() > 4 && what.compare(what.size() - 4, 4, ".csr") == 0;
  const test::Csr A = file ? read_gen_matrices_file(what) : test::chung_lu(std::atol(what.c_str()), 16, 0xc1u);
  const index_t n = A.rows, nnz = static_cast<index_t>(A.colind.size());
  DeviceBuffer<int> rowptr(A.rowptr.size()), colind(A.colind.size());
  DeviceBuffer<Scalar> values(A.values.size());
  CUDALANCZOS_CHECK(cudaMemcpy(rowptr.data(), A.rowptr.data(), rowptr.bytes(), cudaMemcpyHostToDevice));
  CUDALANCZOS_CHECK(cudaMemcpy(colind.data(), A.colind.data(), colind.bytes(), cudaMemcpyHostToDevice));
  CUDALANCZOS_CHECK(cudaMemcpy(values.data(), A.values.data(), values.bytes(), cudaMemcpyHostToDevice));
  const CsrView view{n, n, nnz, rowptr.data(), colind.data(), values.data()};
  std::shared_ptr<DeviceOperator> op = make_pattern_operator_on_device(view, -1);
  if (!op && !file) throw Error("the power-law graph has no uniform pattern");
  if (!op) {
    op = make_csr_operator_on_device(view, KernelFlavor::Default, -1);
    csr_lane_sweep(n, nnz, rowptr.data(), colind.data(), values.data());
  }
  std::printf("## Single-vector against block-2 steps: %s, n = %lld, nnz = %lld, %s\n\n", file ? what.c_str() : "power-law graph",
              static_cast<long long>(n), static_cast<long long>(nnz), op->description().c_str());
  BackendConfig config;
  config.local_size = config.global_size = n;
  auto b = make_cuda_backend(config, op);
  block_operations(*b, 40);
  block_as_column_kernels(n, 40);
  block_solves(*b);
  return 0;
}

} // namespace

int main(int argc, char **argv)
try {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // each table row as it is made, also into a file
  if (argc > 1 && std::string(argv[1]) == "blocks") return block_split(argc > 2 ? argv[2] : "2000000");
  const index_t m = argc > 1 ? std::atol(argv[1]) : 1414;
  const double denominator = argc > 2 ? std::atof(argv[2]) : 16.0;
  const bool solves = !(argc > 3 && std::string(argv[3]) == "kernels");
  const bool complex = kDoublesPerScalar == 2;
  test::Csr A = test::magnetic_laplacian(m, 2.0 * M_PI / denominator);
  for (index_t r = 0; r < A.rows; ++r) // the diagonal entry is the row's middle one of the stencil
    for (int e = A.rowptr[r]; e < A.rowptr[r + 1]; ++e)
      if (A.colind[e] == r) A.values[e] += 0.5 * random_entry(0x40f, r);
  const index_t n = A.rows, nnz = static_cast<index_t>(A.colind.size());
  Stream stream = make_stream();
  cudaStream_t s = stream.get();
  const double ceiling = copy_bandwidth_gbs(s);
  std::printf("## Where a step's time goes: %s magnetic Laplacian %lld^2, flux 1/%g (n = %lld, nnz = %lld)\n\n",
              complex ? "complex" : "real", static_cast<long long>(m), denominator, static_cast<long long>(n),
              static_cast<long long>(nnz));
  std::printf("copy ceiling %.0f GB/s; a vector is %.1f MB\n\n", ceiling, kScalarBytes * n / 1e6);
  const double vec_ms = kScalarBytes * n / (ceiling * 1e6); // one pass over a vector at the ceiling

  // The operator product, both flavors.
  const CsrView view{A.rows, A.cols, nnz, A.rowptr.data(), A.colind.data(), A.values.data()};
  const auto op = make_csr_operator(view, KernelFlavor::Default, -1);
  const auto custom = make_csr_operator(view, KernelFlavor::Custom, -1);
  const int cols = 64;
  DeviceBuffer<Scalar> V(static_cast<std::size_t>(n) * (cols + 2));
  for (int j = 0; j < cols + 2; ++j) kernels::set_random(n, 51 + j, 0, V.data() + static_cast<std::size_t>(j) * n, s);
  Scalar *w = V.data() + static_cast<std::size_t>(cols + 1) * n;
  const double mv_bytes = (kScalarBytes + 4) * nnz + 4.0 * (n + 1) + 2 * kScalarBytes * n;
  std::printf("| product | ms | GB/s | in vector passes |\n|---|---:|---:|---:|\n");
  double t_mv = 0;
  for (const auto *o : {op.get(), custom.get()}) {
    const double t = gpu_median_ms([&] { o->apply(V.data(), w, s); }, s);
    if (o == op.get()) t_mv = t;
    std::printf("| %s | %.4f | %.0f | %.1f |\n", o->description().c_str(), t, mv_bytes / (t * 1e6), t / vec_ms);
  }
  {
    DeviceBuffer<int> rowptr(A.rowptr.size()), colind(A.colind.size());
    DeviceBuffer<Scalar> values(A.values.size());
    CUDALANCZOS_CHECK(cudaMemcpy(rowptr.data(), A.rowptr.data(), rowptr.bytes(), cudaMemcpyHostToDevice));
    CUDALANCZOS_CHECK(cudaMemcpy(colind.data(), A.colind.data(), colind.bytes(), cudaMemcpyHostToDevice));
    CUDALANCZOS_CHECK(cudaMemcpy(values.data(), A.values.data(), values.bytes(), cudaMemcpyHostToDevice));
    for (int lanes : {1, 2, 4}) {
      const double t = gpu_median_ms(
          [&] { kernels::csr_spmv(n, nnz, rowptr.data(), colind.data(), values.data(), V.data(), w, s, lanes); }, s);
      std::printf("| custom CSR, %d lane%s per row | %.4f | %.0f | %.1f |\n", lanes, lanes > 1 ? "s" : "", t,
                  mv_bytes / (t * 1e6), t / vec_ms);
    }
  }
  std::printf("\n");

  // The kernels of one device step (CudaBackend::enqueue_steps) at pass reach k: the window projection, the
  // window-folded pass and its subtraction, the gated DGKS repeat (gate shut, as in most steps), finish.
  DeviceBuffer<Scalar> out(cols + 2), g(4), coef(cols + 1);
  DeviceBuffer<double> work(kernels::reduction_workspace_doubles(cols + 1)), after(4);
  DeviceBuffer<kernels::DeviceStepRecord> records(2);
  CUDALANCZOS_CHECK(cudaMemset(work.data(), 0, work.bytes()));
  CUDALANCZOS_CHECK(cudaMemset(records.data(), 0, records.bytes()));
  {
    const std::vector<Scalar> c(cols + 1, Scalar(1e-3));
    CUDALANCZOS_CHECK(cudaMemcpy(coef.data(), c.data(), c.size() * sizeof(Scalar), cudaMemcpyHostToDevice));
    CUDALANCZOS_CHECK(cudaMemcpy(g.data(), c.data(), 4 * sizeof(Scalar), cudaMemcpyHostToDevice));
    const double a[4] = {1.0, 1.0, 1.0, 1.0}; // after[1] = after[2] = 1: the gate below (after[1] < 0.5 after[2]) stays shut
    CUDALANCZOS_CHECK(cudaMemcpy(after.data(), a, sizeof a, cudaMemcpyHostToDevice));
  }
  const kernels::Gate shut{after.data() + 1, after.data() + 2, 0.5};
  std::printf("| reach k | window dot (2) | window pass dot | window pass subtract | repeat, gate shut (2) | finish | sum | "
              "in vector passes | bytes floor, passes |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int k : {0, 8, 16, 32, 48}) {
    const int lo = k, kl = 2; // the window after the reach, as in a partial step
    const double t1 = gpu_median_ms([&] { kernels::multi_dot(n, kl, V.data() + std::size_t(lo) * n, n, w, g.data(), work.data(), s); }, s);
    const double t2 = gpu_median_ms([&] { kernels::window_multi_dot(n, k, V.data(), n, lo, kl, g.data(), w, out.data(), work.data(), s); }, s);
    const double t3 = gpu_median_ms(
        [&] { kernels::window_subtract_norm2(n, k, V.data(), n, lo, kl, g.data(), coef.data(), w, after.data() + 3, work.data(), s); }, s);
    const double t4 = gpu_median_ms(
        [&] {
          kernels::multi_dot(n, k, V.data(), n, w, out.data(), work.data(), s, shut);
          kernels::subtract_norm2(n, k, V.data(), n, coef.data(), w, after.data() + 3, work.data(), s, shut);
        },
        s);
    const double t5 = gpu_median_ms(
        [&] {
          kernels::finish_lanczos_step(n, lo + 1, k, kl, g.data(), out.data(), out.data(), after.data(), 0.5, records.data(),
                                       records.data() + 1, w, s);
        },
        s);
    const double sum = t1 + t2 + t3 + t4 + t5;
    // Fewest passes: the window dot reads w and 2 columns; the folded pass reads w, 2 + k columns; its
    // subtraction reads them and writes w; finish reads and writes w.
    const double floor_passes = 3 + (3 + k) + (4 + k) + 2;
    std::printf("| %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.0f |\n", k, t1, t2, t3, t4, t5, sum, sum / vec_ms,
                floor_passes);
  }
  std::printf("\n");

  // Chunks of device steps through the backend, partial (pass over the first `reach` columns) and full.
  BackendConfig config;
  config.local_size = config.global_size = n;
  auto b = make_cuda_backend(config, op);
  b->resize_basis(cols + 1);
  std::printf("| chunk | reach | ms per step | per step / product |\n|---|---:|---:|---:|\n");
  for (auto [first, last, reach] : {std::tuple{8, 24, 0}, std::tuple{16, 32, 8}, std::tuple{16, 32, -1}, std::tuple{32, 48, -1}}) {
    std::vector<StepRecord> rec(static_cast<std::size_t>(last));
    std::vector<double> t;
    for (int rep = 0; rep < 5; ++rep) {
      b->set_random(0, 7);
      Scalar nrm2[1];
      b->project(0, 0, 0, nrm2);
      b->scale(0, 1.0 / std::sqrt(std::real(nrm2[0])));
      b->expand(0, first, 0.0, rec.data());
      b->synchronize();
      const auto a = std::chrono::steady_clock::now();
      if (reach < 0) b->expand(first, last, 0.0, rec.data());
      else b->expand_partial(first, last, reach, 0.0, rec.data());
      t.push_back(seconds_since(a) * 1e3);
    }
    const double ms = median(t) / (last - first);
    std::printf("| %d..%d | %s | %.4f | %.2f |\n", first, last, reach < 0 ? "full" : std::to_string(reach).c_str(), ms, ms / t_mv);
  }
  std::printf("\n");

  if (!solves) return 0;
  // Whole solves, largest eigenvalue, tol 1e-8, the PETSc layer's defaults for STSHIFT on a sparse matrix
  // (partial reorthogonalization, ncv = nev + 15 growing to 48 or more), split by backend call.
  std::printf("| nev | ncv | verify | solve (s) | products | before nev / verification / check | ms per product | steps (s) | "
              "calls | rotate (s) | calls | other (s) | calls | driver host (s) | eigenvalue |\n"
              "|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int nev : {1, 10})
    for (bool verify : {false, true}) {
      if (nev == 10 && !verify) continue; // 2 s a solve
      Settings st = sparse_settings(nev, 1);
      st.verify = verify;
      bench::TimedBackend tb(*b);
      const TimedSolve t = time_solve(*b, tb, st);
      const double sec = t.seconds, timed_sec = t.timed_seconds;
      const Result &r = t.result;
      std::printf("| %d | %d..%d | %s | %.4f | %ld | %ld / %ld / %ld | %.4f | %.4f | %ld | %.4f | %ld | %.4f | %ld | %.4f | %.12g |\n",
                  nev, st.ncv, std::max(st.ncv, st.ncv_max), verify ? "on" : "off", sec, r.matvecs, r.matvecs_before_nev,
                  r.matvecs_verification, r.matvecs_check, 1e3 * sec / static_cast<double>(r.matvecs), tb.steps_s, tb.step_calls,
                  tb.rotate_s, tb.rotate_calls, tb.other_s, tb.other_calls, timed_sec - tb.steps_s - tb.rotate_s - tb.other_s,
                  r.eigenvalues.empty() ? 0.0 : r.eigenvalues[0]);
    }
  std::printf("\n");
  return 0;
} catch (const std::exception &e) {
  std::fprintf(stderr, "bench_step: %s\n", e.what());
  return 1;
}
