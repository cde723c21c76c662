// Complex scalars in src/core and src/host.
//
// hermitian_eigen (the block variant's dense eigensolver in the complex build) against LAPACK's zheev:
// compiled and run in both builds, as its complex code exists in both. The rest runs in the complex build
// (CUDALANCZOS_USE_COMPLEX): the host backend's products with complex data against the plain formulas
// (conjugation in the left factor: project gives V^H w), the reducer seeing Scalars as two doubles each,
// BInnerProductBackend with a complex Hermitian A and a positive definite B, and ConstrainedBackend with
// complex constraint vectors, each solve checked against zheev and by true residuals.
#include "core/b_inner_product_backend.hpp"
#include "core/constrained_backend.hpp"
#include "core/lanczos_driver.hpp"
#include "core/symmetric_eigen.hpp"
#include "forwarding_backend.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

namespace {

using namespace cudalanczos;
using cudalanczos::testing::ForwardingBackend;
using cudalanczos::testing::Rng;
using C = std::complex<double>;
using CVec = std::vector<C>;
constexpr double eps = std::numeric_limits<double>::epsilon();

/// A random Hermitian n x n matrix (column-major, both triangles): real diagonal, complex off-diagonal.
CVec random_hermitian(int n, std::uint64_t seed)
{
  Rng rng(seed);
  CVec a(static_cast<std::size_t>(n) * n);
  for (int j = 0; j < n; ++j) {
    a[j + static_cast<std::size_t>(j) * n] = rng.uniform(-1, 1);
    for (int i = j + 1; i < n; ++i) {
      const C v(rng.uniform(-1, 1), rng.uniform(-1, 1));
      a[i + static_cast<std::size_t>(j) * n] = v;
      a[j + static_cast<std::size_t>(i) * n] = std::conj(v);
    }
  }
  return a;
}

double frobenius(const CVec &a)
{
  double s = 0;
  for (const C &x : a) s += std::norm(x);
  return std::sqrt(s);
}

/// hermitian_eigen on a copy of a, checked against zheev, by residuals and by the orthonormality of Z;
/// the last rows alone (zrows) must be those of the full Z bit for bit.
void check_hermitian_eigen(int n, const CVec &a, const char *what)
{
  SCOPED_TRACE(std::string(what) + ", n = " + std::to_string(n));
  CVec S(a), Z(static_cast<std::size_t>(n) * n);
  std::vector<double> w(n);
  hermitian_eigen(n, S.data(), n, w.data(), Z.data(), n);
  const std::vector<double> ref = cudalanczos::testing::lapack_eigenvalues(n, a);
  const double norm = std::max(frobenius(a), 1e-300);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(w[i], ref[i], 20 * n * eps * norm) << "eigenvalue " << i;
  for (int i = 1; i < n; ++i) EXPECT_LE(w[i - 1], w[i]) << "not ascending";
  for (int k = 0; k < n; ++k) {
    double res = 0;
    for (int i = 0; i < n; ++i) {
      C s = 0;
      for (int j = 0; j < n; ++j) s += a[i + static_cast<std::size_t>(j) * n] * Z[j + static_cast<std::size_t>(k) * n];
      res += std::norm(s - w[k] * Z[i + static_cast<std::size_t>(k) * n]);
    }
    EXPECT_LE(std::sqrt(res), 50 * n * eps * norm) << "residual of pair " << k;
    for (int l = 0; l <= k; ++l) {
      C d = 0;
      for (int i = 0; i < n; ++i) d += std::conj(Z[i + static_cast<std::size_t>(l) * n]) * Z[i + static_cast<std::size_t>(k) * n];
      EXPECT_NEAR(std::abs(d - C(l == k ? 1.0 : 0.0)), 0.0, 50 * n * eps) << "Z^H Z at " << l << "," << k;
    }
  }
  for (int zrows : {0, 1, n / 2, n}) {
    if (zrows > n) continue;
    CVec S2(a), Zr(static_cast<std::size_t>(std::max(zrows, 1)) * n);
    std::vector<double> w2(n);
    hermitian_eigen(n, S2.data(), n, w2.data(), Zr.data(), std::max(zrows, 1), zrows);
    EXPECT_EQ(w2, w) << "zrows " << zrows;
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < zrows; ++i)
        ASSERT_EQ(Zr[i + static_cast<std::size_t>(k) * std::max(zrows, 1)], Z[(n - zrows + i) + static_cast<std::size_t>(k) * n])
            << "zrows " << zrows << ", row " << i << ", column " << k;
  }
}

TEST(HermitianEigen, RandomMatchesZheev)
{
  for (int n : {1, 2, 3, 4, 7, 16, 33, 60}) check_hermitian_eigen(n, random_hermitian(n, 100 + n), "random");
}

TEST(HermitianEigen, SpecialMatricesMatchZheev)
{
  // Zero, identity, repeated diagonal, complex tridiagonal (already reduced: only the phases remain),
  // a real symmetric one, and entries near overflow and underflow (power-of-two scaling).
  for (int n : {1, 5, 12}) {
    CVec zero(static_cast<std::size_t>(n) * n, 0.0), eye(zero), diag(zero), tri(zero), real(zero);
    for (int i = 0; i < n; ++i) {
      eye[i + static_cast<std::size_t>(i) * n] = 1;
      diag[i + static_cast<std::size_t>(i) * n] = i % 3;
      tri[i + static_cast<std::size_t>(i) * n] = 2;
      if (i + 1 < n) {
        tri[i + 1 + static_cast<std::size_t>(i) * n] = std::polar(1.0, 0.3 + i);
        tri[i + static_cast<std::size_t>(i + 1) * n] = std::polar(1.0, -0.3 - i);
      }
    }
    Rng rng(n);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) real[i + static_cast<std::size_t>(j) * n] = real[j + static_cast<std::size_t>(i) * n] = rng.uniform(-1, 1);
    check_hermitian_eigen(n, zero, "zero");
    check_hermitian_eigen(n, eye, "identity");
    check_hermitian_eigen(n, diag, "repeated diagonal");
    check_hermitian_eigen(n, tri, "complex tridiagonal");
    check_hermitian_eigen(n, real, "real symmetric");
    for (double scale : {1e300, 1e-300}) {
      CVec big = random_hermitian(n, 7 * n);
      for (C &x : big) x *= scale;
      check_hermitian_eigen(n, big, scale > 1 ? "near overflow" : "near underflow");
    }
  }
}

TEST(HermitianEigen, ReadsTheLowerTriangleOnlyAndRejectsBadInput)
{
  const int n = 6;
  CVec a = random_hermitian(n, 3), junk(a);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i) junk[i + static_cast<std::size_t>(j) * n] = C(1e6, -1e6); // the upper triangle
  std::vector<double> w1(n), w2(n);
  CVec Z1(static_cast<std::size_t>(n) * n), Z2(Z1);
  hermitian_eigen(n, a.data(), n, w1.data(), Z1.data(), n);
  hermitian_eigen(n, junk.data(), n, w2.data(), Z2.data(), n);
  EXPECT_EQ(w1, w2);
  EXPECT_EQ(Z1, Z2);
  CVec bad = random_hermitian(n, 4);
  bad[3] = C(0, std::numeric_limits<double>::quiet_NaN());
  EXPECT_THROW(hermitian_eigen(n, bad.data(), n, w1.data(), Z1.data(), n), Error);
  EXPECT_THROW(hermitian_eigen(-1, bad.data(), n, w1.data(), Z1.data(), n), Error);
  EXPECT_THROW(hermitian_eigen(n, bad.data(), n - 1, w1.data(), Z1.data(), n), Error);
  EXPECT_THROW(hermitian_eigen(n, bad.data(), n, w1.data(), Z1.data(), n, n + 1), Error);
}

#if defined(CUDALANCZOS_USE_COMPLEX) && CUDALANCZOS_USE_COMPLEX
static_assert(std::is_same<Scalar, C>::value && kDoublesPerScalar == 2, "the complex build's Scalar");

/// y = A x for a dense Hermitian A (column-major).
HostOperator dense_operator(const CVec &a, int n)
{
  return [&a, n](const C *x, C *y) {
    for (int i = 0; i < n; ++i) {
      C s = 0;
      for (int j = 0; j < n; ++j) s += a[i + static_cast<std::size_t>(j) * n] * x[j];
      y[i] = s;
    }
  };
}

CVec column(const Backend &b, int j)
{
  CVec x(b.local_size());
  b.get_column(j, x.data());
  return x;
}

C dot(const CVec &x, const CVec &y) // x^H y
{
  C s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += std::conj(x[i]) * y[i];
  return s;
}

void expect_close(const CVec &got, const CVec &want, double tol, const char *what)
{
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_LE(std::abs(got[i] - want[i]), tol) << what << ", entry " << i;
}

TEST(ComplexHostBackend, ProductsConjugateTheLeftFactor)
{
  // 5 rows, 4 columns of complex data; every product against the plain formula.
  const int n = 5;
  const CVec A = random_hermitian(n, 1);
  std::vector<int> counts;
  HostBackend b(n, n, 0, dense_operator(A, n), [&counts](double *, int count) { counts.push_back(count); });
  b.resize_basis(8);
  Rng rng(2);
  std::vector<CVec> v(4, CVec(n));
  for (int j = 0; j < 4; ++j) {
    for (C &x : v[j]) x = C(rng.uniform(-1, 1), rng.uniform(-1, 1));
    b.set_column(j, v[j].data());
  }
  // project: out[i] = v_i^H v_3, out[k] = v_3^H v_3 (real); the reducer sees 2 (k + 1) doubles.
  C out[4];
  b.project(0, 3, 3, out);
  for (int i = 0; i < 3; ++i) EXPECT_LE(std::abs(out[i] - dot(v[i], v[3])), 1e-15) << i;
  EXPECT_LE(std::abs(out[3] - dot(v[3], v[3])), 1e-15);
  EXPECT_EQ(out[3].imag(), 0.0);
  EXPECT_NE(out[0].imag(), 0.0); // the data is genuinely complex, so a missing conjugate shows
  EXPECT_LE(std::abs(out[0] - std::conj(dot(v[3], v[0]))), 1e-15);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0], 8);
  // project_with: out[i] = v_i^H v_2, out[k] = v_1^H v_2.
  b.project_with(0, 1, 1, 2, out);
  EXPECT_LE(std::abs(out[0] - dot(v[0], v[2])), 1e-15);
  EXPECT_LE(std::abs(out[1] - dot(v[1], v[2])), 1e-15);
  // The default project_with (two project calls) agrees.
  {
    struct Plain final : ForwardingBackend { // forwards everything but project_with, which stays Backend's
      using ForwardingBackend::ForwardingBackend;
      std::string name() const override { return "plain"; }
    } plain(b);
    C out2[2];
    plain.project_with(0, 1, 1, 2, out2);
    EXPECT_LE(std::abs(out2[0] - out[0]), 1e-15);
    EXPECT_LE(std::abs(out2[1] - out[1]), 1e-15);
    // project_block (Backend's default): [V_0:2 V_2:4]^H V_2:4.
    C P[4 * 2];
    plain.project_block(0, 2, 2, 2, P);
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 4; ++i) EXPECT_LE(std::abs(P[i + 4 * j] - dot(v[i], v[2 + j])), 1e-15) << i << "," << j;
  }
  // subtract: v_3 -= c_0 v_0 + c_1 v_1, returns ||v_3||^2.
  const C coef[2] = {C(0.5, -0.25), C(-1, 2)};
  CVec want(n);
  for (int r = 0; r < n; ++r) want[r] = v[3][r] - coef[0] * v[0][r] - coef[1] * v[1][r];
  const double nrm2 = b.subtract(0, 2, coef, 3);
  expect_close(column(b, 3), want, 1e-15, "subtract");
  EXPECT_NEAR(nrm2, dot(want, want).real(), 1e-14);
  // combine into column 4, rotate with a complex Q.
  for (int r = 0; r < n; ++r) want[r] = coef[0] * v[0][r] + coef[1] * v[1][r];
  b.combine(0, 2, coef, 4);
  expect_close(column(b, 4), want, 1e-15, "combine");
  b.set_column(3, v[3].data());
  const C Q[3 * 2] = {C(1, 1), C(0, -1), C(2, 0), C(0.5, 0), C(0, 0.5), C(-1, -1)};
  b.rotate(3, 2, Q, 3);
  for (int j = 0; j < 2; ++j) {
    for (int r = 0; r < n; ++r) want[r] = Q[0 + 3 * j] * v[0][r] + Q[1 + 3 * j] * v[1][r] + Q[2 + 3 * j] * v[2][r];
    expect_close(column(b, j), want, 1e-14, "rotate");
  }
  // scale by a real factor; apply_operator.
  b.set_column(0, v[0].data());
  b.scale(0, -2.0);
  for (int r = 0; r < n; ++r) want[r] = -2.0 * v[0][r];
  expect_close(column(b, 0), want, 0, "scale");
  b.apply_operator(0, 5);
  dense_operator(A, n)(column(b, 0).data(), want.data());
  expect_close(column(b, 5), want, 0, "apply_operator");
}

TEST(ComplexHostBackend, BlockDefaultsMatchThePlainFormulas)
{
  const int n = 7;
  HostBackend b(n, n, 0, dense_operator(random_hermitian(n, 5), n));
  b.resize_basis(6);
  Rng rng(6);
  std::vector<CVec> v(5, CVec(n));
  for (int j = 0; j < 5; ++j) {
    for (C &x : v[j]) x = C(rng.uniform(-1, 1), rng.uniform(-1, 1));
    b.set_column(j, v[j].data());
  }
  // update_block: V[:, 3:5] -= V[:, 0:3] Cm.
  const C Cm[3 * 2] = {C(1, 0), C(0, 1), C(-1, 1), C(0.5, -0.5), C(2, 0), C(0, -2)};
  b.update_block(0, 3, Cm, 3, 3, 2);
  CVec want(n);
  for (int j = 0; j < 2; ++j) {
    for (int r = 0; r < n; ++r) want[r] = v[3 + j][r] - Cm[3 * j] * v[0][r] - Cm[1 + 3 * j] * v[1][r] - Cm[2 + 3 * j] * v[2][r];
    expect_close(column(b, 3 + j), want, 1e-14, "update_block");
  }
  // transform_block: V[:, 0:2] = V[:, 0:2] M.
  const C M[4] = {C(1, 2), C(3, -1), C(0, 1), C(-2, 0)};
  b.transform_block(0, 2, M, 2);
  for (int j = 0; j < 2; ++j) {
    for (int r = 0; r < n; ++r) want[r] = M[2 * j] * v[0][r] + M[1 + 2 * j] * v[1][r];
    expect_close(column(b, j), want, 1e-14, "transform_block");
  }
}

/// The solve's checks: values against `ref` (the nev wanted ones, by which), vectors orthonormal in the
/// inner product `inner` (x^H B x), residuals ||A x - lambda B x|| small.
void check_pairs(const Result &r, const Settings &s, const std::vector<double> &ref, const std::vector<CVec> &x,
                 const std::function<void(const C *, C *)> &A, const std::function<void(const C *, C *)> &B, double anorm)
{
  ASSERT_EQ(r.reason, Reason::Converged) << to_string(r.reason);
  ASSERT_GE(r.nconv, s.nev);
  std::vector<double> want(ref);
  std::sort(want.begin(), want.end(), [&](double a, double b) {
    return cudalanczos::testing::which_key(s.which, s.target, a) < cudalanczos::testing::which_key(s.which, s.target, b);
  });
  std::vector<double> got(r.eigenvalues.begin(), r.eigenvalues.begin() + s.nev);
  for (int i = 0; i < s.nev; ++i) EXPECT_NEAR(got[i], want[i], 1e-8 * anorm) << "value " << i;
  const std::size_t n = x[0].size();
  CVec ax(n), bx(n);
  for (int i = 0; i < s.nev; ++i) {
    A(x[i].data(), ax.data());
    B(x[i].data(), bx.data());
    double res = 0;
    for (std::size_t q = 0; q < n; ++q) res += std::norm(ax[q] - r.eigenvalues[i] * bx[q]);
    EXPECT_LE(std::sqrt(res), 10 * s.tol * anorm) << "residual of pair " << i;
    for (int j = 0; j <= i; ++j) {
      B(x[j].data(), bx.data());
      EXPECT_NEAR(std::abs(dot(x[i], bx) - C(i == j ? 1.0 : 0.0)), 0.0, 1e-10) << "x_" << i << "^H B x_" << j;
    }
  }
}

TEST(ComplexBInnerProduct, GeneralizedHermitianMatchesZheev)
{
  // A x = lambda B x, A complex Hermitian, B diagonal positive definite: the operator B^-1 A is
  // self-adjoint in the B-inner product. Reference: zheev of B^-1/2 A B^-1/2.
  const int n = 90;
  const CVec A = random_hermitian(n, 31);
  Rng rng(32);
  std::vector<double> d(n);
  for (double &x : d) x = rng.uniform(0.5, 3.0);
  CVec scaled(A);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) scaled[i + static_cast<std::size_t>(j) * n] /= std::sqrt(d[i] * d[j]);
  const std::vector<double> ref = cudalanczos::testing::lapack_eigenvalues(n, scaled);
  const auto Aop = dense_operator(A, n);
  const auto Bop = [&d, n](const C *x, C *y) {
    for (int i = 0; i < n; ++i) y[i] = d[i] * x[i];
  };
  for (int variant = 0; variant < 3; ++variant) {
    Settings s;
    s.nev = 5;
    s.ncv = 24;
    s.tol = 1e-10;
    s.max_it = 500;
    s.which = variant == 1 ? Which::SmallestAlgebraic : Which::LargestAlgebraic;
    if (variant == 2) s.block_size = 2;
    SCOPED_TRACE("variant " + std::to_string(variant));
    HostBackend host(n, n, 0, [&](const C *x, C *y) {
      Aop(x, y);
      for (int i = 0; i < n; ++i) y[i] /= d[i];
    });
    BInnerProductBackend b(host, host_round_trip(Bop));
    b.resize_basis(basis_columns_needed(s));
    const Result r = solve(b, s, {});
    std::vector<CVec> x;
    for (int i = 0; i < r.nconv; ++i) x.push_back(column(b, i));
    check_pairs(r, s, ref, x, Aop, Bop, std::max(std::abs(ref.front()), std::abs(ref.back())));
  }
}

TEST(ComplexBInnerProduct, IndefiniteBIsRefused)
{
  const int n = 12;
  const CVec A = random_hermitian(n, 2);
  HostBackend host(n, n, 0, dense_operator(A, n));
  BInnerProductBackend b(host, host_round_trip([n](const C *x, C *y) {
    for (int i = 0; i < n; ++i) y[i] = (i == 4 ? -1.0 : 1.0) * x[i];
  }));
  b.resize_basis(4);
  CVec e4(n, 0.0);
  e4[4] = C(0, 1); // x^H B x = -1
  b.set_column(0, e4.data());
  C out[1];
  EXPECT_THROW(b.project(0, 0, 0, out), Error);
}

TEST(ComplexConstrained, DeflatedEigenvectorsAreSkipped)
{
  // A = U diag(1..n) U^H with U unitary; constraints: the complex eigenvectors of the two largest
  // values (and a dependent combination of them, which is dropped). The largest three left are
  // n-2, n-3, n-4, with vectors orthogonal to the constraints.
  const int n = 60;
  Rng rng(9);
  CVec U(static_cast<std::size_t>(n) * n);
  for (C &x : U) x = C(rng.normal(), rng.normal());
  for (int k = 0; k < n; ++k) { // Gram-Schmidt, twice
    C *uk = U.data() + static_cast<std::size_t>(k) * n;
    for (int pass = 0; pass < 2; ++pass)
      for (int j = 0; j < k; ++j) {
        const C *uj = U.data() + static_cast<std::size_t>(j) * n;
        C h = 0;
        for (int i = 0; i < n; ++i) h += std::conj(uj[i]) * uk[i];
        for (int i = 0; i < n; ++i) uk[i] -= h * uj[i];
      }
    double nrm = 0;
    for (int i = 0; i < n; ++i) nrm += std::norm(uk[i]);
    for (int i = 0; i < n; ++i) uk[i] /= std::sqrt(nrm);
  }
  CVec A(static_cast<std::size_t>(n) * n, 0.0);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        A[i + static_cast<std::size_t>(j) * n] += U[i + static_cast<std::size_t>(k) * n] * (k + 1.0) * std::conj(U[j + static_cast<std::size_t>(k) * n]);
  Settings s;
  s.nev = 3;
  s.ncv = 20;
  s.tol = 1e-10;
  s.max_it = 500;
  s.which = Which::LargestAlgebraic;
  HostBackend host(n, n, 0, dense_operator(A, n));
  ConstrainedBackend b(host, 3);
  b.resize_basis(basis_columns_needed(s));
  std::vector<CVec> z;
  for (int k : {n - 1, n - 2}) z.emplace_back(U.begin() + static_cast<std::size_t>(k) * n, U.begin() + static_cast<std::size_t>(k + 1) * n);
  CVec mix(n);
  for (int i = 0; i < n; ++i) mix[i] = C(0, 2) * z[0][i] - C(1, 1) * z[1][i];
  EXPECT_TRUE(b.add_constraint(z[0].data()));
  EXPECT_TRUE(b.add_constraint(z[1].data()));
  EXPECT_FALSE(b.add_constraint(mix.data())) << "a combination of the constraints must be dropped";
  const Result r = solve(b, s, {});
  ASSERT_EQ(r.reason, Reason::Converged) << to_string(r.reason);
  ASSERT_GE(r.nconv, 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r.eigenvalues[i], n - 2.0 - i, 1e-8 * n) << "value " << i;
  const auto Aop = dense_operator(A, n);
  CVec ax(n);
  for (int i = 0; i < 3; ++i) {
    const CVec x = column(b, i);
    for (const CVec &zk : z) EXPECT_LE(std::abs(dot(zk, x)), 1e-12) << "vector " << i << " not orthogonal to Z";
    Aop(x.data(), ax.data());
    double res = 0;
    for (int q = 0; q < n; ++q) res += std::norm(ax[q] - r.eigenvalues[i] * x[q]);
    EXPECT_LE(std::sqrt(res), 10 * s.tol * n) << "residual of pair " << i;
  }
}
TEST(ComplexScaling, TinyAndHugeMultiplesMatchZheev)
{
  // c A for c = 1e-300 and 1e300 (scaling into range, power-of-two exact): the eigenvalues of c A are c
  // times zheev's on A, the vectors have small residuals on A itself.
  const int n = 70;
  const CVec A = random_hermitian(n, 41);
  const std::vector<double> ref = cudalanczos::testing::lapack_eigenvalues(n, A);
  const double anorm = std::max(std::abs(ref.front()), std::abs(ref.back()));
  for (double c : {1e-300, 1e300}) {
    SCOPED_TRACE("c = " + std::to_string(c));
    CVec cA(A);
    for (C &x : cA) x *= c;
    Settings s;
    s.nev = 4;
    s.ncv = 20;
    s.tol = 1e-10;
    s.max_it = 500;
    s.which = Which::LargestAlgebraic;
    HostBackend b(n, n, 0, dense_operator(cA, n));
    b.resize_basis(basis_columns_needed(s));
    const Result r = solve(b, s, {});
    ASSERT_EQ(r.reason, Reason::Converged) << to_string(r.reason);
    EXPECT_NE(r.scale_exponent, 0);
    const auto Aop = dense_operator(A, n);
    CVec ax(n);
    for (int i = 0; i < s.nev; ++i) {
      EXPECT_NEAR(r.eigenvalues[i] / c, ref[n - 1 - i], 1e-9 * anorm) << "value " << i;
      const CVec x = column(b, i);
      Aop(x.data(), ax.data());
      double res = 0;
      for (int q = 0; q < n; ++q) res += std::norm(ax[q] - (r.eigenvalues[i] / c) * x[q]);
      EXPECT_LE(std::sqrt(res), 1e-8 * anorm) << "residual on A of pair " << i;
    }
  }
}
#endif

} // namespace
