// A polynomial filter p(A) = sum_k coef[k] T_k((A - center I) / half_width), and the three-term
// recurrence that applies it (Backend::set_operator_filter). The recurrence is written here once, as
// the coefficients of each step, so that every backend runs the same arithmetic in the same order and
// the host backend stays the reference of the device kernels.
//
// With the spectrum of A inside [center - half_width, center + half_width], the argument of T_k lies in
// [-1, 1] and |T_k| <= 1 there. polynomial_filter.hpp designs the coefficients.
#pragma once

#include <stdexcept>
#include <vector>

namespace cudalanczos {

struct ChebyshevFilter {
  double center = 0.0;
  double half_width = 1.0;
  std::vector<double> coef; ///< coef[k] multiplies T_k; degree = coef.size() - 1

  int degree() const { return static_cast<int>(coef.size()) - 1; }

  /// p(lambda) by Clenshaw's recurrence (valid outside [-1, 1] too, where the series grows).
  double operator()(double lambda) const
  {
    const double t = (lambda - center) / half_width;
    double b1 = 0.0, b2 = 0.0;
    for (int k = degree(); k >= 1; --k) {
      const double b0 = coef[static_cast<std::size_t>(k)] + 2.0 * t * b1 - b2;
      b2 = b1;
      b1 = b0;
    }
    return coef.empty() ? 0.0 : coef[0] + t * b1 - b2;
  }
};

/// Step k (1 <= k <= degree) of applying p(A) to x, elementwise on long vectors:
///   next = alpha w + beta cur + gamma prev,   y = (accumulate ? y : 0) + nu cur + mu next,
/// with w = A cur. Step 1 has cur = prev = x and forms T_1 x = (A x - center x) / half_width; step k > 1
/// forms T_k x = 2 (A - center I) T_{k-1} x / half_width - T_{k-2} x from cur = T_{k-1} x, prev = T_{k-2} x.
/// next may be the same array as prev (each entry of prev is read before the same entry of next is
/// written); y holds p(A) x after step degree.
struct ChebyshevStep {
  double alpha = 0, beta = 0, gamma = 0, nu = 0, mu = 0;
  bool accumulate = false;
};

inline ChebyshevStep chebyshev_step(const ChebyshevFilter &f, int k)
{
  if (k < 1 || k > f.degree()) throw std::out_of_range("chebyshev_step: step outside 1..degree");
  const double s = 1.0 / f.half_width;
  ChebyshevStep st;
  if (k == 1) {
    st.alpha = s;
    st.beta = -f.center * s;
    st.nu = f.coef[0];
    st.mu = f.coef[1];
    return st;
  }
  st.alpha = 2 * s;
  st.beta = -2 * f.center * s;
  st.gamma = -1;
  st.mu = f.coef[static_cast<std::size_t>(k)];
  st.accumulate = true;
  return st;
}

/// The steps of applying f to x, with the arrays each step reads and writes: for k = 1..degree,
/// product(cur) forms w = A cur wherever the backend keeps it, then step(st, cur, prev, next) runs
/// chebyshev_step(f, k) elementwise. T_0 x = x is read in place and never written; T_1 x goes to `a`, and
/// from step 2 on each T_k x overwrites T_{k-2} x in `a` or `b` (next aliases prev). Every backend runs
/// this sequence, so only the elementwise step and the product are its own.
template <class T, class Product, class Step>
void for_each_chebyshev_step(const ChebyshevFilter &f, const T *x, T *a, T *b, Product &&product, Step &&step)
{
  const T *prev = x, *cur = x;
  T *next = a;
  for (int k = 1; k <= f.degree(); ++k) {
    product(cur);
    step(chebyshev_step(f, k), cur, prev, next);
    prev = cur;
    cur = next;
    next = next == a ? b : a; // the other work array: T_{k-1} x from step 2 on
  }
}

} // namespace cudalanczos
