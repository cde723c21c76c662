// The host reference backend: the basis in a std::vector, every operation a plain loop.
//
// It is what every other backend is tested against, so it stays obviously right rather than fast.
// The operator is any callable y = A x on this rank's local arrays (in the PETSc layer: MatMult or
// STApply on Vecs placed over the arrays), so every Mat type works on it.
#pragma once

#include "core/backend.hpp"
#include "core/chebyshev_filter.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace cudalanczos {

/// y = A x on this rank's local entries.
using HostOperator = std::function<void(const Scalar *x, Scalar *y)>;

class HostBackend final : public Backend {
public:
  HostBackend(index_t local_size, index_t global_size, index_t row_offset, HostOperator op,
              Reducer reduce = serial_reducer());

  std::string name() const override { return "host"; }
  BackendKind kind() const override { return BackendKind::Host; }
  index_t local_size() const override { return n_; }
  index_t global_size() const override { return global_; }
  void resize_basis(int ncols) override;
  int basis_columns() const override { return ncols_; }
  void set_random(int j, std::uint64_t seed) override;
  void set_column(int j, const Scalar *x) override;
  void get_column(int j, Scalar *x) const override;
  void apply_operator(int src, int dst) override;
  void set_operator_scale(int e) override;
  void set_operator_filter(const ChebyshevFilter *filter) override;
  void project(int first, int k, int col, Scalar *out) override;
  void project_with(int first, int k, int col, int with, Scalar *out) override;
  double subtract(int first, int k, const Scalar *coef, int col) override;
  void update(int first, int k, const Scalar *coef, int col) override;
  void scale(int col, double alpha) override;
  void combine(int first, int k, const Scalar *coef, int dst) override;
  void rotate(int k, int m, const Scalar *Q, int ldq) override;
  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override;
  void copy_column(int src, int dst) override;

  /// Direct access for tests: column j of the basis.
  Scalar *column(int j) { return basis_.data() + static_cast<std::size_t>(j) * n_; }
  const Scalar *column(int j) const { return basis_.data() + static_cast<std::size_t>(j) * n_; }

private:
  void check_column(int j) const;
  /// y = p(A) x (set_operator_filter): the steps of for_each_chebyshev_step, each in a plain loop.
  void apply_filter(const Scalar *x, Scalar *y);

  index_t n_, global_, offset_;
  int ncols_ = 0;
  int scale_ = 0; // the operator is 2^scale_ times op_ (set_operator_scale)
  HostOperator op_;
  std::optional<ChebyshevFilter> filter_; // the operator is p(A) while set
  std::vector<Scalar> fw_, fa_, fb_;      // apply_filter: A T_k x and two Chebyshev vectors
  Reducer reduce_;
  std::vector<Scalar> basis_;
  std::vector<Scalar> work_; // rotate: n x m
};

} // namespace cudalanczos
