// Fused multi-dot products (kernels.cuh: multi_dot, window_multi_dot): out[i] = V[:, i]^H w for the k
// columns and out[k] = w^H w in one pass over V and w, one launch (reductions.cuh).
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/reductions.cuh"

#include <algorithm>
#include <limits>
#include <string>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

constexpr int kDotColumns = 8; // columns of V per multi-dot block (multi_dot_kernel's KC)

// The columns come in chunks of KC; block b takes chunk c = b % chunks (columns c*KC .. c*KC+KC-1 of V) over
// the grid-stride share of the rows of bx = b / chunks, one of nb = gridDim.x / chunks blocks per chunk;
// the blocks of chunk 0 also accumulate w.w. partial[(column) * nb + bx], w.w at column k. The chunks of
// one bx are neighbours in launch order, so they read the same rows of w (and of the window) at about the
// same time: the second chunk's reads of them hit L2 (the chunk as blockIdx.y instead ran the chunks one
// after the other, each reading w from memory). With a window (win.kl > 0) every block works on
// w - V[:, lo:lo+kl] g instead of w, formed in registers in the order subtract_kernel forms it, and w is
// not written. The last block of each chunk adds the chunk's partials in block order into out;
// counters[c] counts the chunk's finished blocks. KC sets the accumulators a thread holds: 8 columns, or 2
// where k <= 2 (the window's own projection), so that more blocks stay resident; why these two:
// docs/tuning.md#cuda-multi-dot-columns-per-block.
struct DotChunk {
  int chunk, bx, nb; ///< the block's column chunk, its index among the chunk's nb blocks
  int c0, kc;        ///< the chunk's first column and its column count (<= 0 only when k = 0)
  bool with_ww;      ///< chunk 0 also sums w.w
};

template <int KC>
__device__ __forceinline__ DotChunk dot_chunk(int k)
{
  DotChunk d;
  const int chunks = max(1, (k + KC - 1) / KC);
  d.chunk = static_cast<int>(blockIdx.x) % chunks;
  d.bx = static_cast<int>(blockIdx.x) / chunks;
  d.nb = static_cast<int>(gridDim.x) / chunks;
  d.c0 = d.chunk * KC;
  d.kc = min(KC, k - d.c0);
  d.with_ww = d.chunk == 0;
  return d;
}

/// acc[j] += V[:, c0 + j]^H w' and acc[KC] += w'^H w' (chunk 0) over this block's grid-stride share of
/// the rows, w' being w with the window subtracted; block 0's thread 0 also takes the odd last entry.
template <int W, int KC>
__device__ __forceinline__ void project_rows(const DotChunk &d, index_t n, const DScalar *__restrict__ Vc, index_t ldv,
                                             const DScalar *__restrict__ w, const Window &win, const DScalar *VL, DScalar g0,
                                             DScalar g1, DScalar (&acc)[KC + 1])
{
  const index_t nw = n / W;
  const index_t stride = static_cast<index_t>(d.nb) * kThreads;
  for (index_t i = static_cast<index_t>(d.bx) * kThreads + threadIdx.x; i < nw; i += stride) {
    DScalar wv[W];
    load_ro<W>(w + i * W, wv);
    subtract_window<W>(win, g0, g1, VL, ldv, i, wv);
    if (d.with_ww)
#pragma unroll
      for (int e = 0; e < W; ++e) acc[KC] = norm_add_to(wv[e], acc[KC]);
#pragma unroll
    for (int j = 0; j < KC; ++j) {
      if (j < d.kc) {
        DScalar vv[W];
        load_ro<W>(Vc + j * ldv + i * W, vv);
#pragma unroll
        for (int e = 0; e < W; ++e) acc[j] = conj_mul_add(vv[e], wv[e], acc[j]);
      }
    }
  }
  if (W > 1 && d.bx == 0 && threadIdx.x == 0) { // the odd last entry
    for (index_t i = nw * W; i < n; ++i) {
      const DScalar wi = subtract_window_at(win, g0, g1, VL, ldv, i, w[i]);
      if (d.with_ww) acc[KC] = norm_add_to(wi, acc[KC]);
      for (int j = 0; j < d.kc; ++j) acc[j] = conj_mul_add(Vc[j * ldv + i], wi, acc[j]);
    }
  }
}

/// The block's sums of its columns (and of w.w) into partial[column * nb + bx]: warp sums, then thread j
/// adds column j's over the warps in warp order.
template <int KC>
__device__ __forceinline__ void write_block_partials(const DotChunk &d, int k, const DScalar (&acc)[KC + 1],
                                                     DScalar (*red)[kWarps], DScalar *__restrict__ partial)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int j = 0; j <= KC; ++j) {
    const DScalar s = warp_sum(acc[j]);
    if (lane == 0) red[j][warp] = s;
  }
  __syncthreads();
  const int j = threadIdx.x;
  const bool mine = (j < d.kc) || (j == KC && d.with_ww);
  if (mine) {
    DScalar s{};
#pragma unroll
    for (int w2 = 0; w2 < kWarps; ++w2) s = add(s, red[j][w2]);
    const int column = j == KC ? k : d.c0 + j;
    partial[static_cast<index_t>(column) * d.nb + d.bx] = s;
  }
}

/// The last block of the chunk to finish adds each column's partials in block order into out: warp c
/// takes column c0 + c of the chunk, a warp also w.w (chunk 0).
template <int KC>
__device__ __forceinline__ void add_chunk_partials(const DotChunk &d, int k, const DScalar *partial, unsigned *counters,
                                                   DScalar *__restrict__ out)
{
  if (!last_to_finish(counters + d.chunk, static_cast<unsigned>(d.nb))) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int c = warp; c <= KC; c += kWarps) {
    if (!(c < d.kc || (c == KC && d.with_ww))) continue;
    const int column = c == KC ? k : d.c0 + c;
    const DScalar s = warp_sum_of(partial + static_cast<index_t>(column) * d.nb, d.nb);
    if (lane == 0) out[column] = s;
  }
}

template <int W, int KC>
__global__ void __launch_bounds__(kThreads) multi_dot_kernel(index_t n, int k, const DScalar *__restrict__ V,
                                                             index_t ldv, const DScalar *__restrict__ w, Window win,
                                                             DScalar *__restrict__ partial, unsigned *counters,
                                                             DScalar *__restrict__ out, Gate gate)
{
  __shared__ DScalar red[KC + 1][kWarps];
  if (!gate_open(gate)) return;
  const DotChunk d = dot_chunk<KC>(k);
  const DScalar *Vc = V + static_cast<index_t>(d.c0) * ldv;
  const DScalar *VL = V + static_cast<index_t>(win.lo) * ldv;
  // The window has at most two columns (the three-term recurrence's v_{j-1}, v_j).
  const DScalar g0 = win.kl > 0 ? win.g[0] : DScalar{}, g1 = win.kl > 1 ? win.g[1] : DScalar{};

  DScalar acc[KC + 1];
#pragma unroll
  for (int j = 0; j <= KC; ++j) acc[j] = DScalar{};
  project_rows<W, KC>(d, n, Vc, ldv, w, win, VL, g0, g1, acc);
  write_block_partials<KC>(d, k, acc, red, partial);
  add_chunk_partials<KC>(d, k, partial, counters, out);
}

void launch_multi_dot(const char *who, index_t n, int k, const DScalar *V, index_t ldv, const DScalar *w, Window win,
                      DScalar *out, double *workspace, cudaStream_t stream, Gate gate)
{
  check_matrix(who, n, k, ldv);
  const int kc = k <= 2 ? 2 : kDotColumns;
  const int chunks = std::max(1, (k + kc - 1) / kc);
  if (chunks > kMaxDotChunks) throw Error(std::string(who) + ": k = " + std::to_string(k) + " is too many columns");
  const bool vec = vector_ok(k, V, ldv, w, win.kl);
  // Enough blocks for one wave in all, the column chunks sharing it.
  const int blocks = grid_for(n / (vec ? 2 : 1), std::min(kMaxPartials, std::max(1, full_wave_blocks() / chunks)));
  if (static_cast<long long>(blocks) * chunks > std::numeric_limits<int>::max())
    throw Error(std::string(who) + ": k = " + std::to_string(k) + " is too many columns");
  const unsigned grid = static_cast<unsigned>(blocks) * static_cast<unsigned>(chunks);
  unsigned *counters = reinterpret_cast<unsigned *>(workspace);
  DScalar *partial = reinterpret_cast<DScalar *>(workspace + kCounterDoubles); // 16-byte aligned: 256 KB in
  const auto launch = [&](auto kernel) {
    kernel<<<grid, kThreads, 0, stream>>>(n, k, V, ldv, w, win, partial, counters, out, gate);
    CUDALANCZOS_CHECK_LAUNCH();
  };
  if (kc == 2) vec ? launch(multi_dot_kernel<kWide, 2>) : launch(multi_dot_kernel<1, 2>);
  else vec ? launch(multi_dot_kernel<kWide, kDotColumns>) : launch(multi_dot_kernel<1, kDotColumns>);
}

} // namespace

std::size_t reduction_workspace_doubles(int k)
{
  return kCounterDoubles + static_cast<std::size_t>(std::max(k, 0) + 1) * kMaxPartials * kDoublesPerScalar;
}

void multi_dot(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *w, Scalar *out, double *workspace,
               cudaStream_t stream, Gate gate)
{
  launch_multi_dot("multi_dot", n, k, dev(V), ldv, dev(w), Window{}, dev(out), workspace, stream, gate);
}

void window_multi_dot(index_t n, int k, const Scalar *V, index_t ldv, int lo, int kl, const Scalar *g, const Scalar *w,
                      Scalar *out, double *workspace, cudaStream_t stream)
{
  check_window("window_multi_dot", k, lo, kl);
  launch_multi_dot("window_multi_dot", n, k, dev(V), ldv, dev(w), Window{lo, kl, dev(g)}, dev(out), workspace, stream, {});
}

} // namespace cudalanczos::cuda::kernels
