// The Lanczos driver on LARGE dense symmetric matrices (n = 1000..2000) with the host backend, against
// LAPACK dsyev: ten seeded cases with varied spectra, `which` and nev 1..10, cheap enough for CI (the
// 300-case sweep of test_lanczos_driver.cpp stops at n = 400).
//
// A = Q T Q^T with T diagonal (a planted spectrum) or tridiagonal (Wigner-like), and Q = H1 H2 H3 a
// product of three random Householder reflectors: a full dense matrix, formed explicitly in O(n^2)
// (a Gaussian orthogonal Q would cost more than dsyev). LAPACK dsyev on the dense A is the reference;
// the residuals are computed with the dense A. The driver's products apply the same Q T Q^T through
// the reflectors in O(n) (it is the same matrix up to rounding, O(eps ||A||)), so the solve is cheap
// and the cost is dsyev's: about 20 s on one core with reference LAPACK.
//
// The checks are those of test_lanczos_driver.cpp (see its header for the tolerances): converged, true
// residual <= max(10 tol |theta|, 10 n eps ||A||), orthonormal vectors, and the returned values are the
// nev wanted ones and eigenvalues of A, one to one, within Kahan's bound.
#include "core/backend.hpp"
#include "core/lanczos_driver.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace cudalanczos::testing;

using namespace cudalanczos;
using Vec = std::vector<double>;

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double kTol = 1e-10;


enum class Spectrum { Uniform, Clustered, Multiple, Graded, NegativeDefinite, Indefinite, Wigner };

const char *spectrum_name(Spectrum s)
{
  switch (s) {
  case Spectrum::Uniform: return "uniform";
  case Spectrum::Clustered: return "clustered";
  case Spectrum::Multiple: return "multiple";
  case Spectrum::Graded: return "graded";
  case Spectrum::NegativeDefinite: return "negative-definite";
  case Spectrum::Indefinite: return "indefinite";
  case Spectrum::Wigner: return "wigner-tridiagonal";
  }
  return "?";
}

struct CaseSpec {
  int n;
  Spectrum spectrum;
  Which which;
  int nev;
};

// Sizes 1000..2000; every spectrum family; LA, SA, LM, SM; nev 1..10.
constexpr CaseSpec kCases[] = {
    {1000, Spectrum::Uniform, Which::LargestAlgebraic, 1},   {1100, Spectrum::Clustered, Which::SmallestAlgebraic, 4},
    {1250, Spectrum::Multiple, Which::LargestAlgebraic, 6},  {1400, Spectrum::Graded, Which::LargestMagnitude, 10},
    {1500, Spectrum::NegativeDefinite, Which::LargestMagnitude, 3}, {1600, Spectrum::Indefinite, Which::LargestMagnitude, 8},
    {1750, Spectrum::Wigner, Which::SmallestAlgebraic, 5},   {1850, Spectrum::Uniform, Which::SmallestMagnitude, 7},
    {2000, Spectrum::Wigner, Which::LargestAlgebraic, 10},   {1300, Spectrum::Multiple, Which::SmallestAlgebraic, 2},
};
constexpr int kNumCases = static_cast<int>(sizeof(kCases) / sizeof(kCases[0]));
constexpr std::uint64_t kSeed = 20261130;


/// A = Q T Q^T: T = diag(d) + offdiag(e), Q = H1 H2 H3.
struct Problem {
  int n = 0;
  Vec d, e;              // T
  std::vector<Vec> u;    // unit Householder vectors of H1, H2, H3
  Vec A;                 // dense, column-major, exactly symmetric

  // Templates: the solver applies them to its Scalars, the dense comparison to doubles.
  template <class T> void apply_h(const Vec &uk, T *x) const
  {
    T dot = 0;
    for (int i = 0; i < n; ++i) dot += uk[i] * x[i];
    for (int i = 0; i < n; ++i) x[i] -= 2.0 * dot * uk[i];
  }
  /// y = Q T Q^T x in O(n).
  template <class T> void apply(const T *x, T *y) const
  {
    std::vector<T> z(x, x + n);
    for (std::size_t k = 0; k < u.size(); ++k) apply_h(u[k], z.data()); // Q^T = H3 H2 H1: H1 first
    for (int i = 0; i < n; ++i) {
      T v = d[i] * z[i];
      if (i > 0) v += e[i - 1] * z[i - 1];
      if (i + 1 < n) v += e[i] * z[i + 1];
      y[i] = v;
    }
    std::vector<T> w(y, y + n);
    for (std::size_t k = u.size(); k-- > 0;) apply_h(u[k], w.data()); // Q = H1 H2 H3: H3 first
    std::copy(w.begin(), w.end(), y);
  }
  template <class T> void dense_matvec(const T *x, T *y) const
  {
    std::fill(y, y + n, T(0));
    for (int j = 0; j < n; ++j) {
      const T xj = x[j];
      const double *col = A.data() + static_cast<std::size_t>(j) * n;
      for (int i = 0; i < n; ++i) y[i] += col[i] * xj;
    }
  }
};

Problem make_problem(const CaseSpec &spec, std::uint64_t seed)
{
  Rng rng(seed);
  Problem p;
  const int n = spec.n;
  p.n = n;
  p.e.assign(n > 0 ? n - 1 : 0, 0.0);
  const bool definite = rng.uniform01() < 0.5;
  switch (spec.spectrum) {
  case Spectrum::Uniform:
    for (int i = 0; i < n; ++i) p.d.push_back(rng.uniform(0.02, 1.0));
    break;
  case Spectrum::NegativeDefinite:
    for (int i = 0; i < n; ++i) p.d.push_back(-rng.uniform(0.02, 1.0));
    break;
  case Spectrum::Indefinite:
    for (int i = 0; i < n; ++i) p.d.push_back(away_from_zero(rng, false));
    break;
  case Spectrum::Graded: // log-uniform in [1e-8, 1]
    for (int i = 0; i < n; ++i) p.d.push_back(std::pow(10.0, -8.0 * rng.uniform01()));
    break;
  case Spectrum::Clustered: // groups of 1..6 values within a relative 1e-12..1e-6 of a centre
    while (static_cast<int>(p.d.size()) < n) {
      const double centre = away_from_zero(rng, definite);
      const double spread = std::pow(10.0, rng.uniform(-12, -6));
      const int size = rng.integer(1, 6);
      for (int i = 0; i < size && static_cast<int>(p.d.size()) < n; ++i) p.d.push_back(centre * (1 + spread * rng.uniform(-1, 1)));
    }
    break;
  case Spectrum::Multiple: // exact multiplicities 1..5
    while (static_cast<int>(p.d.size()) < n) {
      const double value = away_from_zero(rng, definite);
      const int mult = rng.integer(1, 5);
      for (int i = 0; i < mult && static_cast<int>(p.d.size()) < n; ++i) p.d.push_back(value);
    }
    break;
  case Spectrum::Wigner: // tridiagonal, entries uniform in [-1, 1]
    for (int i = 0; i < n; ++i) p.d.push_back(rng.uniform(-1, 1));
    for (double &x : p.e) x = rng.uniform(-1, 1);
    break;
  }
  for (int k = 0; k < 3; ++k) {
    Vec v(n);
    double nrm = 0;
    for (double &x : v) {
      x = rng.normal();
      nrm += x * x;
    }
    nrm = std::sqrt(nrm);
    for (double &x : v) x /= nrm;
    p.u.push_back(std::move(v));
  }
  // Dense A = H1 H2 H3 T H3 H2 H1: M <- H M H = M - 2 u p^T - 2 p u^T + 4 K u u^T (p = M u, K = u^T p),
  // entry by entry with commutative terms, so that A stays exactly symmetric.
  p.A.assign(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    p.A[i + static_cast<std::size_t>(i) * n] = p.d[i];
    if (i + 1 < n) p.A[i + 1 + static_cast<std::size_t>(i) * n] = p.A[i + static_cast<std::size_t>(i + 1) * n] = p.e[i];
  }
  Vec pm(n);
  for (int k = 2; k >= 0; --k) {
    const Vec &u = p.u[k];
    std::fill(pm.begin(), pm.end(), 0.0);
    for (int j = 0; j < n; ++j) {
      const double uj = u[j];
      const double *col = p.A.data() + static_cast<std::size_t>(j) * n;
      for (int i = 0; i < n; ++i) pm[i] += col[i] * uj;
    }
    double K = 0;
    for (int i = 0; i < n; ++i) K += u[i] * pm[i];
    for (int j = 0; j < n; ++j) {
      double *col = p.A.data() + static_cast<std::size_t>(j) * n;
      for (int i = 0; i < n; ++i) col[i] += -2 * (u[i] * pm[j] + pm[i] * u[j]) + 4 * K * (u[i] * u[j]);
    }
  }
  return p;
}



class LargeSweep : public ::testing::TestWithParam<int> {};

TEST_P(LargeSweep, MatchesLapackDsyev)
{
  const CaseSpec &spec = kCases[GetParam()];
  const std::uint64_t seed = kSeed * 1000003ULL + static_cast<std::uint64_t>(GetParam());
  std::ostringstream text;
  text << "case " << GetParam() << " seed " << seed << ": n " << spec.n << ", " << spectrum_name(spec.spectrum) << ", which "
       << which_name(spec.which) << ", nev " << spec.nev;
  SCOPED_TRACE(text.str());

  const Problem p = make_problem(spec, seed);
  const int n = p.n;
  Settings s;
  s.nev = spec.nev;
  s.ncv = std::min(n, std::max(2 * spec.nev, spec.nev + 15)); // SLEPc's default
  s.ncv_max = std::min(n, std::max(2 * s.ncv, s.ncv + 32));   // the growth the PETSc layer then allows
  s.which = spec.which;
  s.tol = kTol;
  s.max_it = 5000;
  s.seed = seed ^ 0x9e3779b97f4a7c15ULL;

  const auto t0 = std::chrono::steady_clock::now();
  HostBackend b(n, n, 0, [&p](const Scalar *x, Scalar *y) { p.apply(x, y); });
  b.resize_basis(basis_columns_needed(s));
  const Result r = solve(b, s, Callbacks{});
  const double solve_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Vec ref = lapack_eigenvalues(p.n, p.A);
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SCOPED_TRACE("its " + std::to_string(r.its) + ", matvecs " + std::to_string(r.matvecs) + ", solve " + std::to_string(solve_s) +
               " s, with dsyev " + std::to_string(total_s) + " s");
  std::printf("  %s: its %d, matvecs %ld, solve %.2f s, dsyev %.2f s\n", text.str().c_str(), r.its, r.matvecs, solve_s, total_s - solve_s);
  double anorm = 0;
  for (double l : ref) anorm = std::max(anorm, std::abs(l));

  ASSERT_EQ(r.reason, Reason::Converged) << to_string(r.reason) << " after " << r.its << " iterations, nconv " << r.nconv;
  ASSERT_GE(r.nconv, s.nev);
  ASSERT_GE(static_cast<int>(r.eigenvalues.size()), r.nconv);
  const int k = r.nconv;

  std::vector<std::vector<Scalar>> x(k, std::vector<Scalar>(n));
  for (int i = 0; i < k; ++i) b.get_column(i, x[i].data());

  // True residuals with the dense A (the matrix dsyev saw).
  double rf2 = 0;
  std::vector<Scalar> ax(n);
  for (int i = 0; i < k; ++i) {
    const double theta = r.eigenvalues[i];
    ASSERT_TRUE(std::isfinite(theta));
    EXPECT_LT(r.errors[i], s.tol) << "error estimate of pair " << i;
    p.dense_matvec(x[i].data(), ax.data());
    double res2 = 0;
    for (int row = 0; row < n; ++row) {
      const Scalar dd = ax[row] - theta * x[i][row];
      res2 += abs2(dd);
    }
    rf2 += res2;
    EXPECT_LE(std::sqrt(res2), std::max(10 * s.tol * std::abs(theta), 10 * n * eps * anorm))
        << "true residual of pair " << i << " (theta " << theta << ")";
    if (i > 0) {
      EXPECT_LE(which_key(s.which, 0.0, r.eigenvalues[i - 1]), which_key(s.which, 0.0, theta)) << "not sorted by which";
    }
  }

  // Orthonormality.
  double orth = 0;
  for (int i = 0; i < k; ++i)
    for (int j = 0; j <= i; ++j) {
      Scalar dot = 0;
      for (int row = 0; row < n; ++row) dot += conj_of(x[i][row]) * x[j][row];
      orth = std::max(orth, std::abs(dot - Scalar(i == j ? 1.0 : 0.0)));
    }
  EXPECT_LE(orth, 1e-10) << "returned vectors not orthonormal";

  // Eigenvalues, Kahan's bound: the nev wanted ones, and a one-to-one match with dsyev's.
  const double eig_tol = 2 * std::sqrt(rf2) + (2 * k * orth + 100 * n * eps) * anorm;
  Vec ref_keys(ref.size()), got_keys(k);
  for (std::size_t i = 0; i < ref.size(); ++i) ref_keys[i] = which_key(s.which, 0.0, ref[i]);
  for (int i = 0; i < k; ++i) got_keys[i] = which_key(s.which, 0.0, r.eigenvalues[i]);
  std::sort(ref_keys.begin(), ref_keys.end());
  std::sort(got_keys.begin(), got_keys.end());
  for (int i = 0; i < s.nev; ++i)
    EXPECT_NEAR(got_keys[i], ref_keys[i], eig_tol) << "wanted value " << i << " missing or wrong; returned " << describe(r.eigenvalues, 12);
  Vec got(r.eigenvalues.begin(), r.eigenvalues.begin() + k);
  std::sort(got.begin(), got.end());
  std::size_t q = 0;
  for (int i = 0; i < k; ++i) {
    while (q < ref.size() && ref[q] < got[i] - eig_tol) ++q;
    const bool match = q < ref.size() && std::abs(ref[q] - got[i]) <= eig_tol;
    EXPECT_TRUE(match) << "returned " << got[i] << " is not a (distinct) eigenvalue of A within " << eig_tol;
    if (match) ++q;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeded, LargeSweep, ::testing::Range(0, kNumCases));

// The implicit operator the driver uses and the dense matrix dsyev factors are the same matrix.
TEST(LargeSweep, ImplicitOperatorEqualsDenseMatrix)
{
  const Problem p = make_problem(CaseSpec{300, Spectrum::Wigner, Which::LargestAlgebraic, 1}, 7);
  Rng rng(8);
  Vec x(p.n), y1(p.n), y2(p.n);
  for (double &v : x) v = rng.normal();
  p.apply(x.data(), y1.data());
  p.dense_matvec(x.data(), y2.data());
  double diff = 0, nrm = 0;
  for (int i = 0; i < p.n; ++i) {
    diff = std::max(diff, std::abs(y1[i] - y2[i]));
    nrm = std::max(nrm, std::abs(y2[i]));
  }
  EXPECT_LE(diff, 1e-13 * std::max(1.0, nrm));
  for (int j = 0; j < p.n; ++j) {
    for (int i = 0; i < j; ++i) {
      ASSERT_EQ(p.A[i + static_cast<std::size_t>(j) * p.n], p.A[j + static_cast<std::size_t>(i) * p.n]);
    }
  }
}

} // namespace
