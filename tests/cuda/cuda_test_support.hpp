// Shared pieces of the CUDA tests: the skip-without-GPU fixture, device arrays, random inputs.
#pragma once

#include "core/random.hpp"
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/upload.hpp"
#include "test_matrices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

namespace cudalanczos::cuda {
/// Test names and parameter printouts say "custom" / "vendor" rather than "4-byte object <01-00 00-00>".
inline void PrintTo(KernelFlavor f, std::ostream *os) { *os << to_string(f); }
} // namespace cudalanczos::cuda

namespace cudalanczos::cuda::test {

/// The staged upload's pinned chunks live for the process (the plugin frees them at PetscFinalize):
/// freed here when the tests end, so that compute-sanitizer's leak check sees every allocation returned.
class ReleaseProcessState : public ::testing::Environment {
public:
  void TearDown() override { release_process_state(); }
};
inline ::testing::Environment *const release_process_state_at_exit = ::testing::AddGlobalTestEnvironment(new ReleaseProcessState);

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();
/// Units of eps per term in the kernel tests' bounds: a real fused multiply-add rounds once per term;
/// a complex product-and-add rounds up to twice per part, and |re| + |im| <= sqrt(2) |z|.
constexpr double ulps = kComplexScalars ? 4 : 2;

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

/// n pseudo-random Scalars, parts in [-1, 1) (genuinely complex in a complex build); a different seed
/// for every input of every case.
inline std::vector<Scalar> random_vector(std::size_t n, std::uint64_t seed)
{
  std::vector<Scalar> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = random_scalar(seed, static_cast<std::int64_t>(i));
  return v;
}

/// n pseudo-random reals in [-1, 1) (the real parts of random_vector).
inline std::vector<double> random_reals(std::size_t n, std::uint64_t seed)
{
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = random_entry(seed, static_cast<std::int64_t>(i));
  return v;
}

/// Whether either part is NaN.
inline bool is_nan(double x) { return std::isnan(x); }
inline bool is_nan(const std::complex<double> &z) { return std::isnan(z.real()) || std::isnan(z.imag()); }

/// Waits for work queued on the default stream: cudaMemset, and cudaMemcpy from pageable memory, may
/// return before the device is done, and the tests' kernels run on a non-blocking stream that does not
/// wait for the default one.
inline void wait_default_stream() { CUDALANCZOS_CHECK(cudaStreamSynchronize(nullptr)); }

template <class T>
DeviceBuffer<T> upload(const std::vector<T> &h)
{
  DeviceBuffer<T> d(h.size());
  if (!h.empty()) CUDALANCZOS_CHECK(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  wait_default_stream();
  return d;
}

/// Device to host, after everything queued anywhere (the kernels under test run on a non-blocking
/// stream, which a plain cudaMemcpy does not wait for).
template <class T>
std::vector<T> download(const T *d, std::size_t count)
{
  CUDALANCZOS_CHECK(cudaDeviceSynchronize());
  std::vector<T> h(count);
  if (count) CUDALANCZOS_CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/// A host CSR matrix's device copy, and the view of it the on-device operators take.
struct DeviceCsr {
  DeviceBuffer<int> rowptr, colind;
  DeviceBuffer<Scalar> values;
  CsrView view;
};

inline DeviceCsr to_device(const Csr &A)
{
  DeviceCsr d{upload(A.rowptr), upload(A.colind), upload(A.values), {}};
  d.view = {A.rows, A.cols, static_cast<index_t>(A.colind.size()), d.rowptr.data(), d.colind.data(), d.values.data()};
  return d;
}

/// A's CSR arrays on the device with 64-bit indices, as a PETSc configured --with-64-bit-indices holds them.
struct WideDeviceCsr {
  DeviceBuffer<std::int64_t> rowptr, colind;
  DeviceBuffer<Scalar> values;
  WideCsrView view;
};

inline WideDeviceCsr to_device_wide(const Csr &A)
{
  const std::vector<std::int64_t> rowptr(A.rowptr.begin(), A.rowptr.end()), colind(A.colind.begin(), A.colind.end());
  WideDeviceCsr d{upload(rowptr), upload(colind), upload(A.values), {}};
  d.view = {A.rows, A.cols, static_cast<index_t>(A.colind.size()), d.rowptr.data(), d.colind.data(), d.values.data()};
  return d;
}

/// Fills device memory with NaN (all bits set: both parts of a complex), so that an entry a kernel
/// forgot to write fails.
template <class T>
void poison(T *d, std::size_t count)
{
  if (count) CUDALANCZOS_CHECK(cudaMemset(d, 0xff, count * sizeof(T)));
  wait_default_stream();
}

} // namespace cudalanczos::cuda::test
