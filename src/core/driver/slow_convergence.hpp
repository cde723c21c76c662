// What thick restart does when convergence is slow: the basis grows (BasisGrowth, Settings::ncv_max), and
// a restart fraction below one half rises to it after a stall (RestartStall, Settings::restart_raise).
// Each watches the leading unconverged pair from cycle to cycle. Private to the driver's single-vector steps (block steps keep their basis).
#pragma once

#include <limits>

namespace cudalanczos::detail {

/// Slow convergence: the basis grows by half (up to the cap) after two cycles in a row that converged no
/// pair and whose rate (how fast the error of the leading unconverged pair fell over the cycle's steps)
/// puts tol more than kGrowthCycles such cycles away. A longer cycle keeps more of the Krylov space
/// across each restart; on clustered spectra the steps to convergence then fall faster than the
/// orthogonalization per step grows. One slow cycle is not enough: convergence is superlinear, and the
/// first cycles after a pair locks are often slow on spectra that then converge pair by pair at any
/// basis size. Rates are only compared between cycles of the same size and the same pair.
class BasisGrowth {
public:
  /// The basis grows when tol is predicted more than this many cycles away
  /// (docs/tuning.md#core-basis-growth).
  static constexpr double kGrowthCycles = 10;

  /// After a cycle of `steps` steps on a basis of m columns (cap at most) that converged `newconv` pairs
  /// and left `lead` as the leading unconverged error, with `locked` pairs locked: the next cycle's m.
  int after_cycle(int newconv, double lead, int steps, int locked, int m, int cap, double tol);

private:
  double lead_ = 0;            // the leading unconverged error after the last cycle,
  int locked_ = -1, m_ = 0;    //   the locked count and basis size it was measured with
  double rate_ = 0;            //   the rate measured then (0: none)
  int slow_cycles_ = 0;        //   and how many cycles in a row were slow
};

/// Settings::restart_raise: a fraction below krylovschur's 0.5 can stall thick restart on a cluster at
/// the wanted end. A stall: kStallCycles cycles in a row that converged no pair and did not take the
/// leading unconverged error kStallProgress below its lowest since a pair last converged or locked or
/// another pair took the lead (a cycle of restarts drifts by rounding). The driver then raises the
/// fraction to 0.5 for the rest of the solve; convergence, however slow, keeps the smaller one
/// (docs/tuning.md#core-restart-raise-on-a-stall).
class RestartStall {
public:
  static constexpr int kStallCycles = 4;
  static constexpr double kStallProgress = 1e-3;

  /// After a cycle that converged `newconv` pairs with `locked` locked, the leading unconverged pair at
  /// Ritz value `value` with error `lead` and residual `residual`: whether the solve has stalled.
  bool after_cycle(int newconv, double lead, double value, double residual, int locked);

private:
  double lowest_ = std::numeric_limits<double>::infinity(); // the lowest leading error since a pair last converged,
  int cycles_ = 0;                                          //   cycles without a lower one,
  int locked_ = -1;                                         //   with this many locked
  double value_ = std::numeric_limits<double>::quiet_NaN(); //   and the leading Ritz value at it
};

} // namespace cudalanczos::detail
