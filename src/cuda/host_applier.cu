#include "cuda/host_applier.hpp"

#include "cuda/device_buffer.hpp"

namespace cudalanczos::cuda {

struct HostApplier::Impl {
  std::shared_ptr<const DeviceOperator> op;
  Stream stream;
  DeviceBuffer<Scalar> x, y; // allocated once: MatMult is called many times
};

HostApplier::HostApplier(std::shared_ptr<const DeviceOperator> op) : impl_(std::make_unique<Impl>())
{
  if (!op) throw Error("HostApplier: no device operator");
  ScopedDevice on(op->device());
  impl_->op = std::move(op);
  impl_->stream = make_stream();
  impl_->x = DeviceBuffer<Scalar>(static_cast<std::size_t>(impl_->op->cols()), "MatShell input vector");
  impl_->y = DeviceBuffer<Scalar>(static_cast<std::size_t>(impl_->op->rows()), "MatShell output vector");
}

HostApplier::~HostApplier() = default;

const std::shared_ptr<const DeviceOperator> &HostApplier::op() const { return impl_->op; }

void HostApplier::apply(const Scalar *x, Scalar *y)
{
  ScopedDevice on(impl_->op->device());
  cudaStream_t s = impl_->stream.get();
  CUDALANCZOS_CHECK(cudaMemcpyAsync(impl_->x.data(), x, impl_->x.bytes(), cudaMemcpyHostToDevice, s));
  impl_->op->apply(impl_->x.data(), impl_->y.data(), s);
  CUDALANCZOS_CHECK(cudaMemcpyAsync(y, impl_->y.data(), impl_->y.bytes(), cudaMemcpyDeviceToHost, s));
  CUDALANCZOS_CHECK(cudaStreamSynchronize(s));
}

} // namespace cudalanczos::cuda
