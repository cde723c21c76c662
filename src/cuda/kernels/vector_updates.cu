// Vector updates without a reduction (kernels.cuh: scale, combine, set_random).
#include "cuda/kernels.cuh"

#include "core/random.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernels/combine_columns.cuh"
#include "cuda/kernels/launch.cuh"

#include <string>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

__global__ void __launch_bounds__(kThreads) scale_kernel(index_t n, double alpha, DScalar *__restrict__ v)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) v[i] = scaled(alpha, v[i]);
}

// y = V coef, each entry of y summed over the columns in order (combine_columns) and stored once.
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
    combine_columns<W>(k, V, ldv, coef, i, yv, AddColumn{});
    store<W>(y + i * W, yv);
  }
  if (W > 1 && first == 0) // the odd last entry
    for (index_t i = nw * W; i < n; ++i) y[i] = combine_columns_at(k, V, ldv, coef, i, DScalar{}, AddColumn{});
}

// Real entries, imaginary parts 0 in a complex build: the host backend's start vector.
__global__ void __launch_bounds__(kThreads) set_random_kernel(index_t n, std::uint64_t seed, index_t offset,
                                                              DScalar *__restrict__ v)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride)
    v[i] = from_real(random_entry(seed, offset + i));
}

// The b x b matrix of transform_columns, passed by value (at most 1 KiB of kernel parameters).
struct SmallMatrix {
  DScalar m[kTransformColumns * kTransformColumns];
};

// Row i: x = V[i, 0:B], V[i, q] = sum_l x[l] M[l, q], l in order (the host reference's order).
template <int B>
__global__ void __launch_bounds__(kThreads) transform_columns_kernel(index_t n, DScalar *__restrict__ V, index_t ldv, SmallMatrix M)
{
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) {
    DScalar x[B];
#pragma unroll
    for (int l = 0; l < B; ++l) x[l] = V[i + l * ldv];
#pragma unroll
    for (int q = 0; q < B; ++q) {
      DScalar y{};
#pragma unroll
      for (int l = 0; l < B; ++l) y = mul_add(x[l], M.m[l + q * B], y);
      V[i + q * ldv] = y;
    }
  }
}

template <int B>
void launch_transform(index_t n, DScalar *V, index_t ldv, const SmallMatrix &M, cudaStream_t stream)
{
  transform_columns_kernel<B><<<grid_for(n), kThreads, 0, stream>>>(n, V, ldv, M);
}

} // namespace

void transform_columns(index_t n, int b, Scalar *V, index_t ldv, const Scalar *M, int ldm, cudaStream_t stream)
{
  if (b < 1 || b > kTransformColumns || ldm < b)
    throw Error("transform_columns: need 1 <= b <= " + std::to_string(kTransformColumns) + " and ldm >= b (b = " + std::to_string(b) +
                ", ldm = " + std::to_string(ldm) + ")");
  check_matrix("transform_columns", n, b, ldv);
  if (n == 0) return;
  SmallMatrix m{};
  for (int q = 0; q < b; ++q)
    for (int l = 0; l < b; ++l) m.m[l + q * b] = dev_value(M[l + static_cast<std::size_t>(q) * ldm]);
  DScalar *const v = dev(V);
  switch (b) {
  case 1: launch_transform<1>(n, v, ldv, m, stream); break;
  case 2: launch_transform<2>(n, v, ldv, m, stream); break;
  case 3: launch_transform<3>(n, v, ldv, m, stream); break;
  case 4: launch_transform<4>(n, v, ldv, m, stream); break;
  case 5: launch_transform<5>(n, v, ldv, m, stream); break;
  case 6: launch_transform<6>(n, v, ldv, m, stream); break;
  case 7: launch_transform<7>(n, v, ldv, m, stream); break;
  default: launch_transform<8>(n, v, ldv, m, stream); break;
  }
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

void set_random(index_t n, std::uint64_t seed, index_t row_offset, Scalar *v, cudaStream_t stream)
{
  if (n <= 0) return;
  set_random_kernel<<<grid_for(n), kThreads, 0, stream>>>(n, seed, row_offset, dev(v));
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace cudalanczos::cuda::kernels
