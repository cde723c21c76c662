// One step of a Chebyshev filter's recurrence (kernels.cuh: chebyshev_step), fused: the new Chebyshev
// vector and the running sum y in one pass, so that a filter of degree d reads and writes each long
// vector d times rather than once per vector operation of the step.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"

#include <string>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

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
  for (int e = 0; e < W; ++e) {
    // The host reference's order: (alpha w + beta cur) + gamma prev, then (y + nu cur) + mu next.
    nv[e] = mul_add(st.gamma, pv[e], mul_add(st.beta, cv[e], scaled(st.alpha, wv[e])));
    yv[e] = mul_add(st.mu, nv[e], Accumulate ? mul_add(st.nu, cv[e], yv[e]) : scaled(st.nu, cv[e]));
  }
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

} // namespace

void chebyshev_step(index_t n, const ChebyshevStep &step, const Scalar *w, const Scalar *cur, const Scalar *prev,
                    Scalar *next, Scalar *y, cudaStream_t stream)
{
  if (n < 0) throw Error("chebyshev_step: negative length " + std::to_string(n));
  if (n == 0) return;
  // The aliasing the recurrence never needs, caught where it is cheap to see (a shared start): only
  // next and prev may be one array, and cur and prev (step 1).
  if (next == w || next == cur || next == y || y == w || y == cur || y == prev)
    throw Error("chebyshev_step: next and y must be arrays of their own (only next may be prev)");
  if (step.accumulate)
    launch_step<true>(n, step, dev(w), dev(cur), dev(prev), dev(next), dev(y), stream);
  else
    launch_step<false>(n, step, dev(w), dev(cur), dev(prev), dev(next), dev(y), stream);
}

} // namespace cudalanczos::cuda::kernels
