// The projected eigenproblem by cuSOLVER's syevd (projected_eigen.hpp).
#include "cuda/projected_eigen.hpp"

#include "cuda/cuda_check.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace cudalanczos::cuda {

ProjectedEigen::ProjectedEigen(cudaStream_t stream) : stream_(stream)
{
  cusolverDnHandle_t h{};
  CUDALANCZOS_CHECK(cusolverDnCreate(&h));
  handle_ = CusolverHandle(h);
  CUDALANCZOS_CHECK(cusolverDnSetStream(handle_.get(), stream_));
  info_      = DeviceBuffer<int>(1, "syevd info");
  info_host_ = PinnedBuffer<int>(1, "syevd info (host)");
}

void ProjectedEigen::solve(int n, const double *S, int lds, double *w, double *Z, int ldz)
{
  if (n < 1 || lds < n || ldz < n)
    throw Error("projected_eigen: order " + std::to_string(n) + " needs lds (" + std::to_string(lds) + ") and ldz (" +
                std::to_string(ldz) + ") >= it");
  const std::size_t nn = static_cast<std::size_t>(n) * n;
  const auto wait = [&] { CUDALANCZOS_CHECK(cudaStreamSynchronize(stream_)); };
  grow(stage_, nn + n, "projected matrix staging", wait);
  grow(a_, nn, "projected matrix", wait);
  grow(w_, static_cast<std::size_t>(n), "projected eigenvalues", wait);
  for (int j = 0; j < n; ++j) std::memcpy(stage_.data() + static_cast<std::size_t>(j) * n, S + static_cast<std::size_t>(j) * lds, n * sizeof(double));
  CUDALANCZOS_CHECK(cudaMemcpyAsync(a_.data(), stage_.data(), nn * sizeof(double), cudaMemcpyHostToDevice, stream_));
  int lwork = 0;
  CUDALANCZOS_CHECK(cusolverDnDsyevd_bufferSize(handle_.get(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a_.data(), n,
                                                w_.data(), &lwork));
  grow(work_, static_cast<std::size_t>(std::max(lwork, 1)), "syevd workspace", wait);
  CUDALANCZOS_CHECK(cusolverDnDsyevd(handle_.get(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a_.data(), n, w_.data(),
                                     work_.data(), lwork, info_.data()));
  CUDALANCZOS_CHECK(cudaMemcpyAsync(stage_.data(), a_.data(), nn * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  CUDALANCZOS_CHECK(cudaMemcpyAsync(stage_.data() + nn, w_.data(), n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  CUDALANCZOS_CHECK(cudaMemcpyAsync(info_host_.data(), info_.data(), sizeof(int), cudaMemcpyDeviceToHost, stream_));
  wait();
  // info > 0: the divide and conquer did not converge, or an entry was not finite
  if (*info_host_.data() != 0)
    throw Error("projected_eigen: cuSOLVER syevd returned info " + std::to_string(*info_host_.data()) + " for order " + std::to_string(n));
  std::memcpy(w, stage_.data() + nn, n * sizeof(double));
  for (int j = 0; j < n; ++j) std::memcpy(Z + static_cast<std::size_t>(j) * ldz, stage_.data() + static_cast<std::size_t>(j) * n, n * sizeof(double));
}

} // namespace cudalanczos::cuda
