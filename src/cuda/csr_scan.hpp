// The host passes over a CSR matrix before its upload: the validation of its indices, the longest row,
// and the split into a uniform pattern (kernels::pattern_spmv's input). They read every index, so they
// run on several host threads over row ranges of about equal entry counts; a first solve of a 2e6-row
// graph waited for them longer than for the copy (docs/algorithm.md, "The first solve"). The results
// and the error messages do not depend on the thread count.
#pragma once

#include "cuda/cuda_backend.hpp"

#include <memory>
#include <optional>
#include <vector>

namespace cudalanczos::cuda {

/// Host indices whose entries start unwritten: the scans write every one on their own threads, so that
/// no zeroing pass over fresh memory comes first.
class IndexArray {
public:
  void resize_unwritten(std::size_t n)
  {
    values_.reset(n ? new int[n] : nullptr);
    size_ = n;
  }
  int *data() { return values_.get(); }
  const int *data() const { return values_.get(); }
  std::size_t size() const { return size_; }
  int &operator[](std::size_t i) { return values_[i]; }
  const int &operator[](std::size_t i) const { return values_[i]; }

private:
  std::unique_ptr<int[]> values_;
  std::size_t size_ = 0;
};

/// A square CSR matrix whose off-diagonal entries all hold one value, split into that value, the
/// pattern of the off-diagonal entries and the diagonal (one value, or a vector when the rows differ).
/// Explicit zeros count as entries like any other value.
struct UniformPattern {
  Scalar offdiagonal = 0, diagonal = 0;
  std::vector<Scalar> diagonal_vector; ///< empty: every row's diagonal is `diagonal`
  IndexArray rowptr, colind;
};

/// Throws unless A is a well-formed CSR matrix with 32-bit indices inside its bounds; the message
/// names the first offending row or entry.
void validate_csr(const CsrView &A);

/// The split of a validated A, or nothing when A is not square, has no off-diagonal entry, has two
/// entries in one place on the diagonal, or holds two different off-diagonal values (compared bit for
/// bit, so -0.0 and 0.0 differ and a NaN never matches: those go to the general kernels).
std::optional<UniformPattern> uniform_pattern(const CsrView &A);

/// The most entries in one row of a CSR matrix whose row pointers are on the host.
index_t longest_row_on_host(const int *rowptr, index_t rows);

/// The threads the scans use: 0 (the default) takes the hardware's, at most 16, and fewer for small
/// matrices; another count is taken as it is, however small the matrix. For tests.
void set_scan_threads(int threads);

} // namespace cudalanczos::cuda
