#include "core/b_inner_product_backend.hpp"

#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

namespace cudalanczos {

ColumnOperator host_round_trip(VectorOperator B)
{
  if (!B) throw Error("host_round_trip: no operator");
  auto buffers = std::make_shared<std::vector<Scalar>>();
  return [B = std::move(B), buffers](Backend &inner, int src, int dst) {
    const std::size_t n = static_cast<std::size_t>(inner.local_size());
    buffers->resize(2 * n);
    Scalar *x = buffers->data(), *y = x + n;
    inner.get_column(src, x);
    B(x, y);
    inner.set_column(dst, y);
  };
}

BInnerProductBackend::BInnerProductBackend(Backend &inner, ColumnOperator apply_b) : WrappingBackend(inner), apply_b_(std::move(apply_b))
{
  if (!apply_b_) throw Error("BInnerProductBackend: no product with B");
}

void BInnerProductBackend::check_column(int j) const
{
  if (j < 0 || j >= ncols_)
    throw Error("BInnerProductBackend: column " + std::to_string(j) + " outside the basis of " + std::to_string(ncols_));
}

void BInnerProductBackend::resize_basis(int ncols)
{
  if (ncols < 0) throw Error("BInnerProductBackend::resize_basis: negative column count");
  inner_.resize_basis(ncols + 1); // + the scratch column for B w
  ncols_ = ncols;
  holds_ = -1;
}

void BInnerProductBackend::ensure_b(int col)
{
  check_column(col);
  if (holds_ == col) return;
  holds_ = -1; // a product that throws leaves nothing valid behind
  apply_b_(inner_, col, ncols_);
  ++b_products_;
  holds_ = col;
}

void BInnerProductBackend::changed(int first, int count)
{
  if (holds_ >= first && holds_ < first + count) holds_ = -1;
}

double BInnerProductBackend::checked_norm2(int col, double s)
{
  if (!(s < 0)) return s; // NaN goes on to the driver, which reports a non-finite operator
  // Rounding can make w^T (B w) slightly negative only where |w^T B w| is at rounding level of
  // ||w|| ||B w|| (w numerically zero after orthogonalization, a breakdown); beyond that B has a
  // direction of negative or zero curvature: not an inner product.
  Scalar ww[1] = {0}, uu[1] = {0};
  inner_.project(col, 0, col, ww);
  inner_.project(ncols_, 0, ncols_, uu);
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const double     bound = 64 * eps * std::sqrt(static_cast<double>(inner_.global_size())) * std::sqrt(real_part(ww[0])) * std::sqrt(real_part(uu[0]));
  if (-s <= bound) return 0.0;
  std::ostringstream msg;
  msg << "the inner-product matrix B is not positive definite: x^H B x = " << s << " for a vector x with ||x|| = " << std::sqrt(real_part(ww[0]))
      << " (a generalized Hermitian problem needs B Hermitian positive definite)";
  throw Error(msg.str());
}

void BInnerProductBackend::set_random(int j, std::uint64_t seed)
{
  check_column(j);
  changed(j);
  inner_.set_random(j, seed);
}

void BInnerProductBackend::set_column(int j, const Scalar *x)
{
  check_column(j);
  changed(j);
  inner_.set_column(j, x);
}

void BInnerProductBackend::get_column(int j, Scalar *x) const
{
  check_column(j);
  inner_.get_column(j, x);
}

bool BInnerProductBackend::get_column_device(int j, Scalar *x, void *stream) const
{
  check_column(j);
  return inner_.get_column_device(j, x, stream);
}

bool BInnerProductBackend::set_column_device(int j, const Scalar *x, void *stream)
{
  check_column(j);
  changed(j);
  return inner_.set_column_device(j, x, stream);
}

void BInnerProductBackend::apply_operator(int src, int dst)
{
  check_column(src);
  check_column(dst);
  changed(dst);
  inner_.apply_operator(src, dst);
}

void BInnerProductBackend::project(int first, int k, int col, Scalar *out)
{
  if (k > 0) check_column(first), check_column(first + k - 1);
  ensure_b(col);
  inner_.project_with(first, k, col, ncols_, out); // V^H (B w) and w^H (B w), one reduction
  out[k] = checked_norm2(col, real_part(out[k]));
}

double BInnerProductBackend::subtract(int first, int k, const Scalar *coef, int col)
{
  update(first, k, coef, col);
  ensure_b(col);
  Scalar s = 0;
  inner_.project_with(col, 0, col, ncols_, &s);
  return checked_norm2(col, real_part(s));
}

void BInnerProductBackend::update(int first, int k, const Scalar *coef, int col)
{
  check_column(col);
  if (k > 0) check_column(first), check_column(first + k - 1);
  if (k > 0) changed(col);
  inner_.update(first, k, coef, col);
}

void BInnerProductBackend::scale(int col, double alpha)
{
  check_column(col);
  // The product is dropped rather than scaled along: a Lanczos step ends in this scale and the next one
  // projects another column, so scaling it would be a pass over a vector per step for nothing.
  changed(col);
  inner_.scale(col, alpha);
}

void BInnerProductBackend::combine(int first, int k, const Scalar *coef, int dst)
{
  check_column(dst);
  if (k > 0) check_column(first), check_column(first + k - 1);
  changed(dst);
  inner_.combine(first, k, coef, dst);
}

void BInnerProductBackend::rotate_from(int first, int k, int m, const Scalar *Q, int ldq)
{
  if (first < 0 || m > k || ldq < k || first + k > ncols_)
    throw Error("BInnerProductBackend::rotate: need first >= 0, m <= k <= ldq and first + k <= basis columns");
  holds_ = -1;
  inner_.rotate_from(first, k, m, Q, ldq); // columns first..first+k-1 only: the scratch column ncols_ is not read
}

void BInnerProductBackend::copy_column(int src, int dst)
{
  check_column(src);
  check_column(dst);
  changed(dst);
  inner_.copy_column(src, dst);
}

void BInnerProductBackend::apply_operator_block(int src, int dst, int b)
{
  if (b > 0) check_column(src), check_column(src + b - 1), check_column(dst), check_column(dst + b - 1);
  changed(dst, b);
  inner_.apply_operator_block(src, dst, b);
}

void BInnerProductBackend::update_block(int first, int k, const Scalar *C, int ldc, int col, int b)
{
  if (b > 0) check_column(col), check_column(col + b - 1);
  if (k > 0) check_column(first), check_column(first + k - 1);
  changed(col, b);
  inner_.update_block(first, k, C, ldc, col, b);
}

void BInnerProductBackend::transform_block(int col, int b, const Scalar *M, int ldm)
{
  if (b > 0) check_column(col), check_column(col + b - 1);
  changed(col, b);
  inner_.transform_block(col, b, M, ldm);
}

} // namespace cudalanczos
