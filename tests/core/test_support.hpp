// What the core tests share: reproducible random numbers, LAPACK's dsyev as the reference, the
// naming and ordering of `which` as the driver defines it, eigenvalue lists in failure messages, and a
// solve on the host backend (run_solver).
#pragma once

#include "core/lanczos_driver.hpp"
#include "host/host_backend.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
// LAPACK (Fortran): hidden string lengths last.
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
            const int *lwork, int *info, std::size_t jobz_len, std::size_t uplo_len);
void zheev_(const char *jobz, const char *uplo, const int *n, std::complex<double> *a, const int *lda, double *w,
            std::complex<double> *work, const int *lwork, double *rwork, int *info, std::size_t jobz_len, std::size_t uplo_len);
}

namespace cudalanczos::testing {

/// Random numbers: explicit bit manipulation rather than std::uniform_real_distribution, whose output
/// the standard leaves to the library; mt19937_64 itself is fully specified.
struct Rng {
  std::mt19937_64 gen;
  explicit Rng(std::uint64_t seed) : gen(seed) {}
  double uniform01() { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }
  double uniform(double a, double b) { return a + (b - a) * uniform01(); }
  int integer(int lo, int hi) { return lo + static_cast<int>(gen() % static_cast<std::uint64_t>(hi - lo + 1)); }
  double normal()
  {
    const double u = 1.0 - uniform01(); // (0, 1]
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * uniform01());
  }
};

/// A value of magnitude in [0.02, 1] and random sign (positive only if `positive`).
inline double away_from_zero(Rng &rng, bool positive)
{
  const double m = rng.uniform(0.02, 1.0);
  return positive || rng.uniform01() < 0.5 ? m : -m;
}

/// The ordering key of `which` (smaller is better), as the driver's.
inline double which_key(Which which, double target, double lambda)
{
  switch (which) {
  case Which::LargestAlgebraic: return -lambda;
  case Which::SmallestAlgebraic: return lambda;
  case Which::LargestMagnitude: return -std::abs(lambda);
  case Which::SmallestMagnitude: return std::abs(lambda);
  case Which::TargetMagnitude:
  case Which::TargetReal: return std::abs(lambda - target);
  }
  return 0;
}

/// Eigenvalues, ascending, of the n x n Hermitian matrix a (column-major, lower triangle read) by
/// LAPACK's zheev: the reference of the complex build's tests.
inline std::vector<double> lapack_eigenvalues(int n, std::vector<std::complex<double>> a)
{
  int lda = std::max(n, 1), info = 0, lwork = -1;
  std::vector<double> w(std::max(n, 1)), rwork(std::max(1, 3 * n - 2));
  std::complex<double> wq = 0.0;
  zheev_("N", "L", &n, a.data(), &lda, w.data(), &wq, &lwork, rwork.data(), &info, 1, 1);
  lwork = std::max(1, static_cast<int>(wq.real()));
  std::vector<std::complex<double>> work(lwork);
  zheev_("N", "L", &n, a.data(), &lda, w.data(), work.data(), &lwork, rwork.data(), &info, 1, 1);
  EXPECT_EQ(info, 0) << "zheev failed";
  w.resize(n);
  return w;
}

/// Eigenvalues, ascending, of the n x n symmetric matrix a (column-major, lower triangle read) by
/// LAPACK's dsyev: the reference every core test compares with.
inline std::vector<double> lapack_eigenvalues(int n, std::vector<double> a)
{
  int lda = std::max(n, 1), info = 0, lwork = -1;
  std::vector<double> w(std::max(n, 1));
  double wq = 0.0;
  dsyev_("N", "L", &n, a.data(), &lda, w.data(), &wq, &lwork, &info, 1, 1);
  lwork = std::max(1, static_cast<int>(wq));
  std::vector<double> work(lwork);
  dsyev_("N", "L", &n, a.data(), &lda, w.data(), work.data(), &lwork, &info, 1, 1);
  EXPECT_EQ(info, 0) << "dsyev failed";
  w.resize(n);
  return w;
}

inline const char *which_name(Which w)
{
  switch (w) {
  case Which::LargestAlgebraic: return "LA";
  case Which::SmallestAlgebraic: return "SA";
  case Which::LargestMagnitude: return "LM";
  case Which::SmallestMagnitude: return "SM";
  case Which::TargetMagnitude: return "TM";
  case Which::TargetReal: return "TR";
  }
  return "?";
}

/// The first `count` values of v at full precision, for failure messages.
inline std::string describe(const std::vector<double> &v, std::size_t count = 30)
{
  std::ostringstream os;
  os.precision(17);
  os << "[";
  for (std::size_t i = 0; i < std::min(count, v.size()); ++i) os << (i ? " " : "") << v[i];
  if (v.size() > count) os << " ...";
  os << "]";
  return os.str();
}

/// A dense n x n matrix, column-major, with its product: the operator of the driver-level tests. Its
/// entries are Scalars: the real test matrices run in the complex build too (a real symmetric matrix is
/// Hermitian), and the complex build adds genuinely complex Hermitian ones.
struct Dense {
  int n = 0;
  std::vector<Scalar> a;
  explicit Dense(int n_) : n(n_), a(static_cast<std::size_t>(n_) * n_, Scalar(0)) {}
  Scalar &operator()(int i, int j) { return a[i + static_cast<std::size_t>(j) * n]; }
  Scalar operator()(int i, int j) const { return a[i + static_cast<std::size_t>(j) * n]; }
  void matvec(const Scalar *x, Scalar *y) const
  {
    std::fill(y, y + n, Scalar(0));
    for (int j = 0; j < n; ++j) {
      const Scalar xj = x[j];
      const Scalar *col = a.data() + static_cast<std::size_t>(j) * n;
      for (int i = 0; i < n; ++i) y[i] += col[i] * xj;
    }
  }
  /// c A, every entry multiplied by c.
  Dense scaled(double c) const
  {
    Dense B(*this);
    for (Scalar &x : B.a) x *= c;
    return B;
  }
};

/// The 1-D Laplacian tridiag(-1, 2, -1): eigenvalues 2 - 2 cos(k pi / (n + 1)), crowded at both ends.
inline Dense laplacian_1d(int n)
{
  Dense A(n);
  for (int i = 0; i < n; ++i) {
    A(i, i) = 2;
    if (i + 1 < n) A(i, i + 1) = A(i + 1, i) = -1;
  }
  return A;
}

/// A solve on the host backend with A's product, and the vectors it returned.
struct Solved {
  Result result;
  std::vector<std::vector<Scalar>> vectors; // the returned basis columns, one per returned eigenvalue
};

/// A solve on backend b (its basis sized for s), and the vectors it returned.
inline Solved solve_on(Backend &b, const Settings &s, const Callbacks &cb = {})
{
  b.resize_basis(basis_columns_needed(s));
  Solved out;
  out.result = solve(b, s, cb);
  for (std::size_t j = 0; j < out.result.eigenvalues.size(); ++j) {
    std::vector<Scalar> x(static_cast<std::size_t>(b.local_size()));
    b.get_column(static_cast<int>(j), x.data());
    out.vectors.push_back(std::move(x));
  }
  return out;
}

inline Solved run_solver(const Dense &A, const Settings &s, const Callbacks &cb = {})
{
  HostBackend b(A.n, A.n, 0, [&A](const Scalar *x, Scalar *y) { A.matvec(x, y); });
  return solve_on(b, s, cb);
}

} // namespace cudalanczos::testing
