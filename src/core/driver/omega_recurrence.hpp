// Simon's omega recurrence (1984): the estimate of the loss of orthogonality that partial
// reorthogonalization (partial_reorthogonalization.cpp) watches, step by step, inside the segment of
// the current cycle after its restart. Private to the driver's single-vector steps.
#pragma once

#include "core/driver_support.hpp"

#include <cmath>
#include <vector>

namespace cudalanczos::detail {

/// The new vector is orthogonalized every step against the kept vectors 0..segment_start-1
/// (Backend::expand_partial); within the segment segment_start..j the three-term recurrence holds, and
/// cur_[k] estimates v_j^T v_k, prev_[k] v_{j-1}^T v_k:
///   beta_j omega_{j+1,k} = beta_k omega_{j,k+1} + (alpha_k - alpha_j) omega_{j,k} + beta_{k-1} omega_{j,k-1}
///                          - beta_{j-1} omega_{j-1,k} + rounding.
class OmegaRecurrence {
public:
  /// `cap`: the most basis columns a cycle may have.
  explicit OmegaRecurrence(int cap) : cap_(cap) {}

  /// The estimate after step j (alpha, beta its coefficients; S the projected matrix's block from basis
  /// column `offset` <= segment_start on, column-major with leading dimension ld, holding the segment's
  /// earlier steps). True when it exceeds omega_limit: then the new vector, and the next one (Simon's
  /// rule: v_j itself was not reorthogonalized), get a full pass.
  bool step(const double *S, int ld, int offset, int j, int segment_start, double alpha, double beta, double anorm);

  /// After a full pass at step j: v_{j+1} is orthogonal to everything to rounding level.
  void after_full(int j, int segment_start);

  /// A chunk of steps begins: its largest growth factor starts anew (steps_left).
  void begin_chunk() { growth_max_ = 0; }

  /// Steps until the estimate passes omega_limit; 0 when it did not grow at the last step.
  int steps_left() const;

private:
  int cap_;
  std::vector<double> cur_, prev_; // estimated v_j^T v_k, v_{j-1}^T v_k
  std::vector<double> next_;       // step's work: the estimates of v_{j+1}
  double worst_ = 0, growth_ = 0;  // the last step's largest estimate, and its growth factor
  double growth_max_ = 0;          // the largest growth factor of the current chunk's steps
};

} // namespace cudalanczos::detail
