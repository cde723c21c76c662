// One step of a Chebyshev filter's recurrence (kernels.cuh: chebyshev_step), fused: the new Chebyshev
// vector and the running sum y in one pass, so that a filter of degree d reads and writes each long
// vector d times rather than once per vector operation of the step. With a sparse matrix the step's
// product is fused in too (csr_chebyshev_step, pattern_chebyshev_step): the row groups of the sparse
// products hand each row's entry of A cur to the step in registers, and w is never stored.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"
#include "cuda/kernels/sparse_row_groups.cuh"

#include <string>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

// One entry of the step from w = (A cur)_i: the host reference's order, (alpha w + beta cur) + gamma prev,
// then (y + nu cur) + mu next. Without Accumulate y's old value is not used.
template <bool Accumulate>
__device__ __forceinline__ void step_entry(const ChebyshevStep &st, DScalar w, DScalar c, DScalar p, DScalar &y, DScalar &next)
{
  next = mul_add(st.gamma, p, mul_add(st.beta, c, scaled(st.alpha, w)));
  y = mul_add(st.mu, next, Accumulate ? mul_add(st.nu, c, y) : scaled(st.nu, c));
}

// Entries i..i+W-1. prev may be next itself: its entries are loaded before next's are stored, and no
// other thread touches them. Without Accumulate y is only written (it may hold NaN before step 1).
template <int W, bool Accumulate>
__device__ __forceinline__ void step_entries(index_t i, ChebyshevStep st, const DScalar *__restrict__ w,
                                             const DScalar *__restrict__ cur, const DScalar *prev, DScalar *next,
                                             DScalar *__restrict__ y)
{
  DScalar wv[W], cv[W], pv[W], yv[W], nv[W];
  load_ro<W>(w + i, wv);
  load_ro<W>(cur + i, cv);
  load_rw<W>(prev + i, pv);
  if constexpr (Accumulate) load_rw<W>(y + i, yv);
#pragma unroll
  for (int e = 0; e < W; ++e) step_entry<Accumulate>(st, wv[e], cv[e], pv[e], yv[e], nv[e]);
  store<W>(next + i, nv);
  store<W>(y + i, yv);
}

template <int W, bool Accumulate>
__global__ void __launch_bounds__(kThreads) chebyshev_step_kernel(index_t n, ChebyshevStep st, const DScalar *__restrict__ w,
                                                                  const DScalar *__restrict__ cur, const DScalar *prev,
                                                                  DScalar *next, DScalar *__restrict__ y)
{
  const index_t nw = n / W;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  const index_t first = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (index_t i = first; i < nw; i += stride) step_entries<W, Accumulate>(i * W, st, w, cur, prev, next, y);
  if (W > 1 && first == 0) // the odd last entry
    for (index_t i = nw * W; i < n; ++i) step_entries<1, Accumulate>(i, st, w, cur, prev, next, y);
}

template <bool Accumulate>
void launch_step(index_t n, const ChebyshevStep &st, const DScalar *w, const DScalar *cur, const DScalar *prev, DScalar *next,
                 DScalar *y, cudaStream_t stream)
{
  const bool vec = !kComplexScalars && aligned16(w) && aligned16(cur) && aligned16(prev) && aligned16(next) && aligned16(y);
  if (vec)
    chebyshev_step_kernel<kWide, Accumulate><<<grid_for(n / kWide), kThreads, 0, stream>>>(n, st, w, cur, prev, next, y);
  else
    chebyshev_step_kernel<1, Accumulate><<<grid_for(n), kThreads, 0, stream>>>(n, st, w, cur, prev, next, y);
  CUDALANCZOS_CHECK_LAUNCH();
}

/// The row groups' output for the fused step: row's entry of column c of A cur goes through step_entry, as
/// chebyshev_step would take it from w, at row * ld + c of the arrays (ld = 1: one column; ld = b: b
/// interleaved columns, each array offset to the launch's first column). Only that thread reads prev and y
/// there and writes next and y there, so next may be prev; cur is only read (gathered by the product).
template <bool Accumulate>
struct StepOut {
  ChebyshevStep st;
  const DScalar *__restrict__ cur;
  const DScalar *prev;
  DScalar *next;
  DScalar *__restrict__ y;
  index_t ld;
  __device__ void operator()(index_t row, int c, DScalar w) const
  {
    const index_t i = row * ld + c;
    DScalar yv = Accumulate ? y[i] : DScalar{}, nv;
    step_entry<Accumulate>(st, w, __ldg(cur + i), prev[i], yv, nv);
    next[i] = nv;
    y[i] = yv;
  }
};

void check_step_arrays(const char *who, const Scalar *w, const Scalar *cur, const Scalar *prev, const Scalar *next,
                       const Scalar *y)
{
  // The aliasing the recurrence never needs, caught where it is cheap to see (a shared start): only
  // next and prev may be one array, and cur and prev (step 1).
  if (next == w || next == cur || next == y || y == w || y == cur || y == prev)
    throw Error(std::string(who) + ": next and y must be arrays of their own (only next may be prev)");
}

/// The fused product and step for b columns (b = 1: a vector; else interleaved, row stride b): row groups
/// of `lanes` over the matrix `op` weighs, into StepOut, in the column chunks of csr_spmm.
template <class Row>
void launch_fused_step(int lanes, index_t rows, const int *rowptr, const int *colind, Row op, const ChebyshevStep &st, int b,
                       const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y, cudaStream_t stream)
{
  for_column_chunks(b, [&](auto width, int c) {
    constexpr int W = decltype(width)::value;
    const DScalar *cc = dev(cur) + c;
    if (st.accumulate)
      launch_row_groups<W>(lanes, rows, rowptr, colind, op, cc, b, StepOut<true>{st, cc, dev(prev) + c, dev(next) + c, dev(y) + c, b},
                           stream);
    else
      launch_row_groups<W>(lanes, rows, rowptr, colind, op, cc, b, StepOut<false>{st, cc, dev(prev) + c, dev(next) + c, dev(y) + c, b},
                           stream);
  });
}

void check_block_arrays(const char *who, int b, const Scalar *cur, const Scalar *prev, const Scalar *next, const Scalar *y)
{
  if (b < 1) throw Error(std::string(who) + ": the block needs at least one column (b = " + std::to_string(b) + ")");
  check_step_arrays(who, nullptr, cur, prev, next, y);
}

} // namespace

void csr_chebyshev_step_block(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values,
                              const ChebyshevStep &step, int b, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                              cudaStream_t stream, int lanes)
{
  if (rows < 0 || nnz < 0) throw Error("csr_chebyshev_step_block: negative size");
  check_lanes("csr_chebyshev_step_block", lanes);
  check_block_arrays("csr_chebyshev_step_block", b, cur, prev, next, y);
  if (rows == 0) return;
  launch_fused_step(lanes ? lanes : lanes_for(rows, nnz), rows, rowptr, colind, CsrRow{dev(values)}, step, b, cur, prev, next, y,
                    stream);
}

void pattern_chebyshev_step_block(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                                  const Scalar *dvec, const ChebyshevStep &step, int b, const Scalar *cur, const Scalar *prev,
                                  Scalar *next, Scalar *y, cudaStream_t stream, int lanes)
{
  if (rows < 0 || entries < 0) throw Error("pattern_chebyshev_step_block: negative size");
  check_lanes("pattern_chebyshev_step_block", lanes);
  check_block_arrays("pattern_chebyshev_step_block", b, cur, prev, next, y);
  if (rows == 0) return;
  const int g = lanes ? lanes : lanes_for(rows, entries);
  with_pattern_row(c, d0, dvec,
                   [&](auto op) { launch_fused_step(g, rows, rowptr, colind, op, step, b, cur, prev, next, y, stream); });
}

void csr_chebyshev_step(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values,
                        const ChebyshevStep &step, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                        cudaStream_t stream, int lanes)
{
  if (rows < 0 || nnz < 0) throw Error("csr_chebyshev_step: negative size");
  check_lanes("csr_chebyshev_step", lanes);
  if (rows == 0) return;
  check_step_arrays("csr_chebyshev_step", nullptr, cur, prev, next, y);
  launch_fused_step(lanes ? lanes : lanes_for(rows, nnz), rows, rowptr, colind, CsrRow{dev(values)}, step, 1, cur, prev, next, y,
                    stream);
}

void pattern_chebyshev_step(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                            const Scalar *dvec, const ChebyshevStep &step, const Scalar *cur, const Scalar *prev,
                            Scalar *next, Scalar *y, cudaStream_t stream, int lanes)
{
  if (rows < 0 || entries < 0) throw Error("pattern_chebyshev_step: negative size");
  check_lanes("pattern_chebyshev_step", lanes);
  if (rows == 0) return;
  check_step_arrays("pattern_chebyshev_step", nullptr, cur, prev, next, y);
  const int g = lanes ? lanes : lanes_for(rows, entries);
  with_pattern_row(c, d0, dvec, [&](auto op) { launch_fused_step(g, rows, rowptr, colind, op, step, 1, cur, prev, next, y, stream); });
}

void chebyshev_step(index_t n, const ChebyshevStep &step, const Scalar *w, const Scalar *cur, const Scalar *prev,
                    Scalar *next, Scalar *y, cudaStream_t stream)
{
  if (n < 0) throw Error("chebyshev_step: negative length " + std::to_string(n));
  if (n == 0) return;
  check_step_arrays("chebyshev_step", w, cur, prev, next, y);
  if (step.accumulate)
    launch_step<true>(n, step, dev(w), dev(cur), dev(prev), dev(next), dev(y), stream);
  else
    launch_step<false>(n, step, dev(w), dev(cur), dev(prev), dev(next), dev(y), stream);
}

} // namespace cudalanczos::cuda::kernels
