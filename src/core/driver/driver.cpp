// The driver's set-up and what a solve reports (driver.hpp).
#include "core/driver/driver.hpp"

#include "core/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace cudalanczos::detail {

bool block_variant_applies(const Settings &s, index_t n)
{
  return s.variant == Variant::ThickRestart && s.block_size > 1 && static_cast<index_t>(s.ncv) + s.block_size <= n;
}

namespace {
// Vectors per step: Settings::block_size where block steps apply, else one.
int step_width(const Settings &s, index_t n) { return block_variant_applies(s, n) ? s.block_size : 1; }

// Thick restart: the most basis columns a cycle may have (ncv, or up to ncv_max when single vectors'
// basis may grow; a block basis keeps ncv).
int basis_cap(const Settings &s, index_t n, int b)
{
  if (s.variant != Variant::ThickRestart || b > 1) return s.ncv;
  return static_cast<int>(std::max<index_t>(s.ncv, std::min<index_t>(s.ncv_max, n)));
}

// The projected matrix's order: a cycle's columns past the locked ones, at most mpd.
int window(const Settings &s, int cap) { return s.mpd > 0 ? std::min(cap, s.mpd) : cap; }
} // namespace

Driver::Driver(Backend &b, const Settings &s, const Callbacks &c, ResidualDirections directions)
    : b_(b), s_(s), c_(with_defaults(c, s)), n_(b.global_size()), B_(step_width(s, n_)), cap_(basis_cap(s, n_, B_)), m_(s.ncv),
      lds_(window(s, cap_)), blk_(B_, s.ncv), omega_(cap_), restart_(s.restart), pur_(std::move(directions))
{
}

Result Driver::run()
{
  validate();
  if (!blocks()) start_vector(); // a block's start is its first step's orthonormalization (begin_cycles)
  Result r = s_.variant == Variant::Thesis ? unrestarted_lanczos() : thick_restart();
  r.matvecs = matvecs_;
  r.reductions = reductions_;
  r.breakdowns = breakdowns_;
  r.orthogonality = orthogonality(b_, static_cast<int>(r.eigenvalues.size()));
  r.full_reorthogonalizations = full_passes_;
  r.discarded_steps = discarded_;
  r.lookahead_discarded = lookahead_discarded_;
  r.lookahead_dropped_steps = lookahead_dropped_steps_;
  r.matvecs_before_nev = matvecs_to_nev_ >= 0 ? matvecs_to_nev_ : matvecs_;
  r.matvecs_verification = matvecs_ - r.matvecs_before_nev;
  r.operator_passes = blocks() ? passes_ : matvecs_; // single vectors: one pass per product
  r.switched_to_full = restarted_full_;
  r.restart_raised = restart_raised_;
  r.ncv_used = m_;
  r.block_size = B_;
  projected_.report(r);
  return r;
}

void Driver::validate() const
{
  if (n_ <= 0) throw Error("the operator has no rows");
  if (s_.nev < 1) throw Error("nev must be at least 1");
  if (blocks()) validate_blocks(); // before the checks below, whose ncv and mpd messages it refines for blocks
  if (s_.ncv < 1) throw Error("ncv must be at least 1");
  if (s_.ncv > n_) throw Error("ncv (" + std::to_string(s_.ncv) + ") exceeds the problem size (" + std::to_string(n_) + ")");
  if (s_.variant == Variant::ThickRestart && s_.nev > s_.ncv)
    throw Error("ncv (" + std::to_string(s_.ncv) + ") must be at least nev (" + std::to_string(s_.nev) + ")");
  if (s_.variant == Variant::Thesis && s_.reorthogonalization == Reorthogonalization::Partial)
    throw Error("the thesis variant has no reorthogonalization; partial reorthogonalization needs the thick-restart variant");
  if (s_.variant == Variant::Thesis && s_.nev != 1)
    throw Error("the thesis variant computes one eigenpair; use the thick-restart variant for nev > 1");
  if (!(s_.tol > 0)) throw Error("tol must be positive");
  if (s_.max_it < 1) throw Error("max_it must be at least 1");
  if (!(s_.lock_margin > 0 && s_.lock_margin <= 1)) throw Error("lock_margin must lie in (0, 1]");
  if (s_.mpd < 0 || s_.mpd == 1)
    throw Error("mpd (" + std::to_string(s_.mpd) + ") must be 0 (no bound) or at least 2: a restart keeps a vector and takes a step");
  if (b_.basis_columns() < cap_ + 3) throw Error("the backend's basis is too small for ncv");
}

// What block steps need beyond what single vectors do.
void Driver::validate_blocks() const
{
  if (s_.ncv < s_.nev + B_)
    throw Error("the block variant needs ncv >= nev + block size (ncv = " + std::to_string(s_.ncv) + ", nev = " + std::to_string(s_.nev) +
                ", block size = " + std::to_string(B_) + ")");
  if (s_.reorthogonalization == Reorthogonalization::None)
    throw Error("block steps reorthogonalize (full or partial); none needs block size 1");
  if (b_.basis_columns() < blk_.ld) throw Error("the backend's basis is too small for ncv + block size");
  if (s_.mpd != 0 && s_.mpd < 2 * B_)
    throw Error("mpd (" + std::to_string(s_.mpd) + ") leaves no room for a block step past the kept vectors: block steps need mpd >= " +
                std::to_string(2 * B_) + " (twice the block size), or 0 for no bound");
}

// Column 0: the caller's start vector, or a random one; normalized.
void Driver::start_vector()
{
  if (!s_.initial_vector) b_.set_random(0, s_.seed);
  // The caller's vector may have entries of any size: its squared norm taken in range (exact powers of
  // two), so that a tiny one is not mistaken for zero nor a huge one for Inf.
  int t = 0;
  double nrm2 = squared_norm_in_range(b_, 0, t, reductions_);
  check_finite(nrm2, "the start vector's norm");
  if (nrm2 == 0) { // a zero initial vector carries no information: fall back to a random one
    b_.set_random(0, s_.seed);
    nrm2 = squared_norm(b_, 0);
    ++reductions_;
  }
  b_.scale(0, 1.0 / std::sqrt(nrm2));
}

} // namespace cudalanczos::detail
