// A backend that runs queued steps at once, as a device does (Backend::queue_steps): the host backend
// with every call forwarded, except the queue. The driver's look-ahead is then exercised on the host:
// a look that ends the cycle drops steps that already ran, and the solve must give the same bits as
// with the default queue, which runs nothing until collected.
#pragma once

#include "core/backend.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace cudalanczos::testing {

class EagerQueueBackend final : public Backend {
public:
  explicit EagerQueueBackend(Backend &inner) : b_(inner) {}

  std::string name() const override { return "eager-queue(" + b_.name() + ")"; }
  index_t local_size() const override { return b_.local_size(); }
  index_t global_size() const override { return b_.global_size(); }
  void resize_basis(int ncols) override { b_.resize_basis(ncols); }
  int basis_columns() const override { return b_.basis_columns(); }
  void set_random(int j, std::uint64_t seed) override { b_.set_random(j, seed); }
  void set_column(int j, const Scalar *x) override { b_.set_column(j, x); }
  void get_column(int j, Scalar *x) const override { b_.get_column(j, x); }
  void apply_operator(int src, int dst) override { b_.apply_operator(src, dst); }
  void set_operator_scale(int e) override { b_.set_operator_scale(e); }
  void project(int first, int k, int col, Scalar *out) override { b_.project(first, k, col, out); }
  double subtract(int first, int k, const Scalar *coef, int col) override { return b_.subtract(first, k, coef, col); }
  void update(int first, int k, const Scalar *coef, int col) override { b_.update(first, k, coef, col); }
  void scale(int col, double alpha) override { b_.scale(col, alpha); }
  void combine(int first, int k, const Scalar *coef, int dst) override { b_.combine(first, k, coef, dst); }
  void rotate(int k, int m, const Scalar *Q, int ldq) override { b_.rotate(k, m, Q, ldq); }
  void copy_column(int src, int dst) override { b_.copy_column(src, dst); }
  void expand(int first, int last, double anorm, StepRecord *records) override
  {
    if (queued_) throw Error("EagerQueueBackend::expand: steps are queued");
    b_.expand(first, last, anorm, records);
  }
  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override
  {
    if (queued_) throw Error("EagerQueueBackend::expand_partial: steps are queued");
    b_.expand_partial(first, last, reach, anorm, records);
  }

  void queue_steps(int first, int last, int reach, double anorm) override
  {
    if (queued_) throw Error("EagerQueueBackend::queue_steps: steps are already queued");
    records_.assign(static_cast<std::size_t>(last - first), StepRecord{});
    if (reach < 0) b_.expand(first, last, anorm, records_.data());
    else b_.expand_partial(first, last, reach, anorm, records_.data());
    queued_ = true;
    ++queued_calls;
  }
  void collect_steps(StepRecord *records) override
  {
    if (!queued_) throw Error("EagerQueueBackend::collect_steps: no steps are queued");
    std::copy(records_.begin(), records_.end(), records);
    queued_ = false;
  }
  int cancel_steps() override
  {
    if (!queued_) throw Error("EagerQueueBackend::cancel_steps: no steps are queued");
    queued_ = false;
    return static_cast<int>(records_.size());
  }

  int queued_calls = 0; ///< queue_steps calls so far

private:
  Backend &b_;
  std::vector<StepRecord> records_;
  bool queued_ = false;
};

} // namespace cudalanczos::testing
