// The sparse matrices of the peer benchmark (bench/peers/README.md), written once as raw CSR files that
// every solver of the suite reads: bench_eps (PETSc, 1 or 16 ranks), krylov_floor and peers.py (CuPy).
//
//   gen_matrices DIR NAME...            NAME: lap2d lap3d powerlaw randsym hofstadter anderson andersonrh fem3d ("all": the first four)
//   gen_matrices DIR --small NAME...    the same generators at smoke-test sizes
//   gen_matrices DIR --medium NAME...   at sizes a 2-core host solves in seconds (operator counts without a GPU)
//
// File DIR/NAME.csr (little endian):
//   bytes  0..7   magic "CLCSR01\n"
//   bytes  8..15  int64 rows (= cols)
//   bytes 16..23  int64 nnz
//   bytes 24..31  int64 0 (reserved)
//   then int32 rowptr[rows + 1], int32 colind[nnz] (ascending in each row), float64 values[nnz].
// A complex Hermitian matrix (hofstadter) is written with the magic "CLCSRZ1\n" and complex128 values
// (real and imaginary part, 16 bytes each) instead; a real PETSc cannot read it, and says so.
// Written to NAME.csr.tmp and renamed, so a killed run never leaves a truncated file behind.
//
// The generators (all deterministic; counter-based random numbers of src/core/random.hpp):
//   lap2d     5-point Laplacian on a 1000 x 1000 grid (10^6 rows), 4 on the diagonal, -1 off it;
//             tests/cuda/test_matrices.hpp laplacian(1000), the matrix of bench_cudalanczos spmv
//   lap3d     7-point Laplacian on a 100^3 grid (10^6 rows), 6 on the diagonal, -1 off it; row
//             (i m + j) m + l for grid point (i, j, l)
//   powerlaw  Chung-Lu graph adjacency, 2 * 10^6 rows, average degree 16, seed 0xc1:
//             test_matrices.hpp chung_lu(2000000, 16, 0xc1), the matrix of bench_cudalanczos spmv
//   randsym   random sparse symmetric, 10^6 rows: B has 8 entries per row, entry e of row r in column
//             floor(u n), u = (random_entry(0x5e1, 8 r + e) + 1) / 2, value random_entry(0x5e2, 8 r + e)
//             (uniform in [-1, 1)); A = B + B^T, repeated positions summed (about 16 entries per row)
//   hofstadter  complex Hermitian: a tight-binding electron on a 1414 x 1414 square lattice (2.0 * 10^6
//             sites, site (x, y) is row x L + y) in a perpendicular magnetic field of flux phi = 1/16 per
//             plaquette (Landau gauge: the hop from (x, y) to (x, y+1) carries the Peierls phase
//             exp(i 2 pi phi x); open in x, periodic in y, which the gauge allows for any phi), hopping
//             t = 1 (entries -1 and -exp(...)), and Anderson disorder on the diagonal, W = 1:
//             H_rr = W/2 random_entry(0x40f, r) (uniform in [-W/2, W/2)), which breaks the Landau
//             levels' degeneracy as any real sample does. About 5 entries per row.
//   anderson  the 3-D Anderson model at its critical disorder: a 100^3 periodic cubic lattice (10^6 rows,
//             site (x, y, z) is row x + 100 (y + 100 z)), hopping -1 to the 6 neighbours, on-site energy
//             W (u - 1/2) with W = 16.5 and u = splitmix64(seed 1, site) in [0, 1): the matrix of
//             examples/anderson_window.c at -L 100 (its defaults otherwise), bit for bit. 7 entries per row.
//             The interval benchmark (run_interval.sh) asks for its eigenvalues in windows at E = 0.
//   andersonrh  the same lattice and on-site energies with random hoppings (off-diagonal disorder): the
//             bond from a site to its next neighbour in direction d has -(1/2 + u), u = splitmix64(seed 2,
//             3 site + d): general values, no uniform pattern. 7 entries per row.
//   fem3d     the Q1 finite-element stiffness matrix of -div(kappa grad u) on the unit cube, 101^3 elements,
//             u = 0 on the boundary (10^6 interior nodes, 21 entries a row inside), kappa log-uniform in
//             [0.1, 10) per element (fem_stiffness3d): general values, no uniform pattern.
// --small: lap2d 60 x 60, lap3d 16^3, powerlaw 20000 rows, randsym 20000 rows, hofstadter 60 x 60, anderson and
//          andersonrh 16^3, fem3d 16^3 interior nodes.
// --medium: lap2d 200 x 200, lap3d 34^3, powerlaw 200000 rows, randsym 100000 rows, hofstadter 300 x 300,
//           anderson and andersonrh 40^3, fem3d 40^3.
#include "core/random.hpp"
#include "test_matrices.hpp" // tests/cuda: header-only, no CUDA

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using cudalanczos::cuda::test::Csr;

namespace {

Csr laplacian3d(std::int64_t m)
{
  Csr A;
  A.rows = A.cols = m * m * m;
  A.rowptr.assign(1, 0);
  A.colind.reserve(static_cast<std::size_t>(7 * A.rows));
  A.values.reserve(static_cast<std::size_t>(7 * A.rows));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < m; ++j)
      for (std::int64_t l = 0; l < m; ++l) {
        const std::int64_t r = (i * m + j) * m + l;
        const auto add = [&](std::int64_t c, double v) {
          A.colind.push_back(static_cast<int>(c));
          A.values.push_back(v);
        };
        if (i > 0) add(r - m * m, -1.0);
        if (j > 0) add(r - m, -1.0);
        if (l > 0) add(r - 1, -1.0);
        add(r, 6.0);
        if (l + 1 < m) add(r + 1, -1.0);
        if (j + 1 < m) add(r + m, -1.0);
        if (i + 1 < m) add(r + m * m, -1.0);
        A.rowptr.push_back(static_cast<int>(A.colind.size()));
      }
  return A;
}

Csr random_symmetric(std::int64_t n, int per_row)
{
  using cudalanczos::random_entry;
  // Triplets of B and B^T, bucketed by row (counting sort), then sorted and merged per row.
  std::vector<std::int64_t> count(n + 1, 0);
  std::vector<int> bc(static_cast<std::size_t>(n) * per_row);
  std::vector<double> bv(bc.size());
  for (std::int64_t r = 0; r < n; ++r)
    for (int e = 0; e < per_row; ++e) {
      const std::int64_t t = r * per_row + e;
      const double u = 0.5 * (random_entry(0x5e1, t) + 1.0);
      const int c = static_cast<int>(std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(u * n)));
      bc[t] = c;
      bv[t] = random_entry(0x5e2, t);
      ++count[r + 1];
      ++count[c + 1];
    }
  for (std::int64_t i = 0; i < n; ++i) count[i + 1] += count[i];
  std::vector<std::pair<int, double>> ent(count[n]);
  std::vector<std::int64_t> fill(count.begin(), count.end() - 1);
  for (std::int64_t r = 0; r < n; ++r)
    for (int e = 0; e < per_row; ++e) {
      const std::int64_t t = r * per_row + e;
      ent[fill[r]++] = {bc[t], bv[t]};
      ent[fill[bc[t]]++] = {static_cast<int>(r), bv[t]};
    }
  Csr A;
  A.rows = A.cols = n;
  A.rowptr.assign(1, 0);
  A.colind.reserve(ent.size());
  A.values.reserve(ent.size());
  for (std::int64_t i = 0; i < n; ++i) {
    // stable: equal columns are summed in a fixed order, so the file is the same on every machine
    std::stable_sort(ent.begin() + count[i], ent.begin() + count[i + 1],
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    for (std::int64_t p = count[i]; p < count[i + 1]; ++p) {
      if (A.colind.size() > static_cast<std::size_t>(A.rowptr.back()) && A.colind.back() == ent[p].first)
        A.values.back() += ent[p].second;
      else {
        A.colind.push_back(ent[p].first);
        A.values.push_back(ent[p].second);
      }
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

/// examples/anderson_window.c's UniformOfSite: splitmix64 of (seed, site), 53 bits, in [0, 1).
double uniform_of_site(std::uint64_t seed, std::int64_t site)
{
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(site) + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
}

/// The 3-D Anderson model on an L^3 periodic lattice (examples/anderson_window.c, rows in the same order,
/// entries of one row sorted; on 2 sites along a side the two bonds add up there, so they do here). With
/// random hoppings, the bond from site s to its next neighbour in direction d (periodically) has
/// -(1/2 + uniform_of_site(seed + 1, 3 s + d)), the same seen from both ends: values in (-3/2, -1/2].
Csr anderson(std::int64_t L, double W, std::uint64_t seed, bool random_hoppings = false)
{
  const auto hop = [&](std::int64_t site, int d) { return random_hoppings ? -(0.5 + uniform_of_site(seed + 1, 3 * site + d)) : -1.0; };
  Csr A;
  A.rows = A.cols = L * L * L;
  A.rowptr.assign(1, 0);
  A.colind.reserve(static_cast<std::size_t>(7 * A.rows));
  A.values.reserve(static_cast<std::size_t>(7 * A.rows));
  std::vector<std::pair<std::int64_t, double>> row;
  for (std::int64_t r = 0; r < A.rows; ++r) {
    const std::int64_t c[3] = {r % L, (r / L) % L, r / (L * L)}, stride[3] = {1, L, L * L};
    row.clear();
    row.push_back({r, W != 0 ? W * (uniform_of_site(seed, r) - 0.5) : 0.0});
    for (int d = 0; d < 3; ++d) {
      const std::int64_t up = r + ((c[d] + 1) % L - c[d]) * stride[d], down = r + ((c[d] + L - 1) % L - c[d]) * stride[d];
      row.push_back({up, hop(r, d)});
      row.push_back({down, hop(down, d)});
    }
    std::stable_sort(row.begin(), row.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    for (const auto &[col, v] : row) {
      if (A.colind.size() > static_cast<std::size_t>(A.rowptr.back()) && A.colind.back() == col) A.values.back() += v;
      else {
        A.colind.push_back(static_cast<int>(col));
        A.values.push_back(v);
      }
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

/// The Q1 (trilinear) finite-element stiffness matrix of -div(kappa grad u) = f on the unit cube, an m^3
/// grid of elements, u = 0 on the boundary: the (m - 1)^3 interior nodes are the rows, node (i, j, l) row
/// ((i - 1)(m - 1) + j - 1)(m - 1) + l - 1. Of the 27 neighbours, the 6 across one face couple by 0 in
/// every element (K = 0 there) and are left out: 21 entries a row inside. Element e's coefficient is
/// kappa_e = 10^(2 u - 1), u = (random_entry(0xfe3, e) + 1) / 2: log-uniform in [0.1, 10), so that no two
/// rows hold the same values. The reference element's stiffness K(a, b) = sum_d D_d prod_{d' != d} M_d'
/// (1-D factors: D = 1 at the same end, -1 at the other; M = 1/3 and 1/6), times the element size h
/// (h^3 / h^2). Each entry adds its shared elements in one order for both of its rows: exactly symmetric.
Csr fem_stiffness3d(std::int64_t m)
{
  const std::int64_t n1 = m - 1; // interior nodes along a side
  Csr A;
  A.rows = A.cols = n1 * n1 * n1;
  A.rowptr.assign(1, 0);
  A.colind.reserve(static_cast<std::size_t>(27 * A.rows));
  A.values.reserve(static_cast<std::size_t>(27 * A.rows));
  const double h = 1.0 / static_cast<double>(m);
  const auto kappa = [m](std::int64_t ex, std::int64_t ey, std::int64_t ez) {
    const double u = 0.5 * (cudalanczos::random_entry(0xfe3, (ex * m + ey) * m + ez) + 1.0);
    return std::pow(10.0, 2.0 * u - 1.0);
  };
  // K(a, b) of corners a, b from how many coordinates differ: in units of 1/36, D_d times M_d' in units
  // of 1/6 (2 at the same end, 1 at the other), so that the sums are exact: 1/3, 0, -1/12, -1/12.
  const auto k_ref = [](int differ) {
    int s = 0;
    for (int d = 0; d < 3; ++d) { // which coordinates differ does not matter, only how many: the first `differ`
      int t = d < differ ? -1 : 1;
      for (int e = 0; e < 3; ++e)
        if (e != d) t *= e < differ ? 1 : 2;
      s += t;
    }
    return s / 36.0;
  };
  const double kr[4] = {k_ref(0), k_ref(1), k_ref(2), k_ref(3)};
  for (std::int64_t i = 1; i < m; ++i)
    for (std::int64_t j = 1; j < m; ++j)
      for (std::int64_t l = 1; l < m; ++l) {
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            for (int dl = -1; dl <= 1; ++dl) {
              const std::int64_t qi = i + di, qj = j + dj, ql = l + dl;
              if (qi < 1 || qi >= m || qj < 1 || qj >= m || ql < 1 || ql >= m) continue; // a boundary node: u = 0
              // Elements holding both nodes: origin e with p - e and q - e in {0, 1}^3, in ascending order.
              double v = 0;
              for (std::int64_t ex = std::max(i, qi) - 1; ex <= std::min(i, qi); ++ex)
                for (std::int64_t ey = std::max(j, qj) - 1; ey <= std::min(j, qj); ++ey)
                  for (std::int64_t ez = std::max(l, ql) - 1; ez <= std::min(l, ql); ++ez)
                    v += kappa(ex, ey, ez) * kr[std::abs(di) + std::abs(dj) + std::abs(dl)] * h;
              if (v == 0) continue; // a neighbour across one coordinate only: K = 0 in every element
              A.colind.push_back(static_cast<int>(((qi - 1) * n1 + qj - 1) * n1 + ql - 1));
              A.values.push_back(v);
            }
        A.rowptr.push_back(static_cast<int>(A.colind.size()));
      }
  return A;
}

/// A CSR matrix with complex values (the Csr of test_matrices.hpp holds doubles).
struct ZCsr {
  std::int64_t rows = 0;
  std::vector<int> rowptr{0}, colind;
  std::vector<std::complex<double>> values;
};

ZCsr hofstadter(std::int64_t L, double phi, double W)
{
  const double two_pi = 6.283185307179586476925286766559;
  ZCsr H;
  H.rows = L * L;
  H.colind.reserve(static_cast<std::size_t>(5 * H.rows));
  H.values.reserve(static_cast<std::size_t>(5 * H.rows));
  std::vector<std::pair<std::int64_t, std::complex<double>>> row;
  for (std::int64_t x = 0; x < L; ++x) {
    const std::complex<double> up = -std::polar(1.0, two_pi * phi * static_cast<double>(x)); // (x,y) <- (x,y+1)
    for (std::int64_t y = 0; y < L; ++y) {
      const std::int64_t r = x * L + y;
      row.clear();
      row.push_back({r, 0.5 * W * cudalanczos::random_entry(0x40f, r)});
      if (x > 0) row.push_back({r - L, -1.0});
      if (x + 1 < L) row.push_back({r + L, -1.0});
      if (L > 2) { // periodic in y: H[r, (x, y+1)] = -e^{i 2 pi phi x}, and its conjugate the other way
        row.push_back({x * L + (y + 1) % L, up});
        row.push_back({x * L + (y + L - 1) % L, std::conj(up)});
      }
      std::sort(row.begin(), row.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
      for (const auto &[c, v] : row) {
        H.colind.push_back(static_cast<int>(c));
        H.values.push_back(v);
      }
      H.rowptr.push_back(static_cast<int>(H.colind.size()));
    }
  }
  return H;
}

/// Writes rowptr, colind and `values` (doubles: 8 bytes each, or complex: 16) under `magic`.
template <class Value>
bool write_file(const std::string &path, const char (&magic)[8], std::int64_t rows, const std::vector<int> &rowptr,
                const std::vector<int> &colind, const std::vector<Value> &values)
{
  const std::string tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  const std::int64_t head[3] = {rows, static_cast<std::int64_t>(colind.size()), 0};
  bool ok = std::fwrite(magic, 1, 8, f) == 8 && std::fwrite(head, 8, 3, f) == 3 &&
            std::fwrite(rowptr.data(), 4, rowptr.size(), f) == rowptr.size() &&
            std::fwrite(colind.data(), 4, colind.size(), f) == colind.size() &&
            std::fwrite(values.data(), sizeof(Value), values.size(), f) == values.size();
  ok = (std::fclose(f) == 0) && ok;
  if (ok) ok = std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) std::remove(tmp.c_str());
  return ok;
}

bool write_csr(const std::string &path, const ZCsr &A)
{
  const char magic[8] = {'C', 'L', 'C', 'S', 'R', 'Z', '1', '\n'};
  return write_file(path, magic, A.rows, A.rowptr, A.colind, A.values);
}

bool write_csr(const std::string &path, const Csr &A)
{
  const char magic[8] = {'C', 'L', 'C', 'S', 'R', '0', '1', '\n'};
  return write_file(path, magic, static_cast<std::int64_t>(A.rows), A.rowptr, A.colind, A.values);
}

} // namespace

int main(int argc, char **argv)
{
  if (argc < 3) {
    std::fprintf(stderr, "usage: gen_matrices DIR [--small | --medium] NAME... (lap2d lap3d powerlaw randsym hofstadter anderson andersonrh fem3d all)\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool small = false, medium = false;
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--small")) small = true;
    else if (!std::strcmp(argv[i], "--medium")) medium = true;
    else if (!std::strcmp(argv[i], "all")) names.insert(names.end(), {"lap2d", "lap3d", "powerlaw", "randsym"});
    else names.push_back(argv[i]);
  }
  int status = 0;
  for (const std::string &name : names) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string path = dir + "/" + name + ".csr";
    Csr A;
    ZCsr Z;
    if (name == "hofstadter") Z = hofstadter(small ? 60 : medium ? 300 : 1414, 1.0 / 16, 1.0);
    else if (name == "lap2d") A = cudalanczos::cuda::test::laplacian(small ? 60 : medium ? 200 : 1000);
    else if (name == "lap3d") A = laplacian3d(small ? 16 : medium ? 34 : 100);
    else if (name == "powerlaw") A = cudalanczos::cuda::test::chung_lu(small ? 20000 : medium ? 200000 : 2000000, 16, 0xc1u);
    else if (name == "randsym") A = random_symmetric(small ? 20000 : medium ? 100000 : 1000000, 8);
    else if (name == "anderson") A = anderson(small ? 16 : medium ? 40 : 100, 16.5, 1);
    else if (name == "andersonrh") A = anderson(small ? 16 : medium ? 40 : 100, 16.5, 1, true);
    else if (name == "fem3d") A = fem_stiffness3d(small ? 17 : medium ? 41 : 101);
    else {
      std::fprintf(stderr, "gen_matrices: unknown matrix %s\n", name.c_str());
      status = 2;
      continue;
    }
    const bool complex = !Z.colind.empty();
    if (complex ? !write_csr(path, Z) : !write_csr(path, A)) {
      std::fprintf(stderr, "gen_matrices: cannot write %s\n", path.c_str());
      status = 1;
      continue;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"bench\":\"gen\",\"case\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"complex\":%s,\"time_s\":%.3f,\"path\":\"%s\"}\n",
                name.c_str(), static_cast<long long>(complex ? Z.rows : A.rows),
                static_cast<long long>(complex ? Z.colind.size() : A.colind.size()), complex ? "true" : "false", s, path.c_str());
    std::fflush(stdout);
  }
  return status;
}
