#include "core/block_lanczos.hpp"

#include "core/block_omega.hpp"
#include "core/driver_support.hpp"
#include "core/scaling.hpp"
#include "core/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace cudalanczos::detail {

bool block_variant_applies(const Settings &s, index_t n)
{
  return s.variant == Variant::ThickRestart && s.block_size > 1 && static_cast<index_t>(s.ncv) + s.block_size <= n;
}

namespace {

// Column-major. Scalar: the projected blocks V^H A V are complex Hermitian in the complex build (the
// coupling R of a block to the next is a full b x b matrix, not a real beta), so this driver's projected
// matrix is Hermitian block tridiagonal/arrowhead, diagonalized by hermitian_eigen.
using Matrix = std::vector<Scalar>;

// The block driver's own locking policy: a pair is locked two digits beyond where the single-vector
// driver locks it (docs/tuning.md#core-block-steps-lock-at-tol100).
constexpr double kBlockLockFactor = 1e-2;

// What a block thick-restart solve carries from one cycle to the next.
struct BlockRestartState {
  int locked = 0;         // columns 0..locked-1: converged, final
  int top = 0;            // columns whose projection is known; the block at top is the next to expand
  bool exhausted = false; // the basis spans the whole space
  bool verifying = false;
  int found = 0;          // wanted values found in the current verification round
  std::vector<double> locked_theta, locked_err, theta_all, err_all;
  LockedResiduals locked_res; // for the residual bounds
};

class BlockDriver {
public:
  BlockDriver(Backend &b, const Settings &s, const Callbacks &c)
      : b_(b), s_(s), c_(with_defaults(c, s)), n_(b.global_size()), B_(s.block_size), m_(s.ncv), ld_(s.ncv + s.block_size),
        omega_(ld_, B_)
  {
  }

  Result run()
  {
    validate();
    Result r = thick_restart();
    r.matvecs = matvecs_;
    r.matvecs_before_nev = matvecs_to_nev_ >= 0 ? matvecs_to_nev_ : matvecs_;
    r.matvecs_verification = matvecs_ - r.matvecs_before_nev;
    r.operator_passes = passes_;
    r.reductions = reductions_;
    r.breakdowns = breakdowns_;
    r.full_reorthogonalizations = full_passes_;
    r.switched_to_full = restarted_full_;
    r.ncv_used = m_;
    projected_.report(r);
    r.block_size = B_;
    r.orthogonality = detail::orthogonality(b_, static_cast<int>(r.eigenvalues.size()));
    return r;
  }

private:
  void validate() const
  {
    if (s_.nev < 1) throw Error("nev must be at least 1");
    if (s_.ncv < s_.nev + B_)
      throw Error("the block variant needs ncv >= nev + block size (ncv = " + std::to_string(s_.ncv) + ", nev = " +
                  std::to_string(s_.nev) + ", block size = " + std::to_string(B_) + ")");
    if (s_.reorthogonalization == Reorthogonalization::None)
      throw Error("block steps reorthogonalize (full or partial); none needs block size 1");
    if (!(s_.tol > 0)) throw Error("tol must be positive");
    if (s_.max_it < 1) throw Error("max_it must be at least 1");
    if (b_.basis_columns() < ld_) throw Error("the backend's basis is too small for ncv + block size");
    if (s_.mpd != 0 && s_.mpd < 2 * B_)
      throw Error("mpd (" + std::to_string(s_.mpd) + ") leaves no room for a block step past the kept vectors: block steps need mpd >= " +
                  std::to_string(2 * B_) + " (twice the block size), or 0 for no bound");
  }

  // Where a cycle may end: the basis, and mpd columns past the locked ones (Settings::mpd).
  int cycle_end() const { return s_.mpd > 0 ? std::min(m_, t_.locked + s_.mpd) : m_; }

  // ---------------------------------------------------------------------------------------------
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
  // With partial reorthogonalization (partial_step) a block from the operator passes over the window
  // and the kept columns only, and the block omega recurrence decides when it needs the whole basis.
  // `before` receives diag(W^H W) before any pass. Returns false when the basis spans the whole space
  // (no fresh direction exists): the block then has zero columns.
  bool orthonormalize(int k, int col, bool from_operator, Matrix &C, Matrix &R, std::vector<double> &before)
  {
    const int B = B_, ld = k + B;
    Matrix P(static_cast<std::size_t>(ld) * B), G(static_cast<std::size_t>(B) * B);
    C.assign(static_cast<std::size_t>(k) * B, Scalar(0));
    const bool partial = from_operator && partial_step(k);
    partial_steps_ += partial;
    const int window = partial ? k - std::max(t_.top, k - 2 * B) : from_operator && k > 2 * B ? 2 * B : 0;
    first_pass(k, col, window, C, G, before);
    double scale = *std::max_element(before.begin(), before.end());
    if (partial) scale = t_.top > 0 ? dgks_passes(t_.top, k, col, 2, C, G) : largest_diagonal(G);
    else if (k > 0) scale = dgks_passes(k, k, col, window ? 2 : 1, C, G);
    if (from_operator && !partial) force_full_ = false; // the full step Simon's rule asked for
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
    } else if (partial && omega_.step(H_.data(), ld_, col - B, C.data(), k, M.data(), anorm_)) {
      repeat_pass(k, col, P, G, C, R, dead); // Simon's rule: this block and the next get the whole basis
      ++full_passes_;
      whole = force_full_ = true;
    }
    // A fresh column stands outside the three-term recurrence: its product couples to every column, as
    // the first block after a restart does, so the next step passes over the whole basis.
    bool alive = true;
    for (int j = 0; j < B && alive; ++j)
      if (dead[j]) whole = force_full_ = true, alive = fresh_column(col + j, col + B);
    if (whole) omega_.after_full(col);
    return alive;
  }

  // Partial reorthogonalization applies to the step whose product goes to column k: the setting asks for
  // it, no wanted pair has needed more (partial_blocked_), Simon's rule asks no full step, and the window
  // (the last two blocks) leaves segment columns out.
  bool partial_step(int k) const
  {
    return s_.reorthogonalization == Reorthogonalization::Partial && !partial_blocked_ && !force_full_ && k - 2 * B_ > t_.top;
  }

  // Pass 1: the window's (its last `window` columns of 0..k-1), or the first full pass (window 0):
  // projections into C, the Gram matrix after it into G, and diag(W^H W) before it into `before`.
  void first_pass(int k, int col, int window, Matrix &C, Matrix &G, std::vector<double> &before)
  {
    const int B = B_;
    before.assign(B, 0.0);
    const int lo = k - (window ? window : k), kw = k - lo, ldw = kw + B;
    Matrix Pw(static_cast<std::size_t>(ldw) * B);
    b_.project_block(lo, kw, col, B, Pw.data());
    ++reductions_;
    for (int j = 0; j < B; ++j) {
      before[j] = real_part(Pw[kw + j + static_cast<std::size_t>(j) * ldw]);
      check_finite(before[j], "||A v||");
    }
    if (kw > 0) {
      b_.update_block(lo, kw, Pw.data(), ldw, col, B);
      accumulate(Pw, kw, C, lo, k);
    }
    gram_after(Pw, kw, G);
  }

  // Passes over columns 0..count-1 (C has leading dimension k), at most `passes`, repeated only where the
  // last took a column below half its squared length (DGKS). Full steps pass over the whole basis, twice
  // at most after a window; a partial step's pass over its kept and locked columns may be repeated too: a
  // block drifting into the span of locked copies of a multiple eigenvalue loses most of its length there,
  // and one classical pass would leave it carrying their rounding-level components, magnified. Returns the
  // largest squared column length the last pass met.
  double dgks_passes(int count, int k, int col, int passes, Matrix &C, Matrix &G)
  {
    double scale = 0;
    for (int pass = 0; pass < passes; ++pass) {
      std::vector<double> entering(B_);
      for (int j = 0; j < B_; ++j) entering[j] = real_part(G[j + static_cast<std::size_t>(j) * B_]);
      scale = range_pass(0, count, k, col, C, G);
      if (count == k) ++full_passes_;
      bool lost = false;
      for (int j = 0; j < B_; ++j) lost = lost || step_rule::lost_too_much(real_part(G[j + static_cast<std::size_t>(j) * B_]), entering[j]);
      if (!lost) break;
    }
    return scale;
  }

  // One pass over columns first..first+count-1: C (leading dimension ldc) gains its projections, G becomes
  // the Gram matrix after it. Returns the largest squared column length it met.
  double range_pass(int first, int count, int ldc, int col, Matrix &C, Matrix &G)
  {
    const int B = B_, ld = count + B;
    Matrix P(static_cast<std::size_t>(ld) * B);
    b_.project_block(first, count, col, B, P.data());
    ++reductions_;
    b_.update_block(first, count, P.data(), ld, col, B);
    accumulate(P, count, C, first, ldc);
    gram_after(P, count, G);
    double scale = 0;
    for (int j = 0; j < B; ++j) scale = std::max(scale, real_part(P[count + j + static_cast<std::size_t>(j) * ld]));
    return scale;
  }

  // DGKS for blocks: Q (the block after SVQB) lost most of its length, so it gets one more Gram-Schmidt
  // pass and SVQB, in which a direction that loses half its length again counts as in the span; C and R
  // are updated so that W = V C + Q R still holds.
  void repeat_pass(int k, int col, Matrix &P, Matrix &G, Matrix &C, Matrix &R, std::vector<char> &dead)
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

  double largest_diagonal(const Matrix &G) const
  {
    double x = 0;
    for (int j = 0; j < B_; ++j) x = std::max(x, real_part(G[j + static_cast<std::size_t>(j) * B_]));
    return x;
  }

  // C[lo:lo+k, :] += P[0:k, :] (P has leading dimension k + B, C leading dimension ldc).
  void accumulate(const Matrix &P, int k, Matrix &C, int lo, int ldc) const
  {
    for (int j = 0; j < B_; ++j)
      for (int i = 0; i < k; ++i) C[lo + i + static_cast<std::size_t>(j) * ldc] += P[i + static_cast<std::size_t>(j) * (k + B_)];
  }

  // G = (Gram block of P) - P[0:k]^H P[0:k]: the Gram matrix of W after subtracting V P[0:k] from it
  // (V orthonormal), made Hermitian.
  void gram_after(const Matrix &P, int k, Matrix &G) const
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
  double svqb(Matrix G, double floor2, Matrix &M, Matrix &R, std::vector<char> &dead) const
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

  static Matrix multiply(const Matrix &X, int rows, const Matrix &Y, int inner, int cols)
  {
    Matrix Z(static_cast<std::size_t>(rows) * cols, Scalar(0));
    for (int j = 0; j < cols; ++j)
      for (int l = 0; l < inner; ++l) {
        const Scalar y = Y[l + static_cast<std::size_t>(j) * inner];
        for (int i = 0; i < rows; ++i) Z[i + static_cast<std::size_t>(j) * rows] += X[i + static_cast<std::size_t>(l) * rows] * y;
      }
    return Z;
  }

  // Column j becomes a random unit vector orthogonal to columns 0..end-1 other than itself (two
  // Gram-Schmidt passes, single columns). False when none exists numerically.
  bool fresh_column(int j, int end)
  {
    ++breakdowns_;
    std::vector<Scalar> h(static_cast<std::size_t>(end) + 1);
    for (int attempt = 0; attempt < 3; ++attempt) {
      b_.set_random(j, next_seed());
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

  std::uint64_t next_seed() { return s_.seed + 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(++seeds_); }

  // The start block: column 0 is the caller's vector (or, given_start, one the driver put there) or a
  // random one, the others random.
  bool start_block(bool given_start = false)
  {
    if (!s_.initial_vector && !given_start) b_.set_random(0, s_.seed);
    else { // the caller's vector, of any size: normalized, its norm taken in range, before SVQB meets it
      int t = 0;
      const double q = squared_norm_in_range(b_, 0, t, reductions_);
      check_finite(q, "the start vector's norm");
      if (q > 0) b_.scale(0, 1.0 / std::sqrt(q)); // a zero one dies in SVQB and is replaced there
    }
    for (int j = 1; j < B_; ++j) b_.set_random(j, next_seed());
    Matrix C, R;
    std::vector<double> before;
    return orthonormalize(0, 0, false, C, R, before);
  }

  // Whether a wanted value (one of the nev best converged ones) may have more copies than the block space
  // could hold: B or more of the values at hand lie at it, the locked ones within the verification's
  // slack (wanted_edge), the active Ritz values within their residual. An active value counts only once
  // settled (error below sqrt(tol)): an eigenvalue of multiplicity d > B has B directions in the block
  // space, P_E X for the eigenspace E and the start block X, and they converge together, the worst
  // behind the best by at most 1 / sigma_min(P_E X) (the filter polynomial is the same on E), a factor
  // above 1e4 with probability of order 1e-8 for a random d x B block with d > B (P(sigma_min < t) is
  // about t^(d-B+1)). So when the wanted value has converged to tol, its copies in the space have
  // converged to sqrt(tol) but for that chance, the certificate's own. Counting every unconverged Ritz
  // value within its residual ran rounds for nothing (docs/tuning.md#core-block-steps-settled-copies).
  bool block_may_hide_copies(const RitzPairs &rp, const std::vector<double> &locked_theta) const
  {
    std::vector<double> conv(locked_theta), value(locked_theta), reach; // eigenvalues as reported (minus the shift)
    for (double t : locked_theta) reach.push_back(s_.tol * std::max(std::abs(t + s_.shift), anorm_));
    for (int q = 0; q < rp.na; ++q) {
      const double t = rp.w[rp.order[q]] - s_.shift;
      if (rp.err[q] < s_.tol) conv.push_back(t);
      if (!(rp.err[q] < std::sqrt(s_.tol))) continue; // not settled: not a copy the block space holds (above)
      value.push_back(t);
      reach.push_back(std::max(rp.res[q], s_.tol * std::max(std::abs(t + s_.shift), anorm_)));
    }
    if (static_cast<int>(conv.size()) < s_.nev) return true;
    std::sort(conv.begin(), conv.end(), [&](double x, double y) { return badness(s_, c_.eigenvalue(x)) < badness(s_, c_.eigenvalue(y)); });
    for (int i = 0; i < s_.nev; ++i) {
      int copies = 0;
      for (std::size_t j = 0; j < value.size(); ++j)
        if (std::abs(value[j] - conv[i]) <= reach[j] + s_.tol * std::max(std::abs(conv[i] + s_.shift), anorm_)) ++copies;
      if (copies >= B_) return true;
    }
    return false;
  }

  // Whether the cycle may end after e columns, before m: once the last missing wanted pairs (at most B)
  // have converged a digit beyond tol, as the single-vector driver's cycles end (driver/thick_restart.cpp,
  // end_early, which asks for two: its pairs are locked at tol, these at tol/100, and the margin here only
  // keeps the true residual safely below tol; docs/tuning.md#core-block-steps-early-end-margin). Each
  // block step brought its coefficients to the host already, so a look costs the
  // small eigenproblem and no wait. A value better than the converged ones may still surface in the rest
  // of the cycle, and only a verification round would then look for it: with the verification on, the
  // end of the cycle decides whether the Ritz values at hand make that round unnecessary
  // (block_may_hide_copies); without it, only once the solve has applied the operator as often as plain
  // thick restart before its first convergence test (unverified_early_end_products). With few
  // wanted pairs (the k = 1 a block of 2 is chosen for) this is what keeps a cycle of ncv = nev + 16 b
  // columns from running all its steps after the pair has converged.
  bool ends_early(int locked, int e, bool verifying)
  {
    if (verifying || s_.nev - locked > B_ || e - locked < 2 * B_) return false;
    if (!s_.verify && matvecs_ < unverified_early_end_products(s_, n_)) return false;
    const RitzPairs rp = ritz_pairs(locked, e);
    int newconv = 0;
    while (newconv < rp.na && rp.err[newconv] < 1e-1 * s_.tol) ++newconv;
    return locked + newconv >= s_.nev;
  }

  // One block step: W = A V[:, c:c+B] into columns c+B..c+2B-1, orthonormalized against the basis;
  // fills the projected matrix's columns c..c+B-1 and the coupling R below them. Coefficients against
  // the locked columns are dropped (their residuals are below tol: locking). False when the space is
  // exhausted.
  bool block_step(int c, int locked)
  {
    const int B = B_, w = c + B;
    b_.apply_operator_block(c, w, B);
    matvecs_ += B;
    ++passes_;
    Matrix C, R;
    std::vector<double> before;
    const bool ok = orthonormalize(w, w, true, C, R, before);
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

  // The Ritz pairs of the active block H[locked:e, locked:e], with residuals ||R y_last|| (R: the
  // coupling of the last block to the residual block at e); on the backend where it has the faster
  // eigensolver (Backend::projected_eigen: with many pairs the order is mpd, hundreds, every restart).
  RitzPairs ritz_pairs(int locked, int e)
  {
    RitzPairs rp = projected_pairs(locked, e);
    if (partial_floor() && raise_to_partial_floor(s_, c_, rp, std::min(s_.nev - t_.locked, rp.na / 2), anorm_)) partial_blocked_ = true;
    return rp;
  }

  RitzPairs projected_pairs(int locked, int e)
  {
    const int na = e - locked;
    return projected_.time(na, [&] {
      Matrix A(static_cast<std::size_t>(na) * na);
      for (int j = 0; j < na; ++j)
        for (int i = 0; i < na; ++i) A[i + static_cast<std::size_t>(j) * na] = H(locked + i, locked + j);
      return detail::ritz_pairs_hermitian(s_, c_, na, std::move(A), B_, true, [&](const Scalar *y_last) {
        double r2 = 0;
        for (int r = 0; r < B_; ++r) {
          Scalar t = 0;
          for (int l = 0; l < B_; ++l) t += H(e + r, e - B_ + l) * y_last[l];
          r2 += abs2(t);
        }
        return std::sqrt(r2);
      }, &b_);
    });
  }

  // Partial reorthogonalization leaves the Ritz vectors' residuals good to about omega_limit ||A||
  // (raise_to_partial_floor); a wanted position that floor keeps from tol turns it off for the rest of
  // the solve (partial_blocked_).
  bool partial_floor() const { return s_.reorthogonalization == Reorthogonalization::Partial && !partial_blocked_; }

  // ---------------------------------------------------------------------------------------------
  // The thick-restart loop of the single-vector driver (driver/thick_restart.cpp) with block steps: a
  // cycle extends the basis from the kept columns by whole blocks up to m columns, the active block of
  // the projected matrix is diagonalized, converged pairs are locked, the best half of the rest kept, and
  // the residual block follows them. Verification rounds start from a fresh random block; their first
  // cycle K_s(A, X) contains K_s(A, x_1), so the certificate counts s block steps.
  Result thick_restart()
  {
    H_.assign(static_cast<std::size_t>(ld_) * ld_, Scalar(0));
    Result r;
    omega_.begin_segment(0);
    t_.exhausted = !start_block();
    for (r.its = 1;; ++r.its) {
      const int e = extend_cycle(r.its);
      const int steps = (e - t_.top) / B_;
      RitzPairs rp = ritz_pairs(t_.locked, e);
      int newconv = 0;
      while (newconv < rp.na && rp.err[newconv] < s_.tol) ++newconv;
      const int nconv = t_.locked + newconv;
      all_approximations(s_, t_.locked_theta, t_.locked_err, rp, t_.theta_all, t_.err_all);
      if (c_.monitor) c_.monitor(r.its, nconv, t_.theta_all.data(), t_.err_all.data(), e);
      const CycleEnd end = decide_cycle_end(r, rp, nconv, newconv, steps);
      const int keep = kept_pairs(end, rp.na, newconv);
      const int kcols = t_.locked + keep;
      if (partial_blocked_ && !restarted_full_) {
        start_over_with_full_reorthogonalization(rp, e);
        continue;
      }
      rotate_to_kept(b_, rp, t_.locked, e, keep);
      if (end.done) {
        r.nconv = std::min(nconv, kcols);
        // Partial steps leave couplings of about omega_limit ||A|| to columns outside the window out of
        // the projected matrix, which the bound's rounding term does not cover: their pairs take the check.
        if (s_.exact_operator && partial_steps_ == 0)
          r.residual_bounds = residual_bounds(t_.locked_res, std::vector<double>(rp.res.begin(), rp.res.begin() + keep), anorm_, matvecs_, ld_);
        return return_pairs(r, kcols);
      }
      const int lock = lock_converged(rp, newconv, keep, end.inject);
      if (!end.inject) {
        for (int j = 0; j < B_; ++j) b_.copy_column(e + j, kcols + j); // ascending: safe if they overlap
      } else if (!start_round_block(kcols)) { // the locked vectors span everything
        r.nconv = nconv;
        r.reason = Reason::Converged;
        return return_pairs(r, kcols);
      }
      t_.locked += lock;
      t_.top = kcols;
      omega_.begin_segment(kcols);
    }
  }

  // Block steps from t_.top while whole blocks fit in m, ending early where ends_early allows; returns
  // where the cycle ended. Callbacks::tick after each block step (cycle `its`): a block step is one
  // backend call per operation already, so the ticks change nothing.
  int extend_cycle(int its)
  {
    int e = t_.top;
    const int end = cycle_end();
    while (!t_.exhausted && e + B_ <= end) {
      t_.exhausted = !block_step(e, t_.locked);
      e += B_;
      if (c_.tick) c_.tick(its, t_.locked, matvecs_);
      if (!t_.exhausted && e + B_ <= end && ends_early(t_.locked, e, t_.verifying)) break;
    }
    return e;
  }

  // end_cycle with block steps. A block Krylov space of a random block of B vectors holds B directions of
  // every eigenspace, so it finds every copy of an eigenvalue of multiplicity up to B without the
  // verification (BlockSteps.FindEveryCopyOfATripleEigenvalueWithoutVerification). Only a wanted value
  // that the Ritz values at hand show B times may have more copies than the block could see: then the
  // round runs; otherwise the verification is certified by these Ritz values and costs no product. A
  // round needs two blocks past the converged pairs.
  CycleEnd decide_cycle_end(Result &r, const RitzPairs &rp, int nconv, int newconv, int steps)
  {
    const bool skip_round =
        s_.verify && !t_.verifying && !t_.exhausted && nconv >= s_.nev && !block_may_hide_copies(rp, t_.locked_theta);
    Settings cycle_settings = s_;
    if (skip_round) cycle_settings.verify = false, ++r.block_certified;
    const int locked = t_.locked;
    CycleEnd end = end_cycle(cycle_settings, c_, r, t_.exhausted, nconv, newconv, m_ - nconv >= 2 * B_, verify_fresh_, rp,
                             t_.locked_theta, anorm_, t_.verifying, t_.found, [&](double worst, double slack) {
                               return certified_complement(s_, c_, rp.w, steps, n_, locked, worst, slack);
                             });
    if (matvecs_to_nev_ < 0 && nconv >= s_.nev) matvecs_to_nev_ = matvecs_; // what follows is verification
    verify_fresh_ = end.inject;
    if (end.inject) {
      t_.found = 0;
      if (m_ - nconv < 2 * B_) end.done = true, r.reason = Reason::Converged, r.verification_cut = true; // no room for a round
    }
    return end;
  }

  // Kept (driver_support's kept_pairs), with room for at least one block step after them.
  int kept_pairs(const CycleEnd &end, int na, int newconv) const
  {
    const int missing = s_.nev - t_.locked;
    return detail::kept_pairs(end.done, end.inject, na, newconv, missing,
                              restart_keep(s_.restart, na - newconv, missing - newconv, s_.mpd > 0 && s_.mpd < m_),
                              std::min(na, cycle_end() - B_ - t_.locked));
  }

  // Restart: the kept Ritz values on the diagonal; the next block step recomputes their coupling to the
  // block that follows them (the arrow), and drops the locked ones'. Lock what has converged two digits
  // beyond tol (all of it when a verification round starts): a locked pair's coupling is dropped from H
  // and its residual then adds to the true residual of every pair computed after it
  // (docs/tuning.md#core-block-steps-lock-at-tol100); a pair converged to tol but not locked stays among
  // the kept ones and keeps improving. Returns how many were locked.
  int lock_converged(const RitzPairs &rp, int newconv, int keep, bool inject)
  {
    const int lock = pairs_to_lock(rp, newconv, keep, kBlockLockFactor * s_.lock_margin * s_.tol, inject);
    std::fill(H_.begin(), H_.end(), Scalar(0));
    record_locked(rp, lock, s_.shift, t_.locked_theta, t_.locked_err, t_.locked_res);
    for (int i = 0; i < t_.locked + lock; ++i) H(i, i) = t_.locked_theta[i] + s_.shift;
    for (int q = lock; q < keep; ++q) H(t_.locked + q, t_.locked + q) = rp.w[rp.order[q]];
    return lock;
  }

  // A wanted pair needs more orthogonality than partial reorthogonalization kept (partial_blocked_): the
  // basis and the kept vectors carry that loss, and a projected matrix that takes them as orthonormal is
  // off by omega_limit ||A||, too much for such a pair. Start over with full reorthogonalization from the
  // sum of the locked vectors and the best Ritz vectors, which keeps most of the progress in one start
  // vector (as the single-vector driver does, driver/thick_restart.cpp).
  void start_over_with_full_reorthogonalization(const RitzPairs &rp, int e)
  {
    restarted_full_ = true;
    const std::vector<Scalar> coef = sum_of_best_vectors(rp, t_.locked, s_.nev, e);
    b_.combine(0, e, coef.data(), e); // column e, the residual block's first, is free now
    b_.copy_column(e, 0);
    std::fill(H_.begin(), H_.end(), Scalar(0));
    t_ = BlockRestartState{};
    matvecs_to_nev_ = -1;
    verify_fresh_ = false;
    omega_.begin_segment(0);
    t_.exhausted = !start_block(true);
  }

  // A verification round starts from a random block at column kcols, orthonormal to the locked vectors;
  // false when they span everything.
  bool start_round_block(int kcols)
  {
    for (int j = 0; j < B_; ++j) b_.set_random(kcols + j, next_seed());
    Matrix C, R;
    std::vector<double> before;
    return orthonormalize(kcols, kcols, false, C, R, before);
  }

  // Columns 0..kcols-1 are returned: their values and errors, converged ones in the order of `which`.
  Result return_pairs(Result &r, int kcols)
  {
    r.eigenvalues.assign(t_.theta_all.begin(), t_.theta_all.begin() + kcols);
    r.errors.assign(t_.err_all.begin(), t_.err_all.begin() + kcols);
    sort_converged(b_, r, [&](double value) { return badness(s_, c_.eigenvalue(value)); });
    if (partial_steps_ > 0 && !restarted_full_) orthonormalize_in_order(b_, kcols, reductions_); // partial's loss taken out
    return r;
  }

  Scalar &H(int i, int j) { return H_[i + static_cast<std::size_t>(j) * ld_]; }
  Scalar H(int i, int j) const { return H_[i + static_cast<std::size_t>(j) * ld_]; }

  Backend &b_;
  Settings s_;
  Callbacks c_;
  index_t n_;
  int B_;  // block size
  int m_;  // basis size (complete columns of a cycle at most)
  int ld_; // m_ + B_: the projected matrix's order, with the residual block's coupling
  Matrix H_;
  detail::ProjectedTime projected_; // the projected problems' count, largest order and host time
  double anorm_ = 0;
  long matvecs_ = 0, reductions_ = 0, full_passes_ = 0;
  long partial_steps_ = 0;          // block steps that passed over the window and the kept columns only
  BlockOmegaRecurrence omega_;      // their loss of orthogonality, estimated
  bool force_full_ = false;         // Simon's rule: the step after a full pass's trigger passes fully too
  bool partial_blocked_ = false;    // a wanted pair needs more than semi-orthogonality: full from now on
  bool restarted_full_ = false;     // the solve started over with full reorthogonalization
  long passes_ = 0;          // block products (one pass over A each)
  long matvecs_to_nev_ = -1; // products when nev pairs had first converged (-1: not yet)
  int breakdowns_ = 0;
  int seeds_ = 0;
  bool verify_fresh_ = false;
  BlockRestartState t_;
};

} // namespace

Result solve_block(Backend &backend, const Settings &settings, const Callbacks &callbacks)
{
  return BlockDriver(backend, settings, callbacks).run();
}

} // namespace cudalanczos::detail
