// WrappingBackend: every operation of the four interfaces reaches the wrapped backend with the columns
// shifted by the offset, bit for bit what the same calls on the wrapped backend give; and a solve through
// a wrapper that changes nothing is the wrapped backend's solve, products and values alike.
#include "core/lanczos_driver.hpp"
#include "core/wrapping_backend.hpp"
#include "host/host_backend.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace cudalanczos;
using namespace cudalanczos::testing;
using SVec = std::vector<Scalar>;

// A wrapper that changes nothing but where its columns start.
class Shifted final : public WrappingBackend {
public:
  Shifted(Backend &inner, int off) : WrappingBackend(inner) { set_offset(off); }
};

constexpr int kRows = 13, kColumns = 12, kOffset = 3;

HostBackend make_host(const Dense &A) { return HostBackend(A.n, A.n, 0, [&A](const Scalar *x, Scalar *y) { A.matvec(x, y); }); }

// The wrapped basis's columns, all of them.
std::vector<SVec> columns(const Backend &b)
{
  std::vector<SVec> out(static_cast<std::size_t>(b.basis_columns()), SVec(static_cast<std::size_t>(b.local_size())));
  for (int j = 0; j < b.basis_columns(); ++j) b.get_column(j, out[static_cast<std::size_t>(j)].data());
  return out;
}

// Two host backends with the same random basis: one called through the wrapper, one directly.
struct Twins {
  Dense A = laplacian_1d(kRows);
  HostBackend wrapped = make_host(A), direct = make_host(A);
  Shifted w{wrapped, kOffset};
  Twins()
  {
    wrapped.resize_basis(kColumns);
    direct.resize_basis(kColumns);
    for (int j = 0; j < kColumns; ++j) wrapped.set_random(j, 11 + j), direct.set_random(j, 11 + j);
  }
  void expect_same_bases() const
  {
    const auto a = columns(wrapped), b = columns(direct);
    for (std::size_t j = 0; j < a.size(); ++j)
      for (std::size_t i = 0; i < a[j].size(); ++i) ASSERT_EQ(a[j][i], b[j][i]) << "column " << j << ", row " << i;
  }
};

TEST(WrappingBackend, ShowsTheColumnsPastItsOffset)
{
  Twins t;
  EXPECT_EQ(t.w.basis_columns(), kColumns - kOffset);
  EXPECT_EQ(t.w.global_size(), kRows);
  EXPECT_EQ(t.w.name(), "host");
  SVec x(kRows), y(kRows);
  t.w.get_column(2, x.data());
  t.direct.get_column(2 + kOffset, y.data());
  EXPECT_EQ(x, y);
}

TEST(WrappingBackend, BasisOperationsAreTheWrappedBackendsShifted)
{
  Twins t;
  const int o = kOffset;
  const SVec coef = {0.5, -1.25, 2.0};
  Scalar a[4], b[4];
  t.w.project(1, 3, 5, a);
  t.direct.project(1 + o, 3, 5 + o, b);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a[i], b[i]) << i;
  t.w.project_with(0, 2, 4, 6, a);
  t.direct.project_with(o, 2, 4 + o, 6 + o, b);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a[i], b[i]) << i;
  EXPECT_EQ(t.w.subtract(0, 3, coef.data(), 4), t.direct.subtract(o, 3, coef.data(), 4 + o));
  t.w.update(1, 3, coef.data(), 6), t.direct.update(1 + o, 3, coef.data(), 6 + o);
  t.w.scale(2, -0.75), t.direct.scale(2 + o, -0.75);
  t.w.combine(0, 3, coef.data(), 7), t.direct.combine(o, 3, coef.data(), 7 + o);
  t.w.copy_column(7, 8), t.direct.copy_column(7 + o, 8 + o);
  const SVec Q = {1, 0.5, 0.25, -0.5, 1, 0.125, 0.25, -0.125, 1}; // 3 x 3
  t.w.rotate(3, 2, Q.data(), 3), t.direct.rotate_from(o, 3, 2, Q.data(), 3);
  t.w.rotate_from(2, 3, 3, Q.data(), 3), t.direct.rotate_from(2 + o, 3, 3, Q.data(), 3);
  t.expect_same_bases();
}

TEST(WrappingBackend, BlockOperationsAreTheWrappedBackendsShifted)
{
  Twins t;
  const int o = kOffset, k = 3, b = 2;
  SVec pa((k + b) * b), pb((k + b) * b);
  t.w.project_block(0, k, 4, b, pa.data());
  t.direct.project_block(o, k, 4 + o, b, pb.data());
  EXPECT_EQ(pa, pb);
  t.w.update_block(0, k, pa.data(), k + b, 4, b), t.direct.update_block(o, k, pb.data(), k + b, 4 + o, b);
  const SVec M = {2, 0.5, -0.5, 1};
  t.w.transform_block(4, b, M.data(), b), t.direct.transform_block(4 + o, b, M.data(), b);
  t.w.apply_operator_block(4, 6, b), t.direct.apply_operator_block(4 + o, 6 + o, b);
  t.w.apply_operator(6, 8), t.direct.apply_operator(6 + o, 8 + o);
  // A block step's window and the pass after it: the window 2..3, then columns 0..3, the block at 4.
  SVec wa((2 + b) * b), wb((2 + b) * b), qa((4 + b) * b), qb((4 + b) * b);
  t.w.window_then_pass_block(2, 2, 0, 4, 4, b, wa.data(), qa.data());
  t.direct.window_then_pass_block(2 + o, 2, o, 4, 4 + o, b, wb.data(), qb.data());
  EXPECT_EQ(wa, wb);
  EXPECT_EQ(qa, qb);
  t.expect_same_bases();
}

// The wrapped backend's pass always starts at its column 0: a partial step's pass over the wrapper's
// columns 0..reach-1 covers the columns before the offset as well (reach + offset there).
TEST(WrappingBackend, StepsShiftTheirColumnsAndWidenThePartialPass)
{
  Twins t;
  const int o = kOffset;
  SVec h(kColumns + 1); // orthonormal leading columns, as a cycle's start has them (the same on both)
  for (int j = 0; j < 3 + o; ++j)
    for (HostBackend *b : {&t.wrapped, &t.direct}) {
      b->project(0, j, j, h.data());
      b->scale(j, 1 / std::sqrt(b->subtract(0, j, h.data(), j)));
    }
  StepRecord ra[3], rb[3];
  t.w.expand_partial(2, 5, 1, 0.0, ra);
  t.direct.expand_partial(2 + o, 5 + o, 1 + o, 0.0, rb);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ra[i].beta, rb[i].beta) << i;
  t.w.queue_steps(5, 7, -1, ra[2].anorm);
  t.direct.queue_steps(5 + o, 7 + o, -1, rb[2].anorm);
  t.w.collect_steps(ra), t.direct.collect_steps(rb);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(ra[i].alpha, rb[i].alpha) << i;
  t.expect_same_bases();
  EXPECT_THROW(t.w.expand_partial(2, 4, 2, 0.0, ra), Error); // the pass must end before the window
}

TEST(WrappingBackend, ASolveThroughItIsTheWrappedBackendsBitForBit)
{
  const Dense A = laplacian_1d(60);
  Settings s;
  s.nev = 4;
  s.ncv = 16;
  s.tol = 1e-10;
  HostBackend direct = make_host(A), wrapped = make_host(A);
  Shifted w(wrapped, 0);
  const Solved a = solve_on(direct, s), b = solve_on(w, s);
  EXPECT_EQ(a.result.matvecs, b.result.matvecs);
  EXPECT_EQ(a.result.its, b.result.its);
  ASSERT_EQ(a.result.eigenvalues.size(), b.result.eigenvalues.size());
  for (std::size_t i = 0; i < a.result.eigenvalues.size(); ++i) EXPECT_EQ(a.result.eigenvalues[i], b.result.eigenvalues[i]) << i;
  EXPECT_EQ(a.vectors, b.vectors);
}

} // namespace
