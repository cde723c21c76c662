// Launch geometry (launch.cuh): the device's limits, read once per device, and the grids built on them.
#include "cuda/kernels/launch.cuh"

#include "cuda/cuda_check.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

namespace cudalanczos::cuda::kernels::detail {

Limits current_limits()
{
  static std::mutex mutex;
  static std::map<int, Limits> cache;
  int device = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it == cache.end()) {
    Limits l;
    CUDALANCZOS_CHECK(cudaDeviceGetAttribute(&l.sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDALANCZOS_CHECK(cudaDeviceGetAttribute(&l.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
    it = cache.emplace(device, l).first;
  }
  return it->second;
}

int full_wave_blocks()
{
  const Limits l = current_limits();
  return std::max(1, l.sm_count * (l.max_threads_per_sm / kThreads));
}

int grid_for(index_t items, int cap)
{
  const index_t needed = (items + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<index_t>(1, std::min<index_t>({needed, full_wave_blocks(), cap})));
}

void check_matrix(const char *who, index_t n, int k, index_t ldv)
{
  if (n < 0 || k < 0 || (k > 0 && ldv < n))
    throw Error(std::string(who) + ": need n >= 0, k >= 0 and ldv >= n (n = " + std::to_string(n) +
                ", k = " + std::to_string(k) + ", ldv = " + std::to_string(ldv) + ")");
}

bool vector_ok(int k, const scalar_ops::DScalar *V, index_t ldv, const scalar_ops::DScalar *w, int window_columns)
{
  return !kComplexScalars && aligned16(w) && ((k == 0 && window_columns == 0) || (aligned16(V) && ldv % 2 == 0));
}

} // namespace cudalanczos::cuda::kernels::detail
