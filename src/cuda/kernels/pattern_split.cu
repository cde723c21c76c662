// The split of a CSR matrix already on the device into its uniform pattern (kernels.cuh: pattern_survey,
// pattern_offsets, pattern_compact), the device counterpart of csr_scan's host pass: a matrix assembled
// on the device is never copied to the host to be looked at. One thread a row: the split runs once per
// matrix, and its rows are short where the pattern pays.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"

#include <cub/device/device_scan.cuh>

#include <cstddef>


namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

// Bit for bit, as the host split's memcmp: -0.0 and 0.0 differ, and a NaN never matches.
__device__ __forceinline__ bool same_bits(DScalar a, DScalar b)
{
  const auto *x = reinterpret_cast<const unsigned long long *>(&a), *y = reinterpret_cast<const unsigned long long *>(&b);
  bool same = true;
#pragma unroll
  for (std::size_t i = 0; i < sizeof(DScalar) / 8; ++i) same = same && x[i] == y[i];
  return same;
}

// Pass 1: each row's off-diagonal count and diagonal value (0 where it has none), a second diagonal
// entry flagged, and the first off-diagonal entry of the matrix (the value every other must equal).
__global__ void __launch_bounds__(kThreads) survey_kernel(index_t rows, const int *__restrict__ rowptr,
                                                          const int *__restrict__ colind, const DScalar *__restrict__ values,
                                                          int *__restrict__ counts, DScalar *__restrict__ diagonal,
                                                          PatternSurvey *survey)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t r = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += stride) {
    int count = 0, first = kNoEntry;
    bool seen = false;
    DScalar d{};
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j) {
      if (colind[j] != r) {
        first = min(first, j);
        ++count;
      } else {
        if (seen) atomicOr(&survey->flags, kPatternTwoDiagonals);
        seen = true;
        d = values[j];
      }
    }
    counts[r] = count;
    diagonal[r] = d;
    if (first != kNoEntry) atomicMin(&survey->first_offdiagonal, first);
  }
}

// Pass 2: every off-diagonal value against the first, every diagonal value against row 0's.
__global__ void __launch_bounds__(kThreads) check_kernel(index_t rows, const int *__restrict__ rowptr,
                                                         const int *__restrict__ colind, const DScalar *__restrict__ values,
                                                         const DScalar *__restrict__ diagonal, PatternSurvey *survey)
{
  const int first = survey->first_offdiagonal;
  if (first == kNoEntry) return; // diagonal only: no pattern (the caller sees it)
  const DScalar c = values[first], d0 = diagonal[0];
  int flags = 0;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t r = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += stride) {
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j)
      if (colind[j] != r && !same_bits(values[j], c)) flags |= kPatternValuesDiffer;
    if (!same_bits(diagonal[r], d0)) flags |= kPatternDiagonalVaries;
  }
  if (flags) atomicOr(&survey->flags, flags);
}

// Pass 3: each row's off-diagonal columns, in their order, from its offset on.
__global__ void __launch_bounds__(kThreads) compact_kernel(index_t rows, const int *__restrict__ rowptr,
                                                           const int *__restrict__ colind,
                                                           const int *__restrict__ pattern_rowptr,
                                                           int *__restrict__ pattern_colind)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t r = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; r < rows; r += stride) {
    int at = pattern_rowptr[r];
    for (int j = rowptr[r]; j < rowptr[r + 1]; ++j)
      if (colind[j] != r) pattern_colind[at++] = colind[j];
  }
}

__global__ void start_kernel(index_t rows, int *counts, PatternSurvey *survey)
{
  *survey = PatternSurvey{};
  counts[rows] = 0; // the exclusive sum's last entry is then the total
}

} // namespace

void pattern_survey(index_t rows, const int *rowptr, const int *colind, const Scalar *values, int *counts,
                    Scalar *diagonal, PatternSurvey *survey, cudaStream_t stream)
{
  if (rows < 0) throw Error("pattern_survey: negative size");
  start_kernel<<<1, 1, 0, stream>>>(rows, counts, survey);
  CUDALANCZOS_CHECK_LAUNCH();
  if (rows == 0) return;
  survey_kernel<<<grid_for(rows), kThreads, 0, stream>>>(rows, rowptr, colind, dev(values), counts, dev(diagonal), survey);
  CUDALANCZOS_CHECK_LAUNCH();
  check_kernel<<<grid_for(rows), kThreads, 0, stream>>>(rows, rowptr, colind, dev(values), dev(diagonal), survey);
  CUDALANCZOS_CHECK_LAUNCH();
}

std::size_t pattern_offsets_workspace_bytes(index_t rows)
{
  std::size_t bytes = 0;
  CUDALANCZOS_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int *>(nullptr),
                                                  static_cast<int *>(nullptr), static_cast<int>(rows + 1)));
  return bytes;
}

void pattern_offsets(index_t rows, const int *counts, int *pattern_rowptr, void *workspace, std::size_t workspace_bytes,
                     cudaStream_t stream)
{
  if (rows < 0 || rows >= kNoEntry) throw Error("pattern_offsets: rows outside 0 .. 2^31 - 2");
  CUDALANCZOS_CHECK(cub::DeviceScan::ExclusiveSum(workspace, workspace_bytes, counts, pattern_rowptr,
                                                  static_cast<int>(rows + 1), stream));
}

void pattern_compact(index_t rows, const int *rowptr, const int *colind, const int *pattern_rowptr, int *pattern_colind,
                     cudaStream_t stream)
{
  if (rows < 0) throw Error("pattern_compact: negative size");
  if (rows == 0) return;
  compact_kernel<<<grid_for(rows), kThreads, 0, stream>>>(rows, rowptr, colind, pattern_rowptr, pattern_colind);
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace cudalanczos::cuda::kernels
