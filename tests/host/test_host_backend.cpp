// The host reference backend on data small enough to check by hand.
//
// Every other backend is tested against this one, so it is itself checked against numbers worked out
// on paper: 4-row columns with small integer / binary-fraction entries, so that every expected value
// is exact in double precision and compared with EXPECT_EQ / EXPECT_DOUBLE_EQ.
#include "core/backend.hpp"
#include "core/random.hpp"
#include "host/host_backend.hpp"
#include "../core/forwarding_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using cudalanczos::Error;
using cudalanczos::HostBackend;
using cudalanczos::index_t;
using cudalanczos::Scalar;
using Vec = std::vector<Scalar>; // real data, in Scalars: the same exact checks run in the complex build

// y = diag(1, 2, 3, 4) x  (or the global rows offset..offset+n-1 of diag(1, 2, ..., N)).
cudalanczos::HostOperator diag_operator(index_t n, index_t offset)
{
  return [n, offset](const Scalar *x, Scalar *y) {
    for (index_t i = 0; i < n; ++i) y[i] = static_cast<double>(offset + i + 1) * x[i];
  };
}

HostBackend make(int ncols, cudalanczos::Reducer reduce = cudalanczos::serial_reducer())
{
  HostBackend b(4, 4, 0, diag_operator(4, 0), std::move(reduce));
  b.resize_basis(ncols);
  return b;
}

Vec column(const HostBackend &b, int j)
{
  Vec x(b.local_size());
  b.get_column(j, x.data());
  return x;
}

// v0 = [1 2 3 4], v1 = [0 1 0 1], v2 = [1 1 1 1].
void fill(HostBackend &b)
{
  const Vec v0{1, 2, 3, 4}, v1{0, 1, 0, 1}, v2{1, 1, 1, 1};
  b.set_column(0, v0.data());
  b.set_column(1, v1.data());
  b.set_column(2, v2.data());
}

TEST(HostBackend, SizesAndName)
{
  HostBackend b = make(5);
  EXPECT_EQ(b.name(), "host");
  EXPECT_EQ(b.local_size(), 4);
  EXPECT_EQ(b.global_size(), 4);
  EXPECT_EQ(b.basis_columns(), 5);
  b.resize_basis(2);
  EXPECT_EQ(b.basis_columns(), 2);
}

TEST(HostBackend, ConstructorRejectsInconsistentSizes)
{
  EXPECT_THROW(HostBackend(5, 4, 0, diag_operator(5, 0)), Error); // local > global
  EXPECT_THROW(HostBackend(-1, 4, 0, diag_operator(4, 0)), Error);
  EXPECT_THROW(HostBackend(4, 4, -1, diag_operator(4, 0)), Error);
  EXPECT_THROW(HostBackend(4, 4, 0, cudalanczos::HostOperator{}), Error);
}

TEST(HostBackend, SetGetCopyColumn)
{
  HostBackend b = make(4);
  fill(b);
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4}));
  EXPECT_EQ(column(b, 1), (Vec{0, 1, 0, 1}));
  b.copy_column(0, 3);
  EXPECT_EQ(column(b, 3), (Vec{1, 2, 3, 4}));
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4})); // source untouched
  // column() is the same storage as get_column().
  EXPECT_EQ(b.column(3)[2], 3.0);
}

TEST(HostBackend, ApplyOperator)
{
  HostBackend b = make(4);
  fill(b);
  b.apply_operator(0, 3); // diag(1,2,3,4) [1 2 3 4]
  EXPECT_EQ(column(b, 3), (Vec{1, 4, 9, 16}));
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4}));
}

TEST(HostBackend, Project)
{
  HostBackend b = make(4);
  fill(b);
  // v0.v2 = 10, v1.v2 = 2, v2.v2 = 4.
  Scalar out[3] = {-1, -1, -1};
  b.project(0, 2, 2, out);
  EXPECT_EQ(out[0], 10.0);
  EXPECT_EQ(out[1], 2.0);
  EXPECT_EQ(out[2], 4.0);
  // A window not starting at 0; the window may include col itself: v1.v0 = 6, v2.v0 = 10, v0.v0 = 30.
  Scalar out2[3];
  b.project(1, 2, 0, out2);
  EXPECT_EQ(out2[0], 6.0);
  EXPECT_EQ(out2[1], 10.0);
  EXPECT_EQ(out2[2], 30.0);
  Scalar out3[4];
  b.project(0, 3, 1, out3); // includes col = 1: v1.v1 twice
  EXPECT_EQ(out3[0], 6.0);
  EXPECT_EQ(out3[1], 2.0);
  EXPECT_EQ(out3[2], 2.0);
  EXPECT_EQ(out3[3], 2.0);
  EXPECT_EQ(column(b, 1), (Vec{0, 1, 0, 1})); // project does not modify anything
}

TEST(HostBackend, Subtract)
{
  HostBackend b = make(4);
  fill(b);
  // v2 -= 1 v0 + 2 v1 = [1 1 1 1] - [1 2 3 4] - [0 2 0 2] = [0 -3 -2 -5]; |.|^2 = 38.
  const Scalar coef[2] = {1, 2};
  EXPECT_EQ(b.subtract(0, 2, coef, 2), 38.0);
  EXPECT_EQ(column(b, 2), (Vec{0, -3, -2, -5}));
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4}));
  EXPECT_EQ(column(b, 1), (Vec{0, 1, 0, 1}));
  // A window after col: v0 -= 0.5 v1 -> [1 1.5 3 3.5]; |.|^2 = 1 + 2.25 + 9 + 12.25 = 24.5.
  const Scalar half = 0.5;
  EXPECT_EQ(b.subtract(1, 1, &half, 0), 24.5);
  EXPECT_EQ(column(b, 0), (Vec{1, 1.5, 3, 3.5}));
}

TEST(HostBackend, UpdateSubtractsWithoutAReduction)
{
  int reductions = 0;
  HostBackend b = make(4, [&reductions](double *, int) { ++reductions; });
  fill(b);
  const Scalar coef[2] = {1, 2};
  b.update(0, 2, coef, 2); // as in Subtract: [0 -3 -2 -5]
  EXPECT_EQ(column(b, 2), (Vec{0, -3, -2, -5}));
  EXPECT_EQ(reductions, 0);
  b.subtract(0, 0, nullptr, 2);
  EXPECT_EQ(reductions, 1);
}

TEST(HostBackend, SubtractToExactZeroReturnsZero)
{
  // The planted beta = 0 of a Lanczos step: w = 3 v0 exactly (binary fractions), w -= 3 v0 is exactly
  // zero and the returned norm must be exactly 0 (the driver's breakdown test depends on it being tiny).
  HostBackend b = make(3);
  const Vec v0{0.5, -0.25, 1, 2}, w{1.5, -0.75, 3, 6};
  b.set_column(0, v0.data());
  b.set_column(1, w.data());
  const Scalar three = 3;
  EXPECT_EQ(b.subtract(0, 1, &three, 1), 0.0);
  EXPECT_EQ(column(b, 1), (Vec{0, 0, 0, 0}));
  // And project of the zero column: its dot products and its norm are all exactly 0.
  Scalar out[2] = {-1, -1};
  b.project(0, 1, 1, out);
  EXPECT_EQ(out[0], 0.0);
  EXPECT_EQ(out[1], 0.0);
}

TEST(HostBackend, Combine)
{
  HostBackend b = make(4);
  fill(b);
  b.set_column(3, Vec{9, 9, 9, 9}.data()); // overwritten, not accumulated into
  // 2 v0 - v1 + 0.5 v2 = [2 4 6 8] - [0 1 0 1] + [.5 .5 .5 .5] = [2.5 3.5 6.5 7.5]
  const Scalar coef[3] = {2, -1, 0.5};
  b.combine(0, 3, coef, 3);
  EXPECT_EQ(column(b, 3), (Vec{2.5, 3.5, 6.5, 7.5}));
  // A window not starting at 0: 3 v1 + v2 = [1 4 1 4] into column 0.
  const Scalar coef2[2] = {3, 1};
  b.combine(1, 2, coef2, 0);
  EXPECT_EQ(column(b, 0), (Vec{1, 4, 1, 4}));
}

TEST(HostBackend, Scale)
{
  HostBackend b = make(1);
  b.set_column(0, Vec{1, -2, 3, -4}.data());
  b.scale(0, -0.5);
  EXPECT_EQ(column(b, 0), (Vec{-0.5, 1, -1.5, 2}));
  b.scale(0, 0.0);
  EXPECT_EQ(column(b, 0), (Vec{0, 0, 0, 0}));
}

TEST(HostBackend, RotateSquare)
{
  HostBackend b = make(4);
  fill(b);
  // Q = [1 0 2; 1 1 0; 0 -1 1] column-major: new v0 = v0 + v1, new v1 = v1 - v2, new v2 = 2 v0 + v2.
  const Scalar Q[9] = {1, 1, 0, /* col 1 */ 0, 1, -1, /* col 2 */ 2, 0, 1};
  b.set_column(3, Vec{7, 7, 7, 7}.data());
  b.rotate(3, 3, Q, 3);
  EXPECT_EQ(column(b, 0), (Vec{1, 3, 3, 5}));
  EXPECT_EQ(column(b, 1), (Vec{-1, 0, -1, 0}));
  EXPECT_EQ(column(b, 2), (Vec{3, 5, 7, 9}));
  EXPECT_EQ(column(b, 3), (Vec{7, 7, 7, 7})); // beyond k: untouched
}

TEST(HostBackend, RotateTallWithLeadingDimension)
{
  HostBackend b = make(4);
  fill(b);
  // k = 3, m = 2, ldq = 5 (rows 3, 4 of each Q column are padding that must be ignored).
  const Scalar Q[10] = {0, 0, 1, 99, 99, /* col 1 */ 1, -1, 0, 99, 99};
  b.rotate(3, 2, Q, 5);
  EXPECT_EQ(column(b, 0), (Vec{1, 1, 1, 1}));  // v2
  EXPECT_EQ(column(b, 1), (Vec{1, 1, 3, 3}));  // v0 - v1
}

TEST(HostBackend, RotatePermutation)
{
  // The driver sorts converged pairs by a permutation rotate: it must read all old columns before
  // writing any new one.
  HostBackend b = make(3);
  fill(b);
  const Scalar P[9] = {0, 0, 1, /**/ 1, 0, 0, /**/ 0, 1, 0}; // new = [v2 v0 v1]
  b.rotate(3, 3, P, 3);
  EXPECT_EQ(column(b, 0), (Vec{1, 1, 1, 1}));
  EXPECT_EQ(column(b, 1), (Vec{1, 2, 3, 4}));
  EXPECT_EQ(column(b, 2), (Vec{0, 1, 0, 1}));
}

TEST(HostBackend, RotateFromLeavesTheColumnsBeforeFirst)
{
  // V[:, 1:3] = V[:, 1:4] Q with Q 3 x 2: v0 and v3 stay; new v1 = v1 + v3, new v2 = 2 v2.
  HostBackend b = make(4);
  fill(b);
  b.set_column(3, Vec{7, 7, 7, 7}.data());
  const Scalar Q[8] = {1, 0, 1, 99, /* col 1 */ 0, 2, 0, 99};
  b.rotate_from(1, 3, 2, Q, 4);
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4}));
  EXPECT_EQ(column(b, 1), (Vec{7, 8, 7, 8}));
  EXPECT_EQ(column(b, 2), (Vec{2, 2, 2, 2}));
  EXPECT_THROW(b.rotate_from(2, 3, 2, Q, 4), Error); // first + k beyond the basis
  EXPECT_THROW(b.rotate_from(-1, 2, 2, Q, 4), Error);
}

// Backend::rotate_from's default (a backend that only rotates from column 0) pads Q with the identity:
// the same columns as the host backend's own.
TEST(HostBackend, RotateFromDefaultMatchesTheOverride)
{
  struct OnlyRotate : cudalanczos::testing::ForwardingBackend {
    using ForwardingBackend::ForwardingBackend;
    std::string name() const override { return "only-rotate"; }
    void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override { Backend::rotate_from(first, k, m, Q, ldq); }
  };
  HostBackend a = make(4), inner = make(4);
  fill(a);
  fill(inner);
  OnlyRotate b(inner);
  const Scalar Q[6] = {0.5, -1, 3, /* col 1 */ 2, 0.25, -0.5};
  a.rotate_from(1, 3, 2, Q, 3);
  b.rotate_from(1, 3, 2, Q, 3);
  for (int j = 0; j < 3; ++j) EXPECT_EQ(column(a, j), column(inner, j)) << "column " << j;
}

TEST(HostBackend, RotateRejectsBadShapes)
{
  HostBackend b = make(3);
  fill(b);
  const Scalar Q[16] = {};
  EXPECT_THROW(b.rotate(2, 3, Q, 4), Error); // m > k
  EXPECT_THROW(b.rotate(3, 2, Q, 2), Error); // ldq < k
  EXPECT_THROW(b.rotate(4, 2, Q, 4), Error); // k > basis columns
}

TEST(HostBackend, ZeroCountOperations)
{
  HostBackend b = make(3);
  fill(b);
  Scalar out = -1;
  b.project(0, 0, 0, &out); // only the norm: |v0|^2 = 30
  EXPECT_EQ(out, 30.0);
  EXPECT_EQ(b.subtract(0, 0, nullptr, 1), 2.0); // nothing subtracted, |v1|^2 = 2
  EXPECT_EQ(column(b, 1), (Vec{0, 1, 0, 1}));
  b.combine(0, 0, nullptr, 2); // the empty sum: zero
  EXPECT_EQ(column(b, 2), (Vec{0, 0, 0, 0}));
  b.rotate(0, 0, nullptr, 0); // nothing
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4}));
}

TEST(HostBackend, BadColumnIndicesThrow)
{
  HostBackend b = make(3);
  fill(b);
  Scalar out[4];
  const Scalar coef[3] = {1, 1, 1};
  Vec x(4);
  EXPECT_THROW(b.set_random(3, 1), Error);
  EXPECT_THROW(b.set_random(-1, 1), Error);
  EXPECT_THROW(b.set_column(3, x.data()), Error);
  EXPECT_THROW(b.get_column(-1, x.data()), Error);
  EXPECT_THROW(b.apply_operator(0, 3), Error);
  EXPECT_THROW(b.apply_operator(-1, 0), Error);
  EXPECT_THROW(b.project(0, 1, 3, out), Error);    // col outside
  EXPECT_THROW(b.project(1, 3, 0, out), Error);    // window runs past the end
  EXPECT_THROW(b.project(-1, 2, 2, out), Error);   // window starts before column 0
  EXPECT_THROW(b.subtract(0, 1, coef, -1), Error);
  EXPECT_THROW(b.subtract(2, 2, coef, 0), Error);
  EXPECT_THROW(b.subtract(-1, 2, coef, 2), Error);
  EXPECT_THROW(b.combine(0, 2, coef, 3), Error);
  EXPECT_THROW(b.combine(2, 2, coef, 0), Error);
  EXPECT_THROW(b.combine(-1, 2, coef, 2), Error);
  EXPECT_THROW(b.scale(3, 1.0), Error);
  EXPECT_THROW(b.copy_column(0, 3), Error);
  EXPECT_THROW(b.copy_column(-1, 0), Error);
  // Nothing above may have touched the basis.
  EXPECT_EQ(column(b, 0), (Vec{1, 2, 3, 4}));
  EXPECT_EQ(column(b, 1), (Vec{0, 1, 0, 1}));
  EXPECT_EQ(column(b, 2), (Vec{1, 1, 1, 1}));
}

TEST(HostBackend, SetRandomIsAFunctionOfSeedAndGlobalRow)
{
  constexpr index_t N = 7;
  HostBackend one(N, N, 0, diag_operator(N, 0));
  one.resize_basis(3);
  one.set_random(0, 42);
  one.set_random(1, 42);
  one.set_random(2, 43);
  Vec a(N), a2(N), c(N);
  one.get_column(0, a.data());
  one.get_column(1, a2.data());
  one.get_column(2, c.data());
  EXPECT_EQ(a, a2); // same seed, same entries, bit for bit
  int differ = 0;
  for (index_t i = 0; i < N; ++i) {
    EXPECT_GE(cudalanczos::real_part(a[i]), -1.0);
    EXPECT_LT(cudalanczos::real_part(a[i]), 1.0);
    EXPECT_EQ(a[i], cudalanczos::real_part(a[i])) << "random entries are real in either build";
    EXPECT_EQ(a[i], cudalanczos::random_entry(42, i));
    differ += a[i] != c[i];
  }
  EXPECT_EQ(differ, N) << "another seed gives another vector";
  // Not all equal (a vector of one repeated value would be a useless start vector).
  EXPECT_NE(a[0], a[1]);

  // Two "ranks" holding rows 0..2 and 3..6 of the same global vector reproduce it exactly.
  HostBackend r0(3, N, 0, diag_operator(3, 0)), r1(4, N, 3, diag_operator(4, 3));
  r0.resize_basis(1);
  r1.resize_basis(1);
  r0.set_random(0, 42);
  r1.set_random(0, 42);
  Vec joined(N);
  r0.get_column(0, joined.data());
  r1.get_column(0, joined.data() + 3);
  EXPECT_EQ(joined, a);
}

TEST(HostBackend, TwoRanksThroughASummingReducer)
{
  // A global vector of 7 rows split 3 + 4 over two "ranks"; the reducer of each rank adds in the
  // partial sum of the other (computed first), as MPI_Allreduce would. Results equal the one-rank ones.
  constexpr index_t N = 7;
  HostBackend one(N, N, 0, diag_operator(N, 0));
  one.resize_basis(3);
  one.set_random(0, 5);
  one.apply_operator(0, 1);
  Scalar ref[2];
  one.project(0, 1, 1, ref); // v0.Av0 and |Av0|^2

  std::vector<double> other;
  auto adding = [&other](double *v, int count) {
    for (int i = 0; i < count; ++i) v[i] += other[i];
  };
  HostBackend r0(3, N, 0, diag_operator(3, 0)), r1(4, N, 3, diag_operator(4, 3), adding);
  r0.resize_basis(3);
  r1.resize_basis(3);
  for (HostBackend *r : {&r0, &r1}) {
    r->set_random(0, 5);
    r->apply_operator(0, 1);
  }
  Scalar part0[2];
  r0.project(0, 1, 1, part0); // serial reducer: the rank-0 partial sums
  const double *part0_doubles = reinterpret_cast<const double *>(part0); // what the reducer sums
  other.assign(part0_doubles, part0_doubles + 2 * cudalanczos::kDoublesPerScalar);
  Scalar got[2];
  r1.project(0, 1, 1, got);
  EXPECT_NEAR(std::abs(got[0] - ref[0]), 0.0, 1e-14 * std::abs(ref[0]));
  EXPECT_NEAR(std::abs(got[1] - ref[1]), 0.0, 1e-14 * std::abs(ref[1]));
}

TEST(HostBackend, EveryReturnedScalarGoesThroughTheReducerOnce)
{
  // A reducer that doubles (two identical ranks): a value reduced once comes back x2; never reduced
  // would be x1, reduced twice x4. Also counts calls and the values each call carries.
  int calls = 0, values = 0;
  auto doubling = [&](double *v, int count) {
    ++calls;
    values += count;
    for (int i = 0; i < count; ++i) v[i] *= 2;
  };
  HostBackend b = make(4, doubling);
  fill(b);

  Scalar out[3];
  b.project(0, 2, 2, out); // local 10, 2, 4
  EXPECT_EQ(out[0], 20.0);
  EXPECT_EQ(out[1], 4.0);
  EXPECT_EQ(out[2], 8.0);
  EXPECT_EQ(calls, 1);
  constexpr int d = cudalanczos::kDoublesPerScalar; // a Scalar is reduced as d doubles
  EXPECT_EQ(values, 3 * d); // one reduction carrying all k + 1 values

  Scalar nrm = 0;
  b.project(0, 0, 0, &nrm); // local |v0|^2 = 30
  EXPECT_EQ(nrm, 60.0);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(values, 4 * d);

  const Scalar coef[2] = {1, 2};
  EXPECT_EQ(b.subtract(0, 2, coef, 2), 76.0); // local 38
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(values, 4 * d + 1); // the norm: one double
  EXPECT_EQ(b.subtract(0, 0, nullptr, 1), 4.0); // local |v1|^2 = 2
  EXPECT_EQ(calls, 4);

  // The local vector data is not touched by the reducer: v2 is the local result of the subtraction.
  EXPECT_EQ(column(b, 2), (Vec{0, -3, -2, -5}));

  // Operations that return nothing reduce nothing.
  const Scalar Q[4] = {1, 0, 0, 1};
  b.scale(0, 2.0);
  b.combine(0, 2, coef, 3);
  b.rotate(2, 2, Q, 2);
  b.copy_column(0, 3);
  b.set_random(3, 1);
  b.apply_operator(0, 3);
  Vec x(4);
  b.get_column(0, x.data());
  b.set_column(1, x.data());
  EXPECT_EQ(calls, 4);
}

} // namespace
