// Purification from the Lanczos relation (purification.hpp).
#include "core/purification.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cudalanczos::detail {

ResidualDirections::ResidualDirections(bool purify, int base, int slots, int basis_columns)
    : purify_(purify), base_(base), slots_(std::max(0, std::min(slots, basis_columns - base))) // a caller's smaller basis: fewer
{
}

void ResidualDirections::keep(Backend &b, int col, const RitzPairs &rp, double beta, int q0, int q1)
{
  if (!purify_ || q1 <= q0) return;
  const int slot = used_ < slots_ ? base_ + used_ : -1;
  if (slot >= 0) {
    b.copy_column(col, slot);
    ++used_;
  }
  for (int q = q0; q < q1; ++q) {
    const int i = rp.order[q];
    // A x = w x + beta y_last u: x <- A x / w = x + (beta y_last / w) u.
    const double c = beta * real_part(rp.Y[(rp.na - 1) + static_cast<std::size_t>(i) * rp.na]);
    const bool ok = slot >= 0 && rp.w[i] != 0 && std::isfinite(c / rp.w[i]);
    scale_.push_back(ok ? c / rp.w[i] : std::numeric_limits<double>::quiet_NaN());
    column_.push_back(ok ? slot : -1);
  }
}

void ResidualDirections::fill(Result &r, std::size_t returned) const
{
  if (!purify_) return;
  r.purify_base = slots_ > 0 ? base_ : -1;
  r.purify_directions = used_;
  r.purify_scale = scale_;
  r.purify_column = column_;
  r.purify_scale.resize(returned, std::numeric_limits<double>::quiet_NaN());
  r.purify_column.resize(returned, -1);
}

void ResidualDirections::clear()
{
  scale_.clear();
  column_.clear();
  used_ = 0;
}

namespace {

// d(j, q) = u_q^H x_j for the purifiable x_j, nd + 1 entries a vector (project writes x_j^H x_j after the
// nd products): all of them first, from the vectors as returned.
std::vector<Scalar> direction_products(Backend &b, Result &r, const std::vector<char> &ok, int k, int nd)
{
  std::vector<Scalar> d(static_cast<std::size_t>(k) * (nd + 1), Scalar(0));
  for (int j = 0; j < k; ++j)
    if (ok[j]) b.project(r.purify_base, nd, j, &d[static_cast<std::size_t>(j) * (nd + 1)]), ++r.reductions;
  return d;
}

} // namespace

// For each purifiable x_j:
//   A x_j = theta_j x_j + c_j u_(j) + sum_i c_i (u_(i)^H x_j) x_i,   c = t theta (Result::purify_scale),
// the sum over the other purifiable returned vectors x_i (the couplings their locking dropped; zero for
// those whose direction x_j is orthogonal to). Each x_j is purified in place (a term from an x_i purified
// before it differs by t_i^2 relative: rounding where it matters). x_j, u_(j) and the x_i are
// orthonormal, so the sum's norm is known: no second reduction.
void purify_returned(Backend &b, const Settings &s, Result &r)
{
  const int k = std::min(r.nconv, static_cast<int>(r.purify_scale.size()));
  const int nd = r.purify_directions;
  if (k <= 0 || nd <= 0 || r.purify_base < 0) return;
  std::vector<char> ok(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) ok[j] = std::isfinite(r.purify_scale[j]) && r.purify_column[j] >= 0;
  const std::vector<Scalar> d = direction_products(b, r, ok, k, nd);
  std::vector<Scalar> coef(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) {
    if (!ok[j]) continue;
    const double theta_j = r.eigenvalues[j] + s.shift, t = r.purify_scale[j];
    double norm2 = 1 + t * t;
    for (int i = 0; i < k; ++i) {
      coef[i] = 0;
      if (i == j || !ok[i]) continue;
      const double theta_i = r.eigenvalues[i] + s.shift;
      coef[i] = -(r.purify_scale[i] * theta_i / theta_j) * d[static_cast<std::size_t>(j) * (nd + 1) + (r.purify_column[i] - r.purify_base)];
      norm2 += abs2(coef[i]);
    }
    // the other vectors: columns 0..j-1 and j+1..k-1 (update's source and destination do not overlap)
    if (j > 0) b.update(0, j, coef.data(), j);
    if (j + 1 < k) b.update(j + 1, k - j - 1, coef.data() + j + 1, j);
    const Scalar own = -t; // update subtracts
    if (t != 0) b.update(r.purify_column[j], 1, &own, j);
    if (norm2 != 1) b.scale(j, 1 / std::sqrt(norm2));
    ++r.purified;
  }
}

} // namespace cudalanczos::detail
