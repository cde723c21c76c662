// The CUDA backend against the host reference backend (HostBackend), operation by operation, for both
// kernel flavors; the device operators against host products; a whole Lanczos solve on both backends;
// and the error paths (messages that name the call, out-of-memory sizes). In a complex build the data are
// genuinely complex (Hermitian matrices, complex bases and coefficients: test_matrices.hpp), so every
// inner product is checked with its conjugation against the host reference (V^H w).
#include "../core/restart_arrow.hpp"
#include "core/b_inner_product_backend.hpp"
#include "core/constrained_backend.hpp"
#include "core/lanczos_driver.hpp"
#include "core/symmetric_eigen.hpp"
#include "cuda/csr_scan.hpp"
#include "cuda/kernels.cuh"
#include "cuda/projected_eigen.hpp"
#include "cuda_test_support.hpp"
#include "host/host_backend.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <tuple>

namespace cudalanczos::cuda::test {
namespace {

/// A dense n x n matrix (column-major, leading dimension ld, NaN padding) and its host product.
struct Dense {
  index_t rows, cols, ld;
  std::vector<Scalar> a; // Scalars: complex Hermitian (random_dense's `symmetric`) in a complex build
  void apply(const Scalar *x, Scalar *y) const
  {
    for (index_t i = 0; i < rows; ++i) y[i] = 0;
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i) y[i] += a[i + j * ld] * x[j];
  }
  /// sum_j |a_ij x_j|: the scale of entry i of A x, for tolerances.
  std::vector<double> scale(const Scalar *x) const
  {
    std::vector<double> s(static_cast<std::size_t>(rows), 0.0);
    for (index_t j = 0; j < cols; ++j)
      for (index_t i = 0; i < rows; ++i) s[i] += std::abs(a[i + j * ld] * x[j]);
    return s;
  }
  DenseView view() const { return {rows, cols, ld, a.data()}; }
};

/// Random Scalars (genuinely complex in a complex build); `symmetric`: Hermitian (A[i, j] = conj(A[j, i]),
/// a real diagonal: test_matrices.hpp's random_hermitian in the complex build).
Dense random_dense(index_t rows, index_t cols, index_t ld, std::uint64_t seed, bool symmetric = false)
{
  Dense d{rows, cols, ld, std::vector<Scalar>(static_cast<std::size_t>(ld * cols), nan)};
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      const index_t lo = symmetric ? std::min(i, j) : i, hi = symmetric ? std::max(i, j) : j;
      const Scalar a = symmetric && i == j ? Scalar(random_entry(seed, lo + hi * rows)) : random_scalar(seed, lo + hi * rows);
      d.a[i + j * ld] = symmetric && i > j ? conj_of(a) : a;
    }
  return d;
}

/// Every column of `b` as host vectors.
std::vector<std::vector<Scalar>> columns(const Backend &b)
{
  std::vector<std::vector<Scalar>> c(static_cast<std::size_t>(b.basis_columns()),
                                     std::vector<Scalar>(static_cast<std::size_t>(b.local_size())));
  for (int j = 0; j < b.basis_columns(); ++j) b.get_column(j, c[j].data());
  return c;
}

double dot_abs(const std::vector<Scalar> &x, const std::vector<Scalar> &y)
{
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += std::abs(x[i] * y[i]);
  return s;
}

// --- the backend, operation by operation ------------------------------------------------------------------

using BackendCase = std::tuple<KernelFlavor, index_t>;

class CudaBackendOps : public CudaTest, public ::testing::WithParamInterface<BackendCase> {
protected:
  static constexpr int kColumns = 12;

  void SetUp() override
  {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    std::tie(flavor_, n_) = GetParam();
    A_ = random_dense(n_, n_, n_ + 1, 7000 + n_, true);
    // A reducer standing in for two ranks holding the same data: it doubles every value and counts
    // its calls, which both backends must make alike (count and sizes).
    const auto reducer = [](std::vector<int> &log) {
      return [&log](double *v, int count) {
        log.push_back(count);
        for (int i = 0; i < count; ++i) v[i] *= 2;
      };
    };
    host_ = std::make_unique<HostBackend>(n_, n_ + 20, 7, [this](const Scalar *x, Scalar *y) { A_.apply(x, y); },
                                          reducer(host_log_));
    BackendConfig config;
    config.local_size = n_;
    config.global_size = n_ + 20;
    config.row_offset = 7;
    config.flavor = flavor_;
    config.reduce = reducer(cuda_log_);
    cuda_ = make_cuda_backend(config, make_dense_operator(A_.view(), flavor_, -1));
    host_->resize_basis(kColumns);
    cuda_->resize_basis(kColumns);
    for (int j = 0; j < kColumns; ++j) host_->set_random(j, 100 + j);
    // genuinely complex columns in a complex build (set_random's are real)
    if constexpr (kComplexScalars)
      for (int j = 0; j < kColumns; ++j) host_->set_column(j, random_vector(static_cast<std::size_t>(n_), 100 + j).data());
    sync_from_host();
  }

  /// Makes the CUDA basis a bit-for-bit copy of the host one, so each check starts from equal state.
  void sync_from_host()
  {
    for (int j = 0; j < kColumns; ++j) cuda_->set_column(j, host_->column(j));
  }

  /// Column j of both backends agree entry by entry within tol[i] (or exactly, when tol is empty).
  void expect_column(int j, const std::vector<double> &tol = {})
  {
    std::vector<Scalar> got(static_cast<std::size_t>(n_));
    cuda_->get_column(j, got.data());
    const Scalar *ref = host_->column(j);
    for (index_t i = 0; i < n_; ++i) {
      if (tol.empty())
        ASSERT_EQ(got[i], ref[i]) << "column " << j << " entry " << i;
      else
        ASSERT_LE(std::abs(got[i] - ref[i]), tol[i]) << "column " << j << " entry " << i << " got " << got[i] << " ref " << ref[i];
    }
  }

  /// After both backends ran rotate(k, m, Q, ldq) on the columns `c` (taken before it): columns 0..m-1
  /// agree to the rounding of V[:, 0:k] Q, the columns from k on are untouched.
  void expect_rotated(const std::vector<std::vector<Scalar>> &c, const std::vector<Scalar> &Q, int k, int m, int ldq)
  {
    for (int j = 0; j < m; ++j) {
      std::vector<double> tol(static_cast<std::size_t>(n_), 0.0);
      for (index_t i = 0; i < n_; ++i)
        for (int l = 0; l < k; ++l) tol[i] += ulps * (k + 1) * eps * std::abs(Q[l + j * ldq] * c[l][i]);
      expect_column(j, tol);
    }
    for (int j = k; j < kColumns; ++j) expect_column(j);
  }

  KernelFlavor flavor_ = KernelFlavor::Custom;
  index_t n_ = 0;
  Dense A_{0, 0, 1, {}};
  std::vector<int> host_log_, cuda_log_;
  std::unique_ptr<HostBackend> host_;
  std::unique_ptr<Backend> cuda_;
};

TEST_P(CudaBackendOps, SetRandomIsEquivalentToRef)
{
  EXPECT_EQ(cuda_->name(), "cuda");
  EXPECT_EQ(cuda_->local_size(), n_);
  EXPECT_EQ(cuda_->basis_columns(), kColumns);
  for (int j = 0; j < kColumns; ++j) host_->set_random(j, 100 + j), cuda_->set_random(j, 100 + j);
  for (int j = 0; j < kColumns; ++j) expect_column(j); // bit for bit: same counter-based generator
}

TEST_P(CudaBackendOps, ApplyOperatorIsEquivalentToRef)
{
  host_->apply_operator(0, 1);
  cuda_->apply_operator(0, 1);
  std::vector<double> tol = A_.scale(host_->column(0));
  for (double &t : tol) t *= ulps * (n_ + 1) * eps;
  expect_column(1, tol);
  expect_column(0); // the source is untouched
}

TEST_P(CudaBackendOps, ProjectIsEquivalentToRef)
{
  const auto c = columns(*host_);
  for (auto [first, k, col] : {std::tuple{0, 4, 5}, std::tuple{0, 6, 5}, std::tuple{3, 0, 2}, std::tuple{2, 10, 11}}) {
    SCOPED_TRACE("first " + std::to_string(first) + " k " + std::to_string(k) + " col " + std::to_string(col));
    std::vector<Scalar> ref(k + 1), got(k + 1, nan);
    host_->project(first, k, col, ref.data());
    cuda_->project(first, k, col, got.data());
    for (int i = 0; i <= k; ++i) {
      const auto &v = i < k ? c[first + i] : c[col];
      // Both results went through the doubling reducer: the scale doubles too.
      ASSERT_LE(std::abs(got[i] - ref[i]), 2 * ulps * (n_ + 1) * eps * dot_abs(v, c[col])) << "output " << i;
    }
  }
  EXPECT_EQ(host_log_, cuda_log_);
}

TEST_P(CudaBackendOps, ProjectWithIsEquivalentToRef)
{
  // The B-inner products' operation: V[:, first:first+k]^T v_with and v_col . v_with (the columns may overlap).
  const auto c = columns(*host_);
  for (auto [first, k, col, with] : {std::tuple{0, 4, 5, 6}, std::tuple{0, 6, 5, 11}, std::tuple{3, 0, 2, 9}, std::tuple{2, 9, 11, 11}}) {
    SCOPED_TRACE("first " + std::to_string(first) + " k " + std::to_string(k) + " col " + std::to_string(col) + " with " + std::to_string(with));
    std::vector<Scalar> ref(k + 1), got(k + 1, nan);
    host_->project_with(first, k, col, with, ref.data());
    cuda_->project_with(first, k, col, with, got.data());
    for (int i = 0; i <= k; ++i) {
      const auto &v = i < k ? c[first + i] : c[col];
      ASSERT_LE(std::abs(got[i] - ref[i]), 2 * ulps * (n_ + 1) * eps * dot_abs(v, c[with])) << "output " << i;
    }
  }
  EXPECT_EQ(host_log_, cuda_log_);
}

/// Per-entry rounding bound of column `col` after col -= sum_j coef[j] column(first + j), from the columns
/// `c` before it (both backends' rounding, doubled); *scale2, if given, gets the sum of the squared
/// scales (the bound of w.w follows from it).
std::vector<double> subtract_tolerance(const std::vector<std::vector<Scalar>> &c, const std::vector<Scalar> &coef, int first,
                                       int col, double *scale2 = nullptr)
{
  const std::size_t n = c[static_cast<std::size_t>(col)].size();
  std::vector<double> tol(n);
  double s2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double s = std::abs(c[static_cast<std::size_t>(col)][i]);
    for (std::size_t j = 0; j < coef.size(); ++j) s += std::abs(coef[j] * c[first + j][i]);
    tol[i] = 2 * 2 * ulps * eps * s;
    s2 += s * s;
  }
  if (scale2) *scale2 = s2;
  return tol;
}

TEST_P(CudaBackendOps, SubtractIsEquivalentToRef)
{
  const auto c = columns(*host_);
  const std::vector<Scalar> coef{0.5, make_scalar(-0.25, 0.75), 1.75}; // complex in a complex build (the real build keeps the real parts)
  const double ref = host_->subtract(1, 3, coef.data(), 6);
  const double got = cuda_->subtract(1, 3, coef.data(), 6);
  double tol2 = 0;
  expect_column(6, subtract_tolerance(c, coef, 1, 6, &tol2));
  EXPECT_LE(std::abs(got - ref), 2 * 2 * ulps * (n_ + 5) * eps * tol2) << "got " << got << " ref " << ref;

  // k = 0: only the norm.
  EXPECT_LE(std::abs(cuda_->subtract(0, 0, nullptr, 3) - host_->subtract(0, 0, nullptr, 3)),
            2 * 2 * ulps * (n_ + 1) * eps * dot_abs(c[3], c[3]));
  EXPECT_EQ(host_log_, cuda_log_);
}

TEST_P(CudaBackendOps, UpdateIsEquivalentToRef)
{
  // subtract without the norm: the same column, and no reduction on either backend.
  const auto c = columns(*host_);
  const std::vector<Scalar> coef{make_scalar(0.5, -1.25), -0.25, 1.75};
  const auto before_host = host_log_, before_cuda = cuda_log_;
  host_->update(1, 3, coef.data(), 6);
  cuda_->update(1, 3, coef.data(), 6);
  EXPECT_EQ(host_log_, before_host);
  EXPECT_EQ(cuda_log_, before_cuda);
  expect_column(6, subtract_tolerance(c, coef, 1, 6));
  EXPECT_THROW(cuda_->update(0, 3, coef.data(), 1), Error); // col among the subtracted columns
}

TEST_P(CudaBackendOps, PlantedBreakdownSubtractIsEquivalentToRef)
{
  // beta = 0 planted: column 8 is a copy of column 2, so w - 1 * v_2 is exactly zero on both.
  host_->copy_column(2, 8);
  cuda_->copy_column(2, 8);
  const Scalar one = 1.0;
  EXPECT_EQ(host_->subtract(2, 1, &one, 8), 0.0);
  EXPECT_EQ(cuda_->subtract(2, 1, &one, 8), 0.0);
  expect_column(8);
}

TEST_P(CudaBackendOps, ScaleAndCopyAreEquivalentToRef)
{
  host_->scale(2, -1.5);
  cuda_->scale(2, -1.5);
  expect_column(2);
  host_->copy_column(2, 9);
  cuda_->copy_column(2, 9);
  expect_column(9);
}

// Backend::get/set_column_device: the basis to and from a caller's device array on the caller's stream,
// ordered both ways by events. The caller's work right before (an upload on its stream) and right after
// (overwriting the array on its stream) is queued without any wait: a missing order shows as a wrong
// column or a poisoned result. Bit for bit against the host reference's columns.
TEST_P(CudaBackendOps, ColumnDeviceCopiesAreEquivalentToRef)
{
  const std::size_t n = static_cast<std::size_t>(n_);
  DeviceBuffer<Scalar> d(std::max<std::size_t>(n, 1));
  PinnedBuffer<Scalar> h(std::max<std::size_t>(n, 1));
  for (int j : {0, 5, kColumns - 1}) {
    poison(d.data(), n);
    ASSERT_TRUE(cuda_->get_column_device(j, d.data(), stream()));
    // queued at once behind the copy: the stream must wait for it
    if (n) CUDALANCZOS_CHECK(cudaMemcpyAsync(h.data(), d.data(), n * sizeof(Scalar), cudaMemcpyDeviceToHost, stream()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream()));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(h.data()[i], host_->column(j)[i]) << "column " << j << " entry " << i;
  }
  for (int j : {1, 7}) {
    const std::vector<Scalar> v = random_vector(n, 900 + j);
    std::copy(v.begin(), v.end(), h.data());
    // the caller's upload is still queued when set_column_device is called, and the caller overwrites
    // its array right after: the copy must sit between the two
    if (n) CUDALANCZOS_CHECK(cudaMemcpyAsync(d.data(), h.data(), n * sizeof(Scalar), cudaMemcpyHostToDevice, stream()));
    ASSERT_TRUE(cuda_->set_column_device(j, d.data(), stream()));
    if (n) CUDALANCZOS_CHECK(cudaMemsetAsync(d.data(), 0xff, n * sizeof(Scalar), stream()));
    host_->set_column(j, v.data());
    expect_column(j);
  }
  // the host backend has no device basis: it declines, touching nothing
  EXPECT_FALSE(host_->get_column_device(0, d.data(), stream()));
  EXPECT_FALSE(host_->set_column_device(0, d.data(), stream()));
}

// BInnerProductBackend over the CUDA backend: its columns to and from device memory are the wrapped
// backend's, bit for bit, and a column set from the device drops the B-product it held, so the next
// B-inner product is the new column's (a stale product would give the old column's B-norm).
TEST_P(CudaBackendOps, BInnerProductColumnDeviceCopiesAreEquivalentToHostCopies)
{
  const std::size_t n = static_cast<std::size_t>(n_);
  if (n_ < 1) GTEST_SKIP() << "no rows";
  std::vector<Scalar> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = 1.25 + 0.75 * random_entry(77, static_cast<index_t>(i));
  const auto bmul = [&](const Scalar *x, Scalar *y) {
    for (std::size_t i = 0; i < n; ++i) y[i] = d[i] * x[i];
  };
  const auto b_norm2 = [&](const std::vector<Scalar> &x) {
    double s = 0;
    for (std::size_t i = 0; i < n; ++i) s += real_part(conj_of(x[i]) * d[i] * x[i]);
    return s;
  };
  BackendConfig config; // one process: the B-inner products below are this rank's alone
  config.local_size = config.global_size = n_;
  config.flavor = flavor_;
  const std::unique_ptr<Backend> inner = make_cuda_backend(config, make_dense_operator(A_.view(), flavor_, -1));
  BInnerProductBackend b(*inner, host_round_trip(bmul));
  b.resize_basis(3);
  const std::vector<Scalar> x = random_vector(n, 41), y = random_vector(n, 42);
  b.set_column(1, x.data());
  std::vector<Scalar> out(1);
  b.project(1, 0, 1, out.data()); // x^H B x: the scratch column now holds B x
  EXPECT_NEAR(real_part(out[0]), b_norm2(x), 1e-12 * b_norm2(x));
  DeviceBuffer<Scalar> dy = upload(y);
  ASSERT_TRUE(b.set_column_device(1, dy.data(), stream()));
  CUDALANCZOS_CHECK(cudaStreamSynchronize(stream()));
  b.project(1, 0, 1, out.data());
  EXPECT_NEAR(real_part(out[0]), b_norm2(y), 1e-12 * b_norm2(y)) << "the B-product of the column set before was reused";
  DeviceBuffer<Scalar> back(n);
  ASSERT_TRUE(b.get_column_device(1, back.data(), stream()));
  CUDALANCZOS_CHECK(cudaStreamSynchronize(stream()));
  std::vector<Scalar> host(n);
  b.get_column(1, host.data());
  EXPECT_EQ(download(back.data(), n), host);
  EXPECT_EQ(host, y);
  EXPECT_THROW(b.get_column_device(3, back.data(), stream()), Error) << "column 3 is the scratch column, not the basis";
}

// ConstrainedBackend over the CUDA backend: constraints and start vectors read from device memory give
// the same basis, bit for bit, as the same vectors read from the host.
TEST_P(CudaBackendOps, ConstrainedColumnDeviceCopiesAreEquivalentToHostCopies)
{
  const std::size_t n = static_cast<std::size_t>(n_);
  if (n_ < 4) GTEST_SKIP() << "too few rows for two constraints and a start vector";
  const std::vector<Scalar> z0 = random_vector(n, 31), z1 = random_vector(n, 32), x = random_vector(n, 33);
  std::vector<Scalar> dup_ = z0; // in the span of z0: dropped
  for (Scalar &e : dup_) e *= -3.0;
  const std::vector<Scalar> &dup = dup_;
  BackendConfig config; // one process (no reducer): the dependent constraint is then recognised as such
  config.local_size = n_;
  config.global_size = n_;
  config.flavor = flavor_;
  const std::unique_ptr<Backend> inner = make_cuda_backend(config, make_dense_operator(A_.view(), flavor_, -1));
  const auto run = [&](bool device) {
    ConstrainedBackend c(*inner, 3);
    c.resize_basis(4);
    std::vector<bool> kept;
    for (const std::vector<Scalar> *z : {&z0, &z1, &dup}) {
      if (device) {
        DeviceBuffer<Scalar> d = upload(*z);
        bool k = false;
        EXPECT_TRUE(c.add_constraint_device(d.data(), stream(), &k));
        CUDALANCZOS_CHECK(cudaStreamSynchronize(stream())); // d is freed next
        kept.push_back(k);
      } else kept.push_back(c.add_constraint(z->data()));
    }
    if (device) {
      DeviceBuffer<Scalar> d = upload(x);
      EXPECT_TRUE(c.set_column_device(0, d.data(), stream()));
      CUDALANCZOS_CHECK(cudaStreamSynchronize(stream()));
    } else c.set_column(0, x.data());
    std::vector<Scalar> out(n), back(n);
    c.get_column(0, out.data());
    DeviceBuffer<Scalar> d(n);
    EXPECT_TRUE(c.get_column_device(0, d.data(), stream()));
    CUDALANCZOS_CHECK(cudaStreamSynchronize(stream()));
    back = download(d.data(), n);
    EXPECT_EQ(out, back);
    return std::make_pair(kept, out);
  };
  const auto from_host = run(false), from_device = run(true);
  EXPECT_EQ(from_host.first, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(from_device.first, from_host.first);
  EXPECT_EQ(from_device.second, from_host.second);
}

TEST_P(CudaBackendOps, CombineIsEquivalentToRef)
{
  const auto c = columns(*host_);
  const std::vector<Scalar> coef{0.5, make_scalar(-0.25, 0.5), 1.75, make_scalar(3.0, -2.0)};
  host_->combine(0, 4, coef.data(), 7);
  cuda_->combine(0, 4, coef.data(), 7);
  std::vector<double> tol(static_cast<std::size_t>(n_), 0.0);
  for (index_t i = 0; i < n_; ++i)
    for (int j = 0; j < 4; ++j) tol[i] += ulps * 5 * eps * std::abs(coef[j] * c[j][i]);
  expect_column(7, tol);

  // k = 0: the empty sum, even over NaN.
  const std::vector<Scalar> nans(static_cast<std::size_t>(n_), nan);
  host_->set_column(8, nans.data());
  cuda_->set_column(8, nans.data());
  host_->combine(0, 0, nullptr, 8);
  cuda_->combine(0, 0, nullptr, 8);
  expect_column(8);
}

TEST_P(CudaBackendOps, RotateIsEquivalentToRef)
{
  const auto c = columns(*host_);
  const int k = 6, m = 4, ldq = 8;
  const std::vector<Scalar> Q = random_vector(ldq * m, 8100);
  host_->rotate(k, m, Q.data(), ldq);
  cuda_->rotate(k, m, Q.data(), ldq);
  expect_rotated(c, Q, k, m, ldq);
}

TEST_P(CudaBackendOps, RotateOfManyColumnsIsEquivalentToRef)
{
  // A restart's shapes: m a multiple of the custom kernel's 8 outputs per thread and not, one column
  // group and several, the kernel's largest m (32) and one past it (cuBLAS then), a locked prefix, k
  // not a multiple of the kernel's 4 columns per round, and a wide cuBLAS case.
  const int cols = 300;
  host_->resize_basis(cols);
  cuda_->resize_basis(cols);
  struct Shape {
    int k, m, locked;
  };
  for (const Shape sh : {Shape{5, 3, 0}, Shape{40, 17, 0}, Shape{47, 32, 0}, Shape{47, 33, 0}, Shape{299, 200, 0}, Shape{62, 35, 3}}) {
    SCOPED_TRACE("k " + std::to_string(sh.k) + ", m " + std::to_string(sh.m) + ", locked " + std::to_string(sh.locked));
    for (int j = 0; j < cols; ++j) {
      host_->set_random(j, 300 + j);
      cuda_->set_column(j, host_->column(j));
    }
    std::vector<std::vector<Scalar>> c(static_cast<std::size_t>(sh.k));
    for (int j = 0; j < sh.k; ++j) c[j].assign(host_->column(j), host_->column(j) + n_);
    const int ldq = sh.k + 1;
    std::vector<Scalar> Q = random_vector(ldq * sh.m, 8300 + sh.k);
    for (int j = 0; j < sh.locked; ++j)
      for (int i = 0; i < sh.k; ++i) Q[i + j * ldq] = i == j ? 1.0 : 0.0;
    for (int j = sh.locked; j < sh.m; ++j)
      for (int i = 0; i < sh.locked; ++i) Q[i + j * ldq] = 0.0;
    host_->rotate(sh.k, sh.m, Q.data(), ldq);
    cuda_->rotate(sh.k, sh.m, Q.data(), ldq);
    std::vector<Scalar> got(static_cast<std::size_t>(n_));
    for (int j = 0; j < cols; ++j) {
      if (j >= sh.m && j < sh.k) continue; // unspecified afterwards (Backend::rotate)
      cuda_->get_column(j, got.data());
      const Scalar *ref = host_->column(j);
      for (index_t i = 0; i < n_; ++i) {
        double tol = 0; // untouched columns (locked, and from k on) exactly
        if (j >= sh.locked && j < sh.m)
          for (int l = 0; l < sh.k; ++l) tol += ulps * (sh.k + 1) * eps * std::abs(Q[l + j * ldq] * c[l][i]);
        ASSERT_LE(std::abs(got[i] - ref[i]), tol) << "column " << j << " entry " << i;
      }
    }
  }
}

TEST_P(CudaBackendOps, RotateFromIsEquivalentToRef)
{
  // A restart's rotation past `first` locked columns, without the identity: the custom kernel's shapes
  // (m up to 32 outputs) and cuBLAS's (m = 33), an odd first; the columns before first stay bit for bit.
  const int cols = 120;
  host_->resize_basis(cols);
  cuda_->resize_basis(cols);
  struct Shape {
    int first, k, m;
  };
  for (const Shape sh : {Shape{1, 5, 3}, Shape{37, 47, 32}, Shape{37, 47, 33}, Shape{60, 59, 40}}) {
    SCOPED_TRACE("first " + std::to_string(sh.first) + ", k " + std::to_string(sh.k) + ", m " + std::to_string(sh.m));
    for (int j = 0; j < cols; ++j) {
      host_->set_random(j, 700 + j);
      cuda_->set_column(j, host_->column(j));
    }
    std::vector<std::vector<Scalar>> c(static_cast<std::size_t>(sh.k));
    for (int j = 0; j < sh.k; ++j) c[j].assign(host_->column(sh.first + j), host_->column(sh.first + j) + n_);
    const int ldq = sh.k + 3;
    const std::vector<Scalar> Q = random_vector(ldq * sh.m, 8400 + sh.first);
    host_->rotate_from(sh.first, sh.k, sh.m, Q.data(), ldq);
    cuda_->rotate_from(sh.first, sh.k, sh.m, Q.data(), ldq);
    std::vector<Scalar> got(static_cast<std::size_t>(n_));
    for (int j = 0; j < cols; ++j) {
      const int q = j - sh.first; // Q's column, for the rotated ones
      if (q >= sh.m && q < sh.k) continue; // unspecified afterwards (Backend::rotate_from)
      cuda_->get_column(j, got.data());
      const Scalar *ref = host_->column(j);
      for (index_t i = 0; i < n_; ++i) {
        double tol = 0; // untouched columns exactly
        if (q >= 0 && q < sh.m)
          for (int l = 0; l < sh.k; ++l) tol += ulps * (sh.k + 1) * eps * std::abs(Q[l + q * ldq] * c[l][i]);
        ASSERT_LE(std::abs(got[i] - ref[i]), tol) << "column " << j << " entry " << i;
      }
    }
  }
  const std::vector<Scalar> Q(9, 1.0);
  EXPECT_THROW(cuda_->rotate_from(cols - 2, 3, 2, Q.data(), 3), Error); // first + k beyond the basis
  EXPECT_THROW(host_->rotate_from(cols - 2, 3, 2, Q.data(), 3), Error);
}

TEST_P(CudaBackendOps, ProjectedEigenIsEquivalentToRef)
{
  // The projected problem on the device (cuSOLVER) against the driver's host solver, symmetric_eigen: the
  // same eigenvalues, and orthonormal eigenvectors with residuals at rounding level, on a random symmetric
  // matrix (odd orders among them) and on a thick restart's arrowhead whose coupling to the tridiagonal
  // tail is planted at 0 (beta = 0: two blocks, the arrow's diagonal with a repeated value). Below
  // kDeviceProjectedOrder the backend declines, as the host one always does.
  using cudalanczos::cuda::kDeviceProjectedOrder;
  std::vector<double> w(4), Z(16);
  const std::vector<double> small(16, 1.0);
  EXPECT_FALSE(host_->projected_eigen(4, small.data(), 4, w.data(), Z.data(), 4));
  EXPECT_FALSE(cuda_->projected_eigen(4, small.data(), 4, w.data(), Z.data(), 4));
  for (const int n : {kDeviceProjectedOrder, kDeviceProjectedOrder + 1, 2 * kDeviceProjectedOrder - 11})
    for (const bool arrow : {false, true}) {
      SCOPED_TRACE("order " + std::to_string(n) + (arrow ? ", arrowhead with a zero coupling" : ", random"));
      const int lds = n + 3, ldz = n + 2;
      std::mt19937_64 gen(90 + n);
      std::uniform_real_distribution<double> uniform(-1, 1);
      std::vector<double> S(static_cast<std::size_t>(lds) * n, 0.0);
      const auto at = [&](int i, int j) -> double & { return S[i + static_cast<std::size_t>(j) * lds]; };
      const int kept = n / 3;
      for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i) {
          double v = uniform(gen);
          if (arrow) v = i == j ? (j < kept ? std::floor(4 * v) : v) : (j < kept && i == kept) || (j >= kept && i == j + 1) ? v : 0.0;
          if (arrow && j == kept - 1 && i == kept) v = 0.0; // the planted zero coupling
          at(i, j) = at(j, i) = v;
        }
      const std::vector<double> S0 = S;
      std::vector<double> w_ref(static_cast<std::size_t>(n)), Z_ref(static_cast<std::size_t>(n) * n), w_dev(w_ref.size()),
          Z_dev(static_cast<std::size_t>(ldz) * n);
      std::vector<double> S_host = S;
      cudalanczos::symmetric_eigen(n, S_host.data(), lds, w_ref.data(), Z_ref.data(), n);
      ASSERT_TRUE(cuda_->projected_eigen(n, S.data(), lds, w_dev.data(), Z_dev.data(), ldz));
      EXPECT_EQ(S, S0) << "S is read only";
      double snorm = 0;
      for (double x : S0) snorm = std::max(snorm, std::abs(x) * n); // a bound on ||S||_2
      const double tol = 64 * n * eps * snorm;
      for (int j = 0; j < n; ++j) {
        ASSERT_LE(std::abs(w_dev[j] - w_ref[j]), tol) << "eigenvalue " << j;
        if (j) { ASSERT_LE(w_dev[j - 1], w_dev[j] + tol) << "ascending (copies of a value in any order)"; }
        const double *z = Z_dev.data() + static_cast<std::size_t>(j) * ldz;
        for (int i = 0; i < n; ++i) { // ||S z - w z||, row by row
          double r = -w_dev[j] * z[i];
          for (int l = 0; l < n; ++l) r += S0[i + static_cast<std::size_t>(l) * lds] * z[l];
          ASSERT_LE(std::abs(r), tol) << "residual of pair " << j << ", row " << i;
        }
        for (int k = 0; k <= j; ++k) { // Z^T Z = I
          double d = 0;
          for (int i = 0; i < n; ++i) d += z[i] * Z_dev[i + static_cast<std::size_t>(k) * ldz];
          ASSERT_LE(std::abs(d - (k == j ? 1.0 : 0.0)), 64 * n * eps) << "columns " << k << ", " << j;
        }
      }
    }
}

TEST_P(CudaBackendOps, RotateWithLockedColumnsIsEquivalentToRef)
{
  // Q = [I_2 0; 0 R], as a restart with two locked columns passes it: the backend skips the identity
  // part; the result must still be V Q. And a Q whose unit first column has a nonzero elsewhere in its
  // row (not a locked column) must not be skipped.
  const int k = 7, m = 5, ldq = 7;
  for (bool pure : {true, false}) {
    SCOPED_TRACE(pure ? "identity on 0..1" : "e_0 first, but row 0 used later");
    const auto c = columns(*host_);
    std::vector<Scalar> Q = random_vector(ldq * m, 8200);
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < k; ++i) Q[i + j * ldq] = i == j ? 1.0 : 0.0;
    for (int j = 2; j < m; ++j) Q[0 + j * ldq] = Q[1 + j * ldq] = 0.0;
    if (!pure) Q[0 + 3 * ldq] = 0.5;
    host_->rotate(k, m, Q.data(), ldq);
    cuda_->rotate(k, m, Q.data(), ldq);
    expect_rotated(c, Q, k, m, ldq);
  }
}

TEST_P(CudaBackendOps, BadArgumentsThrowLikeRef)
{
  Scalar out[2];
  EXPECT_THROW(cuda_->project(0, 1, kColumns, out), Error);
  EXPECT_THROW(cuda_->scale(-1, 1.0), Error);
  EXPECT_THROW(cuda_->rotate(3, 4, out, 3), Error);
  EXPECT_THROW(host_->rotate(3, 4, out, 3), Error);
  EXPECT_THROW(cuda_->subtract(0, 3, out, 1), Error); // col among the subtracted columns
}

// --- the block operations (block Lanczos): the reference is Backend's column-by-column default, which the
// host backend keeps ---

TEST_P(CudaBackendOps, ProjectBlockIsEquivalentToRef)
{
  const auto c = columns(*host_);
  for (auto [first, k, col, b] : std::vector<std::tuple<int, int, int, int>>{
           {0, 4, 4, 3}, {0, 4, 4, 8}, {2, 3, 5, 1},  // the block follows the others
           {0, 4, 4, 2}, {0, 9, 9, 2}, {2, 5, 7, 4},  // (blocks of at most 4: block_multi_dot, one chunk or two)
           {0, 2, 4, 8}, {1, 5, 9, 3}, {0, 3, 11, 1}, // not adjacent
           {1, 5, 9, 2}, {0, 3, 8, 4},
           {0, 6, 3, 3}, {0, 6, 3, 2},                // overlapping
           {5, 0, 2, 3}, {0, 0, 4, 8}, {0, 0, 7, 1},  // k = 0: the Gram matrix alone
           {0, 0, 7, 2}, {3, 0, 8, 4}})
  {
    SCOPED_TRACE("first " + std::to_string(first) + " k " + std::to_string(k) + " col " + std::to_string(col) + " b " +
                 std::to_string(b));
    const int ld = k + b;
    std::vector<Scalar> ref(static_cast<std::size_t>(ld * b)), got(ref.size(), nan);
    const std::size_t calls = cuda_log_.size();
    host_->project_block(first, k, col, b, ref.data());
    cuda_->project_block(first, k, col, b, got.data());
    // One reduction of everything (the reference makes 2b); each value went through the doubling once.
    ASSERT_EQ(cuda_log_.size(), calls + 1);
    EXPECT_EQ(cuda_log_.back(), ld * b * kDoublesPerScalar); // the reducer's count is in doubles
    for (int j = 0; j < b; ++j)
      for (int i = 0; i < ld; ++i) {
        const auto &v = i < k ? c[first + i] : c[col + i - k];
        ASSERT_LE(std::abs(got[i + j * ld] - ref[i + j * ld]), 2 * ulps * (n_ + 1) * eps * dot_abs(v, c[col + j]))
            << "entry (" << i << ", " << j << ")";
      }
  }
}

TEST_P(CudaBackendOps, UpdateBlockIsEquivalentToRef)
{
  // Two updates queued back to back (the second stages its C while the first may still be queued), on
  // disjoint columns, with ldc > k; then k = 0. No reduction on either backend.
  const auto c = columns(*host_);
  const std::vector<Scalar> C1 = random_vector(5 * 4, 8300), C2 = random_vector(3 * 3, 8301), C3 = random_vector(4 * 2, 8302);
  const auto before_host = host_log_, before_cuda = cuda_log_;
  for (Backend *be : {static_cast<Backend *>(host_.get()), cuda_.get()}) {
    be->update_block(6, 4, C3.data(), 4, 0, 2);  // columns 0..1 -= V[:, 6:10] C3 (before 6..9 change)
    be->update_block(1, 3, C1.data(), 5, 6, 4);  // columns 6..9 -= V[:, 1:4] C1
    be->update_block(10, 2, C2.data(), 3, 2, 3); // columns 2..4 -= V[:, 10:12] C2
    be->update_block(0, 0, nullptr, 0, 5, 2);    // an empty sum
  }
  EXPECT_EQ(host_log_, before_host);
  EXPECT_EQ(cuda_log_, before_cuda);
  const auto coef = [](const std::vector<Scalar> &C, int ldc, int k, int j) {
    return std::vector<Scalar>(C.begin() + j * ldc, C.begin() + j * ldc + k);
  };
  for (int j = 0; j < 4; ++j) expect_column(6 + j, subtract_tolerance(c, coef(C1, 5, 3, j), 1, 6 + j));
  for (int j = 0; j < 3; ++j) expect_column(2 + j, subtract_tolerance(c, coef(C2, 3, 2, j), 10, 2 + j));
  for (int j = 0; j < 2; ++j) expect_column(j, subtract_tolerance(c, coef(C3, 4, 4, j), 6, j));
  for (int j : {5, 10, 11}) expect_column(j); // untouched
}

TEST_P(CudaBackendOps, WindowThenPassBlockIsTheFourCallsBitForBit)
{
  // A block step's window pass and the pass after it. On one rank's backend (the whole vectors, no
  // reducer) the override keeps both passes' coefficients on the device, waits once and returns before
  // the second subtraction has run: every output and every column must be bit for bit those of the four
  // calls it stands for. On the fixture's two-rank stand-in it takes the four calls itself, as the host
  // backend does.
  BackendConfig config;
  config.local_size = config.global_size = n_;
  config.flavor = flavor_;
  auto fused = make_cuda_backend(config, make_dense_operator(A_.view(), flavor_, -1));
  auto calls = make_cuda_backend(config, make_dense_operator(A_.view(), flavor_, -1));
  for (auto [lo, kw, first, k, col, b] : std::vector<std::array<int, 6>>{{4, 4, 0, 8, 8, 2},   // a full step: window, then all
                                                                            {6, 2, 0, 3, 8, 4},   // partial: the kept columns
                                                                            {2, 4, 0, 2, 6, 3},
                                                                            {5, 1, 0, 5, 9, 1},
                                                                            {3, 2, 0, 10, 10, 2}, // the pass over the window too
                                                                            {0, 2, 0, 2, 2, 8}})  // wider than the block kernels
  {
    SCOPED_TRACE("lo " + std::to_string(lo) + " kw " + std::to_string(kw) + " first " + std::to_string(first) + " k " +
                 std::to_string(k) + " col " + std::to_string(col) + " b " + std::to_string(b));
    const std::size_t nw = static_cast<std::size_t>((kw + b) * b), np = static_cast<std::size_t>((k + b) * b);
    std::vector<Scalar> w1(nw, nan), p1(np, nan), w2(nw, nan), p2(np, nan);
    for (Backend *be : {fused.get(), calls.get()}) {
      be->resize_basis(kColumns);
      for (int j = 0; j < kColumns; ++j) be->set_column(j, host_->column(j));
    }
    fused->window_then_pass_block(lo, kw, first, k, col, b, w1.data(), p1.data());
    calls->project_block(lo, kw, col, b, w2.data());
    calls->update_block(lo, kw, w2.data(), kw + b, col, b);
    calls->project_block(first, k, col, b, p2.data());
    calls->update_block(first, k, p2.data(), k + b, col, b);
    ASSERT_EQ(0, std::memcmp(w1.data(), w2.data(), nw * sizeof(Scalar))) << "the window's projections";
    ASSERT_EQ(0, std::memcmp(p1.data(), p2.data(), np * sizeof(Scalar))) << "the pass's projections";
    std::vector<Scalar> x(static_cast<std::size_t>(n_)), y(x.size());
    for (int j = 0; j < kColumns; ++j) {
      fused->get_column(j, x.data());
      calls->get_column(j, y.data());
      ASSERT_EQ(0, std::memcmp(x.data(), y.data(), x.size() * sizeof(Scalar))) << "column " << j;
    }
    // The two-rank stand-in and the host backend: the reference's calls on each, their reductions alike.
    sync_from_host();
    const std::size_t calls_before = cuda_log_.size(), host_before = host_log_.size();
    std::vector<Scalar> hw(nw), hp(np), cw(nw, nan), cp(np, nan);
    host_->window_then_pass_block(lo, kw, first, k, col, b, hw.data(), hp.data());
    cuda_->window_then_pass_block(lo, kw, first, k, col, b, cw.data(), cp.data());
    EXPECT_EQ(cuda_log_.size() - calls_before, 2u) << "one reduction per projection";
    EXPECT_GE(host_log_.size() - host_before, 2u);
    for (std::size_t i = 0; i < nw; ++i) ASSERT_LE(std::abs(cw[i] - hw[i]), 1e-10 * (1 + std::abs(hw[i]))) << "window entry " << i;
    for (std::size_t i = 0; i < np; ++i) ASSERT_LE(std::abs(cp[i] - hp[i]), 1e-10 * (1 + std::abs(hp[i]))) << "pass entry " << i;
    sync_from_host();
    EXPECT_THROW(fused->window_then_pass_block(col, 2, 0, 1, col + 1 < kColumns ? col : col - 1, 1, w1.data(), p1.data()), Error)
        << "a window overlapping the block";
    EXPECT_THROW(fused->window_then_pass_block(lo, 0, first, k, col, b, w1.data(), p1.data()), Error) << "an empty window";
    if (k > 0)
      EXPECT_THROW(fused->window_then_pass_block(lo, kw, col, std::min(k, kColumns - col), col, 1, w1.data(), p1.data()), Error)
          << "a pass over the block itself";
  }
}

TEST_P(CudaBackendOps, TransformBlockIsEquivalentToRef)
{
  std::uint64_t seed = 8400;
  for (auto [col, b, ldm] : std::vector<std::tuple<int, int, int>>{{3, 5, 7}, {0, 1, 2}, {4, 8, 9}, {11, 1, 1}}) {
    SCOPED_TRACE("col " + std::to_string(col) + " b " + std::to_string(b) + " ldm " + std::to_string(ldm));
    sync_from_host();
    const auto c = columns(*host_);
    const std::vector<Scalar> M = random_vector(static_cast<std::size_t>(ldm * b), seed++);
    host_->transform_block(col, b, M.data(), ldm);
    cuda_->transform_block(col, b, M.data(), ldm);
    for (int j = 0; j < b; ++j) {
      std::vector<double> tol(static_cast<std::size_t>(n_), 0.0);
      for (index_t i = 0; i < n_; ++i)
        for (int l = 0; l < b; ++l) tol[i] += ulps * (b + 1) * eps * std::abs(M[l + j * ldm] * c[col + l][i]);
      expect_column(col + j, tol);
    }
    for (int j = 0; j < kColumns; ++j)
      if (j < col || j >= col + b) expect_column(j);
  }
}

TEST_P(CudaBackendOps, BlockBadArgumentsThrowLikeRef)
{
  std::vector<Scalar> out(256), C(64, 1.0);
  for (Backend *be : {static_cast<Backend *>(host_.get()), cuda_.get()}) {
    SCOPED_TRACE(be->name());
    EXPECT_THROW(be->apply_operator_block(0, 2, 3), Error);  // overlapping blocks
    EXPECT_THROW(be->apply_operator_block(0, 4, -1), Error); // b < 0
    EXPECT_THROW(be->apply_operator_block(0, 10, 3), Error); // past the basis
    EXPECT_THROW(be->project_block(0, 2, 11, 2, out.data()), Error);
    EXPECT_THROW(be->update_block(0, 3, C.data(), 2, 5, 2), Error);  // ldc < k
    EXPECT_THROW(be->update_block(0, 3, C.data(), 3, 2, 2), Error);  // updated columns among the subtracted
    EXPECT_THROW(be->update_block(0, 3, C.data(), 3, 11, 2), Error); // past the basis
    EXPECT_THROW(be->transform_block(3, 4, C.data(), 3), Error);     // ldm < b
    EXPECT_THROW(be->transform_block(10, 3, C.data(), 3), Error);    // past the basis
    // b = 0: nothing to do
    EXPECT_NO_THROW(be->apply_operator_block(0, 0, 0));
    EXPECT_NO_THROW(be->project_block(0, 2, 3, 0, out.data()));
    EXPECT_NO_THROW(be->update_block(0, 2, C.data(), 2, 5, 0));
    EXPECT_NO_THROW(be->transform_block(0, 0, C.data(), 1));
  }
  // Where the reference does not check (it would index out[-1]).
  EXPECT_THROW(cuda_->project_block(0, -1, 3, 2, out.data()), Error);
  EXPECT_THROW(cuda_->update_block(0, -1, C.data(), 1, 3, 2), Error);
}

INSTANTIATE_TEST_SUITE_P(Flavors, CudaBackendOps,
                         ::testing::Combine(::testing::Values(KernelFlavor::Custom, KernelFlavor::Vendor),
                                            ::testing::ValuesIn(odd_sizes())),
                         [](const ::testing::TestParamInfo<BackendCase> &info) {
                           return std::string(to_string(std::get<0>(info.param))) + "_n" +
                                  std::to_string(std::get<1>(info.param));
                         });

// --- operators ------------------------------------------------------------------------------------------------

class DeviceOperators : public CudaTest {};

TEST_F(DeviceOperators, DenseOperatorIsEquivalentToRef)
{
  std::uint64_t seed = 9000;
  for (KernelFlavor f : {KernelFlavor::Default, KernelFlavor::Custom, KernelFlavor::Vendor})
    for (auto [rows, cols, ld] : std::vector<std::tuple<index_t, index_t, index_t>>{
             {0, 0, 1}, {1, 1, 1}, {31, 33, 35}, {33, 31, 33}, {1000, 1000, 1003}, {4097, 100, 4097}, {100, 4097, 101}, {5, 0, 5}}) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " ld " + std::to_string(ld));
      const Dense A = random_dense(rows, cols, ld, seed += 11);
      const auto op = make_dense_operator(A.view(), f, -1);
      EXPECT_EQ(op->rows(), rows);
      EXPECT_EQ(op->cols(), cols);
      EXPECT_FALSE(op->description().empty());
      const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(cols), seed + 1);
      std::vector<Scalar> ref(static_cast<std::size_t>(rows));
      A.apply(x.data(), ref.data());
      const std::vector<double> scale = A.scale(x.data());
      DeviceBuffer<Scalar> dx = upload(x), dy(static_cast<std::size_t>(rows));
      poison(dy.data(), dy.size());
      op->apply(dx.data(), dy.data(), stream());
      const std::vector<Scalar> y = download(dy.data(), dy.size());
      for (index_t i = 0; i < rows; ++i) ASSERT_LE(std::abs(y[i] - ref[i]), ulps * (cols + 1) * eps * scale[i]) << "row " << i;
    }
}

TEST_F(DeviceOperators, CsrOperatorIsEquivalentToRef)
{
  std::uint64_t seed = 9500;
  for (KernelFlavor f : {KernelFlavor::Default, KernelFlavor::Custom, KernelFlavor::Vendor})
    for (auto [rows, cols, mean] : std::vector<std::tuple<index_t, index_t, double>>{
             {0, 0, 1.0}, {1, 1, 1.0}, {31, 33, 3.0}, {1000, 1000, 0.3}, {4097, 4097, 17.0}, {33, 10, 2.0}}) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      const Csr A = random_csr(rows, cols, mean, seed += 7);
      const auto op = make_csr_operator({A.rows, A.cols, static_cast<index_t>(A.colind.size()), A.rowptr.data(),
                                         A.colind.data(), A.values.data()},
                                        f, -1);
      const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(cols), seed + 1);
      DeviceBuffer<Scalar> dx = upload(x), dy(static_cast<std::size_t>(rows));
      poison(dy.data(), dy.size());
      op->apply(dx.data(), dy.data(), stream());
      const std::vector<Scalar> y = download(dy.data(), dy.size());
      for (index_t r = 0; r < rows; ++r) {
        Scalar ref = 0;
        double scale = 0;
        for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) {
          ref += A.values[j] * x[A.colind[j]];
          scale += std::abs(A.values[j] * x[A.colind[j]]);
        }
        ASSERT_LE(std::abs(y[r] - ref), ulps * (A.rowptr[r + 1] - A.rowptr[r] + 1) * eps * scale) << "row " << r;
      }
    }
}

TEST_F(DeviceOperators, InvalidCsrIsRejected)
{
  const std::vector<int> rowptr{0, 1, 2}, colind{0, 5};
  const std::vector<Scalar> values{1.0, 2.0};
  EXPECT_THROW(make_csr_operator({2, 2, 2, rowptr.data(), colind.data(), values.data()}, KernelFlavor::Custom, -1), Error);
}

/// y = 2 x through a user callback on the device, and the same on the host.
TEST_F(DeviceOperators, CallbackOperatorIsEquivalentToRef)
{
  for (index_t n : odd_sizes()) {
    const auto twice = [n](const Scalar *x, Scalar *y, void *s) {
      const auto stream = static_cast<cudaStream_t>(s);
      if (n) CUDALANCZOS_CHECK(cudaMemcpyAsync(y, x, n * sizeof(Scalar), cudaMemcpyDeviceToDevice, stream));
      kernels::scale(n, 2.0, y, stream);
    };
    BackendConfig config;
    config.local_size = config.global_size = n;
    auto cuda = make_cuda_backend(config, make_callback_operator(n, n, twice, "2 I", -1));
    HostBackend host(n, n, 0, [n](const Scalar *x, Scalar *y) {
      for (index_t i = 0; i < n; ++i) y[i] = 2.0 * x[i];
    });
    cuda->resize_basis(2);
    host.resize_basis(2);
    cuda->set_random(0, 5);
    host.set_random(0, 5);
    cuda->apply_operator(0, 1);
    host.apply_operator(0, 1);
    std::vector<Scalar> got(static_cast<std::size_t>(n));
    cuda->get_column(1, got.data());
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host.column(1)[i]);
  }
}

TEST_F(DeviceOperators, HostApplyFallbackIsEquivalentToRef)
{
  for (index_t n : odd_sizes()) {
    const Dense A = random_dense(n, n, n + 2, 9900 + n);
    BackendConfig config;
    config.local_size = config.global_size = n;
    auto cuda = make_cuda_backend(config, nullptr, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
    HostBackend host(n, n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
    cuda->resize_basis(3);
    host.resize_basis(3);
    for (int rep = 0; rep < 2; ++rep) { // twice: the pinned buffers are reused
      cuda->set_random(rep, 11 + rep);
      host.set_random(rep, 11 + rep);
      cuda->apply_operator(rep, 2);
      host.apply_operator(rep, 2);
      std::vector<Scalar> got(static_cast<std::size_t>(n));
      cuda->get_column(2, got.data());
      for (index_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host.column(2)[i]); // the same host function
    }
  }
}

TEST_F(DeviceOperators, MismatchedOperatorIsRejected)
{
  const Dense A = random_dense(10, 12, 10, 1);
  BackendConfig config;
  config.local_size = config.global_size = 10;
  EXPECT_THROW(make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1)), Error);
  EXPECT_THROW(make_cuda_backend(config, nullptr), Error);
}

/// y = A x for a host CSR matrix, and sum_j |a_ij x_j| (the scale of y_i) when `absolute`.
void csr_apply(const Csr &A, const Scalar *x, Scalar *y, bool absolute = false)
{
  for (index_t r = 0; r < A.rows; ++r) {
    Scalar s = 0;
    for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j)
      s += absolute ? Scalar(std::abs(A.values[j] * x[A.colind[j]])) : A.values[j] * x[A.colind[j]];
    y[r] = s;
  }
}
/// The same, sum_j |a_ij x_j| into doubles.
void csr_scale(const Csr &A, const Scalar *x, double *y)
{
  for (index_t r = 0; r < A.rows; ++r) {
    double s = 0;
    for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) s += std::abs(A.values[j] * x[A.colind[j]]);
    y[r] = s;
  }
}

/// op->apply_block on X (cols x b, leading dimension cols + 3) into a NaN-poisoned Y (rows x b, rows + 2),
/// against y = A x column by column on the host (`apply`, `scale` as csr_apply), within 2 (terms + 1)
/// eps of the scale; Y's padding rows stay untouched. The shapes change from call to call, b = 5 twice.
void expect_apply_block(const DeviceOperator &op, const std::function<void(const Scalar *, Scalar *, bool)> &apply,
                        index_t terms, cudaStream_t stream, std::uint64_t seed)
{
  const index_t rows = op.rows(), cols = op.cols(), ldx = cols + 3, ldy = rows + 2;
  for (int b : {5, 8, 1, 3, 12, 5}) { // block products chunk 8, 4, 2, 1 columns; the scratch grows, then is reused
    SCOPED_TRACE("b " + std::to_string(b));
    const std::vector<Scalar> X = random_vector(static_cast<std::size_t>(ldx * b), seed + b);
    DeviceBuffer<Scalar> dx = upload(X), dy(static_cast<std::size_t>(ldy * b));
    poison(dy.data(), dy.size());
    op.apply_block(dx.data(), ldx, dy.data(), ldy, b, stream);
    const std::vector<Scalar> Y = download(dy.data(), dy.size());
    std::vector<Scalar> ref(static_cast<std::size_t>(rows)), scale(ref.size());
    for (int j = 0; j < b; ++j) {
      apply(X.data() + j * ldx, ref.data(), false);
      apply(X.data() + j * ldx, scale.data(), true);
      for (index_t i = 0; i < rows; ++i)
        ASSERT_LE(std::abs(Y[i + j * ldy] - ref[i]), ulps * (terms + 1) * eps * real_part(scale[i])) << "row " << i << " column " << j;
      for (index_t i = rows; i < ldy; ++i) ASSERT_TRUE(is_nan(Y[i + j * ldy])) << "padding row " << i << " written";
    }
  }
}

TEST_F(DeviceOperators, DenseApplyBlockIsEquivalentToRef)
{
  std::uint64_t seed = 10000;
  for (KernelFlavor f : {KernelFlavor::Custom, KernelFlavor::Vendor})
    for (auto [rows, cols, ld] : std::vector<std::tuple<index_t, index_t, index_t>>{
             {0, 0, 1}, {1, 1, 1}, {31, 33, 35}, {33, 31, 33}, {1000, 1000, 1003}, {4097, 100, 4097}, {100, 4097, 101}, {5, 0, 5}}) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " ld " + std::to_string(ld));
      const Dense A = random_dense(rows, cols, ld, seed += 11);
      const auto op = make_dense_operator(A.view(), f, -1);
      const auto apply = [&A](const Scalar *x, Scalar *y, bool absolute) {
        if (!absolute) return A.apply(x, y);
        const std::vector<double> s = A.scale(x);
        std::copy(s.begin(), s.end(), y);
      };
      expect_apply_block(*op, apply, cols, stream(), seed);
    }
}

TEST_F(DeviceOperators, CsrApplyBlockIsEquivalentToRef)
{
  std::uint64_t seed = 10500;
  for (KernelFlavor f : {KernelFlavor::Custom, KernelFlavor::Vendor, KernelFlavor::Default}) // default: vendor SpMV (irregular rows), csr_spmm blocks
    for (auto [rows, cols, mean] : std::vector<std::tuple<index_t, index_t, double>>{
             {0, 0, 1.0}, {1, 1, 1.0}, {31, 33, 3.0}, {1000, 1000, 0.3}, {4097, 4097, 17.0}, {33, 10, 2.0}, {5, 9, 0.0}}) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      const Csr A = random_csr(rows, cols, mean, seed += 7);
      const auto op = make_csr_operator(csr_view(A), f, -1);
      expect_apply_block(
          *op, [&A](const Scalar *x, Scalar *y, bool absolute) { csr_apply(A, x, y, absolute); },
          longest_row_on_host(A.rowptr.data(), A.rows), stream(), seed);
    }
}

/// A's pattern with every off-diagonal value c, and diagonal(r) on the diagonal of each row r for
/// which it returns a number (the row's diagonal entry, if any, is dropped first; NaN: no diagonal).
Csr with_values(const Csr &A, double c, const std::function<double(index_t)> &diagonal)
{
  Csr B;
  B.rows = A.rows;
  B.cols = A.cols;
  for (index_t r = 0; r < A.rows; ++r) {
    const double d = diagonal(r);
    if (!std::isnan(d)) B.colind.push_back(static_cast<int>(r)), B.values.push_back(d);
    for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j)
      if (A.colind[j] != r) B.colind.push_back(A.colind[j]), B.values.push_back(c);
    B.rowptr.push_back(static_cast<int>(B.colind.size()));
  }
  return B;
}

bool uses_pattern(const DeviceOperator &op) { return op.description().find("pattern SpMV") != std::string::npos; }
bool takes_short_rows(const DeviceOperator &op) { return op.description().find("short rows") != std::string::npos; }

TEST_F(DeviceOperators, PatternCsrOperatorIsEquivalentToRef)
{
  // Off-diagonal values all equal: the default flavor drops the values (kernels::pattern_spmv). Lane
  // counts 1..32 (mean row lengths), empty rows, repeated off-diagonal entries (they add), and the
  // three diagonals: none, one value, a vector (some rows without one).
  std::uint64_t seed = 11500;
  const auto none = [](index_t) { return nan; };
  const auto four = [](index_t) { return 4.0; };
  const auto mixed = [](index_t r) { return r % 3 == 0 ? nan : 1.5 + r % 5; };
  std::vector<std::pair<std::string, Csr>> cases{{"laplacian", laplacian(33)},
                                                 {"chung-lu", chung_lu(20011, 16, 5)},
                                                 {"laplacian, varying diagonal", with_values(laplacian(31), -1, mixed)}};
  for (index_t rows : {1, 31, 4097})
    for (double mean : {0.5, 3.0, 12.0, 40.0}) {
      const Csr R = random_csr(rows, rows, mean, seed += 7);
      cases.emplace_back("random " + std::to_string(rows) + " mean " + std::to_string(mean) + " no diagonal",
                         with_values(R, 0.75, none));
      cases.emplace_back("random " + std::to_string(rows) + " mean " + std::to_string(mean) + " diagonal 4",
                         with_values(R, -2.0, four));
      cases.emplace_back("random " + std::to_string(rows) + " mean " + std::to_string(mean) + " diagonal vector",
                         with_values(R, 1.0, mixed));
    }
  for (const auto &[name, A] : cases) {
    SCOPED_TRACE(name);
    const auto op = make_csr_operator(csr_view(A), KernelFlavor::Default, -1);
    bool has_offdiagonal = false;
    for (index_t r = 0; r < A.rows; ++r)
      for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) has_offdiagonal |= A.colind[j] != r;
    EXPECT_EQ(uses_pattern(*op), has_offdiagonal) << op->description();
    const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(A.cols), seed + 1);
    DeviceBuffer<Scalar> dx = upload(x), dy(static_cast<std::size_t>(A.rows));
    poison(dy.data(), dy.size());
    op->apply(dx.data(), dy.data(), stream());
    const std::vector<Scalar> y = download(dy.data(), dy.size());
    std::vector<Scalar> ref(static_cast<std::size_t>(A.rows)), scale(ref.size());
    csr_apply(A, x.data(), ref.data());
    csr_apply(A, x.data(), scale.data(), true);
    for (index_t r = 0; r < A.rows; ++r)
      ASSERT_LE(std::abs(y[r] - ref[r]), ulps * (A.rowptr[r + 1] - A.rowptr[r] + 1) * eps * real_part(scale[r])) << "row " << r;
    expect_apply_block(
        *op, [&A](const Scalar *xx, Scalar *yy, bool absolute) { csr_apply(A, xx, yy, absolute); },
        longest_row_on_host(A.rowptr.data(), A.rows), stream(), seed);
  }
}

TEST_F(DeviceOperators, OnlyUniformSquareCsrUsesThePatternKernel)
{
  const Csr L = laplacian(9);
  const auto pattern = [](const Csr &A, KernelFlavor f = KernelFlavor::Default) {
    return uses_pattern(*make_csr_operator(csr_view(A), f, -1));
  };
  EXPECT_TRUE(pattern(L));
  EXPECT_FALSE(pattern(L, KernelFlavor::Vendor)) << "an explicit flavor is obeyed";
  EXPECT_FALSE(pattern(L, KernelFlavor::Custom));
  Csr two = L; // one off-diagonal value different
  for (int j = two.rowptr[40]; j < two.rowptr[41]; ++j)
    if (two.colind[j] != 40) two.values[j] = -1.0000000000000002;
  EXPECT_FALSE(pattern(two));
  Csr zeros = with_values(L, 0.0, [](index_t) { return 4.0; }); // 0.0 and -0.0 differ: general kernels
  zeros.values[1] = -0.0;
  EXPECT_FALSE(pattern(zeros));
  Csr twice = L; // a second entry on the diagonal of row 0 (entries add)
  twice.colind.insert(twice.colind.begin(), 0);
  twice.values.insert(twice.values.begin(), 1.0);
  for (std::size_t r = 1; r < twice.rowptr.size(); ++r) ++twice.rowptr[r];
  EXPECT_FALSE(pattern(twice));
  EXPECT_FALSE(pattern(with_values(L, -1.0, [](index_t) { return 4.0; }), KernelFlavor::Vendor));
  Csr empty;
  empty.rows = empty.cols = 9;
  empty.rowptr.assign(10, 0);
  EXPECT_FALSE(pattern(with_values(empty, 1.0, [](index_t) { return 2.0; }))) << "diagonal only";
  EXPECT_FALSE(pattern(with_values(random_csr(40, 30, 3.0, 4), 1.0, [](index_t) { return nan; }))) << "not square";
}

// --- operators on the caller's device memory, used in place (make_*_operator_on_device) ---

/// A CSR matrix's arrays on the device, and the view of them.
bool says_in_place(const DeviceOperator &op) { return op.description().find("used in place") != std::string::npos; }

/// op->apply on a random x against `apply` on the host, within 2 (terms + 1) eps of the scale.
void expect_apply(const DeviceOperator &op, const std::function<void(const Scalar *, Scalar *, bool)> &apply, index_t terms,
                  cudaStream_t stream, std::uint64_t seed)
{
  const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(op.cols()), seed);
  DeviceBuffer<Scalar> dx = upload(x), dy(static_cast<std::size_t>(op.rows()));
  poison(dy.data(), dy.size());
  op.apply(dx.data(), dy.data(), stream);
  const std::vector<Scalar> y = download(dy.data(), dy.size());
  std::vector<Scalar> ref(y.size()), scale(y.size());
  apply(x.data(), ref.data(), false);
  apply(x.data(), scale.data(), true);
  for (index_t i = 0; i < op.rows(); ++i)
    ASSERT_LE(std::abs(y[i] - ref[i]), ulps * (terms + 1) * eps * real_part(scale[i])) << "row " << i << " y " << y[i] << " ref " << ref[i];
}

/// expect_apply (seed) and expect_apply_block (seed + 1) of an operator on the CSR matrix A against A's
/// products on the host.
void expect_csr_products(const DeviceOperator &op, const Csr &A, cudaStream_t stream, std::uint64_t seed)
{
  const index_t longest = longest_row_on_host(A.rowptr.data(), A.rows);
  const auto apply = [&A](const Scalar *x, Scalar *y, bool absolute) { csr_apply(A, x, y, absolute); };
  expect_apply(op, apply, longest, stream, seed);
  if (::testing::Test::HasFatalFailure()) return;
  expect_apply_block(op, apply, longest, stream, seed + 1);
}

TEST_F(DeviceOperators, DenseOperatorOnDeviceIsEquivalentToRef)
{
  // Leading dimensions that are and are not multiples of 16 (PETSc's is the row count by default); the
  // padding rows hold NaN, so a kernel that read them would fail.
  std::uint64_t seed = 12000;
  for (KernelFlavor f : {KernelFlavor::Default, KernelFlavor::Custom, KernelFlavor::Vendor})
    for (auto [rows, cols, ld] : std::vector<std::tuple<index_t, index_t, index_t>>{{0, 0, 1},
                                                                                     {1, 1, 1},
                                                                                     {31, 33, 35},
                                                                                     {33, 31, 33},
                                                                                     {40, 37, 48},
                                                                                     {1000, 1000, 1003},
                                                                                     {1000, 999, 1008},
                                                                                     {4097, 100, 4097},
                                                                                     {100, 4097, 101},
                                                                                     {5, 0, 5}}) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " ld " + std::to_string(ld));
      Dense A = random_dense(rows, cols, ld, seed += 11);
      const DeviceBuffer<Scalar> dA = upload(A.a);
      const auto op = make_dense_operator_on_device({rows, cols, ld, dA.data()}, f, -1);
      EXPECT_EQ(op->rows(), rows);
      EXPECT_EQ(op->cols(), cols);
      EXPECT_TRUE(op->in_place());
      EXPECT_TRUE(says_in_place(*op)) << op->description();
      // The default takes the custom gemv on our own layout only (cudaMalloc'd: 256-byte aligned).
      const bool custom = f == KernelFlavor::Custom || (f == KernelFlavor::Default && ld % 16 == 0);
      EXPECT_EQ(op->description().find("custom tiled gemv") != std::string::npos, custom) << op->description();
      if (f == KernelFlavor::Default && !custom) {
        EXPECT_NE(op->description().find("leading dimension " + std::to_string(ld)), std::string::npos) << op->description();
      }
      // Its own scratch only: the custom gemv's workspace, or nothing (cuBLAS).
      EXPECT_EQ(op->device_bytes(), custom ? kernels::dense_gemv_workspace_bytes(rows, cols) : 0u);
      const auto apply = [&A](const Scalar *x, Scalar *y, bool absolute) {
        if (!absolute) return A.apply(x, y);
        const std::vector<double> sc = A.scale(x);
        std::copy(sc.begin(), sc.end(), y);
      };
      expect_apply(*op, apply, cols, stream(), seed + 1);
      if (HasFatalFailure()) return;
      expect_apply_block(*op, apply, cols, stream(), seed + 2);
      if (HasFatalFailure()) return;
      // Nothing was copied: the product reads the caller's memory. (Callers must not change it under an
      // operator; the dense kernels keep nothing derived from the values, so here it shows the reads.)
      A = random_dense(rows, cols, ld, seed + 3);
      if (!A.a.empty())
        CUDALANCZOS_CHECK(cudaMemcpy(dA.data(), A.a.data(), A.a.size() * sizeof(Scalar), cudaMemcpyHostToDevice));
      wait_default_stream();
      expect_apply(*op, apply, cols, stream(), seed + 4);
      if (HasFatalFailure()) return;
    }
}

TEST_F(DeviceOperators, CsrOperatorOnDeviceIsEquivalentToRef)
{
  std::uint64_t seed = 12500;
  std::vector<std::pair<std::string, Csr>> cases{{"laplacian", laplacian(33)}}; // uniform: no pattern kernel in place
  for (auto [rows, cols, mean] : std::vector<std::tuple<index_t, index_t, double>>{
           {0, 0, 1.0}, {1, 1, 1.0}, {31, 33, 3.0}, {1000, 1000, 0.3}, {4097, 4097, 17.0}, {33, 10, 2.0}, {5, 9, 0.0}})
    cases.emplace_back("random " + std::to_string(rows) + "x" + std::to_string(cols), random_csr(rows, cols, mean, seed += 7));
  for (KernelFlavor f : {KernelFlavor::Default, KernelFlavor::Custom, KernelFlavor::Vendor})
    for (auto &[name, A] : cases) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + name);
      const DeviceCsr d = to_device(A);
      const auto op = make_csr_operator_on_device(d.view, f, -1);
      EXPECT_EQ(op->rows(), A.rows);
      EXPECT_EQ(op->cols(), A.cols);
      EXPECT_TRUE(op->in_place());
      EXPECT_TRUE(says_in_place(*op)) << op->description();
      EXPECT_FALSE(uses_pattern(*op)) << op->description();
      EXPECT_EQ(op->description().find("custom vector-per-row SpMV") != std::string::npos, f == KernelFlavor::Custom)
          << op->description();
      // The default flavor's short-row rule sees the same rows in place as in a copy.
      const bool short_rows = takes_short_rows(*op);
      EXPECT_EQ(short_rows, f == KernelFlavor::Default && name == "laplacian") << op->description();
      // Its own scratch only: the uploaded operator's bytes less the matrix (the same cuSPARSE buffers, or
      // none for the custom kernel). A copy with the default flavor would drop the laplacian's values.
      const KernelFlavor copied = f != KernelFlavor::Default ? f : short_rows ? KernelFlavor::Custom : KernelFlavor::Vendor;
      const auto copy = make_csr_operator(csr_view(A), copied, -1);
      const std::size_t matrix_bytes = (A.rowptr.size() + A.colind.size()) * sizeof(int) + A.values.size() * sizeof(Scalar);
      EXPECT_EQ(op->device_bytes() + matrix_bytes, copy->device_bytes());
      expect_csr_products(*op, A, stream(), seed + 1);
      if (HasFatalFailure()) return;
      if (f == KernelFlavor::Custom) { // nothing copied: new values in the caller's array are what the kernel reads
        for (Scalar &v : A.values) v = -2.0 * v + 0.5;
        if (!A.values.empty())
          CUDALANCZOS_CHECK(cudaMemcpy(d.values.data(), A.values.data(), A.values.size() * sizeof(Scalar), cudaMemcpyHostToDevice));
        wait_default_stream();
        expect_apply(*op, [&A](const Scalar *x, Scalar *y, bool absolute) { csr_apply(A, x, y, absolute); },
                     longest_row_on_host(A.rowptr.data(), A.rows), stream(), seed + 3);
        if (HasFatalFailure()) return;
      }
    }
}

TEST_F(DeviceOperators, WideIndexOperatorsOnDeviceAreEquivalentToRef)
{
  // 64-bit indices (a PETSc configured --with-64-bit-indices): narrowed on the device into the operator's
  // own arrays, the values still read in place. Each product against the host's, and the same operator as
  // on 32-bit indices: its kernels, and its scratch plus the narrowed indices in device_bytes().
  std::uint64_t seed = 12900;
  std::vector<std::pair<std::string, Csr>> cases{{"laplacian", laplacian(33)}};
  for (auto [rows, cols, mean] : std::vector<std::tuple<index_t, index_t, double>>{
           {0, 0, 1.0}, {1, 1, 1.0}, {31, 33, 3.0}, {4097, 4097, 17.0}, {5, 9, 0.0}})
    cases.emplace_back("random " + std::to_string(rows) + "x" + std::to_string(cols), random_csr(rows, cols, mean, seed += 7));
  for (KernelFlavor f : {KernelFlavor::Default, KernelFlavor::Custom, KernelFlavor::Vendor})
    for (auto &[name, A] : cases) {
      SCOPED_TRACE(std::string(to_string(f)) + " " + name);
      const WideDeviceCsr wide = to_device_wide(A);
      const DeviceCsr narrow = to_device(A);
      const auto op = make_csr_operator_on_device(wide.view, f, -1);
      const auto ref = make_csr_operator_on_device(narrow.view, f, -1);
      EXPECT_TRUE(op->in_place());
      EXPECT_NE(op->description().find("the 64-bit indices narrowed to 32 bits"), std::string::npos) << op->description();
      EXPECT_EQ(takes_short_rows(*op), takes_short_rows(*ref)) << op->description();
      const std::size_t index_bytes = (A.rowptr.size() + A.colind.size()) * sizeof(int);
      EXPECT_EQ(op->device_bytes(), ref->device_bytes() + index_bytes);
      expect_csr_products(*op, A, stream(), seed + 1);
      if (HasFatalFailure()) return;
    }
  // The pattern split from 64-bit indices: the same split as from 32-bit ones, and none where there is none.
  const Csr L = laplacian(17);
  const WideDeviceCsr wL = to_device_wide(L);
  const auto pattern = make_pattern_operator_on_device(wL.view, -1);
  ASSERT_NE(pattern, nullptr);
  EXPECT_TRUE(uses_pattern(*pattern)) << pattern->description();
  const DeviceCsr nL = to_device(L);
  EXPECT_EQ(pattern->device_bytes(), make_pattern_operator_on_device(nL.view, -1)->device_bytes());
  expect_csr_products(*pattern, L, stream(), seed + 3);
  const Csr R = random_csr(40, 40, 3.0, seed + 4);
  EXPECT_EQ(make_pattern_operator_on_device(to_device_wide(R).view, -1), nullptr);
  // More entries than 32-bit indices reach on one process: an error before any array is read.
  WideCsrView huge = wL.view;
  huge.nnz = index_t(1) << 31;
  EXPECT_THROW(make_csr_operator_on_device(huge, KernelFlavor::Default, -1), Error);
  EXPECT_THROW(make_pattern_operator_on_device(huge, -1), Error);
  huge = wL.view;
  huge.colind = reinterpret_cast<const std::int64_t *>(L.colind.data()); // host memory
  EXPECT_THROW(make_csr_operator_on_device(huge, KernelFlavor::Custom, -1), Error);
}

TEST_F(DeviceOperators, ShortRegularRowsTakeTheCustomKernel)
{
  // The default flavor takes the custom CSR kernel at kernels::pattern_lanes' count where rows hold at
  // most 8 entries on average and none more than 4 times that (a stencil with values that differ: the
  // pattern kernel does not apply), uploaded or in place, and cuSPARSE otherwise; its block products take
  // kernels::csr_block_lanes' count. An explicit flavor is obeyed. Each product is checked against the host's.
  std::uint64_t seed = 9700;
  Csr stencil = magnetic_laplacian(37, 0.3);
  for (std::size_t e = 0; e < stencil.values.size(); ++e) stencil.values[e] *= 1.0 + 0.25 * random_entry(seed, static_cast<std::int64_t>(e));
  Csr long_row = stencil; // one row of 40 entries: longer than 4 times the mean of about 5
  {
    Csr L;
    L.rows = L.cols = long_row.rows;
    for (index_t r = 0; r < long_row.rows; ++r) {
      for (int j = long_row.rowptr[r]; j < long_row.rowptr[r + 1]; ++j)
        if (r != 7 || long_row.colind[j] < 40) L.colind.push_back(long_row.colind[j]), L.values.push_back(long_row.values[j]);
      if (r == 7)
        for (int c = 40; c < 80; ++c) L.colind.push_back(c), L.values.push_back(random_scalar(seed + 1, c));
      L.rowptr.push_back(static_cast<int>(L.colind.size()));
    }
    long_row = L;
  }
  const Csr dense_rows = random_csr(500, 500, 12.0, seed + 2); // 12 a row on average
  const struct {
    const char *name;
    const Csr &A;
    bool short_rows;
  } cases[] = {{"stencil", stencil, true}, {"stencil with a long row", long_row, false}, {"12 a row", dense_rows, false}};
  for (const auto &c : cases)
    for (bool in_place : {false, true})
      for (KernelFlavor f : {KernelFlavor::Default, KernelFlavor::Custom, KernelFlavor::Vendor}) {
        SCOPED_TRACE(std::string(c.name) + (in_place ? ", in place, " : ", uploaded, ") + to_string(f));
        const DeviceCsr d = to_device(c.A);
        const auto op = in_place ? make_csr_operator_on_device(d.view, f, -1) : make_csr_operator(csr_view(c.A), f, -1);
        EXPECT_EQ(takes_short_rows(*op), c.short_rows && f == KernelFlavor::Default) << op->description();
        if (takes_short_rows(*op)) {
          EXPECT_NE(op->description().find("custom SpMV, 1 lane a row"), std::string::npos) << op->description();
        }
        // Block products: csr_block_lanes' count for the default flavor, csr_spmm's own rule otherwise.
        const std::string block_lanes =
            "block products at " + std::to_string(cudalanczos::cuda::kernels::csr_block_lanes(c.A.rows, c.A.rowptr.back()));
        EXPECT_EQ(op->description().find(block_lanes) != std::string::npos, f == KernelFlavor::Default) << op->description();
        expect_csr_products(*op, c.A, stream(), seed + 3);
        if (HasFatalFailure()) return;
      }
}

TEST_F(DeviceOperators, OnDeviceOperatorsRejectHostMemory)
{
  const Dense A = random_dense(9, 9, 9, 1);
  const Csr S = laplacian(3);
  EXPECT_THROW(make_dense_operator_on_device(A.view(), KernelFlavor::Custom, -1), Error);
  EXPECT_THROW(make_csr_operator_on_device(csr_view(S), KernelFlavor::Vendor, -1), Error);
  DeviceCsr d = to_device(S);
  CsrView mixed = d.view;
  mixed.values = S.values.data(); // one host array among device ones
  EXPECT_THROW(make_csr_operator_on_device(mixed, KernelFlavor::Custom, -1), Error);
  CsrView bad = d.view;
  bad.nnz = -1;
  EXPECT_THROW(make_csr_operator_on_device(bad, KernelFlavor::Custom, -1), Error);
  EXPECT_THROW(make_dense_operator_on_device({9, 9, 8, d.values.data()}, KernelFlavor::Custom, -1), Error); // ld < rows
  int current = -1;
  CUDALANCZOS_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(device_of(d.values.data()), current);
  EXPECT_EQ(device_of(S.values.data()), -1);
  EXPECT_EQ(device_of(nullptr), -1);
}

TEST_F(DeviceOperators, ApplyBlockBadArgumentsThrow)
{
  const Dense A = random_dense(9, 9, 9, 1);
  const Csr S = laplacian(3); // 9 x 9
  DeviceBuffer<Scalar> x(9 * 3), y(9 * 3);
  for (KernelFlavor f : {KernelFlavor::Custom, KernelFlavor::Vendor})
    for (const auto &op : {make_dense_operator(A.view(), f, -1), make_csr_operator(csr_view(S), f, -1),
                           make_callback_operator(9, 9, [](const Scalar *, Scalar *, void *) {}, "nothing", -1)}) {
      SCOPED_TRACE(op->description());
      EXPECT_THROW(op->apply_block(x.data(), 8, y.data(), 9, 3, stream()), Error); // ldx < cols
      EXPECT_THROW(op->apply_block(x.data(), 9, y.data(), 8, 3, stream()), Error); // ldy < rows
      EXPECT_THROW(op->apply_block(x.data(), 9, y.data(), 9, -1, stream()), Error);
      EXPECT_NO_THROW(op->apply_block(x.data(), 9, y.data(), 9, 0, stream()));
    }
}

/// apply_operator_block through the backend, for every kind of operator: dense and CSR (both flavors),
/// a callback (the default loop) and the host-apply fallback; the reference is the host backend.
TEST_F(DeviceOperators, ApplyOperatorBlockIsEquivalentToRef)
{
  constexpr int kCols = 17;
  for (index_t n : odd_sizes()) {
    const Dense A = random_dense(n, n, n + 1, 11000 + n, true);
    // (cuSPARSE refuses more entries than rows x cols, which random_csr's repeated columns can give on tiny sizes)
    const Csr S = random_csr(n, n, n < 8 ? 0.2 : 3.0, 11500 + n);
    const auto dense = [&A](const Scalar *x, Scalar *y) { A.apply(x, y); };
    const auto sparse = [&S](const Scalar *x, Scalar *y) { csr_apply(S, x, y); };
    const auto twice_host = [n](const Scalar *x, Scalar *y) {
      for (index_t i = 0; i < n; ++i) y[i] = 2.0 * x[i];
    };
    const auto twice = [n](const Scalar *x, Scalar *y, void *s) {
      const auto stream = static_cast<cudaStream_t>(s);
      if (n) CUDALANCZOS_CHECK(cudaMemcpyAsync(y, x, n * sizeof(Scalar), cudaMemcpyDeviceToDevice, stream));
      kernels::scale(n, 2.0, y, stream);
    };
    struct Case {
      std::string name;
      std::shared_ptr<const DeviceOperator> op; // null: the host-apply fallback
      HostApply host;
    };
    const DeviceBuffer<Scalar> dA = upload(A.a); // the in-place operators' matrices (leading dimension n + 1)
    const DeviceCsr dS = to_device(S);
    const std::vector<Case> cases{
        {"dense custom", make_dense_operator(A.view(), KernelFlavor::Custom, -1), dense},
        {"dense vendor", make_dense_operator(A.view(), KernelFlavor::Vendor, -1), dense},
        {"dense custom in place", make_dense_operator_on_device({n, n, n + 1, dA.data()}, KernelFlavor::Custom, -1), dense},
        {"dense default in place", make_dense_operator_on_device({n, n, n + 1, dA.data()}, KernelFlavor::Default, -1), dense},
        {"CSR custom", make_csr_operator(csr_view(S), KernelFlavor::Custom, -1), sparse},
        {"CSR vendor", make_csr_operator(csr_view(S), KernelFlavor::Vendor, -1), sparse},
        {"CSR custom in place", make_csr_operator_on_device(dS.view, KernelFlavor::Custom, -1), sparse},
        {"CSR default in place", make_csr_operator_on_device(dS.view, KernelFlavor::Default, -1), sparse},
        {"callback", make_callback_operator(n, n, twice, "2 I", -1), twice_host},
        {"host fallback", nullptr, dense}};
    for (const Case &c : cases) {
      SCOPED_TRACE(c.name + " n " + std::to_string(n));
      BackendConfig config;
      config.local_size = config.global_size = n;
      auto cuda = c.op ? make_cuda_backend(config, c.op) : make_cuda_backend(config, nullptr, c.host);
      HostBackend host(n, n, 0, c.host);
      cuda->resize_basis(kCols);
      host.resize_basis(kCols);
      for (int j = 0; j < kCols; ++j) {
        host.set_random(j, 300 + j);
        cuda->set_random(j, 300 + j);
      }
      for (auto [src, dst, b] : std::vector<std::tuple<int, int, int>>{{0, 8, 5}, {9, 0, 8}, {16, 3, 1}, {1, 9, 8}}) {
        SCOPED_TRACE("src " + std::to_string(src) + " dst " + std::to_string(dst) + " b " + std::to_string(b));
        host.apply_operator_block(src, dst, b);
        cuda->apply_operator_block(src, dst, b);
        std::vector<Scalar> got(static_cast<std::size_t>(n));
        for (int j = 0; j < b; ++j) {
          // scale: the dense product's |A| |x| bounds the CSR one too (its rows are at most n + 60 long)
          const std::vector<Scalar> x = [&] {
            std::vector<Scalar> v(static_cast<std::size_t>(n));
            cuda->get_column(src + j, v.data());
            return v;
          }();
          std::vector<double> scale(static_cast<std::size_t>(n));
          if (c.name.rfind("CSR", 0) == 0)
            csr_scale(S, x.data(), scale.data());
          else
            scale = A.scale(x.data());
          if (c.name == "callback")
            for (index_t i = 0; i < n; ++i) scale[i] = 2 * std::abs(x[i]);
          cuda->get_column(dst + j, got.data());
          const Scalar *ref = host.column(dst + j);
          for (index_t i = 0; i < n; ++i)
            ASSERT_LE(std::abs(got[i] - ref[i]), ulps * (n + 64) * eps * scale[i]) << "column " << dst + j << " row " << i;
        }
        // Make both bases equal again for the next case (the sources of later cases include these columns).
        for (int j = 0; j < b; ++j) cuda->set_column(dst + j, host.column(dst + j));
      }
    }
  }
}

/// apply_to_columns: a second operator (a generalized problem's B) on the basis of a backend whose own
/// operator is another one, a device operator or the host-apply fallback (STApply on the host, B on the
/// device): column for column the host product, unscaled by set_operator_scale, and a B that does not fit
/// the backend, or a backend that is not a CUDA one, is an Error.
TEST_F(DeviceOperators, ApplyToColumnsIsEquivalentToRef)
{
  constexpr int kCols = 9;
  for (index_t n : odd_sizes()) {
    const Dense A = random_dense(n, n, n + 1, 14000 + n, true);
    const Csr S = random_csr(n, n, n < 8 ? 0.2 : 3.0, 14500 + n);
    const auto dense = [&A](const Scalar *x, Scalar *y) { A.apply(x, y); };
    const DeviceCsr dS = to_device(S);
    const DeviceBuffer<Scalar> dA = upload(A.a);
    const std::vector<std::pair<std::string, std::shared_ptr<const DeviceOperator>>> bs{
        {"CSR default", make_csr_operator(csr_view(S), KernelFlavor::Default, -1)},
        {"CSR custom", make_csr_operator(csr_view(S), KernelFlavor::Custom, -1)},
        {"CSR default in place", make_csr_operator_on_device(dS.view, KernelFlavor::Default, -1)},
        {"dense default in place", make_dense_operator_on_device({n, n, n + 1, dA.data()}, KernelFlavor::Default, -1)}};
    for (bool fallback : {false, true}) {
      BackendConfig config;
      config.local_size = config.global_size = n;
      auto cuda = fallback ? make_cuda_backend(config, nullptr, dense) : make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Default, -1));
      cuda->resize_basis(kCols);
      cuda->set_operator_scale(fallback ? -3 : 5); // the solve's operator only
      for (const auto &[name, B] : bs) {
        SCOPED_TRACE(name + (fallback ? ", host-apply backend" : ", device-operator backend") + ", n " + std::to_string(n));
        const bool sparse = name.rfind("CSR", 0) == 0;
        for (int j = 0; j < kCols; ++j) cuda->set_random(j, 700 + j);
        for (auto [src, dst] : std::vector<std::pair<int, int>>{{0, 8}, {8, 0}, {3, 4}}) {
          std::vector<Scalar> x(static_cast<std::size_t>(n)), got(static_cast<std::size_t>(n)), ref(static_cast<std::size_t>(n));
          cuda->get_column(src, x.data());
          apply_to_columns(*cuda, *B, src, dst);
          cuda->get_column(dst, got.data());
          std::vector<double> scale(static_cast<std::size_t>(n));
          if (sparse) {
            csr_apply(S, x.data(), ref.data());
            csr_scale(S, x.data(), scale.data());
          } else {
            A.apply(x.data(), ref.data());
            scale = A.scale(x.data());
          }
          for (index_t i = 0; i < n; ++i)
            ASSERT_LE(std::abs(got[i] - ref[i]), ulps * (n + 64) * eps * scale[i]) << "src " << src << " dst " << dst << " row " << i;
        }
        EXPECT_THROW(apply_to_columns(*cuda, *B, 2, 2), Error);
        EXPECT_THROW(apply_to_columns(*cuda, *B, 0, kCols), Error);
      }
      const Dense W = random_dense(n + 1, n + 1, n + 1, 14900 + n, true);
      EXPECT_THROW(apply_to_columns(*cuda, *make_dense_operator(W.view(), KernelFlavor::Default, -1), 0, 1), Error);
    }
    HostBackend host(n, n, 0, dense);
    host.resize_basis(2);
    EXPECT_THROW(apply_to_columns(host, *bs.front().second, 0, 1), Error);
  }
}

/// set_operator_scale(e) on every kind of operator, single columns and blocks: the product is the unscaled
/// one times 2^e (backend.hpp). e > 0 scales the input up before the product and restores it: bit for
/// bit. e < 0 scales the output down: bit for bit, entries below 2^-1022 rounded to a subnormal as
/// ldexp rounds them (allowed 2^-1074, should a device flush them). The sources are left as they were.
TEST_F(DeviceOperators, ScaledApplyOperatorIsEquivalentToRef)
{
  constexpr int kCols = 16;
  for (index_t n : odd_sizes()) {
    const Dense A = random_dense(n, n, n + 1, 13000 + n, true);
    const Csr S = random_csr(n, n, n < 8 ? 0.2 : 3.0, 13500 + n);
    const auto dense = [&A](const Scalar *x, Scalar *y) { A.apply(x, y); };
    const auto twice = [n](const Scalar *x, Scalar *y, void *s) {
      const auto stream = static_cast<cudaStream_t>(s);
      if (n) CUDALANCZOS_CHECK(cudaMemcpyAsync(y, x, n * sizeof(Scalar), cudaMemcpyDeviceToDevice, stream));
      kernels::scale(n, 2.0, y, stream);
    };
    const std::vector<std::pair<std::string, std::shared_ptr<const DeviceOperator>>> ops{
        {"dense custom", make_dense_operator(A.view(), KernelFlavor::Custom, -1)},
        {"dense vendor", make_dense_operator(A.view(), KernelFlavor::Vendor, -1)},
        {"CSR custom", make_csr_operator(csr_view(S), KernelFlavor::Custom, -1)},
        {"CSR default", make_csr_operator(csr_view(S), KernelFlavor::Default, -1)},
        {"CSR vendor", make_csr_operator(csr_view(S), KernelFlavor::Vendor, -1)},
        {"callback", make_callback_operator(n, n, twice, "2 I", -1)},
        {"host fallback", nullptr}};
    for (const auto &[name, op] : ops)
      for (KernelFlavor vectors : {KernelFlavor::Custom, KernelFlavor::Vendor})
        for (int e : {-1000, -257, 256, 1000}) {
          SCOPED_TRACE(name + ", vector kernels " + to_string(vectors) + ", n " + std::to_string(n) + ", 2^" + std::to_string(e));
          BackendConfig config;
          config.local_size = config.global_size = n;
          config.flavor = vectors;
          auto cuda = op ? make_cuda_backend(config, op) : make_cuda_backend(config, nullptr, dense);
          cuda->resize_basis(kCols);
          for (int j = 0; j < kCols; ++j) cuda->set_random(j, 400 + j);
          const auto sources = columns(*cuda);
          // Unscaled into columns 1 and 8..12, scaled into 2 and 13..15 + ... (blocks of 3 and 5).
          cuda->apply_operator(0, 1);
          cuda->apply_operator_block(3, 8, 5);
          cuda->set_operator_scale(e);
          cuda->apply_operator(0, 2);
          cuda->apply_operator_block(3, 13, 3);
          cuda->set_operator_scale(0);
          const auto got = columns(*cuda);
          for (int j : {0, 3, 4, 5, 6, 7}) ASSERT_TRUE(got[j] == sources[j]) << "source column " << j << " changed";
          // cuSPARSE does not promise the same summation order from call to call, nor do the dense
          // products (on an H200 the block products of both dense flavors differed in the last bit
          // between the scaled and the plain call, n = 4097): those within rounding of |A| |x|, every
          // other product bit for bit.
          const bool dense = name.rfind("dense", 0) == 0;
          const bool exact = !dense && (name.rfind("CSR", 0) != 0 || name == "CSR custom");
          const auto expect_scaled = [&](int scaled, int plain, int src) {
            std::vector<double> mag(static_cast<std::size_t>(n), 0.0);
            if (dense) mag = A.scale(sources[src].data());
            else if (!exact) csr_scale(S, sources[src].data(), mag.data());
            for (index_t i = 0; i < n; ++i) {
              const Scalar want = make_scalar(std::ldexp(real_part(got[plain][i]), e), std::ldexp(imag_part(got[plain][i]), e));
              const double tol = exact ? 0.0 : std::ldexp(ulps * (n + 64) * eps * mag[i], e);
              ASSERT_LE(std::abs(got[scaled][i] - want), std::max(tol, std::numeric_limits<double>::denorm_min() * (e < 0)))
                  << "column " << scaled << " row " << i << ": " << got[scaled][i] << " vs " << want;
            }
          };
          expect_scaled(2, 1, 0);
          for (int j = 0; j < 3; ++j) expect_scaled(13 + j, 8 + j, 3 + j);
        }
    // The scale is checked like every argument.
    BackendConfig config;
    config.local_size = config.global_size = n;
    auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
    EXPECT_THROW(cuda->set_operator_scale(kMaxScaleExponent + 1), Error);
    EXPECT_THROW(cuda->set_operator_scale(-kMaxScaleExponent - 1), Error);
  }
}

// --- a polynomial filter of the operator: set_operator_filter ---

/// A Chebyshev filter by hand: the interval [center - half_width, center + half_width] and coefficients
/// in [-1, 1) (the last one at least 1/2 in size, so that the degree counts).
ChebyshevFilter test_filter(double center, double half_width, int degree, std::uint64_t seed)
{
  ChebyshevFilter f;
  f.center = center;
  f.half_width = half_width;
  for (int k = 0; k <= degree; ++k) f.coef.push_back(random_entry(seed, k));
  f.coef.back() = f.coef.back() < 0 ? f.coef.back() - 0.5 : f.coef.back() + 0.5;
  return f;
}

double norm2(const std::vector<Scalar> &v)
{
  double s = 0;
  for (const Scalar &x : v) s += std::norm(x);
  return std::sqrt(s);
}

/// One operator for FilteredApplyIsEquivalentToRef: a device operator (null: the host-apply fallback) with
/// its host product, the vector kernels (Custom: expand's steps on the device; Vendor: Backend::expand), an
/// interval holding the spectrum, the longest row (the products' rounding), and whether a product repeats
/// bit for bit (cuBLAS and cuSPARSE do not promise it: ScaledApplyOperatorIsEquivalentToRef).
struct FilterCase {
  std::string name;
  std::shared_ptr<const DeviceOperator> op;
  HostApply host;
  KernelFlavor vectors;
  double center, half_width;
  index_t row;
  bool exact;
};

/// Both backends' columns j within tol of each other in the 2-norm.
void expect_near_columns(const Backend &cuda, const HostBackend &host, int j, double tol)
{
  std::vector<Scalar> got(static_cast<std::size_t>(host.local_size()));
  cuda.get_column(j, got.data());
  for (std::size_t i = 0; i < got.size(); ++i) got[i] -= host.column(j)[i];
  EXPECT_LE(norm2(got), tol) << "column " << j;
}

/// A few Lanczos steps (expand) on both backends from the same unit vector, with the filter set: the same
/// alpha and beta to rounding, up to a near-breakdown (where v_{j+1} is noise, different on each).
void expect_filtered_steps(Backend &cuda, HostBackend &host, const ChebyshevFilter &f, double tol)
{
  const int m = static_cast<int>(std::min<index_t>(host.local_size() - 1, 6));
  if (m < 1) return;
  host.set_column(0, random_vector(static_cast<std::size_t>(host.local_size()), 4100).data());
  Scalar q = 0;
  host.project(0, 0, 0, &q);
  host.scale(0, 1 / std::sqrt(real_part(q)));
  cuda.set_column(0, host.column(0));
  std::vector<StepRecord> ref(m), got(m);
  host.expand(0, m, 0.0, ref.data());
  cuda.expand(0, m, 0.0, got.data());
  double bound = 0; // ||p(A)|| <= sum |coef| on the interval
  for (double c : f.coef) bound += std::abs(c);
  for (int j = 0; j < m; ++j) {
    SCOPED_TRACE("step " + std::to_string(j));
    EXPECT_NEAR(got[j].alpha, ref[j].alpha, tol);
    if (ref[j].beta <= 1e-8 * bound) return;
    EXPECT_NEAR(got[j].beta, ref[j].beta, tol);
    EXPECT_EQ(got[j].breakdown, ref[j].breakdown);
  }
}

/// The filter of degree 1, 2 and 20 on one operator: apply_operator and apply_operator_block (column by
/// column while filtered) against the host backend's plain loops, within rounding of the recurrence
/// (d^2 products' worth, scaled by sum |coef| ||x||); expand's steps; the source never written; the work
/// vectors counted once; no scaling while filtered; and nullptr gives A back, the product as before it.
void expect_filtered(const FilterCase &c, index_t n)
{
  constexpr int kCols = 8;
  BackendConfig config;
  config.local_size = config.global_size = n;
  config.flavor = c.vectors;
  auto cuda = c.op ? make_cuda_backend(config, c.op) : make_cuda_backend(config, nullptr, c.host);
  HostBackend host(n, n, 0, c.host);
  cuda->resize_basis(kCols);
  host.resize_basis(kCols);
  for (int j = 0; j < kCols; ++j) {
    host.set_column(j, random_vector(static_cast<std::size_t>(n), 4000 + j).data());
    cuda->set_column(j, host.column(j));
  }
  const std::vector<Scalar> x(host.column(0), host.column(0) + n);
  cuda->apply_operator(0, 1);
  const auto plain = columns(*cuda)[1];
  const std::size_t bytes = backend_device_bytes(*cuda);
  for (int degree : {1, 2, 20}) {
    SCOPED_TRACE("degree " + std::to_string(degree));
    const ChebyshevFilter f = test_filter(c.center, c.half_width, degree, 4200 + degree);
    double sum = 0;
    for (double coef : f.coef) sum += std::abs(coef);
    const double tol = ulps * (c.row + 64) * eps * degree * degree * sum;
    cuda->set_operator_filter(&f);
    host.set_operator_filter(&f);
    if (degree == 1) { // later degrees: the block filter's work blocks too, where the operator fuses its steps
      EXPECT_EQ(backend_device_bytes(*cuda), bytes + 3 * sizeof(Scalar) * static_cast<std::size_t>(n)) << "work vectors";
    }
    cuda->apply_operator(0, 2);
    host.apply_operator(0, 2);
    expect_near_columns(*cuda, host, 2, tol * norm2(x));
    EXPECT_TRUE(columns(*cuda)[0] == x) << "the source was written";
    cuda->apply_operator_block(3, 5, 2);
    host.apply_operator_block(3, 5, 2);
    for (int j : {5, 6}) expect_near_columns(*cuda, host, j, tol * norm2(columns(host)[j - 2]));
    EXPECT_THROW(cuda->set_operator_scale(1), Error);
    EXPECT_NO_THROW(cuda->set_operator_scale(0));
    expect_filtered_steps(*cuda, host, f, 100 * tol);
    host.set_column(0, x.data());
    for (int j = 0; j < kCols; ++j) cuda->set_column(j, host.column(j)); // the next degree starts equal
    cuda->set_operator_filter(nullptr);
    host.set_operator_filter(nullptr);
    cuda->apply_operator(0, 1);
    const auto again = columns(*cuda)[1];
    if (c.exact) {
      EXPECT_TRUE(again == plain) << "set_operator_filter(nullptr): not A's product as before";
    } else {
      std::vector<Scalar> d(again);
      for (std::size_t i = 0; i < d.size(); ++i) d[i] -= plain[i];
      EXPECT_LE(norm2(d), ulps * (c.row + 64) * eps * c.half_width * norm2(x)) << "set_operator_filter(nullptr)";
    }
  }
}

// The block filter (apply_operator_block while filtered, on an operator that fuses its steps: the matrix
// read once a step for the block): each column bit for bit the single-column filter's, for blocks of
// every launch width (8, 4, 2, 1 and their sums), the source columns untouched; close to the host's.
TEST_F(DeviceOperators, BlockFilterIsTheColumnFilterBitForBit)
{
  constexpr int kMost = 13;
  for (index_t m : {1, 6, 33}) {
    const Csr S = magnetic_laplacian(m, 0.3);
    const Csr L = laplacian(m);
    const DeviceCsr dL = to_device(L);
    const auto sparse = [&S](const Scalar *x, Scalar *y) { csr_apply(S, x, y); };
    const auto lap = [&L](const Scalar *x, Scalar *y) { csr_apply(L, x, y); };
    std::vector<FilterCase> cases{
        {"CSR default (short rows)", make_csr_operator(csr_view(S), KernelFlavor::Default, -1), sparse, KernelFlavor::Custom, 4.0, 4.5, 5, true}};
    if (m > 1)
      cases.push_back({"pattern split on the device", make_pattern_operator_on_device(dL.view, -1), lap, KernelFlavor::Custom, 4.0, 4.5, 5, true});
    for (const FilterCase &c : cases) {
      const index_t n = c.op->rows();
      SCOPED_TRACE(c.name + " n " + std::to_string(n));
      ASSERT_TRUE(c.op->fuses_chebyshev_steps()) << c.op->description();
      BackendConfig config;
      config.local_size = config.global_size = n;
      config.flavor = c.vectors;
      auto cuda = make_cuda_backend(config, c.op);
      HostBackend host(n, n, 0, c.host);
      cuda->resize_basis(3 * kMost);
      host.resize_basis(3 * kMost);
      for (int j = 0; j < kMost; ++j) {
        host.set_column(j, random_vector(static_cast<std::size_t>(n), 5000 + j).data());
        cuda->set_column(j, host.column(j));
      }
      const ChebyshevFilter f = test_filter(c.center, c.half_width, 20, 4300);
      double sum = 0;
      for (double coef : f.coef) sum += std::abs(coef);
      cuda->set_operator_filter(&f);
      host.set_operator_filter(&f);
      const auto before = columns(*cuda);
      for (int b : {2, 3, 7, 8, 13}) {
        cuda->apply_operator_block(0, kMost, b);
        host.apply_operator_block(0, kMost, b);
        for (int j = 0; j < b; ++j) cuda->apply_operator(j, 2 * kMost + j);
        const auto got = columns(*cuda);
        for (int j = 0; j < b; ++j) {
          EXPECT_TRUE(got[kMost + j] == got[2 * kMost + j]) << "blocks of " << b << ": column " << j << " differs from the column filter";
          EXPECT_TRUE(got[j] == before[j]) << "blocks of " << b << ": source column " << j << " was written";
          expect_near_columns(*cuda, host, kMost + j, ulps * (c.row + 64) * eps * 400 * sum * norm2(before[j]));
        }
      }
      cuda->set_operator_filter(nullptr);
    }
  }
}

TEST_F(DeviceOperators, FilteredApplyIsEquivalentToRef)
{
  for (index_t n : odd_sizes()) {
    if (n > 1000) continue; // the host's dense products of degree 20: the sizes below show every path
    const Dense A = random_dense(n, n, n + 1, 15000 + n, true);
    double bound = 0; // max row sum of |A| >= its spectral radius
    for (index_t i = 0; i < n; ++i) {
      double r = 0;
      for (index_t j = 0; j < n; ++j) r += std::abs(A.a[i + j * A.ld]);
      bound = std::max(bound, r);
    }
    const double hw = 1.25 * std::max(bound, 1.0);
    const auto dense = [&A](const Scalar *x, Scalar *y) { A.apply(x, y); };
    const std::vector<FilterCase> cases{
        {"dense custom", make_dense_operator(A.view(), KernelFlavor::Custom, -1), dense, KernelFlavor::Custom, 0.1 * hw, hw, n, true},
        {"dense vendor", make_dense_operator(A.view(), KernelFlavor::Vendor, -1), dense, KernelFlavor::Vendor, 0.1 * hw, hw, n, false},
        {"host fallback", nullptr, dense, KernelFlavor::Default, 0.1 * hw, hw, n, true}};
    for (const FilterCase &c : cases) {
      SCOPED_TRACE(c.name + " n " + std::to_string(n));
      expect_filtered(c, n);
    }
  }
  // CSR: the magnetic Laplacian (Hermitian, spectrum in [0, 8]; real symmetric in the real build).
  for (index_t m : {1, 6, 33}) {
    const Csr S = magnetic_laplacian(m, 0.3);
    const index_t n = S.rows;
    const auto sparse = [&S](const Scalar *x, Scalar *y) { csr_apply(S, x, y); };
    const std::vector<FilterCase> cases{
        {"CSR custom", make_csr_operator(csr_view(S), KernelFlavor::Custom, -1), sparse, KernelFlavor::Custom, 4.0, 4.5, 5, true},
        {"CSR default", make_csr_operator(csr_view(S), KernelFlavor::Default, -1), sparse, KernelFlavor::Default, 4.0, 4.5, 5, false},
        {"CSR vendor", make_csr_operator(csr_view(S), KernelFlavor::Vendor, -1), sparse, KernelFlavor::Vendor, 4.0, 4.5, 5, false},
        {"CSR host fallback", nullptr, sparse, KernelFlavor::Custom, 4.0, 4.5, 5, true}};
    for (const FilterCase &c : cases) {
      SCOPED_TRACE(c.name + " n " + std::to_string(n));
      expect_filtered(c, n);
    }
    // The value-less pattern products' fused steps: uploaded, and split on the device from device arrays.
    if (m == 1) continue; // no off-diagonal entry: no pattern
    const Csr L = laplacian(m);
    const DeviceCsr dL = to_device(L);
    const auto lap = [&L](const Scalar *x, Scalar *y) { csr_apply(L, x, y); };
    const std::vector<FilterCase> patterns{
        {"pattern uploaded", make_csr_operator(csr_view(L), KernelFlavor::Default, -1), lap, KernelFlavor::Default, 4.0, 4.5, 5, true},
        {"pattern split on the device", make_pattern_operator_on_device(dL.view, -1), lap, KernelFlavor::Custom, 4.0, 4.5, 5, true}};
    for (const FilterCase &c : patterns) {
      SCOPED_TRACE(c.name + " n " + std::to_string(n));
      ASSERT_NE(c.op, nullptr);
      EXPECT_NE(c.op->description().find("pattern SpMV"), std::string::npos) << c.op->description();
      expect_filtered(c, n);
    }
  }
  // A filter the backend refuses: degree 0, no positive half width, a scaled operator.
  const Dense A = random_dense(5, 5, 5, 15900, true);
  BackendConfig config;
  config.local_size = config.global_size = 5;
  auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
  ChebyshevFilter f = test_filter(0.0, 1.0, 0, 1);
  EXPECT_THROW(cuda->set_operator_filter(&f), Error);
  f = test_filter(0.0, 0.0, 3, 1);
  EXPECT_THROW(cuda->set_operator_filter(&f), Error);
  f = test_filter(0.0, 1.0, 3, 1);
  cuda->set_operator_scale(2);
  EXPECT_THROW(cuda->set_operator_filter(&f), Error);
  cuda->set_operator_scale(0);
  EXPECT_NO_THROW(cuda->set_operator_filter(&f));
}

// --- block operations on long vectors: transform_block in row blocks ---

TEST_F(DeviceOperators, LongBlockOperationsAreEquivalentToRef)
{
  // 200 columns of 50001 rows: project_block's gemms reduce over 50001 rows; transform_block takes a block
  // of 8 in place in one launch (kernels::transform_columns), and one of 12 through rotate's workspace, which
  // holds 2^23 / 200 = 41943 rows: two row blocks.
  for (const auto &[col, b] : {std::pair{191, 8}, std::pair{187, 12}}) {
    SCOPED_TRACE("block of " + std::to_string(b));
    const index_t n = 50001;
    const int ncols = 200, ldm = b + 1;
    const auto identity = [n](const Scalar *x, Scalar *y) { std::copy(x, x + n, y); };
    BackendConfig config;
    config.local_size = config.global_size = n;
    auto cuda = make_cuda_backend(config, nullptr, identity);
    HostBackend host(n, n, 0, identity);
    cuda->resize_basis(ncols);
    host.resize_basis(ncols);
    for (int j = col - 1; j <= col + b; ++j) {
      host.set_random(j, 600 + j);
      cuda->set_random(j, 600 + j);
    }
    std::vector<std::vector<Scalar>> c(static_cast<std::size_t>(b + 2));
    for (int j = 0; j < b + 2; ++j) c[j].assign(host.column(col - 1 + j), host.column(col - 1 + j) + n);
    const int k = 1, ld = k + b;
    std::vector<Scalar> ref(static_cast<std::size_t>(ld * b)), got(ref.size(), nan);
    host.project_block(col - 1, k, col, b, ref.data());
    cuda->project_block(col - 1, k, col, b, got.data());
    for (int j = 0; j < b; ++j)
      for (int i = 0; i < ld; ++i)
        ASSERT_LE(std::abs(got[i + j * ld] - ref[i + j * ld]), 2 * ulps * (n + 1) * eps * dot_abs(c[i], c[j + 1]))
            << "projection entry (" << i << ", " << j << ")";
    const std::vector<Scalar> M = random_vector(static_cast<std::size_t>(ldm * b), 8500);
    host.transform_block(col, b, M.data(), ldm);
    cuda->transform_block(col, b, M.data(), ldm);
    std::vector<Scalar> v(static_cast<std::size_t>(n));
    for (int j = -1; j <= b; ++j) {
      cuda->get_column(col + j, v.data());
      const Scalar *r = host.column(col + j);
      for (index_t i = 0; i < n; ++i) {
        double tol = 0; // the columns beside the block are untouched: exact
        if (j >= 0 && j < b)
          for (int l = 0; l < b; ++l) tol += ulps * (b + 1) * eps * std::abs(M[l + j * ldm] * c[l + 1][i]);
        ASSERT_LE(std::abs(v[i] - r[i]), tol) << "column " << col + j << " row " << i;
      }
    }
  }
}

// --- whole Lanczos steps: expand ---------------------------------------------------------------------------------

class ExpandSteps : public CudaTest {
protected:
  /// Runs expand over steps 0..m-1 on the host reference (Backend::expand) and on the CUDA backend
  /// (one process: the device-side steps), in the calls given by `splits` (e.g. {4}: 0..4, then 4..m),
  /// from the same unit start vector, and compares the records and the basis up to the first breakdown
  /// or near-breakdown (beta below 1e-8 ||A||: v_{j+1} is then normalized rounding noise, different on
  /// each backend, and flagged or not depending on that noise). Returns that step, or m.
  /// `prepare`, if given, sets up the host basis instead and returns the first step, start: columns
  /// 0..start go to the device as they are, and the steps (and records) run from start.
  /// With reach >= 0 the steps are expand_partial's (the pass over columns 0..reach-1). With `queued` the
  /// device runs each call through queue_steps / collect_steps instead.
  int compare(const Dense &A, int m, std::vector<int> splits = {}, const std::function<int(HostBackend &)> &prepare = {},
              int reach = -1, bool queued = false)
  {
    const index_t n = A.rows;
    HostBackend host(n, n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
    BackendConfig config;
    config.local_size = config.global_size = n;
    auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
    host.resize_basis(m + 1);
    cuda->resize_basis(m + 1);
    int start = 0;
    if (prepare) {
      start = prepare(host);
    } else {
      host.set_random(0, 31);
      cudalanczos::testing::orthonormalize(host, 0, 0, 0);
    }
    for (int j = 0; j <= start; ++j) cuda->set_column(j, host.column(j));
    std::vector<StepRecord> ref(m), got(m);
    splits.push_back(m);
    int first = start;
    double anorm_ref = 0, anorm_got = 0;
    for (int last : splits) {
      if (last < first) continue;
      if (queued) {
        if (reach < 0) host.expand(first, last, anorm_ref, ref.data() + first);
        else host.expand_partial(first, last, reach, anorm_ref, ref.data() + first);
        cuda->queue_steps(first, last, reach, anorm_got);
        cuda->collect_steps(got.data() + first);
      } else if (reach < 0) {
        host.expand(first, last, anorm_ref, ref.data() + first);
        cuda->expand(first, last, anorm_got, got.data() + first);
      } else {
        host.expand_partial(first, last, reach, anorm_ref, ref.data() + first);
        cuda->expand_partial(first, last, reach, anorm_got, got.data() + first);
      }
      if (last > first) anorm_ref = ref[last - 1].anorm, anorm_got = got[last - 1].anorm;
      first = last;
    }
    double anorm = 0;
    for (index_t i = 0; i < n * n; ++i) anorm += std::abs(A.a[i % n + (i / n) * A.ld]);
    const double tol = 1e3 * n * eps * anorm; // rounding of a few steps, in units of ||A||_1-ish
    int breakdown = m;
    for (int j = start; j < m; ++j) {
      SCOPED_TRACE("step " + std::to_string(j));
      if (ref[j].beta <= 1e-8 * ref[j].anorm) {
        EXPECT_LE(got[j].beta, 1e-8 * got[j].anorm);
        EXPECT_NEAR(got[j].alpha, ref[j].alpha, tol);
        if (got[j].breakdown) { // flagged: the device must have zeroed v_{j+1}
          std::vector<Scalar> v(static_cast<std::size_t>(n));
          cuda->get_column(j + 1, v.data());
          EXPECT_EQ(std::count(v.begin(), v.end(), 0.0), n) << "a breakdown leaves v_{j+1} = 0";
        }
        return j;
      }
      EXPECT_EQ(got[j].breakdown, ref[j].breakdown);
      EXPECT_EQ(got[j].second_pass, ref[j].second_pass);
      EXPECT_NEAR(got[j].alpha, ref[j].alpha, tol);
      EXPECT_NEAR(got[j].beta, ref[j].beta, tol);
      EXPECT_NEAR(std::sqrt(got[j].norm_before), std::sqrt(ref[j].norm_before), tol);
      EXPECT_NEAR(got[j].anorm, ref[j].anorm, tol);
      std::vector<Scalar> v(static_cast<std::size_t>(n));
      cuda->get_column(j + 1, v.data());
      const Scalar *r = host.column(j + 1);
      index_t differ = 0, nonzero = 0;
      for (index_t i = 0; i < n; ++i) differ += !(std::abs(v[i] - r[i]) <= 1e-8), nonzero += v[i] != 0.0;
      EXPECT_EQ(differ, 0) << "entries of column " << j + 1 << " off the reference by more than 1e-8";
      if (ref[j].breakdown) { // (with beta above 1e-8 ||A||: DGKS found the vector inside the span)
        EXPECT_EQ(nonzero, 0) << "a breakdown leaves v_{j+1} = 0";
        breakdown = j;
        break;
      }
    }
    return breakdown;
  }
};

TEST_F(ExpandSteps, ExpandIsEquivalentToRef)
{
  for (index_t n : {2, 33, 257, 4097}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const int m = static_cast<int>(std::min<index_t>(n - 1, 20));
    // Random entries, and a planted dominant diagonal (the three-term window removes most of A v).
    const Dense A = random_dense(n, n, n + 3, 500 + n, true);
    EXPECT_EQ(compare(A, m), m);
    Dense B = A;
    for (index_t i = 0; i < std::min<index_t>(n, 5); ++i) B.a[i + i * B.ld] += 1e3 * (i + 1);
    EXPECT_EQ(compare(B, m, {m / 3, m / 3, m / 2}), m); // also split into calls, an empty one among them
  }
}

// Steps on the device with the operator scaled (set_operator_scale, the solve's scaling into range) are the
// steps with the matrix scaled: A with 2^e against 2^e A uploaded, bit for bit (records and basis), for the
// input scaled up (e > 0) and the output scaled down (e < 0); full and partial passes, queued or not.
TEST_F(ExpandSteps, ScaledExpandIsEquivalentToRef)
{
  for (index_t n : {33, 1031}) {
    const int m = 16;
    const Dense A = random_dense(n, n, n + 3, 600 + n, true);
    for (int e : {-600, -300, 300, 600}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", 2^" + std::to_string(e));
      Dense B = A;
      for (Scalar &x : B.a) x = make_scalar(std::ldexp(real_part(x), e), std::ldexp(imag_part(x), e)); // NaN padding stays NaN, never read
      BackendConfig config;
      config.local_size = config.global_size = n;
      auto scaled = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
      auto plain = make_cuda_backend(config, make_dense_operator(B.view(), KernelFlavor::Custom, -1));
      scaled->set_operator_scale(e);
      for (Backend *b : {scaled.get(), plain.get()}) {
        b->resize_basis(m + 1);
        b->set_random(0, 41);
        Scalar q = 0;
        b->project(0, 0, 0, &q);
        b->scale(0, 1 / std::sqrt(real_part(q)));
      }
      std::vector<StepRecord> got(m), ref(m);
      scaled->expand(0, 6, 0.0, got.data());
      plain->expand(0, 6, 0.0, ref.data());
      scaled->expand_partial(6, 11, 4, got[5].anorm, got.data() + 6);
      plain->expand_partial(6, 11, 4, ref[5].anorm, ref.data() + 6);
      scaled->queue_steps(11, m, -1, got[10].anorm);
      plain->queue_steps(11, m, -1, ref[10].anorm);
      scaled->collect_steps(got.data() + 11);
      plain->collect_steps(ref.data() + 11);
      for (int j = 0; j < m; ++j) {
        SCOPED_TRACE("step " + std::to_string(j));
        EXPECT_EQ(got[j].alpha, ref[j].alpha);
        EXPECT_EQ(got[j].beta, ref[j].beta);
        EXPECT_EQ(got[j].norm_before, ref[j].norm_before);
        EXPECT_EQ(got[j].anorm, ref[j].anorm);
        EXPECT_EQ(got[j].breakdown, ref[j].breakdown);
        EXPECT_EQ(got[j].second_pass, ref[j].second_pass);
      }
      const auto cg = columns(*scaled), cr = columns(*plain);
      for (int j = 0; j <= m; ++j) EXPECT_TRUE(cg[j] == cr[j]) << "column " << j;
    }
  }
}

TEST_F(ExpandSteps, ArrowStepIsEquivalentToRef)
{
  // The first step after a thick restart: v_0 lies near the part of A v_2 outside the window {v_1, v_2},
  // so the full pass removes most of w and DGKS repeats it (core: ArrowStepRepeatsTheFullPass).
  for (index_t n : {65, 1031}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const Dense A = random_dense(n, n, n, 700 + n, true);
    bool repeated = false;
    const int m = 12;
    const int got = compare(A, m, {5}, [&](HostBackend &b) {
      const int first = cudalanczos::testing::plant_restart_arrow(b);
      // what the reference does with it
      HostBackend probe(n, n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
      probe.resize_basis(4);
      for (int j = 0; j < 3; ++j) probe.set_column(j, b.column(j));
      StepRecord rec;
      probe.expand(first, first + 1, 0.0, &rec);
      repeated = rec.second_pass;
      return first;
    });
    EXPECT_EQ(got, m);
    EXPECT_TRUE(repeated) << "the planted arrow did not make DGKS repeat the full pass";
  }
}

TEST_F(ExpandSteps, ExpandPartialIsEquivalentToRef)
{
  // Partial reorthogonalization's steps: after 5 full steps on the host (the kept vectors of a restart),
  // the pass covers columns 0..reach-1 and the window lies outside it; reach 0 is the bare recurrence.
  for (index_t n : {33, 257, 4097})
    for (int reach : {0, 2, 4}) {
      SCOPED_TRACE("n " + std::to_string(n) + ", reach " + std::to_string(reach));
      const Dense A = random_dense(n, n, n + 1, 800 + n, true);
      const int m = 16, start = 5;
      const auto prepare = [&](HostBackend &b) {
        b.set_random(0, 31);
        cudalanczos::testing::orthonormalize(b, 0, 0, 0);
        std::vector<StepRecord> rec(start);
        b.expand(0, start, 0.0, rec.data());
        return start;
      };
      EXPECT_EQ(compare(A, m, {9}, prepare, reach), m);
    }
  BackendConfig config;
  config.local_size = config.global_size = 9;
  const Dense A = random_dense(9, 9, 9, 5, true);
  auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
  cuda->resize_basis(8);
  std::vector<StepRecord> rec(2);
  EXPECT_THROW(cuda->expand_partial(3, 5, 3, 1.0, rec.data()), cudalanczos::Error) << "the pass must end before the window";
}

TEST_F(ExpandSteps, QueuedStepsAreEquivalentToRef)
{
  // queue_steps / collect_steps: the steps of expand and expand_partial, queued on the device while the
  // host is free (the driver's look-ahead), give the reference's records and basis.
  for (index_t n : {33, 4097}) {
    SCOPED_TRACE("n " + std::to_string(n));
    const Dense A = random_dense(n, n, n + 1, 810 + n, true);
    EXPECT_EQ(compare(A, 14, {3, 8}, {}, -1, true), 14);
    const auto prepare = [&](HostBackend &b) {
      b.set_random(0, 31);
      cudalanczos::testing::orthonormalize(b, 0, 0, 0);
      std::vector<StepRecord> rec(5);
      b.expand(0, 5, 0.0, rec.data());
      return 5;
    };
    EXPECT_EQ(compare(A, 14, {9}, prepare, 3, true), 14);
  }
  // The protocol: one queue at a time, nothing else while it is pending, and a cancel reports the
  // steps that ran (on the device: all of them) and leaves the backend usable.
  BackendConfig config;
  config.local_size = config.global_size = 65;
  const Dense A = random_dense(65, 65, 65, 6, true);
  auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
  cuda->resize_basis(10);
  std::vector<Scalar> x(65, 1.0 / std::sqrt(65.0)); // a unit start
  for (int i = 0; i < 65; i += 2) x[static_cast<std::size_t>(i)] = -x[static_cast<std::size_t>(i)];
  cuda->set_column(0, x.data());
  std::vector<StepRecord> rec(8);
  EXPECT_THROW(cuda->collect_steps(rec.data()), cudalanczos::Error);
  EXPECT_THROW(cuda->cancel_steps(), cudalanczos::Error);
  cuda->queue_steps(0, 4, -1, 0.0);
  EXPECT_THROW(cuda->queue_steps(4, 6, -1, 1.0), cudalanczos::Error);
  EXPECT_THROW(cuda->expand(4, 6, 1.0, rec.data()), cudalanczos::Error);
  EXPECT_EQ(cuda->cancel_steps(), 4);
  EXPECT_NO_THROW(cuda->expand(0, 6, 0.0, rec.data()));
  EXPECT_GT(rec[5].beta, 0.0);
}

TEST_F(ExpandSteps, PlantedBreakdownIsEquivalentToRef)
{
  // Rank 3: the Krylov space of any start vector has dimension <= 4, so w is in the span at step 3.
  const index_t n = 301;
  Dense A{n, n, n, std::vector<Scalar>(static_cast<std::size_t>(n * n), 0.0)};
  for (int r = 0; r < 3; ++r)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i)
        A.a[i + j * n] += (r + 1.5) * random_entry(900 + r, i) * random_entry(900 + r, j);
  EXPECT_EQ(compare(A, 8), 3);
  // beta = 0 at once: the identity.
  Dense I{n, n, n, std::vector<Scalar>(static_cast<std::size_t>(n * n), 0.0)};
  for (index_t i = 0; i < n; ++i) I.a[i + i * n] = 1;
  EXPECT_EQ(compare(I, 4), 0);
}

TEST_F(ExpandSteps, NonFiniteValuesAreRecordedNotThrown)
{
  Dense A = random_dense(65, 65, 65, 77, true);
  A.a[10 + 10 * 65] = nan;
  BackendConfig config;
  config.local_size = config.global_size = 65;
  auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), KernelFlavor::Custom, -1));
  cuda->resize_basis(4);
  cuda->set_random(0, 5);
  std::vector<StepRecord> got(3);
  ASSERT_NO_THROW(cuda->expand(0, 3, 0.0, got.data()));
  EXPECT_FALSE(std::isfinite(got[0].norm_before) && std::isfinite(got[0].alpha) && std::isfinite(got[0].beta));
}

// --- a whole solve ----------------------------------------------------------------------------------------------

struct SolveCase {
  const char *name;
  Variant variant;
  int nev, ncv;
};

void expect_same_solve(const Dense &A, const SolveCase &c, KernelFlavor flavor)
{
  SCOPED_TRACE(std::string(c.name) + " " + to_string(flavor));
  Settings s;
  s.variant = c.variant;
  s.reorthogonalization = c.variant == Variant::Thesis ? Reorthogonalization::None : Reorthogonalization::Full;
  s.which = Which::LargestAlgebraic;
  s.nev = c.nev;
  s.ncv = c.ncv;
  s.tol = 1e-10;
  s.max_it = c.variant == Variant::Thesis ? c.ncv : 200;
  const index_t n = A.rows;
  HostBackend host(n, n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
  BackendConfig config;
  config.local_size = config.global_size = n;
  config.flavor = flavor;
  auto cuda = make_cuda_backend(config, make_dense_operator(A.view(), flavor, -1));
  host.resize_basis(basis_columns_needed(s));
  cuda->resize_basis(basis_columns_needed(s));
  const Result ref = solve(host, s, {});
  const Result got = solve(*cuda, s, {});
  ASSERT_EQ(ref.reason, Reason::Converged);
  ASSERT_EQ(got.reason, Reason::Converged);
  ASSERT_GE(got.eigenvalues.size(), static_cast<std::size_t>(c.nev));
  ASSERT_GE(ref.eigenvalues.size(), static_cast<std::size_t>(c.nev));
  double norm = 0;
  for (double l : ref.eigenvalues) norm = std::max(norm, std::abs(l));
  for (int i = 0; i < c.nev; ++i)
    EXPECT_LE(std::abs(got.eigenvalues[i] - ref.eigenvalues[i]), 1e-9 * norm)
        << "eigenvalue " << i << ": cuda " << got.eigenvalues[i] << " host " << ref.eigenvalues[i];
  EXPECT_LE(got.orthogonality, 1e-10);
}

class WholeSolve : public CudaTest {};

TEST_F(WholeSolve, LanczosSolveIsEquivalentToRef)
{
  // Symmetric with entries in [-1, 1] plus a planted dominant spectrum: well-separated wanted values.
  Dense A = random_dense(777, 777, 777, 12000, true);
  for (index_t i = 0; i < 6; ++i) A.a[i + i * A.ld] += 200.0 - 20.0 * i; // the bulk is within about +-32
  for (KernelFlavor f : {KernelFlavor::Custom, KernelFlavor::Vendor}) {
    expect_same_solve(A, {"thick restart", Variant::ThickRestart, 4, 24}, f);
    expect_same_solve(A, {"thesis", Variant::Thesis, 1, 120}, f);
  }
}

// A generalized problem A x = lambda B x through BInnerProductBackend over the CUDA backend: the operator
// B^-1 A (B diagonal, entries in [0.5, 2]) applied through the host fallback, B's products through the host
// round trip; the same solve over the host backend is the reference (eigenvalues within 1e-9 of the largest,
// both B-orthonormal), for full and partial reorthogonalization and block steps.
TEST_F(WholeSolve, GeneralizedSolveIsEquivalentToRef)
{
  Dense A = random_dense(301, 301, 301, 12400, true);
  for (index_t i = 0; i < 5; ++i) A.a[i + i * A.ld] += 100.0 - 10.0 * i;
  const index_t n = A.rows;
  std::vector<Scalar> d(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) d[i] = 1.25 + 0.75 * random_entry(99, i);
  const auto op = [&](const Scalar *x, Scalar *y) {
    A.apply(x, y);
    for (index_t i = 0; i < n; ++i) y[i] /= d[i];
  };
  const auto bmul = [&](const Scalar *x, Scalar *y) {
    for (index_t i = 0; i < n; ++i) y[i] = d[i] * x[i];
  };
  Settings s;
  s.which = Which::LargestAlgebraic, s.nev = 4, s.ncv = 24, s.tol = 1e-10, s.max_it = 300;
  std::vector<std::pair<const char *, Settings>> cases = {{"full", s}};
  s.reorthogonalization = Reorthogonalization::Partial;
  cases.push_back({"partial", s});
  s.reorthogonalization = Reorthogonalization::Full, s.block_size = 2, s.ncv = 32;
  cases.push_back({"block 2", s});
  for (const auto &[name, st] : cases)
    for (KernelFlavor f : {KernelFlavor::Custom, KernelFlavor::Vendor}) {
      SCOPED_TRACE(std::string(name) + " " + to_string(f));
      HostBackend host(n, n, 0, op);
      BInnerProductBackend hb(host, host_round_trip(bmul));
      BackendConfig config;
      config.local_size = config.global_size = n;
      config.flavor = f;
      auto cuda = make_cuda_backend(config, nullptr, op);
      BInnerProductBackend cb(*cuda, host_round_trip(bmul));
      hb.resize_basis(basis_columns_needed(st));
      cb.resize_basis(basis_columns_needed(st));
      const Result ref = solve(hb, st, {});
      const Result got = solve(cb, st, {});
      ASSERT_EQ(ref.reason, Reason::Converged);
      ASSERT_EQ(got.reason, Reason::Converged);
      double norm = 0;
      for (double l : ref.eigenvalues) norm = std::max(norm, std::abs(l));
      for (int i = 0; i < st.nev; ++i)
        EXPECT_LE(std::abs(got.eigenvalues[i] - ref.eigenvalues[i]), 1e-9 * norm)
            << "eigenvalue " << i << ": cuda " << got.eigenvalues[i] << " host " << ref.eigenvalues[i];
      EXPECT_LE(got.orthogonality, 1e-10) << "max |V^T B V - I| on the CUDA backend";
      // x^T B x = 1 for the first returned vector, from the device basis
      std::vector<Scalar> x(static_cast<std::size_t>(n)), bx(static_cast<std::size_t>(n));
      cb.get_column(0, x.data());
      bmul(x.data(), bx.data());
      double xbx = 0;
      for (index_t i = 0; i < n; ++i) xbx += real_part(conj_of(x[i]) * bx[i]); // x^H B x, real
      EXPECT_NEAR(xbx, 1.0, 1e-10);
      EXPECT_GT(cb.b_products(), 0);
    }
}

// The whole solve on c A across the exponent range: on the CUDA backend, c = 2^k gives 2^k times its
// results for A bit for bit (thick restart, partial, block, thesis); c = 10^k agrees with the host backend's
// solve of the same matrix within 1e-9 ||c A||. Inside the safe range nothing is scaled, outside it the
// solve runs on 2^e c A.
TEST_F(WholeSolve, ScaledSolveIsEquivalentToRef)
{
  Dense A = random_dense(513, 513, 515, 12500, true);
  for (index_t i = 0; i < 6; ++i) A.a[i + i * A.ld] += 200.0 - 20.0 * i;
  const index_t n = A.rows;
  struct Case {
    const char *name;
    Settings s;
  };
  std::vector<Case> cases;
  Settings s;
  s.which = Which::LargestAlgebraic, s.nev = 4, s.ncv = 24, s.tol = 1e-10, s.max_it = 200;
  cases.push_back({"thick restart, full", s});
  s.reorthogonalization = Reorthogonalization::Partial, s.which = Which::LargestMagnitude;
  cases.push_back({"thick restart, partial", s});
  s.reorthogonalization = Reorthogonalization::Full, s.block_size = 3, s.ncv = 40, s.which = Which::SmallestAlgebraic;
  cases.push_back({"block 3", s});
  Settings t;
  t.variant = Variant::Thesis, t.reorthogonalization = Reorthogonalization::None, t.nev = 1, t.ncv = 120, t.max_it = 120;
  t.which = Which::LargestAlgebraic, t.tol = 1e-10;
  cases.push_back({"thesis", t});
  const auto scaled_matrix = [&](double c) {
    Dense B = A;
    for (Scalar &x : B.a) x *= c;
    return B;
  };
  for (const Case &c : cases)
    for (KernelFlavor f : {KernelFlavor::Custom, KernelFlavor::Vendor}) {
      SCOPED_TRACE(std::string(c.name) + " " + to_string(f));
      BackendConfig config;
      config.local_size = config.global_size = n;
      config.flavor = f;
      const auto run = [&](const Dense &M, Backend *host_ref) {
        auto cuda = make_cuda_backend(config, make_dense_operator(M.view(), f, -1));
        cuda->resize_basis(basis_columns_needed(c.s));
        Result r;
        try { // an error names the case: the traces above do not reach an exception's report
          r = solve(*cuda, c.s, {});
        } catch (const Error &e) {
          ADD_FAILURE() << c.name << ", " << to_string(f) << ", |a_00| = " << std::abs(M.a[0]) << ": " << e.what();
          throw;
        }
        if (host_ref) {
          host_ref->resize_basis(basis_columns_needed(c.s));
          const Result h = solve(*host_ref, c.s, {});
          EXPECT_EQ(h.scale_exponent, r.scale_exponent);
          double norm = 0;
          for (double l : h.eigenvalues) norm = std::max(norm, std::abs(l));
          for (int i = 0; i < c.s.nev; ++i) EXPECT_LE(std::abs(r.eigenvalues[i] - h.eigenvalues[i]), 1e-9 * norm) << "eigenvalue " << i;
        }
        return r;
      };
      const Result base = run(A, nullptr);
      ASSERT_GE(base.nconv, c.s.nev);
      for (int k : {-1000, -300, 300, 1000}) {
        SCOPED_TRACE("c = 2^" + std::to_string(k));
        const Result r = run(scaled_matrix(std::ldexp(1.0, k)), nullptr);
        EXPECT_NE(r.scale_exponent, 0);
        ASSERT_EQ(r.eigenvalues.size(), base.eigenvalues.size());
        for (std::size_t i = 0; i < base.eigenvalues.size(); ++i) EXPECT_EQ(r.eigenvalues[i], std::ldexp(base.eigenvalues[i], k)) << "eigenvalue " << i;
      }
      for (double c10 : {1e-300, 1e-170, 1e170, 1e300}) {
        SCOPED_TRACE("c = " + std::to_string(std::log10(c10)));
        const Dense M = scaled_matrix(c10);
        HostBackend host(n, n, 0, [&M](const Scalar *x, Scalar *y) { M.apply(x, y); });
        const Result r = run(M, &host);
        ASSERT_GE(r.nconv, c.s.nev);
        EXPECT_EQ(r.residual_rejected, 0);
      }
    }
}

// --- errors and devices --------------------------------------------------------------------------------------------

TEST(CudaDevices, DeviceCountNeverThrows)
{
  // This one runs everywhere: without a driver or GPU device_count() is 0, not an exception.
  int n = -1;
  EXPECT_NO_THROW(n = device_count());
  EXPECT_GE(n, 0);
}

class CudaErrors : public CudaTest {};

TEST_F(CudaErrors, CheckNamesFileLineCallAndMessage)
{
  try {
    CUDALANCZOS_CHECK(cudaSetDevice(1 << 20));
    FAIL() << "no exception";
  } catch (const Error &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("test_cuda_backend.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaSetDevice(1 << 20)"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaErrorInvalidDevice"), std::string::npos) << what;
  }
  try {
    CUDALANCZOS_CHECK(cublasDgemv_64(nullptr, CUBLAS_OP_N, 1, 1, nullptr, nullptr, 1, nullptr, 1, nullptr, nullptr, 1));
    FAIL() << "no exception";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("cuBLAS"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess); // the failed call left no sticky error behind
}

TEST_F(CudaErrors, OutOfMemorySaysRequestedAndFree)
{
  try {
    DeviceBuffer<Scalar> HUGE_KEEP(std::size_t(1) << 50, "test allocation"); // 8 PiB (16 with complex scalars)
    FAIL() << "no exception";
  } catch (const Error &e) {
    const std::string what = e.what();
    const std::string requested = "requested " + std::to_string((std::size_t(1) << 50) * sizeof(Scalar)) + " bytes";
    EXPECT_NE(what.find(requested), std::string::npos) << what;
    EXPECT_NE(what.find("bytes free of"), std::string::npos) << what;
    EXPECT_NE(what.find("test allocation"), std::string::npos) << what;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaErrors, DeviceDescriptionNamesTheArchitecture)
{
  const std::string d = device_description(0);
  EXPECT_NE(d.find("sm_"), std::string::npos) << d;
  std::size_t free_bytes = 0, total_bytes = 0;
  device_memory(0, &free_bytes, &total_bytes);
  EXPECT_GT(total_bytes, 0u);
  EXPECT_LE(free_bytes, total_bytes);
}

} // namespace
} // namespace cudalanczos::cuda::test
