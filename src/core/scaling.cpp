// Scaling into range (scaling.hpp).
#include "core/scaling.hpp"

#include "core/driver_support.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace cudalanczos::detail {

int scale_exponent(double norm)
{
  if (!(norm > 0) || !std::isfinite(norm)) return 0;
  const int x = std::ilogb(norm); // norm in [2^x, 2^(x+1)), subnormal norms included
  if (x >= -kSafeNormExponent && x < kSafeNormExponent) return 0;
  return std::clamp(-(x + 1), -kMaxScaleExponent, kMaxScaleExponent);
}

double squared_norm_in_range(BasisStorage &b, int col, int &t, long &reductions)
{
  // ||v||^2 at scale 2^(-2 t): v moved by 2^400 (2^800 in the square) until its square is well inside the
  // normal range. Finite entries need at most three moves either way (2^1200 spans every exponent), so a
  // square still infinite after them means Inf entries, and one still zero a zero vector.
  constexpr int kStep = 400;
  const double hi = std::ldexp(1.0, 2 * kStep), lo = std::ldexp(1.0, -2 * kStep);
  t = 0;
  double q = squared_norm(b, col);
  ++reductions;
  for (int moves = 0; moves < 3 && !std::isnan(q); ++moves) {
    if (!(q > hi || q < lo)) break;
    const int step = q > hi ? kStep : -kStep;
    b.scale(col, std::ldexp(1.0, -step));
    t += step;
    q = squared_norm(b, col);
    ++reductions;
  }
  return q;
}

double measure_norm(Backend &b, std::uint64_t seed, long &products)
{
  const int nb = b.basis_columns();
  if (b.global_size() <= 0 || nb < 3) return 0; // the driver refuses these itself (and column 0 may hold a start vector)
  const int x = nb - 2, y = nb - 1;
  b.set_operator_scale(0);
  b.set_random(x, seed ^ 0x6e6f726d2d657374ULL);
  double q = squared_norm(b, x); // about n/3: no danger for any n a machine holds
  if (!(q > 0)) return 0;
  b.scale(x, 1.0 / std::sqrt(q));
  b.apply_operator(x, y);
  ++products;
  int t = 0;
  long reductions = 0;
  q = squared_norm_in_range(b, y, t, reductions);
  check_finite(q, "||A v|| (the norm estimate's product)");
  if (q == 0) return 0;
  return std::ldexp(std::sqrt(q), t);
}

Settings scaled_settings(Settings s, int e)
{
  s.shift = std::ldexp(s.shift, e);
  if (s.translation_map) s.target = std::ldexp(s.target, e);
  return s;
}

Callbacks scaled_callbacks(const Callbacks &user, int e, bool translation_map)
{
  if (e == 0) return user;
  Callbacks c = user;
  if (user.error)
    c.error = [f = user.error, e](double theta, double res) { return f(std::ldexp(theta, -e), std::ldexp(res, -e)); };
  if (user.eigenvalue && translation_map) // value + shift: the user's eigenvalues in the operator's units, scaled alike
    c.eigenvalue = [f = user.eigenvalue, e](double value) { return std::ldexp(f(std::ldexp(value, -e)), e); };
  else if (user.eigenvalue) // e.g. sigma + 1/theta (shift-and-invert): the user's eigenvalues keep their own units
    c.eigenvalue = [f = user.eigenvalue, e](double value) { return f(std::ldexp(value, -e)); };
  if (user.monitor)
    c.monitor = [f = user.monitor, e, buffer = std::vector<double>()](int its, int nconv, const double *theta, const double *err,
                                                                      int count) mutable {
      buffer.resize(static_cast<std::size_t>(std::max(count, 0)));
      for (int i = 0; i < count; ++i) buffer[i] = std::ldexp(theta[i], -e);
      f(its, nconv, buffer.data(), err, count);
    };
  return c;
}

} // namespace cudalanczos::detail
