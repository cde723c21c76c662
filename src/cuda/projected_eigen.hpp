// The thick restart's projected eigenproblem on the device: cuSOLVER's divide-and-conquer symmetric
// eigensolver (syevd), for the orders where it beats the driver's own QR on one host core, which then
// holds up the GPU at every restart (docs/tuning.md#cuda-projected-problems-on-the-device).
#pragma once

#include "cuda/device_buffer.hpp"

#include <cuda_runtime_api.h>

namespace cudalanczos::cuda {

/// The smallest order the CUDA backend solves on the device (Backend::projected_eigen); below it the
/// host's QR is as fast as the round trip and cuSOLVER's launches.
inline constexpr int kDeviceProjectedOrder = 256;

/// One solver per backend: its cuSOLVER handle on the backend's stream, and workspaces that grow with
/// the order and are kept.
class ProjectedEigen {
public:
  explicit ProjectedEigen(cudaStream_t stream);
  /// As symmetric_eigen: S (n x n, lds >= n, lower triangle read) gives w ascending and Z (n x n,
  /// ldz >= n) its orthonormal eigenvectors. Waits for the result (the driver needs it on the host).
  void solve(int n, const double *S, int lds, double *w, double *Z, int ldz);
  /// The device memory its workspaces hold (the backend's -eps_view line counts it).
  std::size_t device_bytes() const { return a_.bytes() + w_.bytes() + work_.bytes() + info_.bytes(); }

private:
  cudaStream_t stream_;
  CusolverHandle handle_;
  DeviceBuffer<double> a_, w_, work_;
  DeviceBuffer<int> info_;
  PinnedBuffer<double> stage_; // S in, then w and Z out (n + n^2)
  PinnedBuffer<int> info_host_;
};

} // namespace cudalanczos::cuda
