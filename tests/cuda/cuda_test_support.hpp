// Shared pieces of the CUDA tests: the skip-without-GPU fixture, device arrays, random inputs.
#pragma once

#include "core/random.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace cudalanczos::cuda::test {

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

/// Sizes that are not multiples of a warp, a block or a vector width.
inline const std::vector<index_t> &odd_sizes()
{
  static const std::vector<index_t> s{0, 1, 31, 33, 1000, 4097};
  return s;
}

/// Every CUDA test derives from this: without a GPU (CI) the test is reported skipped by name; with
/// one, teardown synchronizes so that a late asynchronous error fails the test that caused it.
class CudaTest : public ::testing::Test {
protected:
  void SetUp() override
  {
    if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
    stream_ = make_stream();
  }
  void TearDown() override
  {
    if (device_count() > 0) {
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
    }
  }
  cudaStream_t stream() const { return stream_.get(); }

private:
  Stream stream_;
};

/// n pseudo-random entries in [-1, 1); a different seed for every input of every case.
inline std::vector<double> random_vector(std::size_t n, std::uint64_t seed)
{
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = random_entry(seed, static_cast<std::int64_t>(i));
  return v;
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T> &h)
{
  DeviceBuffer<T> d(h.size());
  if (!h.empty()) CUDALANCZOS_CHECK(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> download(const T *d, std::size_t count)
{
  std::vector<T> h(count);
  if (count) CUDALANCZOS_CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/// Fills device memory with NaN (all bits set), so that an entry a kernel forgot to write fails.
inline void poison(double *d, std::size_t count)
{
  if (count) CUDALANCZOS_CHECK(cudaMemset(d, 0xff, count * sizeof(double)));
}

struct Csr {
  index_t rows = 0, cols = 0;
  std::vector<int> rowptr{0}, colind;
  std::vector<double> values;
};

/// Rows of random length around `mean` (some empty, every 97th very long), random columns (repeats
/// allowed: they add, as in any CSR product) and values.
inline Csr random_csr(index_t rows, index_t cols, double mean, std::uint64_t seed)
{
  Csr A;
  A.rows = rows;
  A.cols = cols;
  A.rowptr.assign(1, 0);
  std::int64_t counter = 0;
  for (index_t r = 0; r < rows; ++r) {
    int len = static_cast<int>((random_entry(seed, counter++) + 1.0) * mean);
    if (r % 97 == 5) len = static_cast<int>(5 * mean) + 40;
    if (cols == 0) len = 0;
    for (int e = 0; e < len; ++e) {
      const double u = (random_entry(seed + 1, counter++) + 1.0) / 2.0;
      A.colind.push_back(std::min<int>(static_cast<int>(u * cols), static_cast<int>(cols) - 1));
      A.values.push_back(random_entry(seed + 2, counter++));
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

/// The 5-point Laplacian on an m x m grid (m^2 rows).
inline Csr laplacian(index_t m)
{
  Csr A;
  A.rows = A.cols = m * m;
  A.rowptr.assign(1, 0);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < m; ++j) {
      const index_t r = i * m + j;
      const auto add = [&](index_t c, double v) {
        A.colind.push_back(static_cast<int>(c));
        A.values.push_back(v);
      };
      if (i > 0) add(r - m, -1.0);
      if (j > 0) add(r - 1, -1.0);
      add(r, 4.0);
      if (j + 1 < m) add(r + 1, -1.0);
      if (i + 1 < m) add(r + m, -1.0);
      A.rowptr.push_back(static_cast<int>(A.colind.size()));
    }
  return A;
}

} // namespace cudalanczos::cuda::test
