// A backend that forwards Backend's pure virtual operations to another one, with set_operator_scale
// (a wrapper that kept Backend's would refuse every scaled problem) and update (the inner backend's own,
// without the norm): the base of the backends that change or watch one part of the contract
// (EagerQueueBackend, the counting backend of the block steps' test, test_complex_hermitian's check of
// the default project_with, bench/timed_backend.hpp). The other operations with a default
// (project_with, expand, the queue, the block operations) stay Backend's, which builds them from the
// forwarded ones, unless a subclass forwards them too.
#pragma once

#include "core/backend.hpp"

#include <cstdint>

namespace cudalanczos::testing {

class ForwardingBackend : public Backend {
public:
  explicit ForwardingBackend(Backend &inner) : b_(inner) {}

  BackendKind kind() const override { return b_.kind(); }
  index_t local_size() const override { return b_.local_size(); }
  index_t global_size() const override { return b_.global_size(); }
  void resize_basis(int ncols) override { b_.resize_basis(ncols); }
  int basis_columns() const override { return b_.basis_columns(); }
  void set_random(int j, std::uint64_t seed) override { b_.set_random(j, seed); }
  void set_column(int j, const Scalar *x) override { b_.set_column(j, x); }
  void get_column(int j, Scalar *x) const override { b_.get_column(j, x); }
  void apply_operator(int src, int dst) override { b_.apply_operator(src, dst); }
  void set_operator_scale(int e) override { b_.set_operator_scale(e); }
  void project(int first, int k, int col, Scalar *out) override { b_.project(first, k, col, out); }
  double subtract(int first, int k, const Scalar *coef, int col) override { return b_.subtract(first, k, coef, col); }
  void update(int first, int k, const Scalar *coef, int col) override { b_.update(first, k, coef, col); }
  void scale(int col, double alpha) override { b_.scale(col, alpha); }
  void combine(int first, int k, const Scalar *coef, int dst) override { b_.combine(first, k, coef, dst); }
  void rotate(int k, int m, const Scalar *Q, int ldq) override { b_.rotate(k, m, Q, ldq); }
  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override { b_.rotate_from(first, k, m, Q, ldq); }
  bool projected_eigen(int n, const double *S, int lds, double *w, double *Z, int ldz) override
  {
    return b_.projected_eigen(n, S, lds, w, Z, ldz);
  }
  void copy_column(int src, int dst) override { b_.copy_column(src, dst); }

protected:
  Backend &b_;
};

} // namespace cudalanczos::testing
