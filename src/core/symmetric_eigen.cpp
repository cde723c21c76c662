// Eigensolvers for the small projected problem: implicit symmetric tridiagonal QR (thesis Algorithm 3)
// and Householder tridiagonalization of a dense symmetric matrix. See symmetric_eigen.hpp.
//
// No threshold here is an absolute constant: deflation is relative to the neighbouring diagonal
// entries and machine epsilon, and the matrices are rescaled by powers of two (exact) so that the
// arithmetic neither overflows nor underflows whatever the scale of the input.
#include "core/symmetric_eigen.hpp"

#include "core/backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace cudalanczos {

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

/// A plane rotation with c*f + s*g = r, -s*f + c*g = 0 (as LAPACK's dlartg, up to the sign of r).
struct Givens {
  double c, s, r;
};

// f^2 + g^2 can neither overflow nor lose f or g to underflow between these (as dlartg's rtmin/rtmax).
const double kSafeSquareMin = std::sqrt(std::numeric_limits<double>::min() / eps);
const double kSafeSquareMax = std::sqrt(std::numeric_limits<double>::max() / 2);

Givens make_givens(double f, double g)
{
  if (g == 0.0) return {1.0, 0.0, f};
  if (f == 0.0) return {0.0, 1.0, g};
  const double af = std::abs(f), ag = std::abs(g);
  // sqrt where the squares are safe (one correctly rounded operation, several times cheaper than
  // hypot, which the rotations of the small eigenproblems spent most of their time in); hypot outside.
  const double r = af > kSafeSquareMin && af < kSafeSquareMax && ag > kSafeSquareMin && ag < kSafeSquareMax
                       ? std::sqrt(f * f + g * g)
                       : std::hypot(f, g);
  return {f / r, g / r, r};
}

/// The deflation test of the header: e_k is negligible next to its two diagonal neighbours.
/// An exactly zero e_k always deflates (also when both neighbours are zero).
bool negligible(double ek, double dk, double dk1)
{
  return std::abs(ek) <= eps * (std::abs(dk) + std::abs(dk1));
}

/// Z(:, p) = c Z(:, p) + s Z(:, q),  Z(:, q) = -s Z(:, p) + c Z(:, q): Z <- Z P^T, P the rotation
/// applied to rows p, q of T. O(n) per call, hence O(n^2) per eigenvalue over a run.
void rotate_columns(int n, double *Z, int ldz, int p, int q, double c, double s)
{
  double *zp = Z + static_cast<std::ptrdiff_t>(p) * ldz;
  double *zq = Z + static_cast<std::ptrdiff_t>(q) * ldz;
  for (int i = 0; i < n; ++i) {
    const double a = zp[i], b = zq[i];
    zp[i] = c * a + s * b;
    zq[i] = -s * a + c * b;
  }
}

/// 2 x 2 block [[a, b], [b, f]] at rows lo, lo+1, b != 0: one Jacobi rotation diagonalizes it exactly
/// (Golub & Van Loan, sym.schur2). Doing this directly, rather than a shifted QR step, avoids waiting
/// for b to fall below eps*(|a|+|f|), which never happens e.g. for a = f = 0 and b subnormal.
void solve_2x2(double *d, double *e, int lo, int n, double *Z, int ldz)
{
  const double a = d[lo], f = d[lo + 1], b = e[lo];
  // tau may overflow to +-inf when b is tiny next to f - a; then t = 0, which is the right limit.
  const double tau = (f - a) / (2.0 * b);
  const double t = (tau >= 0.0 ? 1.0 : -1.0) / (std::abs(tau) + std::hypot(1.0, tau));
  const double c = 1.0 / std::hypot(1.0, t);
  const double s = t * c;
  d[lo] = a - t * b;
  d[lo + 1] = f + t * b;
  e[lo] = 0.0;
  // J = [[c, s], [-s, c]] and J^T A J is diagonal; Z <- Z J, i.e. rotate_columns with (c, -s).
  if (Z) rotate_columns(n, Z, ldz, lo, lo + 1, c, -s);
}

/// Wilkinson shift: the eigenvalue of the trailing 2 x 2 [[a, b], [b, f]] closer to f, written so
/// that nothing cancels (the sign of delta picks the larger denominator) and nothing overflows.
double wilkinson_shift(double a, double b, double f)
{
  const double delta = 0.5 * a - 0.5 * f;
  if (delta == 0.0) return f - std::abs(b);
  const double denom = delta + std::copysign(std::hypot(delta, b), delta);
  return f - b * (b / denom);
}

/// One implicit QR sweep with Wilkinson shift on the unreduced block lo..hi (hi - lo >= 2): the
/// first rotation is that of the shifted QR step, the others chase the bulge along the band.
///
/// Direction (as LAPACK's dsteqr): the sweep runs from the end with the larger diagonal entry towards
/// the smaller one, taking the shift at, and converging at, the small end. Downwards (upward == false)
/// this is the QR step of Algorithm 3; upwards it is the same step on the reversed matrix J T J (a QL
/// step). Chasing a graded matrix from its small end instead loses the shift in rounding (d_lo - s
/// rounds to -s) and stalls.
void qr_sweep(double *d, double *e, int lo, int hi, bool upward, int n, double *Z, int ldz)
{
  // Position k = 0..hi-lo along the sweep -> index into d (and Z's columns); off-diagonal k joins
  // positions k and k+1.
  const auto di = [&](int k) { return upward ? hi - k : lo + k; };
  const auto ei = [&](int k) { return upward ? hi - 1 - k : lo + k; };
  const int m = hi - lo;

  const double shift = wilkinson_shift(d[di(m - 1)], e[ei(m - 1)], d[di(m)]);
  double x = d[di(0)] - shift;
  double z = e[ei(0)];
  for (int k = 0; k < m; ++k) {
    const Givens g = make_givens(x, z);
    const double c = g.c, s = g.s;
    // Positions k, k+1 rotated: T <- P T P^T with P = [[c, s], [-s, c]] on those rows and columns.
    if (k > 0) e[ei(k - 1)] = g.r; // (k, k-1) takes the bulge's norm; (k+1, k-1) becomes 0
    double &dk = d[di(k)], &dk1 = d[di(k + 1)], &ek = e[ei(k)];
    const double a = dk, b = ek, f = dk1;
    const double cs = c * s;
    dk = c * c * a + 2.0 * cs * b + s * s * f;
    dk1 = s * s * a - 2.0 * cs * b + c * c * f;
    ek = cs * (f - a) + (c * c - s * s) * b;
    if (k + 1 < m) {
      // The column rotation fills (k+2, k): the new bulge, chased by the next rotation.
      double &ek1 = e[ei(k + 1)];
      z = s * ek1;
      ek1 *= c;
      x = ek;
    }
    if (Z) rotate_columns(n, Z, ldz, di(k), di(k + 1), c, s);
  }
}

/// A block whose largest entry lies within 2^(+-kScaleExponent) is swept as it is: squares and products
/// of its entries (and of the shift, the bulge, the 2 x 2 terms) stay far inside the normal range.
constexpr int kScaleExponent = 256;

/// Multiplies d[lo..hi] and e[lo..hi-1] by 2^p: exact unless a result is subnormal.
void scale_block(double *d, double *e, int lo, int hi, int p)
{
  for (int k = lo; k <= hi; ++k) d[k] = std::ldexp(d[k], p);
  for (int k = lo; k < hi; ++k) e[k] = std::ldexp(e[k], p);
}

std::string where(const char *what, int i)
{
  return std::string(what) + "[" + std::to_string(i) + "]";
}

} // namespace

int tridiagonal_qr(int n, double *d, double *e, double *Z, int ldz) { return tridiagonal_qr(n, d, e, Z, ldz, n); }

int tridiagonal_qr(int n, double *d, double *e, double *Z, int ldz, int zrows)
{
  if (n < 0) throw Error("tridiagonal_qr: negative order n = " + std::to_string(n));
  if (n == 0) return 0;
  if (!d) throw Error("tridiagonal_qr: d is null");
  if (n > 1 && !e) throw Error("tridiagonal_qr: e is null");
  if (zrows < 0) throw Error("tridiagonal_qr: negative zrows = " + std::to_string(zrows));
  if (Z && ldz < std::max(zrows, 1))
    throw Error("tridiagonal_qr: ldz = " + std::to_string(ldz) + " < zrows = " + std::to_string(zrows));
  for (int k = 0; k < n; ++k)
    if (!std::isfinite(d[k])) throw Error("tridiagonal_qr: non-finite input " + where("d", k) + " = " + std::to_string(d[k]));
  for (int k = 0; k + 1 < n; ++k)
    if (!std::isfinite(e[k])) throw Error("tridiagonal_qr: non-finite input " + where("e", k) + " = " + std::to_string(e[k]));

  // Sweeps are counted over the whole matrix; Wilkinson's shift usually needs under 2 per eigenvalue.
  const long max_sweeps = 30L * n;
  int sweeps = 0;
  int hi = n - 1;
  while (hi > 0) {
    // Deflate at the bottom: d[hi] is an eigenvalue once e[hi-1] is negligible.
    if (negligible(e[hi - 1], d[hi - 1], d[hi])) {
      e[hi - 1] = 0.0;
      --hi;
      continue;
    }
    // Bottom-most unreduced block lo..hi: walk up to the next negligible off-diagonal. Splitting
    // anywhere (not only at the bottom) is what lets graded and nearly diagonal matrices converge.
    int lo = hi - 1;
    while (lo > 0 && !negligible(e[lo - 1], d[lo - 1], d[lo])) --lo;
    if (lo > 0) e[lo - 1] = 0.0;

    if (sweeps >= max_sweeps)
      throw Error("tridiagonal_qr: no convergence after " + std::to_string(sweeps) + " QR sweeps (n = " +
                  std::to_string(n) + ", unreduced block " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
    ++sweeps;

    if (hi - lo == 1) {
      solve_2x2(d, e, lo, zrows, Z, ldz);
      continue;
    }
    // Bring the block's largest entry to [1/2, 1) by a power of two, so that the shift and the
    // rotations can neither overflow (entries near DBL_MAX) nor lose everything to underflow. Only
    // where that could happen: the rescaling of every sweep was a visible part of their cost.
    double amax = 0.0;
    for (int k = lo; k <= hi; ++k) amax = std::max(amax, std::abs(d[k]));
    for (int k = lo; k < hi; ++k) amax = std::max(amax, std::abs(e[k]));
    int p = 0;
    std::frexp(amax, &p);
    if (p > -kScaleExponent && p < kScaleExponent) p = 0;
    if (p != 0) scale_block(d, e, lo, hi, -p);
    qr_sweep(d, e, lo, hi, std::abs(d[hi]) > std::abs(d[lo]), zrows, Z, ldz);
    if (p != 0) scale_block(d, e, lo, hi, p);
  }
  return sweeps;
}

void symmetric_eigen(int n, double *S, int lds, double *w, double *Z, int ldz) { symmetric_eigen(n, S, lds, w, Z, ldz, n); }

namespace {

// The argument checks of symmetric_eigen and hermitian_eigen (`who` names the function). False for n = 0:
// nothing to do.
bool check_eigen_arguments(const char *who, int n, const void *S, int lds, const double *w, const void *Z, int ldz, int zrows)
{
  const std::string name(who);
  if (n < 0) throw Error(name + ": negative order n = " + std::to_string(n));
  if (n == 0) return false;
  if (!S || !w) throw Error(name + ": S or w is null");
  if (lds < n) throw Error(name + ": lds = " + std::to_string(lds) + " < n = " + std::to_string(n));
  if (zrows < 0 || zrows > n)
    throw Error(name + ": zrows = " + std::to_string(zrows) + " outside 0..n = " + std::to_string(n));
  if (Z && ldz < std::max(zrows, 1))
    throw Error(name + ": ldz = " + std::to_string(ldz) + " < zrows = " + std::to_string(zrows));
  return true;
}

/// A dense n x n work matrix, column-major.
template <class T> struct Dense {
  std::size_t n;
  std::vector<T> a;
  explicit Dense(int order, T fill = T(0)) : n(static_cast<std::size_t>(order)), a(n * n, fill) {}
  T &operator()(int i, int j) { return a[static_cast<std::size_t>(j) * n + i]; }
};

/// The indices of d in ascending order of their values; stable_sort keeps ties deterministic.
std::vector<int> ascending_order(const std::vector<double> &d)
{
  std::vector<int> order(d.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return d[i] < d[j]; });
  return order;
}

// A full symmetric copy of S's lower triangle, in reversed order (A = P S P with P the reversal), scaled
// by 2^-p (exact) so that the Householder products cannot overflow; returns p. A thick restart's matrix
// is an arrowhead of the kept columns followed by a tridiagonal tail; reversed, the tail comes first and
// its columns are already tridiagonal, so their reflectors are the identity and are skipped: the
// reduction costs O(k^3) for k kept columns instead of O(n^3) (docs/tuning.md#core-reversed-reduction).
int reversed_scaled_copy(int n, const double *S, int lds, Dense<double> &a)
{
  double amax = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      const double v = S[static_cast<std::ptrdiff_t>(j) * lds + i];
      if (!std::isfinite(v))
        throw Error("symmetric_eigen: non-finite input S(" + std::to_string(i) + "," + std::to_string(j) +
                    ") = " + std::to_string(v));
      a(n - 1 - i, n - 1 - j) = a(n - 1 - j, n - 1 - i) = v;
      amax = std::max(amax, std::abs(v));
    }
  int p = 0;
  if (amax > 0.0) std::frexp(amax, &p);
  for (double &v : a.a) v = std::ldexp(v, -p);
  return p;
}

// The reflector of column k (Golub & Van Loan, Algorithm 8.3.1): H_k = I - tau v v^T, v(0) = 1, which
// zeroes A(k+2:n, k); d[k] and e[k] receive the diagonal entry and the new off-diagonal. False where the
// column is already tridiagonal: H_k = I (as dlarfg).
bool reflector(int n, int k, Dense<double> &a, double *d, double *e, std::vector<double> &v, double &tau)
{
  const int m = n - k - 1; // length of x = A(k+1:n, k)
  const double alpha = a(k + 1, k);
  // ||x(2:m)||, scaled by its largest entry so that the squares cannot overflow or underflow.
  double xmax = 0.0;
  for (int i = k + 2; i < n; ++i) xmax = std::max(xmax, std::abs(a(i, k)));
  double xnorm = 0.0;
  if (xmax > 0.0) {
    double ss = 0.0;
    for (int i = k + 2; i < n; ++i) ss += (a(i, k) / xmax) * (a(i, k) / xmax);
    xnorm = xmax * std::sqrt(ss);
  }
  d[k] = a(k, k);
  if (xnorm == 0.0) {
    e[k] = alpha;
    return false;
  }
  // As LAPACK's dlarfg: beta = -sign(alpha) ||x|| avoids cancellation in alpha - beta.
  const double beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
  tau = (beta - alpha) / beta;
  const double inv = 1.0 / (alpha - beta);
  v[0] = 1.0;
  for (int i = 1; i < m; ++i) v[i] = a(k + 1 + i, k) * inv;
  e[k] = beta;
  return true;
}

// Two-sided update of the trailing block B = A(k+1:n, k+1:n) by H_k:
//   p = tau B v,  w = p - (tau/2)(p^T v) v,  B <- B - v w^T - w v^T.
// B is symmetric (kept exactly so: the update adds the same two products to a(i, j) and a(j, i)), so row
// i of B is read as its column i: contiguous, unlike the row (docs/tuning.md#core-householder-loops).
void reflect_trailing(int n, int k, Dense<double> &a, const std::vector<double> &v, double tau, std::vector<double> &pw)
{
  const int m = n - k - 1;
  double pv = 0.0;
  for (int i = 0; i < m; ++i) {
    const double *bi = &a(k + 1, k + 1 + i);
    double sum = 0.0;
    for (int j = 0; j < m; ++j) sum += bi[j] * v[j];
    pw[i] = tau * sum;
    pv += pw[i] * v[i];
  }
  const double half = 0.5 * tau * pv;
  for (int i = 0; i < m; ++i) pw[i] -= half * v[i];
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) a(k + 1 + i, k + 1 + j) -= v[i] * pw[j] + pw[i] * v[j];
}

// Z(:, k+1:n) <- Z(:, k+1:n) H_k = Z - tau (Z v) v^T, for Z's zr rows. Column by column (contiguous),
// each zv[i] summed over j in the same order as row by row. Each row of Z is updated on its own, so
// keeping only the last rows gives them bit for bit.
void reflect_rows(int n, int k, const std::vector<double> &v, double tau, double *Z, int ldz, int zr, std::vector<double> &zv)
{
  const int m = n - k - 1;
  std::fill(zv.begin(), zv.end(), 0.0);
  for (int j = 0; j < m; ++j) {
    const double *zj = Z + static_cast<std::ptrdiff_t>(k + 1 + j) * ldz;
    for (int i = 0; i < zr; ++i) zv[i] += zj[i] * v[j];
  }
  for (int i = 0; i < zr; ++i) zv[i] *= tau;
  for (int j = 0; j < m; ++j) {
    double *zj = Z + static_cast<std::ptrdiff_t>(k + 1 + j) * ldz;
    for (int i = 0; i < zr; ++i) zj[i] -= zv[i] * v[j];
  }
}

// Householder tridiagonalization of A into d (diagonal) and e (off-diagonal), the reflections applied to
// Z's zr rows from the right, so that S = Z T Z^T throughout.
void tridiagonalize(int n, Dense<double> &a, std::vector<double> &d, std::vector<double> &e, double *Z, int ldz, int zr)
{
  const std::size_t nn = static_cast<std::size_t>(n);
  std::vector<double> v(nn), pw(nn), zv(Z ? static_cast<std::size_t>(zr) : 0);
  for (int k = 0; k + 2 < n; ++k) {
    double tau = 0;
    if (!reflector(n, k, a, d.data(), e.data(), v, tau)) continue;
    reflect_trailing(n, k, a, v, tau, pw);
    if (Z) reflect_rows(n, k, v, tau, Z, ldz, zr, zv);
  }
  // The last 2 x 2 (or 1 x 1) is already tridiagonal.
  if (n >= 2) {
    d[n - 2] = a(n - 2, n - 2);
    e[n - 2] = a(n - 1, n - 2);
  }
  d[n - 1] = a(n - 1, n - 1);
}

} // namespace

void symmetric_eigen(int n, double *S, int lds, double *w, double *Z, int ldz, int zrows)
{
  if (!check_eigen_arguments("symmetric_eigen", n, S, lds, w, Z, ldz, zrows)) return;
  const int zr = zrows, z0 = n - zrows; // Z holds rows z0..n-1 of the eigenvector matrix
  // A full symmetric copy: simpler than updating one triangle, and at these sizes the n^2 extra doubles
  // do not matter. Reversed, so the eigenvectors of S are P times those of A: Z starts as P's rows z0..n-1.
  const std::size_t nn = static_cast<std::size_t>(n);
  Dense<double> a(n);
  const int p = reversed_scaled_copy(n, S, lds, a);
  if (Z)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < zr; ++i) Z[static_cast<std::ptrdiff_t>(j) * ldz + i] = (z0 + i == n - 1 - j) ? 1.0 : 0.0;
  std::vector<double> d(nn), e(nn > 1 ? nn - 1 : 1);
  tridiagonalize(n, a, d, e, Z, ldz, zr);
  tridiagonal_qr(n, d.data(), e.data(), Z, ldz, zr);

  // Ascending order, the scale undone; Z's columns follow their eigenvalues.
  const std::vector<int> order = ascending_order(d);
  for (int j = 0; j < n; ++j) w[j] = std::ldexp(d[order[j]], p);
  if (Z) {
    const std::size_t rr = static_cast<std::size_t>(zr);
    std::vector<double> tmp(rr * nn);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < zr; ++i) tmp[static_cast<std::size_t>(j) * rr + i] = Z[static_cast<std::ptrdiff_t>(order[j]) * ldz + i];
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < zr; ++i) Z[static_cast<std::ptrdiff_t>(j) * ldz + i] = tmp[static_cast<std::size_t>(j) * rr + i];
  }
}

void hermitian_eigen(int n, std::complex<double> *S, int lds, double *w, std::complex<double> *Z, int ldz)
{
  hermitian_eigen(n, S, lds, w, Z, ldz, n);
}

namespace {

using C = std::complex<double>;

// A full Hermitian copy of S's lower triangle (the block variant's matrices are small: no reversal or
// partial-row economy as in symmetric_eigen), scaled by 2^-p (exact; undone on w); returns p.
int hermitian_scaled_copy(int n, const C *S, int lds, Dense<C> &a)
{
  double amax = 0.0;
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) {
      C v = S[static_cast<std::ptrdiff_t>(j) * lds + i];
      if (i == j) v = v.real();
      if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
        throw Error("hermitian_eigen: non-finite input S(" + std::to_string(i) + "," + std::to_string(j) + ")");
      a(i, j) = v;
      a(j, i) = std::conj(v);
      amax = std::max({amax, std::abs(v.real()), std::abs(v.imag())});
    }
  int p = 0;
  if (amax > 0.0) std::frexp(amax, &p);
  for (C &v : a.a) v = C(std::ldexp(v.real(), -p), std::ldexp(v.imag(), -p));
  return p;
}

// The reflector of column k: H_k = I - tau v v^H with v = x - beta e_1, beta = -(x_1/|x_1|) ||x||,
// x = A(k+1:n, k): Hermitian and unitary, H_k x = beta e_1, tau = 2 / ||v||^2 real. Column k becomes
// (beta, 0, ...) and sub[k] = beta. False where the column is already tridiagonal (or zero): H_k = I.
bool hermitian_reflector(int n, int k, Dense<C> &a, std::vector<C> &sub, std::vector<C> &v, double &tau)
{
  const int m = n - k - 1;
  const C alpha = a(k + 1, k);
  double xmax = std::abs(alpha);
  for (int i = k + 2; i < n; ++i) xmax = std::max(xmax, std::abs(a(i, k)));
  double tail = 0.0; // ||x(2:m)||^2 / xmax^2
  if (xmax > 0.0)
    for (int i = k + 2; i < n; ++i) tail += std::norm(a(i, k) / xmax);
  if (tail == 0.0) {
    sub[k] = alpha;
    return false;
  }
  const double xnorm = xmax * std::sqrt(std::norm(alpha / xmax) + tail);
  const double aabs = std::abs(alpha);
  const C phase = aabs > 0 ? alpha / aabs : C(1);
  const C beta = -phase * xnorm;
  v[0] = alpha - beta; // = phase (|alpha| + ||x||): no cancellation
  for (int i = 1; i < m; ++i) v[i] = a(k + 1 + i, k);
  const double vnorm2 = 2 * xnorm * (xnorm + aabs); // ||v||^2
  tau = 2.0 / vnorm2;
  sub[k] = beta;
  for (int i = k + 2; i < n; ++i) a(i, k) = a(k, i) = 0.0;
  a(k + 1, k) = beta;
  a(k, k + 1) = std::conj(beta);
  return true;
}

// B = A(k+1:n, k+1:n) <- H B H = B - v w^H - w v^H, p = tau B v, w = p - (tau/2)(v^H p) v (v^H p = tau
// v^H B v is real: B is Hermitian); then Q(:, k+1:n) <- Q(:, k+1:n) - tau (Q v) v^H.
void reflect_hermitian(int n, int k, Dense<C> &a, Dense<C> &q, const std::vector<C> &v, double tau, std::vector<C> &pw,
                       std::vector<C> &zv)
{
  const int m = n - k - 1;
  C vp = 0.0;
  for (int i = 0; i < m; ++i) {
    C sum = 0.0;
    for (int j = 0; j < m; ++j) sum += a(k + 1 + i, k + 1 + j) * v[j];
    pw[i] = tau * sum;
    vp += std::conj(v[i]) * pw[i];
  }
  const double half = 0.5 * tau * vp.real();
  for (int i = 0; i < m; ++i) pw[i] -= half * v[i];
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < m; ++i) a(k + 1 + i, k + 1 + j) -= v[i] * std::conj(pw[j]) + pw[i] * std::conj(v[j]);
  for (int i = 0; i < m; ++i) a(k + 1 + i, k + 1 + i) = a(k + 1 + i, k + 1 + i).real();

  std::fill(zv.begin(), zv.end(), C(0));
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) zv[i] += q(i, k + 1 + j) * v[j];
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < n; ++i) q(i, k + 1 + j) -= tau * zv[i] * std::conj(v[j]);
}

// T = D T' D^H with D = diag(phi), phi_0 = 1, phi_{k+1} = phi_k sub_k / |sub_k|: T' real symmetric
// tridiagonal (d, e) with off-diagonal |sub_k|. Then S = (Q D) T' (Q D)^H.
std::vector<C> real_tridiagonal(int n, Dense<C> &a, const std::vector<C> &sub, std::vector<double> &d, std::vector<double> &e)
{
  std::vector<C> phi(static_cast<std::size_t>(n));
  phi[0] = 1.0;
  for (int k = 0; k < n; ++k) d[k] = a(k, k).real();
  for (int k = 0; k + 1 < n; ++k) {
    const double r = std::abs(sub[k]);
    e[k] = r;
    phi[k + 1] = r > 0 ? phi[k] * (sub[k] / r) : phi[k];
  }
  return phi;
}

} // namespace

void hermitian_eigen(int n, std::complex<double> *S, int lds, double *w, std::complex<double> *Z, int ldz, int zrows)
{
  if (!check_eigen_arguments("hermitian_eigen", n, S, lds, w, Z, ldz, zrows)) return;
  const std::size_t nn = static_cast<std::size_t>(n);
  Dense<C> a(n);
  const int p = hermitian_scaled_copy(n, S, lds, a);
  // Q accumulates the reflections: S = Q T Q^H throughout (Q starts as I).
  Dense<C> q(n);
  for (int i = 0; i < n; ++i) q(i, i) = 1.0;
  std::vector<C> sub(nn > 1 ? nn - 1 : 1), v(nn), pw(nn), zv(nn);
  for (int k = 0; k + 2 < n; ++k) {
    double tau = 0;
    if (hermitian_reflector(n, k, a, sub, v, tau)) reflect_hermitian(n, k, a, q, v, tau, pw, zv);
  }
  if (n >= 2) sub[n - 2] = a(n - 1, n - 2);

  std::vector<double> d(nn), e(nn > 1 ? nn - 1 : 1);
  const std::vector<C> phi = real_tridiagonal(n, a, sub, d, e);
  std::vector<double> Zr(Z ? nn * nn : 0, 0.0);
  if (Z)
    for (int i = 0; i < n; ++i) Zr[static_cast<std::size_t>(i) * nn + i] = 1.0;
  tridiagonal_qr(n, d.data(), e.data(), Z ? Zr.data() : nullptr, n);

  const std::vector<int> order = ascending_order(d);
  for (int j = 0; j < n; ++j) w[j] = std::ldexp(d[order[j]], p);
  if (!Z) return;
  // Rows z0..n-1 of (Q D) Zr, columns in ascending order of their eigenvalues.
  const int z0 = n - zrows;
  for (int j = 0; j < n; ++j) {
    const double *zc = Zr.data() + static_cast<std::size_t>(order[j]) * nn;
    for (int i = 0; i < zrows; ++i) {
      C sum = 0.0;
      for (int l = 0; l < n; ++l) sum += q(z0 + i, l) * phi[l] * zc[l];
      Z[static_cast<std::ptrdiff_t>(j) * ldz + i] = sum;
    }
  }
}

} // namespace cudalanczos
