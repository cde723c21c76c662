// Test matrices shared by the CUDA tests and the benchmark (no GoogleTest here): CSR generators and a
// dense Hermitian one. Everything is a pure function of its arguments (counter-based random numbers), so
// a seed names a matrix. Values are Scalars: in a complex build the random ones are genuinely complex
// (imaginary parts of the size of the real ones), so that a kernel that drops a conjugation or mixes
// up the two parts fails against a host reference.
#pragma once

#include "core/backend.hpp"
#include "core/random.hpp"
#include "cuda/cuda_backend.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

namespace cudalanczos::cuda::test {

/// re + i im as a Scalar; the real build keeps re (a template, so that the complex branch is not
/// compiled for double).
template <class S = Scalar>
S make_scalar(double re, double im)
{
  if constexpr (std::is_same_v<S, double>) {
    (void)im;
    return re;
  } else {
    return S(re, im);
  }
}

/// The imaginary part (0 for a double).
inline double imag_part(double) { return 0.0; }
inline double imag_part(const std::complex<double> &z) { return z.imag(); }

/// A pseudo-random Scalar with parts in [-1, 1): random_entry(seed, i) for the real part, an independent
/// stream for the imaginary part (complex builds only).
inline Scalar random_scalar(std::uint64_t seed, std::int64_t i)
{
  return make_scalar(random_entry(seed, i), random_entry(seed ^ 0x5bd1e9955bd1e995ULL, i));
}

/// e^{i theta} (complex), or 1 (real): a hopping phase.
inline Scalar phase(double theta) { return make_scalar(std::cos(theta), std::sin(theta)); }

struct Csr {
  index_t rows = 0, cols = 0;
  std::vector<int> rowptr{0}, colind;
  std::vector<Scalar> values;
};

/// Rows of random length around `mean` (some empty, every 97th very long), random columns (repeats
/// allowed: they add, as in any CSR product) and values.
inline Csr random_csr(index_t rows, index_t cols, double mean, std::uint64_t seed)
{
  Csr A;
  A.rows = rows;
  A.cols = cols;
  A.rowptr.assign(1, 0);
  std::int64_t counter = 0;
  for (index_t r = 0; r < rows; ++r) {
    int len = static_cast<int>((random_entry(seed, counter++) + 1.0) * mean);
    if (r % 97 == 5) len = static_cast<int>(5 * mean) + 40;
    if (cols == 0) len = 0;
    for (int e = 0; e < len; ++e) {
      const double u = (random_entry(seed + 1, counter++) + 1.0) / 2.0;
      A.colind.push_back(std::min<int>(static_cast<int>(u * cols), static_cast<int>(cols) - 1));
      A.values.push_back(random_scalar(seed + 2, counter++));
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

/// A complex Hermitian lattice operator: the 5-point Laplacian on an m x m grid in a magnetic field
/// (Peierls phases, Landau gauge): a hop to the right from column j carries e^{i flux j}, its reverse the
/// conjugate, vertical hops none; diagonal 4. Hermitian with genuinely complex entries, eigenvalues in
/// [0, 8] (the Hofstadter spectrum). In the real build make_scalar keeps the phases' real parts: the
/// horizontal hops are -cos(flux j), a real symmetric matrix (at flux 0, laplacian(m)).
inline Csr magnetic_laplacian(index_t m, double flux)
{
  Csr A;
  A.rows = A.cols = m * m;
  A.rowptr.assign(1, 0);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < m; ++j) {
      const index_t r = i * m + j;
      const auto add = [&](index_t c, Scalar v) {
        A.colind.push_back(static_cast<int>(c));
        A.values.push_back(v);
      };
      // A hop's "+ 0" turns a -0.0 part into 0.0: at flux 0 every hop is then -1 bit for bit (negating
      // the phase 1 + 0i gives -1 - 0i, its conjugate -1 + 0i), as the pattern operator, which compares
      // values bit for bit, needs to see laplacian(m)'s entries as one value.
      const auto hop = [](Scalar p) { return -p + Scalar(0.0); };
      if (i > 0) add(r - m, -1.0);
      if (j > 0) add(r - 1, hop(conj_of(phase(flux * static_cast<double>(j - 1))))); // from (i, j-1) to the right, reversed
      add(r, 4.0);
      if (j + 1 < m) add(r + 1, hop(phase(flux * static_cast<double>(j))));
      if (i + 1 < m) add(r + m, -1.0);
      A.rowptr.push_back(static_cast<int>(A.colind.size()));
    }
  return A;
}

/// The 5-point Laplacian on an m x m grid (m^2 rows): the lattice above without a field (every phase
/// exactly 1, so the entries are exactly -1 and 4).
inline Csr laplacian(index_t m) { return magnetic_laplacian(m, 0.0); }

/// The view the operators and the scans take of A's host arrays.
inline CsrView csr_view(const Csr &A)
{
  return {A.rows, A.cols, static_cast<index_t>(A.colind.size()), A.rowptr.data(), A.colind.data(), A.values.data()};
}

/// rows x rows with up to `per_row` off-diagonal entries a row, all of value c (some rows empty), a
/// diagonal entry in most rows (value 2, or row-dependent when `varying_diagonal`), sorted columns: a
/// matrix with a uniform pattern (csr_scan.hpp, device_pattern.hpp).
inline Csr uniform_offdiagonal_csr(index_t rows, int per_row, Scalar c, bool varying_diagonal, std::uint64_t seed)
{
  std::mt19937_64 rng(seed);
  Csr A;
  A.rows = A.cols = rows;
  for (index_t r = 0; r < rows; ++r) {
    std::vector<int> cols;
    const int count = static_cast<int>(rng() % static_cast<std::uint64_t>(per_row + 1));
    for (int k = 0; k < count; ++k) cols.push_back(static_cast<int>(rng() % static_cast<std::uint64_t>(rows)));
    if (rng() % 5 != 0) cols.push_back(static_cast<int>(r));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (const int j : cols) {
      A.colind.push_back(j);
      A.values.push_back(j == r ? (varying_diagonal ? Scalar(2.0 + static_cast<double>(r % 7)) : Scalar(2.0)) : c);
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

/// A random Hermitian n x n matrix, column-major with leading dimension ld >= n, padding rows NaN:
/// A[i, j] = conj(A[j, i]) random Scalars, the diagonal real. Symmetric in the real build.
inline std::vector<Scalar> random_hermitian(index_t n, index_t ld, std::uint64_t seed)
{
  std::vector<Scalar> A(static_cast<std::size_t>(std::max<index_t>(ld * n, 0)), Scalar(std::nan("")));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i <= j; ++i) {
      const Scalar a = i == j ? Scalar(random_entry(seed, i + j * n)) : random_scalar(seed, i + j * n);
      A[static_cast<std::size_t>(i + j * ld)] = a;
      A[static_cast<std::size_t>(j + i * ld)] = conj_of(a);
    }
  return A;
}

/// Chung-Lu graph: vertex i has weight (i + i0)^(-2/3) (degree exponent 2.5); n * degree / 2 edges,
/// each endpoint drawn with probability proportional to its weight (inverse CDF of the continuous
/// weight density); self-loops dropped, symmetrized, duplicates merged. i0 = 100 keeps the largest
/// expected degree (about 4000) under sqrt(2 m), as the model requires. Values 1 (adjacency).
inline Csr chung_lu(std::int64_t n, double degree, std::uint64_t seed)
{
  const double i0 = 100, lo = std::cbrt(i0), hi = std::cbrt(n + i0);
  const auto draw = [&](std::int64_t counter) {
    const double u = 0.5 * (random_entry(seed, counter) + 1.0);
    const double t = lo + u * (hi - lo);
    return std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(t * t * t - i0));
  };
  const std::int64_t edges = static_cast<std::int64_t>(n * degree / 2);
  std::vector<std::int64_t> count(n + 1, 0);
  std::vector<std::pair<int, int>> e;
  e.reserve(edges);
  for (std::int64_t k = 0; k < edges; ++k) {
    const std::int64_t a = draw(2 * k), b = draw(2 * k + 1);
    if (a == b) continue;
    e.emplace_back(static_cast<int>(a), static_cast<int>(b));
    ++count[a + 1];
    ++count[b + 1];
  }
  for (std::int64_t i = 0; i < n; ++i) count[i + 1] += count[i];
  std::vector<int> cols(count[n]);
  std::vector<std::int64_t> fill(count.begin(), count.end() - 1);
  for (const auto &[a, b] : e) {
    cols[fill[a]++] = b;
    cols[fill[b]++] = a;
  }
  Csr A;
  A.rows = A.cols = n;
  A.rowptr.assign(1, 0);
  A.colind.reserve(cols.size());
  for (std::int64_t i = 0; i < n; ++i) {
    auto first = cols.begin() + count[i], last = cols.begin() + count[i + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    A.colind.insert(A.colind.end(), first, last);
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  A.values.assign(A.colind.size(), 1.0);
  return A;
}

} // namespace cudalanczos::cuda::test
