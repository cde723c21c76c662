// Simon's omega recurrence for block steps (block_omega.hpp).
#include "core/block_omega.hpp"

#include "core/driver_support.hpp"

#include <algorithm>
#include <cmath>

namespace cudalanczos::detail {

namespace {

// An estimate grown by a rounding term, keeping its phase: the bound only ever grows, as in the
// single-vector recurrence's copysign.
Scalar grown(Scalar w, double noise)
{
  const double a = std::abs(w);
  return a > 0 ? w * ((a + noise) / a) : Scalar(noise);
}

} // namespace

void BlockOmegaRecurrence::make_identity_at(std::vector<Scalar> &v, int w) const
{
  for (int q = 0; q < b_; ++q)
    for (int i = 0; i < b_ && w + i < rows_; ++i) at(v, w + i, q) = i == q ? Scalar(1) : Scalar(0);
}

void BlockOmegaRecurrence::begin_segment(int top)
{
  top_ = top;
  cur_.assign(static_cast<std::size_t>(rows_) * b_, Scalar(eps));
  prev_ = cur_;
}

void BlockOmegaRecurrence::after_full(int w)
{
  prev_.swap(cur_);
  std::fill(cur_.begin(), cur_.end(), Scalar(eps));
  make_identity_at(cur_, w);
}

bool BlockOmegaRecurrence::step(const Scalar *H, int ldh, int c, const Scalar *C, int ldc, const Scalar *M, double anorm)
{
  const int b = b_, w = c + b, lo = std::max(top_, c - b);
  const auto h = [&](int i, int k) { return H[i + static_cast<std::size_t>(k) * ldh]; };
  next_.assign(static_cast<std::size_t>(rows_) * b, Scalar(eps));
  // The rounding of this step in column q of the new block: eps ||A|| times the growth 1 / sqrt(L_q)
  // that SVQB applies to it, over the b columns it mixes.
  std::vector<double> noise(b);
  for (int q = 0; q < b; ++q) {
    double m2 = 0;
    for (int p = 0; p < b; ++p) m2 += abs2(M[p + static_cast<std::size_t>(q) * b]);
    noise[q] = 2 * eps * anorm * std::sqrt(m2 * b);
  }
  std::vector<Scalar> x(b);
  double worst = 0;
  for (int i = top_; i < lo; ++i) {
    // x = v_i^H W: (A v_i)^H Q_c (A v_i from column i of H: its band, and where a fresh column replaced a
    // dead direction, that column's couplings to every earlier one) minus what the window pass
    // subtracted, Omega_c(i) A_c + Omega_{c-b}(i) R_{c-b}^H
    for (int p = 0; p < b; ++p) {
      Scalar t = 0;
      for (int m = top_; m < w; ++m) t += conj_of(h(m, i)) * at(cur_, m, p);
      for (int l = 0; l < b; ++l) t -= at(cur_, i, l) * C[c + l + static_cast<std::size_t>(p) * ldc];
      for (int l = 0; l < b && c - b + l >= 0; ++l) t -= at(prev_, i, l) * C[c - b + l + static_cast<std::size_t>(p) * ldc];
      x[p] = t;
    }
    for (int q = 0; q < b; ++q) {
      Scalar t = 0;
      for (int p = 0; p < b; ++p) t += x[p] * M[p + static_cast<std::size_t>(q) * b];
      at(next_, i, q) = grown(t, noise[q]);
      worst = std::max(worst, std::abs(at(next_, i, q)));
    }
  }
  for (int i = lo; i < w; ++i) // one local Gram-Schmidt pass against the window
    for (int q = 0; q < b; ++q) at(next_, i, q) = Scalar(0.5 * noise[q]);
  make_identity_at(next_, w);
  prev_.swap(cur_);
  cur_.swap(next_);
  return worst > omega_limit;
}

} // namespace cudalanczos::detail
