// A backend that times each kind of call of another one (bench_cudalanczos cycle, bench_step): where a
// solve's time goes, split into the Lanczos steps, the restarts' rotations, everything else, and (by
// difference with the solve's wall time) the driver's own host work.
#pragma once

#include "bench_timing.hpp"
#include "core/backend.hpp"
#include "forwarding_backend.hpp" // tests/core

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace cudalanczos::bench {

/// Forwards every call, the fast paths of the inner backend included, and adds up the wall time of each
/// kind, waiting for the device after each call so that the time lands on the call that queued the work.
/// What solve() spends outside the backend is the driver's own host work.
class TimedBackend final : public testing::ForwardingBackend {
public:
  using ForwardingBackend::ForwardingBackend;
  double steps_s = 0, rotate_s = 0, other_s = 0;
  long step_calls = 0, rotate_calls = 0, other_calls = 0;
  /// The block steps' operations (driver/block_steps.cpp), each kind on its own: seconds and calls.
  struct Kind {
    double s = 0;
    long calls = 0;
  };
  Kind block_product, block_project, block_update, block_transform;

  std::string name() const override { return b_.name(); }
  bool get_column_device(int j, Scalar *x, void *stream) const override { return b_.get_column_device(j, x, stream); }
  bool set_column_device(int j, const Scalar *x, void *stream) override { return b_.set_column_device(j, x, stream); }
  void set_random(int j, std::uint64_t seed) override { other([&] { b_.set_random(j, seed); }); }
  void apply_operator(int src, int dst) override { other([&] { b_.apply_operator(src, dst); }); }
  void project(int first, int k, int col, Scalar *out) override { other([&] { b_.project(first, k, col, out); }); }
  void project_with(int first, int k, int col, int with, Scalar *out) override
  {
    other([&] { b_.project_with(first, k, col, with, out); });
  }
  double subtract(int first, int k, const Scalar *coef, int col) override
  {
    double r = 0;
    other([&] { r = b_.subtract(first, k, coef, col); });
    return r;
  }
  void update(int first, int k, const Scalar *coef, int col) override { other([&] { b_.update(first, k, coef, col); }); }
  void scale(int col, double alpha) override { other([&] { b_.scale(col, alpha); }); }
  void combine(int first, int k, const Scalar *coef, int dst) override { other([&] { b_.combine(first, k, coef, dst); }); }
  void copy_column(int src, int dst) override { other([&] { b_.copy_column(src, dst); }); }
  void rotate(int k, int m, const Scalar *Q, int ldq) override
  {
    ++rotate_calls;
    timed(rotate_s, [&] { b_.rotate(k, m, Q, ldq); });
  }
  void rotate_from(int first, int k, int m, const Scalar *Q, int ldq) override
  {
    ++rotate_calls;
    timed(rotate_s, [&] { b_.rotate_from(first, k, m, Q, ldq); });
  }
  bool projected_eigen(int n, const double *S, int lds, double *w, double *Z, int ldz) override
  {
    return b_.projected_eigen(n, S, lds, w, Z, ldz);
  }
  void expand(int first, int last, double anorm, StepRecord *records) override
  {
    ++step_calls;
    timed(steps_s, [&] { b_.expand(first, last, anorm, records); });
  }
  void expand_partial(int first, int last, int reach, double anorm, StepRecord *records) override
  {
    ++step_calls;
    timed(steps_s, [&] { b_.expand_partial(first, last, reach, anorm, records); });
  }
  // Queued steps are timed as if they ran at once: the look-ahead's overlap with the driver is lost here.
  void queue_steps(int first, int last, int reach, double anorm) override
  {
    ++step_calls;
    timed(steps_s, [&] { b_.queue_steps(first, last, reach, anorm); });
  }
  void collect_steps(StepRecord *records) override { timed(steps_s, [&] { b_.collect_steps(records); }); }
  int cancel_steps() override
  {
    int r = 0;
    timed(steps_s, [&] { r = b_.cancel_steps(); });
    return r;
  }
  void apply_operator_block(int src, int dst, int b) override
  {
    block(block_product, [&] { b_.apply_operator_block(src, dst, b); });
  }
  void project_block(int first, int k, int col, int b, Scalar *out) override
  {
    block(block_project, [&] { b_.project_block(first, k, col, b, out); });
  }
  void update_block(int first, int k, const Scalar *C, int ldc, int col, int b) override
  {
    block(block_update, [&] { b_.update_block(first, k, C, ldc, col, b); });
  }
  // The window's pass and the pass after it, in one call where the inner backend fuses them: timed as one
  // projection, so that the split shows what the fusion leaves.
  void window_then_pass_block(int lo, int kw, int first, int k, int col, int b, Scalar *out_w, Scalar *out_p) override
  {
    block(block_project, [&] { b_.window_then_pass_block(lo, kw, first, k, col, b, out_w, out_p); });
  }
  void transform_block(int col, int b, const Scalar *M, int ldm) override
  {
    block(block_transform, [&] { b_.transform_block(col, b, M, ldm); });
  }
  void synchronize() override { b_.synchronize(); }

private:
  template <class F> void block(Kind &kind, F &&f)
  {
    ++kind.calls;
    timed(kind.s, std::forward<F>(f));
  }
  template <class F> void other(F &&f)
  {
    ++other_calls;
    timed(other_s, std::forward<F>(f));
  }
  template <class F> void timed(double &acc, F &&f)
  {
    const auto a = std::chrono::steady_clock::now();
    f();
    b_.synchronize();
    acc += seconds_since(a);
  }
};

} // namespace cudalanczos::bench
