// BInnerProductBackend (generalized Hermitian problems A x = lambda B x) with the host backend, against
// LAPACK's dsygv: the driver runs unchanged on the operator B^-1 A (SLEPc's STSHIFT) or (A - sigma B)^-1 B
// (STSINVERT) in the B-inner product. Checked: the eigenvalues, the B-orthonormality of the returned
// vectors (X^T B X = I) and their true residuals ||A x - lambda B x||, for a diagonal B and a general
// symmetric positive definite one, odd sizes, full and partial reorthogonalization and block steps; the
// B-inner products of project / subtract themselves; and the refusal of a B that is not positive definite.
#include "core/b_inner_product_backend.hpp"
#include "core/constrained_backend.hpp"
#include "core/lanczos_driver.hpp"
#include "forwarding_backend.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

extern "C" {
void dsygv_(const int *itype, const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *b, const int *ldb,
            double *w, double *work, const int *lwork, int *info, std::size_t jobz_len, std::size_t uplo_len);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, std::size_t uplo_len);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda, double *b, const int *ldb, int *info,
             std::size_t uplo_len);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv, double *b, const int *ldb,
             int *info, std::size_t trans_len);
}

namespace {

using namespace cudalanczos;
using namespace cudalanczos::testing;
using Vec = std::vector<double>;
using SVec = std::vector<Scalar>; // the backend's columns (the pencils are real, in either build)
constexpr double eps = std::numeric_limits<double>::epsilon();

/// The real parts of a Dense matrix's entries (the pencils here are real): what LAPACK's real routines take.
Vec real_of(const SVec &a)
{
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) r[i] = real_part(a[i]);
  return r;
}

/// solve(rhs, nrhs) on y: in place where Scalar is double; with complex Scalars on its real and imaginary
/// parts as two right-hand sides (the factored matrix is real).
template <class Solve> void solve_split(int n, Scalar *y, const Solve &solve)
{
#if defined(CUDALANCZOS_USE_COMPLEX) && CUDALANCZOS_USE_COMPLEX
  std::vector<double> rhs(2 * static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) rhs[i] = y[i].real(), rhs[n + i] = y[i].imag();
  solve(rhs.data(), 2);
  for (int i = 0; i < n; ++i) y[i] = Scalar(rhs[i], rhs[n + i]);
#else
  solve(y, 1);
#endif
}

enum class BKind { Diagonal, General };

/// A random symmetric A (normal entries) and an SPD B: diagonal with entries in [0.5, 4], or
/// G^T G / n + I/2 with G random normal (condition number about 10).
struct Pencil {
  Dense A, B;
  Pencil(int n, BKind kind, std::uint64_t seed) : A(n), B(n)
  {
    Rng rng(seed);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i <= j; ++i) A(i, j) = A(j, i) = rng.normal();
    if (kind == BKind::Diagonal) {
      for (int i = 0; i < n; ++i) B(i, i) = rng.uniform(0.5, 4.0);
    } else {
      Dense G(n);
      for (Scalar &x : G.a) x = rng.normal();
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          Scalar s = 0;
          for (int r = 0; r < n; ++r) s += G(r, i) * G(r, j);
          B(i, j) = s / static_cast<double>(n) + (i == j ? 0.5 : 0.0);
        }
    }
  }
  int n() const { return A.n; }
};

/// Eigenvalues of A x = lambda B x, ascending (dsygv, itype 1).
Vec dsygv_eigenvalues(const Pencil &p)
{
  int n = p.n(), itype = 1, info = 0, lwork = -1;
  Vec a = real_of(p.A.a), b = real_of(p.B.a), w(n);
  double wq = 0;
  dsygv_(&itype, "N", "L", &n, a.data(), &n, b.data(), &n, w.data(), &wq, &lwork, &info, 1, 1);
  lwork = std::max(1, static_cast<int>(wq));
  Vec work(lwork);
  dsygv_(&itype, "N", "L", &n, a.data(), &n, b.data(), &n, w.data(), work.data(), &lwork, &info, 1, 1);
  EXPECT_EQ(info, 0) << "dsygv failed";
  return w;
}

/// y = B^-1 A x (Cholesky of B): SLEPc's STSHIFT operator with sigma = 0.
struct ShiftOperator {
  const Pencil &p;
  Vec chol;
  explicit ShiftOperator(const Pencil &p_) : p(p_), chol(real_of(p_.B.a))
  {
    int n = p.n(), info = 0;
    dpotrf_("L", &n, chol.data(), &n, &info, 1);
    EXPECT_EQ(info, 0);
  }
  void operator()(const Scalar *x, Scalar *y) const
  {
    int n = p.n(), info = 0;
    p.A.matvec(x, y);
    solve_split(n, y, [&](double *rhs, int nrhs) { dpotrs_("L", &n, &nrhs, chol.data(), &n, rhs, &n, &info, 1); });
  }
};

/// y = (A - sigma B)^-1 B x (LU): SLEPc's STSINVERT operator.
struct ShiftInvertOperator {
  const Pencil &p;
  Vec lu;
  std::vector<int> piv;
  ShiftInvertOperator(const Pencil &p_, double sigma) : p(p_), lu(real_of(p_.A.a)), piv(p_.n())
  {
    int n = p.n(), info = 0;
    for (std::size_t i = 0; i < lu.size(); ++i) lu[i] -= sigma * real_part(p.B.a[i]);
    dgetrf_(&n, &n, lu.data(), &n, piv.data(), &info);
    EXPECT_EQ(info, 0);
  }
  void operator()(const Scalar *x, Scalar *y) const
  {
    int n = p.n(), info = 0;
    p.B.matvec(x, y);
    solve_split(n, y, [&](double *rhs, int nrhs) { dgetrs_("N", &n, &nrhs, lu.data(), &n, piv.data(), rhs, &n, &info, 1); });
  }
};

double norm(const SVec &x)
{
  double s = 0;
  for (const Scalar &v : x) s += abs2(v);
  return std::sqrt(s);
}

double matrix_norm1(const Dense &M) // max column sum: within a factor sqrt(n) of ||M||_2
{
  double worst = 0;
  for (int j = 0; j < M.n; ++j) {
    double s = 0;
    for (int i = 0; i < M.n; ++i) s += std::abs(M(i, j));
    worst = std::max(worst, s);
  }
  return worst;
}

struct Outcome {
  Result result;
  std::vector<SVec> vectors;
  long b_products = 0;
};

/// Solves with the driver on `op` through a BInnerProductBackend whose B is p.B (host products).
/// `columns`: the basis the caller allocates (default basis_columns_needed(s)).
template <class Op> Outcome run(const Pencil &p, const Op &op, const Settings &s, const Callbacks &cb = {}, int columns = 0)
{
  HostBackend host(p.n(), p.n(), 0, [&op](const Scalar *x, Scalar *y) { op(x, y); });
  BInnerProductBackend b(host, host_round_trip([&p](const Scalar *x, Scalar *y) { p.B.matvec(x, y); }));
  b.resize_basis(columns > 0 ? columns : basis_columns_needed(s));
  Outcome out;
  out.result = solve(b, s, cb);
  for (std::size_t j = 0; j < out.result.eigenvalues.size(); ++j) {
    SVec x(p.n());
    b.get_column(static_cast<int>(j), x.data());
    out.vectors.push_back(std::move(x));
  }
  out.b_products = b.b_products();
  return out;
}

/// The nev returned values are the nev best of dsygv's (by which), the vectors B-orthonormal with
/// small true residuals ||A x - lambda B x||.
void check(const Pencil &p, const Settings &s, const Outcome &o, const std::string &what)
{
  SCOPED_TRACE(what);
  const Result &r = o.result;
  ASSERT_EQ(r.reason, Reason::Converged) << "nconv " << r.nconv << ", values " << describe(r.eigenvalues);
  ASSERT_GE(r.nconv, s.nev);
  Vec ref = dsygv_eigenvalues(p);
  double lmax = 0;
  for (double l : ref) lmax = std::max(lmax, std::abs(l));
  std::sort(ref.begin(), ref.end(), [&](double a, double b) { return which_key(s.which, s.target, a) < which_key(s.which, s.target, b); });
  const Vec got(r.eigenvalues.begin(), r.eigenvalues.begin() + s.nev);
  for (int i = 0; i < s.nev; ++i)
    EXPECT_NEAR(got[i], ref[i], 1e-8 * lmax) << "value " << i << ": got " << describe(got) << ", dsygv's " << describe(ref, s.nev + 3);
  const int n = p.n();
  const double anorm = matrix_norm1(p.A), bnorm = matrix_norm1(p.B);
  SVec ax(n), bx(n), by(n);
  for (int i = 0; i < s.nev; ++i) {
    const SVec &x = o.vectors[i];
    p.A.matvec(x.data(), ax.data());
    p.B.matvec(x.data(), bx.data());
    for (int j = 0; j <= i; ++j) { // X^H B X = I
      Scalar dot = 0;
      for (int row = 0; row < n; ++row) dot += conj_of(o.vectors[j][row]) * bx[row];
      EXPECT_NEAR(std::abs(dot - Scalar(i == j ? 1.0 : 0.0)), 0.0, 1e-10) << "x_" << j << "^H B x_" << i;
    }
    SVec res(n);
    for (int row = 0; row < n; ++row) res[row] = ax[row] - got[i] * bx[row];
    // tol bounds the B^-1-norm residual of the operator relative to |lambda|; the Euclidean one of the
    // pencil is within ||B|| of it, plus rounding of the products.
    EXPECT_LE(norm(res), 10 * s.tol * std::abs(got[i]) * bnorm * norm(x) + 1000 * n * eps * (anorm + std::abs(got[i]) * bnorm) * norm(x))
        << "true residual of pair " << i << " (lambda " << got[i] << ")";
  }
}

Settings settings(int nev, Which which)
{
  Settings s;
  s.nev = nev;
  s.ncv = std::max(2 * nev, nev + 15);
  s.which = which;
  s.tol = 1e-10;
  s.max_it = 5000;
  return s;
}

TEST(BInnerProductBackend, ProjectAndSubtractAreBInnerProducts)
{
  const int n = 23;
  const Pencil p(n, BKind::General, 11);
  HostBackend host(n, n, 0, [](const Scalar *x, Scalar *y) { std::copy(x, x + n, y); });
  BInnerProductBackend b(host, host_round_trip([&p](const Scalar *x, Scalar *y) { p.B.matvec(x, y); }));
  b.resize_basis(5);
  EXPECT_EQ(b.basis_columns(), 5);
  EXPECT_EQ(host.basis_columns(), 6); // + the scratch column
  for (int j = 0; j < 5; ++j) b.set_random(j, 100 + j);
  std::vector<SVec> v(5, SVec(n));
  for (int j = 0; j < 5; ++j) b.get_column(j, v[j].data());
  auto bdot = [&](const SVec &x, const SVec &y) { // x^H B y
    SVec by(n);
    p.B.matvec(y.data(), by.data());
    Scalar s = 0;
    for (int r = 0; r < n; ++r) s += conj_of(x[r]) * by[r];
    return s;
  };
  Scalar out[4];
  b.project(0, 3, 4, out); // columns 0..2 against column 4
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(std::abs(out[i] - bdot(v[i], v[4])), 0.0, 1e-12 * n);
  EXPECT_NEAR(std::abs(out[3] - bdot(v[4], v[4])), 0.0, 1e-12 * n);
  // subtract: w -= V h, its B-norm after
  const Scalar h[3] = {0.5, -0.25, 2.0};
  const double after = b.subtract(0, 3, h, 4);
  SVec w = v[4];
  for (int i = 0; i < 3; ++i)
    for (int r = 0; r < n; ++r) w[r] -= h[i] * v[i][r];
  EXPECT_NEAR(after, real_part(bdot(w, w)), 1e-12 * n);
  // an unchanged column's product is reused; a scaled one gets a new product, and the values follow the scale
  const long before = b.b_products();
  b.project(0, 1, 4, out);
  EXPECT_EQ(b.b_products(), before);
  b.scale(4, 3.0);
  b.project(0, 1, 4, out);
  EXPECT_EQ(b.b_products(), before + 1);
  EXPECT_NEAR(std::abs(out[0] - 3.0 * bdot(v[0], w)), 0.0, 1e-12 * n);
  EXPECT_NEAR(std::abs(out[1] - 9.0 * bdot(w, w)), 0.0, 1e-11 * n);
}

TEST(BInnerProductBackend, DefaultProjectWithMatchesHostOverride)
{
  // The default project_with (two project calls) through a wrapper that does not override it, against
  // the host backend's one-pass override, on the same columns.
  const int n = 17;
  HostBackend host(n, n, 0, [](const Scalar *x, Scalar *y) { std::copy(x, x + n, y); });
  struct Plain final : cudalanczos::testing::ForwardingBackend { // forwards all but project_with, which stays the default
    using ForwardingBackend::ForwardingBackend;
    std::string name() const override { return "plain"; }
  } plain(host);
  plain.resize_basis(4);
  for (int j = 0; j < 4; ++j) plain.set_random(j, 7 + j);
  Scalar a[3], c[3];
  host.project_with(0, 2, 2, 3, a);
  plain.project_with(0, 2, 2, 3, c);
  for (int i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(real_part(a[i]), real_part(c[i])) << i;
    EXPECT_DOUBLE_EQ(std::imag(a[i]), std::imag(c[i])) << i;
  }
  SVec x(n), y(n);
  host.get_column(2, x.data());
  host.get_column(3, y.data());
  Scalar xy = 0;
  for (int r = 0; r < n; ++r) xy += conj_of(x[r]) * y[r];
  EXPECT_NEAR(std::abs(a[2] - xy), 0.0, 1e-13 * n);
}

TEST(BInnerProductBackend, ShiftOperatorMatchesDsygv)
{
  int cases = 0;
  for (int n : {37, 61})
    for (BKind kind : {BKind::Diagonal, BKind::General})
      for (Which which : {Which::LargestAlgebraic, Which::SmallestAlgebraic, Which::LargestMagnitude})
        for (Reorthogonalization re : {Reorthogonalization::Full, Reorthogonalization::Partial}) {
          const Pencil p(n, kind, 1000 + n * 7 + static_cast<int>(kind) * 3 + static_cast<int>(which));
          const ShiftOperator op(p);
          Settings s = settings(n == 37 ? 3 : 5, which);
          s.reorthogonalization = re;
          const std::string what = "n " + std::to_string(n) + (kind == BKind::Diagonal ? " diagonal B " : " general B ") + which_name(which) +
                                   (re == Reorthogonalization::Full ? " full" : " partial");
          const Outcome o = run(p, op, s);
          check(p, s, o, what);
          EXPECT_GT(o.b_products, 0) << what;
          EXPECT_LE(o.result.orthogonality, 1e-10) << what << ": max |V^T B V - I|";
          ++cases;
        }
  EXPECT_EQ(cases, 24);
}

TEST(BInnerProductBackend, BlockStepsMatchDsygv)
{
  for (BKind kind : {BKind::Diagonal, BKind::General}) {
    const Pencil p(53, kind, 77 + static_cast<int>(kind));
    const ShiftOperator op(p);
    Settings s = settings(4, Which::LargestAlgebraic);
    s.block_size = 2;
    s.ncv = 24;
    check(p, s, run(p, op, s), kind == BKind::Diagonal ? "block 2, diagonal B" : "block 2, general B");
  }
}

TEST(BInnerProductBackend, ShiftInvertMatchesDsygv)
{
  // theta = 1 / (lambda - sigma): the nearest eigenvalues to sigma are the largest |theta|.
  for (int n : {41, 59})
    for (BKind kind : {BKind::Diagonal, BKind::General}) {
      const Pencil p(n, kind, 500 + n + static_cast<int>(kind));
      const double sigma = 0.3;
      const ShiftInvertOperator op(p, sigma);
      Settings s = settings(4, Which::TargetMagnitude);
      s.target = sigma;
      s.translation_map = false;
      Callbacks cb;
      cb.eigenvalue = [sigma](double theta) { return sigma + 1.0 / theta; };
      Outcome o = run(p, op, s, cb);
      // the driver reports theta (the operator's values) best first: map them as SLEPc's STBackTransform
      for (double &t : o.result.eigenvalues) t = sigma + 1.0 / t;
      check(p, s, o, "sinvert n " + std::to_string(n) + (kind == BKind::Diagonal ? " diagonal B" : " general B"));
    }
}

// Settings::purify: each returned vector becomes Op x / ||Op x||_B from the Lanczos relation, without a
// product. Against the same solve without it (the same steps, the same unpurified vectors x): the values
// are the same bits, and each purified vector is Op x applied explicitly and B-normalized, to rounding
// (up to sign), with and without the verification round (whose start locks every converged pair). With
// a single column left for the residual directions, the pairs the driver could not purify are flagged
// NaN and come back unchanged, for the caller to purify with a product.
TEST(BInnerProductBackend, ShiftInvertPurificationIsTheOperatorApplied)
{
  const int n = 59;
  const Pencil p(n, BKind::General, 777);
  const double sigma = 0.3;
  const ShiftInvertOperator op(p, sigma);
  const auto b_dot = [&](const SVec &x, const SVec &y) { // x^H B y
    SVec by(n);
    p.B.matvec(y.data(), by.data());
    Scalar d = 0;
    for (int i = 0; i < n; ++i) d += conj_of(x[i]) * by[i];
    return d;
  };
  for (bool verify : {true, false})
    for (bool one_column : {false, true}) {
      SCOPED_TRACE(std::string(verify ? "verify" : "no verification") + (one_column ? ", one column for directions" : ""));
      Settings s = settings(6, Which::TargetMagnitude);
      s.ncv = 10; // several restarts, each locking some pairs: several residual directions
      s.target = sigma;
      s.translation_map = false;
      s.verify = verify;
      s.tol = 1e-6; // a correction c / theta up to about tol: large enough to tell a wrong one from rounding
      Callbacks cb;
      cb.eigenvalue = [sigma](double theta) { return sigma + 1.0 / theta; };
      const Outcome plain = run(p, op, s, cb);
      Settings sp = s;
      sp.purify = true;
      ASSERT_EQ(purify_columns(sp), s.nev + 1);
      const int columns = one_column ? basis_columns_needed(sp) - purify_columns(sp) + 1 : 0;
      const Outcome pure = run(p, op, sp, cb, columns);
      ASSERT_EQ(plain.result.reason, Reason::Converged);
      ASSERT_EQ(pure.result.reason, Reason::Converged);
      ASSERT_EQ(pure.result.nconv, plain.result.nconv);
      EXPECT_EQ(pure.result.eigenvalues, plain.result.eigenvalues);
      EXPECT_EQ(pure.result.matvecs, plain.result.matvecs) << "the purification takes no product";
      ASSERT_GE(pure.result.purify_scale.size(), static_cast<std::size_t>(pure.result.nconv));
      EXPECT_TRUE(plain.result.purify_scale.empty());
      int flagged = 0, moved = 0;
      for (int i = 0; i < pure.result.nconv; ++i) {
        const SVec &x = plain.vectors[i], &xp = pure.vectors[i];
        if (!std::isfinite(pure.result.purify_scale[i])) {
          ++flagged;
          EXPECT_EQ(xp, x) << "an unpurified vector " << i << " must come back as it was";
          continue;
        }
        SVec z(n);
        op(x.data(), z.data());
        const double zb = std::sqrt(real_part(b_dot(z, z)));
        Scalar phase = b_dot(z, xp); // align z with xp (a sign, or a unit complex factor)
        phase /= std::abs(phase);
        double diff = 0, change = 0;
        for (int r = 0; r < n; ++r) {
          diff = std::max(diff, std::abs(phase * z[r] / zb - xp[r]));
          change = std::max(change, std::abs(xp[r] - x[r]));
        }
        EXPECT_LE(diff, 1e-11 * norm(xp)) << "vector " << i << ": the relation's Op x differs from the explicit one";
        EXPECT_NEAR(real_part(b_dot(xp, xp)), 1.0, 1e-12) << "vector " << i << " is B-normalized";
        if (change > 1e-9) ++moved;
      }
      EXPECT_EQ(pure.result.purified, pure.result.nconv - flagged);
      EXPECT_GT(pure.result.its, 2) << "the pairs must lock over several restarts";
      if (!one_column) {
        EXPECT_GT(moved, 0) << "no vector changed by more than 1e-9: the check above would hold without a purification";
      }
      // pairs locked at several restarts: one column cannot serve them all (the first to lock take it)
      if (one_column) {
        EXPECT_GT(flagged, 0);
        EXPECT_GT(pure.result.purified, 0);
      }
      if (!one_column) {
        EXPECT_EQ(flagged, 0);
      }
    }
}

TEST(BInnerProductBackend, IndefiniteBIsRefused)
{
  const int n = 15;
  Pencil p(n, BKind::Diagonal, 3);
  p.B(4, 4) = -1.0; // one negative direction
  HostBackend host(n, n, 0, [&p](const Scalar *x, Scalar *y) { p.A.matvec(x, y); });
  BInnerProductBackend b(host, host_round_trip([&p](const Scalar *x, Scalar *y) { p.B.matvec(x, y); }));
  Settings s = settings(2, Which::LargestAlgebraic);
  s.ncv = 10;
  b.resize_basis(basis_columns_needed(s));
  // e_4 has x^T B x = -1 exactly
  SVec e(n, 0.0);
  e[4] = 1.0;
  b.set_column(0, e.data());
  Scalar out[1];
  try {
    b.project(0, 0, 0, out);
    FAIL() << "x^T B x < 0 was accepted";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("not positive definite"), std::string::npos) << err.what();
  }
}

} // namespace
