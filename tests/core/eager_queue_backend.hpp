// A backend that runs queued steps at once, as a device does (Backend::queue_steps): the host backend
// with every call forwarded, except the queue. The driver's look-ahead is then exercised on the host:
// a look that ends the cycle drops steps that already ran, and the solve must give the same bits as
// with the default queue, which runs nothing until collected.
#pragma once

#include "core/backend.hpp"
#include "forwarding_backend.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace cudalanczos::testing {

class EagerQueueBackend final : public ForwardingBackend {
public:
  explicit EagerQueueBackend(Backend &inner) : ForwardingBackend(inner) {}

  std::string name() const override { return "eager-queue(" + b_.name() + ")"; }
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
  std::vector<StepRecord> records_;
  bool queued_ = false;
};

} // namespace cudalanczos::testing
