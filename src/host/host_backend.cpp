#include "host/host_backend.hpp"

#include "core/random.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace cudalanczos {

HostBackend::HostBackend(index_t local_size, index_t global_size, index_t row_offset, HostOperator op, Reducer reduce)
    : n_(local_size), global_(global_size), offset_(row_offset), op_(std::move(op)), reduce_(std::move(reduce))
{
  if (n_ < 0 || global_ < n_ || offset_ < 0) throw Error("HostBackend: inconsistent sizes");
  if (!op_) throw Error("HostBackend: no operator");
}

void HostBackend::check_column(int j) const
{
  if (j < 0 || j >= ncols_)
    throw Error("HostBackend: column " + std::to_string(j) + " outside the basis of " + std::to_string(ncols_));
}

void HostBackend::resize_basis(int ncols)
{
  ncols_ = ncols;
  basis_.assign(static_cast<std::size_t>(ncols) * n_, Scalar(0));
}

void HostBackend::set_random(int j, std::uint64_t seed)
{
  check_column(j);
  // Real entries in either build: a Hermitian operator's Krylov space from a real start vector is
  // complex as soon as the operator is, and the same seed gives the same vector in both builds.
  Scalar *v = column(j);
  for (index_t i = 0; i < n_; ++i) v[i] = random_entry(seed, offset_ + i);
}

void HostBackend::set_column(int j, const Scalar *x)
{
  check_column(j);
  std::copy(x, x + n_, column(j));
}

void HostBackend::get_column(int j, Scalar *x) const
{
  check_column(j);
  std::copy(column(j), column(j) + n_, x);
}

void HostBackend::apply_operator(int src, int dst)
{
  check_column(src);
  check_column(dst);
  if (filter_) {
    if (src == dst) throw Error("HostBackend::apply_operator: a filtered operator needs src != dst");
    return apply_filter(column(src), column(dst));
  }
  // 2^scale_ A x, exactly the unscaled product times a power of two (backend.hpp): a tiny operator
  // gets the input scaled up (and restored: exact), a huge one the output scaled down.
  if (scale_ > 0) {
    scale(src, std::ldexp(1.0, scale_));
    try {
      op_(column(src), column(dst));
    } catch (...) {
      scale(src, std::ldexp(1.0, -scale_));
      throw;
    }
    scale(src, std::ldexp(1.0, -scale_));
    return;
  }
  op_(column(src), column(dst));
  if (scale_ < 0) scale(dst, std::ldexp(1.0, scale_));
}

void HostBackend::set_operator_scale(int e)
{
  check_scale_exponent("HostBackend::set_operator_scale", e);
  if (filter_ && e != 0) throw Error("HostBackend::set_operator_scale: the operator is filtered (set_operator_filter); it stays unscaled");
  scale_ = e;
}

void HostBackend::set_operator_filter(const ChebyshevFilter *filter)
{
  if (!filter) {
    filter_.reset();
    return;
  }
  check_filter("HostBackend::set_operator_filter", *filter, scale_);
  filter_ = *filter;
  const auto n = static_cast<std::size_t>(n_);
  fw_.assign(n, Scalar(0));
  fa_.assign(n, Scalar(0));
  fb_.assign(n, Scalar(0));
}

void HostBackend::apply_filter(const Scalar *x, Scalar *y)
{
  const Scalar *w = fw_.data();
  for_each_chebyshev_step(
    *filter_, x, fa_.data(), fb_.data(), [&](const Scalar *cur) { op_(cur, fw_.data()); },
    [&](const ChebyshevStep &st, const Scalar *cur, const Scalar *prev, Scalar *next) {
      for (index_t r = 0; r < n_; ++r) {
        const Scalar t = st.alpha * w[r] + st.beta * cur[r] + st.gamma * prev[r];
        y[r] = (st.accumulate ? y[r] : Scalar(0)) + st.nu * cur[r] + st.mu * t;
        next[r] = t;
      }
    });
}

void HostBackend::project(int first, int k, int col, Scalar *out)
{
  check_column(col);
  if (k > 0) check_column(first), check_column(first + k - 1);
  const Scalar *w = column(col);
  for (int i = 0; i < k; ++i) {
    const Scalar *v = column(first + i);
    Scalar s = 0;
    for (index_t r = 0; r < n_; ++r) s += conj_of(v[r]) * w[r];
    out[i] = s;
  }
  double s = 0;
  for (index_t r = 0; r < n_; ++r) s += abs2(w[r]);
  out[k] = s;
  reduce_(reinterpret_cast<double *>(out), kDoublesPerScalar * (k + 1));
}

void HostBackend::project_with(int first, int k, int col, int with, Scalar *out)
{
  check_column(col);
  check_column(with);
  if (k > 0) check_column(first), check_column(first + k - 1);
  const Scalar *u = column(with);
  for (int i = 0; i < k; ++i) {
    const Scalar *v = column(first + i);
    Scalar s = 0;
    for (index_t r = 0; r < n_; ++r) s += conj_of(v[r]) * u[r];
    out[i] = s;
  }
  const Scalar *w = column(col);
  Scalar s = 0;
  for (index_t r = 0; r < n_; ++r) s += conj_of(w[r]) * u[r];
  out[k] = s;
  reduce_(reinterpret_cast<double *>(out), kDoublesPerScalar * (k + 1));
}

void HostBackend::update(int first, int k, const Scalar *coef, int col)
{
  check_column(col);
  if (k > 0) check_column(first), check_column(first + k - 1);
  Scalar *w = column(col);
  for (int i = 0; i < k; ++i) {
    const Scalar *v = column(first + i);
    for (index_t r = 0; r < n_; ++r) w[r] -= coef[i] * v[r];
  }
}

double HostBackend::subtract(int first, int k, const Scalar *coef, int col)
{
  update(first, k, coef, col);
  const Scalar *w = column(col);
  double s = 0;
  for (index_t r = 0; r < n_; ++r) s += abs2(w[r]);
  reduce_(&s, 1);
  return s;
}

void HostBackend::scale(int col, double alpha)
{
  check_column(col);
  Scalar *w = column(col);
  for (index_t r = 0; r < n_; ++r) w[r] *= alpha;
}

void HostBackend::combine(int first, int k, const Scalar *coef, int dst)
{
  check_column(dst);
  if (k > 0) check_column(first), check_column(first + k - 1);
  Scalar *y = column(dst);
  std::fill(y, y + n_, Scalar(0));
  for (int i = 0; i < k; ++i) {
    const Scalar *v = column(first + i);
    for (index_t r = 0; r < n_; ++r) y[r] += coef[i] * v[r];
  }
}

void HostBackend::rotate(int k, int m, const Scalar *Q, int ldq) { rotate_from(0, k, m, Q, ldq); }

void HostBackend::rotate_from(int first, int k, int m, const Scalar *Q, int ldq)
{
  if (first < 0 || m > k || ldq < k) throw Error("HostBackend::rotate: need first >= 0 and m <= k <= ldq");
  if (k > 0) check_column(first + k - 1);
  work_.assign(static_cast<std::size_t>(m) * n_, Scalar(0));
  for (int j = 0; j < m; ++j) {
    Scalar *y = work_.data() + static_cast<std::size_t>(j) * n_;
    for (int i = 0; i < k; ++i) {
      const Scalar q = Q[i + static_cast<std::size_t>(j) * ldq];
      const Scalar *v = column(first + i);
      for (index_t r = 0; r < n_; ++r) y[r] += q * v[r];
    }
  }
  if (m > 0) std::copy(work_.begin(), work_.end(), column(first));
}

void HostBackend::copy_column(int src, int dst)
{
  check_column(src);
  check_column(dst);
  std::copy(column(src), column(src) + n_, column(dst));
}

} // namespace cudalanczos
