// The interval solve (EPS_ALL with an interval) and the threshold solve on the host backend, against
// LAPACK's dsyev; the window filter and the counting polynomial against their definitions; the host
// backend's filtered product against p evaluated at the eigenvalues of a diagonal operator.
#include "core/interval_solve.hpp"
#include "core/polynomial_filter.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using namespace cudalanczos;
using namespace cudalanczos::testing;

// ---- the filters

// The sigma-damped delta's side lobes stay below the end values a solve uses (0.8 by default; 0.5 here
// too), at the spectrum's ends as well, where the kernel's two images overlap, and at high degrees.
TEST(PolynomialFilter, WindowFilterIsBalancedAndSeparatesTheWindow)
{
  struct Case { double lo, hi, a, b; };
  for (const double end : {0.5, 0.8})
  for (const Case &w : {Case{-1, 9, 3.0, 3.4}, Case{0, 8, 7.2, 9.0}, Case{0, 8, -1.0, 0.3}, Case{-2, 2, -0.01, 0.02},
                        Case{0, 8, 7.99, 8.5}, Case{0, 8, 0.004, 0.006}, Case{-14.25, 14.25, -0.000445, 0.000445}}) {
    const WindowFilter f = window_filter(w.lo, w.hi, w.a, w.b, 0, end);
    const double a = std::max(w.a, w.lo), b = std::min(w.b, w.hi);
    SCOPED_TRACE("window [" + std::to_string(w.a) + ", " + std::to_string(w.b) + "], end value " + std::to_string(end) + ", degree " +
                 std::to_string(f.p.degree()));
    EXPECT_NEAR(f.p(a), f.end_value, 1e-9);
    EXPECT_NEAR(f.p(b), f.end_value, 1e-9);
    EXPECT_LE(f.end_value, end);
    EXPECT_NEAR(f.p(f.gamma), 1.0, 1e-12);
    // the smallest degree: one less leaves the ends above the value asked for
    if (f.p.degree() > 2) {
      EXPECT_GT(window_filter(w.lo, w.hi, w.a, w.b, f.p.degree() - 1, end).end_value, end);
    }
    // on a grid, and densely around the window, where the peak and its first side lobes lie
    const int grid = 4000, near = 4000;
    for (int i = 0; i <= grid + near; ++i) {
      const double x = i <= grid ? w.lo + (w.hi - w.lo) * i / grid : a - 3 * (b - a) + 7 * (b - a) * (i - grid) / near;
      if (x < w.lo || x > w.hi) continue;
      const double px = f.p(x);
      if (x >= a && x <= b) {
        EXPECT_GE(px, f.end_value * (1 - 1e-9)) << "inside at " << x;
      } else if (x < a - 1e-9 * (w.hi - w.lo) || x > b + 1e-9 * (w.hi - w.lo)) {
        EXPECT_LT(px, f.end_value) << "outside at " << x;
      }
    }
  }
}

TEST(PolynomialFilter, SigmaFactorsFallFromOneAndStayPositive)
{
  for (const int degree : {0, 1, 7, 300}) {
    const std::vector<double> g = sigma_damping(degree);
    ASSERT_EQ(g.size(), static_cast<std::size_t>(degree) + 1);
    EXPECT_EQ(g[0], 1.0);
    for (int k = 1; k <= degree; ++k) {
      EXPECT_GT(g[k], 0.0);
      EXPECT_LT(g[k], g[k - 1]);
      EXPECT_NEAR(g[k], std::sin(k * M_PI / (degree + 1)) / (k * M_PI / (degree + 1)), 1e-15);
    }
  }
  EXPECT_THROW(sigma_damping(-1), Error);
}

TEST(PolynomialFilter, IndicatorTraceCountsTheEigenvaluesInTheWindow)
{
  // 1000 eigenvalues evenly in [0, 10): 100 in [4, 5), the kernel's width being about 10 / 200 at degree 400
  double sum = 0;
  const ChebyshevFilter f = interval_indicator(-0.01, 10.01, 4.0 - 0.005, 5.0 - 0.005, 400);
  for (int i = 0; i < 1000; ++i) sum += f(i / 100.0);
  EXPECT_NEAR(sum, 100.0, 1.0);
}

// indicator_blur says where the indicator has made its rise: 3 blurs outside an end it is below 0.05,
// 3 blurs inside above 0.95, in the middle of the spectrum and near its end, at low and high degree.
TEST(PolynomialFilter, TheIndicatorRisesWithinAFewBlursOfEachEnd)
{
  const double lo = -2, hi = 6;
  for (int degree : {60, 400, 3000})
    for (double a : {1.0, 5.5}) {
      SCOPED_TRACE("degree " + std::to_string(degree) + ", a " + std::to_string(a));
      const double blur = indicator_blur(lo, hi, a, degree);
      ASSERT_GT(blur, 0.0);
      const double b = a + 40 * blur;
      const ChebyshevFilter f = interval_indicator(lo, hi, a, b, degree);
      EXPECT_LT(f(a - 3 * blur), 0.05);
      EXPECT_GT(f(a + 3 * blur), 0.95);
      EXPECT_GT(f(a + blur), 0.55); // and not long before: a blur in, it is past half
    }
  EXPECT_LT(indicator_blur(lo, hi, 2, 800), indicator_blur(lo, hi, 2, 400));
  EXPECT_DOUBLE_EQ(indicator_blur(lo, hi, -5, 400), indicator_blur(lo, hi, lo, 400)); // outside: the bound's
  EXPECT_GT(indicator_blur(lo, hi, lo, 400), 0.0);
  EXPECT_THROW(indicator_blur(lo, hi, 2, 0), Error);
}

TEST(PolynomialFilter, BadArgumentsAreRefused)
{
  EXPECT_THROW(window_filter(1, 0, 0.2, 0.5, 0, 0.5), Error);  // lo > hi
  EXPECT_THROW(window_filter(0, 1, 0.5, 0.2, 0, 0.5), Error);  // a > b
  EXPECT_THROW(window_filter(0, 1, 2.0, 3.0, 0, 0.5), Error);  // outside the spectrum
  EXPECT_THROW(window_filter(0, 1, 0.2, 0.5, 0, 1.5), Error);  // end value outside (0, 1)
  EXPECT_THROW(interval_indicator(0, 1, 0.2, 0.5, 0), Error);  // degree 0
}

// ---- the host backend's filtered product

TEST(HostBackendFilter, AppliesThePolynomialAtTheEigenvalues)
{
  const int n = 37;
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = -3 + 7.0 * i / (n - 1);
  HostBackend b(n, n, 0, [&](const Scalar *x, Scalar *y) {
    for (int i = 0; i < n; ++i) y[i] = d[i] * x[i];
  });
  b.resize_basis(2);
  for (int degree : {1, 2, 3, 25}) {
    const WindowFilter f = window_filter(-3.5, 4.5, 0.0, 1.0, degree, 0.5);
    b.set_operator_filter(&f.p);
    b.set_random(0, 7);
    b.apply_operator(0, 1);
    std::vector<Scalar> x(n), y(n);
    b.get_column(0, x.data());
    b.get_column(1, y.data());
    for (int i = 0; i < n; ++i) EXPECT_NEAR(std::abs(y[i] - f.p(d[i]) * x[i]), 0.0, 1e-13) << "degree " << degree << ", row " << i;
    EXPECT_THROW(b.set_operator_scale(1), Error);
    b.set_operator_filter(nullptr);
    b.apply_operator(0, 1); // A again
    b.get_column(1, y.data());
    for (int i = 0; i < n; ++i) EXPECT_EQ(y[i], d[i] * x[i]);
  }
  ChebyshevFilter bad;
  bad.coef = {1.0};
  EXPECT_THROW(b.set_operator_filter(&bad), Error); // degree 0
}

// ---- interval solves against LAPACK

/// The 7-point Laplacian of an nx x ny x nz grid (Dirichlet): eigenvalues crowded and multiple.
struct Laplacian3d {
  int nx, ny, nz;
  int n() const { return nx * ny * nz; }
  void matvec(const Scalar *x, Scalar *y) const
  {
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          const int r = i + nx * (j + ny * k);
          Scalar s = 6.0 * x[r];
          if (i > 0) s -= x[r - 1];
          if (i + 1 < nx) s -= x[r + 1];
          if (j > 0) s -= x[r - nx];
          if (j + 1 < ny) s -= x[r + nx];
          if (k > 0) s -= x[r - nx * ny];
          if (k + 1 < nz) s -= x[r + nx * ny];
          y[r] = s;
        }
  }
  std::vector<double> eigenvalues() const // by dsyev of the assembled matrix
  {
    const int N = n();
    std::vector<double> a(static_cast<std::size_t>(N) * N, 0.0);
    std::vector<Scalar> e(N, 0.0), col(N);
    for (int c = 0; c < N; ++c) {
      e[c] = 1.0;
      matvec(e.data(), col.data());
      e[c] = 0.0;
      for (int r = 0; r < N; ++r) a[r + static_cast<std::size_t>(c) * N] = real_part(col[r]);
    }
    return lapack_eigenvalues(N, a);
  }
};

using Op = std::function<void(const Scalar *, Scalar *)>;

struct Checked {
  IntervalResult out;
  std::vector<double> expected;
};

/// solve_interval of [a, b] on the host backend; its eigenvalues against `all` (LAPACK's), its vectors'
/// residuals and orthogonality computed here.
Checked check_window(int n, const Op &op, const std::vector<double> &all, double a, double b, int degree = 0, int block = 1)
{
  HostBackend backend(n, n, 0, op);
  Settings s;
  s.tol = 1e-10;
  s.max_it = 500;
  IntervalSettings w;
  w.a = a, w.b = b, w.degree = degree, w.block_size = block;
  Checked c;
  c.out = solve_interval(backend, s, {}, w);
  for (double x : all)
    if (x >= a && x <= b) c.expected.push_back(x);
  const Result &r = c.out.result;
  EXPECT_EQ(r.reason, Reason::Converged);
  EXPECT_EQ(r.nconv, static_cast<int>(c.expected.size())) << "found " << describe(r.eigenvalues) << "\nexpected " << describe(c.expected);
  if (r.nconv != static_cast<int>(c.expected.size())) return c;
  const double anorm = std::max(std::abs(all.front()), std::abs(all.back()));
  std::vector<std::vector<Scalar>> X(r.nconv, std::vector<Scalar>(n));
  for (int i = 0; i < r.nconv; ++i) {
    EXPECT_NEAR(r.eigenvalues[i], c.expected[i], 1e-9 * anorm) << "eigenvalue " << i;
    backend.get_column(i, X[i].data());
    std::vector<Scalar> ax(n);
    op(X[i].data(), ax.data());
    double res = 0;
    for (int k = 0; k < n; ++k) res += abs2(ax[k] - r.eigenvalues[i] * X[i][k]);
    EXPECT_LT(std::sqrt(res), 1e-8 * anorm) << "residual of pair " << i;
  }
  for (int i = 0; i < r.nconv; ++i)
    for (int j = 0; j <= i; ++j) {
      Scalar dot = 0;
      for (int k = 0; k < n; ++k) dot += conj_of(X[i][k]) * X[j][k];
      EXPECT_NEAR(std::abs(dot - (i == j ? 1.0 : 0.0)), 0.0, 1e-10) << "x_" << i << "^H x_" << j;
    }
  return c;
}

class IntervalSolve3dLaplacian : public ::testing::Test {
protected:
  static void SetUpTestSuite() { all_ = lap_.eigenvalues(); }
  static const Laplacian3d lap_;
  static std::vector<double> all_;
  Op op() const { return [](const Scalar *x, Scalar *y) { lap_.matvec(x, y); }; }
  /// The threshold solves' settings: chunks of 8 largest pairs in 24 columns.
  static Settings threshold_settings()
  {
    Settings s;
    s.which = Which::LargestAlgebraic;
    s.nev = 8, s.ncv = 24, s.tol = 1e-10, s.max_it = 500;
    return s;
  }
};
const Laplacian3d IntervalSolve3dLaplacian::lap_{9, 10, 11};
std::vector<double> IntervalSolve3dLaplacian::all_;

TEST_F(IntervalSolve3dLaplacian, InteriorWindowWithMultipleEigenvalues)
{
  const Checked c = check_window(lap_.n(), op(), all_, 5.9, 6.3);
  EXPECT_GE(c.expected.size(), 20u);
  EXPECT_GT(c.out.degree, 2);
  EXPECT_EQ(c.out.found >= c.out.result.nconv, true);
  EXPECT_NEAR(c.out.count_estimate, static_cast<double>(c.expected.size()), 6 * c.out.count_error + 0.1 * c.expected.size());
}

TEST_F(IntervalSolve3dLaplacian, WindowAtTheUpperEnd)
{
  check_window(lap_.n(), op(), all_, 11.2, 13.0);
}

TEST_F(IntervalSolve3dLaplacian, WindowWithTwoHundredEigenvalues)
{
  const Checked c = check_window(lap_.n(), op(), all_, 4.0, 5.6);
  EXPECT_GE(c.expected.size(), 200u);
}

// Blocks of b vectors per filtered step (p(A) on b vectors a pass): the same eigenvalues, in fewer
// passes over A than the single-vector filtered solves take.
TEST_F(IntervalSolve3dLaplacian, BlockFilterFindsTheSameWindowsInFewerPasses)
{
  for (const auto &[a, b] : {std::pair{5.9, 6.3}, std::pair{11.2, 13.0}, std::pair{4.0, 5.6}}) {
    const Checked one = check_window(lap_.n(), op(), all_, a, b);
    for (int block : {2, 4, 8}) {
      const Checked c = check_window(lap_.n(), op(), all_, a, b, 0, block);
      EXPECT_EQ(c.out.degree, one.out.degree);
      const double passes = static_cast<double>(c.out.filter_applications) / block;
      EXPECT_LT(passes, one.out.filter_applications) << "[" << a << ", " << b << "] blocks of " << block;
      std::printf("[%g, %g] %zu eigenvalues, b = %d: %ld filter applications (%g passes), single %ld\n", a, b, c.expected.size(), block,
                  c.out.filter_applications, passes, one.out.filter_applications);
    }
  }
}

TEST_F(IntervalSolve3dLaplacian, WindowOutsideTheSpectrumIsEmpty)
{
  const Checked c = check_window(lap_.n(), op(), all_, -5.0, -1.0);
  EXPECT_EQ(c.out.result.nconv, 0);
  EXPECT_EQ(c.out.chunks, 0);
}

TEST(IntervalSolve, WindowInAGapIsEmptyAndItsEndsOnEigenvaluesCount)
{
  // a diagonal operator: 0.1 k for k = 0..299 with k = 100..139 missing, and 2.0 three times
  std::vector<double> d;
  for (int k = 0; k < 300; ++k)
    if (k < 100 || k >= 140) d.push_back(0.1 * k);
  d.push_back(2.0), d.push_back(2.0);
  const int n = static_cast<int>(d.size());
  const Op op = [&](const Scalar *x, Scalar *y) {
    for (int i = 0; i < n; ++i) y[i] = d[i] * x[i];
  };
  std::vector<double> all = d;
  std::sort(all.begin(), all.end());
  const Checked gap = check_window(n, op, all, 10.05, 13.85);
  EXPECT_EQ(gap.out.result.nconv, 0);
  const Checked ends = check_window(n, op, all, 2.0, 3.0); // 2.0 (three copies) .. 3.0, both ends eigenvalues
  EXPECT_EQ(ends.expected.size(), 13u);
}

// Callbacks::interval_progress: the plan (filter degree, count estimate, a first cycle's products) once,
// before any filtered product, then a tick after every filtered step, with the chunk, the restart and the
// products rising; and the same pairs, products and restarts as without it (the steps taken one backend
// call at a time give the same records).
TEST_F(IntervalSolve3dLaplacian, ProgressIsToldWithoutChangingTheSolve)
{
  Settings s;
  s.tol = 1e-10, s.max_it = 500;
  IntervalSettings w;
  w.a = 5.9, w.b = 6.3;
  HostBackend quiet(lap_.n(), lap_.n(), 0, op());
  const IntervalResult plain = solve_interval(quiet, s, {}, w);

  std::vector<IntervalProgress> told;
  Callbacks c;
  c.interval_progress = [&](const IntervalProgress &p) { told.push_back(p); };
  c.tick = [](int, int, long) {}; // the filtered solves' ticks too
  HostBackend watched(lap_.n(), lap_.n(), 0, op());
  const IntervalResult out = solve_interval(watched, s, c, w);

  ASSERT_GE(told.size(), 10u);
  EXPECT_TRUE(told[0].counting); // the degree first, before the count estimate's products
  EXPECT_EQ(told[0].degree, out.degree);
  EXPECT_EQ(told[0].count_products, static_cast<long>(w.count_vectors) * out.degree);
  EXPECT_TRUE(told[1].plan);
  EXPECT_EQ(told[1].products, told[0].products + told[0].count_products);
  EXPECT_EQ(told[1].count_estimate, out.count_estimate);
  EXPECT_EQ(told[1].first_cycle_products % out.degree, 0);
  EXPECT_GT(told[1].first_cycle_products, 0);
  for (std::size_t i = 2; i < told.size(); ++i) {
    EXPECT_FALSE(told[i].plan || told[i].counting) << i;
    EXPECT_GE(told[i].chunk, 1) << i;
    EXPECT_GE(told[i].chunk, told[i - 1].chunk) << i;
    EXPECT_GT(told[i].products, told[i - 1].products) << i;
  }
  EXPECT_EQ(told.back().chunk, out.chunks);
  EXPECT_LE(told.back().found, out.found);
  EXPECT_LT(told.back().products, out.result.matvecs); // the Rayleigh-Ritz step's products come after
  EXPECT_EQ(out.result.matvecs, plain.result.matvecs);
  EXPECT_EQ(out.result.its, plain.result.its);
  ASSERT_EQ(out.result.eigenvalues.size(), plain.result.eigenvalues.size());
  for (std::size_t i = 0; i < plain.result.eigenvalues.size(); ++i) EXPECT_EQ(out.result.eigenvalues[i], plain.result.eigenvalues[i]) << i;
}

TEST(IntervalSolve, BadSettingsAreRefused)
{
  HostBackend b(10, 10, 0, [](const Scalar *x, Scalar *y) { std::copy(x, x + 10, y); });
  IntervalSettings w;
  w.a = 1, w.b = 0;
  EXPECT_THROW(solve_interval(b, Settings{}, {}, w), Error);
  w.a = 0, w.b = 1, w.end_value = 1.0;
  EXPECT_THROW(solve_interval(b, Settings{}, {}, w), Error);
}

// ---- threshold solves

TEST_F(IntervalSolve3dLaplacian, ThresholdTakesEveryEigenvalueAboveIt)
{
  HostBackend backend(lap_.n(), lap_.n(), 0, op());
  const Settings s = threshold_settings();
  const double t = 10.6;
  const Result r = solve_to_threshold(backend, s, {}, t);
  std::vector<double> expected;
  for (auto it = all_.rbegin(); it != all_.rend() && *it >= t; ++it) expected.push_back(*it);
  ASSERT_GE(expected.size(), 20u);
  ASSERT_EQ(r.nconv, static_cast<int>(expected.size())) << describe(r.eigenvalues);
  for (int i = 0; i < r.nconv; ++i) EXPECT_NEAR(r.eigenvalues[i], expected[i], 1e-9 * 12) << i;
  EXPECT_EQ(r.reason, Reason::Converged);
  EXPECT_FALSE(r.room_exhausted);
}

// With room for fewer pairs than the count estimate puts beyond the threshold (max_columns), the solve
// refuses before its chunks, naming the count.
TEST_F(IntervalSolve3dLaplacian, ThresholdBeyondTheRoomNamesTheCount)
{
  HostBackend backend(lap_.n(), lap_.n(), 0, op());
  const Settings s = threshold_settings();
  const double t = 9.0; // far more than 16 eigenvalues above it
  const auto beyond = static_cast<long>(std::count_if(all_.begin(), all_.end(), [&](double x) { return x >= t; }));
  try {
    solve_to_threshold(backend, s, {}, t, false, basis_columns_needed(s) + 16);
    FAIL() << "no error for " << beyond << " eigenvalues beyond the threshold and room for 16";
  } catch (const Error &e) {
    const std::string what = e.what();
    ASSERT_EQ(what.rfind("at least about ", 0), 0u) << what;
    const long said = std::stol(what.substr(15));
    EXPECT_LE(said, beyond) << what;
    EXPECT_GT(said, 16) << what;
    EXPECT_NE(what.find("16 pairs"), std::string::npos) << what;
  }
}


/// The 1-D Laplacian tridiag(-1, 2, -1) of order n (SLEPc's ex1): eigenvalues 2 - 2 cos(k pi / (n + 1)),
/// crowded near 4, where the threshold solves below look.
struct Laplacian1d {
  int n;
  void matvec(const Scalar *x, Scalar *y) const
  {
    for (int i = 0; i < n; ++i) y[i] = 2.0 * x[i] - (i > 0 ? x[i - 1] : 0.0) - (i + 1 < n ? x[i + 1] : 0.0);
  }
  std::vector<double> eigenvalues() const // ascending
  {
    std::vector<double> ev(n);
    for (int k = 1; k <= n; ++k) ev[k - 1] = 2 - 2 * std::cos(k * M_PI / (n + 1));
    std::sort(ev.begin(), ev.end());
    return ev;
  }
};

/// The settings the plugin gives a threshold solve on a sparse matrix at SLEPc's defaults: chunks of 16
/// pairs in 32 columns, partial reorthogonalization, a third kept at restart.
Settings plugin_threshold_settings(Which which)
{
  Settings s;
  s.which = which;
  s.nev = 16, s.ncv = 32, s.tol = 1e-8, s.max_it = 100;
  s.reorthogonalization = Reorthogonalization::Partial;
  s.restart = 1.0 / 3, s.restart_raise = true;
  return s;
}

/// solve_to_threshold of `op` at the plugin's settings against `all` (ascending): every eigenvalue beyond
/// the threshold (relative: that fraction of the end of the spectrum on the wanted side), copies included,
/// and no other; returns the count.
int check_threshold(int n, const Op &op, const std::vector<double> &all, Which which, double threshold, bool relative = false)
{
  HostBackend backend(n, n, 0, op);
  const Result r = solve_to_threshold(backend, plugin_threshold_settings(which), {}, threshold, relative);
  const double anorm = std::max(std::abs(all.front()), std::abs(all.back()));
  const bool smallest = which == Which::SmallestAlgebraic;
  const double top = which == Which::LargestAlgebraic ? all.back() : smallest ? all.front() : anorm;
  const double t = relative ? threshold * top : threshold;
  std::vector<double> expected;
  for (double x : all)
    if (smallest ? x <= t : which == Which::LargestAlgebraic ? x >= t : std::abs(x) >= std::abs(t)) expected.push_back(x);
  std::sort(expected.begin(), expected.end(), [&](double x, double y) { return smallest ? x < y : which == Which::LargestAlgebraic ? x > y : std::abs(x) > std::abs(y); });
  EXPECT_EQ(r.reason, Reason::Converged);
  EXPECT_FALSE(r.room_exhausted);
  EXPECT_EQ(r.nconv, static_cast<int>(expected.size())) << "found " << describe(r.eigenvalues) << "\nexpected " << describe(expected);
  if (r.nconv != static_cast<int>(expected.size())) return r.nconv;
  for (int i = 0; i < r.nconv; ++i) {
    EXPECT_NEAR(std::abs(r.eigenvalues[i]), std::abs(expected[i]), 1e-8 * anorm) << "eigenvalue " << i;
    std::vector<Scalar> x(n), ax(n);
    backend.get_column(i, x.data());
    op(x.data(), ax.data());
    double res = 0;
    for (int k = 0; k < n; ++k) res += abs2(ax[k] - r.eigenvalues[i] * x[k]);
    EXPECT_LT(std::sqrt(res), 1e-7 * anorm) << "residual of pair " << i;
  }
  return r.nconv;
}

Op laplacian_1d(int n, double shift = 0)
{
  return [n, shift](const Scalar *x, Scalar *y) {
    Laplacian1d{n}.matvec(x, y);
    for (int i = 0; i < n; ++i) y[i] -= shift * x[i];
  };
}

// SLEPc's ex1 at n = 400 with -eps_threshold_absolute 3.9: 40 eigenvalues crowd above it, and the chunks
// shared one budget of restarts, which ran out before the last 8 converged.
TEST(ThresholdSolve, AbsoluteAboveInACrowdedEnd)
{
  EXPECT_EQ(check_threshold(400, laplacian_1d(400), Laplacian1d{400}.eigenvalues(), Which::LargestAlgebraic, 3.9), 40);
}

TEST(ThresholdSolve, AbsoluteBelow)
{
  EXPECT_GE(check_threshold(400, laplacian_1d(400), Laplacian1d{400}.eigenvalues(), Which::SmallestAlgebraic, 0.1), 40);
}

TEST(ThresholdSolve, RelativeToTheLargest)
{
  EXPECT_GE(check_threshold(400, laplacian_1d(400), Laplacian1d{400}.eigenvalues(), Which::LargestAlgebraic, 0.97, true), 30);
}

TEST(ThresholdSolve, LargestMagnitudeOnBothEnds)
{
  std::vector<double> all = Laplacian1d{400}.eigenvalues();
  for (double &x : all) x -= 2; // symmetric about 0
  EXPECT_GE(check_threshold(400, laplacian_1d(400, 2.0), all, Which::LargestMagnitude, 1.95), 40);
}

// A cube's Laplacian: eigenvalues of multiplicity 3 and 6 beyond the threshold, each copy returned.
TEST(ThresholdSolve, CopiesOfMultipleEigenvalues)
{
  const Laplacian3d cube{8, 8, 8};
  EXPECT_GE(check_threshold(cube.n(), [&](const Scalar *x, Scalar *y) { cube.matvec(x, y); }, cube.eigenvalues(), Which::LargestAlgebraic, 10.0),
            20);
}

// More eigenvalues beyond the threshold (460) than SLEPc's room of max(8 nev, 256): the count estimate
// sizes the room.
TEST(ThresholdSolve, MoreThanTheDefaultRoom)
{
  EXPECT_EQ(check_threshold(2000, laplacian_1d(2000), Laplacian1d{2000}.eigenvalues(), Which::LargestAlgebraic, 3.5), 460);
}

TEST(ThresholdSolve, NoneBeyondTheLargest)
{
  EXPECT_EQ(check_threshold(400, laplacian_1d(400), Laplacian1d{400}.eigenvalues(), Which::LargestAlgebraic, 4.5), 0);
}

// A dense arrowhead (a diagonal bordered by a full first row and column): no sparsity to favour.
TEST(ThresholdSolve, DenseArrowhead)
{
  const int n = 300;
  std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) a[i + static_cast<std::size_t>(i) * n] = 1.0 + 0.01 * i + 0.3 * std::sin(7.0 * i);
  for (int i = 1; i < n; ++i) a[i] = a[static_cast<std::size_t>(i) * n] = 0.05 * std::cos(3.0 * i);
  const Op op = [&](const Scalar *x, Scalar *y) {
    for (int r = 0; r < n; ++r) {
      Scalar sum = 0;
      for (int c = 0; c < n; ++c) sum += a[r + static_cast<std::size_t>(c) * n] * x[c];
      y[r] = sum;
    }
  };
  EXPECT_GE(check_threshold(n, op, lapack_eigenvalues(n, a), Which::LargestAlgebraic, 3.5), 20);
}

} // namespace

// The periodic 8^3 cube without disorder (examples/anderson_window -W 0): levels of 24 and 68 copies at a
// window's middle and ends (0 and +-(2 - sqrt 2)). Over 12 seeds each: single vectors return every
// eigenvalue in the window; blocks of 2 return every one, or say they did not (a pair short of tol is
// reported, never dropped in silence). Before the first chunk had room for all it converged, 8 of 30
// seeds lost up to 10 copies at the window [-0.5, 0.65], reported as converged.
TEST(IntervalSolve, EveryCopyOfLevelsOfTensOfCopiesOverSeeds)
{
  constexpr int L = 8, n = L * L * L;
  const Op op = [](const Scalar *x, Scalar *y) {
    const auto at = [](int i, int j, int k) { return (i + L) % L + L * ((j + L) % L + L * ((k + L) % L)); };
    for (int k = 0; k < L; ++k)
      for (int j = 0; j < L; ++j)
        for (int i = 0; i < L; ++i)
          y[at(i, j, k)] = -(x[at(i + 1, j, k)] + x[at(i - 1, j, k)] + x[at(i, j + 1, k)] + x[at(i, j - 1, k)] + x[at(i, j, k + 1)] +
                             x[at(i, j, k - 1)]);
  };
  std::vector<double> all; // -2 (cos 2 pi p / L + cos 2 pi q / L + cos 2 pi r / L)
  for (int p = 0; p < L; ++p)
    for (int q = 0; q < L; ++q)
      for (int r = 0; r < L; ++r) all.push_back(-2 * (std::cos(2 * M_PI * p / L) + std::cos(2 * M_PI * q / L) + std::cos(2 * M_PI * r / L)));
  for (const auto &[a, b] : {std::pair{-0.5, 0.65}, std::pair{-0.7, 0.7}}) {
    const auto expected = std::count_if(all.begin(), all.end(), [&](double x) { return x >= a && x <= b; });
    for (int block : {1, 2})
      for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        SCOPED_TRACE("[" + std::to_string(a) + ", " + std::to_string(b) + "], blocks of " + std::to_string(block) + ", seed " + std::to_string(seed));
        HostBackend backend(n, n, 0, op);
        Settings s;
        s.tol = 1e-10, s.seed = seed;
        IntervalSettings w;
        w.a = a, w.b = b, w.block_size = block;
        const Result r = solve_interval(backend, s, {}, w).result;
        if (block == 1 || r.reason == Reason::Converged) EXPECT_EQ(r.nconv, expected) << to_string(r.reason);
        else EXPECT_EQ(r.nconv + r.residual_rejected, expected) << "every copy found, some reported short of tol";
      }
  }
}
