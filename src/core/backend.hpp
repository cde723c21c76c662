// The narrow interface between the Lanczos driver and the machine that stores the vectors.
//
// The driver (lanczos_driver.hpp) knows neither PETSc nor CUDA: every operation on long vectors goes
// through a Backend. The backend owns a basis of `basis_columns()` columns, each `local_size()` long
// (this rank's rows); the driver addresses columns by index. Operations are fused so that one Lanczos
// step costs one operator application and one or two global reductions:
//
//   apply_operator  w = A v
//   project         h = V[:, first:first+k]^H w  and  w^H w           (one pass, one reduction)
//   project_with    h = V[:, first:first+k]^H u  and  w^H u           (the B-inner products, u = B w)
//   subtract        w -= V[:, first:first+k] h,  returns w^H w         (one pass, one reduction)
//   update          w -= V[:, first:first+k] h                         (one pass, no reduction)
//   expand          whole Lanczos steps with full reorthogonalization (the thick-restart driver's
//                   inner loop); a GPU backend keeps their scalars on the device and waits once
//   expand_partial  the same steps with the pass over the kept vectors only (partial reorthogonalization)
//   queue_steps     expand or expand_partial without waiting: the driver looks at the Ritz values of the
//                   steps before while a device runs these (collect_steps / cancel_steps end it)
//   *_block         the same on b columns at once (block Lanczos): one pass over A or the basis
//
// Every scalar a backend returns is already summed over all ranks (through the Reducer it was built
// with), so the driver is the same for one rank and for many.
//
// Vectors hold Scalars (scalar.hpp: double, or std::complex<double> with a complex PETSc). Every
// coefficient array that multiplies or comes from vectors (project's out, subtract/update/combine's
// coef, rotate's Q, the block calls' matrices) is Scalar too, and inner products are conjugated in the
// left factor: project gives V^H w. Norms, scale factors and the StepRecord's alpha and beta are double
// (the operator is Hermitian: alpha_j = v_j^H A v_j is real, and its rounding-level imaginary part is
// dropped). In the real build Scalar is double and nothing of this shows.
//
// The host backend (host/host_backend.hpp) is the reference: plain loops, obviously right. Every other
// backend is tested against it.
#pragma once

#include "core/scalar.hpp"
#include "core/step_rule.hpp"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace cudalanczos {

using index_t = std::int64_t;

struct ChebyshevFilter; // chebyshev_filter.hpp

/// Sums `count` doubles over all ranks, in place (MPI_Allreduce in the PETSc layer; nothing serially).
/// Scalars are summed as kDoublesPerScalar doubles each.
using Reducer = std::function<void(double *values, int count)>;

/// A reducer for a single process.
inline Reducer serial_reducer()
{
  return [](double *, int) {};
}

/// Thrown for a bad argument or a state the caller must fix; the PETSc layer turns it into an error.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What one Lanczos step of Backend::expand found (see there).
struct StepRecord {
  double alpha = 0;       ///< v_j . A v_j, the coefficients of v_j of every Gram-Schmidt pass summed
  double beta = 0;        ///< ||w|| after orthogonalization; 0 on breakdown
  double norm_before = 0; ///< ||A v_j||^2, before orthogonalization
  double anorm = 0;       ///< running estimate of ||A|| after this step
  bool breakdown = false; ///< w was numerically in the span of v_0..v_j: v_{j+1} is set to 0
  bool second_pass = false; ///< DGKS asked for a second pass over the whole basis
};

using step_rule::kDgksEta2;

/// The largest |e| of Backend::set_operator_scale: 2^e x stays finite for |x| <= 2^23 (a unit vector's
/// entries are at most 1), and 2^-e is a normal number.
inline constexpr int kMaxScaleExponent = 1000;

/// Where a backend keeps the basis and applies the operator: what the PETSc layer decides by (device
/// columns for the BV, B on the device), never by the -eps_view label.
enum class BackendKind { Host, Cuda };

// The interface is four focused ones, each of which a wrapper may change on its own
// (wrapping_backend.hpp forwards every operation to a wrapped backend, so that a wrapper overrides only
// what it changes):
//   BasisStorage          the basis: its columns, their inner products and linear combinations
//   OperatorMap           the operator the steps apply: A, 2^e A (scaling) or p(A) (a polynomial filter)
//   LanczosSteps          whole steps, and the queue that runs them ahead of a look
//   ProjectedEigensolver  a faster eigensolver for the restart's projected problem, where there is one
// Backend is all four, with the reference steps.

/// The basis: `basis_columns()` columns of `local_size()` rows on this rank, addressed by index, and the
/// operations on them that take no product with the operator.
class BasisStorage {
public:
  virtual ~BasisStorage() = default;

  /// Short name shown by -eps_view ("host", "cuda"): a label, not a kind to decide by.
  virtual std::string name() const = 0;
  /// Where the basis lives; a wrapper forwards its inner backend's.
  virtual BackendKind kind() const = 0;

  /// Rows of each basis column held by this rank.
  virtual index_t local_size() const = 0;
  /// Global number of rows (sum of local_size over ranks).
  virtual index_t global_size() const = 0;

  /// (Re)allocates the basis to `ncols` columns. Contents afterwards are unspecified.
  virtual void resize_basis(int ncols) = 0;
  virtual int basis_columns() const = 0;

  /// v_j = pseudo-random vector in [-1, 1]. Entry i is a function of (seed, global row index i) only,
  /// so the same seed gives the same global vector for any number of ranks and on every backend.
  virtual void set_random(int j, std::uint64_t seed) = 0;
  /// v_j = x, x being this rank's local_size() entries on the host.
  virtual void set_column(int j, const Scalar *x) = 0;
  /// x = v_j (this rank's local_size() entries, to the host).
  virtual void get_column(int j, Scalar *x) const = 0;

  /// The same between the basis and device memory, for a backend whose basis lives on a device: x holds
  /// local_size() entries in memory that device can address (a CUDA PETSc's VECCUDA array). `stream` is
  /// the caller's stream (a cudaStream_t; null is the legacy default stream, a stream too) and orders the
  /// copy with the caller's work without a host wait: the copy runs after the work queued on `stream` so
  /// far, and the work queued on `stream` afterwards runs after the copy. Return false, doing nothing,
  /// where the basis is not in device memory (this default: the host backend): use get/set_column then.
  virtual bool get_column_device(int j, Scalar *x, void *stream) const
  {
    (void)j, (void)x, (void)stream;
    return false;
  }
  virtual bool set_column_device(int j, const Scalar *x, void *stream)
  {
    (void)j, (void)x, (void)stream;
    return false;
  }

  /// out[i] = v_{first+i}^H v_col for 0 <= i < k, and out[k] = v_col^H v_col (real: its imaginary part
  /// is 0). Globally reduced, one reduction. The columns first..first+k-1 may include col itself.
  virtual void project(int first, int k, int col, Scalar *out) = 0;

  /// out[i] = v_{first+i}^H v_with for 0 <= i < k, and out[k] = v_col^H v_with. Globally reduced. With
  /// v_with = B v_col these are the B-inner products V^H B v_col and v_col^H B v_col of a generalized
  /// problem (BInnerProductBackend). The default takes two project() calls (two reductions); an override
  /// takes one. The columns may overlap.
  virtual void project_with(int first, int k, int col, int with, Scalar *out);

  /// v_col -= sum_{i<k} coef[i] v_{first+i}; returns v_col^H v_col afterwards, globally reduced.
  /// The columns first..first+k-1 must not include col.
  virtual double subtract(int first, int k, const Scalar *coef, int col) = 0;

  /// v_col -= sum_{i<k} coef[i] v_{first+i}, without the norm: no reduction, no wait for the device.
  /// The default calls subtract() and drops the norm.
  virtual void update(int first, int k, const Scalar *coef, int col) { subtract(first, k, coef, col); }

  /// v_col *= alpha.
  virtual void scale(int col, double alpha) = 0;

  /// v_dst = sum_{i<k} coef[i] v_{first+i}; dst outside first..first+k-1.
  virtual void combine(int first, int k, const Scalar *coef, int dst) = 0;

  /// V[:, 0:m] = V[:, 0:k] Q, with Q a k x m column-major matrix (leading dimension ldq >= k), m <= k.
  /// Used for thick restart and to form Ritz vectors; columns m..k-1 are unspecified afterwards.
  virtual void rotate(int k, int m, const Scalar *Q, int ldq) = 0;

  /// V[:, first:first+m] = V[:, first:first+k] Q (Q k x m, ldq >= k, m <= k); the columns before `first`
  /// stay as they are, columns first+m..first+k-1 are unspecified afterwards. A thick restart rotates
  /// only the active columns past the locked ones, without a Q padded by an identity of the locked
  /// size. Default: rotate() with that padded Q.
  virtual void rotate_from(int first, int k, int m, const Scalar *Q, int ldq);

  /// v_dst = v_src.
  virtual void copy_column(int src, int dst) = 0;

  // ---- Blocks of b contiguous columns (block steps, driver/block_steps.cpp). The defaults loop over the
  // single-column operations above and are the reference; a GPU backend runs each as one
  // matrix-matrix product (one pass over the basis for all b columns).

  /// out = [V[:, first:first+k]  V[:, col:col+b]]^H V[:, col:col+b]: the k x b projections, then the
  /// b x b Gram matrix of the block below them; (k + b) x b, column-major, leading dimension k + b.
  /// Globally reduced (an override: one reduction). The ranges may overlap.
  virtual void project_block(int first, int k, int col, int b, Scalar *out);

  /// V[:, col:col+b] -= V[:, first:first+k] C, C k x b column-major with leading dimension ldc >= k.
  /// No reduction. The ranges must not overlap.
  virtual void update_block(int first, int k, const Scalar *C, int ldc, int col, int b);

  /// V[:, col:col+b] = V[:, col:col+b] M, M b x b column-major with leading dimension ldm >= b.
  virtual void transform_block(int col, int b, const Scalar *M, int ldm);

  /// A block step's first two Gram-Schmidt passes: out_w = project_block(lo, kw, col, b) (the window,
  /// (kw + b) x b), update_block(lo, kw, out_w, kw + b, col, b), then out_p = project_block(first, k, col,
  /// b) ((k + b) x b) of the block so reduced and update_block(first, k, out_p, k + b, col, b). This
  /// default makes those four calls and is the reference. An override may subtract with the coefficients
  /// where it computed them, wait once for both results, and return while the second subtraction still
  /// runs: the caller's host work on out_p (the Gram matrix, SVQB) overlaps it. kw >= 1; the window and
  /// columns first..first+k-1 must not overlap the block.
  virtual void window_then_pass_block(int lo, int kw, int first, int k, int col, int b, Scalar *out_w, Scalar *out_p);

  /// Waits for queued work; errors from asynchronous work surface here at the latest.
  virtual void synchronize() {}

};

/// The operator a step applies to basis columns: A, or after set_operator_scale / set_operator_filter
/// 2^e A or p(A).
class OperatorMap {
public:
  virtual ~OperatorMap() = default;

  /// v_dst = A v_src  (src != dst), A being the operator times 2^e after set_operator_scale(e).
  virtual void apply_operator(int src, int dst) = 0;

  /// From now on the operator is 2^e A: apply_operator, apply_operator_block and the steps of expand
  /// apply it. solve() scales an operator whose norm lies outside the range where squared norms are safe
  /// into that range (docs/algorithm.md, "Scaling into range"); a power of two, so that every product is
  /// the unscaled one times 2^e exactly. e > 0 (a tiny operator) multiplies the input column by 2^e
  /// before the product and restores it after, so that small entries meet normal numbers, not subnormal
  /// ones; e < 0 (a huge operator) multiplies the output after the product, which cannot overflow then.
  /// |e| <= kMaxScaleExponent. Backend's takes e = 0 only: a backend that cannot scale refuses a
  /// problem that needs it rather than solving it wrongly.
  virtual void set_operator_scale(int e) = 0;

  /// From now on the operator is p(A), a polynomial filter (chebyshev_filter.hpp), instead of A:
  /// apply_operator, apply_operator_block and the steps of expand take `degree` products with A each,
  /// through the recurrence of chebyshev_step, in work vectors allocated here (not per product).
  /// nullptr: A again. The filter is copied. The operator must be unscaled (set_operator_scale(0)) while
  /// a filter is set, and the degree at least 1. Backend's refuses a filter: a backend that cannot
  /// apply one says so rather than solving with A.
  virtual void set_operator_filter(const ChebyshevFilter *filter) = 0;

  /// V[:, dst:dst+b] = A V[:, src:src+b]; the two ranges must not overlap. The default takes b products
  /// and is the reference; a GPU backend's one matrix-matrix product reads the matrix once for all b.
  virtual void apply_operator_block(int src, int dst, int b);

protected:
  /// Throws Error, naming `who`, unless `filter` can be set (set_operator_filter) on an operator scaled by 2^scale.
  static void check_filter(const char *who, const ChebyshevFilter &filter, int scale);

  /// Throws Error, naming `who`, unless |e| <= kMaxScaleExponent (set_operator_scale).
  static void check_scale_exponent(const char *who, int e);
};

/// Whole Lanczos steps on the basis and the operator: what the driver's inner loop calls.
class LanczosSteps {
public:
  virtual ~LanczosSteps() = default;

  /// Lanczos steps j = first .. last-1 with full reorthogonalization, the driver's inner loop as one
  /// call. Step j, with w the column j+1 and L = {j-1, j} (L = {0} at j = 0) the three-term window:
  ///   w = A v_j;  g = V[:, L]^H w;  w -= V[:, L] g;                 (the recurrence: removes alpha_j v_j
  ///                                                                  and beta_{j-1} v_{j-1}, the bulk)
  ///   h = V[:, 0:j+1]^H w;  w -= V[:, 0:j+1] h;                     (full reorthogonalization)
  ///   if ||w||^2 < kDgksEta2 ||w before h||^2: once more (h2), and "lost" if it dropped by that much again;
  ///   alpha_j = g_j + h_j + h2_j;  anorm = max(anorm, ||A v_j||, |alpha_j|);  beta_j = ||w||;
  ///   breakdown when lost or beta_j <= 16 eps anorm sqrt(j+2): v_{j+1} = 0 and beta_j = 0;
  ///   otherwise v_{j+1} = w / beta_j.
  /// The window pass takes the cancellation that makes DGKS repeat a pass over the whole basis (on a
  /// Laplacian beta_j^2 / ||A v_j||^2 is about 1/6, and classical Gram-Schmidt starting from A v_j then
  /// needs two full passes every step); the full pass then removes rounding-level components and is
  /// repeated only where w had large ones outside the window: the first step after a thick restart
  /// (the arrow couples v_j to every kept vector) and near-breakdowns.
  /// After a breakdown the later steps run on a zero vector and mean nothing: the caller discards
  /// them and continues from the breakdown. `anorm` is the estimate before step `first`; records
  /// receives last - first entries. Non-finite values are recorded, not thrown: the caller checks.
  /// Backend's does it with project/subtract/scale (one reduction each, any number of ranks) and is the
  /// reference; a backend may override it to run the steps without waiting for their scalars.
  virtual void expand(int first, int last, double anorm, StepRecord *records) = 0;

  /// expand() with the Gram-Schmidt pass (and its DGKS repeat) over columns 0..reach-1 only instead of
  /// the whole basis: partial reorthogonalization's step, the kept and locked vectors of a thick restart
  /// plus the three-term window, which lies outside them (0 <= reach <= first - 1, or reach = 0 at
  /// first = 0). alpha_j is then the window's coefficient alone. The driver keeps the rest of the basis
  /// semi-orthogonal by Simon's omega recurrence over the records and a full pass where it asks for one.
  virtual void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) = 0;

  /// The steps of expand (reach < 0) or expand_partial (pass over 0..reach-1), queued: their records come
  /// from collect_steps(), or cancel_steps() drops them. Between the two the caller makes no other call
  /// on the backend. This lets the driver decide on the host whether a cycle ends after the steps before
  /// (a look at their Ritz values) while a device already runs the next ones, where it would otherwise
  /// idle; a look that ends the cycle drops them. Backend's only remembers the call: collect_steps() runs
  /// it, cancel_steps() costs nothing, and a driver using the queue gets the same bits either way.
  virtual void queue_steps(int first, int last, int reach, double anorm) = 0;

  /// The records of the queued steps (last - first of them), as expand/expand_partial would give them.
  virtual void collect_steps(StepRecord *records) = 0;

  /// Drops the queued steps (a cycle that ends before them never reads the columns they wrote). Returns
  /// how many of them ran anyway: their operator applications count.
  virtual int cancel_steps() = 0;

protected:
  /// Throws Error, naming `who`, unless expand_partial's pass ends before the window (see there).
  static void check_partial_reach(const char *who, int first, int reach);
};

/// The restart's projected problem, where the backend has a faster dense eigensolver than the driver's.
class ProjectedEigensolver {
public:
  virtual ~ProjectedEigensolver() = default;

  /// The eigen-decomposition of a thick restart's projected matrix where the backend has a faster
  /// dense eigensolver than the driver's host one: S (n x n, column-major, lds >= n; lower triangle read,
  /// left unchanged) gives w ascending and Z (n x n, ldz >= n) its orthonormal eigenvectors, as
  /// symmetric_eigen. Returns false where the backend offers none for this order (the default): the
  /// driver then solves it on the host.
  virtual bool projected_eigen(int n, const double *S, int lds, double *w, double *Z, int ldz);

};

/// What the driver runs on: the basis, the operator, the steps and the projected problem's eigensolver.
/// Its own definitions are the references: the steps from project/subtract/scale and apply_operator, a
/// queue that only remembers the call, and an operator that refuses a scale and a filter.
class Backend : public BasisStorage, public OperatorMap, public LanczosSteps, public ProjectedEigensolver {
public:
  void set_operator_scale(int e) override;
  void set_operator_filter(const ChebyshevFilter *filter) override;
  void expand(int first, int last, double anorm, StepRecord *records) override;
  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override;
  void queue_steps(int first, int last, int reach, double anorm) override;
  void collect_steps(StepRecord *records) override;
  int cancel_steps() override;

protected:
  /// The reference steps of expand (reach < 0: the pass covers 0..j at step j) and expand_partial.
  void reference_steps(int first, int last, int reach, double anorm, StepRecord *records);

  /// Throws Error, naming `who`, when steps are queued (queue_steps) and when they are not (`want`).
  void check_queued(const char *who, bool want) const;

private:
  struct Queued { // the reference queue_steps: the call, run by collect_steps
    int first = 0, last = 0, reach = -1;
    double anorm = 0;
  };
  Queued queued_;
  bool pending_ = false;
};

} // namespace cudalanczos
