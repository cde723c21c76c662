// Dense gemv y = A x (kernels.cuh: dense_gemv): a tiled shared-memory gemv after Fujimoto, with the
// columns split over several blocks when the row tiles alone do not fill the device.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"
#include "cuda/kernels/reductions.cuh"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

constexpr int kGemvTile = 512;       // entries of x staged in shared memory per step (4 KB)
constexpr int kGemvMinColumns = 64;  // a block takes at least 64 columns (8 per warp) of a split
// 64-row tiles; why: see docs/tuning.md#cuda-dense-gemv-row-tile
constexpr int kGemvDefaultRowGroups = 1;

// Block: 8 warps on one tile of 32*W*RG rows. Each lane owns W consecutive rows in each of RG groups
// of 32*W rows, so a warp reads 32*W*8 contiguous bytes per column per group: whole 128-byte lines.
// Warp w takes the columns w, w+8, w+16, ... of each x tile, kUnroll columns at a time, so that
// every lane has 8 loads of W doubles in flight before the first multiply. At the end the 8 warps'
// row sums meet in shared memory (Fujimoto's per-block row reduction).
//
// One body on purpose: split into __device__ steps (full tile, edge tile, sums, slices) the same
// arithmetic took 54 instead of 48 registers at W = 2, RG = 2 (64 instead of 68 at RG = 4), so the
// occupancy, and with it the column split the grid is sized by, and the rounding, moved.
template <int W, int RG>
__global__ void __launch_bounds__(kThreads) dense_gemv_kernel(index_t rows, index_t cols, const DScalar *__restrict__ A,
                                                              index_t lda, const DScalar *__restrict__ x,
                                                              DScalar *__restrict__ y, index_t chunk,
                                                              DScalar *__restrict__ partial,
                                                              unsigned *__restrict__ counters)
{
  constexpr int kRowsPerLane = W * RG;
  constexpr int kGroupRows = 32 * W;
  constexpr int kTileRows = 32 * kRowsPerLane;
  constexpr int kUnroll = 8 / RG;
  __shared__ DScalar xs[kGemvTile];
  __shared__ DScalar red[kWarps][kTileRows];
  __shared__ bool last_block;

  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const index_t row0 = static_cast<index_t>(blockIdx.x) * kTileRows;
  const bool full_tile = row0 + kTileRows <= rows;
  const index_t c_begin = static_cast<index_t>(blockIdx.y) * chunk;
  const index_t c_end = min(cols, c_begin + chunk);
  const DScalar *A_lane = A + row0 + lane * W;

  DScalar acc[kRowsPerLane];
#pragma unroll
  for (int i = 0; i < kRowsPerLane; ++i) acc[i] = DScalar{};

  for (index_t t0 = c_begin; t0 < c_end; t0 += kGemvTile) {
    const int tn = static_cast<int>(min(static_cast<index_t>(kGemvTile), c_end - t0));
    __syncthreads(); // every warp is done with the previous x tile
    for (int j = threadIdx.x; j < tn; j += kThreads) xs[j] = __ldg(x + t0 + j);
    __syncthreads();
    if (full_tile) {
      const DScalar *A_tile = A_lane + t0 * lda;
      int j = warp;
      for (; j + (kUnroll - 1) * kWarps < tn; j += kUnroll * kWarps) {
        DScalar a[kUnroll][RG][W];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const DScalar *col = A_tile + static_cast<index_t>(j + u * kWarps) * lda;
#pragma unroll
          for (int g = 0; g < RG; ++g) load_ro<W>(col + g * kGroupRows, a[u][g]);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const DScalar xv = xs[j + u * kWarps];
#pragma unroll
          for (int g = 0; g < RG; ++g)
#pragma unroll
            for (int e = 0; e < W; ++e) acc[g * W + e] = mul_add(a[u][g][e], xv, acc[g * W + e]);
        }
      }
      for (; j < tn; j += kWarps) {
        const DScalar *col = A_tile + static_cast<index_t>(j) * lda;
        const DScalar xv = xs[j];
#pragma unroll
        for (int g = 0; g < RG; ++g) {
          DScalar a[W];
          load_ro<W>(col + g * kGroupRows, a);
#pragma unroll
          for (int e = 0; e < W; ++e) acc[g * W + e] = mul_add(a[e], xv, acc[g * W + e]);
        }
      }
    } else {
      // The last tile of rows, cut by `rows`: one row at a time with a bound check (one block only).
      for (int j = warp; j < tn; j += kWarps) {
        const DScalar *col = A + (t0 + j) * lda;
        const DScalar xv = xs[j];
#pragma unroll
        for (int g = 0; g < RG; ++g)
#pragma unroll
          for (int e = 0; e < W; ++e) {
            const index_t r = row0 + g * kGroupRows + lane * W + e;
            if (r < rows) acc[g * W + e] = mul_add(__ldg(col + r), xv, acc[g * W + e]);
          }
      }
    }
  }

#pragma unroll
  for (int g = 0; g < RG; ++g)
#pragma unroll
    for (int e = 0; e < W; ++e) red[warp][g * kGroupRows + lane * W + e] = acc[g * W + e];
  __syncthreads();
  const bool split = gridDim.y > 1;
  for (int t = threadIdx.x; t < kTileRows; t += kThreads) {
    const index_t r = row0 + t;
    if (r >= rows) break;
    DScalar s{};
#pragma unroll
    for (int w = 0; w < kWarps; ++w) s = add(s, red[w][t]);
    if (split)
      partial[static_cast<index_t>(blockIdx.y) * rows + r] = s;
    else
      y[r] = s;
  }
  if (!split) return;

  // Columns split over gridDim.y blocks: the last block of this row tile to finish adds the slices in
  // slice order (threadFenceReduction pattern: publish, count, the last one reads through L2).
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(counters + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  for (int t = threadIdx.x; t < kTileRows; t += kThreads) {
    const index_t r = row0 + t;
    if (r >= rows) break;
    DScalar s{};
    for (unsigned k = 0; k < gridDim.y; ++k) s = add(s, __ldcg(partial + static_cast<index_t>(k) * rows + r));
    y[r] = s;
  }
  if (threadIdx.x == 0) counters[blockIdx.x] = 0; // ready for the next launch on this workspace
}

using GemvKernel = void (*)(index_t, index_t, const DScalar *, index_t, const DScalar *, DScalar *, index_t, DScalar *,
                            unsigned *);

GemvKernel gemv_kernel(int W, int RG)
{
  if (W == 2) { // real only (plan_gemv): kWide is 1 for complex, and these are then the W = 1 kernels
    if (RG == 1) return dense_gemv_kernel<kWide, 1>;
    if (RG == 2) return dense_gemv_kernel<kWide, 2>;
    if (RG == 4) return dense_gemv_kernel<kWide, 4>;
  } else {
    if (RG == 1) return dense_gemv_kernel<1, 1>;
    if (RG == 2) return dense_gemv_kernel<1, 2>;
    if (RG == 4) return dense_gemv_kernel<1, 4>;
  }
  throw Error("dense_gemv: row_groups must be 1, 2 or 4, not " + std::to_string(RG));
}

/// Resident blocks per multiprocessor of one gemv variant on the current device, asked once.
int gemv_blocks_per_sm(int W, int RG)
{
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, int> cache;
  int device = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(device, W, RG);
  auto it = cache.find(key);
  if (it == cache.end()) {
    int blocks = 0;
    CUDALANCZOS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, gemv_kernel(W, RG), kThreads, 0));
    it = cache.emplace(key, std::max(1, blocks)).first;
  }
  return it->second;
}

struct GemvPlan {
  int W = 1, RG = 1;
  index_t tiles = 0;
  index_t chunk = 0;
  int splits = 1;
};

GemvPlan plan_gemv(index_t rows, index_t cols, bool vector_loads, GemvTuning tuning)
{
  GemvPlan p;
  p.W = vector_loads && !kComplexScalars ? 2 : 1; // a complex entry is a 16-byte load by itself
  p.RG = tuning.row_groups > 0 ? tuning.row_groups : kGemvDefaultRowGroups;
  const index_t tile_rows = 32 * p.W * p.RG;
  p.tiles = (rows + tile_rows - 1) / tile_rows;
  const Limits l = current_limits();
  const int max_bps = l.max_threads_per_sm / kThreads;
  const int bps = tuning.blocks_per_sm > 0 ? std::min(tuning.blocks_per_sm, max_bps) : gemv_blocks_per_sm(p.W, p.RG);
  const index_t slots = static_cast<index_t>(l.sm_count) * bps;
  // One wave: split the columns so that tiles x splits just fills the device; a tall matrix (more
  // tiles than slots) needs no split. Each block then streams a long stretch of columns.
  index_t splits = p.tiles >= slots ? 1 : slots / p.tiles;
  splits = std::min(splits, (cols + kGemvMinColumns - 1) / kGemvMinColumns);
  splits = std::clamp<index_t>(splits, 1, 65535);
  p.chunk = std::max<index_t>(1, (cols + splits - 1) / splits);
  p.splits = static_cast<int>(std::max<index_t>(1, (cols + p.chunk - 1) / p.chunk));
  return p;
}

std::size_t gemv_counter_bytes(index_t rows)
{
  const index_t max_tiles = (rows + 31) / 32; // the smallest tile: W = 1, RG = 1
  return (static_cast<std::size_t>(max_tiles) * sizeof(unsigned) + 255) / 256 * 256;
}

} // namespace

std::size_t dense_gemv_workspace_bytes(index_t rows, index_t cols)
{
  if (rows < 0 || cols < 0) throw Error("dense_gemv_workspace_bytes: negative size");
  // With a split, tiles * splits <= one wave of blocks, so splits * rows <= wave * tile rows; the
  // largest tile is 32 lanes * 2 rows * 4 groups.
  const Limits l = current_limits();
  const std::size_t wave = static_cast<std::size_t>(l.sm_count) * (l.max_threads_per_sm / kThreads);
  const std::size_t partial_rows = std::min<std::size_t>(wave * 256, wave * static_cast<std::size_t>(rows));
  return gemv_counter_bytes(rows) + partial_rows * sizeof(DScalar);
}

void dense_gemv(index_t rows, index_t cols, const Scalar *A_, index_t lda, const Scalar *x_, Scalar *y_,
                void *workspace, std::size_t workspace_bytes, cudaStream_t stream, GemvTuning tuning)
{
  if (rows < 0 || cols < 0 || lda < std::max<index_t>(1, rows))
    throw Error("dense_gemv: need rows, cols >= 0 and lda >= max(1, rows) (rows = " + std::to_string(rows) +
                ", cols = " + std::to_string(cols) + ", lda = " + std::to_string(lda) + ")");
  if (rows == 0) return;
  const DScalar *A = dev(A_), *x = dev(x_);
  DScalar *y = dev(y_);
  if (cols == 0) {
    CUDALANCZOS_CHECK(cudaMemsetAsync(y, 0, static_cast<std::size_t>(rows) * sizeof(DScalar), stream));
    return;
  }
  const GemvPlan p = plan_gemv(rows, cols, aligned16(A) && lda % 2 == 0, tuning);
  unsigned *counters = static_cast<unsigned *>(workspace);
  DScalar *partial = reinterpret_cast<DScalar *>(static_cast<char *>(workspace) + gemv_counter_bytes(rows));
  if (p.splits > 1) {
    const std::size_t need = gemv_counter_bytes(rows) + static_cast<std::size_t>(p.splits) * rows * sizeof(DScalar);
    if (!workspace || workspace_bytes < need)
      throw Error("dense_gemv: workspace of " + std::to_string(workspace_bytes) + " bytes, need " + std::to_string(need) +
                  " (allocate dense_gemv_workspace_bytes(rows, cols))");
  }
  const dim3 grid(static_cast<unsigned>(p.tiles), static_cast<unsigned>(p.splits));
  gemv_kernel(p.W, p.RG)<<<grid, kThreads, 0, stream>>>(rows, cols, A, lda, x, y, p.chunk, partial, counters);
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace cudalanczos::cuda::kernels
