// ConstrainedBackend (a deflation space) with the host backend, against LAPACK: the eigenvalues of the
// problem restricted to the orthogonal complement of Z, Q_c^T A Q_c with Q_c an orthonormal basis of that
// complement (dsyev), and the returned vectors orthogonal to Z with small residuals of the projected
// operator (I - Z Z^T) A.
#include "core/constrained_backend.hpp"
#include "core/lanczos_driver.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

extern "C" {
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
}

namespace {

using namespace cudalanczos;
using namespace cudalanczos::testing;
using Vec = std::vector<double>;
using SVec = std::vector<Scalar>; // the backend's columns (real data here, in either build)
constexpr double eps = std::numeric_limits<double>::epsilon();

/// The n x n orthogonal Q of the Householder QR of the n x c matrix M (column-major): its first c
/// columns span M's columns (M of full rank), the others their orthogonal complement.
Vec full_q(int n, int c, Vec M)
{
  Vec tau(std::max(c, 1)), q(static_cast<std::size_t>(n) * n, 0.0);
  int info = 0, lwork = -1;
  double wq = 0;
  dgeqrf_(&n, &c, M.data(), &n, tau.data(), &wq, &lwork, &info);
  lwork = std::max(1, static_cast<int>(wq));
  Vec work(lwork);
  dgeqrf_(&n, &c, M.data(), &n, tau.data(), work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  std::copy(M.begin(), M.end(), q.begin());
  lwork = -1;
  dorgqr_(&n, &n, &c, q.data(), &n, tau.data(), &wq, &lwork, &info);
  lwork = std::max(1, static_cast<int>(wq));
  work.assign(lwork, 0.0);
  dorgqr_(&n, &n, &c, q.data(), &n, tau.data(), work.data(), &lwork, &info);
  EXPECT_EQ(info, 0);
  return q;
}

struct Problem {
  int n = 0;
  Vec A;              // symmetric, column-major
  std::vector<Vec> Z; // the deflation space (any basis of it)
  template <class T> void matvec(const T *x, T *y) const
  {
    std::fill(y, y + n, T(0));
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) y[i] += A[i + static_cast<std::size_t>(j) * n] * x[j];
  }
};

/// Eigenvalues (ascending) of A restricted to the orthogonal complement of Z.
Vec complement_eigenvalues(const Problem &p)
{
  const int n = p.n, c = static_cast<int>(p.Z.size());
  Vec M(static_cast<std::size_t>(n) * std::max(c, 1), 0.0);
  for (int j = 0; j < c; ++j) std::copy(p.Z[j].begin(), p.Z[j].end(), M.begin() + static_cast<std::size_t>(j) * n);
  const Vec q = full_q(n, std::max(c, 1), M);
  const int r = n - c; // B = Qc^T A Qc, Qc = q[:, c:n]
  Vec AQ(static_cast<std::size_t>(n) * r, 0.0), B(static_cast<std::size_t>(r) * r, 0.0);
  for (int j = 0; j < r; ++j) p.matvec(q.data() + static_cast<std::size_t>(c + j) * n, AQ.data() + static_cast<std::size_t>(j) * n);
  for (int j = 0; j < r; ++j)
    for (int i = 0; i < r; ++i) {
      double s = 0;
      for (int row = 0; row < n; ++row) s += q[row + static_cast<std::size_t>(c + i) * n] * AQ[row + static_cast<std::size_t>(j) * n];
      B[i + static_cast<std::size_t>(j) * r] = s;
    }
  return lapack_eigenvalues(r, B);
}

struct Outcome {
  Result result;
  std::vector<SVec> vectors;
  int kept = 0;
};

Outcome solve_constrained(const Problem &p, const Settings &s)
{
  HostBackend host(p.n, p.n, 0, [&p](const Scalar *x, Scalar *y) { p.matvec(x, y); });
  ConstrainedBackend b(host, static_cast<int>(p.Z.size()));
  b.resize_basis(basis_columns_needed(s));
  Outcome out;
  for (const Vec &z : p.Z) out.kept += b.add_constraint(SVec(z.begin(), z.end()).data()) ? 1 : 0;
  out.result = solve(b, s, {});
  for (std::size_t j = 0; j < out.result.eigenvalues.size(); ++j) {
    SVec x(p.n);
    b.get_column(static_cast<int>(j), x.data());
    out.vectors.push_back(std::move(x));
  }
  return out;
}

/// The nev returned pairs are the nev best of the complement's spectrum (by `which`), each vector
/// orthogonal to Z, with a small residual of the projected operator.
void check(const Problem &p, const Settings &s, const Outcome &o)
{
  const Result &r = o.result;
  ASSERT_EQ(r.reason, Reason::Converged) << "nconv " << r.nconv << ", values " << describe(r.eigenvalues);
  ASSERT_GE(r.nconv, s.nev);
  Vec ref = complement_eigenvalues(p);
  double anorm = 0;
  for (double l : ref) anorm = std::max(anorm, std::abs(l));
  std::sort(ref.begin(), ref.end(), [&](double a, double b) { return which_key(s.which, s.target, a) < which_key(s.which, s.target, b); });
  Vec got(r.eigenvalues.begin(), r.eigenvalues.begin() + s.nev);
  for (int i = 0; i < s.nev; ++i)
    EXPECT_NEAR(got[i], ref[i], 1e-8 * anorm) << "value " << i << ": got " << describe(got) << ", complement's " << describe(ref, s.nev + 3);
  // Z's span, orthonormalized, to measure the vectors' components in it and to project A x.
  const int c = static_cast<int>(p.Z.size());
  Vec M(static_cast<std::size_t>(p.n) * c);
  for (int j = 0; j < c; ++j) std::copy(p.Z[j].begin(), p.Z[j].end(), M.begin() + static_cast<std::size_t>(j) * p.n);
  const Vec q = full_q(p.n, c, M);
  const int zc = o.kept; // the independent vectors of Z: the first columns of q span Z
  SVec ax(p.n);
  for (int i = 0; i < s.nev; ++i) {
    const SVec &x = o.vectors[i];
    double worst = 0;
    for (int j = 0; j < zc; ++j) {
      Scalar dot = 0;
      for (int row = 0; row < p.n; ++row) dot += q[row + static_cast<std::size_t>(j) * p.n] * x[row];
      worst = std::max(worst, std::abs(dot));
    }
    EXPECT_LE(worst, 1e-10) << "vector " << i << " has a component in the deflation space";
    p.matvec(x.data(), ax.data());
    for (int j = 0; j < zc; ++j) { // ax = (I - Z Z^T) A x
      Scalar dot = 0;
      for (int row = 0; row < p.n; ++row) dot += q[row + static_cast<std::size_t>(j) * p.n] * ax[row];
      for (int row = 0; row < p.n; ++row) ax[row] -= dot * q[row + static_cast<std::size_t>(j) * p.n];
    }
    double res2 = 0;
    for (int row = 0; row < p.n; ++row) res2 += abs2(ax[row] - r.eigenvalues[i] * x[row]);
    EXPECT_LE(std::sqrt(res2), std::max(10 * s.tol * std::abs(r.eigenvalues[i]), 1000 * p.n * eps * anorm)) << "residual of pair " << i;
  }
}

Settings settings(int nev, int ncv, Which which)
{
  Settings s;
  s.nev = nev;
  s.ncv = ncv;
  s.which = which;
  s.tol = 1e-10;
  s.max_it = 5000;
  return s;
}

/// Q diag(d) Q^T with a random orthogonal Q; the eigenvectors (Q's columns) returned too.
Problem planted(int n, const Vec &d, std::uint64_t seed, std::vector<Vec> &eigenvectors)
{
  Rng rng(seed);
  Vec g(static_cast<std::size_t>(n) * n);
  for (double &x : g) x = rng.normal();
  const Vec q = full_q(n, n, g);
  Problem p;
  p.n = n;
  p.A.assign(static_cast<std::size_t>(n) * n, 0.0);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        p.A[i + static_cast<std::size_t>(j) * n] += q[i + static_cast<std::size_t>(k) * n] * d[k] * q[j + static_cast<std::size_t>(k) * n];
  for (int j = 0; j < n; ++j) // exactly symmetric
    for (int i = j + 1; i < n; ++i) p.A[j + static_cast<std::size_t>(i) * n] = p.A[i + static_cast<std::size_t>(j) * n];
  eigenvectors.clear();
  for (int k = 0; k < n; ++k) eigenvectors.emplace_back(q.begin() + static_cast<std::size_t>(k) * n, q.begin() + static_cast<std::size_t>(k + 1) * n);
  return p;
}

TEST(Constrained, KnownEigenvectorsAreDeflated)
{
  // Eigenvalues 1..n; Z the eigenvectors of the two largest: the largest four left are n-2 .. n-5.
  const int n = 120;
  Vec d(n);
  for (int i = 0; i < n; ++i) d[i] = i + 1;
  std::vector<Vec> ev;
  Problem p = planted(n, d, 41, ev);
  p.Z = {ev[n - 1], ev[n - 2]};
  for (const Reorthogonalization reorth : {Reorthogonalization::Full, Reorthogonalization::Partial})
    for (const bool verify : {true, false}) {
      SCOPED_TRACE(std::string(reorth == Reorthogonalization::Full ? "full" : "partial") + (verify ? ", verify" : ""));
      Settings s = settings(4, 20, Which::LargestAlgebraic);
      s.reorthogonalization = reorth;
      s.verify = verify;
      const Outcome o = solve_constrained(p, s);
      EXPECT_EQ(o.kept, 2);
      check(p, s, o);
      EXPECT_NEAR(o.result.eigenvalues[0], n - 2, 1e-8 * n);
    }
}

TEST(Constrained, AGeneralSpaceGivesTheProjectedProblem)
{
  // Z is no invariant subspace: the solve is the one of (I - Z Z^T) A on Z's complement.
  const int n = 90;
  Rng rng(7);
  Problem p;
  p.n = n;
  p.A.assign(static_cast<std::size_t>(n) * n, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) p.A[i + static_cast<std::size_t>(j) * n] = p.A[j + static_cast<std::size_t>(i) * n] = rng.normal();
  for (int k = 0; k < 3; ++k) {
    Vec z(n);
    for (double &x : z) x = rng.normal();
    p.Z.push_back(z);
  }
  for (const Which which : {Which::LargestAlgebraic, Which::SmallestAlgebraic, Which::LargestMagnitude})
    for (const Reorthogonalization reorth : {Reorthogonalization::Full, Reorthogonalization::Partial}) {
      SCOPED_TRACE(std::string(which_name(which)) + (reorth == Reorthogonalization::Full ? ", full" : ", partial"));
      Settings s = settings(5, 24, which);
      s.reorthogonalization = reorth;
      const Outcome o = solve_constrained(p, s);
      EXPECT_EQ(o.kept, 3);
      check(p, s, o);
    }
  // Block steps and the thesis variant take the products' projection (apply_operator*).
  for (const Reorthogonalization reorth : {Reorthogonalization::Full, Reorthogonalization::Partial}) {
    // partial: what the PETSc layer chooses with blocks of 2 for a large sparse matrix on a GPU
    Settings s = settings(5, 24, Which::LargestAlgebraic);
    s.block_size = 2;
    s.ncv = 30;
    s.reorthogonalization = reorth;
    SCOPED_TRACE(reorth == Reorthogonalization::Full ? "block size 2, full" : "block size 2, partial");
    const Outcome o = solve_constrained(p, s);
    EXPECT_EQ(o.result.block_size, 2);
    check(p, s, o);
  }
  {
    Settings s = settings(1, 80, Which::LargestAlgebraic);
    s.variant = Variant::Thesis;
    s.reorthogonalization = Reorthogonalization::Full;
    SCOPED_TRACE("thesis variant");
    const Outcome o = solve_constrained(p, s);
    check(p, s, o);
  }
}

TEST(Constrained, TheFiedlerValuesOfAPath)
{
  // The path graph's Laplacian: eigenvalues 2 - 2 cos(k pi / n), k = 0..n-1, the constant vector for 0.
  // With the constant vector deflated the smallest three are those of k = 1, 2, 3 (the graph-spectra use:
  // the Fiedler vector without the trivial pair).
  const int n = 60;
  Problem p;
  p.n = n;
  p.A.assign(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    p.A[i + static_cast<std::size_t>(i) * n] = (i == 0 || i == n - 1) ? 1 : 2;
    if (i + 1 < n) p.A[i + 1 + static_cast<std::size_t>(i) * n] = p.A[i + static_cast<std::size_t>(i + 1) * n] = -1;
  }
  p.Z = {Vec(n, 1.0)};
  Settings s = settings(3, 20, Which::SmallestAlgebraic);
  const Outcome o = solve_constrained(p, s);
  check(p, s, o);
  for (int k = 1; k <= 3; ++k) EXPECT_NEAR(o.result.eigenvalues[k - 1], 2 - 2 * std::cos(k * M_PI / n), 1e-10);
}

TEST(Constrained, DependentVectorsAreDroppedAndTheRoomIsChecked)
{
  const int n = 40;
  HostBackend host(n, n, 0, [](const Scalar *x, Scalar *y) { std::copy(x, x + n, y); });
  ConstrainedBackend b(host, 4);
  EXPECT_THROW(b.add_constraint(SVec(n, 1.0).data()), Error); // before resize_basis
  b.resize_basis(10);
  SVec z1(n, 0.0), z2(n, 0.0), z3(n), zero(n, 0.0);
  z1[0] = 1;
  z2[1] = 3;
  for (int i = 0; i < n; ++i) z3[i] = z1[i] + 2.0 * z2[i]; // in their span
  EXPECT_TRUE(b.add_constraint(z1.data()));
  EXPECT_TRUE(b.add_constraint(z2.data()));
  EXPECT_FALSE(b.add_constraint(z3.data()));
  EXPECT_FALSE(b.add_constraint(zero.data()));
  EXPECT_EQ(b.constraints(), 2);
  EXPECT_EQ(b.global_size(), n - 2);
  EXPECT_EQ(b.basis_columns(), 10 + 4 - 2);
  SVec nan(n, std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW(b.add_constraint(nan.data()), Error);
  // The driver's start vector has no component along Z.
  b.set_random(0, 5);
  SVec x(n);
  b.get_column(0, x.data());
  EXPECT_EQ(x[0], 0.0);
  EXPECT_NEAR(std::abs(x[1]), 0.0, 1e-15);
  b.resize_basis(10); // forgets Z
  EXPECT_EQ(b.constraints(), 0);
  for (int i = 0; i < 4; ++i) {
    SVec e(n, 0.0);
    e[i] = 1;
    EXPECT_TRUE(b.add_constraint(e.data()));
  }
  EXPECT_THROW(b.add_constraint(z1.data()), Error); // no room for a fifth
}

} // namespace
