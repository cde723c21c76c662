// RAII for every device resource the backend holds: device and pinned buffers, streams, events, the
// cuBLAS and cuSPARSE handles and cuSPARSE descriptors. All are move-only; destructors never throw
// (they report through CUDALANCZOS_CHECK_NOTHROW), so an exception unwinding through the backend
// cannot turn into std::terminate.
#pragma once

#include "cuda/cuda_check.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace cudalanczos::cuda {

/// Makes `device` current for a scope and restores the previous one; a no-op when it already is.
class ScopedDevice {
public:
  explicit ScopedDevice(int device)
  {
    CUDALANCZOS_CHECK(cudaGetDevice(&previous_));
    if (device >= 0 && device != previous_) {
      CUDALANCZOS_CHECK(cudaSetDevice(device));
      switched_ = true;
    }
  }
  ~ScopedDevice()
  {
    if (switched_) CUDALANCZOS_CHECK_NOTHROW(cudaSetDevice(previous_));
  }
  ScopedDevice(const ScopedDevice &) = delete;
  ScopedDevice &operator=(const ScopedDevice &) = delete;

private:
  int previous_ = 0;
  bool switched_ = false;
};

/// cudaMalloc that says, when it fails for lack of memory, how much was asked for and how much is free.
void *device_allocate(std::size_t bytes, const char *what);
/// cudaMallocHost with the same message on failure.
void *pinned_allocate(std::size_t bytes, const char *what);

/// A move-only array of `size()` T in device memory (cudaMalloc: 256-byte aligned).
template <class T>
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count, const char *what = "device buffer")
      : ptr_(count ? static_cast<T *>(device_allocate(count * sizeof(T), what)) : nullptr), count_(count)
  {
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept
  {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void reset() noexcept
  {
    if (ptr_) CUDALANCZOS_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T *data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

private:
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// A move-only page-locked host array: the only host memory the device copies to or from per step,
/// so those copies are true DMA and do not go through the driver's staging buffer.
template <class T>
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count, const char *what = "pinned host buffer")
      : ptr_(count ? static_cast<T *>(pinned_allocate(count * sizeof(T), what)) : nullptr), count_(count)
  {
  }
  ~PinnedBuffer() { reset(); }
  PinnedBuffer(PinnedBuffer &&o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedBuffer &operator=(PinnedBuffer &&o) noexcept
  {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;

  void reset() noexcept
  {
    if (ptr_) CUDALANCZOS_CHECK_NOTHROW(cudaFreeHost(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T *data() const { return ptr_; }
  std::size_t size() const { return count_; }

private:
  T *ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// Makes a DeviceBuffer or PinnedBuffer hold at least `count` elements: grow-only, the contents lost
/// when it grows. Work queued earlier may still use the old storage, so `wait_for_users()` (a stream's
/// or the device's synchronization, whichever covers the buffer's users) runs before it is freed; the
/// old one is released before the new one is made, so the peak is the new size.
template <class Buffer, class Wait>
void grow(Buffer &buffer, std::size_t count, const char *what, Wait &&wait_for_users)
{
  if (buffer.size() >= count) return;
  wait_for_users();
  buffer.reset();
  buffer = Buffer(count, what);
}

/// A move-only owner of an opaque library handle `H`, destroyed with `Destroy`.
template <class H, class Destroy>
class UniqueHandle {
public:
  UniqueHandle() = default;
  explicit UniqueHandle(H h) : h_(h) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle &&o) noexcept : h_(std::exchange(o.h_, H{})) {}
  UniqueHandle &operator=(UniqueHandle &&o) noexcept
  {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, H{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle &) = delete;
  UniqueHandle &operator=(const UniqueHandle &) = delete;

  void reset() noexcept
  {
    if (h_) Destroy{}(h_);
    h_ = H{};
  }
  H get() const { return h_; }
  explicit operator bool() const { return h_ != H{}; }

private:
  H h_{};
};

namespace detail {
struct DestroyStream {
  void operator()(cudaStream_t s) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cudaStreamDestroy(s)); }
};
struct DestroyEvent {
  void operator()(cudaEvent_t e) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cudaEventDestroy(e)); }
};
struct DestroyCublas {
  void operator()(cublasHandle_t h) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cublasDestroy(h)); }
};
struct DestroyCusparse {
  void operator()(cusparseHandle_t h) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cusparseDestroy(h)); }
};
struct DestroyCusolver {
  void operator()(cusolverDnHandle_t h) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cusolverDnDestroy(h)); }
};
struct DestroySpMat {
  void operator()(cusparseSpMatDescr_t d) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cusparseDestroySpMat(d)); }
};
struct DestroyDnVec {
  void operator()(cusparseDnVecDescr_t d) const noexcept { CUDALANCZOS_CHECK_NOTHROW(cusparseDestroyDnVec(d)); }
};
} // namespace detail

using Stream = UniqueHandle<cudaStream_t, detail::DestroyStream>;
using Event = UniqueHandle<cudaEvent_t, detail::DestroyEvent>;
using CublasHandle = UniqueHandle<cublasHandle_t, detail::DestroyCublas>;
using CusparseHandle = UniqueHandle<cusparseHandle_t, detail::DestroyCusparse>;
using CusolverHandle = UniqueHandle<cusolverDnHandle_t, detail::DestroyCusolver>;
using CusparseSpMat = UniqueHandle<cusparseSpMatDescr_t, detail::DestroySpMat>;
using CusparseDnVec = UniqueHandle<cusparseDnVecDescr_t, detail::DestroyDnVec>;

/// A non-blocking stream: it does not serialize with the legacy default stream, so work the PETSc
/// layer or the user queues there does not stall the solver (and vice versa).
inline Stream make_stream()
{
  cudaStream_t s{};
  CUDALANCZOS_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(s);
}

/// An event; timing off unless asked, since timing events make cudaEventRecord/Synchronize slower.
inline Event make_event(bool timing = false)
{
  cudaEvent_t e{};
  CUDALANCZOS_CHECK(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(e);
}

inline CublasHandle make_cublas(cudaStream_t stream)
{
  cublasHandle_t h{};
  CUDALANCZOS_CHECK(cublasCreate(&h));
  CublasHandle owned(h);
  CUDALANCZOS_CHECK(cublasSetStream(h, stream));
  return owned;
}

inline CusparseHandle make_cusparse(cudaStream_t stream)
{
  cusparseHandle_t h{};
  CUDALANCZOS_CHECK(cusparseCreate(&h));
  CusparseHandle owned(h);
  CUDALANCZOS_CHECK(cusparseSetStream(h, stream));
  return owned;
}

} // namespace cudalanczos::cuda
