// The custom kernels (see kernels.cuh for what each computes).
//
// Every kernel here is memory-bound: a gemv does 2 flops per 8-byte matrix entry, a dot 2 per 16 bytes.
// So the habits are the bandwidth ones: 16-byte loads coalesced across the warp wherever alignment
// allows, about eight independent loads in flight per thread before the first use, one pass over each
// operand (fused stages), grids sized from the multiprocessor count, and reductions that add in a
// fixed order so that two runs on the same data give the same bits.
#include "cuda/kernels.cuh"

#include "core/random.hpp"
#include "cuda/cuda_check.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

namespace cudalanczos::cuda::kernels {
namespace {

constexpr int kThreads = 256;             // every kernel: 8 warps, enough for one block to hide latency
constexpr int kWarps = kThreads / 32;
constexpr int kMaxPartials = 1024;        // blocks in a reduction's first pass (bounds the workspace)
constexpr int kDotColumns = 8;            // columns of V per multi-dot block (multi_dot_kernel's KC)
constexpr int kGemvTile = 512;            // entries of x staged in shared memory per step (4 KB)
constexpr int kGemvMinColumns = 64;       // a block takes at least 64 columns (8 per warp) of a split
constexpr int kGemvDefaultRowGroups = 1;  // 64-row tiles: 128/256 rows measured within 1.5 % (bench/results)

// --- launch geometry --------------------------------------------------------------------------------

struct Limits {
  int sm_count = 0;
  int max_threads_per_sm = 0;
};

/// The current device's multiprocessor count and thread limit, read once per device.
Limits current_limits()
{
  static std::mutex mutex;
  static std::map<int, Limits> cache;
  int device = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it == cache.end()) {
    Limits l;
    CUDALANCZOS_CHECK(cudaDeviceGetAttribute(&l.sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDALANCZOS_CHECK(cudaDeviceGetAttribute(&l.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    it = cache.emplace(device, l).first;
  }
  return it->second;
}

/// Blocks of kThreads that fill the device once (every multiprocessor at its thread limit).
int full_wave_blocks()
{
  const Limits l = current_limits();
  return std::max(1, l.sm_count * (l.max_threads_per_sm / kThreads));
}

/// Blocks for a grid-stride loop over `items`: never more than one full wave (each thread then loops,
/// which keeps several loads in flight), never more than the items need.
int grid_for(index_t items, int cap = 1 << 30)
{
  const index_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<index_t>(1, std::min<index_t>({needed, full_wave_blocks(), cap})));
}

bool aligned16(const void *p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

} // namespace

// --- the scalar type on the device -------------------------------------------------------------------
// (Outside the anonymous namespace: a build uses only its own type's overloads, and unused functions
// of internal linkage would each be a warning.)
namespace scalar_ops {

// The build's Scalar as the kernels see it: double, or double2 (x real, y imaginary part) for
// std::complex<double>, which has that layout. Only the build's type is compiled. The helpers below
// are the operations the kernels need on it; on double each is the one operation the real kernels
// always did (fma(a, x, acc), fma(-c, v, w), ...), so the real build computes the same bits as before.
using DScalar = std::conditional_t<kComplexScalars, double2, double>;
static_assert(sizeof(DScalar) == sizeof(Scalar), "Scalar and its device twin must have one layout");
// Elements per 16-byte vector load: two doubles, or one complex.
constexpr int kWide = kComplexScalars ? 1 : 2;

inline DScalar *dev(Scalar *p) { return reinterpret_cast<DScalar *>(p); }
inline const DScalar *dev(const Scalar *p) { return reinterpret_cast<const DScalar *>(p); }
inline DScalar dev_value(const Scalar &x)
{
  DScalar d;
  std::memcpy(&d, &x, sizeof d);
  return d;
}

/// acc + a x
__device__ __forceinline__ double mul_add(double a, double x, double acc) { return fma(a, x, acc); }
__device__ __forceinline__ double2 mul_add(double2 a, double2 x, double2 acc)
{
  return make_double2(fma(a.x, x.x, fma(-a.y, x.y, acc.x)), fma(a.x, x.y, fma(a.y, x.x, acc.y)));
}
__device__ __forceinline__ double2 mul_add(double a, double2 x, double2 acc)
{
  return make_double2(fma(a, x.x, acc.x), fma(a, x.y, acc.y));
}
/// acc + conj(a) x: the inner products' term (the left factor conjugated)
__device__ __forceinline__ double conj_mul_add(double a, double x, double acc) { return fma(a, x, acc); }
__device__ __forceinline__ double2 conj_mul_add(double2 a, double2 x, double2 acc)
{
  return make_double2(fma(a.x, x.x, fma(a.y, x.y, acc.x)), fma(a.x, x.y, fma(-a.y, x.x, acc.y)));
}
/// acc - c v
__device__ __forceinline__ double sub_mul(double c, double v, double acc) { return fma(-c, v, acc); }
__device__ __forceinline__ double2 sub_mul(double2 c, double2 v, double2 acc)
{
  return make_double2(fma(-c.x, v.x, fma(c.y, v.y, acc.x)), fma(-c.x, v.y, fma(-c.y, v.x, acc.y)));
}
/// acc + |x|^2 (a real accumulator)
__device__ __forceinline__ double norm_add(double x, double acc) { return fma(x, x, acc); }
__device__ __forceinline__ double norm_add(double2 x, double acc) { return fma(x.x, x.x, fma(x.y, x.y, acc)); }
/// acc + |x|^2 in a Scalar accumulator: the imaginary part is left as it is (0), not formed from
/// rounding errors as conj(x) x would form it
__device__ __forceinline__ double norm_add_to(double x, double acc) { return fma(x, x, acc); }
__device__ __forceinline__ double2 norm_add_to(double2 x, double2 acc) { return make_double2(norm_add(x, acc.x), acc.y); }
__device__ __forceinline__ double add(double a, double b) { return a + b; }
__device__ __forceinline__ double2 add(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double mul(double a, double b) { return a * b; }
__device__ __forceinline__ double2 mul(double2 a, double2 b) { return make_double2(fma(a.x, b.x, -a.y * b.y), fma(a.x, b.y, a.y * b.x)); }
/// x times the real a (x * a: the real kernels' order of the operands)
__device__ __forceinline__ double scaled(double a, double x) { return x * a; }
__device__ __forceinline__ double2 scaled(double a, double2 x) { return make_double2(x.x * a, x.y * a); }
__device__ __forceinline__ double real_of(double x) { return x; }
__device__ __forceinline__ double real_of(double2 x) { return x.x; }
__device__ __forceinline__ double with_real(double, double x) { return x; }
__device__ __forceinline__ double2 with_real(double2, double x) { return make_double2(x, 0.0); }
/// x as a Scalar (imaginary part 0)
__device__ __forceinline__ DScalar from_real(double x) { return with_real(DScalar{}, x); }
__device__ __forceinline__ double shfl_down(double v, int offset, int width = 32)
{
  return __shfl_down_sync(0xffffffffu, v, offset, width);
}
__device__ __forceinline__ double2 shfl_down(double2 v, int offset, int width = 32)
{
  return make_double2(__shfl_down_sync(0xffffffffu, v.x, offset, width), __shfl_down_sync(0xffffffffu, v.y, offset, width));
}

/// acc[t] += x q[t] for the kRotateOutputs coefficients at q: two per 16-byte load (double), or one (complex).
__device__ __forceinline__ void rotate_row(double x, const double *q, double (&acc)[kRotateOutputs])
{
  const double2 *q2 = reinterpret_cast<const double2 *>(q);
#pragma unroll
  for (int t = 0; t < kRotateOutputs / 2; ++t) {
    const double2 c = __ldg(q2 + t);
    acc[2 * t] = fma(x, c.x, acc[2 * t]);
    acc[2 * t + 1] = fma(x, c.y, acc[2 * t + 1]);
  }
}
__device__ __forceinline__ void rotate_row(double2 x, const double2 *q, double2 (&acc)[kRotateOutputs])
{
#pragma unroll
  for (int t = 0; t < kRotateOutputs; ++t) acc[t] = mul_add(x, __ldg(q + t), acc[t]);
}

} // namespace scalar_ops

namespace {
using namespace scalar_ops;

// --- device helpers -----------------------------------------------------------------------------------

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

/// False when the gate is closed (see Gate): the whole launch then does nothing.
__device__ __forceinline__ bool gate_open(const Gate &g) { return !g.lhs || *g.lhs < g.factor * *g.rhs; }

/// W consecutive Scalars through the read-only path (16 bytes at once for W = 2 doubles: p 16-byte
/// aligned; a complex is one 16-byte load at W = 1).
template <int W>
__device__ __forceinline__ void load_ro(const DScalar *p, DScalar (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(W != 2 || !kComplexScalars, "two complex entries are 32 bytes: W = 1");
    const double2 t = __ldg(reinterpret_cast<const double2 *>(p));
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = __ldg(p);
  }
}

/// The same through the ordinary path, for data this kernel also writes.
template <int W>
__device__ __forceinline__ void load_rw(const DScalar *p, DScalar (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(W != 2 || !kComplexScalars, "two complex entries are 32 bytes: W = 1");
    const double2 t = *reinterpret_cast<const double2 *>(p);
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = *p;
  }
}

template <int W>
__device__ __forceinline__ void store(DScalar *p, const DScalar (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(W != 2 || !kComplexScalars, "two complex entries are 32 bytes: W = 1");
    *reinterpret_cast<double2 *>(p) = make_double2(v[0], v[1]);
  } else {
    *p = v[0];
  }
}

// --- (a) dense gemv -----------------------------------------------------------------------------------

// Block: 8 warps on one tile of 32*W*RG rows. Each lane owns W consecutive rows in each of RG groups
// of 32*W rows, so a warp reads 32*W*8 contiguous bytes per column per group: whole 128-byte lines.
// Warp w takes the columns w, w+8, w+16, ... of each x tile, kUnroll columns at a time, so that
// every lane has 8 loads of W doubles in flight before the first multiply. At the end the 8 warps'
// row sums meet in shared memory (Fujimoto's per-block row reduction).
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

// --- (b) CSR SpMV ---------------------------------------------------------------------------------------

// G lanes per row; no grid-stride loop, so every lane of a warp reaches the shuffles together. The
// product is taken for B columns at once: X holds them interleaved (row i's B values at X[i * ldr ..
// i * ldr + B - 1]), so the gather of one stored entry brings all B in one or two 32-byte sectors where
// B separate columns would take B (B = 1: X is x). Measured on an H200 (bench spmm): a block of 4 costs
// 2.4 single products on a power-law graph, 3.0 on a random sparse matrix. Y is column-major (column c
// at Y + c * ldy).
// `Row` says what a stored entry weighs (weight(j)) and what a row's sum becomes (finish(row, s, x_row),
// x_row the row's own entry of that column): the general CSR product and the pattern product share
// everything else. Each column's sum is formed in the same order whatever B is, so a column of the block
// product is bit for bit the single-vector product of that column.
template <int G, int B, class Row>
__global__ void __launch_bounds__(kThreads) row_group_kernel(index_t rows, const int *__restrict__ rowptr,
                                                             const int *__restrict__ colind, Row op,
                                                             const DScalar *__restrict__ X, index_t ldr,
                                                             DScalar *__restrict__ Y, index_t ldy)
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
    for (int c = 0; c < B; ++c) Y[row + c * ldy] = op.finish(row, s[c], X + row * ldr + c);
  }
}

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

template <int G, int B, class Row>
void launch_fixed_groups(index_t rows, const int *rowptr, const int *colind, Row op, const DScalar *X, index_t ldr,
                       DScalar *Y, index_t ldy, cudaStream_t stream)
{
  const index_t threads = rows * G;
  const auto blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  row_group_kernel<G, B><<<blocks, kThreads, 0, stream>>>(rows, rowptr, colind, op, X, ldr, Y, ldy);
  CUDALANCZOS_CHECK_LAUNCH();
}

template <int B, class Row>
void launch_row_groups(int lanes, index_t rows, const int *rowptr, const int *colind, Row op, const DScalar *X,
                       index_t ldr, DScalar *Y, index_t ldy, cudaStream_t stream)
{
  switch (lanes) {
  case 1: return launch_fixed_groups<1, B>(rows, rowptr, colind, op, X, ldr, Y, ldy, stream);
  case 2: return launch_fixed_groups<2, B>(rows, rowptr, colind, op, X, ldr, Y, ldy, stream);
  case 4: return launch_fixed_groups<4, B>(rows, rowptr, colind, op, X, ldr, Y, ldy, stream);
  case 8: return launch_fixed_groups<8, B>(rows, rowptr, colind, op, X, ldr, Y, ldy, stream);
  case 16: return launch_fixed_groups<16, B>(rows, rowptr, colind, op, X, ldr, Y, ldy, stream);
  default: return launch_fixed_groups<32, B>(rows, rowptr, colind, op, X, ldr, Y, ldy, stream);
  }
}

/// Y = A X for b columns of the interleaved X (row stride ldr >= b), G = lanes (a power of two up to
/// 32), in chunks of 8, 4, 2 and 1 columns: one launch per 8 columns, at most three more for the rest.
template <class Row>
void launch_column_chunks(int lanes, int b, index_t rows, const int *rowptr, const int *colind, Row op, const DScalar *X,
                       index_t ldr, DScalar *Y, index_t ldy, cudaStream_t stream)
{
  for (int c = 0; c < b;) {
    const int left = b - c;
    const DScalar *Xc = X + c;
    DScalar *Yc = Y + c * ldy;
    if (left >= 8) launch_row_groups<8>(lanes, rows, rowptr, colind, op, Xc, ldr, Yc, ldy, stream), c += 8;
    else if (left >= 4) launch_row_groups<4>(lanes, rows, rowptr, colind, op, Xc, ldr, Yc, ldy, stream), c += 4;
    else if (left >= 2) launch_row_groups<2>(lanes, rows, rowptr, colind, op, Xc, ldr, Yc, ldy, stream), c += 2;
    else launch_row_groups<1>(lanes, rows, rowptr, colind, op, Xc, ldr, Yc, ldy, stream), c += 1;
  }
}

/// Xr[i * b + c] = X[i + c * ldx]: a column-major block interleaved for the block products. Threads in
/// the order of Xr, so the writes are coalesced; the reads come from b columns, a few rows of each per warp.
__global__ void __launch_bounds__(kThreads) interleave_kernel(index_t rows, int b, const DScalar *__restrict__ X,
                                                              index_t ldx, DScalar *__restrict__ Xr)
{
  const index_t total = rows * b;
  for (index_t e = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * kThreads) {
    const index_t i = e / b;
    const int c = static_cast<int>(e - i * b);
    Xr[e] = __ldg(X + i + c * ldx);
  }
}

/// Lanes per row: the power of two at or above the mean row length (at most a warp), so that a
/// typical row takes one pass of its group and few lanes idle.
int lanes_for(index_t rows, index_t entries)
{
  const double mean = static_cast<double>(entries) / static_cast<double>(rows);
  int lanes = 1;
  while (lanes < 32 && lanes < mean) lanes *= 2;
  return lanes;
}

// --- reductions ------------------------------------------------------------------------------------------

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

// The columns come in chunks of KC; block b takes chunk c = b % chunks (columns c*KC .. c*KC+KC-1 of V) over
// the grid-stride share of the rows of bx = b / chunks, one of nb = gridDim.x / chunks blocks per chunk;
// the blocks of chunk 0 also accumulate w.w. partial[(column) * nb + bx], w.w at column k. The chunks of
// one bx are neighbours in launch order, so they read the same rows of w (and of the window) at about the
// same time: the second chunk's reads of them hit L2 (the chunk as blockIdx.y instead ran the chunks one
// after the other, each reading w from memory). With a window (win.kl > 0) every block works on
// w - V[:, lo:lo+kl] g instead of w, formed in registers in the order subtract_kernel forms it, and w is
// not written. The last block of each chunk adds the chunk's partials in block order into out;
// counters[c] counts the chunk's finished blocks. KC sets the accumulators a thread holds: 8 columns, or 2
// where k <= 2 (the window's own projection: 40 registers instead of 64, 54 instead of 92 with complex
// scalars, so more blocks stay resident; 1.1-1.5x faster on an H200 at 2 * 10^6 rows,
// bench/results/2026-12-02-h200-step-kernels.md). Four columns a chunk with complex scalars (64 registers)
// were 3-11 % slower than eight from k = 8 up, the extra chunks' reads of w costing more than the
// occupancy gained.
struct Window {
  int lo = 0, kl = 0;        ///< the window's columns of V (kl <= 2)
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

template <int W, int KC>
__global__ void __launch_bounds__(kThreads) multi_dot_kernel(index_t n, int k, const DScalar *__restrict__ V,
                                                             index_t ldv, const DScalar *__restrict__ w, Window win,
                                                             DScalar *__restrict__ partial, unsigned *counters,
                                                             DScalar *__restrict__ out, Gate gate)
{
  __shared__ DScalar red[KC + 1][kWarps];
  if (!gate_open(gate)) return;
  const int chunks = max(1, (k + KC - 1) / KC);
  const int chunk = static_cast<int>(blockIdx.x) % chunks, bx = static_cast<int>(blockIdx.x) / chunks;
  const int nb = static_cast<int>(gridDim.x) / chunks;
  const int c0 = chunk * KC;
  const int kc = min(KC, k - c0); // <= 0 only when k = 0
  const bool with_ww = chunk == 0;
  const DScalar *Vc = V + static_cast<index_t>(c0) * ldv;
  const DScalar *VL = V + static_cast<index_t>(win.lo) * ldv;
  // The window has at most two columns (the three-term recurrence's v_{j-1}, v_j).
  const DScalar g0 = win.kl > 0 ? win.g[0] : DScalar{}, g1 = win.kl > 1 ? win.g[1] : DScalar{};

  DScalar acc[KC + 1];
#pragma unroll
  for (int j = 0; j <= KC; ++j) acc[j] = DScalar{};

  const index_t nw = n / W;
  const index_t stride = static_cast<index_t>(nb) * kThreads;
  for (index_t i = static_cast<index_t>(bx) * kThreads + threadIdx.x; i < nw; i += stride) {
    DScalar wv[W];
    load_ro<W>(w + i * W, wv);
    subtract_window<W>(win, g0, g1, VL, ldv, i, wv);
    if (with_ww)
#pragma unroll
      for (int e = 0; e < W; ++e) acc[KC] = norm_add_to(wv[e], acc[KC]);
#pragma unroll
    for (int j = 0; j < KC; ++j) {
      if (j < kc) {
        DScalar vv[W];
        load_ro<W>(Vc + j * ldv + i * W, vv);
#pragma unroll
        for (int e = 0; e < W; ++e) acc[j] = conj_mul_add(vv[e], wv[e], acc[j]);
      }
    }
  }
  if (W > 1 && bx == 0 && threadIdx.x == 0) { // the odd last entry
    for (index_t i = nw * W; i < n; ++i) {
      DScalar wi = w[i];
      if (win.kl > 0) wi = sub_mul(g0, VL[i], wi);
      if (win.kl > 1) wi = sub_mul(g1, VL[ldv + i], wi);
      if (with_ww) acc[KC] = norm_add_to(wi, acc[KC]);
      for (int j = 0; j < kc; ++j) acc[j] = conj_mul_add(Vc[j * ldv + i], wi, acc[j]);
    }
  }

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int j = 0; j <= KC; ++j) {
    const DScalar s = warp_sum(acc[j]);
    if (lane == 0) red[j][warp] = s;
  }
  __syncthreads();
  const int j = threadIdx.x;
  const bool mine = (j < kc) || (j == KC && with_ww);
  if (mine) {
    DScalar s{};
#pragma unroll
    for (int w2 = 0; w2 < kWarps; ++w2) s = add(s, red[j][w2]);
    const int column = j == KC ? k : c0 + j;
    partial[static_cast<index_t>(column) * nb + bx] = s;
  }

  if (!last_to_finish(counters + chunk, static_cast<unsigned>(nb))) return;
  // Warp c adds column c0 + c of the chunk; a warp also adds w.w (chunk 0).
  for (int c = warp; c <= KC; c += kWarps) {
    if (!(c < kc || (c == KC && with_ww))) continue;
    const int column = c == KC ? k : c0 + c;
    const DScalar s = warp_sum_of(partial + static_cast<index_t>(column) * nb, nb);
    if (lane == 0) out[column] = s;
  }
}

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
    int j = 0;
    for (; j + 4 <= k; j += 4) {
      DScalar vv[4][W];
#pragma unroll
      for (int u = 0; u < 4; ++u) load_ro<W>(V + (j + u) * ldv + i * W, vv[u]);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const DScalar c = __ldg(coef + j + u);
#pragma unroll
        for (int e = 0; e < W; ++e) wv[e] = sub_mul(c, vv[u][e], wv[e]);
      }
    }
    for (; j < k; ++j) {
      DScalar vv[W];
      load_ro<W>(V + j * ldv + i * W, vv);
      const DScalar c = __ldg(coef + j);
#pragma unroll
      for (int e = 0; e < W; ++e) wv[e] = sub_mul(c, vv[e], wv[e]);
    }
    store<W>(w + i * W, wv);
#pragma unroll
    for (int e = 0; e < W; ++e) ss = norm_add(wv[e], ss);
  }
  if (W > 1 && blockIdx.x == 0 && threadIdx.x == 0) {
    for (index_t i = nw * W; i < n; ++i) {
      DScalar wi = w[i];
      if (win.kl > 0) wi = sub_mul(g0, VL[i], wi);
      if (win.kl > 1) wi = sub_mul(g1, VL[ldv + i], wi);
      for (int j = 0; j < k; ++j) wi = sub_mul(coef[j], V[j * ldv + i], wi);
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

// --- vector updates ---------------------------------------------------------------------------------------

// Each thread: one row, kRotateOutputs consecutive output columns. threadIdx.x picks the row within
// the block, threadIdx.y the column group: every group of a row is in the same block, so that one
// __syncthreads between the reads of the row and the writes makes the update in place safe.
__global__ void rotate_kernel(index_t n, int k, int m, DScalar *V, index_t ldv, const DScalar *__restrict__ Qt, int ldqt)
{
  const index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int c0 = static_cast<int>(threadIdx.y) * kRotateOutputs;
  DScalar acc[kRotateOutputs];
#pragma unroll
  for (int t = 0; t < kRotateOutputs; ++t) acc[t] = DScalar{};
  if (i < n) {
    const DScalar *v = V + i;
    const DScalar *q = Qt + c0;
    // Four loads of V in flight before their products (no __ldg: V is written below, after the barrier).
    const auto add_row = [&](DScalar x, const DScalar *qp) { rotate_row(x, qp, acc); };
    int p = 0;
    for (; p + 4 <= k; p += 4, v += 4 * ldv, q += 4 * ldqt) {
      const DScalar x0 = v[0], x1 = v[ldv], x2 = v[2 * ldv], x3 = v[3 * ldv];
      add_row(x0, q);
      add_row(x1, q + ldqt);
      add_row(x2, q + 2 * ldqt);
      add_row(x3, q + 3 * ldqt);
    }
    for (; p < k; ++p, v += ldv, q += ldqt) add_row(*v, q);
  }
  __syncthreads();
  if (i < n)
#pragma unroll
    for (int t = 0; t < kRotateOutputs; ++t)
      if (c0 + t < m) V[i + static_cast<index_t>(c0 + t) * ldv] = acc[t];
}

template <int W>
__global__ void __launch_bounds__(kThreads) combine_kernel(index_t n, int k, const DScalar *__restrict__ V, index_t ldv,
                                                           const DScalar *__restrict__ coef, DScalar *__restrict__ y)
{
  const index_t nw = n / W;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  const index_t first = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  for (index_t i = first; i < nw; i += stride) {
    DScalar yv[W];
#pragma unroll
    for (int e = 0; e < W; ++e) yv[e] = DScalar{};
    int j = 0;
    for (; j + 4 <= k; j += 4) {
      DScalar vv[4][W];
#pragma unroll
      for (int u = 0; u < 4; ++u) load_ro<W>(V + (j + u) * ldv + i * W, vv[u]);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const DScalar c = __ldg(coef + j + u);
#pragma unroll
        for (int e = 0; e < W; ++e) yv[e] = mul_add(c, vv[u][e], yv[e]);
      }
    }
    for (; j < k; ++j) {
      DScalar vv[W];
      load_ro<W>(V + j * ldv + i * W, vv);
      const DScalar c = __ldg(coef + j);
#pragma unroll
      for (int e = 0; e < W; ++e) yv[e] = mul_add(c, vv[e], yv[e]);
    }
    store<W>(y + i * W, yv);
  }
  if (W > 1 && first == 0) {
    for (index_t i = nw * W; i < n; ++i) {
      DScalar yi{};
      for (int j = 0; j < k; ++j) yi = mul_add(coef[j], V[j * ldv + i], yi);
      y[i] = yi;
    }
  }
}

// Every thread derives the same step scalars from the same device values (no second launch, no
// host trip); thread 0 of block 0 writes the record. Mirrors Backend::expand (core/backend.cpp) operation
// for operation, so that both take the same decisions on the same numbers.
// alpha is v_j^H A v_j of a Hermitian A: real, so the coefficients' real parts make it (their imaginary
// parts are rounding), as Backend::expand drops them.
__global__ void __launch_bounds__(kThreads) finish_step_kernel(index_t n, int j, int k, int kl, const DScalar *__restrict__ g,
                                                               const DScalar *__restrict__ h1,
                                                               const DScalar *__restrict__ h2,
                                                               const double *__restrict__ after, double eta2,
                                                               const double *__restrict__ prev, double *__restrict__ rec,
                                                               DScalar *__restrict__ w)
{
  const double before = real_of(g[kl]);
  const double mid = real_of(h1[k]);
  const double after1 = after[1];
  const bool second = after1 < eta2 * mid;
  double alpha = real_of(g[kl - 1]) + (j < k ? real_of(h1[j]) : 0.0);
  if (second && j < k) alpha += real_of(h2[j]);
  const double last = second ? after[2] : after1;
  const bool lost = second && last < eta2 * after1;
  const double anorm = fmax(fmax(prev[3], sqrt(before)), fabs(alpha));
  double beta = sqrt(last);
  const bool breakdown = lost || beta <= 16 * DBL_EPSILON * anorm * sqrt(static_cast<double>(j + 2));
  if (breakdown) beta = 0;
  const double factor = breakdown ? 0.0 : 1.0 / beta;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) w[i] = scaled(factor, w[i]);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    rec[0] = alpha;
    rec[1] = beta;
    rec[2] = before;
    rec[3] = anorm;
    rec[4] = (breakdown ? 1.0 : 0.0) + (second ? 2.0 : 0.0);
  }
}

__global__ void __launch_bounds__(kThreads) longest_row_kernel(index_t rows, const int *__restrict__ rowptr, int *longest)
{
  int m = 0;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t r = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += stride)
    m = max(m, rowptr[r + 1] - rowptr[r]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) m = max(m, __shfl_down_sync(0xffffffffu, m, offset));
  if ((threadIdx.x & 31) == 0 && m > 0) atomicMax(longest, m);
}

__global__ void __launch_bounds__(kThreads) scale_kernel(index_t n, double alpha, DScalar *__restrict__ v)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) v[i] = scaled(alpha, v[i]);
}

// Real entries, imaginary parts 0 in a complex build: the host backend's start vector.
__global__ void __launch_bounds__(kThreads) set_random_kernel(index_t n, std::uint64_t seed, index_t offset,
                                                              DScalar *__restrict__ v)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
    v[i] = from_real(random_entry(seed, offset + i));
}

void check_matrix(const char *who, index_t n, int k, index_t ldv)
{
  if (n < 0 || k < 0 || (k > 0 && ldv < n))
    throw Error(std::string(who) + ": need n >= 0, k >= 0 and ldv >= n (n = " + std::to_string(n) +
                ", k = " + std::to_string(k) + ", ldv = " + std::to_string(ldv) + ")");
}

/// 16-byte loads are possible when every column start read and w are 16-byte aligned: the k columns
/// and a window's (which may lie after them, partial reorthogonalization, even when k = 0).
/// Complex: W = 1 always (kWide), a complex entry being one 16-byte load itself.
bool vector_ok(int k, const DScalar *V, index_t ldv, const DScalar *w, int window_columns = 0)
{
  return !kComplexScalars && aligned16(w) && ((k == 0 && window_columns == 0) || (aligned16(V) && ldv % 2 == 0));
}

/// The reduction workspace starts with one counter (unsigned) per possible column chunk, whatever k:
/// a later call with more columns must find its counters still zero, so the partials never move over
/// them. 256 KB.
constexpr int kMaxDotChunks = 65535; // column chunks of one multi_dot: one finish counter each
constexpr std::size_t kCounterDoubles = (static_cast<std::size_t>(kMaxDotChunks) + 1) * sizeof(unsigned) / sizeof(double);

void check_window(const char *who, int k, int lo, int kl)
{
  if (kl < 1 || kl > 2 || lo < 0 || (lo < k && lo + kl > k))
    throw Error(std::string(who) + ": the window must be 1 or 2 columns, among the k or after them (lo = " +
                std::to_string(lo) + ", kl = " + std::to_string(kl) + ", k = " + std::to_string(k) + ")");
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

// --- launchers --------------------------------------------------------------------------------------------

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


void longest_row(index_t rows, const int *rowptr, int *longest, cudaStream_t stream)
{
  if (rows < 0) throw Error("longest_row: negative size");
  CUDALANCZOS_CHECK(cudaMemsetAsync(longest, 0, sizeof(int), stream));
  if (rows == 0) return;
  longest_row_kernel<<<grid_for(rows), kThreads, 0, stream>>>(rows, rowptr, longest);
  CUDALANCZOS_CHECK_LAUNCH();
}

int pattern_lanes(index_t rows, index_t entries, index_t longest)
{
  if (rows <= 0 || entries <= 0) return 1;
  const double mean = static_cast<double>(entries) / static_cast<double>(rows);
  const bool regular = static_cast<double>(longest) <= 4 * mean;
  const double per_lane = regular ? 4.0 : 2.0;
  const int e = static_cast<int>(std::lround(std::log2(std::max(1.0, mean / per_lane))));
  return 1 << std::clamp(e, 0, 5);
}

namespace {
void check_lanes(const char *who, int lanes)
{
  if (lanes != 0 && (lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) != 0))
    throw Error(std::string(who) + ": lanes must be 0 (the default) or a power of two up to 32, not " + std::to_string(lanes));
}

/// The pattern product's diagonal decides the row policy once, outside the kernels.
template <class F>
void with_pattern_row(Scalar c, Scalar d0, const Scalar *dvec, F &&f)
{
  if (dvec) f(PatternRow<true>{dev_value(c), dev_value(d0), dev(dvec)});
  else f(PatternRow<false>{dev_value(c), dev_value(d0), dev(dvec)});
}

/// The block products' common part: X interleaved into `interleaved` (cols * b Scalars), then the
/// row groups over it.
template <class Row>
void block_product(const char *who, index_t rows, index_t cols, int b, int lanes, const int *rowptr, const int *colind,
                   Row op, const DScalar *X, index_t ldx, DScalar *Y, index_t ldy, DScalar *interleaved, cudaStream_t stream)
{
  if (b < 0 || ldx < std::max<index_t>(cols, 1) || ldy < std::max<index_t>(rows, 1))
    throw Error(std::string(who) + ": need b >= 0, ldx >= cols and ldy >= rows (b = " + std::to_string(b) +
                ", ldx = " + std::to_string(ldx) + ", ldy = " + std::to_string(ldy) + ")");
  if (rows == 0 || b == 0) return;
  if (cols > 0) {
    interleave_kernel<<<grid_for(cols * b), kThreads, 0, stream>>>(cols, b, X, ldx, interleaved);
    CUDALANCZOS_CHECK_LAUNCH();
  }
  launch_column_chunks(lanes, b, rows, rowptr, colind, op, interleaved, b, Y, ldy, stream);
}
} // namespace

void csr_spmv(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values, const Scalar *x,
              Scalar *y, cudaStream_t stream, int lanes)
{
  if (rows < 0 || nnz < 0) throw Error("csr_spmv: negative size");
  check_lanes("csr_spmv", lanes);
  if (rows == 0) return;
  launch_row_groups<1>(lanes ? lanes : lanes_for(rows, nnz), rows, rowptr, colind, CsrRow{dev(values)}, dev(x), 1, dev(y),
                       rows, stream);
}

void pattern_spmv(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                  const Scalar *dvec, const Scalar *x, Scalar *y, cudaStream_t stream, int lanes)
{
  if (rows < 0 || entries < 0) throw Error("pattern_spmv: negative size");
  check_lanes("pattern_spmv", lanes);
  if (rows == 0) return;
  const int g = lanes ? lanes : lanes_for(rows, entries);
  with_pattern_row(c, d0, dvec, [&](auto op) { launch_row_groups<1>(g, rows, rowptr, colind, op, dev(x), 1, dev(y), rows, stream); });
}

void csr_spmm(index_t rows, index_t cols, index_t nnz, const int *rowptr, const int *colind, const Scalar *values, int b,
              const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *interleaved, cudaStream_t stream, int lanes)
{
  if (rows < 0 || cols < 0 || nnz < 0) throw Error("csr_spmm: negative size");
  check_lanes("csr_spmm", lanes);
  const int g = lanes ? lanes : (rows > 0 ? lanes_for(rows, nnz) : 1);
  block_product("csr_spmm", rows, cols, b, g, rowptr, colind, CsrRow{dev(values)}, dev(X), ldx, dev(Y), ldy, dev(interleaved),
                stream);
}

void pattern_spmm(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                  const Scalar *dvec, int b, const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *interleaved,
                  cudaStream_t stream, int lanes)
{
  if (rows < 0 || entries < 0) throw Error("pattern_spmm: negative size");
  check_lanes("pattern_spmm", lanes);
  const int g = lanes ? lanes : (rows > 0 ? lanes_for(rows, entries) : 1);
  with_pattern_row(c, d0, dvec, [&](auto op) {
    block_product("pattern_spmm", rows, rows, b, g, rowptr, colind, op, dev(X), ldx, dev(Y), ldy, dev(interleaved), stream);
  });
}

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

void finish_lanczos_step(index_t n, int j, int k, int kl, const Scalar *g, const Scalar *h1, const Scalar *h2,
                         const double *after, double eta2, const double *prev, double *rec, Scalar *w,
                         cudaStream_t stream)
{
  if (n < 0 || j < 0 || kl < 1 || kl > 2 || k < 0 || k > j + 1)
    throw Error("finish_lanczos_step: need n >= 0, j >= 0, a window of 1 or 2 and a pass of 0..j + 1 columns (k = " +
                std::to_string(k) + ", j = " + std::to_string(j) + ")");
  // n = 0 still needs the record: one block.
  finish_step_kernel<<<grid_for(std::max<index_t>(n, 1)), kThreads, 0, stream>>>(n, j, k, kl, dev(g), dev(h1), dev(h2),
                                                                               after, eta2, prev, rec, dev(w));
  CUDALANCZOS_CHECK_LAUNCH();
}

void scale(index_t n, double alpha, Scalar *v, cudaStream_t stream)
{
  if (n <= 0) return;
  scale_kernel<<<grid_for(n), kThreads, 0, stream>>>(n, alpha, dev(v));
  CUDALANCZOS_CHECK_LAUNCH();
}

void combine(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *coef, Scalar *y, cudaStream_t stream)
{
  check_matrix("combine", n, k, ldv);
  if (n == 0) return;
  const bool vec = vector_ok(k, dev(V), ldv, dev(y));
  const int blocks = grid_for(n / (vec ? 2 : 1));
  if (vec)
    combine_kernel<kWide><<<blocks, kThreads, 0, stream>>>(n, k, dev(V), ldv, dev(coef), dev(y));
  else
    combine_kernel<1><<<blocks, kThreads, 0, stream>>>(n, k, dev(V), ldv, dev(coef), dev(y));
  CUDALANCZOS_CHECK_LAUNCH();
}

void rotate(index_t n, int k, int m, Scalar *V, index_t ldv, const Scalar *Qt, int ldqt, cudaStream_t stream)
{
  check_matrix("rotate", n, k, ldv);
  if (m < 0 || m > kRotateMaxOutputs || ldqt < m || ldqt % kRotateOutputs != 0 || m > k)
    throw Error("rotate: need 0 <= m <= min(k, " + std::to_string(kRotateMaxOutputs) + ") and ldqt >= m a multiple of " +
                std::to_string(kRotateOutputs) + " (k = " + std::to_string(k) + ", m = " + std::to_string(m) +
                ", ldqt = " + std::to_string(ldqt) + ")");
  if (n == 0 || m == 0) return;
  // About 256 threads a block: more rows where there are few column groups.
  const int groups = (m + kRotateOutputs - 1) / kRotateOutputs;
  const int rows = 32 * std::max(1, 8 / groups);
  const dim3 block(static_cast<unsigned>(rows), static_cast<unsigned>(groups));
  const index_t blocks = (n + rows - 1) / rows;
  rotate_kernel<<<static_cast<unsigned>(blocks), block, 0, stream>>>(n, k, m, dev(V), ldv, dev(Qt), ldqt);
  CUDALANCZOS_CHECK_LAUNCH();
}

void set_random(index_t n, std::uint64_t seed, index_t row_offset, Scalar *v, cudaStream_t stream)
{
  if (n <= 0) return;
  set_random_kernel<<<grid_for(n), kThreads, 0, stream>>>(n, seed, row_offset, dev(v));
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace cudalanczos::cuda::kernels
