// y = A x for host arrays through an operator that lives on the device: the MatMult of the CUDA
// MatShell (MatCreateCUDALanczos), for callers outside the solver that hold ordinary host Vecs.
// Plain C++ header, like cuda_backend.hpp.
#pragma once

#include "cuda/cuda_backend.hpp"

#include <memory>

namespace cudalanczos::cuda {

class HostApplier {
public:
  explicit HostApplier(std::shared_ptr<const DeviceOperator> op);
  ~HostApplier();
  HostApplier(const HostApplier &) = delete;
  HostApplier &operator=(const HostApplier &) = delete;

  /// Copies x (op->cols() entries) to the device, applies the operator, copies y (op->rows()) back.
  void apply(const Scalar *x, Scalar *y);
  const std::shared_ptr<const DeviceOperator> &op() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace cudalanczos::cuda
