// The benchmarks' clocks: medians of CUDA-event timings after warm-up, and of host wall times
// (bench_cudalanczos, bench_step). Header-only; the CUDA runtime and the project's Event wrapper.
#pragma once

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace cudalanczos::bench {

/// The middle of v (the upper one of the two middles for an even count); 0 for none.
inline double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// Median milliseconds of `launch` on `stream`, each repetition timed by its own pair of events.
inline double gpu_median_ms(const std::function<void()> &launch, cudaStream_t stream, int reps = 50, int warmup = 3)
{
  for (int i = 0; i < warmup; ++i) launch();
  CUDALANCZOS_CHECK(cudaStreamSynchronize(stream));
  cuda::Event start = cuda::make_event(true), stop = cuda::make_event(true);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    CUDALANCZOS_CHECK(cudaEventRecord(start.get(), stream));
    launch();
    CUDALANCZOS_CHECK(cudaEventRecord(stop.get(), stream));
    CUDALANCZOS_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDALANCZOS_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    t.push_back(ms);
  }
  return median(t);
}

/// Seconds from `start` to now on the host's steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Median milliseconds of f's wall time on the host.
inline double host_median_ms(const std::function<void()> &f, int reps)
{
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  return median(t);
}

} // namespace cudalanczos::bench
