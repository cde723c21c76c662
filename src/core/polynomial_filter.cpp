#include "core/polynomial_filter.hpp"

#include "core/backend.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace cudalanczos {

namespace {

struct Window {
  double center, half_width, theta_a, theta_b; // theta = acos(t) of the clipped ends: theta_a >= theta_b
};

Window map_window(double lo, double hi, double a, double b)
{
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi))
    throw Error("polynomial filter: the spectrum's bounds must be finite with lo < hi");
  if (!(a < b) || std::isnan(a) || std::isnan(b)) throw Error("polynomial filter: the window [a, b] needs a < b");
  if (b < lo || a > hi) throw Error("polynomial filter: the window lies outside the spectrum's bounds");
  Window w;
  w.center = 0.5 * (lo + hi);
  w.half_width = 0.5 * (hi - lo);
  const auto angle = [&](double x) { return std::acos(std::clamp((x - w.center) / w.half_width, -1.0, 1.0)); };
  w.theta_a = angle(a);
  w.theta_b = angle(b);
  return w;
}

// The delta at cos(theta_g), damped, normalized to 1 there.
ChebyshevFilter delta_filter(const Window &w, int degree, double theta_g)
{
  const std::vector<double> g = sigma_damping(degree);
  ChebyshevFilter f;
  f.center = w.center;
  f.half_width = w.half_width;
  f.coef.resize(static_cast<std::size_t>(degree) + 1);
  double peak = 0;
  for (int k = 0; k <= degree; ++k) {
    const double c = std::cos(k * theta_g);
    f.coef[k] = (k == 0 ? 1.0 : 2.0) * g[k] * c;
    peak += f.coef[k] * c;
  }
  for (double &c : f.coef) c /= peak; // peak > 0: every factor is, and so is each term at theta_g
  return f;
}

double value_at_angle(const ChebyshevFilter &f, double theta) { return f(f.center + f.half_width * std::cos(theta)); }

// The delta of `degree` whose values at the window's ends agree: bisection on the peak's angle, which
// moves the peak towards b while p(a) > p(b).
WindowFilter balanced(const Window &w, int degree)
{
  double lo = w.theta_b, hi = w.theta_a;
  WindowFilter out;
  for (int it = 0; it < 60 && hi - lo > 1e-15; ++it) {
    const double mid = 0.5 * (lo + hi);
    out.p = delta_filter(w, degree, mid);
    const double pa = value_at_angle(out.p, w.theta_a), pb = value_at_angle(out.p, w.theta_b);
    (pa > pb ? hi : lo) = mid;
  }
  const double theta_g = 0.5 * (lo + hi);
  out.p = delta_filter(w, degree, theta_g);
  out.end_value = std::min(value_at_angle(out.p, w.theta_a), value_at_angle(out.p, w.theta_b));
  out.gamma = w.center + w.half_width * std::cos(theta_g);
  return out;
}

} // namespace

std::vector<double> jackson_damping(int degree)
{
  if (degree < 0) throw Error("jackson_damping: negative degree");
  const double m2 = degree + 2.0, alpha = M_PI / m2;
  std::vector<double> g(static_cast<std::size_t>(degree) + 1);
  for (int k = 0; k <= degree; ++k)
    g[k] = ((1 - k / m2) * std::sin(alpha) * std::cos(k * alpha) + std::cos(alpha) * std::sin(k * alpha) / m2) / std::sin(alpha);
  return g;
}

std::vector<double> sigma_damping(int degree)
{
  if (degree < 0) throw Error("sigma_damping: negative degree");
  std::vector<double> g(static_cast<std::size_t>(degree) + 1, 1.0);
  for (int k = 1; k <= degree; ++k) {
    const double x = k * M_PI / (degree + 1);
    g[k] = std::sin(x) / x;
  }
  return g;
}

WindowFilter window_filter(double lo, double hi, double a, double b, int degree, double end_value)
{
  const Window w = map_window(lo, hi, a, b);
  if (degree > 0) return balanced(w, degree);
  if (!(end_value > 0 && end_value < 1)) throw Error("window_filter: the end value must lie in (0, 1)");
  // p(a) = p(b) falls as the degree grows (the peak narrows): double up to the first degree that meets
  // end_value, then bisect between it and the one before.
  int low = 1, high = 2;
  WindowFilter best = balanced(w, high); // the filter of `high`, the lowest degree known to qualify
  while (high < kMaxFilterDegree && best.end_value > end_value) {
    low = high, high = std::min(2 * high, kMaxFilterDegree);
    best = balanced(w, high);
  }
  while (high - low > 1) {
    const int mid = (low + high) / 2;
    WindowFilter f = balanced(w, mid);
    if (f.end_value > end_value) low = mid;
    else high = mid, best = std::move(f);
  }
  return best;
}

ChebyshevFilter interval_indicator(double lo, double hi, double a, double b, int degree)
{
  if (degree < 1) throw Error("interval_indicator: the degree must be at least 1");
  const Window w = map_window(lo, hi, a, b);
  const std::vector<double> g = jackson_damping(degree);
  ChebyshevFilter f;
  f.center = w.center;
  f.half_width = w.half_width;
  f.coef.resize(static_cast<std::size_t>(degree) + 1);
  f.coef[0] = (w.theta_a - w.theta_b) / M_PI;
  for (int k = 1; k <= degree; ++k) f.coef[k] = g[k] * 2 * (std::sin(k * w.theta_a) - std::sin(k * w.theta_b)) / (k * M_PI);
  return f;
}

double indicator_blur(double lo, double hi, double x, int degree)
{
  if (degree < 1) throw Error("indicator_blur: the degree must be at least 1");
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) throw Error("indicator_blur: the spectrum's bounds must be finite with lo < hi");
  const double h = 0.5 * (hi - lo), t = std::clamp((x - 0.5 * (lo + hi)) / h, -1.0, 1.0); // an end outside [lo, hi] counts as there
  const double step = M_PI / (degree + 1);
  return h * std::max(std::sqrt(1 - t * t) * step, 0.5 * step * step);
}

} // namespace cudalanczos
