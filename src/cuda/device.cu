// Device queries and the two allocation entry points (device and pinned memory).
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"

#include <cstdio>
#include <string>

namespace cudalanczos::cuda {

const char *to_string(KernelFlavor f)
{
  switch (f) {
  case KernelFlavor::Default: return "default";
  case KernelFlavor::Custom: return "custom";
  case KernelFlavor::Vendor: return "vendor";
  }
  return "unknown";
}

int device_count()
{
  // No driver, no GPU, or a driver older than the runtime: all mean "no CUDA here", never an error.
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

void initialize_context(int device)
{
  CUDALANCZOS_CHECK(cudaSetDevice(device));
  CUDALANCZOS_CHECK(cudaFree(nullptr)); // the documented way to create the primary context now
}

std::string device_description(int device)
{
  cudaDeviceProp p{};
  if (device < 0) CUDALANCZOS_CHECK(cudaGetDevice(&device));
  CUDALANCZOS_CHECK(cudaGetDeviceProperties(&p, device));
  char text[384];
  std::snprintf(text, sizeof text, "%s (sm_%d%d, %.1f GiB)", p.name, p.major, p.minor,
                static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

void device_memory(int device, std::size_t *free_bytes, std::size_t *total_bytes)
{
  ScopedDevice guard(device);
  std::size_t f = 0, t = 0;
  CUDALANCZOS_CHECK(cudaMemGetInfo(&f, &t));
  if (free_bytes) *free_bytes = f;
  if (total_bytes) *total_bytes = t;
}

namespace {

[[noreturn]] void throw_allocation_failure(cudaError_t status, std::size_t bytes, const char *what, bool on_device,
                                           const char *call, const char *file, int line)
{
  (void)cudaGetLastError();
  std::string message = detail::status_message(status);
  if (status == cudaErrorMemoryAllocation && !on_device) {
    message += ": " + std::string(what) + " requested " + std::to_string(bytes) + " bytes of page-locked host memory";
  } else if (status == cudaErrorMemoryAllocation) {
    std::size_t free_bytes = 0, total_bytes = 0;
    int device = -1;
    (void)cudaGetDevice(&device);
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
    message += ": " + std::string(what) + " requested " + std::to_string(bytes) + " bytes; device " +
               std::to_string(device) + " has " + std::to_string(free_bytes) + " bytes free of " +
               std::to_string(total_bytes);
  }
  throw Error(detail::format_failure(message, call, file, line));
}

} // namespace

void *device_allocate(std::size_t bytes, const char *what)
{
  void *p = nullptr;
  const cudaError_t s = cudaMalloc(&p, bytes);
  if (s != cudaSuccess) throw_allocation_failure(s, bytes, what, true, "cudaMalloc(&p, bytes)", __FILE__, __LINE__);
  return p;
}

void *pinned_allocate(std::size_t bytes, const char *what)
{
  void *p = nullptr;
  const cudaError_t s = cudaMallocHost(&p, bytes);
  if (s != cudaSuccess) throw_allocation_failure(s, bytes, what, false, "cudaMallocHost(&p, bytes)", __FILE__, __LINE__);
  return p;
}

} // namespace cudalanczos::cuda
