// The 64-bit CSR indices of a PETSc configured --with-64-bit-indices as the 32-bit ones every sparse
// kernel reads (kernels.cuh: narrow_indices): half the index bytes a product moves, and one set of
// kernels for both PETSc builds.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;

__global__ void __launch_bounds__(kThreads) narrow_kernel(index_t n, const std::int64_t *__restrict__ in, int *__restrict__ out)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) out[i] = static_cast<int>(in[i]);
}

} // namespace

void narrow_indices(index_t n, const std::int64_t *in, int *out, cudaStream_t stream)
{
  if (n < 0) throw Error("narrow_indices: negative size");
  if (n == 0) return;
  narrow_kernel<<<grid_for(n), kThreads, 0, stream>>>(n, in, out);
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace cudalanczos::cuda::kernels
