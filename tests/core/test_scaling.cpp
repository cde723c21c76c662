// Scaling into range and the true-residual check (src/core/scaling.hpp), with the host backend.
//
//   - c A for c = 2^k, k from -1000 to 1000: the driver's results are 2^k times those for A, bit for
//     bit, eigenvectors included, for every variant (full, partial, block, thesis, a shift): the
//     operator is scaled by a power of two exactly, and every decision of the driver is equivariant.
//     Inside the safe range nothing is scaled; outside it the solve runs on 2^e c A with e chosen from
//     a product; both must give the same bits.
//   - c A for c = 10^k, k from -300 to 300 (c A rounded: no longer bitwise): eigenvalues within tol of
//     c times LAPACK's dsyev on A, eigenvectors with small residuals on A itself and close to LAPACK's
//     where the gap allows (Davis-Kahan).
//   - a subnormal matrix, mixed magnitudes, an operator that turns Inf: right answers or Error.
//   - the true-residual check: a planted wrong pair is rejected and moved after the converged ones;
//     an operator that changes under the solve makes the check reject pairs and the solve go on.
#include "core/lanczos_driver.hpp"
#include "core/driver_support.hpp"
#include "core/residual_check.hpp"
#include "core/scaling.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace cudalanczos;
using namespace cudalanczos::testing;
using Vec = std::vector<double>;
using SVec = std::vector<Scalar>; // the backend's columns (real data in this file, in either build)

constexpr double eps = std::numeric_limits<double>::epsilon();

/// Random symmetric entries in [-1, 1] plus a graded diagonal: distinct, well spread eigenvalues of
/// both signs (an odd size).
Dense random_symmetric(int n, std::uint64_t seed)
{
  Rng rng(seed);
  Dense A(n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) A(i, j) = A(j, i) = rng.uniform(-1, 1) + (i == j ? 4.0 * (j - n / 2) / n : 0.0);
  return A;
}

/// dsyev with eigenvectors: values ascending, vectors column by column.
void lapack_eig(const Dense &A, Vec &w, Vec &Z)
{
  int n = A.n, lda = A.n, info = 0, lwork = -1;
  Z.resize(A.a.size()); // the test matrices here are real (Dense holds Scalars)
  for (std::size_t i = 0; i < Z.size(); ++i) Z[i] = real_part(A.a[i]);
  w.assign(n, 0.0);
  double wq = 0;
  dsyev_("V", "L", &n, Z.data(), &lda, w.data(), &wq, &lwork, &info, 1, 1);
  lwork = static_cast<int>(wq);
  Vec work(lwork);
  dsyev_("V", "L", &n, Z.data(), &lda, w.data(), work.data(), &lwork, &info, 1, 1);
  ASSERT_EQ(info, 0);
}


struct Case {
  const char *name;
  Settings s;
};

/// Every kind of solve the driver runs: single-vector steps with full and partial reorthogonalization,
/// every `which`, nev 1 and 8, blocks of 2 and 3, the thesis, a shift (the uploaded-matrix path of
/// STSHIFT: the driver subtracts it), verification on and off.
std::vector<Case> variants(int n)
{
  std::vector<Case> v;
  const Which all[] = {Which::LargestAlgebraic, Which::SmallestAlgebraic, Which::LargestMagnitude,
                       Which::SmallestMagnitude, Which::TargetMagnitude, Which::TargetReal};
  for (Which w : all)
    for (int nev : {1, 8}) {
      Settings s;
      s.which = w;
      s.nev = nev;
      s.ncv = std::min(n, std::max(2 * nev, nev + 15));
      s.tol = 1e-10;
      s.max_it = 3000;
      s.target = 0.3;
      v.push_back({which_name(w), s});
    }
  Settings p = v[0].s;
  p.reorthogonalization = Reorthogonalization::Partial;
  p.nev = 5, p.ncv = 20;
  v.push_back({"partial LA nev 5", p});
  Settings b = v[2].s;
  b.block_size = 2, b.nev = 6, b.ncv = 30;
  v.push_back({"block 2 LM nev 6", b});
  b.block_size = 3, b.which = Which::SmallestAlgebraic, b.nev = 4;
  v.push_back({"block 3 SA nev 4", b});
  Settings t = v[0].s;
  t.variant = Variant::Thesis, t.reorthogonalization = Reorthogonalization::None, t.nev = 1, t.ncv = n, t.max_it = n;
  v.push_back({"thesis LA", t});
  Settings sh = v[1].s;
  sh.shift = 1.25, sh.nev = 3, sh.ncv = 18;
  v.push_back({"shift 1.25 LA nev 3", sh});
  Settings nv = v[4].s;
  nv.verify = false;
  v.push_back({"LM nev 8 verify off", nv});
  return v;
}

TEST(Scaling, ExponentKeepsTheSafeRangeAndClamps)
{
  EXPECT_EQ(detail::scale_exponent(1.0), 0);
  EXPECT_EQ(detail::scale_exponent(std::ldexp(1.0, 255)), 0);
  EXPECT_EQ(detail::scale_exponent(std::ldexp(1.9, 255)), 0);
  EXPECT_EQ(detail::scale_exponent(std::ldexp(1.0, 256)), -257); // 2^-257 * 2^256 = 1/2
  EXPECT_EQ(detail::scale_exponent(std::ldexp(1.0, -256)), 0);
  EXPECT_EQ(detail::scale_exponent(std::ldexp(1.5, -257)), 256);
  EXPECT_EQ(detail::scale_exponent(1e300), -(std::ilogb(1e300) + 1));
  EXPECT_EQ(detail::scale_exponent(std::numeric_limits<double>::max()), -kMaxScaleExponent);
  EXPECT_EQ(detail::scale_exponent(std::numeric_limits<double>::denorm_min()), kMaxScaleExponent);
  EXPECT_EQ(detail::scale_exponent(0.0), 0);
  EXPECT_EQ(detail::scale_exponent(std::numeric_limits<double>::infinity()), 0);
  EXPECT_EQ(detail::scale_exponent(std::nan("")), 0);
  for (double norm : {1e-300, 1e-100, 1e100, 1e300}) {
    const double scaled = std::ldexp(norm, detail::scale_exponent(norm));
    EXPECT_TRUE(scaled >= 0.5 && scaled < 1) << norm << " scaled to " << scaled;
  }
}

TEST(Scaling, MeasuredNormNeitherOverflowsNorUnderflows)
{
  const int n = 31;
  for (double c : {1e-320, 1e-300, 1e-160, 1.0, 1e160, 1e300}) {
    const Dense A = laplacian_1d(n).scaled(c);
    HostBackend b(n, n, 0, [&A](const Scalar *x, Scalar *y) { A.matvec(x, y); });
    b.resize_basis(4);
    long products = 0;
    const double est = detail::measure_norm(b, 7, products);
    EXPECT_EQ(products, 1);
    // ||A v|| for a random unit v: between ||A|| / (a few sqrt(n)) and ||A|| = 4 c.
    EXPECT_LE(est, 4 * c * (1 + 1e-12)) << "c = " << c;
    EXPECT_GE(est, 4 * c / (10 * std::sqrt(n))) << "c = " << c;
  }
  const Dense Z(n);
  HostBackend zero(n, n, 0, [&Z](const Scalar *x, Scalar *y) { Z.matvec(x, y); });
  zero.resize_basis(4);
  long products = 0;
  EXPECT_EQ(detail::measure_norm(zero, 7, products), 0.0) << "a zero operator has norm 0";
  HostBackend inf(n, n, 0, [n](const Scalar *, Scalar *y) { std::fill(y, y + n, Scalar(std::numeric_limits<double>::infinity())); });
  inf.resize_basis(4);
  EXPECT_THROW(detail::measure_norm(inf, 7, products), Error) << "Inf entries";
}

// Every variant on c A, c = 2^k across the whole exponent range, against the same variant on A: the same
// bits, times 2^k. On A itself nothing is scaled; from |k| = 256 on the solve runs scaled.
TEST(Scaling, PowerOfTwoScalesChangeNoBit)
{
  const int n = 61;
  const Dense base[2] = {random_symmetric(n, 2101), laplacian_1d(n)};
  const int ks[] = {-1000, -700, -300, -257, -100, 100, 255, 256, 300, 700, 1000};
  for (const Dense &A : base)
    for (const Case &v : variants(n)) {
      const Solved ref = run_solver(A, v.s);
      ASSERT_GE(ref.result.nconv, v.s.nev) << v.name;
      EXPECT_EQ(ref.result.scale_exponent, 0);
      for (int k : ks) {
        SCOPED_TRACE(std::string(v.name) + ", c = 2^" + std::to_string(k));
        Settings s = v.s;
        s.shift = std::ldexp(v.s.shift, k);
        s.target = std::ldexp(v.s.target, k);
        const Solved got = run_solver(A.scaled(std::ldexp(1.0, k)), s);
        // The product of A's solve times 2^k measures the norm of c A: the same exponent decides.
        EXPECT_EQ(got.result.norm_estimate, std::ldexp(ref.result.norm_estimate, k));
        EXPECT_EQ(got.result.scale_exponent, detail::scale_exponent(std::ldexp(ref.result.norm_estimate, k)));
        if (std::abs(k) >= 300) {
          EXPECT_NE(got.result.scale_exponent, 0) << "not scaled";
        }
        if (std::abs(k) <= 100) {
          EXPECT_EQ(got.result.scale_exponent, 0) << "scaled inside the safe range";
        }
        ASSERT_EQ(got.result.nconv, ref.result.nconv);
        ASSERT_EQ(got.result.eigenvalues.size(), ref.result.eigenvalues.size());
        EXPECT_EQ(got.result.matvecs, ref.result.matvecs);
        for (std::size_t i = 0; i < ref.result.eigenvalues.size(); ++i) {
          ASSERT_EQ(got.result.eigenvalues[i], std::ldexp(ref.result.eigenvalues[i], k)) << "eigenvalue " << i;
          ASSERT_EQ(got.result.errors[i], ref.result.errors[i]) << "error " << i;
          ASSERT_TRUE(got.vectors[i] == ref.vectors[i]) << "vector " << i << " differs";
        }
      }
    }
}

// c = 10^k: c A is c times A rounded, so no longer bit for bit; against LAPACK on A, times c.
TEST(Scaling, PowersOfTenMatchLapackOnTheUnscaledMatrix)
{
  const int n = 61;
  const Dense base[2] = {random_symmetric(n, 2203), laplacian_1d(n)};
  for (const Dense &A : base) {
    Vec w, Z;
    lapack_eig(A, w, Z);
    double anorm = 0;
    for (double x : w) anorm = std::max(anorm, std::abs(x));
    for (int k = -300; k <= 300; k += 50) {
      const double c = std::pow(10.0, k);
      const Dense cA = A.scaled(c);
      for (const Case &v : variants(n)) {
        SCOPED_TRACE(std::string(v.name) + ", c = 1e" + std::to_string(k));
        Settings s = v.s;
        s.shift = v.s.shift * c;
        s.target = v.s.target * c;
        const Solved got = run_solver(cA, s);
        ASSERT_GE(got.result.nconv, v.s.nev) << to_string(got.result.reason);
        EXPECT_EQ(got.result.residual_rejected, 0);
        // The wanted eigenvalues of A, best first by `which` (ties by value).
        std::vector<int> idx(n);
        for (int i = 0; i < n; ++i) idx[i] = i;
        std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
          return which_key(v.s.which, v.s.target, w[a]) < which_key(v.s.which, v.s.target, w[b]);
        });
        for (int i = 0; i < v.s.nev; ++i) {
          const double lambda = got.result.eigenvalues[i] / c; // as returned: theta - shift, c times A's
          const double want = w[idx[i]] - v.s.shift;
          EXPECT_NEAR(lambda, want, 1e-9 * std::max(std::abs(want), 1e-3 * anorm)) << "eigenvalue " << i;
          // The vector: its residual on A itself, and its angle to LAPACK's where the gap allows.
          const SVec &x = got.vectors[i];
          SVec ax(n);
          A.matvec(x.data(), ax.data());
          double res2 = 0;
          for (int r = 0; r < n; ++r) res2 += abs2(ax[r] - (lambda + v.s.shift) * x[r]);
          const double res = std::sqrt(res2);
          EXPECT_LE(res, std::max(2e-10 * std::abs(lambda + v.s.shift), 100 * n * eps * anorm)) << "residual of vector " << i;
          double gap = std::numeric_limits<double>::infinity();
          for (int j = 0; j < n; ++j)
            if (j != idx[i]) gap = std::min(gap, std::abs(w[j] - w[idx[i]]));
          if (gap > 1e-6 * anorm) { // ||x -+ z|| (about the sine of the angle, without 1 - dot^2's cancellation)
            const double *z = Z.data() + static_cast<std::size_t>(idx[i]) * n;
            Scalar dot = 0; // z^H x: x is z times a sign (real) or a phase, plus the error
            double dist2 = 0;
            for (int r = 0; r < n; ++r) dot += z[r] * x[r];
            const Scalar phase = std::abs(dot) > 0 ? dot / std::abs(dot) : Scalar(1);
            for (int r = 0; r < n; ++r) dist2 += abs2(x[r] - phase * z[r]);
            EXPECT_LE(std::sqrt(dist2), 2 * res / gap + 100 * n * eps) << "vector " << i << " against LAPACK's (gap " << gap << ")";
          }
        }
      }
    }
  }
}

// A matrix whose entries are all subnormal (the Laplacian times 2^-1060: 14 significant bits each) is the
// Laplacian to 2^-14, exactly representable; the solve scales it up by 2^1000 before each product, so no
// product meets a subnormal number. Mixed magnitudes (1e-200 beside 1) need no scaling at all.
TEST(Scaling, SubnormalAndMixedMagnitudeEntries)
{
  const int n = 41;
  {
    const Dense A = laplacian_1d(n).scaled(std::ldexp(1.0, -1060));
    Dense up = A.scaled(std::ldexp(1.0, 530)).scaled(std::ldexp(1.0, 530)); // exact: the stored matrix in normal numbers
    Vec w, Z;
    lapack_eig(up, w, Z);
    Settings s;
    s.nev = 4, s.ncv = 20, s.which = Which::LargestAlgebraic, s.tol = 1e-10;
    const Solved got = run_solver(A, s);
    ASSERT_GE(got.result.nconv, 4) << to_string(got.result.reason);
    EXPECT_EQ(got.result.scale_exponent, kMaxScaleExponent);
    // The eigenvalues are subnormal too: right to their last bit (2^-1074), and to tol where they have more.
    for (int i = 0; i < 4; ++i) {
      const double want = std::ldexp(std::ldexp(w[n - 1 - i], -530), -530);
      EXPECT_NEAR(got.result.eigenvalues[i], want, std::numeric_limits<double>::denorm_min() + 1e-9 * want) << "eigenvalue " << i;
    }
  }
  {
    Dense A = laplacian_1d(n);
    for (int i = 0; i + 2 < n; i += 3) A(i, i + 2) = A(i + 2, i) = 1e-200;
    A(0, n - 1) = A(n - 1, 0) = 4e-320; // subnormal beside normal entries
    Vec w, Z;
    lapack_eig(A, w, Z);
    Settings s;
    s.nev = 5, s.ncv = 20, s.which = Which::SmallestAlgebraic, s.tol = 1e-10;
    const Solved got = run_solver(A, s);
    ASSERT_GE(got.result.nconv, 5) << to_string(got.result.reason);
    EXPECT_EQ(got.result.scale_exponent, 0);
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(got.result.eigenvalues[i], w[i], 1e-9 * w[i]) << "eigenvalue " << i;
  }
}

// An operator whose products turn Inf from the 20th on: an Error naming NaN/Inf, whatever the scale.
TEST(Scaling, OperatorTurningInfIsAnError)
{
  const int n = 200;
  for (double c : {1e-300, 1.0, 1e300}) {
    const Dense A = laplacian_1d(n).scaled(c);
    int products = 0;
    HostBackend b(n, n, 0, [&](const Scalar *x, Scalar *y) {
      A.matvec(x, y);
      if (++products >= 20) y[n / 2] = std::numeric_limits<double>::infinity();
    });
    Settings s;
    s.nev = 2, s.ncv = 16, s.which = Which::LargestAlgebraic;
    b.resize_basis(basis_columns_needed(s));
    try {
      solve(b, s, {});
      ADD_FAILURE() << "no error at c = " << c;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("NaN or Inf"), std::string::npos) << e.what();
    }
    EXPECT_LT(products, 60) << "stopped soon after the bad product";
  }
}

// The caller's start vector may have entries of any size: its norm is taken in range, and a start
// vector 2^k times another gives the same solve, bit for bit (single-vector and block steps), where a
// squared norm of 1e-400 used to read as a zero vector (a random start instead) and one of 1e+400 as Inf.
TEST(Scaling, StartVectorOfAnySize)
{
  const int n = 61;
  const Dense A = random_symmetric(n, 2411);
  Vec v(n);
  Rng rng(77);
  for (double &x : v) x = rng.uniform(0.1, 1.0) * (rng.uniform01() < 0.5 ? -1 : 1);
  for (int block : {1, 2}) {
    Settings s;
    s.nev = 3, s.ncv = 20, s.which = Which::LargestAlgebraic, s.tol = 1e-10, s.initial_vector = true, s.block_size = block;
    s.norm_estimate = 8;
    const auto solve_from = [&](double c) {
      HostBackend b(n, n, 0, [&A](const Scalar *x, Scalar *y) { A.matvec(x, y); });
      b.resize_basis(basis_columns_needed(s));
      SVec w(v.begin(), v.end());
      for (Scalar &x : w) x = std::ldexp(real_part(x), static_cast<int>(c));
      b.set_column(0, w.data());
      Solved out;
      out.result = solve(b, s, {});
      for (std::size_t j = 0; j < out.result.eigenvalues.size(); ++j) {
        SVec x(n);
        b.get_column(static_cast<int>(j), x.data());
        out.vectors.push_back(std::move(x));
      }
      return out;
    };
    const Solved ref = solve_from(0);
    ASSERT_GE(ref.result.nconv, 3);
    for (int k : {-1000, -600, 600, 1000}) {
      SCOPED_TRACE("block " + std::to_string(block) + ", start vector times 2^" + std::to_string(k));
      const Solved got = solve_from(k);
      ASSERT_EQ(got.result.eigenvalues, ref.result.eigenvalues);
      for (std::size_t i = 0; i < ref.vectors.size(); ++i) ASSERT_TRUE(got.vectors[i] == ref.vectors[i]) << "vector " << i;
    }
  }
}

// diag(1, ..., n) on the host backend, with the unit eigenvectors of its `count` largest values planted in
// columns 0..count-1 (largest first): a converged result whose values the ResidualCheck tests then plant.
std::unique_ptr<HostBackend> diagonal_with_planted_vectors(int n, int count)
{
  auto b = std::make_unique<HostBackend>(n, n, 0, [n](const Scalar *x, Scalar *y) {
    for (int i = 0; i < n; ++i) y[i] = static_cast<double>(i + 1) * x[i];
  });
  b->resize_basis(2 * count);
  for (int j = 0; j < count; ++j) {
    SVec e(n, 0.0);
    e[n - 1 - j] = 1;
    b->set_column(j, e.data());
  }
  return b;
}

// A converged Result with these values and errors, as a driver hands it to the check.
Result converged_result(int nconv, Vec eigenvalues, Vec errors)
{
  Result r;
  r.reason = Reason::Converged;
  r.nconv = nconv;
  r.eigenvalues = std::move(eigenvalues);
  r.errors = std::move(errors);
  return r;
}

// The check on a planted result: unit eigenvectors of diag(1..n) with one value wrong. The wrong pair
// is not counted, keeps its place and its vector, and its error is its true one.
TEST(ResidualCheck, PlantedWrongPairIsRejected)
{
  const int n = 23;
  const auto planted = diagonal_with_planted_vectors(n, 4);
  HostBackend &b = *planted;
  Result r = converged_result(3, {23, 22, 21.5, 20}, {0, 0, 0, 0.5}); // the third is wrong (21); the fourth is not counted converged
  Settings s;
  s.nev = 3, s.tol = 1e-10;
  detail::check_residuals(b, s, detail::with_defaults({}, s), 2, r);
  EXPECT_EQ(r.nconv, 2);
  EXPECT_EQ(r.residuals_checked, 3);
  EXPECT_EQ(r.residual_rejected, 1);
  EXPECT_EQ(r.reason, Reason::ResidualCheck);
  EXPECT_EQ(r.eigenvalues, (Vec{23, 22, 21.5, 20}));
  EXPECT_NEAR(r.errors[2], 0.5 / 21.5, 1e-15) << "the wrong pair's true relative error";
  EXPECT_EQ(r.errors[3], 0.5) << "an unconverged pair keeps its estimate";
  SVec x(n);
  b.get_column(2, x.data());
  EXPECT_EQ(x[n - 3], 1.0) << "the rejected pair keeps its vector in its place";
  // All right: nothing moves.
  r.nconv = 3, r.eigenvalues = {23, 22, 21, 20}, r.reason = Reason::Converged;
  detail::check_residuals(b, s, detail::with_defaults({}, s), 1, r);
  EXPECT_EQ(r.nconv, 3);
  EXPECT_EQ(r.residual_rejected, 0);
  EXPECT_EQ(r.reason, Reason::Converged);
}

// A wanted pair that fails among passing ones (inexact ST solves limit one value's accuracy): the pairs
// after it pass but are not counted, so that the values returned as converged have no gap where the
// failing one was; with nev pairs no longer converged the solve says so (and goes on where it can).
TEST(ResidualCheck, FailingWantedPairLeavesNoGap)
{
  const int n = 19;
  const auto planted = diagonal_with_planted_vectors(n, 4);
  HostBackend &b = *planted;
  Result r = converged_result(4, {19, 17.5, 17, 16}, {0, 0, 0, 0}); // the second is wrong (18: its vector with 17.5); 17 and 16 are right
  Settings s;
  s.nev = 3, s.tol = 1e-10;
  detail::check_residuals(b, s, detail::with_defaults({}, s), 4, r);
  EXPECT_EQ(r.nconv, 1) << "17 and 16 pass, but 18 is missing before them";
  EXPECT_EQ(r.residual_rejected, 1);
  EXPECT_EQ(r.reason, Reason::ResidualCheck);
  EXPECT_EQ(r.eigenvalues, (Vec{19, 17.5, 17, 16}));
  EXPECT_NEAR(r.errors[1], 0.5 / 17.5, 1e-15);
  EXPECT_LT(r.errors[2], s.tol);
  // The failing pair beyond nev: the nev leading ones stay converged and the solve with them.
  r.nconv = 4, r.eigenvalues = {19, 18, 17, 15.5}, r.reason = Reason::Converged;
  SVec e(n, 0.0);
  e[n - 2] = 1;
  b.set_column(1, e.data());
  detail::check_residuals(b, s, detail::with_defaults({}, s), 1, r);
  EXPECT_EQ(r.nconv, 3);
  EXPECT_EQ(r.residual_rejected, 1);
  EXPECT_EQ(r.reason, Reason::Converged);
}

// A fixed matrix (Settings::exact_operator): the check takes the Lanczos relation's bound (Result::
// residual_bounds) where it meets tol and applies the operator only to the others. The bounds hold: every
// pair's true residual, computed here, lies below its bound, on a random matrix, a graded spectrum (eight
// values near 1e3 above the rest, from 1 down to 1e-3) and a 1-D Laplacian's clustered end; with the proof
// off, the same solve computes every check and returns the same eigenvalues with at least as many products.
// Single vectors (full reorthogonalization) and blocks of 2 with partial reorthogonalization, whose bounds
// take in the couplings the partial steps left out (detail::partial_coupling_bound).
TEST(ResidualCheck, ProvenBoundsHoldAndSaveProducts)
{
  for (int variant = 0; variant < 6; ++variant) {
    const int kind = variant % 3;
    const bool partial_blocks = variant >= 3;
    const char *names[] = {"random symmetric", "graded spectrum", "1-D Laplacian"};
    SCOPED_TRACE(std::string(names[kind]) + (partial_blocks ? ", blocks of 2, partial" : ""));
    const int n = kind == 2 ? 400 : 120;
    Dense A = kind == 2 ? laplacian_1d(n) : random_symmetric(n, 4409);
    if (kind == 1) { // diag(d): the basis a Krylov space is written in does not matter to it
      A = Dense(n);
      for (int i = 0; i < n; ++i) A(i, i) = i < 8 ? 1000.0 - 0.5 * i : std::pow(10.0, -3.0 * (i - 8) / (n - 9));
    }
    Settings s;
    s.nev = kind == 1 ? 12 : 6, s.ncv = kind == 1 ? 40 : 20, s.which = Which::LargestMagnitude, s.tol = 1e-9, s.max_it = 5000;
    if (partial_blocks) s.block_size = 2, s.reorthogonalization = Reorthogonalization::Partial;
    const Solved proven = run_solver(A, s);
    Settings off = s;
    off.exact_operator = false;
    const Solved checked = run_solver(A, off);
    ASSERT_EQ(proven.result.reason, Reason::Converged);
    ASSERT_EQ(checked.result.reason, Reason::Converged);
    const Result &r = proven.result;
    EXPECT_EQ(checked.result.residuals_proven, 0);
    EXPECT_EQ(checked.result.residuals_checked, checked.result.nconv);
    EXPECT_TRUE(checked.result.residual_bounds.empty());
    EXPECT_EQ(r.residuals_proven + r.residuals_checked, r.nconv);
    EXPECT_EQ(r.matvecs_check, r.residuals_checked);
    EXPECT_GT(r.residuals_proven, 0) << "the pairs locked first are proven by their own residuals";
    if (partial_blocks) {
      EXPECT_EQ(r.block_size, 2);
      EXPECT_LT(r.full_reorthogonalizations, r.operator_passes) << "some steps were partial";
    }
    EXPECT_LE(r.matvecs, checked.result.matvecs);
    ASSERT_EQ(r.residual_bounds.size(), r.eigenvalues.size());
    for (int i = 0; i < r.nconv; ++i) {
      const SVec &x = proven.vectors[i];
      SVec ax(n);
      A.matvec(x.data(), ax.data());
      double rr = 0;
      for (int j = 0; j < n; ++j) rr += abs2(ax[j] - r.eigenvalues[i] * x[j]);
      EXPECT_LE(std::sqrt(rr), r.residual_bounds[i]) << "pair " << i;
      EXPECT_LT(std::sqrt(rr) / std::abs(r.eigenvalues[i]), s.tol) << "pair " << i;
      EXPECT_NEAR(r.eigenvalues[i], checked.result.eigenvalues[i], 1e-9 * std::abs(r.eigenvalues[i])) << "pair " << i;
    }
  }
}

// The check with bounds handed to it: a pair whose bound meets tol gets no product; one whose bound does
// not is checked, and a wrong one among them is rejected as before. Runs of consecutive unproven pairs
// go in one block product each.
TEST(ResidualCheck, ProvenPairsSkipTheirProduct)
{
  const int n = 23;
  const auto planted = diagonal_with_planted_vectors(n, 5);
  HostBackend &b = *planted;
  Result r = converged_result(5, {23, 22, 21.5, 20, 19}, {0, 0, 0, 0, 0}); // the third is wrong (21)
  r.residual_bounds = {1e-12, 1, 1, 1e-12, 1}; // the 2nd and 3rd unproven (one run), the 5th too
  Settings s;
  s.nev = 3, s.tol = 1e-10;
  detail::check_residuals(b, s, detail::with_defaults({}, s), 1, r);
  EXPECT_EQ(r.residuals_proven, 2);
  EXPECT_EQ(r.residuals_checked, 3);
  EXPECT_EQ(r.matvecs_check, 3);
  EXPECT_EQ(r.operator_passes, 2) << "pairs 2-3 in one block product, pair 5 in another";
  EXPECT_EQ(r.nconv, 2);
  EXPECT_EQ(r.residual_rejected, 1);
  EXPECT_EQ(r.reason, Reason::ResidualCheck);
  EXPECT_NEAR(r.errors[2], 0.5 / 21.5, 1e-15) << "the unproven wrong pair was checked";
  EXPECT_EQ(r.errors[0], 0) << "a proven pair keeps its estimate";
}

// An operator that changes (by 1e-6 relative) just before the check: the pairs converged for the old
// one fail it. With iterations left the solve goes on and converges for the new operator; without, it
// returns fewer than nev, says why, and every pair it counts does pass.
TEST(ResidualCheck, OperatorChangedUnderTheSolveIsCaught)
{
  const int n = 61;
  const Dense A = random_symmetric(n, 2307);
  Dense B(A);
  for (int i = 0; i < n; ++i) B(i, i) += 1e-6 * (i % 3);
  Settings s;
  s.nev = 4, s.ncv = 20, s.which = Which::LargestAlgebraic, s.tol = 1e-10, s.max_it = 500;
  s.norm_estimate = 8; // no product before the solve: the switch below counts the driver's alone
  s.exact_operator = false; // an operator that changes is not a fixed matrix: no pair's residual is proven
  const Solved clean = run_solver(A, s);
  ASSERT_EQ(clean.result.residual_rejected, 0);
  const long before_check = clean.result.matvecs - clean.result.residuals_checked;
  for (bool room : {true, false}) {
    SCOPED_TRACE(room ? "iterations left" : "none left");
    long products = 0;
    HostBackend b(n, n, 0, [&](const Scalar *x, Scalar *y) { (++products > before_check ? B : A).matvec(x, y); });
    Settings t = s;
    if (!room) t.max_it = clean.result.its;
    b.resize_basis(basis_columns_needed(t));
    const Result r = solve(b, t, {});
    EXPECT_GT(r.residual_rejected, 0);
    EXPECT_EQ(r.residual_retries, room ? 1 : 0);
    if (room) {
      EXPECT_EQ(r.reason, Reason::Converged);
      EXPECT_GE(r.nconv, s.nev);
    } else {
      EXPECT_EQ(r.reason, Reason::ResidualCheck);
      EXPECT_LT(r.nconv, s.nev);
    }
    // Whatever is counted passes on B.
    Vec w, Z;
    lapack_eig(B, w, Z);
    for (int i = 0; i < r.nconv; ++i) {
      SVec x(n), bx(n);
      b.get_column(i, x.data());
      B.matvec(x.data(), bx.data());
      double res2 = 0;
      for (int k = 0; k < n; ++k) res2 += abs2(bx[k] - r.eigenvalues[i] * x[k]);
      EXPECT_LT(std::sqrt(res2) / std::abs(r.eigenvalues[i]), s.tol) << "pair " << i;
    }
  }
}

} // namespace
