// Backend::expand, the reference Lanczos step every backend's override is compared with
// (tests/cuda: ExpandIsEquivalentToRef), run here on the host backend: what its records claim must be
// true of the basis it leaves, breakdowns must be found where they are planted, and splitting the steps
// over several calls must not change a bit.
#include "core/backend.hpp"
#include "host/host_backend.hpp"
#include "restart_arrow.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

using namespace cudalanczos;
using cudalanczos::testing::Rng;
using Vec = std::vector<double>;
using SVec = std::vector<Scalar>;
constexpr double eps = std::numeric_limits<double>::epsilon();

struct Matrix {
  int n;
  SVec a; // column-major
  void apply(const Scalar *x, Scalar *y) const
  {
    for (int i = 0; i < n; ++i) y[i] = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) y[i] += a[i + static_cast<std::size_t>(j) * n] * x[j];
  }
};

/// Random symmetric entries in [-1, 1]; in the complex build Hermitian, with imaginary parts in [-1, 1]
/// off the diagonal (the real build draws the same numbers as before).
Matrix random_symmetric(int n, std::uint64_t seed)
{
  Rng rng(seed);
  Matrix A{n, SVec(static_cast<std::size_t>(n) * n)};
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) {
      Scalar v = rng.uniform(-1, 1);
#if defined(CUDALANCZOS_USE_COMPLEX) && CUDALANCZOS_USE_COMPLEX
      if (i != j) v += Scalar(0, rng.uniform(-1, 1));
#endif
      A.a[i + static_cast<std::size_t>(j) * n] = v;
      A.a[j + static_cast<std::size_t>(i) * n] = conj_of(v);
    }
  return A;
}

struct Expanded {
  std::vector<StepRecord> records;
  std::unique_ptr<HostBackend> backend;
};

/// Steps 0..m-1 from a unit random start, in calls ending at `splits` and then m.
Expanded expand(const Matrix &A, int m, std::vector<int> splits = {})
{
  Expanded r;
  r.backend = std::make_unique<HostBackend>(A.n, A.n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
  HostBackend &b = *r.backend;
  b.resize_basis(m + 1);
  b.set_random(0, 2024);
  cudalanczos::testing::orthonormalize(b, 0, 0, 0);
  r.records.resize(m);
  splits.push_back(m);
  int first = 0;
  double anorm = 0;
  for (int last : splits) {
    b.expand(first, last, anorm, r.records.data() + first);
    if (last > first) anorm = r.records[last - 1].anorm;
    first = last;
  }
  return r;
}

/// Expects V^H V = I for columns 0..m of b, to `tol`.
void expect_orthonormal(const HostBackend &b, int n, int m, double tol)
{
  for (int j = 0; j <= m; ++j)
    for (int i = 0; i <= j; ++i) {
      Scalar vv = 0;
      for (int q = 0; q < n; ++q) vv += conj_of(b.column(i)[q]) * b.column(j)[q];
      EXPECT_NEAR(std::abs(vv - Scalar(i == j ? 1.0 : 0.0)), 0.0, tol) << i << "," << j;
    }
}

TEST(BackendExpand, RecordsDescribeTheBasis)
{
  // A V_m = V_m T_m + beta_m v_{m+1} e_m^T with V orthonormal: check V^T V = I and V^T A V = T.
  for (bool dominant : {false, true}) {
    Matrix A = random_symmetric(120, 11);
    if (dominant)
      for (int i = 0; i < 6; ++i) A.a[i + static_cast<std::size_t>(i) * A.n] += 500.0 * (i + 1);
    const int m = 30;
    const Expanded r = expand(A, m);
    const HostBackend &b = *r.backend;
    expect_orthonormal(b, A.n, m, 1e-13);
    SVec Av(A.n);
    for (int j = 0; j < m; ++j) {
      ASSERT_FALSE(r.records[j].breakdown);
      A.apply(b.column(j), Av.data());
      for (int i = 0; i < m; ++i) {
        Scalar vav = 0;
        for (int q = 0; q < A.n; ++q) vav += conj_of(b.column(i)[q]) * Av[q];
        const double t = i == j ? r.records[j].alpha : std::abs(i - j) == 1 ? r.records[std::min(i, j)].beta : 0.0;
        EXPECT_NEAR(std::abs(vav - t), 0.0, 1e-12 * r.records[m - 1].anorm) << i << "," << j;
      }
    }
  }
}

TEST(BackendExpand, OneFullPassWhereTheRecurrenceHolds)
{
  // 1-D Laplacian: beta_j^2 / ||A v_j||^2 is about 1/6, so Gram-Schmidt from A v_j loses more than DGKS
  // allows and repeated its pass over the whole basis every step. After the three-term window the full
  // pass only meets rounding: no repeat, and the basis stays orthonormal.
  const int n = 200, m = 40;
  Matrix A{n, SVec(static_cast<std::size_t>(n) * n, 0.0)};
  for (int i = 0; i < n; ++i) {
    A.a[i + static_cast<std::size_t>(i) * n] = 2;
    if (i + 1 < n) A.a[i + 1 + static_cast<std::size_t>(i) * n] = A.a[i + static_cast<std::size_t>(i + 1) * n] = -1;
  }
  const Expanded r = expand(A, m);
  int repeats = 0;
  for (int j = 0; j < m; ++j) {
    EXPECT_FALSE(r.records[j].breakdown);
    EXPECT_LT(r.records[j].beta * r.records[j].beta, kDgksEta2 * r.records[j].norm_before) << "not the case this test is for";
    repeats += r.records[j].second_pass;
  }
  EXPECT_EQ(repeats, 0);
  expect_orthonormal(*r.backend, n, m, 1e-13);
}

TEST(BackendExpand, ArrowStepRepeatsTheFullPass)
{
  // After a thick restart A v_j has large components along kept vectors outside the window {j-1, j}:
  // plant v_0 near the direction of A v_2 outside span(v_1, v_2). The full pass then removes most of w, and
  // DGKS must repeat it; the basis stays orthonormal and alpha_2 = v_2^T A v_2.
  const Matrix A = random_symmetric(101, 8);
  HostBackend b(A.n, A.n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
  const int m = 7;
  b.resize_basis(m + 1);
  const int first = cudalanczos::testing::plant_restart_arrow(b);
  std::vector<StepRecord> rec(m - first);
  b.expand(first, m, 1.0, rec.data());
  EXPECT_TRUE(rec[0].second_pass);
  EXPECT_FALSE(rec[0].breakdown);
  expect_orthonormal(b, A.n, m, 1e-13);
  SVec Av(A.n);
  A.apply(b.column(2), Av.data());
  Scalar vav = 0, v3av = 0;
  for (int q = 0; q < A.n; ++q) vav += conj_of(b.column(2)[q]) * Av[q], v3av += conj_of(b.column(3)[q]) * Av[q];
  EXPECT_NEAR(std::abs(rec[0].alpha - vav), 0.0, 1e-13 * rec[0].anorm);
  EXPECT_NEAR(std::abs(rec[0].beta - v3av), 0.0, 1e-13 * rec[0].anorm);
}

TEST(BackendExpand, SplittingTheCallsChangesNoBit)
{
  const Matrix A = random_symmetric(77, 5);
  const Expanded whole = expand(A, 20);
  const Expanded split = expand(A, 20, {3, 3, 11});
  for (int j = 0; j < 20; ++j) {
    EXPECT_EQ(whole.records[j].alpha, split.records[j].alpha);
    EXPECT_EQ(whole.records[j].beta, split.records[j].beta);
    EXPECT_EQ(whole.records[j].anorm, split.records[j].anorm);
  }
}

TEST(BackendExpand, QueuedStepsAreTheStepsOfExpand)
{
  // The default queue_steps runs nothing until collect_steps, which then gives expand's and
  // expand_partial's records bit for bit; cancel_steps drops the call and reports no step run.
  // Collecting or cancelling with nothing queued, and queueing twice, are errors.
  const Matrix A = random_symmetric(61, 9);
  const Expanded whole = expand(A, 16);
  HostBackend b(A.n, A.n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
  b.resize_basis(17);
  b.set_random(0, 2024); // expand()'s start
  cudalanczos::testing::orthonormalize(b, 0, 0, 0);
  std::vector<StepRecord> first(6), rec(10);
  b.expand(0, 6, 0.0, first.data());
  EXPECT_THROW(b.collect_steps(rec.data()), Error);
  EXPECT_THROW(b.cancel_steps(), Error);
  b.queue_steps(6, 16, -1, first[5].anorm);
  EXPECT_THROW(b.queue_steps(6, 16, -1, 1.0), Error);
  b.collect_steps(rec.data());
  for (int j = 6; j < 16; ++j) {
    EXPECT_EQ(rec[j - 6].alpha, whole.records[j].alpha) << j;
    EXPECT_EQ(rec[j - 6].beta, whole.records[j].beta) << j;
  }
  for (int q = 0; q < A.n; ++q) ASSERT_EQ(b.column(16)[q], whole.backend->column(16)[q]);
  // Cancelled: nothing ran, the basis after column 16 is as it was.
  const SVec before(b.column(16), b.column(16) + A.n);
  b.queue_steps(15, 16, 4, 1.0); // partial: pass over columns 0..3
  EXPECT_EQ(b.cancel_steps(), 0);
  for (int q = 0; q < A.n; ++q) ASSERT_EQ(b.column(16)[q], before[q]);
  EXPECT_THROW(b.queue_steps(10, 12, 10, 1.0), Error); // the pass must end before the window
}

TEST(BackendExpand, PartialStepsOrthogonalizeAgainstThePassAndTheWindow)
{
  // Partial reorthogonalization's steps after 6 full ones: each new vector is orthogonal to the pass's
  // columns 0..reach-1 and to the window {j-1, j} (to rounding), the records are the three-term
  // recurrence's alpha and beta (v_i^T A v_j within the steps), and the rest of the basis is only
  // approximately orthogonal (that is the omega recurrence's business, not the step's).
  const Matrix A = random_symmetric(150, 21);
  HostBackend b(A.n, A.n, 0, [&A](const Scalar *x, Scalar *y) { A.apply(x, y); });
  const int full = 6, m = 20, reach = 4;
  b.resize_basis(m + 1);
  b.set_random(0, 77);
  cudalanczos::testing::orthonormalize(b, 0, 0, 0);
  std::vector<StepRecord> rec(m);
  b.expand(0, full, 0.0, rec.data());
  b.expand_partial(full, 12, reach, rec[full - 1].anorm, rec.data() + full);
  b.expand_partial(12, m, reach, rec[11].anorm, rec.data() + 12); // a second call continues the first
  auto dot = [&](int i, const Scalar *y) {
    Scalar s = 0;
    for (int q = 0; q < A.n; ++q) s += conj_of(b.column(i)[q]) * y[q];
    return s;
  };
  SVec Av(A.n);
  for (int j = full; j < m; ++j) {
    SCOPED_TRACE("step " + std::to_string(j));
    ASSERT_FALSE(rec[j].breakdown);
    EXPECT_FALSE(rec[j].second_pass);
    const Scalar *v = b.column(j + 1);
    EXPECT_NEAR(std::abs(dot(j + 1, v) - 1.0), 0.0, 1e-14);
    for (int i = 0; i < reach; ++i) EXPECT_NEAR(std::abs(dot(i, v)), 0.0, 1e-14) << "pass column " << i;
    for (int i = j - 1; i <= j; ++i) EXPECT_NEAR(std::abs(dot(i, v)), 0.0, 1e-14) << "window column " << i;
    A.apply(b.column(j), Av.data());
    EXPECT_NEAR(std::abs(dot(j, Av.data()) - rec[j].alpha), 0.0, 1e-12 * rec[j].anorm);
    EXPECT_NEAR(std::abs(dot(j + 1, Av.data()) - rec[j].beta), 0.0, 1e-12 * rec[j].anorm);
  }
  // The pass must end before the window.
  EXPECT_THROW(b.expand_partial(10, 12, 10, 1.0, rec.data()), Error);
  EXPECT_THROW(b.expand_partial(10, 12, -1, 1.0, rec.data()), Error);
  EXPECT_NO_THROW(b.expand_partial(0, 1, 0, 1.0, rec.data()));
}

TEST(BackendExpand, FindsPlantedBreakdowns)
{
  // Rank 3: the Krylov space has dimension <= 4, so A v_3 lies in span(v_0..v_3).
  const int n = 90;
  Rng rng(3);
  Matrix A{n, SVec(static_cast<std::size_t>(n) * n, 0.0)};
  for (int r = 0; r < 3; ++r) {
    Vec u(n);
    for (double &x : u) x = rng.uniform(-1, 1);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) A.a[i + static_cast<std::size_t>(j) * n] += (r + 1.5) * u[i] * u[j];
  }
  Expanded r = expand(A, 8);
  for (int j = 0; j < 3; ++j) EXPECT_FALSE(r.records[j].breakdown) << j;
  EXPECT_TRUE(r.records[3].breakdown);
  EXPECT_EQ(r.records[3].beta, 0.0);
  for (int i = 0; i < n; ++i) ASSERT_EQ(r.backend->column(4)[i], 0.0);

  // The identity: breakdown at the first step, alpha = 1.
  Matrix I{n, SVec(static_cast<std::size_t>(n) * n, 0.0)};
  for (int i = 0; i < n; ++i) I.a[i + static_cast<std::size_t>(i) * n] = 1;
  r = expand(I, 2);
  EXPECT_TRUE(r.records[0].breakdown);
  EXPECT_NEAR(r.records[0].alpha, 1.0, 4 * eps);
}

} // namespace
