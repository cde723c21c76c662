// The host passes over a CSR matrix before its upload, on several threads (csr_scan.hpp).
#include "cuda/csr_scan.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <thread>

namespace cudalanczos::cuda {
namespace {

constexpr int kThreadCap = 16;
// Fewer entries than this a thread, and starting it costs more than it saves.
constexpr index_t kEntriesPerThread = index_t(1) << 18;

std::atomic<int> threads_wanted{0};

int scan_threads(index_t entries)
{
  if (const int t = threads_wanted.load(); t > 0) return t; // a test's count, however few the entries
  const int t = std::min(kThreadCap, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  return static_cast<int>(std::clamp<index_t>(entries / kEntriesPerThread, 1, t));
}

/// Runs part(t) for t = 0 .. parts - 1, part 0 on the calling thread, the others on their own; where no
/// thread can be had the caller runs that part itself. Rethrows the error of the lowest part that threw.
template <class Part>
void run_parts(int parts, const Part &part)
{
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(parts));
  const auto guarded = [&](int t) {
    try {
      part(t);
    } catch (...) {
      errors[static_cast<std::size_t>(t)] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  std::vector<int> left; // parts no thread could be started for
  for (int t = 1; t < parts; ++t) {
    try {
      helpers.emplace_back(guarded, t);
    } catch (...) {
      left.push_back(t);
    }
  }
  guarded(0);
  for (const int t : left) guarded(t);
  for (auto &h : helpers) h.join();
  for (auto &e : errors)
    if (e) std::rethrow_exception(e);
}

/// Row boundaries of `parts` ranges of about equal entry counts: part t has rows [bound[t], bound[t + 1]).
std::vector<index_t> row_bounds(const CsrView &A, int parts)
{
  std::vector<index_t> bound(static_cast<std::size_t>(parts) + 1, A.rows);
  bound[0] = 0;
  for (int t = 1; t < parts; ++t) {
    const index_t first_entry = A.nnz * t / parts;
    bound[static_cast<std::size_t>(t)] = std::lower_bound(A.rowptr, A.rowptr + A.rows, first_entry) - A.rowptr;
  }
  return bound;
}

} // namespace

void set_scan_threads(int threads) { threads_wanted = std::max(0, threads); }

index_t longest_row_on_host(const int *rowptr, index_t rows)
{
  index_t longest = 0;
  for (index_t r = 0; r < rows; ++r) longest = std::max<index_t>(longest, rowptr[r + 1] - rowptr[r]);
  return longest;
}

void validate_csr(const CsrView &A)
{
  const auto fail = [&](const std::string &why) {
    throw Error("make_csr_operator: " + why + " (rows = " + std::to_string(A.rows) + ", cols = " +
                std::to_string(A.cols) + ", nnz = " + std::to_string(A.nnz) + ")");
  };
  if (A.rows < 0 || A.cols < 0 || A.nnz < 0) fail("negative size");
  if (A.nnz > 2147483647 || A.rows > 2147483646) fail("32-bit indices cannot address this matrix");
  if (!A.rowptr || (A.nnz > 0 && (!A.colind || !A.values))) fail("missing arrays");
  if (A.rowptr[0] != 0 || A.rowptr[A.rows] != A.nnz) fail("rowptr must start at 0 and end at nnz");
  for (index_t r = 0; r < A.rows; ++r)
    if (A.rowptr[r + 1] < A.rowptr[r]) fail("rowptr decreases at row " + std::to_string(r));
  // An index outside the matrix would be an out-of-bounds read on the device: check once, here. Each
  // part finds its first bad entry; the lowest of them is the matrix's first.
  const int parts = scan_threads(A.nnz);
  std::vector<index_t> first_bad(static_cast<std::size_t>(parts), -1);
  run_parts(parts, [&](int t) {
    const index_t begin = A.nnz * t / parts, end = A.nnz * (t + 1) / parts;
    for (index_t j = begin; j < end; ++j)
      if (A.colind[j] < 0 || A.colind[j] >= A.cols) {
        first_bad[static_cast<std::size_t>(t)] = j;
        return;
      }
  });
  for (const index_t j : first_bad)
    if (j >= 0) fail("column index " + std::to_string(A.colind[j]) + " at entry " + std::to_string(j) + " is outside the matrix");
}

std::optional<UniformPattern> uniform_pattern(const CsrView &A)
{
  if (A.rows != A.cols || A.rows == 0 || A.nnz == 0) return std::nullopt;
  const int parts = scan_threads(A.nnz);
  const std::vector<index_t> bound = row_bounds(A, parts);
  struct Part {
    bool uniform = true;    // one off-diagonal value, at most one diagonal entry a row
    bool have_value = false;
    Scalar value = 0;       // its first off-diagonal value
    index_t entries = 0;    // its off-diagonal entries
  };
  std::vector<Part> part(static_cast<std::size_t>(parts));
  UniformPattern p;
  p.rowptr.resize_unwritten(static_cast<std::size_t>(A.rows) + 1);
  p.rowptr[0] = 0;
  std::vector<Scalar> diag(static_cast<std::size_t>(A.rows), Scalar{});

  // Pass 1: each part checks its rows and counts their off-diagonal entries into rowptr[r + 1].
  run_parts(parts, [&](int t) {
    Part &q = part[static_cast<std::size_t>(t)];
    for (index_t r = bound[static_cast<std::size_t>(t)]; r < bound[static_cast<std::size_t>(t) + 1]; ++r) {
      bool seen_diagonal = false;
      int count = 0;
      for (index_t j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j) {
        const Scalar v = A.values[j];
        if (A.colind[j] == r) {
          if (seen_diagonal) return void(q.uniform = false);
          seen_diagonal = true;
          diag[static_cast<std::size_t>(r)] = v;
          continue;
        }
        if (!q.have_value) q.value = v, q.have_value = true;
        else if (std::memcmp(&v, &q.value, sizeof v) != 0) return void(q.uniform = false);
        ++count;
      }
      p.rowptr[static_cast<std::size_t>(r) + 1] = count;
      q.entries += count;
    }
  });
  const Part *valued = nullptr;
  index_t entries = 0;
  for (const Part &q : part) {
    if (!q.uniform) return std::nullopt;
    if (q.have_value && !valued) valued = &q;
    if (q.have_value && std::memcmp(&q.value, &valued->value, sizeof q.value) != 0) return std::nullopt;
    entries += q.entries;
  }
  if (!valued) return std::nullopt; // diagonal only: the general kernels are as good
  if (entries > std::numeric_limits<int>::max()) return std::nullopt;
  p.offdiagonal = valued->value;

  // Pass 2: each part turns its counts into row pointers from its offset and copies its columns.
  p.colind.resize_unwritten(static_cast<std::size_t>(entries));
  std::vector<index_t> offset(static_cast<std::size_t>(parts), 0);
  for (int t = 1; t < parts; ++t) offset[static_cast<std::size_t>(t)] = offset[static_cast<std::size_t>(t) - 1] + part[static_cast<std::size_t>(t) - 1].entries;
  run_parts(parts, [&](int t) {
    auto at = static_cast<int>(offset[static_cast<std::size_t>(t)]);
    for (index_t r = bound[static_cast<std::size_t>(t)]; r < bound[static_cast<std::size_t>(t) + 1]; ++r) {
      for (index_t j = A.rowptr[r]; j < A.rowptr[r + 1]; ++j)
        if (A.colind[j] != r) p.colind[static_cast<std::size_t>(at++)] = A.colind[j];
      p.rowptr[static_cast<std::size_t>(r) + 1] = at;
    }
  });

  p.diagonal = diag[0];
  for (const Scalar &d : diag)
    if (std::memcmp(&d, &p.diagonal, sizeof d) != 0) {
      p.diagonal_vector = std::move(diag);
      break;
    }
  return p;
}

} // namespace cudalanczos::cuda
