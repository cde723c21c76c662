// The end of a Lanczos step on the device (kernels.cuh: finish_lanczos_step): alpha, beta and the
// breakdown test from the reductions' results, w scaled, the step record written, with no host trip.
#include "cuda/kernels.cuh"

#include "cuda/cuda_check.hpp"
#include "cuda/kernels/launch.cuh"

#include <algorithm>
#include <string>

namespace cudalanczos::cuda::kernels {
namespace {
using namespace detail;
using namespace scalar_ops;

// Every thread derives the same step scalars from the same device values (no second launch, no
// host trip); thread 0 of block 0 writes the record. Mirrors Backend::expand (core/backend.cpp) operation
// for operation, so that both take the same decisions on the same numbers.
// alpha is v_j^H A v_j of a Hermitian A: real, so the coefficients' real parts make it (their imaginary
// parts are rounding), as Backend::expand drops them.
__global__ void __launch_bounds__(kThreads) finish_step_kernel(index_t n, int j, int k, int kl, const DScalar *__restrict__ g,
                                                               const DScalar *__restrict__ h1,
                                                               const DScalar *__restrict__ h2,
                                                               const double *__restrict__ after, double eta2,
                                                               const DeviceStepRecord *__restrict__ prev,
                                                               DeviceStepRecord *__restrict__ rec, DScalar *__restrict__ w)
{
  const double before = real_of(g[kl]);
  const double mid = real_of(h1[k]);
  const double after1 = after[1];
  const bool second = step_rule::lost_too_much(after1, mid, eta2);
  double alpha = real_of(g[kl - 1]) + (j < k ? real_of(h1[j]) : 0.0);
  if (second && j < k) alpha += real_of(h2[j]);
  const double last = second ? after[2] : after1;
  const bool lost = second && step_rule::lost_too_much(last, after1, eta2);
  const double anorm = fmax(fmax(prev->anorm, sqrt(before)), fabs(alpha));
  double beta = sqrt(last);
  const bool breakdown = step_rule::is_breakdown(lost, beta, anorm, j);
  if (breakdown) beta = 0;
  const double factor = breakdown ? 0.0 : 1.0 / beta;
  const index_t stride = static_cast<index_t>(gridDim.x) * kThreads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; i < n; i += stride) w[i] = scaled(factor, w[i]);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *rec = DeviceStepRecord{alpha, beta, before, anorm,
                            static_cast<double>((breakdown ? DeviceStepRecord::kBreakdown : 0) | (second ? DeviceStepRecord::kSecondPass : 0))};
}

} // namespace

void finish_lanczos_step(index_t n, int j, int k, int kl, const Scalar *g, const Scalar *h1, const Scalar *h2,
                         const double *after, double eta2, const DeviceStepRecord *prev, DeviceStepRecord *rec, Scalar *w,
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

} // namespace cudalanczos::cuda::kernels
