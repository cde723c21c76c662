// A backend around another one: every operation of the four interfaces (backend.hpp) goes to the
// wrapped backend, its column indices shifted by offset(), so that a wrapper overrides only what it
// changes (ConstrainedBackend: the products and new directions, which must avoid its constraints;
// BInnerProductBackend: every inner product). A wrapper that needs one of Backend's references instead
// of the wrapped backend's operation (the B-inner product's steps) overrides it to call Backend's.
#pragma once

#include "core/backend.hpp"

#include <cstdint>
#include <string>

namespace cudalanczos {

class WrappingBackend : public Backend {
public:
  /// Wraps `inner`, which must outlive this.
  explicit WrappingBackend(Backend &inner) : inner_(inner) {}

  // BasisStorage
  std::string name() const override { return inner_.name(); }
  BackendKind kind() const override { return inner_.kind(); }
  index_t local_size() const override { return inner_.local_size(); }
  index_t global_size() const override { return inner_.global_size(); }
  void resize_basis(int ncols) override { inner_.resize_basis(ncols); }
  int basis_columns() const override { return inner_.basis_columns() - off_; }
  void set_random(int j, std::uint64_t seed) override { inner_.set_random(j + off_, seed); }
  void set_column(int j, const Scalar *x) override { inner_.set_column(j + off_, x); }
  void get_column(int j, Scalar *x) const override { inner_.get_column(j + off_, x); }
  bool get_column_device(int j, Scalar *x, void *stream) const override { return inner_.get_column_device(j + off_, x, stream); }
  bool set_column_device(int j, const Scalar *x, void *stream) override { return inner_.set_column_device(j + off_, x, stream); }
  void project(int first, int k, int col, Scalar *out) override { inner_.project(first + off_, k, col + off_, out); }
  void project_with(int first, int k, int col, int with, Scalar *out) override
  {
    inner_.project_with(first + off_, k, col + off_, with + off_, out);
  }
  double subtract(int first, int k, const Scalar *coef, int col) override { return inner_.subtract(first + off_, k, coef, col + off_); }
  void update(int first, int k, const Scalar *coef, int col) override { inner_.update(first + off_, k, coef, col + off_); }
  void scale(int col, double alpha) override { inner_.scale(col + off_, alpha); }
  void combine(int first, int k, const Scalar *coef, int dst) override { inner_.combine(first + off_, k, coef, dst + off_); }
  /// This backend's columns start at offset() of the wrapped basis: a rotation of its leading columns
  /// is the wrapped backend's rotate_from there (through this one's rotate_from, which a wrapper may change).
  void rotate(int k, int m, const Scalar *Q, int ldq) override { rotate_from(0, k, m, Q, ldq); }
  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override { inner_.rotate_from(first + off_, k, m, Q, ldq); }
  void copy_column(int src, int dst) override { inner_.copy_column(src + off_, dst + off_); }
  void project_block(int first, int k, int col, int b, Scalar *out) override { inner_.project_block(first + off_, k, col + off_, b, out); }
  void update_block(int first, int k, const Scalar *C, int ldc, int col, int b) override
  {
    inner_.update_block(first + off_, k, C, ldc, col + off_, b);
  }
  void transform_block(int col, int b, const Scalar *M, int ldm) override { inner_.transform_block(col + off_, b, M, ldm); }
  void window_then_pass_block(int lo, int kw, int first, int k, int col, int b, Scalar *out_w, Scalar *out_p) override
  {
    inner_.window_then_pass_block(lo + off_, kw, first + off_, k, col + off_, b, out_w, out_p);
  }
  void synchronize() override { inner_.synchronize(); }

  // OperatorMap
  void apply_operator(int src, int dst) override { inner_.apply_operator(src + off_, dst + off_); }
  void set_operator_scale(int e) override { inner_.set_operator_scale(e); }
  void set_operator_filter(const ChebyshevFilter *filter) override { inner_.set_operator_filter(filter); }
  void apply_operator_block(int src, int dst, int b) override { inner_.apply_operator_block(src + off_, dst + off_, b); }

  // LanczosSteps
  void expand(int first, int last, double anorm, StepRecord *records) override { inner_.expand(first + off_, last + off_, anorm, records); }
  /// The wrapped backend's pass always starts at its column 0: this one's pass over 0..reach-1 covers the
  /// columns before offset() too (the constraints of a ConstrainedBackend, which every step must avoid).
  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override
  {
    check_partial_reach("WrappingBackend::expand_partial", first, reach);
    inner_.expand_partial(first + off_, last + off_, reach + off_, anorm, records);
  }
  void queue_steps(int first, int last, int reach, double anorm) override
  {
    if (reach >= 0) check_partial_reach("WrappingBackend::queue_steps", first, reach);
    inner_.queue_steps(first + off_, last + off_, reach < 0 ? -1 : reach + off_, anorm);
  }
  void collect_steps(StepRecord *records) override { inner_.collect_steps(records); }
  int cancel_steps() override { return inner_.cancel_steps(); }

  // ProjectedEigensolver
  bool projected_eigen(int n, const double *S, int lds, double *w, double *Z, int ldz) override
  {
    return inner_.projected_eigen(n, S, lds, w, Z, ldz);
  }

protected:
  /// The wrapped column of this backend's column 0.
  int offset() const { return off_; }
  void set_offset(int off) { off_ = off; }

  Backend &inner_;

private:
  int off_ = 0;
};

} // namespace cudalanczos
