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

#include "core/wrapping_backend.hpp"

#include <vector>

namespace cudalanczos {

class ConstrainedBackend final : public WrappingBackend {
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
  int constraints() const { return offset(); }
  /// The columns 0..k-1 join Z as they are, without a copy or a pass: the converged vectors a solve
  /// returned there, orthonormal and orthogonal to Z already. The driver's columns are numbered from the
  /// first after them from then on. A solve in chunks (interval_solve.hpp) locks what each chunk found.
  void absorb_leading(int k);

  // What changes: a problem of d rows fewer, a basis that keeps room for Z, and every new direction (a
  // product, a start or fresh vector) made orthogonal to Z. The rest is WrappingBackend's: forwarded with
  // the columns shifted past Z (offset() = d), the steps' partial pass widened to cover Z.
  index_t global_size() const override { return inner_.global_size() - offset(); }
  void resize_basis(int ncols) override;
  void set_random(int j, std::uint64_t seed) override;
  void set_column(int j, const Scalar *x) override;
  bool set_column_device(int j, const Scalar *x, void *stream) override;
  void apply_operator(int src, int dst) override;
  void apply_operator_block(int src, int dst, int b) override;

private:
  /// Removes Z from the wrapped column c (two classical Gram-Schmidt passes); returns ||c||^2 after,
  /// and stores it before in *before when given.
  double project_out(int c, double *before = nullptr);
  /// The rest of add_constraint once the vector is in the wrapped column offset(): kept or dropped.
  bool keep_constraint();
  void check_room() const;

  int most_ = 0; // columns reserved for Z at the front of the wrapped basis; offset(): the vectors of Z kept
  std::vector<Scalar> h_;
};

} // namespace cudalanczos
