// The block Gram-Schmidt pass of a block step (kernels.cuh: block_multi_dot, block_subtract): the
// projections V^H W of a block of b <= 4 columns, with its Gram matrix, and W -= V C, each reading V once
// for all b columns. multi_dot and subtract_norm2 per column read V b times; cuBLAS's gemm reads it once
// but far from the bandwidth on these skinny shapes (docs/tuning.md#cuda-block-projections).
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/reductions.cuh"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

/// Columns of V per block of block_multi_dot: a thread holds KC x B projections and the B x B Gram
/// matrix, 20 accumulators at B = 2 (multi_dot's widest holds 9) and 32 at B = 4, without spills.
template <int B>
constexpr int block_dot_columns()
{
  return B <= 2 ? 8 : 4;
}

/// The output entry (row, column) of a slot: slot s < KC * B is the projection of V[:, c0 + s / B] on
/// W[:, s % B], the rest the Gram matrix's entry (j, l) = W[:, j]^H W[:, l], column-major, in chunk 0
/// only. -1 where the slot holds nothing in this chunk.
template <int KC, int B>
__device__ __forceinline__ index_t slot_entry(int s, int k, int c0, int kc, bool with_gram, int ld)
{
  if (s < KC * B) {
    const int c = s / B, j = s % B;
    return c < kc ? static_cast<index_t>(c0 + c) + static_cast<index_t>(j) * ld : -1;
  }
  const int g = s - KC * B, row = g % B, col = g / B;
  return with_gram ? static_cast<index_t>(k + row) + static_cast<index_t>(col) * ld : -1;
}

// Each block takes a chunk of KC columns of V over a grid-stride share of the rows, as multi_dot_kernel
// does (the chunks of one row range are neighbours in launch order, so their reads of W hit L2): every
// accumulator sums its rows in the order multi_dot's would, so where the grid is the same (the window
// pass of a block step) each entry is bit for bit multi_dot's over [V W] for that column of W.
template <int W, int KC, int B>
__global__ void __launch_bounds__(kThreads) block_dot_kernel(index_t n, int k, const DScalar *__restrict__ V, index_t ldv,
                                                             const DScalar *__restrict__ Wb, index_t ldw,
                                                             DScalar *__restrict__ partial, unsigned *counters,
                                                             DScalar *__restrict__ out)
{
  constexpr int kSlots = KC * B + B * B;
  __shared__ DScalar red[kSlots][kWarps];
  const int chunks = max(1, (k + KC - 1) / KC);
  const int chunk = static_cast<int>(blockIdx.x) % chunks, bx = static_cast<int>(blockIdx.x) / chunks;
  const int nb = static_cast<int>(gridDim.x) / chunks, c0 = chunk * KC, kc = min(KC, k - c0), ld = k + B;
  const bool with_gram = chunk == 0;
  const DScalar *Vc = V + static_cast<index_t>(c0) * ldv;

  DScalar acc[kSlots];
#pragma unroll
  for (int s = 0; s < kSlots; ++s) acc[s] = DScalar{};
  const auto rows = [&](index_t i, auto load) { // the W entries of row group i
    DScalar wv[B][W];
#pragma unroll
    for (int j = 0; j < B; ++j) load(Wb + j * ldw, i, wv[j]);
    if (with_gram)
#pragma unroll
      for (int l = 0; l < B; ++l)
#pragma unroll
        for (int j = 0; j < B; ++j)
#pragma unroll
          for (int e = 0; e < W; ++e) acc[KC * B + j + l * B] = conj_mul_add(wv[j][e], wv[l][e], acc[KC * B + j + l * B]);
#pragma unroll
    for (int c = 0; c < KC; ++c)
      if (c < kc) {
        DScalar vv[W];
        load(Vc + c * ldv, i, vv);
#pragma unroll
        for (int j = 0; j < B; ++j)
#pragma unroll
          for (int e = 0; e < W; ++e) acc[c * B + j] = conj_mul_add(vv[e], wv[j][e], acc[c * B + j]);
      }
  };
  const index_t nw = n / W, stride = static_cast<index_t>(nb) * kThreads;
  for (index_t i = static_cast<index_t>(bx) * kThreads + threadIdx.x; i < nw; i += stride)
    rows(i, [](const DScalar *p, index_t r, DScalar(&v)[W]) { load_ro<W>(p + r * W, v); });
  if (W > 1 && bx == 0 && threadIdx.x == 0) // the odd last entry
    for (index_t i = nw * W; i < n; ++i)
      rows(i, [](const DScalar *p, index_t r, DScalar(&v)[W]) {
        v[0] = p[r];
#pragma unroll
        for (int e = 1; e < W; ++e) v[e] = DScalar{}; // adds exactly 0 (fma(0, 0, acc) = acc)
      });

  // The block's sums into partial[entry * nb + bx] (warp sums, then the warps in order), and the last
  // block of the chunk adds the chunk's partials in block order into out.
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int s = 0; s < kSlots; ++s) {
    const DScalar v = warp_sum(acc[s]);
    if (lane == 0) red[s][warp] = v;
  }
  __syncthreads();
  for (int s = threadIdx.x; s < kSlots; s += kThreads) {
    const index_t entry = slot_entry<KC, B>(s, k, c0, kc, with_gram, ld);
    if (entry < 0) continue;
    DScalar v{};
#pragma unroll
    for (int w2 = 0; w2 < kWarps; ++w2) v = add(v, red[s][w2]);
    partial[entry * nb + bx] = v;
  }
  if (!last_to_finish(counters + chunk, static_cast<unsigned>(nb))) return;
  for (int s = warp; s < kSlots; s += kWarps) {
    const index_t entry = slot_entry<KC, B>(s, k, c0, kc, with_gram, ld);
    if (entry < 0) continue;
    const DScalar v = warp_sum_of(partial + entry * nb, nb);
    if (lane == 0) out[entry] = v;
  }
}

template <int B>
void launch_block_dot(index_t n, int k, const DScalar *V, index_t ldv, const DScalar *Wb, index_t ldw, DScalar *out,
                      double *workspace, std::size_t workspace_doubles, cudaStream_t stream)
{
  constexpr int KC = block_dot_columns<B>();
  const int chunks = std::max(1, (k + KC - 1) / KC);
  if (chunks > kMaxDotChunks) throw Error("block_multi_dot: k = " + std::to_string(k) + " is too many columns");
  const bool vec = vector_ok(k, V, ldv, Wb) && ldw % 2 == 0; // W's columns 16-byte aligned too
  // As multi_dot: one wave in all, the chunks sharing it, and no more blocks than the workspace holds partials for.
  const std::size_t entries = static_cast<std::size_t>(k + B) * B * kDoublesPerScalar;
  const std::size_t room = (workspace_doubles - kCounterDoubles) / entries;
  const int cap = static_cast<int>(std::min<std::size_t>({room, kMaxPartials, static_cast<std::size_t>(std::max(1, full_wave_blocks() / chunks))}));
  if (cap < 1) throw Error("block_multi_dot: the workspace is too small (block_dot_workspace_doubles)");
  const int blocks = grid_for(n / (vec ? 2 : 1), cap);
  if (static_cast<long long>(blocks) * chunks > std::numeric_limits<int>::max())
    throw Error("block_multi_dot: k = " + std::to_string(k) + " is too many columns");
  const unsigned grid = static_cast<unsigned>(blocks) * static_cast<unsigned>(chunks);
  unsigned *counters = reinterpret_cast<unsigned *>(workspace);
  DScalar *partial = reinterpret_cast<DScalar *>(workspace + kCounterDoubles);
  if (vec) block_dot_kernel<kWide, KC, B><<<grid, kThreads, 0, stream>>>(n, k, V, ldv, Wb, ldw, partial, counters, out);
  else block_dot_kernel<1, KC, B><<<grid, kThreads, 0, stream>>>(n, k, V, ldv, Wb, ldw, partial, counters, out);
  CUDALANCZOS_CHECK_LAUNCH();
}

// W[:, j] -= V C[:, j] for the B columns: each row group of W is loaded once, updated column of V by
// column in the order subtract_kernel takes them (so each column of W gets subtract_norm2's bits), and
// stored; V's entries are read once for all B.
template <int W, int B>
__global__ void __launch_bounds__(kThreads) block_subtract_kernel(index_t n, int k, const DScalar *__restrict__ V,
                                                                  index_t ldv, const DScalar *__restrict__ C, int ldc,
                                                                  DScalar *__restrict__ Wb, index_t ldw)
{
  const auto rows = [&](index_t i, auto load, auto store_row) {
    DScalar wv[B][W];
#pragma unroll
    for (int j = 0; j < B; ++j) load(Wb + j * ldw, i, wv[j]);
    int c = 0;
    for (; c + 4 <= k; c += 4) { // four columns' loads in flight before their products, as combine_columns
      DScalar vv[4][W];
#pragma unroll
      for (int u = 0; u < 4; ++u) load(V + (c + u) * ldv, i, vv[u]);
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int j = 0; j < B; ++j) {
          const DScalar coef = __ldg(C + c + u + static_cast<index_t>(j) * ldc);
#pragma unroll
          for (int e = 0; e < W; ++e) wv[j][e] = sub_mul(coef, vv[u][e], wv[j][e]);
        }
    }
    for (; c < k; ++c) {
      DScalar vv[W];
      load(V + c * ldv, i, vv);
#pragma unroll
      for (int j = 0; j < B; ++j) {
        const DScalar coef = __ldg(C + c + static_cast<index_t>(j) * ldc);
#pragma unroll
        for (int e = 0; e < W; ++e) wv[j][e] = sub_mul(coef, vv[e], wv[j][e]);
      }
    }
#pragma unroll
    for (int j = 0; j < B; ++j) store_row(Wb + j * ldw, i, wv[j]);
  };
  const index_t nw = n / W, stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < nw; i += stride)
    rows(
        i, [](const DScalar *p, index_t r, DScalar(&v)[W]) { load_ro<W>(p + r * W, v); },
        [](DScalar *p, index_t r, const DScalar(&v)[W]) { store<W>(p + r * W, v); });
  if (W > 1 && blockIdx.x == 0 && threadIdx.x == 0) // the odd last entry
    for (index_t i = nw * W; i < n; ++i)
      rows(
          i,
          [](const DScalar *p, index_t r, DScalar(&v)[W]) {
            v[0] = p[r];
#pragma unroll
            for (int e = 1; e < W; ++e) v[e] = DScalar{};
          },
          [](DScalar *p, index_t r, const DScalar(&v)[W]) { p[r] = v[0]; });
}

template <int B>
void launch_block_subtract(index_t n, int k, const DScalar *V, index_t ldv, const DScalar *C, int ldc, DScalar *Wb,
                           index_t ldw, cudaStream_t stream)
{
  const bool vec = vector_ok(k, V, ldv, Wb) && ldw % 2 == 0;
  const int blocks = grid_for(n / (vec ? 2 : 1));
  if (vec) block_subtract_kernel<kWide, B><<<blocks, kThreads, 0, stream>>>(n, k, V, ldv, C, ldc, Wb, ldw);
  else block_subtract_kernel<1, B><<<blocks, kThreads, 0, stream>>>(n, k, V, ldv, C, ldc, Wb, ldw);
  CUDALANCZOS_CHECK_LAUNCH();
}

void check_block(const char *who, index_t n, int k, index_t ldv, int b, index_t ldw)
{
  check_matrix(who, n, k, ldv);
  if (b < 1 || b > kBlockDotColumns)
    throw Error(std::string(who) + ": the block must have 1 to " + std::to_string(kBlockDotColumns) + " columns (b = " +
                std::to_string(b) + ")");
  if (ldw < n) throw Error(std::string(who) + ": need ldw >= n (n = " + std::to_string(n) + ", ldw = " + std::to_string(ldw) + ")");
}

static_assert(kBlockDotColumns == 4, "with_block_size instantiates the kernels for 1..4 columns");
/// f(std::integral_constant<int, b>{}) for the block sizes 1..kBlockDotColumns (check_block's range).
template <class F>
void with_block_size(int b, F &&f)
{
  switch (b) {
  case 1: return f(std::integral_constant<int, 1>{});
  case 2: return f(std::integral_constant<int, 2>{});
  case 3: return f(std::integral_constant<int, 3>{});
  default: return f(std::integral_constant<int, 4>{});
  }
}

} // namespace

std::size_t block_dot_workspace_doubles(int k, int b)
{
  return kCounterDoubles + static_cast<std::size_t>(std::max(k, 0) + b) * std::max(b, 0) * kMaxPartials * kDoublesPerScalar;
}

void block_multi_dot(index_t n, int k, const Scalar *V, index_t ldv, int b, const Scalar *W, index_t ldw, Scalar *out,
                     double *workspace, std::size_t workspace_doubles, cudaStream_t stream)
{
  check_block("block_multi_dot", n, k, ldv, b, ldw);
  if (workspace_doubles <= kCounterDoubles) throw Error("block_multi_dot: the workspace is too small (block_dot_workspace_doubles)");
  with_block_size(b, [&](auto tag) {
    launch_block_dot<decltype(tag)::value>(n, k, dev(V), ldv, dev(W), ldw, dev(out), workspace, workspace_doubles, stream);
  });
}

void block_subtract(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *C, int ldc, int b, Scalar *W, index_t ldw,
                    cudaStream_t stream)
{
  check_block("block_subtract", n, k, ldv, b, ldw);
  if (ldc < k) throw Error("block_subtract: need ldc >= k (k = " + std::to_string(k) + ", ldc = " + std::to_string(ldc) + ")");
  if (n == 0 || k == 0) return;
  with_block_size(b, [&](auto tag) { launch_block_subtract<decltype(tag)::value>(n, k, dev(V), ldv, dev(C), ldc, dev(W), ldw, stream); });
}

} // namespace cudalanczos::cuda::kernels
