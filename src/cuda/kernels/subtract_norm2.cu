// Fused subtract and norm (kernels.cuh: subtract_norm2, window_subtract_norm2): w -= V coef, then
// *out = w^H w, in one pass over w and one launch (reductions.cuh).
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/combine_columns.cuh"
#include "cuda/kernels/reductions.cuh"

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

// w -= V coef (after the window's w -= V[:, lo:lo+kl] g, if any), then w.w into *out. Each entry of w
// is loaded once, updated column by column in a register (the host's order of subtractions), stored and
// squared; each block's share of w.w goes to partial[blockIdx.x], and the last block to finish adds them
// in block order.
template <int W>
__global__ void __launch_bounds__(kThreads) subtract_kernel(index_t n, int k, const DScalar *__restrict__ V, index_t ldv,
                                                            const DScalar *__restrict__ coef, Window win,
                                                            DScalar *__restrict__ w, double *__restrict__ partial,
                                                            unsigned *counter, double *__restrict__ out, Gate gate)
{
  __shared__ double red[kWarps];
  if (!gate_open(gate)) return;
  const DScalar *VL = V + static_cast<index_t>(win.lo) * ldv;
  const DScalar g0 = win.kl > 0 ? win.g[0] : DScalar{}, g1 = win.kl > 1 ? win.g[1] : DScalar{};
  double ss = 0.0;
  const index_t nw = n / W;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < nw; i += stride) {
    DScalar wv[W];
    load_rw<W>(w + i * W, wv);
    subtract_window<W>(win, g0, g1, VL, ldv, i, wv);
    combine_columns<W>(k, V, ldv, coef, i, wv, SubtractColumn{});
    store<W>(w + i * W, wv);
#pragma unroll
    for (int e = 0; e < W; ++e) ss = norm_add(wv[e], ss);
  }
  if (W > 1 && blockIdx.x == 0 && threadIdx.x == 0) { // the odd last entry
    for (index_t i = nw * W; i < n; ++i) {
      DScalar wi = subtract_window_at(win, g0, g1, VL, ldv, i, w[i]);
      wi = combine_columns_at(k, V, ldv, coef, i, wi, SubtractColumn{});
      w[i] = wi;
      ss = norm_add(wi, ss);
    }
  }
  ss = block_sum(ss, red);
  if (threadIdx.x == 0) partial[blockIdx.x] = ss;
  if (!last_to_finish(counter, gridDim.x)) return;
  if (threadIdx.x < 32) {
    const double s = warp_sum_of(partial, gridDim.x);
    if (threadIdx.x == 0) *out = s;
  }
}

void launch_subtract(const char *who, index_t n, int k, const DScalar *V, index_t ldv, const DScalar *coef, Window win,
                     DScalar *w, double *out, double *workspace, cudaStream_t stream, Gate gate)
{
  check_matrix(who, n, k, ldv);
  const bool vec = vector_ok(k, V, ldv, w, win.kl);
  const int blocks = grid_for(n / (vec ? 2 : 1), kMaxPartials);
  unsigned *counter = reinterpret_cast<unsigned *>(workspace);
  double *partial = workspace + kCounterDoubles;
  if (vec)
    subtract_kernel<kWide><<<blocks, kThreads, 0, stream>>>(n, k, V, ldv, coef, win, w, partial, counter, out, gate);
  else
    subtract_kernel<1><<<blocks, kThreads, 0, stream>>>(n, k, V, ldv, coef, win, w, partial, counter, out, gate);
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace

void subtract_norm2(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *coef, Scalar *w, double *out,
                    double *workspace, cudaStream_t stream, Gate gate)
{
  launch_subtract("subtract_norm2", n, k, dev(V), ldv, dev(coef), Window{}, dev(w), out, workspace, stream, gate);
}

void window_subtract_norm2(index_t n, int k, const Scalar *V, index_t ldv, int lo, int kl, const Scalar *g,
                           const Scalar *coef, Scalar *w, double *out, double *workspace, cudaStream_t stream)
{
  check_window("window_subtract_norm2", k, lo, kl);
  launch_subtract("window_subtract_norm2", n, k, dev(V), ldv, dev(coef), Window{lo, kl, dev(g)}, dev(w), out, workspace,
                  stream, {});
}

} // namespace cudalanczos::cuda::kernels
