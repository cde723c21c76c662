// Sparse matrix-vector products (kernels.cuh: csr_spmv, pattern_spmv) and the row-length rules that
// pick their lanes per row (longest_row, pattern_lanes, csr_block_lanes).
#include "cuda/kernels.cuh"

#include "cuda/kernels/sparse_row_groups.cuh"

#include <algorithm>
#include <cmath>

namespace cudalanczos::cuda::kernels {
namespace {

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

// The power of two nearest `mean / per_lane` lanes a row, 1 to 32 (a warp): the shared shape of the
// lane rules below, which differ only in how many entries they give a lane.
int lanes_for_entries(double mean, double per_lane)
{
  const int e = static_cast<int>(std::lround(std::log2(std::max(1.0, mean / per_lane))));
  return 1 << std::clamp(e, 0, 5);
}

} // namespace

void csr_spmv(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values, const Scalar *x,
              Scalar *y, cudaStream_t stream, int lanes)
{
  if (rows < 0 || nnz < 0) throw Error("csr_spmv: negative size");
  check_lanes("csr_spmv", lanes);
  if (rows == 0) return;
  launch_row_groups<1>(lanes ? lanes : lanes_for(rows, nnz), rows, rowptr, colind, CsrRow{dev(values)}, dev(x), 1,
                       ColumnsOut{dev(y), rows}, stream);
}

void pattern_spmv(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                  const Scalar *dvec, const Scalar *x, Scalar *y, cudaStream_t stream, int lanes)
{
  if (rows < 0 || entries < 0) throw Error("pattern_spmv: negative size");
  check_lanes("pattern_spmv", lanes);
  if (rows == 0) return;
  const int g = lanes ? lanes : lanes_for(rows, entries);
  with_pattern_row(c, d0, dvec, [&](auto op) { launch_row_groups<1>(g, rows, rowptr, colind, op, dev(x), 1, ColumnsOut{dev(y), rows}, stream); });
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
  return lanes_for_entries(mean, regular ? 8.0 : 2.0);
}

int csr_block_lanes(index_t rows, index_t nnz)
{
  if (rows <= 0 || nnz <= 0) return 1;
  return lanes_for_entries(static_cast<double>(nnz) / static_cast<double>(rows), 2.0);
}

} // namespace cudalanczos::cuda::kernels
