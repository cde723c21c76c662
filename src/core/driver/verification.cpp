// The verification round of the driver (Settings::verify; driver.hpp): once nev pairs
// have converged, the complement of the locked vectors is searched from a fresh random vector for copies
// of the wanted eigenvalues. Here: the looks inside a round's cycles, the probabilistic certificate of its
// first cycle (driver_support.hpp, certified_complement), and the cycle lengths a round runs with.
#include "core/driver/driver.hpp"

#include <algorithm>

namespace cudalanczos::detail {

// A look inside a verification cycle after e columns: the round is complete (round_complete) or, in its
// first cycle, certified (complement_certified). A copy of a wanted value turning up lets the cycle run to
// its end.
bool Driver::verification_look(const RitzPairs &rp, int e)
{
  const int locked = t_.locked, na = e - locked;
  double worst = 0, slack = 0;
  wanted_edge(s_, c_, t_.locked_theta, anorm_, worst, slack);
  int newconv = 0;
  while (newconv < na && rp.err[newconv] < s_.tol) ++newconv;
  if (copies_found(s_, c_, rp, newconv, worst, slack) > 0) return false; // a copy: the full cycle
  if (round_complete(s_, c_, rp, newconv, worst, slack)) return true;
  if (!verify_fresh_) return false;
  if (complement_certified(rp.w, locked, worst, slack)) return true;
  // The certificate's bound falls by e^(-2 sqrt(e)) per step: with these Ritz values, the step at
  // which it would hold is where the next look should be (a chunk that runs past it costs products
  // the look would have saved).
  for (int k = na + 1; locked + k < cycle_end(); ++k)
    if (certified_complement(s_, c_, rp.w, k, n_, locked, worst, slack)) {
      look_hint_ = locked + k;
      break;
    }
  return false;
}

// The length of the next cycle around a round. The certificate's exponent grows with the steps of a
// round's first cycle, and the looks inside it end the cycle as soon as it fires: where the predicted
// steps, half as many again for the guess, fit in the columns the basis may grow to, that cycle is made
// that long (docs/tuning.md#core-verifications-first-cycle-length). After it, if the round goes on, the
// cycle goes back to the solve's length, with room for one step past the converged pairs.
void Driver::size_next_cycle(CycleDecision &d, const RitzPairs &rp, int newconv, bool fresh_cycle)
{
  if (blocks()) return; // block steps keep their basis
  if (d.inject) {
    if (d.done) return; // no room left for a complement
    if (const int k = certificate_steps(rp, newconv, t_.locked_theta, t_.locked + newconv); k > 0) {
      const int want = t_.locked + newconv + (3 * k + 1) / 2 + 1;
      if (want > m_ && want <= cap_) {
        if (m_resume_ == 0) m_resume_ = m_; // a round after a round: the solve's length is already saved
        m_ = want;
      }
    }
  } else if (fresh_cycle && !d.done && m_resume_ > 0) {
    if (m_resume_ - 1 - t_.locked >= newconv + 1) m_ = m_resume_, d.keep_limit = m_ - 1 - t_.locked; // room for a step
    m_resume_ = 0;
  }
}

// A verification round locks every copy it finds, and the values converged past the wanted ones with
// them: each takes a column from the complement's cycle. Keep the room the solve started with
// (ncv - nev columns past the locked ones), growing the cycle up to the basis's cap; a cycle of a few
// columns cannot converge the complement's best value on a clustered spectrum, and the rounds would go
// on to max_it without finding the copies still missing (docs/tuning.md#core-room-for-the-complement).
void Driver::keep_room_for_complement()
{
  const int room = std::max(2, s_.ncv - s_.nev);
  if (m_ - t_.locked < room && m_ < cap_) m_ = std::min(cap_, t_.locked + room);
}

// Before a verification round: the steps after which its first cycle would be certified if the
// complement's Ritz values were this cycle's unconverged ones (the best guess before the round runs;
// they sit near the complement's ends), with the `newconv` newly converged values counted as wanted.
// 0 when even the largest basis would not reach it: a gap far below the Ritz width, as on a grid
// Laplacian, or many wanted values.
int Driver::certificate_steps(const RitzPairs &rp, int newconv, const std::vector<double> &locked_theta, int locked_after) const
{
  std::vector<double> theta(locked_theta), rest;
  for (int q = 0; q < rp.na; ++q) {
    const double value = rp.w[rp.order[q]];
    if (q < newconv) theta.push_back(value - s_.shift); // as locked_theta holds them
    else rest.push_back(value);                          // as certified_complement reads Ritz values
  }
  if (static_cast<int>(theta.size()) < s_.nev || rest.size() < 2) return 0;
  double worst = 0, slack = 0;
  wanted_edge(s_, c_, theta, anorm_, worst, slack);
  for (int k = 2; locked_after + k < cap_; ++k)
    if (certified_complement(s_, c_, rest, k, n_, locked_after, worst, slack)) return k;
  return 0;
}

// Verification, first cycle of a round: the active block w (na Ritz values) spans the Krylov space of
// dimension na of a random vector in the complement of the `locked` vectors (driver_support.hpp).
bool Driver::complement_certified(const std::vector<double> &w, int locked, double worst, double slack) const
{
  return certified_complement(s_, c_, w, static_cast<int>(w.size()), n_, locked, worst, slack);
}

} // namespace cudalanczos::detail
