#include "core/constrained_backend.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace cudalanczos {

ConstrainedBackend::ConstrainedBackend(Backend &inner, int most) : WrappingBackend(inner), most_(most)
{
  if (most < 0) throw Error("ConstrainedBackend: negative number of constraint vectors");
}

void ConstrainedBackend::resize_basis(int ncols)
{
  if (ncols < 0) throw Error("ConstrainedBackend::resize_basis: negative column count");
  inner_.resize_basis(ncols + most_);
  set_offset(0); // the wrapped columns are new: Z has to be added again
}

void ConstrainedBackend::absorb_leading(int k)
{
  const int d = offset();
  if (k < 0 || d + k > most_)
    throw Error("ConstrainedBackend::absorb_leading: room for " + std::to_string(most_ - d) + " more constraint vectors, " +
                std::to_string(k) + " given");
  set_offset(d + k);
}

void ConstrainedBackend::check_room() const
{
  if (offset() >= most_)
    throw Error("ConstrainedBackend::add_constraint: room for " + std::to_string(most_) + " constraint vectors only");
  if (inner_.basis_columns() < most_ + 1) throw Error("ConstrainedBackend::add_constraint: resize_basis first");
}

bool ConstrainedBackend::add_constraint(const Scalar *x)
{
  check_room();
  inner_.set_column(offset(), x);
  return keep_constraint();
}

bool ConstrainedBackend::add_constraint_device(const Scalar *x, void *stream, bool *kept)
{
  check_room();
  if (!inner_.set_column_device(offset(), x, stream)) return false;
  *kept = keep_constraint();
  return true;
}

bool ConstrainedBackend::keep_constraint()
{
  const int d = offset();
  double before = 0;
  const double after = project_out(d, &before);
  constexpr double eps = std::numeric_limits<double>::epsilon();
  if (!(std::isfinite(before) && std::isfinite(after)))
    throw Error("ConstrainedBackend::add_constraint: the vector has entries that are not finite");
  if (!(after > eps * before) || before == 0) return false; // in the span of Z (after^2 < eps before^2), or zero
  inner_.scale(d, 1.0 / std::sqrt(after));
  set_offset(d + 1);
  return true;
}

double ConstrainedBackend::project_out(int c, double *before)
{
  // project() gives the d coefficients and ||c||^2 (before); the second pass's subtract() the norm after.
  const int d = offset();
  h_.assign(static_cast<std::size_t>(d) + 1, Scalar(0));
  inner_.project(0, d, c, h_.data());
  if (before) *before = real_part(h_[d]);
  if (d == 0) return real_part(h_[d]);
  inner_.update(0, d, h_.data(), c);
  inner_.project(0, d, c, h_.data());
  return inner_.subtract(0, d, h_.data(), c);
}

// Each of these is WrappingBackend's forwarding, then Z removed from the new column.
void ConstrainedBackend::set_random(int j, std::uint64_t seed)
{
  WrappingBackend::set_random(j, seed);
  if (offset() > 0) project_out(j + offset());
}

void ConstrainedBackend::set_column(int j, const Scalar *x)
{
  WrappingBackend::set_column(j, x);
  if (offset() > 0) project_out(j + offset());
}

bool ConstrainedBackend::set_column_device(int j, const Scalar *x, void *stream)
{
  if (!WrappingBackend::set_column_device(j, x, stream)) return false;
  if (offset() > 0) project_out(j + offset());
  return true;
}

void ConstrainedBackend::apply_operator(int src, int dst)
{
  WrappingBackend::apply_operator(src, dst);
  if (offset() > 0) project_out(dst + offset());
}

void ConstrainedBackend::apply_operator_block(int src, int dst, int b)
{
  WrappingBackend::apply_operator_block(src, dst, b);
  const int d = offset();
  if (d == 0 || b == 0) return;
  // project_out on the whole block: two passes of the block operations (one product over Z each)
  // instead of b column by column.
  const int ld = d + b;
  h_.assign(static_cast<std::size_t>(ld) * b, Scalar(0));
  for (int pass = 0; pass < 2; ++pass) {
    inner_.project_block(0, d, dst + d, b, h_.data()); // Z^H W in the first d rows of each column
    inner_.update_block(0, d, h_.data(), ld, dst + d, b);
  }
}

} // namespace cudalanczos
