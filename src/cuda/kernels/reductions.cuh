// The building blocks of the deterministic reductions (multi_dot.cu, subtract_norm2.cu; dense_gemv.cu's
// column split uses last_to_finish): sums over a warp and a block in a fixed order, the last block of a
// launch adding everyone's partials, the Gate, the three-term window, and the reduction workspace's layout.
//
// A reduction is one launch: every block writes its partial sums to the workspace, and the last block
// to finish (an atomic counter in the workspace) adds them in block order. The order never depends on
// timing, so results are bit-for-bit reproducible run to run. Why one launch and not a second summing
// kernel: see docs/tuning.md#cuda-reductions-in-one-launch.
#pragma once

#include "cuda/kernels.cuh"
#include "cuda/kernels/launch.cuh"

#include <cstddef>
#include <string>

namespace cudalanczos::cuda::kernels::detail {
using namespace scalar_ops;

constexpr int kMaxPartials = 1024; // blocks in a reduction's first pass (bounds the workspace)

/// The reduction workspace starts with one counter (unsigned) per possible column chunk, whatever k:
/// a later call with more columns must find its counters still zero, so the partials never move over
/// them. 256 KB.
constexpr int kMaxDotChunks = 65535; // column chunks of one multi_dot: one finish counter each
constexpr std::size_t kCounterDoubles = (static_cast<std::size_t>(kMaxDotChunks) + 1) * sizeof(unsigned) / sizeof(double);

template <class V>
__device__ __forceinline__ V warp_sum(V v)
{
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = add(v, shfl_down(v, offset));
  return v;
}

/// The sum of v over the block, valid in thread 0 (red: kWarps doubles of shared memory). Adds in a
/// fixed order: warps by shuffles, then thread 0 over the warps.
__device__ __forceinline__ double block_sum(double v, double *red)
{
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x == 0)
#pragma unroll
    for (int w = 0; w < kWarps; ++w) t += red[w];
  return t;
}

/// The last block of a reduction to finish (threadFenceReduction pattern: publish the partials, count,
/// and the one that counts last reads everyone's through L2). Call with every thread of the block after
/// its partials are written; resets the counter for the next launch when true.
__device__ __forceinline__ bool last_to_finish(unsigned *counter, unsigned blocks)
{
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(counter, 1u) == blocks - 1;
  __syncthreads();
  if (last) {
    __threadfence();
    if (threadIdx.x == 0) *counter = 0; // nobody else touches it in this launch any more
  }
  return last;
}

/// Sum of p[0 .. count-1] in a fixed order (lane-strided, then the shuffle tree), valid in lane 0 of the
/// calling warp. __ldcg: the partials were written by other blocks of this launch.
template <class V>
__device__ __forceinline__ V warp_sum_of(const V *p, int count)
{
  V s{};
  for (int i = threadIdx.x & 31; i < count; i += 32) s = add(s, __ldcg(p + i));
  return warp_sum(s);
}

/// False when the gate is closed (see Gate): the whole launch then does nothing.
__device__ __forceinline__ bool gate_open(const Gate &g) { return !g.lhs || *g.lhs < g.factor * *g.rhs; }

/// The three-term window of a fused pass: w stands for w - V[:, lo:lo+kl] g (kl = 0: plain w).
struct Window {
  int lo = 0, kl = 0;         ///< the window's columns of V (kl <= 2)
  const DScalar *g = nullptr; ///< its coefficients (device, kl entries)
};

/// w - g0 V[:, lo] - g1 V[:, lo+1] on W entries in registers: the window's subtraction, in the order
/// (and so with the rounding) of subtract_kernel with the window's two columns as its V.
template <int W>
__device__ __forceinline__ void subtract_window(const Window &win, DScalar g0, DScalar g1, const DScalar *VL, index_t ldv,
                                                index_t i, DScalar (&wv)[W])
{
  if (win.kl > 0) {
    DScalar vv[W];
    load_ro<W>(VL + i * W, vv);
#pragma unroll
    for (int e = 0; e < W; ++e) wv[e] = sub_mul(g0, vv[e], wv[e]);
  }
  if (win.kl > 1) {
    DScalar vv[W];
    load_ro<W>(VL + ldv + i * W, vv);
#pragma unroll
    for (int e = 0; e < W; ++e) wv[e] = sub_mul(g1, vv[e], wv[e]);
  }
}

/// The same for one entry, the odd last one of a vectorized pass.
__device__ __forceinline__ DScalar subtract_window_at(const Window &win, DScalar g0, DScalar g1, const DScalar *VL,
                                                      index_t ldv, index_t i, DScalar wi)
{
  if (win.kl > 0) wi = sub_mul(g0, VL[i], wi);
  if (win.kl > 1) wi = sub_mul(g1, VL[ldv + i], wi);
  return wi;
}

/// Throws unless the window is 1 or 2 columns, among the k or after them.
inline void check_window(const char *who, int k, int lo, int kl)
{
  if (kl < 1 || kl > 2 || lo < 0 || (lo < k && lo + kl > k))
    throw Error(std::string(who) + ": the window must be 1 or 2 columns, among the k or after them (lo = " +
                std::to_string(lo) + ", kl = " + std::to_string(kl) + ", k = " + std::to_string(k) + ")");
}

} // namespace cudalanczos::cuda::kernels::detail
