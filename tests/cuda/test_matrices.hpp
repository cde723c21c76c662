// Test matrices shared by the CUDA tests and the benchmark (no GoogleTest here): CSR generators.
// Everything is a pure function of its arguments (counter-based random numbers), so a seed names a matrix.
#pragma once

#include "core/backend.hpp"
#include "core/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace cudalanczos::cuda::test {

struct Csr {
  index_t rows = 0, cols = 0;
  std::vector<int> rowptr{0}, colind;
  std::vector<double> values;
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
      A.values.push_back(random_entry(seed + 2, counter++));
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

/// The 5-point Laplacian on an m x m grid (m^2 rows).
inline Csr laplacian(index_t m)
{
  Csr A;
  A.rows = A.cols = m * m;
  A.rowptr.assign(1, 0);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < m; ++j) {
      const index_t r = i * m + j;
      const auto add = [&](index_t c, double v) {
        A.colind.push_back(static_cast<int>(c));
        A.values.push_back(v);
      };
      if (i > 0) add(r - m, -1.0);
      if (j > 0) add(r - 1, -1.0);
      add(r, 4.0);
      if (j + 1 < m) add(r + 1, -1.0);
      if (i + 1 < m) add(r + m, -1.0);
      A.rowptr.push_back(static_cast<int>(A.colind.size()));
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
