// A thick restart's rotation (kernels.cuh: rotate): V[:, 0:m] = V[:, 0:k] Q in place, one pass over
// the rows.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"

#include <algorithm>
#include <string>

namespace cudalanczos::cuda::kernels {
namespace scalar_ops { // (outside the anonymous namespace: a build uses only its own type's overload)

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
using namespace detail;
using namespace scalar_ops;

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

} // namespace

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

} // namespace cudalanczos::cuda::kernels
