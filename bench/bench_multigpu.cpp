// Multi-GPU Lanczos (issue 6, docs/multigpu.md): one rank per GPU, the row-distributed operator
// (src/cuda/distributed_operator.hpp) under the real driver and the CUDA backend, timed per Lanczos step.
//
//   mpiexec -n P bench_multigpu stencil NX NY NZ [restarts]   27-point stencil on NX x NY x NZ: 27 I - its 26 neighbours
//   mpiexec -n P bench_multigpu dense N [restarts]            N x N dense symmetric, entries uniform in [-1, 1)
//
// Rows are split evenly in PETSc's way (contiguous blocks; the stencil's grid index x fastest, so a
// block is a slab of z planes). Each rank generates its own rows straight into the blocks PETSc's
// MatMPIAIJGetSeqAIJ would give (diagonal block, off-diagonal block with columns compressed to the
// sorted ghosts), builds the halo plan with one MPI_Alltoall + MPI_Alltoallv exactly as
// src/petsc/cuda_distributed.cpp does, and exchanges with MPI_Isend/Irecv (dense: MPI_Allgatherv) on
// page-locked host buffers. No PETSc: assembling 2*10^8 nonzeros through MatSetValues would take longer
// than the whole measurement.
//
// Two solves with the same settings (thick restart, nev 8, ncv 32, full reorthogonalization, a
// tolerance that is never met so every run takes the same `restarts`): the first, plain, gives the time
// per step (wall clock / operator applications); the second, with the operator's profiling on (timing
// events, one synchronization per product), splits it into local product, halo exchange, ghost product,
// reductions (MPI_Allreduce, timed on the host) and the rest (orthogonalization: the fused multi-dot and
// subtract kernels, their scalars' trip to the host, the small projected problem). Rank 0 prints one
// "ROW |...|" line per run and "# " lines of detail.
#include "core/lanczos_driver.hpp"
#include "core/random.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/distributed_operator.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace cudalanczos;
using namespace cudalanczos::cuda;

namespace {

int rank_ = 0, size_ = 1, local_ranks_ = 1;

#define MPI_OK(call)                                                                  \
  do {                                                                                \
    if ((call) != MPI_SUCCESS) throw Error(std::string("MPI call failed: ") + #call); \
  } while (0)

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/// Runs body(begin, end) over [0, n) on this rank's share of the host cores (generation only).
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)> &body)
{
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / local_ranks_);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
  for (auto &th : pool) th.join();
}

/// The MPI type of a Scalar (the matrices are real; a complex build stores them as complex Scalars).
MPI_Datatype scalar_type() { return kComplexScalars ? MPI_C_DOUBLE_COMPLEX : MPI_DOUBLE; }

/// Point-to-point halo messages, as in src/petsc/cuda_distributed.cpp.
struct Messages {
  std::vector<int> recv_rank, recv_offset, recv_count, send_rank, send_offset, send_count;
  std::vector<MPI_Request> requests;
  void operator()(const Scalar *send, Scalar *recv)
  {
    int n = 0;
    for (std::size_t p = 0; p < recv_rank.size(); ++p)
      MPI_OK(MPI_Irecv(recv + recv_offset[p], recv_count[p], scalar_type(), recv_rank[p], 7, MPI_COMM_WORLD, &requests[n++]));
    for (std::size_t p = 0; p < send_rank.size(); ++p)
      MPI_OK(MPI_Isend(send + send_offset[p], send_count[p], scalar_type(), send_rank[p], 7, MPI_COMM_WORLD, &requests[n++]));
    if (n) MPI_OK(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE));
  }
};

/// The plan from the sorted ghost columns: MPI_Alltoall of counts, MPI_Alltoallv of indices.
void build_plan(const std::vector<std::int64_t> &ranges, const std::vector<int> &garray, HaloPlan &plan, Messages &msg)
{
  const std::int64_t rstart = ranges[rank_];
  std::vector<int> need(size_, 0), give(size_, 0), need_at(size_, 0), give_at(size_, 0);
  for (std::size_t g = 0, p = 0; g < garray.size(); ++g) {
    while (garray[g] >= ranges[p + 1]) ++p;
    ++need[p];
  }
  MPI_OK(MPI_Alltoall(need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, MPI_COMM_WORLD));
  for (int p = 1; p < size_; ++p) {
    need_at[p] = need_at[p - 1] + need[p - 1];
    give_at[p] = give_at[p - 1] + give[p - 1];
  }
  std::vector<int> wanted(static_cast<std::size_t>(give_at[size_ - 1] + give[size_ - 1]));
  MPI_OK(MPI_Alltoallv(garray.data(), need.data(), need_at.data(), MPI_INT, wanted.data(), give.data(), give_at.data(), MPI_INT,
                       MPI_COMM_WORLD));
  for (int w : wanted) plan.send_indices.push_back(static_cast<int>(w - rstart));
  plan.recv_count = static_cast<index_t>(garray.size());
  plan.ghost_segments.push_back({0, plan.recv_count});
  for (int p = 0; p < size_; ++p) {
    if (need[p]) msg.recv_rank.push_back(p), msg.recv_offset.push_back(need_at[p]), msg.recv_count.push_back(need[p]);
    if (give[p]) msg.send_rank.push_back(p), msg.send_offset.push_back(give_at[p]), msg.send_count.push_back(give[p]);
  }
  msg.requests.resize(msg.recv_rank.size() + msg.send_rank.size());
}

struct Problem {
  std::string name;
  std::int64_t n = 0, nnz_global = 0, rstart = 0, rend = 0;
  std::shared_ptr<DistributedOperator> op;
};

std::vector<std::int64_t> even_ranges(std::int64_t n)
{
  std::vector<std::int64_t> r(size_ + 1);
  for (int p = 0; p <= size_; ++p) r[p] = n / size_ * p + std::min<std::int64_t>(p, n % size_);
  return r;
}

/// 27-point stencil: 27 on the diagonal, -1 for each of the 26 neighbours (Dirichlet boundary).
Problem make_stencil(int nx, int ny, int nz, int device)
{
  Problem P;
  P.n = std::int64_t(nx) * ny * nz;
  P.name = "27-point stencil " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
  const auto ranges = even_ranges(P.n);
  P.rstart = ranges[rank_], P.rend = ranges[rank_ + 1];
  const std::int64_t m = P.rend - P.rstart;
  auto for_neighbours = [&](std::int64_t row, auto &&f) {
    const int x = static_cast<int>(row % nx), y = static_cast<int>((row / nx) % ny), z = static_cast<int>(row / (std::int64_t(nx) * ny));
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int X = x + dx, Y = y + dy, Z = z + dz;
          if (X < 0 || X >= nx || Y < 0 || Y >= ny || Z < 0 || Z >= nz) continue;
          f(X + std::int64_t(nx) * (Y + std::int64_t(ny) * Z), dx == 0 && dy == 0 && dz == 0 ? 27.0 : -1.0);
        }
  };
  // row counts of both blocks, then their prefix sums
  std::vector<int> dptr(m + 1, 0), optr(m + 1, 0);
  parallel_for(m, [&](std::int64_t a, std::int64_t b) {
    for (std::int64_t i = a; i < b; ++i) {
      int d = 0, o = 0;
      for_neighbours(P.rstart + i, [&](std::int64_t c, double) { (c >= P.rstart && c < P.rend) ? ++d : ++o; });
      dptr[i + 1] = d, optr[i + 1] = o;
    }
  });
  for (std::int64_t i = 0; i < m; ++i) dptr[i + 1] += dptr[i], optr[i + 1] += optr[i];
  // ghosts: the off-rank columns, sorted and unique (the planes next to the slab)
  std::vector<int> garray;
  for (std::int64_t i = 0; i < m; ++i)
    if (optr[i + 1] > optr[i]) for_neighbours(P.rstart + i, [&](std::int64_t c, double) {
        if (c < P.rstart || c >= P.rend) garray.push_back(static_cast<int>(c));
      });
  std::sort(garray.begin(), garray.end());
  garray.erase(std::unique(garray.begin(), garray.end()), garray.end());
  std::vector<int> dcol(dptr[m]), ocol(optr[m]);
  std::vector<Scalar> dval(dptr[m]), oval(optr[m]);
  parallel_for(m, [&](std::int64_t a, std::int64_t b) {
    for (std::int64_t i = a; i < b; ++i) {
      int d = dptr[i], o = optr[i];
      for_neighbours(P.rstart + i, [&](std::int64_t c, double v) {
        if (c >= P.rstart && c < P.rend) dcol[d] = static_cast<int>(c - P.rstart), dval[d++] = v;
        else ocol[o] = static_cast<int>(std::lower_bound(garray.begin(), garray.end(), static_cast<int>(c)) - garray.begin()), oval[o++] = v;
      });
    }
  });
  const std::int64_t local_nnz = dptr[m] + optr[m];
  MPI_OK(MPI_Allreduce(&local_nnz, &P.nnz_global, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));

  DistributedParts parts;
  Messages msg;
  build_plan(ranges, garray, parts.plan, msg);
  parts.exchange = std::move(msg);
  parts.description = "row-distributed AIJ over " + std::to_string(size_);
  parts.local = make_csr_operator(CsrView{m, m, dptr[m], dptr.data(), dcol.data(), dval.data()}, KernelFlavor::Default, device);
  // the off-diagonal block with its nonzero rows only (as cuda_distributed.cpp uploads it)
  RemoteBlock blk;
  for (std::int64_t i = 0; i < m; ++i)
    if (optr[i + 1] > optr[i]) blk.rows.push_back(static_cast<int>(i));
  if (!blk.rows.empty()) {
    // the empty rows hold no entries, so ocol/oval are already the kept rows' entries in order
    std::vector<int> cptr(blk.rows.size() + 1, 0);
    for (std::size_t r = 0; r < blk.rows.size(); ++r) cptr[r + 1] = cptr[r] + (optr[blk.rows[r] + 1] - optr[blk.rows[r]]);
    blk.op = make_csr_operator(CsrView{static_cast<index_t>(blk.rows.size()), static_cast<index_t>(garray.size()), optr[m], cptr.data(),
                                       ocol.data(), oval.data()},
                               KernelFlavor::Default, device);
    parts.remote.push_back(std::move(blk));
  }
  P.op = make_distributed_operator(std::move(parts), device);
  return P;
}

struct Allgather {
  std::vector<int> count, offset;
  int mine = 0;
  void operator()(const Scalar *send, Scalar *recv) const
  {
    static const Scalar none = 0;
    MPI_OK(MPI_Allgatherv(mine ? send : &none, mine, scalar_type(), recv, count.data(), offset.data(), scalar_type(), MPI_COMM_WORLD));
  }
};

/// Dense symmetric, entries uniform in [-1, 1): entry (i, j) a function of (min, max) only.
Problem make_dense(std::int64_t n, int device)
{
  Problem P;
  P.n = n;
  P.name = "dense " + std::to_string(n) + "x" + std::to_string(n);
  P.nnz_global = n * n;
  const auto ranges = even_ranges(n);
  P.rstart = ranges[rank_], P.rend = ranges[rank_ + 1];
  const std::int64_t m = P.rend - P.rstart;
  std::vector<Scalar> a(static_cast<std::size_t>(m * n)); // m x n, column-major, lda = m
  parallel_for(n, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t j = c0; j < c1; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        const std::int64_t r = P.rstart + i, lo = std::min(r, j), hi = std::max(r, j);
        a[static_cast<std::size_t>(i + j * m)] = random_entry(0xde45e, lo * n + hi);
      }
  });
  DistributedParts parts;
  Allgather ag;
  for (int p = 0; p < size_; ++p) ag.count.push_back(static_cast<int>(ranges[p + 1] - ranges[p])), ag.offset.push_back(static_cast<int>(ranges[p]));
  ag.mine = ag.count[rank_];
  if (size_ > 1) { // as src/petsc/cuda_distributed.cpp
    parts.plan.send_all = true;
    parts.plan.recv_count = n;
    if (m > 0) parts.plan.ghost_segments = {{0, P.rstart}, {P.rend, n - P.rend}};
    parts.exchange = ag;
  } else {
    parts.exchange = [](const Scalar *, Scalar *) {};
  }
  parts.description = "row-distributed dense over " + std::to_string(size_);
  const index_t lda = std::max<index_t>(m, 1);
  parts.local = make_dense_operator(DenseView{m, m, lda, a.data() + P.rstart * m}, KernelFlavor::Default, device);
  if (m > 0 && P.rstart > 0) parts.remote.push_back({make_dense_operator(DenseView{m, P.rstart, lda, a.data()}, KernelFlavor::Default, device), 0, {}});
  if (m > 0 && P.rend < n)
    parts.remote.push_back({make_dense_operator(DenseView{m, n - P.rend, lda, a.data() + P.rend * m}, KernelFlavor::Default, device), P.rstart, {}});
  P.op = make_distributed_operator(std::move(parts), device);
  return P;
}

struct Run {
  double seconds = 0;
  Result result;
  double reduce_s = 0;
  long reduce_calls = 0;
};

Run solve_once(const Problem &P, int device, int restarts, bool profile)
{
  Run run;
  BackendConfig config;
  config.local_size = P.rend - P.rstart;
  config.global_size = P.n;
  config.row_offset = P.rstart;
  config.device = device;
  config.reduce = [&run](double *v, int count) {
    const double t0 = now_s();
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    run.reduce_s += now_s() - t0;
    ++run.reduce_calls;
  };
  auto backend = make_cuda_backend(config, P.op);
  Settings s;
  s.nev = 8;
  s.ncv = 32;
  s.tol = 1e-300; // never met: every run takes `restarts` restarts
  s.max_it = restarts;
  s.verify = false;
  s.which = Which::LargestAlgebraic;
  backend->resize_basis(basis_columns_needed(s));
  P.op->set_profiling(profile);
  P.op->reset_stats();
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  const double t0 = now_s();
  run.result = solve(*backend, s, Callbacks{});
  backend->synchronize();
  MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
  run.seconds = now_s() - t0;
  P.op->set_profiling(false);
  return run;
}

double max_over_ranks(double v)
{
  double r = 0;
  MPI_OK(MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return r;
}
double sum_over_ranks(double v)
{
  double r = 0;
  MPI_OK(MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  return r;
}

int run_main(int argc, char **argv)
{
  if (argc < 3) {
    if (rank_ == 0) std::fprintf(stderr, "usage: bench_multigpu stencil NX NY NZ [restarts] | dense N [restarts]\n");
    return 2;
  }
  const std::string kind = argv[1];
  const int ndev = device_count();
  if (ndev == 0) throw Error("no CUDA device");
  MPI_Comm node;
  int local_rank = 0;
  MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_OK(MPI_Comm_rank(node, &local_rank));
  MPI_OK(MPI_Comm_size(node, &local_ranks_));
  MPI_OK(MPI_Comm_free(&node));
  const int device = local_rank % ndev;
  select_device(device); // before any upload: no context on another device
  int restarts = 6;
  double t_gen = now_s();
  Problem P;
  if (kind == "stencil" && argc >= 5) {
    if (argc >= 6) restarts = std::atoi(argv[5]);
    P = make_stencil(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), device);
  } else if (kind == "dense") {
    if (argc >= 4) restarts = std::atoi(argv[3]);
    P = make_dense(std::atoll(argv[2]), device);
  } else {
    throw Error("unknown case " + kind);
  }
  t_gen = max_over_ranks(now_s() - t_gen);
  std::size_t free_b = 0, total_b = 0;
  device_memory(device, &free_b, &total_b);
  const double used_gib = max_over_ranks(double(total_b - free_b) / (1 << 30));

  (void)solve_once(P, device, 1, false); // warm-up: library handles, first-touch of pinned buffers
  const Run plain = solve_once(P, device, restarts, false);
  const Run prof = solve_once(P, device, restarts, true);
  const HaloStats st = P.op->stats();

  const double steps = static_cast<double>(plain.result.matvecs);
  const double psteps = static_cast<double>(prof.result.matvecs);
  const double step_ms = 1e3 * plain.seconds / steps;
  const double pstep_ms = 1e3 * prof.seconds / psteps;
  // per step, slowest rank (the others wait for it in the next reduction)
  const double local_ms = max_over_ranks(st.local_ms / st.products);
  const double remote_ms = max_over_ranks(st.remote_ms / st.products);
  const double apply_ms = max_over_ranks(st.apply_ms / st.products);
  const double exch_ms = max_over_ranks(st.exchange_ms / st.products);
  const double mpi_ms = max_over_ranks(st.host_exchange_ms / st.products);
  const double exposed_ms = std::max(0.0, apply_ms - local_ms - remote_ms);
  const double reduce_ms = max_over_ranks(1e3 * prof.reduce_s / psteps);
  const double orth_ms = std::max(0.0, pstep_ms - apply_ms - 1e3 * prof.reduce_s / psteps);
  const double red_per_step = static_cast<double>(prof.reduce_calls) / psteps;
  // bytes that cross between ranks per step: what the ranks receive (for point-to-point messages the
  // same as what they send; an allgather moves each rank's part to every other rank)
  const double moved = sum_over_ranks(double(sizeof(Scalar)) * static_cast<double>(P.op->ghost_count()));
  const double ghost_max = max_over_ranks(double(sizeof(Scalar)) * static_cast<double>(P.op->ghost_count()));
  const std::int64_t m = P.rend - P.rstart;

  if (rank_ == 0) {
    std::printf("# %s: n = %lld, nonzeros = %lld, %d rank(s) on %d GPU(s), %lld rows on rank 0\n", P.name.c_str(),
                static_cast<long long>(P.n), static_cast<long long>(P.nnz_global), size_, std::min(size_, ndev), static_cast<long long>(m));
    std::printf("# device %d: %s; device memory in use (max over ranks) %.1f GiB; generation + upload %.1f s\n", device,
                device_description(device).c_str(), used_gib, t_gen);
    std::printf("# operator on rank 0: %s\n", P.op->description().c_str());
    std::printf("# plain solve: %d restarts, %ld steps, %.3f s; profiled solve: %ld steps, %.3f s; %.2f reductions per step\n",
                plain.result.its, plain.result.matvecs, plain.seconds, prof.result.matvecs, prof.seconds, red_per_step);
    std::printf("# largest Ritz values:");
    for (std::size_t i = 0; i < std::min<std::size_t>(4, plain.result.eigenvalues.size()); ++i)
      std::printf(" %.12g", plain.result.eigenvalues[i]);
    std::printf("\n");
    std::printf("# halo per step: %.0f bytes received over all ranks, at most %.0f by one rank; "
                "exchange latency %.3f ms (MPI part %.3f ms), exposed %.3f ms\n",
                moved, ghost_max, exch_ms, mpi_ms, exposed_ms);
    // case | GPUs | n | nnz | ms/step | local | halo exposed (latency) | ghost blocks | reductions | orth | bytes
    std::printf("ROW | %s | %d | %lld | %lld | %.3f | %.3f | %.3f (%.3f) | %.3f | %.3f | %.3f | %.0f |\n", P.name.c_str(), size_,
                static_cast<long long>(P.n), static_cast<long long>(P.nnz_global), step_ms, local_ms, exposed_ms, exch_ms, remote_ms,
                reduce_ms, orth_ms, moved);
    std::fflush(stdout);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int rc = 0;
  try {
    rc = run_main(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_multigpu (rank %d): %s\n", rank_, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return rc;
}
