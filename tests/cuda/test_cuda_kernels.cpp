// Each custom kernel against plain host loops, on fresh pseudo-random data (a fixed seed per case),
// at sizes that are not multiples of the block or vector width, with odd leading dimensions whose
// padding holds NaN (a kernel reading outside the matrix fails), with outputs poisoned with NaN
// before the launch (an entry left unwritten fails), and at one size past the 60 MB L2 ("Large").
// Tolerances are a small multiple of eps times the natural scale of each entry (sum of |terms|).
// Data are Scalars: in a complex build genuinely complex (test_matrices.hpp), and the references
// conjugate the left factor of every inner product, so a kernel that does not (or swaps the parts)
// fails by O(1), far above any tolerance here.
#include "cuda/csr_scan.hpp"
#include "cuda/device_pattern.hpp"
#include "cuda/kernels.cuh"
#include "cuda_test_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <functional>
#include <string>

namespace cudalanczos::cuda::test {
namespace {

namespace k = kernels;

std::string where(index_t n, index_t m, index_t ld) { return "sizes " + std::to_string(n) + "x" + std::to_string(m) + " ld " + std::to_string(ld); }

// --- dense gemv ------------------------------------------------------------------------------------------

/// rows x cols column-major with leading dimension ld; the padding rows are NaN.
std::vector<Scalar> random_matrix(index_t rows, index_t cols, index_t ld, std::uint64_t seed)
{
  std::vector<Scalar> A(static_cast<std::size_t>(ld * cols), nan);
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) A[i + j * ld] = random_scalar(seed, i + j * rows);
  return A;
}

void expect_gemv(index_t rows, index_t cols, index_t ld, std::uint64_t seed, cudaStream_t s, k::GemvTuning tuning = {},
                 index_t offset = 0)
{
  SCOPED_TRACE(where(rows, cols, ld) + " offset " + std::to_string(offset) + " row_groups " +
               std::to_string(tuning.row_groups));
  std::vector<Scalar> A = random_matrix(rows, cols, ld, seed);
  // offset 1: A no longer 16-byte aligned (real build; a complex entry is 16 bytes, so it stays aligned)
  A.insert(A.begin(), static_cast<std::size_t>(offset), nan);
  const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(cols), seed + 1);
  std::vector<Scalar> ref(static_cast<std::size_t>(rows), 0.0);
  std::vector<double> scale(static_cast<std::size_t>(rows), 0.0);
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i) {
      const Scalar a = A[offset + i + j * ld];
      ref[i] += a * x[j];
      scale[i] += std::abs(a * x[j]);
    }
  DeviceBuffer<Scalar> dA = upload(A), dx = upload(x), dy(static_cast<std::size_t>(rows));
  DeviceBuffer<unsigned char> ws(k::dense_gemv_workspace_bytes(rows, cols));
  if (ws.bytes()) CUDALANCZOS_CHECK(cudaMemset(ws.data(), 0, ws.bytes()));
  poison(dy.data(), dy.size()); // also waits for the memset above
  k::dense_gemv(rows, cols, dA.data() + offset, ld, dx.data(), dy.data(), ws.data(), ws.bytes(), s, tuning);
  const std::vector<Scalar> y = download(dy.data(), dy.size());
  for (index_t i = 0; i < rows; ++i)
    ASSERT_LE(std::abs(y[i] - ref[i]), ulps * (cols + 1) * eps * scale[i]) << "row " << i << " y " << y[i] << " ref " << ref[i];

  // Same launch again on the same workspace: the split counters must have been reset, and the fixed
  // summation order gives the same bits.
  k::dense_gemv(rows, cols, dA.data() + offset, ld, dx.data(), dy.data(), ws.data(), ws.bytes(), s, tuning);
  const std::vector<Scalar> again = download(dy.data(), dy.size());
  ASSERT_EQ(0, std::memcmp(y.data(), again.data(), y.size() * sizeof(Scalar))) << "not reproducible";
}

class DenseGemv : public CudaTest {};

TEST_F(DenseGemv, DenseGemvIsEquivalentToRef)
{
  std::uint64_t seed = 100;
  for (index_t rows : odd_sizes())
    for (index_t cols : odd_sizes()) {
      if (rows == 4097 && cols == 4097) continue; // the large case below covers it
      for (index_t pad : {0, 1, 2}) {               // ld parity varies: 16-byte and 8-byte load paths
        const index_t ld = std::max<index_t>(1, rows + pad);
        expect_gemv(rows, cols, ld, seed += 7, stream());
        if (HasFatalFailure()) return;
      }
    }
}

TEST_F(DenseGemv, DenseGemvTuningsAreEquivalentToRef)
{
  std::uint64_t seed = 900;
  for (int rg : {1, 2, 4})
    for (int bps : {0, 1, 3}) {
      const k::GemvTuning t{rg, bps};
      expect_gemv(1000, 1000, 1000, seed += 3, stream(), t);
      expect_gemv(4097, 33, 4098, seed += 3, stream(), t);
      expect_gemv(33, 4097, 34, seed += 3, stream(), t);
      expect_gemv(300, 2000, 300, seed += 3, stream(), t, 1); // misaligned A: 8-byte loads
      if (HasFatalFailure()) return;
    }
}

TEST_F(DenseGemv, LargeDenseGemvIsEquivalentToRef)
{
  // 3001 x 3000 doubles = 72 MB: past the L2, and neither dimension a multiple of anything.
  expect_gemv(3001, 3000, 3002, 4242, stream());
  expect_gemv(4097, 4097, 4097, 4343, stream());
}

// --- CSR SpMV ----------------------------------------------------------------------------------------------

void expect_spmv(const Csr &A, std::uint64_t seed, cudaStream_t s, int lanes = 0)
{
  SCOPED_TRACE("csr " + std::to_string(A.rows) + "x" + std::to_string(A.cols) + " nnz " + std::to_string(A.colind.size()) +
               " lanes " + std::to_string(lanes));
  const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(A.cols), seed);
  DeviceBuffer<int> rp = upload(A.rowptr), ci = upload(A.colind);
  DeviceBuffer<Scalar> va = upload(A.values), dx = upload(x), dy(static_cast<std::size_t>(A.rows));
  poison(dy.data(), dy.size());
  k::csr_spmv(A.rows, static_cast<index_t>(A.colind.size()), rp.data(), ci.data(), va.data(), dx.data(), dy.data(), s, lanes);
  const std::vector<Scalar> y = download(dy.data(), dy.size());
  for (index_t r = 0; r < A.rows; ++r) {
    Scalar ref = 0;
    double scale = 0;
    for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) {
      ref += A.values[j] * x[A.colind[j]];
      scale += std::abs(A.values[j] * x[A.colind[j]]);
    }
    const double len = A.rowptr[r + 1] - A.rowptr[r];
    ASSERT_LE(std::abs(y[r] - ref), ulps * (len + 1) * eps * scale) << "row " << r << " y " << y[r] << " ref " << ref;
  }
}

class CsrSpmv : public CudaTest {};

TEST_F(CsrSpmv, CsrSpmvIsEquivalentToRef)
{
  std::uint64_t seed = 2000;
  // Mean row lengths that select each lane count: 1, 2, 4, 8, 16, 32 lanes per row.
  for (double mean : {0.5, 1.7, 3.0, 6.0, 12.0, 30.0, 80.0})
    for (index_t rows : odd_sizes()) {
      seed += 5;
      expect_spmv(random_csr(rows, rows, mean, seed), seed + 1, stream());
      seed += 5;
      expect_spmv(random_csr(rows, rows / 2 + 3, mean, seed), seed + 1, stream()); // rectangular
      if (HasFatalFailure()) return;
    }
  expect_spmv(laplacian(33), 77, stream());
  expect_spmv(magnetic_laplacian(33, 0.3), 79, stream()); // complex Hermitian (real symmetric, hops -cos(0.3 j), in the real build)
  // A lane count given, as the default flavor gives one for short regular rows: every count on rows far
  // shorter and far longer than it.
  for (int lanes : {1, 2, 4, 8, 16, 32}) {
    expect_spmv(magnetic_laplacian(31, 0.3), 81, stream(), lanes);
    expect_spmv(random_csr(1001, 1001, 12.0, seed + lanes), 83, stream(), lanes);
    if (HasFatalFailure()) return;
  }
  for (int lanes : {-1, 3, 64})
    EXPECT_THROW(k::csr_spmv(1, 0, nullptr, nullptr, nullptr, nullptr, nullptr, stream(), lanes), cudalanczos::Error)
        << lanes << " lanes";
}

TEST_F(CsrSpmv, LongestRowIsEquivalentToRef)
{
  // Random rows (some empty, every 97th long), no rows, only empty rows, and one row.
  std::uint64_t seed = 2600;
  DeviceBuffer<int> longest(1);
  for (index_t rows : odd_sizes())
    for (double mean : {0.0, 0.5, 5.0, 40.0}) {
      const Csr A = random_csr(rows, rows, mean, seed += 3);
      SCOPED_TRACE(std::to_string(rows) + " rows, mean " + std::to_string(mean));
      index_t ref = 0;
      for (index_t r = 0; r < A.rows; ++r) ref = std::max<index_t>(ref, A.rowptr[r + 1] - A.rowptr[r]);
      DeviceBuffer<int> rp = upload(A.rowptr);
      poison(longest.data(), 1);
      k::longest_row(A.rows, rp.data(), longest.data(), stream());
      ASSERT_EQ(download(longest.data(), 1)[0], ref);
    }
  EXPECT_THROW(k::longest_row(-1, nullptr, longest.data(), stream()), cudalanczos::Error);
}

TEST_F(CsrSpmv, NarrowIndicesIsEquivalentToRef)
{
  // 64-bit indices as ints, values up to INT_MAX (what a row pointer or a column index may hold), at odd
  // sizes; entries past n are left alone.
  std::uint64_t seed = 2700;
  for (index_t n : odd_sizes()) {
    SCOPED_TRACE(std::to_string(n) + " indices");
    std::vector<std::int64_t> in(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i)
      in[static_cast<std::size_t>(i)] = i % 5 == 4 ? std::numeric_limits<int>::max() - i : static_cast<std::int64_t>(random_entry(seed, i) * 1e9 + 1e9);
    seed += 11;
    DeviceBuffer<std::int64_t> din = upload(in);
    DeviceBuffer<int> dout(static_cast<std::size_t>(n) + 1);
    poison(dout.data(), dout.size());
    k::narrow_indices(n, din.data(), dout.data(), stream());
    const std::vector<int> out = download(dout.data(), dout.size());
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(out[static_cast<std::size_t>(i)], in[static_cast<std::size_t>(i)]) << "index " << i;
    EXPECT_EQ(out.back(), -1) << "written past n";
  }
  EXPECT_THROW(k::narrow_indices(-1, nullptr, nullptr, stream()), cudalanczos::Error);
}

TEST_F(CsrSpmv, LargeCsrSpmvIsEquivalentToRef)
{
  expect_spmv(laplacian(2001), 78, stream()); // 4M rows, 20M entries: 280 MB
}

void expect_pattern_spmv(const Csr &A, Scalar c, const std::vector<Scalar> &d, std::uint64_t seed, cudaStream_t s)
{
  // A's pattern (its values ignored; no diagonal entries) with c off the diagonal and d on it (one value
  // for all rows when d has one entry).
  SCOPED_TRACE("pattern " + std::to_string(A.rows) + " entries " + std::to_string(A.colind.size()) + " diagonal " +
               (d.size() == 1 ? "one value" : "vector"));
  const std::vector<Scalar> x = random_vector(static_cast<std::size_t>(A.rows), seed);
  DeviceBuffer<int> rp = upload(A.rowptr), ci = upload(A.colind);
  DeviceBuffer<Scalar> dd = upload(d), dx = upload(x), dy(static_cast<std::size_t>(A.rows));
  poison(dy.data(), dy.size());
  const bool vec = d.size() > 1;
  k::pattern_spmv(A.rows, static_cast<index_t>(A.colind.size()), rp.data(), ci.data(), c, vec ? Scalar(0.0) : d[0],
                  vec ? dd.data() : nullptr, dx.data(), dy.data(), s);
  const std::vector<Scalar> y = download(dy.data(), dy.size());
  for (index_t r = 0; r < A.rows; ++r) {
    const Scalar dr = vec ? d[r] : d[0];
    Scalar ref = dr * x[r];
    double scale = std::abs(dr * x[r]);
    for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) {
      ref += c * x[A.colind[j]];
      scale += std::abs(c * x[A.colind[j]]);
    }
    const double len = A.rowptr[r + 1] - A.rowptr[r];
    ASSERT_LE(std::abs(y[r] - ref), ulps * (len + 2) * eps * scale) << "row " << r << " y " << y[r] << " ref " << ref;
  }
}

TEST_F(CsrSpmv, PatternSpmvIsEquivalentToRef)
{
  std::uint64_t seed = 2500;
  for (double mean : {0.5, 1.7, 3.0, 6.0, 12.0, 30.0, 80.0}) // 1 .. 32 lanes per row
    for (index_t rows : odd_sizes()) {
      const Csr A = random_csr(rows, rows, mean, seed += 5);
      // No entry on the diagonal: drop the ones the draw put there.
      Csr P;
      P.rows = P.cols = rows;
      for (index_t r = 0; r < rows; ++r) {
        for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j)
          if (A.colind[j] != r) P.colind.push_back(A.colind[j]);
        P.rowptr.push_back(static_cast<int>(P.colind.size()));
      }
      expect_pattern_spmv(P, -1.25, {3.5}, seed + 1, stream()); // rows of 5 mean + 40 run the 4-way unrolled loop
      expect_pattern_spmv(P, make_scalar(0.5, -0.75), {make_scalar(1.5, 0.25)}, seed + 4, stream()); // complex c, d
      expect_pattern_spmv(P, 0.5, random_vector(static_cast<std::size_t>(std::max<index_t>(rows, 2)), seed + 2), seed + 3,
                          stream());
      if (HasFatalFailure()) return;
    }
  for (int lanes : {-1, 3, 64})
    EXPECT_THROW(k::pattern_spmv(1, 0, nullptr, nullptr, 1.0, 1.0, nullptr, nullptr, nullptr, stream(), lanes),
                 cudalanczos::Error)
        << lanes << " lanes";
}

TEST_F(CsrSpmv, PatternLanesFollowTheMeasuredRule)
{
  EXPECT_EQ(k::pattern_lanes(1000000, 3996000, 4), 1);      // 2-D Laplacian: regular, 8 per lane
  EXPECT_EQ(k::pattern_lanes(1000000, 5940000, 6), 1);      // 3-D Laplacian: also best at 1 (the filter step's bench)
  EXPECT_EQ(k::pattern_lanes(1000000, 26000000, 26), 4);    // 27-point stencil: 26 / 8 rounds to 4
  EXPECT_EQ(k::pattern_lanes(2000000, 31988866, 4103), 8);  // Chung-Lu: irregular, 2 per lane
  EXPECT_EQ(k::pattern_lanes(1000, 1000000, 1000), 32);     // dense rows: a warp, no more
  EXPECT_EQ(k::pattern_lanes(1000, 10, 5), 1);              // nearly empty
  EXPECT_EQ(k::pattern_lanes(0, 0, 0), 1);
}

TEST_F(CsrSpmv, CsrBlockLanesFollowTheMeasuredRule)
{
  EXPECT_EQ(k::csr_block_lanes(1000000, 20523592), 8); // fem3d, 20.5 a row: 4 and 8 level, 32 twice as slow
  EXPECT_EQ(k::csr_block_lanes(1000000, 15999888), 8); // randsym, 16 a row: 8 and 16 level
  EXPECT_EQ(k::csr_block_lanes(1000000, 7000000), 4);  // andersonrh, 7 a row: 1 to 4 level, 8 slower
  EXPECT_EQ(k::csr_block_lanes(1000, 1000000), 32);    // dense rows: a warp, no more
  EXPECT_EQ(k::csr_block_lanes(1000, 10), 1);          // nearly empty
  EXPECT_EQ(k::csr_block_lanes(0, 0), 1);
}

// --- block products (csr_spmm, pattern_spmm) ----------------------------------------------------------------

/// The block product of b columns (X with ldx = cols + 3, NaN padding; Y with ldy = rows + 2, poisoned)
/// against the single-vector kernel on each column: the same bits (the same summation order per column;
/// the single-vector kernels are checked against host loops above), and Y's padding rows untouched.
void expect_block_is_columns(index_t rows, index_t cols, int b, std::uint64_t seed, cudaStream_t s,
                             const std::function<void(const Scalar *, index_t, Scalar *, index_t, Scalar *)> &block,
                             const std::function<void(const Scalar *, Scalar *)> &single)
{
  SCOPED_TRACE("b " + std::to_string(b));
  const index_t ldx = cols + 3, ldy = rows + 2;
  const std::vector<Scalar> X = random_matrix(cols, b, ldx, seed);
  DeviceBuffer<Scalar> dX = upload(X), dY(static_cast<std::size_t>(ldy * b)), dy(static_cast<std::size_t>(std::max<index_t>(rows, 1)));
  DeviceBuffer<Scalar> scratch(static_cast<std::size_t>(std::max<index_t>(cols, 1) * std::max(b, 1)));
  poison(dY.data(), dY.size());
  block(dX.data(), ldx, dY.data(), ldy, scratch.data());
  const std::vector<Scalar> Y = download(dY.data(), dY.size());
  for (int c = 0; c < b; ++c) {
    poison(dy.data(), dy.size());
    single(dX.data() + c * ldx, dy.data());
    const std::vector<Scalar> y = download(dy.data(), dy.size());
    for (index_t i = 0; i < rows; ++i)
      ASSERT_EQ(0, std::memcmp(&Y[i + c * ldy], &y[i], sizeof(Scalar)))
          << "column " << c << " row " << i << ": " << Y[i + c * ldy] << " vs " << y[i];
    for (index_t i = rows; i < ldy; ++i) ASSERT_TRUE(is_nan(Y[i + c * ldy])) << "padding row " << i << " written";
  }
}

TEST_F(CsrSpmv, CsrSpmmIsEquivalentToRef)
{
  std::uint64_t seed = 2700;
  for (double mean : {0.5, 3.0, 12.0, 80.0}) // 1, 4, 16 and 32 lanes per row
    for (index_t rows : odd_sizes())
      for (const index_t cols : {rows, rows / 2 + 3}) { // square and rectangular
        const Csr A = random_csr(rows, cols, mean, seed += 5);
        SCOPED_TRACE("csr " + std::to_string(rows) + "x" + std::to_string(cols) + " mean " + std::to_string(mean));
        DeviceBuffer<int> rp = upload(A.rowptr), ci = upload(A.colind);
        DeviceBuffer<Scalar> va = upload(A.values);
        const index_t nnz = static_cast<index_t>(A.colind.size());
        for (int b : {1, 2, 3, 4, 7, 8, 13}) // every chunk: 8, 4, 2, 1 and their sums
          expect_block_is_columns(
              rows, cols, b, seed + b, stream(),
              [&](const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *scratch) {
                k::csr_spmm(rows, cols, nnz, rp.data(), ci.data(), va.data(), b, X, ldx, Y, ldy, scratch, stream());
              },
              [&](const Scalar *x, Scalar *y) { k::csr_spmv(rows, nnz, rp.data(), ci.data(), va.data(), x, y, stream()); });
        if (HasFatalFailure()) return;
      }
  EXPECT_THROW(k::csr_spmm(3, 3, 0, nullptr, nullptr, nullptr, 2, nullptr, 2, nullptr, 3, nullptr, stream()), cudalanczos::Error)
      << "ldx < cols";
  EXPECT_THROW(k::csr_spmm(3, 3, 0, nullptr, nullptr, nullptr, -1, nullptr, 3, nullptr, 3, nullptr, stream()), cudalanczos::Error)
      << "negative b";
  EXPECT_THROW(k::csr_spmm(3, 3, 0, nullptr, nullptr, nullptr, 2, nullptr, 3, nullptr, 3, nullptr, stream(), 6), cudalanczos::Error)
      << "6 lanes";
}

/// The pattern of a random square CSR matrix on the device (an entry on the diagonal is allowed here),
/// a random diagonal vector, and the off-diagonal value c and diagonal value d0 the pattern tests take.
struct RandomPattern {
  RandomPattern(index_t rows, double mean, std::uint64_t seed)
      : A(random_csr(rows, rows, mean, seed)), rp(upload(A.rowptr)), ci(upload(A.colind)),
        dd(upload(random_vector(static_cast<std::size_t>(std::max<index_t>(rows, 1)), seed + 1))),
        entries(static_cast<index_t>(A.colind.size()))
  {
  }
  Csr A;
  DeviceBuffer<int> rp, ci;
  DeviceBuffer<Scalar> dd;
  index_t entries;
  Scalar c = make_scalar(-0.75, 0.5), d0 = make_scalar(2.5, -1.0);
  /// Both diagonals: d0 for every row (null), then the vector.
  std::vector<const Scalar *> diagonals() const { return {nullptr, dd.data()}; }
};

TEST_F(CsrSpmv, PatternSpmmIsEquivalentToRef)
{
  std::uint64_t seed = 2900;
  for (double mean : {1.7, 12.0})
    for (index_t rows : odd_sizes()) {
      const RandomPattern P(rows, mean, seed += 5);
      const int *rp = P.rp.data(), *ci = P.ci.data();
      const index_t entries = P.entries;
      const Scalar c = P.c, d0 = P.d0;
      for (const Scalar *dvec : P.diagonals())
        for (int lanes : {1, 2, 4, 8, 16, 32})
          for (int b : {3, 8, 13}) {
            SCOPED_TRACE("pattern " + std::to_string(rows) + " mean " + std::to_string(mean) + " lanes " +
                         std::to_string(lanes) + (dvec ? " diagonal vector" : " diagonal 2.5"));
            expect_block_is_columns(
                rows, rows, b, seed + b, stream(),
                [&](const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *scratch) {
                  k::pattern_spmm(rows, entries, rp, ci, c, d0, dvec, b, X, ldx, Y, ldy, scratch, stream(), lanes);
                },
                [&](const Scalar *x, Scalar *y) {
                  k::pattern_spmv(rows, entries, rp, ci, c, d0, dvec, x, y, stream(), lanes);
                });
            if (HasFatalFailure()) return;
          }
    }
  EXPECT_THROW(k::pattern_spmm(3, 0, nullptr, nullptr, 1, 1, nullptr, 2, nullptr, 3, nullptr, 2, nullptr, stream()),
               cudalanczos::Error)
      << "ldy < rows";
}

// --- multi-dot, subtract, combine ---------------------------------------------------------------------------

/// n x k with column stride ldv (padding NaN), plus w.
struct Block {
  index_t n, ldv;
  int k;
  std::vector<Scalar> V, w;
};

Block random_block(index_t n, int k, index_t ldv, std::uint64_t seed)
{
  Block b{n, ldv, k, std::vector<Scalar>(static_cast<std::size_t>(std::max<index_t>(ldv * k, 0)), nan),
          random_vector(static_cast<std::size_t>(n), seed)};
  for (int j = 0; j < k; ++j)
    for (index_t i = 0; i < n; ++i) b.V[i + j * ldv] = random_scalar(seed + 1 + j, i);
  return b;
}

/// A reduction workspace for up to k columns, zeroed as kernels.cuh asks (its finish counters).
DeviceBuffer<double> reduction_workspace(int k)
{
  DeviceBuffer<double> ws(k::reduction_workspace_doubles(k));
  CUDALANCZOS_CHECK(cudaMemset(ws.data(), 0, ws.bytes()));
  return ws;
}

void expect_multi_dot(const Block &b, cudaStream_t s, bool w_inside_V = false)
{
  SCOPED_TRACE(where(b.n, b.k, b.ldv) + (w_inside_V ? " w = V[:, k-1]" : ""));
  DeviceBuffer<Scalar> dV = upload(b.V), dw = upload(b.w), out(static_cast<std::size_t>(b.k) + 1);
  DeviceBuffer<double> ws = reduction_workspace(b.k);
  const Scalar *w = w_inside_V ? dV.data() + (b.k - 1) * b.ldv : dw.data();
  std::vector<Scalar> wh(b.w);
  if (w_inside_V) std::copy(b.V.begin() + (b.k - 1) * b.ldv, b.V.begin() + (b.k - 1) * b.ldv + b.n, wh.begin());
  poison(out.data(), out.size());
  k::multi_dot(b.n, b.k, dV.data(), b.ldv, w, out.data(), ws.data(), s);
  const std::vector<Scalar> got = download(out.data(), out.size());
  for (int j = 0; j <= b.k; ++j) {
    Scalar ref = 0;
    double scale = 0;
    for (index_t i = 0; i < b.n; ++i) {
      const Scalar v = j < b.k ? b.V[i + j * b.ldv] : wh[i];
      ref += conj_of(v) * wh[i]; // V^H w: the left factor conjugated
      scale += std::abs(v * wh[i]);
    }
    ASSERT_LE(std::abs(got[j] - ref), ulps * (b.n + 1) * eps * scale) << "output " << j << " got " << got[j] << " ref " << ref;
  }
  ASSERT_EQ(imag_part(got[b.k]), 0.0) << "w^H w must be real, not carry rounding in its imaginary part";
  // Again on the same workspace: the finish counters were reset, and the fixed order gives the same bits.
  k::multi_dot(b.n, b.k, dV.data(), b.ldv, w, out.data(), ws.data(), s);
  const std::vector<Scalar> again = download(out.data(), out.size());
  ASSERT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(Scalar))) << "not reproducible";
}

class VectorKernels : public CudaTest {};

TEST_F(VectorKernels, MultiDotIsEquivalentToRef)
{
  // k across the column chunks' edges: 2 columns a chunk up to k = 2, then 4 (complex) or 8 (real).
  std::uint64_t seed = 3000;
  for (index_t n : odd_sizes())
    for (int kk : {0, 1, 2, 3, 4, 5, 7, 8, 9, 17})
      for (index_t pad : {0, 1, 2}) {
        const Block b = random_block(n, kk, n + pad, seed += 31);
        expect_multi_dot(b, stream());
        if (kk > 0) expect_multi_dot(b, stream(), true); // project's "the columns may include col"
        if (HasFatalFailure()) return;
      }
}

TEST_F(VectorKernels, MultiDotConjugatesTheLeftFactor)
{
  // A case small enough to do by hand: v = (i, 1), w = (1, i) (complex build): v^H w = -i + i = 0 exactly,
  // where the unconjugated sum v^T w would be 2i; w^H w = 2 with imaginary part 0, and |v|^2 = 2. In the
  // real build i is 0 (make_scalar keeps the real part): v = (0, 1), w = (1, 0), the same expected values
  // but for the norms, 1 and 1.
  const Scalar i = make_scalar(0.0, 1.0);
  const std::vector<Scalar> v{i, 1.0}, w{1.0, i}, vv{i, 1.0, i, 1.0}; // vv: the column v twice, ldv 2
  DeviceBuffer<Scalar> dV = upload(vv), dw = upload(w), out(3);
  DeviceBuffer<double> ws = reduction_workspace(2), norm(1);
  poison(out.data(), out.size());
  k::multi_dot(2, 2, dV.data(), 2, dw.data(), out.data(), ws.data(), stream());
  const std::vector<Scalar> got = download(out.data(), out.size());
  const double two = kComplexScalars ? 2.0 : 1.0;
  EXPECT_EQ(got[0], Scalar(0.0)) << "v^H w: the left factor must be conjugated";
  EXPECT_EQ(got[1], Scalar(0.0));
  EXPECT_EQ(got[2], Scalar(two)) << "w^H w: real, imaginary part exactly 0";
  // subtract_norm2 with coefficient 0 leaves v and returns |v|^2, a double
  const std::vector<Scalar> zero{0.0};
  DeviceBuffer<Scalar> dc = upload(zero), dv = upload(v);
  k::subtract_norm2(2, 1, dw.data(), 2, dc.data(), dv.data(), norm.data(), ws.data(), stream());
  EXPECT_EQ(download(norm.data(), 1)[0], two);
  EXPECT_EQ(download(dv.data(), 2), v);
}

TEST_F(VectorKernels, LargeMultiDotIsEquivalentToRef)
{
  expect_multi_dot(random_block(index_t(1) << 24, 3, (index_t(1) << 24) + 1, 3500), stream()); // 4 x 128 MB
}

// --- block multi-dot and block subtract (a block step's Gram-Schmidt pass) ----------------------------------

/// block_multi_dot of the block W = columns k..k+b-1 of `b` against its first k columns, checked entry by
/// entry against host loops, and run twice on the workspace for the same bits. `ws_doubles` 0: the
/// workspace block_dot_workspace_doubles asks for; else a smaller one (fewer blocks).
void expect_block_dot(const Block &blk, int k, int b, cudaStream_t s, std::size_t ws_doubles = 0)
{
  SCOPED_TRACE(where(blk.n, k, blk.ldv) + " block of " + std::to_string(b) + (ws_doubles ? " small workspace" : ""));
  const int ld = k + b;
  const std::size_t wsd = ws_doubles ? ws_doubles : k::block_dot_workspace_doubles(k, b);
  DeviceBuffer<Scalar> dV = upload(blk.V), out(static_cast<std::size_t>(ld) * b);
  DeviceBuffer<double> ws(wsd);
  CUDALANCZOS_CHECK(cudaMemset(ws.data(), 0, ws.bytes()));
  poison(out.data(), out.size());
  k::block_multi_dot(blk.n, k, dV.data(), blk.ldv, b, dV.data() + k * blk.ldv, blk.ldv, out.data(), ws.data(), wsd, s);
  const std::vector<Scalar> got = download(out.data(), out.size());
  for (int j = 0; j < b; ++j)
    for (int i = 0; i < ld; ++i) {
      Scalar ref = 0;
      double scale = 0;
      for (index_t r = 0; r < blk.n; ++r) {
        const Scalar v = blk.V[r + i * blk.ldv], w = blk.V[r + (k + j) * blk.ldv];
        ref += conj_of(v) * w;
        scale += std::abs(v * w);
      }
      ASSERT_LE(std::abs(got[i + j * ld] - ref), ulps * (blk.n + 1) * eps * scale) << "entry (" << i << ", " << j << ")";
    }
  k::block_multi_dot(blk.n, k, dV.data(), blk.ldv, b, dV.data() + k * blk.ldv, blk.ldv, out.data(), ws.data(), wsd, s);
  const std::vector<Scalar> again = download(out.data(), out.size());
  ASSERT_EQ(0, std::memcmp(got.data(), again.data(), got.size() * sizeof(Scalar))) << "not reproducible";
}

TEST_F(VectorKernels, BlockMultiDotIsEquivalentToRef)
{
  // k across the column chunks' edges (8 columns of V a chunk for b <= 2, 4 for b = 3, 4), k = 0 (the
  // Gram matrix alone), odd strides (no 16-byte loads), and workspaces too small for a full wave.
  std::uint64_t seed = 3700;
  for (index_t n : odd_sizes())
    for (int b = 1; b <= k::kBlockDotColumns; ++b)
      for (int kk : {0, 1, 3, 4, 5, 8, 9, 17})
        for (index_t pad : {0, 1}) {
          const Block blk = random_block(n, kk + b, n + pad, seed += 13);
          expect_block_dot(blk, kk, b, stream());
          if (HasFatalFailure()) return;
        }
  const Block blk = random_block(4097, 9 + 2, 4097, 3790);
  expect_block_dot(blk, 9, 2, stream(), k::reduction_workspace_doubles(0) + 7 * 22);
}

TEST_F(VectorKernels, BlockMultiDotIsMultiDotPerColumnInTheWindow)
{
  // Where both take one chunk of columns (a block step's window pass), each entry is multi_dot's over
  // [V W] for that column of W, bit for bit: the backend's block steps keep the bits they had when that
  // pass went column by column.
  std::uint64_t seed = 3800;
  for (index_t n : odd_sizes())
    for (int b = 1; b <= k::kBlockDotColumns; ++b)
      for (int kk = 0; kk <= 4 && kk + b <= 8; ++kk) {
        SCOPED_TRACE(where(n, kk, n) + " block of " + std::to_string(b));
        const Block blk = random_block(n, kk + b, n, seed += 7);
        const int ld = kk + b;
        DeviceBuffer<Scalar> dV = upload(blk.V), block(static_cast<std::size_t>(ld) * b), column(static_cast<std::size_t>(ld) + 1);
        DeviceBuffer<double> ws(k::block_dot_workspace_doubles(kk, b)), ws1 = reduction_workspace(ld);
        CUDALANCZOS_CHECK(cudaMemset(ws.data(), 0, ws.bytes()));
        k::block_multi_dot(n, kk, dV.data(), n, b, dV.data() + kk * n, n, block.data(), ws.data(), ws.size(), stream());
        const std::vector<Scalar> got = download(block.data(), block.size());
        for (int j = 0; j < b; ++j) {
          k::multi_dot(n, ld, dV.data(), n, dV.data() + (kk + j) * n, column.data(), ws1.data(), stream());
          const std::vector<Scalar> ref = download(column.data(), static_cast<std::size_t>(ld));
          ASSERT_EQ(0, std::memcmp(got.data() + j * ld, ref.data(), ref.size() * sizeof(Scalar))) << "column " << j;
        }
      }
}

TEST_F(VectorKernels, BlockSubtractIsSubtractNorm2PerColumn)
{
  // Each column of W bit for bit what subtract_norm2 leaves (itself checked against host loops below),
  // the coefficients k x b with leading dimension k or k + 1; V and W columns of one basis, as in the backend.
  std::uint64_t seed = 3900;
  for (index_t n : odd_sizes())
    for (int b = 1; b <= k::kBlockDotColumns; ++b)
      for (int kk : {0, 1, 3, 4, 5, 9})
        for (index_t pad : {0, 1}) {
          SCOPED_TRACE(where(n, kk, n + pad) + " block of " + std::to_string(b));
          const index_t ldv = n + pad;
          const Block blk = random_block(n, kk + b, ldv, seed += 11);
          const int ldc = kk + static_cast<int>(pad); // C's leading dimension past k too (a window's, below its Gram rows)
          const std::vector<Scalar> C = random_vector(static_cast<std::size_t>(ldc) * b + 1, seed + 5);
          DeviceBuffer<Scalar> dV = upload(blk.V), dV1 = upload(blk.V), dC = upload(C);
          DeviceBuffer<double> norm(1), ws = reduction_workspace(kk);
          k::block_subtract(n, kk, dV.data(), ldv, dC.data(), ldc, b, dV.data() + kk * ldv, ldv, stream());
          for (int j = 0; j < b; ++j)
            k::subtract_norm2(n, kk, dV1.data(), ldv, dC.data() + j * ldc, dV1.data() + (kk + j) * ldv, norm.data(), ws.data(),
                              stream());
          const std::vector<Scalar> got = download(dV.data(), blk.V.size()), ref = download(dV1.data(), blk.V.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            if (std::isnan(real_part(ref[i])) && std::isnan(real_part(got[i]))) continue; // the padding stays NaN
            ASSERT_EQ(0, std::memcmp(&got[i], &ref[i], sizeof(Scalar))) << "entry " << i;
          }
        }
}

TEST_F(VectorKernels, BlockKernelsRefuseBadArguments)
{
  DeviceBuffer<double> ws(k::block_dot_workspace_doubles(2, 2));
  Scalar *none = nullptr;
  EXPECT_THROW(k::block_multi_dot(10, 2, none, 10, 0, none, 10, none, ws.data(), ws.size(), stream()), cudalanczos::Error);
  EXPECT_THROW(k::block_multi_dot(10, 2, none, 10, k::kBlockDotColumns + 1, none, 10, none, ws.data(), ws.size(), stream()),
               cudalanczos::Error);
  EXPECT_THROW(k::block_multi_dot(10, 2, none, 10, 2, none, 9, none, ws.data(), ws.size(), stream()), cudalanczos::Error)
      << "ldw < n";
  EXPECT_THROW(k::block_multi_dot(10, 2, none, 10, 2, none, 10, none, ws.data(), k::reduction_workspace_doubles(0) / 2, stream()),
               cudalanczos::Error)
      << "no room for the partials";
  EXPECT_THROW(k::block_subtract(10, 2, none, 9, none, 2, 2, none, 10, stream()), cudalanczos::Error) << "ldv < n";
  EXPECT_THROW(k::block_subtract(10, 2, none, 10, none, 2, 5, none, 10, stream()), cudalanczos::Error);
  EXPECT_THROW(k::block_subtract(10, 2, none, 10, none, 1, 2, none, 10, stream()), cudalanczos::Error) << "ldc < k";
}

void expect_subtract(const Block &b, const std::vector<Scalar> &coef, cudaStream_t s, bool exact_zero = false)
{
  SCOPED_TRACE(where(b.n, b.k, b.ldv));
  DeviceBuffer<Scalar> dV = upload(b.V), dw = upload(b.w), dc = upload(coef);
  DeviceBuffer<double> out(1); // the squared norm: a double in either build
  DeviceBuffer<double> ws = reduction_workspace(b.k);
  poison(out.data(), 1);
  k::subtract_norm2(b.n, b.k, dV.data(), b.ldv, dc.data(), dw.data(), out.data(), ws.data(), s);
  const std::vector<Scalar> w = download(dw.data(), dw.size());
  const std::vector<double> nrm2 = download(out.data(), 1);
  double ref2 = 0, scale2 = 0;
  for (index_t i = 0; i < b.n; ++i) {
    Scalar ref = b.w[i];
    double scale = std::abs(b.w[i]);
    for (int j = 0; j < b.k; ++j) {
      ref -= coef[j] * b.V[i + j * b.ldv];
      scale += std::abs(coef[j] * b.V[i + j * b.ldv]);
    }
    if (exact_zero) {
      ASSERT_EQ(w[i], Scalar(0.0)) << "entry " << i;
    }
    ASSERT_LE(std::abs(w[i] - ref), ulps * (b.k + 1) * eps * scale) << "entry " << i << " w " << w[i] << " ref " << ref;
    ref2 += abs2(ref);
    scale2 += scale * scale;
  }
  if (exact_zero) {
    ASSERT_EQ(nrm2[0], 0.0);
  }
  ASSERT_LE(std::abs(nrm2[0] - ref2), 2 * ulps * (b.n + b.k + 2) * eps * scale2) << "got " << nrm2[0] << " ref " << ref2;
}

TEST_F(VectorKernels, SubtractNorm2IsEquivalentToRef)
{
  std::uint64_t seed = 4000;
  for (index_t n : odd_sizes())
    for (int kk : {0, 1, 2, 5, 8, 9})
      for (index_t pad : {0, 1, 2}) {
        const Block b = random_block(n, kk, n + pad, seed += 17);
        expect_subtract(b, random_vector(static_cast<std::size_t>(kk), seed + 99), stream());
        if (HasFatalFailure()) return;
      }
}

TEST_F(VectorKernels, PlantedZeroSubtractIsEquivalentToRef)
{
  // beta = 0 planted: w is exactly V c with small integers everywhere, so w - V c is exactly zero in
  // any order of operations; the kernel must return a zero vector and a zero norm, not a rounding residue.
  for (index_t n : odd_sizes())
    for (int kk : {1, 2, 5}) {
      Block b = random_block(n, kk, n + 1, 4500 + n + kk);
      // complex integers in a complex build: their products and sums are exact too
      const auto round = [](Scalar x, double f) { return make_scalar(std::round(f * real_part(x)), std::round(f * imag_part(x))); };
      std::vector<Scalar> c(static_cast<std::size_t>(kk));
      for (int j = 0; j < kk; ++j) c[j] = round(random_scalar(77, j), 3);
      for (index_t i = 0; i < n; ++i) {
        b.w[i] = 0;
        for (int j = 0; j < kk; ++j) {
          Scalar &v = b.V[i + j * b.ldv];
          v = round(v, 8);
          b.w[i] += c[j] * v;
        }
      }
      expect_subtract(b, c, stream(), true);
      if (HasFatalFailure()) return;
    }
}

TEST_F(VectorKernels, LargeSubtractNorm2IsEquivalentToRef)
{
  const Block b = random_block(index_t(1) << 24, 2, index_t(1) << 24, 4800);
  expect_subtract(b, {make_scalar(0.75, 0.5), -1.25}, stream());
}

// The fused window of a Lanczos step (window_multi_dot, window_subtract_norm2) against the unfused
// sequence it replaces: subtract_norm2 on the window's columns, multi_dot and subtract_norm2 on the
// pass's columns (all k of the block, or its first `pass`, the window after them: a partial
// reorthogonalization step). The fusion claims the same arithmetic, so the comparison is bit for bit;
// the unfused kernels are themselves checked against host loops above.
void expect_window(const Block &b, int lo, int kl, cudaStream_t s, int pass = -1)
{
  const int k = pass < 0 ? b.k : pass;
  SCOPED_TRACE(where(b.n, b.k, b.ldv) + " window " + std::to_string(lo) + "+" + std::to_string(kl) + ", pass over " +
               std::to_string(k));
  const std::size_t k1 = static_cast<std::size_t>(k) + 1;
  const std::vector<Scalar> g = random_vector(static_cast<std::size_t>(kl), 7 + lo);
  DeviceBuffer<Scalar> dV = upload(b.V), dg = upload(g);
  DeviceBuffer<double> ws = reduction_workspace(b.k);
  // Unfused.
  DeviceBuffer<Scalar> w1 = upload(b.w), h1(k1);
  DeviceBuffer<double> n1(1);
  k::subtract_norm2(b.n, kl, dV.data() + lo * b.ldv, b.ldv, dg.data(), w1.data(), n1.data(), ws.data(), s);
  k::multi_dot(b.n, k, dV.data(), b.ldv, w1.data(), h1.data(), ws.data(), s);
  k::subtract_norm2(b.n, k, dV.data(), b.ldv, h1.data(), w1.data(), n1.data(), ws.data(), s);
  // Fused.
  DeviceBuffer<Scalar> w2 = upload(b.w), h2(k1);
  DeviceBuffer<double> n2(1);
  poison(h2.data(), h2.size());
  poison(n2.data(), 1);
  k::window_multi_dot(b.n, k, dV.data(), b.ldv, lo, kl, dg.data(), w2.data(), h2.data(), ws.data(), s);
  ASSERT_EQ(download(w2.data(), w2.size()), b.w) << "window_multi_dot wrote w";
  k::window_subtract_norm2(b.n, k, dV.data(), b.ldv, lo, kl, dg.data(), h2.data(), w2.data(), n2.data(), ws.data(), s);
  // With an empty pass and an odd ld the fused launch reads the window one entry at a time, while the
  // unfused multi_dot over no columns reads w two at a time: the same sums in another order (a few
  // ulps). Everywhere else both take the same path, bit for bit.
  const bool bitwise = k > 0 || b.ldv % 2 == 0;
  const auto same = [bitwise](const auto &x, const auto &y) {
    if (bitwise) return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!(std::abs(x[i] - y[i]) <= 64 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(x[i])))) return false;
    return x.size() == y.size();
  };
  EXPECT_TRUE(same(download(h1.data(), k1), download(h2.data(), k1))) << "projections differ";
  EXPECT_TRUE(same(download(w1.data(), w1.size()), download(w2.data(), w2.size()))) << "w differs";
  EXPECT_TRUE(same(download(n1.data(), 1), download(n2.data(), 1))) << "norms differ";
}

TEST_F(VectorKernels, WindowPassIsEquivalentToRef)
{
  std::uint64_t seed = 4600;
  for (index_t n : odd_sizes())
    for (int kk : {1, 2, 3, 9, 17})
      for (int kl : {1, 2})
        for (index_t pad : {0, 1}) {
          if (kl > kk) continue;
          const Block b = random_block(n, kk, n + pad, seed += 11);
          expect_window(b, kk - kl, kl, stream()); // a Lanczos step's window: the last columns
          if (kk > 2) expect_window(b, 0, kl, stream());
          expect_window(b, kk - kl, kl, stream(), kk - kl); // partial: the pass ends before the window
          if (kk > 3) expect_window(b, kk - kl, kl, stream(), 1);
          if (HasFatalFailure()) return;
        }
  DeviceBuffer<double> ws = reduction_workspace(4);
  DeviceBuffer<Scalar> V(8), w(2), out(5), g(2);
  for (auto [lo, kl] : {std::pair{0, 0}, std::pair{0, 3}, std::pair{3, 2}, std::pair{-1, 1}, std::pair{-2, 2}})
    EXPECT_THROW(k::window_multi_dot(2, 4, V.data(), 2, lo, kl, g.data(), w.data(), out.data(), ws.data(), stream()),
                 cudalanczos::Error)
        << "window " << lo << "+" << kl << " of 4 columns";
}

TEST_F(VectorKernels, ReductionsOfAnySizeShareOneWorkspace)
{
  // One workspace as the backend keeps it: a reduction over 600 columns (75 column chunks, each with its
  // finish counter), small ones, a closed gate (nothing runs, nothing counts) and the large one again.
  // A counter left non-zero, or partials written over the counters, shows up as a wrong or unwritten
  // result in a later call.
  const index_t n = 1031;
  const Block big = random_block(n, 600, n + 1, 4700);
  DeviceBuffer<Scalar> dV = upload(big.V), dw = upload(big.w), out(601);
  DeviceBuffer<double> ws = reduction_workspace(600), gate(2);
  const std::vector<double> closed = {1.0, 0.5}; // 1 < 0.5 * 0.5 is false
  CUDALANCZOS_CHECK(cudaMemcpy(gate.data(), closed.data(), 2 * sizeof(double), cudaMemcpyHostToDevice));
  const auto check = [&](int kk) {
    poison(out.data(), out.size());
    k::multi_dot(n, kk, dV.data(), big.ldv, dw.data(), out.data(), ws.data(), stream());
    const std::vector<Scalar> got = download(out.data(), static_cast<std::size_t>(kk) + 1);
    for (int j = 0; j <= kk; ++j) {
      Scalar ref = 0;
      double scale = 0;
      for (index_t i = 0; i < n; ++i) {
        const Scalar v = j < kk ? big.V[i + j * big.ldv] : big.w[i];
        ref += conj_of(v) * big.w[i];
        scale += std::abs(v * big.w[i]);
      }
      ASSERT_LE(std::abs(got[j] - ref), ulps * (n + 1) * eps * scale) << "k " << kk << " output " << j;
    }
  };
  check(600);
  check(3);
  k::multi_dot(n, 600, dV.data(), big.ldv, dw.data(), out.data(), ws.data(), stream(), k::Gate{gate.data(), gate.data() + 1, 0.5});
  check(9);
  check(600);
}

TEST_F(VectorKernels, CombineIsEquivalentToRef)
{
  std::uint64_t seed = 5000;
  for (index_t n : odd_sizes())
    for (int kk : {0, 1, 3, 4, 9})
      for (index_t pad : {0, 1}) {
        SCOPED_TRACE(where(n, kk, n + pad));
        const Block b = random_block(n, kk, n + pad, seed += 13);
        const std::vector<Scalar> c = random_vector(static_cast<std::size_t>(kk), seed + 5);
        DeviceBuffer<Scalar> dV = upload(b.V), dc = upload(c), dy(static_cast<std::size_t>(n));
        poison(dy.data(), dy.size());
        k::combine(n, kk, dV.data(), n + pad, dc.data(), dy.data(), stream());
        const std::vector<Scalar> y = download(dy.data(), dy.size());
        for (index_t i = 0; i < n; ++i) {
          Scalar ref = 0;
          double scale = 0;
          for (int j = 0; j < kk; ++j) {
            ref += c[j] * b.V[i + j * (n + pad)];
            scale += std::abs(c[j] * b.V[i + j * (n + pad)]);
          }
          ASSERT_LE(std::abs(y[i] - ref), ulps * (kk + 1) * eps * scale) << "entry " << i;
        }
      }
}

TEST_F(VectorKernels, ScaleIsEquivalentToRef)
{
  for (index_t n : odd_sizes()) {
    const std::vector<Scalar> v = random_vector(static_cast<std::size_t>(n), 6000 + n);
    DeviceBuffer<Scalar> dv = upload(v);
    k::scale(n, -0.37, dv.data(), stream());
    const std::vector<Scalar> got = download(dv.data(), dv.size());
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(got[i], v[i] * -0.37) << "entry " << i; // one rounding per part: exact
  }
}

TEST_F(VectorKernels, SetRandomIsEquivalentToRef)
{
  for (index_t n : odd_sizes()) {
    DeviceBuffer<Scalar> dv(static_cast<std::size_t>(n));
    poison(dv.data(), dv.size());
    k::set_random(n, 0xabcdefULL + n, 12345, dv.data(), stream());
    const std::vector<Scalar> got = download(dv.data(), dv.size());
    // the host backend's start vector: real entries (imaginary parts 0 in a complex build)
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(got[i], Scalar(random_entry(0xabcdefULL + n, 12345 + i))) << "entry " << i;
  }
}

// --- a polynomial filter's step ------------------------------------------------------------------------------

/// Which arrays of chebyshev_step are one: none, next and prev (steps 3 on: T_k overwrites T_{k-2}), or
/// cur and prev (step 1: both are x).
enum class StepAlias { None, NextIsPrev, CurIsPrev };

/// One launch of chebyshev_step against the host loop of HostBackend::apply_filter. Every input is
/// uploaded at `offset` Scalars into its array (1: 8-byte aligned in the real build, the one-entry
/// path); y holds NaN before a step without accumulate, which must neither read it nor keep it.
void expect_chebyshev_step(index_t n, const ChebyshevStep &st, StepAlias alias, index_t offset, std::uint64_t seed,
                           cudaStream_t s)
{
  SCOPED_TRACE("n " + std::to_string(n) + (st.accumulate ? ", accumulate" : ", overwrite") + ", alias " +
               std::to_string(static_cast<int>(alias)) + ", offset " + std::to_string(offset));
  const std::size_t m = static_cast<std::size_t>(n);
  const std::vector<Scalar> w = random_vector(m, seed), c = random_vector(m, seed + 1),
                            p = alias == StepAlias::CurIsPrev ? c : random_vector(m, seed + 2),
                            y0 = st.accumulate ? random_vector(m, seed + 3) : std::vector<Scalar>(m, nan);
  const auto padded = [offset](const std::vector<Scalar> &v) {
    std::vector<Scalar> a(static_cast<std::size_t>(offset), nan);
    a.insert(a.end(), v.begin(), v.end());
    return a;
  };
  DeviceBuffer<Scalar> dw = upload(padded(w)), dc = upload(padded(c)), dp = upload(padded(p)), dn(m + offset),
                       dy = upload(padded(y0));
  poison(dn.data(), dn.size());
  Scalar *const prev = (alias == StepAlias::CurIsPrev ? dc.data() : dp.data()) + offset;
  Scalar *const next = (alias == StepAlias::NextIsPrev ? dp.data() : dn.data()) + offset;
  k::chebyshev_step(n, st, dw.data() + offset, dc.data() + offset, prev, next, dy.data() + offset, s);
  const std::vector<Scalar> got_next = download(next, m), got_y = download(dy.data() + offset, m);
  ASSERT_EQ(download(dc.data() + offset, m), c) << "cur written";
  for (index_t i = 0; i < n; ++i) {
    const Scalar t = st.alpha * w[i] + st.beta * c[i] + st.gamma * p[i];
    const Scalar y = (st.accumulate ? y0[i] : Scalar(0)) + st.nu * c[i] + st.mu * t;
    const double tol_t = ulps * 4 * eps * (std::abs(st.alpha * w[i]) + std::abs(st.beta * c[i]) + std::abs(st.gamma * p[i]));
    const double scale_y = (st.accumulate ? std::abs(y0[i]) : 0.0) + std::abs(st.nu * c[i]) + std::abs(st.mu * t);
    ASSERT_LE(std::abs(got_next[i] - t), tol_t) << "next, entry " << i << ": " << got_next[i] << " vs " << t;
    ASSERT_LE(std::abs(got_y[i] - y), ulps * 4 * eps * scale_y + std::abs(st.mu) * tol_t)
        << "y, entry " << i << ": " << got_y[i] << " vs " << y;
  }
}

TEST_F(VectorKernels, ChebyshevStepIsEquivalentToRef)
{
  // A first step's coefficients (gamma 0) and a later step's ({alpha, beta, gamma, nu, mu, accumulate}),
  // each with y accumulated and overwritten.
  const ChebyshevStep first{0.625, -0.1875, 0.0, 0.3, -0.7, false}, later{1.25, -0.375, -1.0, 0.0, 0.45, true};
  std::vector<index_t> sizes = odd_sizes();
  sizes.push_back(1000003);
  std::uint64_t seed = 7000;
  for (index_t n : sizes)
    for (const ChebyshevStep &base : {first, later})
      for (bool accumulate : {false, true})
        for (StepAlias alias : {StepAlias::None, StepAlias::NextIsPrev, StepAlias::CurIsPrev})
          for (index_t offset : {0, 1}) {
            ChebyshevStep st = base;
            st.accumulate = accumulate;
            expect_chebyshev_step(n, st, alias, offset, seed += 5, stream());
            if (HasFatalFailure()) return;
          }
  // Only next and prev (and cur and prev) may be one array.
  DeviceBuffer<Scalar> a(4), b(4), c(4), d(4);
  for (auto [next, y] : {std::pair{b.data(), d.data()}, std::pair{c.data(), a.data()}, std::pair{c.data(), b.data()},
                         std::pair{d.data(), d.data()}, std::pair{c.data(), c.data()}})
    EXPECT_THROW(k::chebyshev_step(4, later, a.data(), b.data(), c.data(), next, y, stream()), cudalanczos::Error);
  EXPECT_THROW(k::chebyshev_step(-1, later, a.data(), b.data(), c.data(), c.data(), d.data(), stream()), cudalanczos::Error);
}

// --- a filter step with its product fused in (csr_chebyshev_step, pattern_chebyshev_step) -------------------

using StepInputs = std::function<void(const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y)>;

/// The fused step against the product into w followed by chebyshev_step, on the same inputs and with the
/// aliasing the recurrence uses: the same bits in next and y (each row's product goes to the same step
/// arithmetic in registers instead of through w), and cur, which the product gathers, never written.
void expect_fused_step(index_t rows, const ChebyshevStep &st, StepAlias alias, std::uint64_t seed, cudaStream_t s,
                       const std::function<void(const Scalar *, Scalar *)> &product, const StepInputs &fused)
{
  SCOPED_TRACE(std::string(st.accumulate ? "accumulate" : "overwrite") + ", alias " + std::to_string(static_cast<int>(alias)));
  const std::size_t m = static_cast<std::size_t>(rows);
  const std::vector<Scalar> c = random_vector(m, seed), p = alias == StepAlias::CurIsPrev ? c : random_vector(m, seed + 1),
                            y0 = st.accumulate ? random_vector(m, seed + 2) : std::vector<Scalar>(m, nan);
  const auto run = [&](bool fuse, std::vector<Scalar> &next_out, std::vector<Scalar> &y_out) {
    DeviceBuffer<Scalar> dc = upload(c), dp = upload(p), dn(m), dy = upload(y0), dw(m);
    poison(dn.data(), dn.size());
    const Scalar *prev = alias == StepAlias::CurIsPrev ? dc.data() : dp.data();
    Scalar *next = alias == StepAlias::NextIsPrev ? dp.data() : dn.data();
    if (fuse) {
      fused(dc.data(), prev, next, dy.data());
    } else {
      product(dc.data(), dw.data());
      k::chebyshev_step(rows, st, dw.data(), dc.data(), prev, next, dy.data(), s);
    }
    next_out = download(next, m);
    y_out = download(dy.data(), m);
    ASSERT_EQ(download(dc.data(), m), c) << "cur written";
  };
  std::vector<Scalar> want_next, want_y, got_next, got_y;
  run(false, want_next, want_y);
  run(true, got_next, got_y);
  for (std::size_t i = 0; i < m; ++i) {
    ASSERT_EQ(0, std::memcmp(&got_next[i], &want_next[i], sizeof(Scalar))) << "next, row " << i << ": " << got_next[i] << " vs " << want_next[i];
    ASSERT_EQ(0, std::memcmp(&got_y[i], &want_y[i], sizeof(Scalar))) << "y, row " << i << ": " << got_y[i] << " vs " << want_y[i];
  }
}

/// Every step shape (a first and a later step, y accumulated or not, each aliasing) through `check`.
void for_each_step_shape(const std::function<void(const ChebyshevStep &, StepAlias)> &check)
{
  const ChebyshevStep first{0.625, -0.1875, 0.0, 0.3, -0.7, false}, later{1.25, -0.375, -1.0, 0.0, 0.45, true};
  for (const ChebyshevStep &base : {first, later})
    for (bool accumulate : {false, true})
      for (StepAlias alias : {StepAlias::None, StepAlias::NextIsPrev, StepAlias::CurIsPrev}) {
        ChebyshevStep st = base;
        st.accumulate = accumulate;
        check(st, alias);
        if (::testing::Test::HasFatalFailure()) return;
      }
}

TEST_F(VectorKernels, FusedCsrChebyshevStepIsProductThenStep)
{
  std::uint64_t seed = 7500;
  for (double mean : {0.5, 6.0, 80.0}) // empty rows, short rows, a warp a row
    for (index_t rows : odd_sizes()) {
      const Csr A = random_csr(rows, rows, mean, seed += 11);
      DeviceBuffer<int> rp = upload(A.rowptr), ci = upload(A.colind);
      DeviceBuffer<Scalar> va = upload(A.values);
      const index_t nnz = static_cast<index_t>(A.colind.size());
      for (int lanes : {0, 1, 32}) {
        SCOPED_TRACE("csr " + std::to_string(rows) + " mean " + std::to_string(mean) + " lanes " + std::to_string(lanes));
        for_each_step_shape([&](const ChebyshevStep &st, StepAlias alias) {
          expect_fused_step(
              rows, st, alias, seed + 3, stream(),
              [&](const Scalar *x, Scalar *w) { k::csr_spmv(rows, nnz, rp.data(), ci.data(), va.data(), x, w, stream(), lanes); },
              [&](const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y) {
                k::csr_chebyshev_step(rows, nnz, rp.data(), ci.data(), va.data(), st, cur, prev, next, y, stream(), lanes);
              });
        });
        if (HasFatalFailure()) return;
      }
    }
  DeviceBuffer<Scalar> a(4), b(4);
  EXPECT_THROW(k::csr_chebyshev_step(4, 0, nullptr, nullptr, nullptr, {}, a.data(), a.data(), b.data(), b.data(), stream()),
               cudalanczos::Error)
      << "y is next";
  EXPECT_THROW(k::csr_chebyshev_step(4, 0, nullptr, nullptr, nullptr, {}, a.data(), b.data(), a.data(), b.data(), stream()),
               cudalanczos::Error)
      << "next is cur";
  EXPECT_THROW(k::csr_chebyshev_step(4, 0, nullptr, nullptr, nullptr, {}, a.data(), a.data(), b.data(), a.data(), stream(), 3),
               cudalanczos::Error)
      << "3 lanes";
}

TEST_F(VectorKernels, FusedPatternChebyshevStepIsProductThenStep)
{
  std::uint64_t seed = 7800;
  for (double mean : {1.7, 12.0})
    for (index_t rows : odd_sizes()) {
      const RandomPattern P(rows, mean, seed += 11);
      for (const Scalar *dvec : P.diagonals())
        for (int lanes : {0, 2, 16}) {
          SCOPED_TRACE("pattern " + std::to_string(rows) + " mean " + std::to_string(mean) + " lanes " + std::to_string(lanes) +
                       (dvec ? " diagonal vector" : " diagonal 2.5"));
          for_each_step_shape([&](const ChebyshevStep &st, StepAlias alias) {
            expect_fused_step(
                rows, st, alias, seed + 5, stream(),
                [&](const Scalar *x, Scalar *w) {
                  k::pattern_spmv(rows, P.entries, P.rp.data(), P.ci.data(), P.c, P.d0, dvec, x, w, stream(), lanes);
                },
                [&](const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y) {
                  k::pattern_chebyshev_step(rows, P.entries, P.rp.data(), P.ci.data(), P.c, P.d0, dvec, st, cur, prev, next, y,
                                            stream(), lanes);
                });
          });
          if (HasFatalFailure()) return;
        }
    }
}

// --- the uniform-pattern split on the device (device_pattern.hpp) ---------------------------------------------

/// uniform_pattern_on_device of A uploaded against csr_scan's host split of A (checked against a
/// one-loop reference in test_csr_scan): the same refusal, or the same value, diagonal and arrays.
void expect_device_split(const Csr &A)
{
  const std::optional<UniformPattern> want = uniform_pattern(csr_view(A));
  const DeviceCsr d = to_device(A);
  const std::optional<DeviceUniformPattern> got = uniform_pattern_on_device(d.view);
  ASSERT_EQ(got.has_value(), want.has_value());
  if (!want) return;
  EXPECT_EQ(0, std::memcmp(&got->offdiagonal, &want->offdiagonal, sizeof(Scalar)));
  EXPECT_EQ(download(got->rowptr.data(), got->rowptr.size()), std::vector<int>(want->rowptr.data(), want->rowptr.data() + want->rowptr.size()));
  EXPECT_EQ(got->entries, static_cast<index_t>(want->colind.size()));
  EXPECT_EQ(download(got->colind.data(), got->colind.size()), std::vector<int>(want->colind.data(), want->colind.data() + want->colind.size()));
  EXPECT_EQ(download(got->diagonal_vector.data(), got->diagonal_vector.size()), want->diagonal_vector);
  if (want->diagonal_vector.empty()) {
    EXPECT_EQ(0, std::memcmp(&got->diagonal, &want->diagonal, sizeof(Scalar)));
  }
  index_t longest = 0;
  for (std::size_t r = 0; r + 1 < want->rowptr.size(); ++r) longest = std::max<index_t>(longest, want->rowptr[r + 1] - want->rowptr[r]);
  EXPECT_EQ(got->longest, longest);
}

TEST_F(CsrSpmv, DeviceUniformPatternIsTheHostSplit)
{
  for (const index_t rows : {1, 2, 7, 333, 5000, 100003})
    for (const bool varying : {false, true}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + (varying ? ", varying diagonal" : ", constant diagonal"));
      expect_device_split(uniform_offdiagonal_csr(rows, 6, make_scalar(-1.0, 0.25), varying, 9000 + rows));
    }
  // The refusals: one different value (first, middle, last off-diagonal entry), -0.0 against 0.0, a second
  // diagonal entry, a diagonal only, not square; and general random matrices.
  const Csr base = uniform_offdiagonal_csr(4000, 5, Scalar(0.5), false, 11);
  std::vector<std::size_t> off;
  for (index_t r = 0; r < base.rows; ++r)
    for (int j = base.rowptr[r]; j < base.rowptr[r + 1]; ++j)
      if (base.colind[j] != r) off.push_back(static_cast<std::size_t>(j));
  for (const std::size_t at : {off.front(), off[off.size() / 2], off.back()}) {
    Csr A = base;
    A.values[at] = Scalar(0.25);
    SCOPED_TRACE("different value at entry " + std::to_string(at));
    expect_device_split(A);
  }
  Csr negzero = uniform_offdiagonal_csr(3000, 4, Scalar(0.0), false, 12);
  bool planted = false; // in the last row with an off-diagonal entry
  for (index_t r = negzero.rows - 1; r >= 0 && !planted; --r)
    for (int j = negzero.rowptr[r]; j < negzero.rowptr[r + 1] && !planted; ++j)
      if (negzero.colind[j] != r) negzero.values[j] = Scalar(-0.0), planted = true;
  ASSERT_TRUE(planted);
  expect_device_split(negzero);
  Csr twice = base;
  twice.colind.insert(twice.colind.end(), 2, static_cast<int>(twice.rows - 1));
  twice.values.insert(twice.values.end(), 2, Scalar(2.0));
  twice.rowptr.back() += 2;
  expect_device_split(twice);
  Csr diagonal;
  diagonal.rows = diagonal.cols = 500;
  for (int r = 0; r < 500; ++r) diagonal.colind.push_back(r), diagonal.values.push_back(Scalar(3.0)), diagonal.rowptr.push_back(r + 1);
  expect_device_split(diagonal);
  Csr wide = base;
  wide.cols = base.rows + 1;
  expect_device_split(wide);
  for (index_t rows : odd_sizes()) expect_device_split(random_csr(rows, rows, 3.0, 9500 + rows));
}

} // namespace
} // namespace cudalanczos::cuda::test
