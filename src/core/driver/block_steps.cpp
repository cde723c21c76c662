// The block step of the Lanczos driver (driver.hpp; Settings::block_size > 1).
//
// Each step applies the operator to a block of b orthonormal vectors at once (one pass over A for all
// of them: a matrix-matrix product), orthogonalizes the b results against the whole basis by block
// classical Gram-Schmidt, twice, and orthonormalizes them among themselves by SVQB (Stathopoulos & Wu
// 2002: the eigen-decomposition of the b x b Gram matrix). The projected matrix is then banded
// (block tridiagonal plus the restart's arrow); it is kept dense, as the Gram-Schmidt coefficients
// give it, and diagonalized whole (block_cycle.cpp).
//
// Why: on a GPU one pass over A and over the basis costs about the same for b vectors as for one, so
// a block step brings b Krylov directions for the memory traffic of one; and a block Krylov space holds
// up to b copies of an eigenvalue, which a single vector's cannot.
#include "core/driver/driver.hpp"

#include "core/scaling.hpp"
#include "core/step_rule.hpp"
#include "core/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace cudalanczos::detail {

namespace {
// Z = X Y, X rows x inner and Y inner x cols (column-major, b x b sizes and a k x b coefficient block).
std::vector<Scalar> multiply(const std::vector<Scalar> &X, int rows, const std::vector<Scalar> &Y, int inner, int cols)
{
  std::vector<Scalar> Z(static_cast<std::size_t>(rows) * cols, Scalar(0));
  for (int j = 0; j < cols; ++j)
    for (int l = 0; l < inner; ++l) {
      const Scalar y = Y[l + static_cast<std::size_t>(j) * inner];
      for (int i = 0; i < rows; ++i) Z[i + static_cast<std::size_t>(j) * rows] += X[i + static_cast<std::size_t>(l) * rows] * y;
    }
  return Z;
}

} // namespace

// One block step: W = A V[:, c:c+B] into columns c+B..c+2B-1, orthonormalized against the basis;
// fills the projected matrix's columns c..c+B-1 and the coupling R below them. Coefficients against
// the locked columns are dropped (their residuals are below tol: locking). False when the space is
// exhausted.
bool Driver::block_step(int c, int locked)
{
  const int B = B_, w = c + B;
  b_.apply_operator_block(c, w, B);
  matvecs_ += B;
  ++passes_;
  Matrix C, R;
  std::vector<double> before;
  const bool ok = orthonormalize_block(w, w, true, C, R, before);
  for (int j = 0; j < B; ++j)
    for (int i = 0; i < w; ++i) {
      const Scalar v = i < locked ? Scalar(0) : C[i + static_cast<std::size_t>(j) * w];
      check_finite(v, "a block step's coefficient");
      H(i, c + j) = v; // v_i^H A v_{c+j}
      H(c + j, i) = conj_of(v);
    }
  // The diagonal block made exactly Hermitian (its diagonal real: v^H A v of a Hermitian A).
  for (int j = 0; j < B; ++j) {
    for (int i = 0; i < j; ++i) {
      const Scalar h = 0.5 * (H(c + i, c + j) + conj_of(H(c + j, c + i)));
      H(c + i, c + j) = h;
      H(c + j, c + i) = conj_of(h);
    }
    H(c + j, c + j) = real_part(H(c + j, c + j));
  }
  for (int j = 0; j < B; ++j) {
    anorm_ = std::max(anorm_, std::abs(H(c + j, c + j)));
    for (int i = 0; i < B; ++i) {
      H(w + i, c + j) = R[i + static_cast<std::size_t>(j) * B]; // A v_{c+j} = ... + sum_i q_i R(i, j)
      H(c + j, w + i) = conj_of(R[i + static_cast<std::size_t>(j) * B]);
    }
  }
  return ok;
}

// Orthonormalization of a block.
//
// W = V[:, col:col+B] is orthogonalized against V[:, 0:k] by block classical Gram-Schmidt, then
// orthonormalized by SVQB.
// - A block from the operator, W = A Q_j, has most of its length on the window Q_{j-1}, Q_j (the
//   block three-term recurrence), so the window's 2B columns go first, then one pass over the whole
//   basis, repeated only where it took a column's squared length below half of what it was (DGKS, as
//   the single-vector step does): after a restart the arrow couples W to every kept vector and the
//   repeat runs; elsewhere the pass meets rounding-level components and one is enough. Two full
//   passes on every step would cost two more reads of the basis, most of a block step on a large
//   sparse matrix (docs/tuning.md#core-block-steps-window-and-one-full-pass).
// - A block of random vectors gets two full passes (the second takes what rounding left of the
//   first: at rounding level unless W was nearly in the span, which the SVQB below sees).
// Then SVQB: with the Gram matrix
// G = W^H W = U L U^H, Q = W U L^(-1/2) and R = L^(1/2) U^H, so that W_in = V[:, 0:k] C + Q R.
// A direction whose L_i is below `floor2` is numerically in the span: its row of R is zero and Q
// gets a fresh random direction there (a breakdown, as beta = 0 in the single-vector step).
// SVQB's orthogonality is about eps / (L_i / ||W||^2), and a direction that lost most of its length
// also carries the span's rounding-level components, magnified by as much: where L_min falls below
// sqrt(eps) of what the pass started from, Q gets one more Gram-Schmidt pass and SVQB (DGKS for
// blocks), in which a direction that loses half its length again counts as in the span.
// With partial reorthogonalization (partial_block_step) a block from the operator passes over the window
// and the kept columns only, and the block omega recurrence decides when it needs the whole basis.
// `before` receives diag(W^H W) before any pass. Returns false when the basis spans the whole space
// (no fresh direction exists): the block then has zero columns.
bool Driver::orthonormalize_block(int k, int col, bool from_operator, Matrix &C, Matrix &R, std::vector<double> &before)
{
  const int B = B_, ld = k + B;
  Matrix P(static_cast<std::size_t>(ld) * B), G(static_cast<std::size_t>(B) * B);
  C.assign(static_cast<std::size_t>(k) * B, Scalar(0));
  const bool partial = from_operator && partial_block_step(k);
  blk_.partial_steps += partial;
  const int window = partial ? k - std::max(t_.start, k - 2 * B) : from_operator && k > 2 * B ? 2 * B : 0;
  Matrix next; // the projections of the pass after the window, where first_pass had them made with its own
  first_pass(k, col, window, partial ? t_.start : k, C, G, before, next);
  double scale = *std::max_element(before.begin(), before.end());
  if (partial) scale = t_.start > 0 ? dgks_passes(t_.start, k, col, 2, C, G, next) : largest_diagonal(G);
  else if (k > 0) scale = dgks_passes(k, k, col, window ? 2 : 1, C, G, next);
  if (from_operator && !partial) blk_.force_full = false; // the full step Simon's rule asked for
  // Below this, a direction is in the span: for a block from the operator, beta <= 16 eps ||A|| sqrt(k)
  // as in the single-vector step; for a block of random vectors, relative to their length.
  if (from_operator)
    for (double x : before) anorm_ = std::max(anorm_, std::sqrt(x));
  const double floor = from_operator ? step_rule::breakdown_floor(anorm_, ld + 1)
                                     : eps * std::sqrt(scale * ld);
  std::vector<char> dead(B, 0);
  Matrix M;
  const double smallest = svqb(G, floor * floor, M, R, dead);
  b_.transform_block(col, B, M.data(), B);
  bool whole = !partial; // the block is now orthogonal to the whole basis
  if (k > 0 && smallest < std::sqrt(eps) * scale) {
    repeat_pass(k, col, P, G, C, R, dead);
    whole = true;
  } else if (partial && blk_.omega.step(blk_.H.data(), blk_.ld, col - B, C.data(), k, M.data(), anorm_)) {
    repeat_pass(k, col, P, G, C, R, dead); // Simon's rule: this block and the next get the whole basis
    ++full_passes_;
    whole = blk_.force_full = true;
  }
  // A fresh column stands outside the three-term recurrence: its product couples to every column, as
  // the first block after a restart does, so the next step passes over the whole basis.
  bool alive = true;
  for (int j = 0; j < B && alive; ++j)
    if (dead[j]) whole = blk_.force_full = true, alive = fresh_column(col + j, col + B);
  if (whole) blk_.omega.after_full(col);
  return alive;
}

// Partial reorthogonalization applies to the step whose product goes to column k: the setting asks for
// it, no wanted pair has needed more (partial_blocked_), Simon's rule asks no full step, and the window
// (the last two blocks) leaves segment columns out.
bool Driver::partial_block_step(int k) const
{
  return s_.reorthogonalization == Reorthogonalization::Partial && !partial_blocked_ && !blk_.force_full && k - 2 * B_ > t_.start;
}

// Pass 1: the window's (its last `window` columns of 0..k-1), or the first full pass (window 0):
// projections into C, the Gram matrix after it into G, and diag(W^H W) before it into `before`. After a
// window, the pass that follows it over columns 0..next-1 comes with it, its projections into P, from
// one backend call (window_then_pass_block: the backend waits once for both, and its subtraction of
// the second may still run while the host works on P); P is empty otherwise.
void Driver::first_pass(int k, int col, int window, int next, Matrix &C, Matrix &G, std::vector<double> &before, Matrix &P)
{
  const int B = B_;
  before.assign(B, 0.0);
  const int lo = k - (window ? window : k), kw = k - lo, ldw = kw + B;
  const bool with_next = window > 0 && next > 0;
  Matrix Pw(static_cast<std::size_t>(ldw) * B);
  P.assign(with_next ? static_cast<std::size_t>(next + B) * B : 0, Scalar(0));
  if (with_next) b_.window_then_pass_block(lo, kw, 0, next, col, B, Pw.data(), P.data());
  else b_.project_block(lo, kw, col, B, Pw.data());
  ++reductions_;
  for (int j = 0; j < B; ++j) {
    before[j] = real_part(Pw[kw + j + static_cast<std::size_t>(j) * ldw]);
    check_finite(before[j], "||A v||");
  }
  if (kw > 0) {
    if (!with_next) b_.update_block(lo, kw, Pw.data(), ldw, col, B);
    accumulate(Pw, kw, C, lo, k);
  }
  gram_after(Pw, kw, G);
}

// Passes over columns 0..count-1 (C has leading dimension k), at most `passes`, repeated only where the
// last took a column below half its squared length (DGKS); the first from `projected` where it is not
// empty (first_pass made its projections and subtracted them). Full steps pass over the whole basis, twice
// at most after a window; a partial step's pass over its kept and locked columns may be repeated too: a
// block drifting into the span of locked copies of a multiple eigenvalue loses most of its length there,
// and one classical pass would leave it carrying their rounding-level components, magnified. Returns the
// largest squared column length the last pass met.
double Driver::dgks_passes(int count, int k, int col, int passes, Matrix &C, Matrix &G, const Matrix &projected)
{
  double scale = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<double> entering(B_);
    for (int j = 0; j < B_; ++j) entering[j] = real_part(G[j + static_cast<std::size_t>(j) * B_]);
    scale = range_pass(0, count, k, col, C, G, pass == 0 ? projected : Matrix{});
    if (count == k) ++full_passes_;
    bool lost = false;
    for (int j = 0; j < B_; ++j) lost = lost || step_rule::lost_too_much(real_part(G[j + static_cast<std::size_t>(j) * B_]), entering[j]);
    if (!lost) break;
  }
  return scale;
}

// One pass over columns first..first+count-1: C (leading dimension ldc) gains its projections, G becomes
// the Gram matrix after it. The projections are `projected` where it is not empty (made and subtracted
// already: window_then_pass_block). Returns the largest squared column length it met.
double Driver::range_pass(int first, int count, int ldc, int col, Matrix &C, Matrix &G, const Matrix &projected)
{
  const int B = B_, ld = count + B;
  Matrix P(projected);
  if (P.empty()) {
    P.resize(static_cast<std::size_t>(ld) * B);
    b_.project_block(first, count, col, B, P.data());
    b_.update_block(first, count, P.data(), ld, col, B);
  }
  ++reductions_;
  accumulate(P, count, C, first, ldc);
  gram_after(P, count, G);
  double scale = 0;
  for (int j = 0; j < B; ++j) scale = std::max(scale, real_part(P[count + j + static_cast<std::size_t>(j) * ld]));
  return scale;
}

// DGKS for blocks: Q (the block after SVQB) lost most of its length, so it gets one more Gram-Schmidt
// pass and SVQB, in which a direction that loses half its length again counts as in the span; C and R
// are updated so that W = V C + Q R still holds.
void Driver::repeat_pass(int k, int col, Matrix &P, Matrix &G, Matrix &C, Matrix &R, std::vector<char> &dead)
{
  const int B = B_, ld = k + B;
  b_.project_block(0, k, col, B, P.data());
  ++reductions_;
  b_.update_block(0, k, P.data(), ld, col, B);
  Matrix C3(static_cast<std::size_t>(k) * B, Scalar(0)), M2, R2;
  accumulate(P, k, C3, 0, k);
  gram_after(P, k, G);
  std::fill(dead.begin(), dead.end(), 0); // Q's dead columns are zero: they die again here
  svqb(G, 0.5, M2, R2, dead);             // Q had unit columns: half of one lost again means in the span
  b_.transform_block(col, B, M2.data(), B);
  // W = V C + Q1 R, Q1 = V C3 + Q2 R2: W = V (C + C3 R) + Q2 (R2 R).
  const Matrix C3R = multiply(C3, k, R, B, B), R2R = multiply(R2, B, R, B, B);
  for (std::size_t i = 0; i < C.size(); ++i) C[i] += C3R[i];
  R = R2R;
}

double Driver::largest_diagonal(const Matrix &G) const
{
  double x = 0;
  for (int j = 0; j < B_; ++j) x = std::max(x, real_part(G[j + static_cast<std::size_t>(j) * B_]));
  return x;
}

// C[lo:lo+k, :] += P[0:k, :] (P has leading dimension k + B, C leading dimension ldc).
void Driver::accumulate(const Matrix &P, int k, Matrix &C, int lo, int ldc) const
{
  for (int j = 0; j < B_; ++j)
    for (int i = 0; i < k; ++i) C[lo + i + static_cast<std::size_t>(j) * ldc] += P[i + static_cast<std::size_t>(j) * (k + B_)];
}

// G = (Gram block of P) - P[0:k]^H P[0:k]: the Gram matrix of W after subtracting V P[0:k] from it
// (V orthonormal), made Hermitian.
void Driver::gram_after(const Matrix &P, int k, Matrix &G) const
{
  const int B = B_, ld = k + B;
  G.assign(static_cast<std::size_t>(B) * B, Scalar(0));
  for (int j = 0; j < B; ++j)
    for (int i = 0; i < B; ++i) {
      Scalar g = 0.5 * (P[k + i + static_cast<std::size_t>(j) * ld] + conj_of(P[k + j + static_cast<std::size_t>(i) * ld]));
      for (int l = 0; l < k; ++l) g -= conj_of(P[l + static_cast<std::size_t>(i) * ld]) * P[l + static_cast<std::size_t>(j) * ld];
      G[i + static_cast<std::size_t>(j) * B] = g;
    }
}

// SVQB on the Gram matrix G (B x B): M = U L^(-1/2) and R = L^(1/2) U^H, with directions whose L_i is
// at most `floor2` marked dead (their column of M and row of R are zero). Returns the smallest L_i
// kept (or 0 when one died). Directions are ordered by decreasing L, so the block's first column is
// its longest direction.
double Driver::svqb(Matrix G, double floor2, Matrix &M, Matrix &R, std::vector<char> &dead) const
{
  const int B = B_;
  std::vector<double> L(B);
  Matrix U(static_cast<std::size_t>(B) * B);
  hermitian_eigen(B, G.data(), B, L.data(), U.data(), B);
  for (double x : L) check_finite(x, "the block's Gram matrix");
  std::vector<int> idx(B);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return L[a] > L[b]; });
  M.assign(static_cast<std::size_t>(B) * B, Scalar(0));
  R.assign(static_cast<std::size_t>(B) * B, Scalar(0));
  double smallest = L[idx[0]];
  for (int q = 0; q < B; ++q) {
    const int i = idx[q];
    if (!(L[i] > floor2)) {
      dead[q] = 1;
      smallest = 0;
      continue;
    }
    smallest = std::min(smallest, L[i]);
    const double s = std::sqrt(L[i]);
    for (int r = 0; r < B; ++r) {
      M[r + static_cast<std::size_t>(q) * B] = U[r + static_cast<std::size_t>(i) * B] / s;
      R[q + static_cast<std::size_t>(r) * B] = s * conj_of(U[r + static_cast<std::size_t>(i) * B]);
    }
  }
  return smallest;
}

// Column j becomes a random unit vector orthogonal to columns 0..end-1 other than itself (two
// Gram-Schmidt passes, single columns). False when none exists numerically.
bool Driver::fresh_column(int j, int end)
{
  ++breakdowns_;
  std::vector<Scalar> h(static_cast<std::size_t>(end) + 1);
  for (int attempt = 0; attempt < 3; ++attempt) {
    b_.set_random(j, next_block_seed());
    double after[2] = {0, 0};
    for (double &a : after) {
      if (j > 0) {
        b_.project(0, j, j, h.data());
        a = b_.subtract(0, j, h.data(), j);
        reductions_ += 2;
      }
      if (end > j + 1) {
        b_.project(j + 1, end - j - 1, j, h.data());
        a = b_.subtract(j + 1, end - j - 1, h.data(), j);
        reductions_ += 2;
      }
    }
    if (after[1] > 0 && after[1] >= kDgksEta2 * after[0]) {
      b_.scale(j, 1.0 / std::sqrt(after[1]));
      return true;
    }
  }
  b_.scale(j, 0.0);
  return false;
}

std::uint64_t Driver::next_block_seed() { return s_.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(++blk_.seeds); }

// The start block: column 0 is the caller's vector (or, given_start, one the driver put there) or a
// random one, the others random.
bool Driver::start_block(bool given_start)
{
  if (!s_.initial_vector && !given_start) b_.set_random(0, s_.seed);
  else { // the caller's vector, of any size: normalized, its norm taken in range, before SVQB meets it
    int t = 0;
    const double q = squared_norm_in_range(b_, 0, t, reductions_);
    check_finite(q, "the start vector's norm");
    if (q > 0) b_.scale(0, 1.0 / std::sqrt(q)); // a zero one dies in SVQB and is replaced there
  }
  for (int j = 1; j < B_; ++j) b_.set_random(j, next_block_seed());
  Matrix C, R;
  std::vector<double> before;
  return orthonormalize_block(0, 0, false, C, R, before);
}

// A verification round starts from a random block at column kcols, orthonormal to the locked vectors;
// false when they span everything.
bool Driver::start_round_block(int kcols)
{
  for (int j = 0; j < B_; ++j) b_.set_random(kcols + j, next_block_seed());
  Matrix C, R;
  std::vector<double> before;
  return orthonormalize_block(kcols, kcols, false, C, R, before);
}

} // namespace cudalanczos::detail
