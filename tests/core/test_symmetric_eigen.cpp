// tridiagonal_qr and symmetric_eigen against LAPACK (dstev, dsteqr, dsyev).
//
// Every matrix comes from a fixed std::mt19937_64 seed, printed by SCOPED_TRACE on failure, so any
// failure reproduces. Tolerances, with ||T|| the 1-norm (= infinity norm, T symmetric):
//   eigenvalues   |lambda_i - lambda_i^LAPACK| <= 1e-12 ||T||   (sorted; both are backward stable, so
//                 the true gap is O(n eps ||T||), far below 1e-12 ||T|| for n <= 200)
//   orthogonality ||Z^T Z - I||_max <= 1e-12                   (not scaled by n: each Z column sees
//                 O(n) rotations, error ~ n eps <= 200 * 2.2e-16 = 4.4e-14, still 20x under 1e-12)
//   residual      ||T Z - Z diag(d)||_max <= 8 n eps ||T||     (the backward-error bound of QR)
#include "core/backend.hpp"
#include "core/symmetric_eigen.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" {
// Reference LAPACK (gfortran): character arguments carry a hidden length, passed last.
void dstev_(const char *jobz, const int *n, double *d, double *e, double *z, const int *ldz, double *work,
            int *info, std::size_t jobz_len);
void dsteqr_(const char *compz, const int *n, double *d, double *e, double *z, const int *ldz, double *work,
             int *info, std::size_t compz_len);
}

namespace {

using cudalanczos::symmetric_eigen;
using cudalanczos::testing::Rng;
using cudalanczos::tridiagonal_qr;
using Vec = std::vector<double>;

constexpr double eps = std::numeric_limits<double>::epsilon();
constexpr double kEigTol = 1e-12;  // eigenvalues, relative to ||T||
constexpr double kOrthTol = 1e-12; // ||Z^T Z - I||_max
constexpr double kResFactor = 8.0; // residual <= kResFactor * n * eps * ||T||


struct Tridiag {
  Vec d, e; // e has max(n-1, 0) entries
  int n() const { return static_cast<int>(d.size()); }
};

double norm1(const Tridiag &t)
{
  double nrm = 0.0;
  for (int i = 0; i < t.n(); ++i) {
    double row = std::abs(t.d[i]);
    if (i > 0) row += std::abs(t.e[i - 1]);
    if (i + 1 < t.n()) row += std::abs(t.e[i]);
    nrm = std::max(nrm, row);
  }
  return nrm;
}

Vec identity(int n)
{
  Vec z(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) z[static_cast<std::size_t>(i) * n + i] = 1.0;
  return z;
}

// ||Z^T Z - I||_max for n x n Z with leading dimension ldz.
double orthogonality_error(int n, const double *Z, int ldz)
{
  double err = 0.0;
  for (int j = 0; j < n; ++j)
    for (int k = 0; k <= j; ++k) {
      double s = 0.0;
      for (int i = 0; i < n; ++i) s += Z[static_cast<std::size_t>(j) * ldz + i] * Z[static_cast<std::size_t>(k) * ldz + i];
      err = std::max(err, std::abs(s - (j == k ? 1.0 : 0.0)));
    }
  return err;
}

// ||T Z - Z diag(lambda)||_max.
double residual_tridiag(const Tridiag &t, const Vec &lambda, const Vec &Z)
{
  const int n = t.n();
  double res = 0.0;
  for (int j = 0; j < n; ++j) {
    const double *z = &Z[static_cast<std::size_t>(j) * n];
    for (int i = 0; i < n; ++i) {
      double tz = t.d[i] * z[i];
      if (i > 0) tz += t.e[i - 1] * z[i - 1];
      if (i + 1 < n) tz += t.e[i] * z[i + 1];
      res = std::max(res, std::abs(tz - lambda[j] * z[i]));
    }
  }
  return res;
}

Vec lapack_dstev_values(const Tridiag &t)
{
  int n = t.n(), ldz = 1, info = 0;
  Vec d = t.d, e = t.e;
  e.resize(std::max(n, 1));
  double dummy = 0.0;
  dstev_("N", &n, d.data(), e.data(), &dummy, &ldz, &dummy, &info, 1);
  EXPECT_EQ(info, 0) << "dstev failed";
  return d; // ascending
}

// dsteqr with COMPZ = 'I': eigenvalues (ascending) and eigenvectors of T.
void lapack_dsteqr(const Tridiag &t, Vec &w, Vec &Z)
{
  int n = t.n(), ldz = std::max(n, 1), info = 0;
  w = t.d;
  Vec e = t.e;
  e.resize(std::max(n, 1));
  Z.assign(static_cast<std::size_t>(ldz) * std::max(n, 1), 0.0);
  Vec work(std::max(1, 2 * n - 2));
  dsteqr_("I", &n, w.data(), e.data(), Z.data(), &ldz, work.data(), &info, 1);
  EXPECT_EQ(info, 0) << "dsteqr failed";
}

// Independent arbiter for matrices on which LAPACK itself stumbles: bisection on Sturm counts in long
// double. The count is backward stable (Kahan), so each eigenvalue comes out within a few eps ||T||.
Vec bisection_values(const Tridiag &t)
{
  const int n = t.n();
  const long double tnorm = norm1(t);
  const auto count_below = [&](long double x) {
    int c = 0;
    long double q = 1.0L;
    for (int i = 0; i < n; ++i) {
      const long double e2 = i > 0 ? static_cast<long double>(t.e[i - 1]) * t.e[i - 1] : 0.0L;
      q = t.d[i] - x - (i > 0 ? e2 / q : 0.0L);
      if (q == 0.0L) q = -static_cast<long double>(eps) * tnorm; // a perturbation of T by eps ||T||
      if (q < 0.0L) ++c;
    }
    return c;
  };
  Vec w(n);
  for (int i = 0; i < n; ++i) {
    long double lo = -1.01L * tnorm, hi = 1.01L * tnorm; // every eigenvalue lies in [-||T||, ||T||]
    while (hi - lo > 1e-3L * eps * tnorm) {
      const long double mid = 0.5L * (lo + hi);
      if (mid == lo || mid == hi) break;
      (count_below(mid) > i ? hi : lo) = mid;
    }
    w[i] = static_cast<double>(0.5L * (lo + hi));
  }
  return w;
}

Vec sorted(Vec v)
{
  std::sort(v.begin(), v.end());
  return v;
}

enum class Reference { lapack, bisection };

// The full battery of checks for one tridiagonal. Returns the number of QR sweeps.
int check_tridiag(const Tridiag &t, bool compare_vectors = false, Reference reference = Reference::lapack)
{
  const int n = t.n();
  const double tnorm = norm1(t);

  Vec d = t.d, e = t.e, Z = identity(n);
  const int sweeps = tridiagonal_qr(n, d.data(), e.data(), n > 0 ? Z.data() : nullptr, n);
  EXPECT_GE(sweeps, 0);
  EXPECT_LE(sweeps, 30 * n);

  // Eigenvalues against dstev (which uses dsterf, root-free QL/QR) and dsteqr (implicit QL/QR), and
  // always against bisection too, which keeps the arbiter itself honest on the LAPACK families.
  const Vec ours = sorted(d);
  const Vec bis = bisection_values(t);
  double errb = 0.0;
  for (int i = 0; i < n; ++i) errb = std::max(errb, std::abs(ours[i] - bis[i]));
  EXPECT_LE(errb, kEigTol * tnorm) << "eigenvalues vs Sturm bisection";
  Vec ref2, Zref;
  if (reference == Reference::lapack) {
    const Vec ref = lapack_dstev_values(t);
    lapack_dsteqr(t, ref2, Zref);
    double err = 0.0, err2 = 0.0;
    for (int i = 0; i < n; ++i) {
      err = std::max(err, std::abs(ours[i] - ref[i]));
      err2 = std::max(err2, std::abs(ours[i] - ref2[i]));
    }
    EXPECT_LE(err, kEigTol * tnorm) << "eigenvalues vs dstev";
    EXPECT_LE(err2, kEigTol * tnorm) << "eigenvalues vs dsteqr";
  }

  // Decomposition: Z orthogonal and T Z = Z diag(d).
  EXPECT_LE(orthogonality_error(n, Z.data(), n), kOrthTol);
  EXPECT_LE(residual_tridiag(t, d, Z), kResFactor * n * eps * tnorm);

  // Z == nullptr runs the very same sweeps: identical eigenvalues bit for bit, same sweep count.
  Vec d2 = t.d, e2 = t.e;
  EXPECT_EQ(tridiagonal_qr(n, d2.data(), e2.data(), nullptr, n), sweeps);
  for (int i = 0; i < n; ++i) EXPECT_EQ(d2[i], d[i]) << "eigenvalue " << i << " differs without Z";

  // Eigenvectors against dsteqr where they are determined: eigenvalue gap >= 1e-3 ||T||; the angle is
  // then <= ~n eps ||T|| / gap <= 2e-11, so 1 - |cos| is ~1e-22, far below the tolerance.
  if (compare_vectors && reference == Reference::lapack && n > 0 && tnorm > 0.0) {
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return d[a] < d[b]; });
    for (int j = 0; j < n; ++j) {
      double gap = std::numeric_limits<double>::infinity();
      if (j > 0) gap = std::min(gap, ref2[j] - ref2[j - 1]);
      if (j + 1 < n) gap = std::min(gap, ref2[j + 1] - ref2[j]);
      if (gap < 1e-3 * tnorm) continue;
      double c = 0.0;
      for (int i = 0; i < n; ++i) c += Z[static_cast<std::size_t>(order[j]) * n + i] * Zref[static_cast<std::size_t>(j) * n + i];
      EXPECT_LE(1.0 - std::abs(c), 1e-12) << "eigenvector " << j << " vs dsteqr";
    }
  }
  return sweeps;
}

std::string trace(const char *family, std::uint64_t seed, int n)
{
  return std::string(family) + " seed=" + std::to_string(seed) + " n=" + std::to_string(n);
}

// ------------------------------------------------------------------------------------------------
// Generators.

Tridiag random_tridiag(Rng &r, int n)
{
  Tridiag t;
  for (int i = 0; i < n; ++i) t.d.push_back(r.uniform(-1, 1));
  for (int i = 0; i + 1 < n; ++i) t.e.push_back(r.uniform(-1, 1));
  return t;
}

// Eigenvalues in one or a few tight clusters: a diagonal of cluster centres perturbed by `width`,
// coupled by off-diagonals of size `width`.
Tridiag clustered_tridiag(Rng &r, int n)
{
  const double width = std::pow(10.0, -r.uniform(4, 14));
  const int nclusters = r.integer(1, 3);
  Tridiag t;
  for (int i = 0; i < n; ++i) t.d.push_back(static_cast<double>(r.integer(1, nclusters)) + width * r.uniform(-1, 1));
  for (int i = 0; i + 1 < n; ++i) t.e.push_back(width * r.uniform(-1, 1));
  return t;
}

// Entries decaying (or growing) geometrically: spans up to ~250 orders of magnitude.
Tridiag graded_tridiag(Rng &r, int n)
{
  const double decades = r.uniform(1, std::min(250.0, 5.0 * n)) / std::max(n, 1);
  const bool downward = r.integer(0, 1) == 0;
  Tridiag t;
  auto g = [&](double pos) { return std::pow(10.0, -decades * (downward ? pos : (n - 1 - pos))); };
  for (int i = 0; i < n; ++i) t.d.push_back(g(i) * r.uniform(-1, 1));
  for (int i = 0; i + 1 < n; ++i) t.e.push_back(g(i + 0.5) * r.uniform(-1, 1));
  return t;
}

// Independent random magnitudes per entry, 10^-150 .. 10^150.
Tridiag wild_magnitude_tridiag(Rng &r, int n)
{
  Tridiag t;
  for (int i = 0; i < n; ++i) t.d.push_back(std::pow(10.0, r.uniform(-150, 150)) * r.uniform(-1, 1));
  for (int i = 0; i + 1 < n; ++i) t.e.push_back(std::pow(10.0, r.uniform(-150, 150)) * r.uniform(-1, 1));
  return t;
}

Tridiag diagonal_tridiag(Rng &r, int n)
{
  Tridiag t;
  for (int i = 0; i < n; ++i) t.d.push_back(r.integer(0, 3) == 0 ? 0.0 : r.uniform(-1, 1));
  t.e.assign(std::max(n - 1, 0), 0.0);
  return t;
}

// Copies of one random block, glued by couplings of 0, eps or sqrt(eps) times its size: eigenvalues
// repeated exactly or to within the glue.
Tridiag repeated_tridiag(Rng &r, int n)
{
  const int b = r.integer(1, std::max(1, n / 2));
  const Tridiag block = random_tridiag(r, b);
  const double glue_choices[] = {0.0, eps, std::sqrt(eps)};
  const double glue = glue_choices[r.integer(0, 2)];
  Tridiag t;
  for (int i = 0; i < n; ++i) {
    t.d.push_back(block.d[i % b]);
    if (i + 1 < n) t.e.push_back((i + 1) % b == 0 ? glue * r.uniform(-1, 1) : block.e[i % b]);
  }
  return t;
}

// Wilkinson's W_n^+: eigenvalues in pairs agreeing to many digits.
Tridiag wilkinson_tridiag(int n)
{
  Tridiag t;
  const double m = (n - 1) / 2.0;
  for (int i = 0; i < n; ++i) t.d.push_back(std::abs(i - m));
  t.e.assign(std::max(n - 1, 0), 1.0);
  return t;
}

// ------------------------------------------------------------------------------------------------
// tridiagonal_qr

constexpr std::uint64_t kSeed = 20240611;

TEST(TridiagonalQR, RandomAgainstLapack)
{
  long total_sweeps = 0, total_n = 0;
  for (std::uint64_t c = 0; c < 300; ++c) {
    Rng r(kSeed + c);
    const int n = c < 280 ? r.integer(1, 80) : r.integer(150, 200);
    const Tridiag t = random_tridiag(r, n);
    SCOPED_TRACE(trace("random", kSeed + c, n));
    total_sweeps += check_tridiag(t, /*compare_vectors=*/true);
    total_n += n;
  }
  // Wilkinson's shift converges cubically: typically under two sweeps per eigenvalue. Four would mean
  // the shift or the deflation is broken even though the answer is still right.
  EXPECT_LE(total_sweeps, 4 * total_n);
}

TEST(TridiagonalQR, ClusteredAgainstLapack)
{
  for (std::uint64_t c = 0; c < 200; ++c) {
    Rng r(kSeed + 1000 + c);
    const int n = r.integer(2, 80);
    SCOPED_TRACE(trace("clustered", kSeed + 1000 + c, n));
    check_tridiag(clustered_tridiag(r, n));
  }
  for (int n : {3, 21, 41, 101}) {
    SCOPED_TRACE("wilkinson n=" + std::to_string(n));
    check_tridiag(wilkinson_tridiag(n));
  }
}

TEST(TridiagonalQR, GradedAgainstLapack)
{
  for (std::uint64_t c = 0; c < 200; ++c) {
    Rng r(kSeed + 2000 + c);
    const int n = r.integer(2, 80);
    SCOPED_TRACE(trace("graded", kSeed + 2000 + c, n));
    check_tridiag(graded_tridiag(r, n));
  }
  // Entries of independent magnitudes 1e-150..1e150. Here LAPACK 3.11 is not a reference: on some of
  // these dsteqr stops with INFO > 0 (no convergence) and dsterf is off by 1e-7 ||T||. Bisection is.
  for (std::uint64_t c = 0; c < 100; ++c) {
    Rng r(kSeed + 2500 + c);
    const int n = r.integer(2, 60);
    SCOPED_TRACE(trace("wild magnitudes", kSeed + 2500 + c, n));
    check_tridiag(wild_magnitude_tridiag(r, n), false, Reference::bisection);
  }
}

TEST(TridiagonalQR, DiagonalIsReturnedUnchanged)
{
  for (std::uint64_t c = 0; c < 100; ++c) {
    Rng r(kSeed + 3000 + c);
    const int n = r.integer(1, 60);
    SCOPED_TRACE(trace("diagonal", kSeed + 3000 + c, n));
    const Tridiag t = diagonal_tridiag(r, n);
    EXPECT_EQ(check_tridiag(t), 0) << "an already-diagonal matrix needs no sweep";
    // Nothing to do: eigenvalues are the diagonal, in place, and Z stays the identity exactly.
    Vec d = t.d, e = t.e, Z = identity(n);
    tridiagonal_qr(n, d.data(), e.data(), Z.data(), n);
    EXPECT_EQ(d, t.d);
    EXPECT_EQ(Z, identity(n));
  }
}

TEST(TridiagonalQR, RepeatedEigenvaluesAgainstLapack)
{
  for (std::uint64_t c = 0; c < 200; ++c) {
    Rng r(kSeed + 4000 + c);
    const int n = r.integer(2, 80);
    SCOPED_TRACE(trace("repeated", kSeed + 4000 + c, n));
    check_tridiag(repeated_tridiag(r, n));
  }
  // A multiple of the identity with one interior coupling: eigenvalue 3 of multiplicity n-2.
  Tridiag t;
  t.d.assign(12, 3.0);
  t.e.assign(11, 0.0);
  t.e[5] = 1.0;
  Vec d = t.d, e = t.e;
  check_tridiag(t);
  tridiagonal_qr(12, d.data(), e.data(), nullptr, 12);
  const Vec s = sorted(d);
  EXPECT_NEAR(s.front(), 2.0, 4 * eps);
  EXPECT_NEAR(s.back(), 4.0, 4 * eps);
  for (int i = 1; i < 11; ++i) EXPECT_EQ(s[i], 3.0);
}

TEST(TridiagonalQR, TinyMatrices)
{
  // n = 0: nothing to do, null pointers allowed.
  EXPECT_EQ(tridiagonal_qr(0, nullptr, nullptr, nullptr, 0), 0);
  // n = 1: the eigenvalue is d[0], Z stays Z_in.
  {
    double d = -2.5, z = 1.0;
    EXPECT_EQ(tridiagonal_qr(1, &d, nullptr, &z, 1), 0);
    EXPECT_EQ(d, -2.5);
    EXPECT_EQ(z, 1.0);
  }
  // n = 2: closed form [[a, b], [b, c]] -> (a+c)/2 -+ hypot((a-c)/2, b).
  for (std::uint64_t c = 0; c < 200; ++c) {
    Rng r(kSeed + 5000 + c);
    Tridiag t;
    t.d = {r.uniform(-1, 1), r.integer(0, 4) == 0 ? 0.0 : r.uniform(-1, 1)};
    t.e = {r.integer(0, 4) == 0 ? 0.0 : r.uniform(-1, 1)};
    if (c % 7 == 0) t.d[1] = t.d[0]; // equal diagonal: the shift's delta = 0 branch
    SCOPED_TRACE(trace("2x2", kSeed + 5000 + c, 2));
    check_tridiag(t, true);
    Vec d = t.d, e = t.e;
    tridiagonal_qr(2, d.data(), e.data(), nullptr, 2);
    const double mid = 0.5 * (t.d[0] + t.d[1]), rad = std::hypot(0.5 * (t.d[0] - t.d[1]), t.e[0]);
    const Vec s = sorted(d);
    EXPECT_NEAR(s[0], mid - rad, 4 * eps * norm1(t));
    EXPECT_NEAR(s[1], mid + rad, 4 * eps * norm1(t));
  }
  // 2x2 with zero diagonal and a subnormal coupling: must not stall on eps*(|d0|+|d1|) = 0.
  {
    const double b = std::numeric_limits<double>::denorm_min() * 7;
    double d[2] = {0.0, 0.0}, e[1] = {b};
    Vec Z = identity(2);
    EXPECT_LE(tridiagonal_qr(2, d, e, Z.data(), 2), 1);
    EXPECT_EQ(std::min(d[0], d[1]), -b);
    EXPECT_EQ(std::max(d[0], d[1]), b);
    EXPECT_LE(orthogonality_error(2, Z.data(), 2), kOrthTol);
  }
}

// Powers of two commute exactly with the arithmetic (the solver rescales blocks by powers of two), so
// 2^k T must give exactly 2^k times the eigenvalues and exactly the same eigenvectors.
TEST(TridiagonalQR, ScaleInvariant)
{
  for (std::uint64_t c = 0; c < 50; ++c) {
    Rng r(kSeed + 6000 + c);
    const int n = r.integer(2, 50);
    const Tridiag t = c % 2 ? random_tridiag(r, n) : graded_tridiag(r, n);
    Vec d = t.d, e = t.e, Z = identity(n);
    const int sweeps = tridiagonal_qr(n, d.data(), e.data(), Z.data(), n);
    for (int p : {-900, -300, 300, 1000}) {
      SCOPED_TRACE(trace("scaled", kSeed + 6000 + c, n) + " by 2^" + std::to_string(p));
      // Skip when scaling would underflow an entry to subnormal: exactness is lost there.
      bool representable = true;
      Tridiag s = t;
      for (double &x : s.d) x = std::ldexp(x, p);
      for (double &x : s.e) x = std::ldexp(x, p);
      for (int i = 0; i < n; ++i)
        if (t.d[i] != 0.0 && std::ldexp(s.d[i], -p) != t.d[i]) representable = false;
      for (int i = 0; i + 1 < n; ++i)
        if (t.e[i] != 0.0 && std::ldexp(s.e[i], -p) != t.e[i]) representable = false;
      if (!representable) continue;
      Vec ds = s.d, es = s.e, Zs = identity(n);
      EXPECT_EQ(tridiagonal_qr(n, ds.data(), es.data(), Zs.data(), n), sweeps);
      for (int i = 0; i < n; ++i) EXPECT_EQ(ds[i], std::ldexp(d[i], p));
      EXPECT_EQ(Zs, Z);
    }
  }
  // Near the overflow threshold and deep in the underflow range, against LAPACK.
  for (double scale : {1e300, 1e-300}) {
    Rng r(kSeed + 6500);
    Tridiag t = random_tridiag(r, 40);
    for (double &x : t.d) x *= scale;
    for (double &x : t.e) x *= scale;
    SCOPED_TRACE("scaled by " + std::to_string(std::log10(scale)) + " decades");
    check_tridiag(t);
  }
}

// Z_in is multiplied by the eigenvector matrix (what the Lanczos driver needs to rotate a basis), and
// ldz > n leaves the padding rows alone.
TEST(TridiagonalQR, AccumulatesIntoGivenZ)
{
  Rng r(kSeed + 7000);
  const int n = 17, ldz = n + 3;
  const Tridiag t = random_tridiag(r, n);
  Vec d = t.d, e = t.e, Q = identity(n);
  tridiagonal_qr(n, d.data(), e.data(), Q.data(), n);

  Vec M(static_cast<std::size_t>(ldz) * n);
  for (double &x : M) x = r.uniform(-1, 1);
  const Vec M0 = M;
  Vec d2 = t.d, e2 = t.e;
  tridiagonal_qr(n, d2.data(), e2.data(), M.data(), ldz);
  EXPECT_EQ(d2, d);
  double err = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < ldz; ++i) {
      if (i >= n) { // padding untouched
        EXPECT_EQ(M[static_cast<std::size_t>(j) * ldz + i], M0[static_cast<std::size_t>(j) * ldz + i]);
        continue;
      }
      double mq = 0.0;
      for (int k = 0; k < n; ++k) mq += M0[static_cast<std::size_t>(k) * ldz + i] * Q[static_cast<std::size_t>(j) * n + k];
      err = std::max(err, std::abs(M[static_cast<std::size_t>(j) * ldz + i] - mq));
    }
  EXPECT_LE(err, 16 * n * eps);
}

TEST(TridiagonalQR, RejectsNonFiniteAndBadArguments)
{
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  {
    double d[3] = {1, nan, 2}, e[2] = {1, 1};
    EXPECT_THROW(tridiagonal_qr(3, d, e, nullptr, 3), cudalanczos::Error);
  }
  {
    double d[3] = {1, 2, 3}, e[2] = {1, nan};
    Vec Z = identity(3);
    EXPECT_THROW(tridiagonal_qr(3, d, e, Z.data(), 3), cudalanczos::Error);
  }
  {
    double d[1] = {-inf};
    EXPECT_THROW(tridiagonal_qr(1, d, nullptr, nullptr, 1), cudalanczos::Error);
  }
  {
    double d[2] = {1, 2}, e[1] = {inf};
    EXPECT_THROW(tridiagonal_qr(2, d, e, nullptr, 2), cudalanczos::Error);
  }
  // The message names the offending entry.
  try {
    double d[3] = {1, 2, 3}, e[2] = {1, nan};
    tridiagonal_qr(3, d, e, nullptr, 3);
    ADD_FAILURE() << "no throw";
  } catch (const cudalanczos::Error &err) {
    EXPECT_NE(std::string(err.what()).find("e[1]"), std::string::npos) << err.what();
  }
  {
    double d[3] = {1, 2, 3}, e[2] = {1, 1};
    Vec Z = identity(3);
    EXPECT_THROW(tridiagonal_qr(-1, d, e, nullptr, 3), cudalanczos::Error);
    EXPECT_THROW(tridiagonal_qr(3, d, e, Z.data(), 2), cudalanczos::Error); // ldz < n
  }
}

// ------------------------------------------------------------------------------------------------
// symmetric_eigen

struct Dense {
  int n;
  Vec a; // full symmetric, column-major, ld = n
  double &operator()(int i, int j) { return a[static_cast<std::size_t>(j) * n + i]; }
  double operator()(int i, int j) const { return a[static_cast<std::size_t>(j) * n + i]; }
};

double norm1(const Dense &s)
{
  double nrm = 0.0;
  for (int j = 0; j < s.n; ++j) {
    double col = 0.0;
    for (int i = 0; i < s.n; ++i) col += std::abs(s(i, j));
    nrm = std::max(nrm, col);
  }
  return nrm;
}

Dense random_dense(Rng &r, int n)
{
  Dense s{n, Vec(static_cast<std::size_t>(n) * n)};
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) s(i, j) = s(j, i) = r.uniform(-1, 1);
  return s;
}

// What a thick restart leaves: Ritz values theta on the diagonal, their couplings b to the new
// Lanczos vector in the last row/column, alpha in the corner. Ritz values are often clustered
// (converged ones agree to many digits) and couplings of converged ones tiny.
Dense arrowhead(Rng &r, int n, bool lanczos_like)
{
  Dense s{n, Vec(static_cast<std::size_t>(n) * n, 0.0)};
  for (int i = 0; i + 1 < n; ++i) {
    s(i, i) = r.uniform(-1, 1);
    double b = r.uniform(-1, 1);
    if (lanczos_like) {
      if (i % 3 == 0 && i > 0) s(i, i) = s(i - 1, i - 1) + 1e-12 * r.uniform(-1, 1); // near-duplicates
      b *= std::pow(10.0, -r.uniform(0, 14));                                        // converged: tiny
    }
    s(n - 1, i) = s(i, n - 1) = b;
  }
  s(n - 1, n - 1) = r.uniform(-1, 1);
  return s;
}


void check_dense(const Dense &s)
{
  const int n = s.n, ld = n + 2; // ld > n: leading dimensions are honoured
  const double snorm = norm1(s);
  // Lower triangle only: the strict upper triangle (and padding) holds NaN, which must never be read.
  Vec S(static_cast<std::size_t>(ld) * n, std::numeric_limits<double>::quiet_NaN());
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) S[static_cast<std::size_t>(j) * ld + i] = s(i, j);
  Vec w(n), Z(static_cast<std::size_t>(ld) * n, -7.0);
  symmetric_eigen(n, S.data(), ld, w.data(), Z.data(), ld);

  EXPECT_TRUE(std::is_sorted(w.begin(), w.end())) << "eigenvalues not ascending";
  const Vec ref = cudalanczos::testing::lapack_eigenvalues(s.n, s.a);
  double err = 0.0;
  for (int i = 0; i < n; ++i) err = std::max(err, std::abs(w[i] - ref[i]));
  EXPECT_LE(err, kEigTol * snorm) << "eigenvalues vs dsyev";

  EXPECT_LE(orthogonality_error(n, Z.data(), ld), kOrthTol);
  double res = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double sz = 0.0;
      for (int k = 0; k < n; ++k) sz += s(i, k) * Z[static_cast<std::size_t>(j) * ld + k];
      res = std::max(res, std::abs(sz - w[j] * Z[static_cast<std::size_t>(j) * ld + i]));
    }
  // Householder adds O(n) eps ||S|| of backward error on top of the QR's.
  EXPECT_LE(res, 2 * kResFactor * n * eps * snorm) << "||S Z - Z diag(w)||";
  for (int j = 0; j < n; ++j)
    for (int i = n; i < ld; ++i) EXPECT_EQ(Z[static_cast<std::size_t>(j) * ld + i], -7.0) << "Z padding written";

  // Eigenvalues only (Z null): the same values.
  Vec S2 = S, w2(n);
  symmetric_eigen(n, S2.data(), ld, w2.data(), nullptr, ld);
  for (int i = 0; i < n; ++i) EXPECT_NEAR(w2[i], w[i], kEigTol * snorm);
}

TEST(SymmetricEigen, RandomDenseAgainstDsyev)
{
  std::uint64_t c = 0;
  for (int n : {1, 2, 3, 4, 5, 8, 13, 32, 64, 100, 200}) {
    for (int rep = 0; rep < (n <= 32 ? 20 : 3); ++rep, ++c) {
      Rng r(kSeed + 8000 + c);
      SCOPED_TRACE(trace("dense", kSeed + 8000 + c, n));
      check_dense(random_dense(r, n));
    }
  }
}

TEST(SymmetricEigen, ArrowheadAgainstDsyev)
{
  for (std::uint64_t c = 0; c < 120; ++c) {
    Rng r(kSeed + 9000 + c);
    const int n = c < 100 ? r.integer(2, 60) : r.integer(100, 150);
    SCOPED_TRACE(trace(c % 2 ? "arrowhead (Lanczos-like)" : "arrowhead", kSeed + 9000 + c, n));
    check_dense(arrowhead(r, n, c % 2 == 1));
  }
}

TEST(SymmetricEigen, SpecialMatrices)
{
  {
    Dense zero{6, Vec(36, 0.0)};
    SCOPED_TRACE("zero");
    check_dense(zero);
  }
  {
    Dense id{9, identity(9)};
    for (double &x : id.a) x *= 4.0;
    SCOPED_TRACE("4 I");
    check_dense(id);
    // Exactly 4, and the eigenvectors may be any orthonormal basis.
    Vec S = id.a, w(9), Z(81);
    symmetric_eigen(9, S.data(), 9, w.data(), Z.data(), 9);
    for (double x : w) EXPECT_EQ(x, 4.0);
  }
  {
    Rng r(kSeed + 9900);
    Dense big = random_dense(r, 30), small = big;
    for (double &x : big.a) x *= 1e300;
    for (double &x : small.a) x *= 1e-300;
    SCOPED_TRACE("dense scaled by 1e300 / 1e-300");
    check_dense(big);
    check_dense(small);
  }
}

// The residual estimates inside a cycle read only the last row(s) of the eigenvectors: zrows < n must
// give exactly those rows of the full computation (rows are updated independently) and the same values.
TEST(SymmetricEigen, LastRowsAreThoseOfTheFullVectors)
{
  for (std::uint64_t c = 0; c < 60; ++c) {
    Rng r(kSeed + 9500 + c);
    const int n = r.integer(1, 60);
    const Dense s = c % 3 == 0 ? random_dense(r, n) : arrowhead(r, n, c % 3 == 1);
    SCOPED_TRACE(trace("last rows", kSeed + 9500 + c, n));
    Vec S = s.a, w(n), Z(static_cast<std::size_t>(n) * n);
    symmetric_eigen(n, S.data(), n, w.data(), Z.data(), n);
    for (int zr : {0, 1, 2, 3, n}) {
      if (zr > n) continue;
      const int ldz = zr + 1; // a leading dimension above the row count is honoured
      Vec S2 = s.a, w2(n), Zr(static_cast<std::size_t>(ldz) * n, -7.0);
      symmetric_eigen(n, S2.data(), n, w2.data(), Zr.data(), ldz, zr);
      ASSERT_EQ(0, std::memcmp(w.data(), w2.data(), w.size() * sizeof(double))) << zr << " rows: other eigenvalues";
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < zr; ++i)
          ASSERT_EQ(0, std::memcmp(&Z[static_cast<std::size_t>(j) * n + (n - zr + i)], &Zr[static_cast<std::size_t>(j) * ldz + i],
                                   sizeof(double)))
              << zr << " rows: entry (" << n - zr + i << ", " << j << ")";
        EXPECT_EQ(Zr[static_cast<std::size_t>(j) * ldz + zr], -7.0) << "wrote below the rows asked for";
      }
    }
  }
  double S[4] = {1.0, 0.5, 0.5, 2.0}, w[2], Z[4];
  EXPECT_THROW(symmetric_eigen(2, S, 2, w, Z, 2, 3), cudalanczos::Error);  // zrows > n
  EXPECT_THROW(symmetric_eigen(2, S, 2, w, Z, 2, -1), cudalanczos::Error); // zrows < 0
  EXPECT_THROW(symmetric_eigen(2, S, 2, w, Z, 1, 2), cudalanczos::Error);  // ldz < zrows
}

TEST(SymmetricEigen, TinyAndInvalid)
{
  symmetric_eigen(0, nullptr, 1, nullptr, nullptr, 1); // n = 0: nothing, no throw
  {
    double s = -3.25, w = 0.0, z = 0.0;
    symmetric_eigen(1, &s, 1, &w, &z, 1);
    EXPECT_EQ(w, -3.25);
    EXPECT_EQ(z, 1.0);
  }
  {
    double S[4] = {1.0, std::numeric_limits<double>::quiet_NaN(), 0.0, 2.0}; // NaN in the lower triangle
    double w[2], Z[4];
    EXPECT_THROW(symmetric_eigen(2, S, 2, w, Z, 2), cudalanczos::Error);
  }
  {
    double S[4] = {1.0, 0.5, 0.5, 2.0}, w[2], Z[4];
    EXPECT_THROW(symmetric_eigen(2, S, 1, w, Z, 2), cudalanczos::Error); // lds < n
    EXPECT_THROW(symmetric_eigen(2, S, 2, w, Z, 1), cudalanczos::Error); // ldz < n
  }
}

} // namespace
