// A deflation space (SLEPc's EPSSetDeflationSpace) for any backend: the solver works on the orthogonal
// complement of a few given vectors Z, as if the operator were (I - Z Z^T) A (I - Z Z^T) there.
//
// ConstrainedBackend wraps another backend. The first columns of the wrapped basis hold Z, orthonormal
// (add_constraint); the driver sees the columns after them as its own basis, numbered from 0, and a
// problem of global_size() - d rows. Everything that makes a new direction removes Z from it:
//   - expand / expand_partial / queue_steps: the wrapped backend's steps with their Gram-Schmidt pass
//     widened to cover Z (the full pass does so already: it covers every column before the new one; the
//     partial pass is given d more columns). The pass's coefficients are dropped from alpha, as for any
//     column outside the window: the step is the projected operator's;
//   - apply_operator / apply_operator_block (the thesis variant's steps, the block variant's): the
//     product, then two classical Gram-Schmidt passes against Z;
//   - set_random / set_column (start vectors, fresh directions): the same two passes.
// Where Z spans an invariant subspace (known eigenvectors, a Laplacian's constant vector) those passes
// remove rounding only; where it does not, they are the projection. Everything else only shifts column
// indices. The driver itself does not know that Z exists.
#pragma once

#include "core/backend.hpp"

#include <vector>

namespace cudalanczos {

class ConstrainedBackend final : public Backend {
public:
  /// Wraps `inner`, which must outlive this; room for up to `most` constraint vectors.
  ConstrainedBackend(Backend &inner, int most);

  /// Adds x (local_size() entries on this rank) to Z: orthogonalized against the vectors already there
  /// (two classical Gram-Schmidt passes) and normalized. A vector that is numerically in their span
  /// (its norm falls below sqrt(eps) of what it was) is dropped, as SLEPc's BVInsertConstraints drops
  /// it: returns whether x was kept. Call after resize_basis(), which forgets Z.
  bool add_constraint(const Scalar *x);
  /// add_constraint with x in device memory (Backend::set_column_device, ordered with `stream`): false
  /// when the wrapped backend's basis is not in device memory (nothing done), else true with *kept set.
  bool add_constraint_device(const Scalar *x, void *stream, bool *kept);
  /// The vectors of Z kept so far.
  int constraints() const { return d_; }
  /// The columns 0..k-1 join Z as they are, without a copy or a pass: the converged vectors a solve
  /// returned there, orthonormal and orthogonal to Z already. The driver's columns are numbered from the
  /// first after them from then on. A solve in chunks (interval_solve.hpp) locks what each chunk found.
  void absorb_leading(int k);

  std::string name() const override { return inner_.name(); }
  BackendKind kind() const override { return inner_.kind(); }
  index_t local_size() const override { return inner_.local_size(); }
  index_t global_size() const override { return inner_.global_size() - d_; }
  void resize_basis(int ncols) override;
  int basis_columns() const override { return inner_.basis_columns() - d_; }

  void set_random(int j, std::uint64_t seed) override;
  void set_column(int j, const Scalar *x) override;
  void get_column(int j, Scalar *x) const override { inner_.get_column(j + d_, x); }
  bool get_column_device(int j, Scalar *x, void *stream) const override { return inner_.get_column_device(j + d_, x, stream); }
  bool set_column_device(int j, const Scalar *x, void *stream) override;
  void apply_operator(int src, int dst) override;
  void set_operator_scale(int e) override { inner_.set_operator_scale(e); }
  void set_operator_filter(const ChebyshevFilter *filter) override { inner_.set_operator_filter(filter); }
  void project(int first, int k, int col, Scalar *out) override { inner_.project(first + d_, k, col + d_, out); }
  double subtract(int first, int k, const Scalar *coef, int col) override { return inner_.subtract(first + d_, k, coef, col + d_); }
  void update(int first, int k, const Scalar *coef, int col) override { inner_.update(first + d_, k, coef, col + d_); }
  void scale(int col, double alpha) override { inner_.scale(col + d_, alpha); }
  void combine(int first, int k, const Scalar *coef, int dst) override { inner_.combine(first + d_, k, coef, dst + d_); }
  void rotate(int k, int m, const Scalar *Q, int ldq) override { rotate_from(0, k, m, Q, ldq); }
  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override { inner_.rotate_from(first + d_, k, m, Q, ldq); }
  bool projected_eigen(int n, const double *S, int lds, double *w, double *Z, int ldz) override
  {
    return inner_.projected_eigen(n, S, lds, w, Z, ldz);
  }
  void copy_column(int src, int dst) override { inner_.copy_column(src + d_, dst + d_); }

  void expand(int first, int last, double anorm, StepRecord *records) override { inner_.expand(first + d_, last + d_, anorm, records); }
  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override;
  void queue_steps(int first, int last, int reach, double anorm) override;
  void collect_steps(StepRecord *records) override { inner_.collect_steps(records); }
  int cancel_steps() override { return inner_.cancel_steps(); }

  void apply_operator_block(int src, int dst, int b) override;
  void project_block(int first, int k, int col, int b, Scalar *out) override { inner_.project_block(first + d_, k, col + d_, b, out); }
  void update_block(int first, int k, const Scalar *C, int ldc, int col, int b) override
  {
    inner_.update_block(first + d_, k, C, ldc, col + d_, b);
  }
  void transform_block(int col, int b, const Scalar *M, int ldm) override { inner_.transform_block(col + d_, b, M, ldm); }
  void synchronize() override { inner_.synchronize(); }

private:
  /// Removes Z from the wrapped column c (two classical Gram-Schmidt passes); returns ||c||^2 after,
  /// and stores it before in *before when given.
  double project_out(int c, double *before = nullptr);
  /// The rest of add_constraint once the vector is in the wrapped column d_: kept or dropped.
  bool keep_constraint();
  void check_room() const;

  Backend &inner_;
  int most_ = 0; // columns reserved for Z at the front of the wrapped basis
  int d_ = 0;    // vectors of Z kept
  std::vector<Scalar> h_;
};

} // namespace cudalanczos
