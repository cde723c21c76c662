// The row-group kernel under every sparse product (spmv.cu: one vector; spmm.cu: a block of vectors):
// a group of G lanes per row, lanes striding the row and reduced by shuffles, the product taken for B
// columns at once. `Row` says what a stored entry weighs: its value (CsrRow), or the pattern product's
// common off-diagonal value with the diagonal kept apart (PatternRow). `Out` says where a row's product
// goes: into the columns of Y (ColumnsOut), or through a polynomial filter's step (chebyshev_step.cu).
#pragma once

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"

#include <string>
#include <type_traits>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

// G lanes per row; no grid-stride loop, so every lane of a warp reaches the shuffles together. The
// product is taken for B columns at once: X holds them interleaved (row i's B values at X[i * ldr ..
// i * ldr + B - 1]), so the gather of one stored entry brings all B in one or two 32-byte sectors where
// B separate columns would take B (B = 1: X is x); what a block costs against single products:
// docs/tuning.md#cuda-interleaved-sparse-block-products. Y is column-major (column c at Y + c * ldy).
// `Row` says what a stored entry weighs (weight(j)) and what a row's sum becomes (finish(row, s, x_row),
// x_row the row's own entry of that column): the general CSR product and the pattern product share
// everything else. Each column's sum is formed in the same order whatever B is, so a column of the block
// product is bit for bit the single-vector product of that column. out(row, c, v) takes row's entry v of
// column c of the product.
template <int G, int B, class Row, class Out>
__global__ void __launch_bounds__(kThreads) row_group_kernel(index_t rows, const int *__restrict__ rowptr,
                                                             const int *__restrict__ colind, Row op,
                                                             const DScalar *__restrict__ X, index_t ldr, Out out)
{
  const index_t t = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  const index_t row = t / G;
  const int lane = threadIdx.x % G;
  DScalar s[B];
#pragma unroll
  for (int c = 0; c < B; ++c) s[c] = DScalar{};
  if (row < rows) {
    const int end = __ldg(rowptr + row + 1);
    for (int j = __ldg(rowptr + row) + lane; j < end; j += G) {
      const auto a = op.weight(j); // a Scalar, or the pattern's real 1
      const DScalar *xj = X + static_cast<index_t>(__ldg(colind + j)) * ldr;
#pragma unroll
      for (int c = 0; c < B; ++c) s[c] = mul_add(a, __ldg(xj + c), s[c]);
    }
  }
  if constexpr (G > 1) {
#pragma unroll
    for (int c = 0; c < B; ++c)
#pragma unroll
      for (int offset = G / 2; offset > 0; offset >>= 1) s[c] = add(s[c], shfl_down(s[c], offset, G));
  }
  if (lane == 0 && row < rows) {
#pragma unroll
    for (int c = 0; c < B; ++c) out(row, c, op.finish(row, s[c], X + row * ldr + c));
  }
}

/// The products' own output: column c of the product into Y + c * ldy (column-major).
struct ColumnsOut {
  DScalar *__restrict__ Y;
  index_t ldy;
  __device__ void operator()(index_t row, int c, DScalar v) const { Y[row + c * ldy] = v; }
};

/// csr_spmv / csr_spmm: each entry its value.
struct CsrRow {
  const DScalar *__restrict__ values;
  __device__ DScalar weight(int j) const { return __ldg(values + j); }
  __device__ DScalar finish(index_t, DScalar s, const DScalar *) const { return s; }
};

/// pattern_spmv / pattern_spmm: the off-diagonal entries all hold c, so they carry no values (a stored
/// entry costs its 4-byte column index instead of 12 bytes: two thirds of the matrix traffic of graph
/// adjacency and Laplacians), and the diagonal, kept apart, is one value d0 or the vector dvec. The
/// weight 1 makes fma(1, x, s) = s + x exactly: the entries are summed, then scaled by c once.
template <bool DiagVector>
struct PatternRow {
  DScalar c, d0;
  const DScalar *__restrict__ dvec;
  __device__ double weight(int) const { return 1.0; }
  __device__ DScalar finish(index_t row, DScalar s, const DScalar *__restrict__ x_row) const
  {
    const DScalar d = DiagVector ? __ldg(dvec + row) : d0;
    return mul_add(c, s, mul(d, __ldg(x_row)));
  }
};

/// The pattern product's diagonal decides the row policy once, outside the kernels.
template <class F>
void with_pattern_row(Scalar c, Scalar d0, const Scalar *dvec, F &&f)
{
  if (dvec) f(PatternRow<true>{dev_value(c), dev_value(d0), dev(dvec)});
  else f(PatternRow<false>{dev_value(c), dev_value(d0), dev(dvec)});
}

template <int G, int B, class Row, class Out>
void launch_fixed_groups(index_t rows, const int *rowptr, const int *colind, Row op, const DScalar *X, index_t ldr,
                         Out out, cudaStream_t stream)
{
  const index_t threads = rows * G;
  const auto blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  row_group_kernel<G, B><<<blocks, kThreads, 0, stream>>>(rows, rowptr, colind, op, X, ldr, out);
  CUDALANCZOS_CHECK_LAUNCH();
}

/// row_group_kernel at the run-time lane count `lanes` (a power of two up to 32).
template <int B, class Row, class Out>
void launch_row_groups(int lanes, index_t rows, const int *rowptr, const int *colind, Row op, const DScalar *X,
                       index_t ldr, Out out, cudaStream_t stream)
{
  switch (lanes) {
  case 1: return launch_fixed_groups<1, B>(rows, rowptr, colind, op, X, ldr, out, stream);
  case 2: return launch_fixed_groups<2, B>(rows, rowptr, colind, op, X, ldr, out, stream);
  case 4: return launch_fixed_groups<4, B>(rows, rowptr, colind, op, X, ldr, out, stream);
  case 8: return launch_fixed_groups<8, B>(rows, rowptr, colind, op, X, ldr, out, stream);
  case 16: return launch_fixed_groups<16, B>(rows, rowptr, colind, op, X, ldr, out, stream);
  default: return launch_fixed_groups<32, B>(rows, rowptr, colind, op, X, ldr, out, stream);
  }
}

/// Calls launch(std::integral_constant<int, W>{}, c) for the columns c..c+W-1 of b, W = 8 while 8 are
/// left, then 4, 2 and 1: one launch of the row groups per 8 columns, at most three more for the rest.
template <class Launch>
void for_column_chunks(int b, Launch &&launch)
{
  for (int c = 0; c < b;) {
    const int left = b - c;
    if (left >= 8) launch(std::integral_constant<int, 8>{}, c), c += 8;
    else if (left >= 4) launch(std::integral_constant<int, 4>{}, c), c += 4;
    else if (left >= 2) launch(std::integral_constant<int, 2>{}, c), c += 2;
    else launch(std::integral_constant<int, 1>{}, c), c += 1;
  }
}

} // namespace

namespace detail {

/// Lanes per row: the power of two at or above the mean row length (at most a warp), so that a
/// typical row takes one pass of its group and few lanes idle.
inline int lanes_for(index_t rows, index_t entries)
{
  const double mean = static_cast<double>(entries) / static_cast<double>(rows);
  int lanes = 1;
  while (lanes < 32 && lanes < mean) lanes *= 2;
  return lanes;
}

inline void check_lanes(const char *who, int lanes)
{
  if (lanes != 0 && (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) != 0))
    throw Error(std::string(who) + ": lanes must be 0 (the default) or a power of two up to 32, not " + std::to_string(lanes));
}

} // namespace detail
} // namespace cudalanczos::cuda::kernels
