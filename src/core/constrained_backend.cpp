#include "core/constrained_backend.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace cudalanczos {

ConstrainedBackend::ConstrainedBackend(Backend &inner, int most) : inner_(inner), most_(most)
{
  if (most < 0) throw Error("ConstrainedBackend: negative number of constraint vectors");
}

void ConstrainedBackend::resize_basis(int ncols)
{
  if (ncols < 0) throw Error("ConstrainedBackend::resize_basis: negative column count");
  inner_.resize_basis(ncols + most_);
  d_ = 0; // the wrapped columns are new: Z has to be added again
}

void ConstrainedBackend::absorb_leading(int k)
{
  if (k < 0 || d_ + k > most_)
    throw Error("ConstrainedBackend::absorb_leading: room for " + std::to_string(most_ - d_) + " more constraint vectors, " +
                std::to_string(k) + " given");
  d_ += k;
}

void ConstrainedBackend::check_room() const
{
  if (d_ >= most_)
    throw Error("ConstrainedBackend::add_constraint: room for " + std::to_string(most_) + " constraint vectors only");
  if (inner_.basis_columns() < most_ + 1) throw Error("ConstrainedBackend::add_constraint: resize_basis first");
}

bool ConstrainedBackend::add_constraint(const Scalar *x)
{
  check_room();
  inner_.set_column(d_, x);
  return keep_constraint();
}

bool ConstrainedBackend::add_constraint_device(const Scalar *x, void *stream, bool *kept)
{
  check_room();
  if (!inner_.set_column_device(d_, x, stream)) return false;
  *kept = keep_constraint();
  return true;
}

bool ConstrainedBackend::keep_constraint()
{
  double before = 0;
  const double after = project_out(d_, &before);
  constexpr double eps = std::numeric_limits<double>::epsilon();
  if (!(std::isfinite(before) && std::isfinite(after)))
    throw Error("ConstrainedBackend::add_constraint: the vector has entries that are not finite");
  if (!(after > eps * before) || before == 0) return false; // in the span of Z (after^2 < eps before^2), or zero
  inner_.scale(d_, 1.0 / std::sqrt(after));
  ++d_;
  return true;
}

double ConstrainedBackend::project_out(int c, double *before)
{
  // project() gives the d coefficients and ||c||^2 (before); the second pass's subtract() the norm after.
  h_.assign(static_cast<std::size_t>(d_) + 1, Scalar(0));
  inner_.project(0, d_, c, h_.data());
  if (before) *before = real_part(h_[d_]);
  if (d_ == 0) return real_part(h_[d_]);
  inner_.update(0, d_, h_.data(), c);
  inner_.project(0, d_, c, h_.data());
  return inner_.subtract(0, d_, h_.data(), c);
}

void ConstrainedBackend::set_random(int j, std::uint64_t seed)
{
  inner_.set_random(j + d_, seed);
  if (d_ > 0) project_out(j + d_);
}

void ConstrainedBackend::set_column(int j, const Scalar *x)
{
  inner_.set_column(j + d_, x);
  if (d_ > 0) project_out(j + d_);
}

bool ConstrainedBackend::set_column_device(int j, const Scalar *x, void *stream)
{
  if (!inner_.set_column_device(j + d_, x, stream)) return false;
  if (d_ > 0) project_out(j + d_);
  return true;
}

void ConstrainedBackend::apply_operator(int src, int dst)
{
  inner_.apply_operator(src + d_, dst + d_);
  if (d_ > 0) project_out(dst + d_);
}

void ConstrainedBackend::apply_operator_block(int src, int dst, int b)
{
  inner_.apply_operator_block(src + d_, dst + d_, b);
  if (d_ == 0 || b == 0) return;
  // project_out on the whole block: two passes of the block operations (one product over Z each)
  // instead of b column by column.
  const int ld = d_ + b;
  h_.assign(static_cast<std::size_t>(ld) * b, Scalar(0));
  for (int pass = 0; pass < 2; ++pass) {
    inner_.project_block(0, d_, dst + d_, b, h_.data()); // Z^H W in the first d rows of each column
    inner_.update_block(0, d_, h_.data(), ld, dst + d_, b);
  }
}

void ConstrainedBackend::expand_partial(int first, int last, int reach, double anorm, StepRecord *records)
{
  check_partial_reach("ConstrainedBackend::expand_partial", first, reach);
  inner_.expand_partial(first + d_, last + d_, reach + d_, anorm, records);
}

void ConstrainedBackend::queue_steps(int first, int last, int reach, double anorm)
{
  if (reach >= 0) check_partial_reach("ConstrainedBackend::queue_steps", first, reach);
  inner_.queue_steps(first + d_, last + d_, reach < 0 ? -1 : reach + d_, anorm);
}

} // namespace cudalanczos
