// A generalized Hermitian problem A x = lambda B x (B symmetric positive definite) for any backend: the
// operator the wrapped backend applies is SLEPc's ST operator, B^-1 A (STSHIFT) or (A - sigma B)^-1 B
// (STSINVERT), which is self-adjoint in the B-inner product <x, y>_B = x^T B y, not in the Euclidean one.
// Lanczos in the B-inner product keeps all of the symmetric theory: the basis is B-orthonormal, the
// projected matrix V^T B (Op V) is symmetric tridiagonal (or arrowhead after a thick restart), and its
// Ritz pairs are those of Op in that inner product.
//
// BInnerProductBackend wraps another backend and makes every inner product a B-inner product: project,
// project_block and subtract compute B w (w the column being orthogonalized) into a scratch column after
// the driver's basis and take V^T (B w) and w^T (B w) from it (Backend::project_with: one reduction).
// The purely linear operations (apply_operator, update, scale, combine, rotate, copy_column, the block
// operations) go to the wrapped backend unchanged. The steps of expand / expand_partial / queue_steps are
// Backend's reference steps (backend.cpp), built on project / subtract, so they are B-orthogonal too;
// so are the driver's orthogonality measure, its verification round and its true-residual check, which
// then measures ||Op x - theta x||_B. The driver itself does not know that B exists.
//
// B w is computed once per orthogonalization pass, from w as it is (no recurrence for B V that could
// drift from the vectors): three products with B per Lanczos step, five when DGKS repeats the pass. The
// scratch column remembers whose product it holds, so that a second project of an unchanged column
// (project_block projects each column twice) reuses it.
#pragma once

#include "core/wrapping_backend.hpp"

#include <functional>
#include <vector>

namespace cudalanczos {

/// Wrapped column dst = B times wrapped column src (src != dst) of `inner`.
using ColumnOperator = std::function<void(Backend &inner, int src, int dst)>;
/// y = B x on this rank's local entries, host arrays.
using VectorOperator = std::function<void(const Scalar *x, Scalar *y)>;

/// A ColumnOperator for any backend through get_column / set_column and a host product: correct
/// everywhere, two copies of a column per product (host to device and back for a device backend).
ColumnOperator host_round_trip(VectorOperator B);

class BInnerProductBackend final : public WrappingBackend {
public:
  /// Wraps `inner`, which must outlive this; `apply_b` computes B times a wrapped column.
  BInnerProductBackend(Backend &inner, ColumnOperator apply_b);

  /// Products with B so far (for -eps_view and the tests).
  long b_products() const { return b_products_; }

  // What changes: the basis (one scratch column more), every inner product (project, subtract), the
  // columns whose B-product the scratch column may hold (each write drops it), and the operations below
  // that must stay Backend's references. The name, sizes, operator scale, projected eigensolver and the
  // wait are the wrapped backend's (WrappingBackend).
  void resize_basis(int ncols) override;
  int basis_columns() const override { return ncols_; }

  void set_random(int j, std::uint64_t seed) override;
  void set_column(int j, const Scalar *x) override;
  void get_column(int j, Scalar *x) const override;
  /// The wrapped backend's device copies (the solve's results and a start vector stay on the device
  /// where it has them); a column set this way drops its B-product like set_column.
  bool get_column_device(int j, Scalar *x, void *stream) const override;
  bool set_column_device(int j, const Scalar *x, void *stream) override;
  void apply_operator(int src, int dst) override;
  void project(int first, int k, int col, Scalar *out) override;
  double subtract(int first, int k, const Scalar *coef, int col) override;
  void update(int first, int k, const Scalar *coef, int col) override;
  void scale(int col, double alpha) override;
  void combine(int first, int k, const Scalar *coef, int dst) override;
  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override;
  void copy_column(int src, int dst) override;
  void apply_operator_block(int src, int dst, int b) override;
  void update_block(int first, int k, const Scalar *C, int ldc, int col, int b) override;
  void transform_block(int col, int b, const Scalar *M, int ldm) override;

  // Backend's references, built on the B-inner products above: the wrapped backend's own (a device's
  // fused steps, its one-pass projections) compute Euclidean inner products and must not be used.
  void project_with(int first, int k, int col, int with, Scalar *out) override { BasisStorage::project_with(first, k, col, with, out); }
  void project_block(int first, int k, int col, int b, Scalar *out) override { BasisStorage::project_block(first, k, col, b, out); }
  void window_then_pass_block(int lo, int kw, int first, int k, int col, int b, Scalar *out_w, Scalar *out_p) override
  {
    BasisStorage::window_then_pass_block(lo, kw, first, k, col, b, out_w, out_p);
  }
  void expand(int first, int last, double anorm, StepRecord *records) override { Backend::expand(first, last, anorm, records); }
  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override
  {
    Backend::expand_partial(first, last, reach, anorm, records);
  }
  void queue_steps(int first, int last, int reach, double anorm) override { Backend::queue_steps(first, last, reach, anorm); }
  void collect_steps(StepRecord *records) override { Backend::collect_steps(records); }
  int cancel_steps() override { return Backend::cancel_steps(); }
  /// A filter's recurrence would have to be B-orthogonal too: refused, as Backend refuses it.
  void set_operator_filter(const ChebyshevFilter *filter) override { Backend::set_operator_filter(filter); }

private:
  void check_column(int j) const;
  /// The scratch column holds B v_col afterwards.
  void ensure_b(int col);
  /// Columns first..first+count-1 changed: a product of one of them in the scratch column is stale.
  void changed(int first, int count = 1);
  /// w^T B w for column col (scratch holding B w): a negative value beyond rounding means B is not
  /// positive definite, an error; one within rounding (w numerically zero) is 0.
  double checked_norm2(int col, double s);

  ColumnOperator apply_b_;
  int         ncols_   = 0;  // the driver's columns; the scratch column is the wrapped column ncols_
  int         holds_   = -1; // the column whose B-product the scratch column holds; -1: none
  long        b_products_ = 0;
};

} // namespace cudalanczos
