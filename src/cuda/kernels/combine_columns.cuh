// acc op= V coef on a thread's entries: the unrolled loop over V's columns that combine (y = V coef,
// vector_updates.cu) and subtract_norm2 (w -= V coef, subtract_norm2.cu) share, written once so that
// both keep the same loads in flight and the same order of operations.
#pragma once

#include "cuda/kernels/device_scalar.cuh"

namespace cudalanczos::cuda::kernels::scalar_ops {

/// acc + c v, and acc - c v: the two ways a column enters.
struct AddColumn {
  __device__ __forceinline__ DScalar operator()(DScalar c, DScalar v, DScalar acc) const { return mul_add(c, v, acc); }
};
struct SubtractColumn {
  __device__ __forceinline__ DScalar operator()(DScalar c, DScalar v, DScalar acc) const { return sub_mul(c, v, acc); }
};

/// acc[e] = op(coef[j], V[i * W + e, j], acc[e]) for j = 0, 1, ..., k - 1 in that order, on the W
/// entries of row group i: four columns' loads in flight before their products, then the rest one
/// column at a time.
template <int W, class Op>
__device__ __forceinline__ void combine_columns(int k, const DScalar *__restrict__ V, index_t ldv,
                                                const DScalar *__restrict__ coef, index_t i, DScalar (&acc)[W], Op op)
{
  int j = 0;
  for (; j + 4 <= k; j += 4) {
    DScalar vv[4][W];
#pragma unroll
    for (int u = 0; u < 4; ++u) load_ro<W>(V + (j + u) * ldv + i * W, vv[u]);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const DScalar c = __ldg(coef + j + u);
#pragma unroll
      for (int e = 0; e < W; ++e) acc[e] = op(c, vv[u][e], acc[e]);
    }
  }
  for (; j < k; ++j) {
    DScalar vv[W];
    load_ro<W>(V + j * ldv + i * W, vv);
    const DScalar c = __ldg(coef + j);
#pragma unroll
    for (int e = 0; e < W; ++e) acc[e] = op(c, vv[e], acc[e]);
  }
}

/// The same for the single entry i (the odd last entry of a vectorized pass), through the ordinary path.
template <class Op>
__device__ __forceinline__ DScalar combine_columns_at(int k, const DScalar *V, index_t ldv, const DScalar *coef, index_t i,
                                                      DScalar acc, Op op)
{
  for (int j = 0; j < k; ++j) acc = op(coef[j], V[j * ldv + i], acc);
  return acc;
}

} // namespace cudalanczos::cuda::kernels::scalar_ops
