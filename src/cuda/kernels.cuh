// The custom kernels of the CUDA backend, one launcher each: device pointers, sizes, a stream.
//
// Host-compilable on purpose (no __global__ here, only <cuda_runtime_api.h>): the backend and the
// tests, built by the host compiler, call the launchers; the kernels live in src/cuda/kernels/, one
// file per family, named in each section below (their shared device code: device_scalar.cuh for the
// scalar arithmetic and 16-byte loads, launch.cuh for grids, reductions.cuh for the fixed-order sums).
// Every launcher queues work on `stream` and returns at once (no synchronization, no allocation);
// a launch failure throws cudalanczos::Error. Sizes of 0 are valid everywhere.
//
// Reductions (multi_dot, window_multi_dot, subtract_norm2) are one launch each: every block writes its
// partial sums (warp shuffles, then one shared-memory step) to the workspace, and the last block to
// finish (an atomic counter in the workspace) adds them in block order into a device array. The order
// never depends on timing, so results are bit-for-bit reproducible run to run. Why one launch rather
// than a second, summing kernel: docs/tuning.md#cuda-reductions-in-one-launch.
//
// The vectors, matrices and coefficients are Scalars (core/scalar.hpp): double, or std::complex<double>
// in a build against a complex PETSc, the kernels compiled for the build's one scalar type (the kernels
// read std::complex<double> as double2: the same two doubles, 16-byte aligned, which every device array
// and every element offset into one is). Inner products conjugate the left factor (V^H w); norms and
// the step records are double. Complex arrays must be 16-byte aligned (cudaMalloc's are, and so is any
// whole number of entries past them).
#pragma once

#include "core/backend.hpp"
#include "core/chebyshev_filter.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace cudalanczos::cuda::kernels {

// --- (a) dense gemv: kernels/dense_gemv.cu ---------------------------------------------------------------

/// Tuning knobs of dense_gemv, for the benchmark; zeros mean "the default".
struct GemvTuning {
  int row_groups = 0;    ///< 64-row groups per block tile (1, 2 or 4); 0: default
  int blocks_per_sm = 0; ///< resident blocks per multiprocessor the grid is sized for; 0: occupancy
};

/// Bytes of `workspace` dense_gemv needs for a rows x cols matrix on the current device. The caller
/// allocates it once and zeroes it once (cudaMemset); dense_gemv leaves it zeroed again.
std::size_t dense_gemv_workspace_bytes(index_t rows, index_t cols);

/// y = A x, A rows x cols column-major with leading dimension lda >= max(1, rows), x of cols and y of
/// rows entries (y must not overlap A or x). A tiled shared-memory gemv after Fujimoto: each block
/// owns a tile of rows and a slice of columns, walks its slice in x tiles staged through shared memory,
/// each warp streaming whole column segments (16-byte loads when lda is even and A 16-byte aligned),
/// and the per-warp row sums are reduced in shared memory. When the columns are split over several
/// blocks (to fill the GPU with a short, wide row block), the last block of a row tile to finish adds
/// the slices' partial sums in slice order: deterministic, and no second launch.
/// Not reentrant on one workspace: launches sharing a workspace must be stream-ordered.
void dense_gemv(index_t rows, index_t cols, const Scalar *A, index_t lda, const Scalar *x, Scalar *y,
                void *workspace, std::size_t workspace_bytes, cudaStream_t stream, GemvTuning tuning = {});

// --- (b) sparse products: kernels/spmv.cu (one vector), kernels/spmm.cu (a block) ------------------------

/// y = A x for a CSR matrix with 32-bit indices (rowptr: rows + 1 entries, rowptr[0] = 0). A group of
/// 1..32 lanes per row, lanes striding the row and reduced by shuffles: `lanes` (a power of two up to
/// 32), or for 0 the power of two nearest above the average row length (a warp per row for long rows, a
/// few lanes for a stencil).
void csr_spmv(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values,
              const Scalar *x, Scalar *y, cudaStream_t stream, int lanes = 0);

/// y = d .* x + c P x for a square matrix whose off-diagonal entries all equal c: P is their pattern
/// (CSR without values, rowptr: rows + 1 entries, colind: `entries` column indices, none on the
/// diagonal), d the diagonal, one value d0 for every row when dvec is null, else dvec (rows entries).
/// The lane groups of csr_spmv; a stored entry moves 4 bytes instead of 12. `lanes` (a power of two up
/// to 32) per row; 0: the power of two at or above the mean row length, csr_spmv's rule.
void pattern_spmv(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                  const Scalar *dvec, const Scalar *x, Scalar *y, cudaStream_t stream, int lanes = 0);

/// Y = A X for the b columns of X (column-major, leading dimension ldx >= cols) into Y (ldy >= rows):
/// csr_spmv's row groups taking up to 8 columns per pass over the matrix. X is first interleaved into
/// `interleaved` (device, cols * b doubles), so that one stored entry's gather brings the b values of
/// its column in one or two 32-byte sectors; cuSPARSE's column-major SpMM gathers b sectors. Column c of
/// Y is bit for bit csr_spmv of column c at the same lane count. `lanes` as for pattern_spmv.
void csr_spmm(index_t rows, index_t cols, index_t nnz, const int *rowptr, const int *colind, const Scalar *values, int b,
              const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *interleaved, cudaStream_t stream, int lanes = 0);

/// pattern_spmv for the b columns of X, the way csr_spmm does csr_spmv's (square: ldx, ldy >= rows,
/// `interleaved` rows * b doubles). Column c of Y is bit for bit pattern_spmv of column c.
void pattern_spmm(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                  const Scalar *dvec, int b, const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *interleaved,
                  cudaStream_t stream, int lanes = 0);

/// Xr[i * b + c] = X[i + c * ldx] for i < rows, c < b (a column-major block interleaved row by row), and
/// back: Y[i + c * ldy] = Xr[i * b + c]. Exact copies.
void interleave_columns(index_t rows, int b, const Scalar *X, index_t ldx, Scalar *Xr, cudaStream_t stream);
void deinterleave_columns(index_t rows, int b, const Scalar *Xr, Scalar *Y, index_t ldy, cudaStream_t stream);

/// *longest = the most entries in one row of a CSR matrix (0 for no rows), rowptr and longest on the
/// device: what the row-length rules below need of a matrix whose row pointers are on the device.
void longest_row(index_t rows, const int *rowptr, int *longest, cudaStream_t stream);

/// Lanes per row for pattern_spmv from the mean and the longest row length: the power of two nearest
/// the mean over 8 (regular rows, the longest at most 4 times the mean: stencils) or over 2 (irregular:
/// more lanes share a hub). A rule of thumb fitted to three matrices: docs/tuning.md#cuda-pattern-spmv-lanes-per-row.
int pattern_lanes(index_t rows, index_t entries, index_t longest);

/// Lanes per row for csr_spmm where the default flavor takes it: the power of two nearest half the mean
/// row length (about 2 entries a lane), 1 to 32. At the mean row length itself, the rule csr_spmm falls back
/// to, most lanes idle on their last pass: docs/tuning.md#cuda-interleaved-sparse-block-products.
int csr_block_lanes(index_t rows, index_t nnz);

// --- (c) fused multi-dot: kernels/multi_dot.cu -----------------------------------------------------------

/// A condition the reduction kernels read on the device when they run: unless *lhs < factor * *rhs
/// they do nothing (out is left as it was). A null lhs means always run. It lets the second
/// Gram-Schmidt pass of a step be queued before anyone knows whether DGKS wants it. Both are squared
/// norms: a double, or the real part (the first double) of a Scalar such as multi_dot's out[k].
struct Gate {
  const double *lhs = nullptr;
  const double *rhs = nullptr;
  double factor = 0;
};

/// Doubles of `workspace` the reductions over at most k columns need: finish counters, then per-block
/// partials (Scalars: kDoublesPerScalar doubles each). The caller zeroes it once after allocating it (cudaMemset); every reduction leaves its
/// counters at zero again. Launches sharing a workspace must be stream-ordered.
std::size_t reduction_workspace_doubles(int k);

/// out[i] = V[:, i]^H w for 0 <= i < k and out[k] = w^H w (its imaginary part exactly 0), all into the
/// device array out (k + 1 entries). V is n x k, column stride ldv >= n. One pass over V and (per 8 columns) over w.
void multi_dot(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *w, Scalar *out, double *workspace,
               cudaStream_t stream, Gate gate = {});

/// The full Gram-Schmidt pass's projections with the three-term window folded in: with
/// w' = w - V[:, lo:lo+kl] g (kl = 1 or 2 window columns, among the k or after them: partial
/// reorthogonalization; g their coefficients, a device array), formed in registers and not stored, out[i] = V[:, i] . w' for i < k and out[k] = w' . w'.
/// window_subtract_norm2 then forms the same w' again (bit for bit) and subtracts the pass in the same
/// launch: the window's own subtract (a read and a write of w and a reduction) disappears, and the
/// result is what subtract_norm2 on the window, multi_dot and subtract_norm2 on the k columns give.
void window_multi_dot(index_t n, int k, const Scalar *V, index_t ldv, int lo, int kl, const Scalar *g, const Scalar *w,
                      Scalar *out, double *workspace, cudaStream_t stream);

/// The most columns a block of block_multi_dot and block_subtract may have.
inline constexpr int kBlockDotColumns = 4;

/// Doubles of `workspace` block_multi_dot needs for k columns and a block of b at the most blocks it
/// launches; a smaller one (reduction_workspace_doubles, zeroed the same way) makes it launch fewer.
std::size_t block_dot_workspace_doubles(int k, int b);

/// out = [V W]^H W for the b columns of W (1 <= b <= kBlockDotColumns, stride ldw >= n): rows 0..k-1 of
/// the (k + b) x b column-major out (device, leading dimension k + b) are V^H W, rows k..k+b-1 the Gram
/// matrix W^H W. One pass over V and W: multi_dot per column of W reads V b times. Each entry adds its
/// rows in multi_dot's order, so where both take one chunk of columns (k <= 4 and k + b <= 8) with the
/// workspace of block_dot_workspace_doubles(k, b), it is bit for bit multi_dot's entry for that column
/// of W over [V W] (a block step's window pass).
void block_multi_dot(index_t n, int k, const Scalar *V, index_t ldv, int b, const Scalar *W, index_t ldw, Scalar *out,
                     double *workspace, std::size_t workspace_doubles, cudaStream_t stream);

/// W -= V C for the b columns of W (C k x b column-major on the device, leading dimension ldc >= k; W's
/// columns outside V's), each column of W bit for bit what subtract_norm2 leaves; V read once for all b.
void block_subtract(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *C, int ldc, int b, Scalar *W, index_t ldw,
                    cudaStream_t stream);

// --- (d) fused subtract + norm: kernels/subtract_norm2.cu ------------------------------------------------

/// w -= V coef (V n x k, stride ldv; coef a device array of k) and *out = w^H w afterwards (out a device
/// pointer to a double: a norm). One pass: each entry of w is read, updated and squared in registers. w must not be a
/// column of V.
void subtract_norm2(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *coef, Scalar *w, double *out,
                    double *workspace, cudaStream_t stream, Gate gate = {});

/// w = (w - V[:, lo:lo+kl] g) - V coef, the two subtractions in that order (window_multi_dot), and
/// *out = w . w. One pass over w.
void window_subtract_norm2(index_t n, int k, const Scalar *V, index_t ldv, int lo, int kl, const Scalar *g,
                           const Scalar *coef, Scalar *w, double *out, double *workspace, cudaStream_t stream);

// --- (e) the end of a Lanczos step: kernels/lanczos_step.cu ----------------------------------------------

/// One step's record as finish_lanczos_step writes it on the device, copied to the host in one piece
/// (the device side of StepRecord). The flag bits are held in a double so that a queue of records is an
/// array of doubles, one copy.
struct DeviceStepRecord {
  static constexpr int kBreakdown = 1;  ///< flag bit: v_{j+1} = 0
  static constexpr int kSecondPass = 2; ///< flag bit: DGKS repeated the full pass
  double alpha;
  double beta;
  double norm_before; ///< ||A v_j||^2
  double anorm;
  double flags;       ///< kBreakdown | kSecondPass, each or none
};
static_assert(sizeof(DeviceStepRecord) == 5 * sizeof(double), "a step record is five doubles");

/// The end of step j of Backend::expand (k = j + 1) or expand_partial (k = reach <= j - 1), on the
/// device (backend.hpp states the rule): from the window pass's g (kl coefficients, then ||A v_j||^2),
/// the pass's h1 over columns 0..k-1 (k + 1 entries: coefficients and ||w||^2 before it) and ||w||^2
/// after it (after[1]), and the repeat's h2 and after[2] (used only if DGKS asked for it), it decides
/// alpha (the pass's coefficient of v_j counts when j < k), beta and breakdown exactly as the host
/// reference does (alpha from the real parts of the coefficients: A is Hermitian), scales w by 1/beta
/// (0 on breakdown) and writes the record `rec`. prev is the
/// previous record (its anorm field is read). One launch, no host trip.
void finish_lanczos_step(index_t n, int j, int k, int kl, const Scalar *g, const Scalar *h1, const Scalar *h2,
                         const double *after, double eta2, const DeviceStepRecord *prev, DeviceStepRecord *rec, Scalar *w,
                         cudaStream_t stream);

// --- (f) vector updates: kernels/vector_updates.cu, kernels/rotation.cu ----------------------------------

/// v *= alpha.
void scale(index_t n, double alpha, Scalar *v, cudaStream_t stream);

/// y = V coef (V n x k, stride ldv; coef a device array of k); y = 0 when k = 0. y outside V.
void combine(index_t n, int k, const Scalar *V, index_t ldv, const Scalar *coef, Scalar *y, cudaStream_t stream);

/// The most columns transform_columns takes (a block step's b; SVQB's transform of the block).
inline constexpr int kTransformColumns = 8;

/// V[:, 0:b] = V[:, 0:b] M in place, 1 <= b <= kTransformColumns, M b x b column-major (leading dimension
/// ldm) in host memory: each row's b entries read once and written once, in one launch (a gemm into a
/// workspace and a copy back take two launches per row block of the workspace).
void transform_columns(index_t n, int b, Scalar *V, index_t ldv, const Scalar *M, int ldm, cudaStream_t stream);

/// Output columns per thread of rotate, and the most output columns it takes: every column group of a
/// row reads all of Q for its rows, which beyond 4 groups costs more than cuBLAS's dgemm and copy back
/// (docs/tuning.md#cuda-restart-rotation-at-most-32-columns).
inline constexpr int kRotateOutputs = 8;
inline constexpr int kRotateMaxOutputs = 4 * kRotateOutputs;

/// V[:, 0:m] = V[:, 0:k] Q in place (a thick restart's rotation), in one pass over the rows: Qt is Q
/// transposed, k rows of ldqt (a multiple of kRotateOutputs, >= m) Scalars on the device, zero past m
/// in each row, so that a thread reads its coefficients with 16-byte loads. Each row of the result is
/// summed over p = 0..k-1 in order (fused multiply-adds). 0 <= m <= kRotateMaxOutputs; V n x k, ldv >= n.
void rotate(index_t n, int k, int m, Scalar *V, index_t ldv, const Scalar *Qt, int ldqt, cudaStream_t stream);

/// v[i] = random_entry(seed, row_offset + i): the host backend's start vector, bit for bit.
void set_random(index_t n, std::uint64_t seed, index_t row_offset, Scalar *v, cudaStream_t stream);

// --- (g) a polynomial filter's step: kernels/chebyshev_step.cu ----------------------------------------------

/// Step `step` of applying a Chebyshev filter (core/chebyshev_filter.hpp: chebyshev_step), entry by entry
/// over n entries: next = alpha w + beta cur + gamma prev and y = (accumulate ? y : 0) + nu cur + mu next,
/// with w = A cur formed before. One pass: w, cur, prev (and y when accumulating) read once, next and y
/// written once; y is not read without `accumulate` (it may hold anything, NaN included). next may be
/// prev (each entry is read before it is overwritten) and cur may be prev (step 1); next and y must be
/// arrays of their own otherwise (an exact alias is an Error).
void chebyshev_step(index_t n, const ChebyshevStep &step, const Scalar *w, const Scalar *cur, const Scalar *prev,
                    Scalar *next, Scalar *y, cudaStream_t stream);

/// chebyshev_step with its product fused in, for a square CSR matrix (csr_spmv's arguments) or a uniform
/// pattern (pattern_spmv's): each row's entry of w = A cur is formed by that product's lanes in its
/// order and handed to the step in registers, never stored. next and y are bit for bit what the product
/// into w and chebyshev_step give, at half the launches and without w's write and read. The same
/// aliasing as chebyshev_step (next may be prev; cur may be prev).
void csr_chebyshev_step(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values,
                        const ChebyshevStep &step, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                        cudaStream_t stream, int lanes = 0);
void pattern_chebyshev_step(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                            const Scalar *dvec, const ChebyshevStep &step, const Scalar *cur, const Scalar *prev,
                            Scalar *next, Scalar *y, cudaStream_t stream, int lanes = 0);

/// csr_chebyshev_step and pattern_chebyshev_step for b columns at once (a block filter: the matrix read
/// once per step for all b). cur, prev, next and y hold their b columns interleaved (row i's entries at
/// [i * b, i * b + b)); column c of next and y is bit for bit the single-column step's. The same aliasing.
void csr_chebyshev_step_block(index_t rows, index_t nnz, const int *rowptr, const int *colind, const Scalar *values,
                              const ChebyshevStep &step, int b, const Scalar *cur, const Scalar *prev, Scalar *next, Scalar *y,
                              cudaStream_t stream, int lanes = 0);
void pattern_chebyshev_step_block(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                                  const Scalar *dvec, const ChebyshevStep &step, int b, const Scalar *cur, const Scalar *prev,
                                  Scalar *next, Scalar *y, cudaStream_t stream, int lanes = 0);

// --- (h) the uniform-pattern split of a device CSR matrix: kernels/pattern_split.cu --------------------------

/// What pattern_survey finds: why the matrix has no uniform pattern (the kPattern* bits), and its first
/// off-diagonal entry (kNoEntry: none).
constexpr int kNoEntry = 2147483647;
constexpr int kPatternTwoDiagonals = 1;   ///< a row holds two entries on the diagonal
constexpr int kPatternValuesDiffer = 2;   ///< two off-diagonal values differ (bit for bit, as csr_scan's host split)
constexpr int kPatternDiagonalVaries = 4; ///< not a pattern failure: the diagonal is a vector, not one value
struct PatternSurvey {
  int flags = 0;
  int first_offdiagonal = kNoEntry;
};

/// The survey of a square CSR matrix on the device (rows x rows, 32-bit indices, none checked: the
/// caller's device matrix): counts[r] = row r's off-diagonal entries and counts[rows] = 0 (counts: rows
/// + 1 ints), diagonal[r] = its diagonal value (0 where it has none), and *survey (device memory).
void pattern_survey(index_t rows, const int *rowptr, const int *colind, const Scalar *values, int *counts,
                    Scalar *diagonal, PatternSurvey *survey, cudaStream_t stream);
/// Bytes of workspace pattern_offsets needs for `rows`.
std::size_t pattern_offsets_workspace_bytes(index_t rows);
/// pattern_rowptr = the exclusive sum of counts (rows + 1 entries each): the pattern's row pointers.
void pattern_offsets(index_t rows, const int *counts, int *pattern_rowptr, void *workspace, std::size_t workspace_bytes,
                     cudaStream_t stream);
/// pattern_colind = each row's off-diagonal column indices, in their order, from pattern_rowptr[r] on.
void pattern_compact(index_t rows, const int *rowptr, const int *colind, const int *pattern_rowptr, int *pattern_colind,
                     cudaStream_t stream);

// --- (i) 64-bit CSR indices as the kernels' 32-bit ones: kernels/narrow_indices.cu ---------------------------

/// out[i] = in[i] as an int, for i < n (device arrays): the caller has checked that every value fits
/// (row pointers at most nnz, column indices below cols, both at most 2^31 - 1).
void narrow_indices(index_t n, const std::int64_t *in, int *out, cudaStream_t stream);

} // namespace cudalanczos::cuda::kernels
