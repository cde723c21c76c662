// The threaded host scans of a CSR matrix before its upload (src/cuda/csr_scan.hpp) against plain
// one-pass loops written here, at 1 to 16 parts: the uniform pattern's row pointers, columns, values and
// diagonal, the refusals (two off-diagonal values, two diagonal entries in a row, a diagonal only), and
// the validation's message, which must name the first bad entry whichever part finds it. Host code
// only: runs without a GPU.
#include "cuda/csr_scan.hpp"
#include "test_matrices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace cudalanczos::cuda::test {
namespace {

/// The split as one loop over the rows computes it (the reference).
std::optional<UniformPattern> reference_pattern(const Csr &A)
{
  if (A.rows != A.cols || A.rows == 0 || A.colind.empty()) return std::nullopt;
  UniformPattern p;
  bool have = false;
  std::vector<int> rowptr{0}, colind;
  std::vector<Scalar> diag(static_cast<std::size_t>(A.rows), Scalar{});
  for (index_t r = 0; r < A.rows; ++r) {
    bool seen = false;
    for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) {
      if (A.colind[j] == r) {
        if (seen) return std::nullopt;
        seen = true;
        diag[r] = A.values[j];
        continue;
      }
      if (!have) p.offdiagonal = A.values[j], have = true;
      else if (std::memcmp(&A.values[j], &p.offdiagonal, sizeof(Scalar)) != 0) return std::nullopt;
      colind.push_back(A.colind[j]);
    }
    rowptr.push_back(static_cast<int>(colind.size()));
  }
  if (!have) return std::nullopt;
  p.rowptr.resize_unwritten(rowptr.size());
  std::copy(rowptr.begin(), rowptr.end(), p.rowptr.data());
  p.colind.resize_unwritten(colind.size());
  std::copy(colind.begin(), colind.end(), p.colind.data());
  p.diagonal = diag[0];
  for (const Scalar &d : diag)
    if (std::memcmp(&d, &p.diagonal, sizeof d) != 0) {
      p.diagonal_vector = diag;
      break;
    }
  return p;
}

class CsrScan : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override { set_scan_threads(GetParam()); }
  void TearDown() override { set_scan_threads(0); }
};

void expect_same(const std::optional<UniformPattern> &got, const std::optional<UniformPattern> &want)
{
  ASSERT_EQ(got.has_value(), want.has_value());
  if (!want) return;
  const auto as_vector = [](const IndexArray &a) { return std::vector<int>(a.data(), a.data() + a.size()); };
  EXPECT_EQ(as_vector(got->rowptr), as_vector(want->rowptr));
  EXPECT_EQ(as_vector(got->colind), as_vector(want->colind));
  EXPECT_EQ(std::memcmp(&got->offdiagonal, &want->offdiagonal, sizeof(Scalar)), 0);
  EXPECT_EQ(std::memcmp(&got->diagonal, &want->diagonal, sizeof(Scalar)), 0);
  EXPECT_EQ(got->diagonal_vector, want->diagonal_vector);
}

TEST_P(CsrScan, UniformPatternIsTheOneLoopSplit)
{
  for (const index_t rows : {1, 2, 7, 333, 5000})
    for (const bool varying : {false, true}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + (varying ? ", varying diagonal" : ", constant diagonal"));
      const Csr A = uniform_offdiagonal_csr(rows, 6, Scalar(-1.0), varying, static_cast<std::uint64_t>(rows) * 3 + varying);
      const auto want = reference_pattern(A);
      expect_same(uniform_pattern(csr_view(A)), want);
      if (rows >= 7) {
        EXPECT_TRUE(want.has_value()); // the generator gave off-diagonal entries
      }
    }
}

TEST_P(CsrScan, OneDifferentValueAnywhereRefusesThePattern)
{
  const Csr base = uniform_offdiagonal_csr(4000, 5, Scalar(0.5), false, 11);
  ASSERT_TRUE(uniform_pattern(csr_view(base)).has_value());
  for (const double where : {0.0, 0.37, 0.999}) { // first, middle and last off-diagonal entry
    Csr A = base;
    std::vector<std::size_t> off;
    for (index_t r = 0; r < A.rows; ++r)
      for (int j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j)
        if (A.colind[j] != r) off.push_back(static_cast<std::size_t>(j));
    A.values[off[static_cast<std::size_t>(where * static_cast<double>(off.size() - 1))]] = Scalar(0.25);
    EXPECT_FALSE(uniform_pattern(csr_view(A)).has_value()) << "the different value at " << where;
  }
  Csr negzero = uniform_offdiagonal_csr(3000, 4, Scalar(0.0), false, 12); // -0.0 and 0.0 differ bit for bit
  for (index_t r = negzero.rows - 1, done = 0; r >= 0 && !done; --r)
    for (int j = negzero.rowptr[r]; j < negzero.rowptr[r + 1]; ++j)
      if (negzero.colind[j] != r) negzero.values[j] = Scalar(-0.0), done = 1;
  EXPECT_FALSE(uniform_pattern(csr_view(negzero)).has_value());
}

TEST_P(CsrScan, RefusesTwoDiagonalEntriesADiagonalOnlyAndNonSquare)
{
  Csr A = uniform_offdiagonal_csr(3000, 4, Scalar(1.0), false, 13);
  Csr twice = A; // the last row gets a second diagonal entry
  twice.colind.push_back(static_cast<int>(twice.rows - 1));
  twice.values.push_back(Scalar(2.0));
  twice.colind.push_back(static_cast<int>(twice.rows - 1));
  twice.values.push_back(Scalar(2.0));
  twice.rowptr.back() += 2;
  EXPECT_FALSE(uniform_pattern(csr_view(twice)).has_value());
  Csr diagonal;
  diagonal.rows = diagonal.cols = 500;
  for (int r = 0; r < 500; ++r) diagonal.colind.push_back(r), diagonal.values.push_back(Scalar(3.0)), diagonal.rowptr.push_back(r + 1);
  EXPECT_FALSE(uniform_pattern(csr_view(diagonal)).has_value());
  Csr wide = A;
  wide.cols = A.rows + 1;
  EXPECT_FALSE(uniform_pattern(csr_view(wide)).has_value());
}

TEST_P(CsrScan, ValidationNamesTheFirstBadEntry)
{
  Csr A = uniform_offdiagonal_csr(6000, 5, Scalar(1.0), true, 14);
  EXPECT_NO_THROW(validate_csr(csr_view(A)));
  const std::size_t nnz = A.colind.size();
  Csr bad = A;
  bad.colind[nnz / 3] = static_cast<int>(A.cols);     // the first bad one
  bad.colind[nnz - 1] = -1;                           // a later one, in another part
  try {
    validate_csr(csr_view(bad));
    FAIL() << "an index outside the matrix was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("column index " + std::to_string(A.cols) + " at entry " + std::to_string(nnz / 3)), std::string::npos)
        << e.what();
  }
  Csr decreasing = A;
  decreasing.rowptr[100] = decreasing.rowptr[101] + 1;
  EXPECT_THROW(validate_csr(csr_view(decreasing)), Error);
}

INSTANTIATE_TEST_SUITE_P(Parts, CsrScan, ::testing::Values(1, 2, 3, 5, 16), [](const auto &info) { return "parts" + std::to_string(info.param); });

} // namespace
} // namespace cudalanczos::cuda::test
