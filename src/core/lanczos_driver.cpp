// solve(): scaling into range around the driver (driver/, one vector or a block per step), the
// true-residual check after it, one more run where that check left
// fewer than nev pairs, and the purification at the end (lanczos_driver.hpp).
#include "core/lanczos_driver.hpp"

#include "core/driver/driver.hpp"
#include "core/driver_support.hpp"
#include "core/purification.hpp"
#include "core/residual_check.hpp"
#include "core/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace cudalanczos {

int basis_columns_needed(const Settings &s)
{
  // ncv Lanczos vectors (ncv_max, if the basis may grow), the next one (residual direction), and two
  // work columns (x and A x for the explicit residual of the thesis variant, and the orthogonality check).
  // The block variant: ncv columns and the residual block.
  const int most = s.variant == Variant::ThickRestart ? std::max(s.ncv, s.ncv_max) : s.ncv;
  const int block = s.variant == Variant::ThickRestart && s.block_size > 1 ? s.ncv + s.block_size : 0;
  return std::max(most + 3, block) + purify_columns(s);
}

int purify_columns(const Settings &s)
{
  // Settings::purify: one residual direction per restart that locks, and the last cycle's.
  return s.purify && s.variant == Variant::ThickRestart && s.block_size <= 1 ? s.nev + 1 : 0;
}

namespace {

// What solve() checks before either driver runs (each driver checks the rest).
void validate(const Settings &settings)
{
  if (settings.block_size < 1) throw Error("the block size must be at least 1");
  if (!(settings.restart >= 0.1 && settings.restart <= 0.9))
    throw Error("the restart fraction must lie in [0.1, 0.9] (" + std::to_string(settings.restart) + " given)");
  if (settings.block_size > 1 && settings.variant == Variant::Thesis)
    throw Error("the thesis variant takes one vector per step; block size " + std::to_string(settings.block_size) +
                " needs the thick-restart variant");
}

// The backend applies A again when this object goes, whatever happens (solve() scales it before a run).
class UnscaleOnExit {
public:
  explicit UnscaleOnExit(Backend &b) : b_(b) {}
  ~UnscaleOnExit()
  {
    try {
      b_.set_operator_scale(0); // never throws for 0; a destructor must not let anything escape
    } catch (...) {
    }
  }
  UnscaleOnExit(const UnscaleOnExit &) = delete;
  UnscaleOnExit &operator=(const UnscaleOnExit &) = delete;

private:
  Backend &b_;
};

// One run of the driver the settings choose, then the true-residual check of its converged pairs (the
// thesis variant's stop decision is its explicit residual already).
Result run_driver(Backend &b, const Settings &s, const Callbacks &c, bool block)
{
  // The residual directions' columns: the last ones. Block steps keep none (purify_columns).
  const int slots = purify_columns(s);
  const detail::ResidualDirections directions(s.purify && !block, basis_columns_needed(s) - slots, slots, b.basis_columns());
  Result out = detail::Driver(b, s, c, directions).run();
  if (s.variant == Variant::ThickRestart) detail::check_residuals(b, s, c, block ? s.block_size : 1, out);
  return out;
}

// The check left fewer than nev: the pairs locked first dropped couplings larger than a later pair's
// tolerance (a graded spectrum), or converged values were too small against ||A|| to meet tol. Go on
// from the sum of the returned vectors, which keeps most of the progress in one start vector, with
// pairs locked only two digits beyond tol; once, with the iterations left.
Result run_again(Backend &b, const Settings &s, const Callbacks &c, bool block, const Result &r)
{
  Settings again = s;
  again.lock_margin = 1e-2 * s.lock_margin;
  again.max_it = s.max_it - r.its;
  again.initial_vector = true;
  // Block steps with partial reorthogonalization: the second run takes full reorthogonalization, and the
  // check's products for every pair (a multiple spectrum of 86 rows broke a proven bound by 1.2x there).
  if (block && again.reorthogonalization == Reorthogonalization::Partial) {
    again.reorthogonalization = Reorthogonalization::Full;
    again.exact_operator      = false;
  }
  const int returned = static_cast<int>(r.eigenvalues.size());
  const std::vector<Scalar> ones(static_cast<std::size_t>(returned), Scalar(1));
  b.combine(0, returned, ones.data(), returned);
  b.copy_column(returned, 0);
  Result second = run_driver(b, again, c, block);
  detail::add_counts(second, r);
  second.residual_retries = 1;
  return second;
}

} // namespace

Result solve(Backend &backend, const Settings &settings, const Callbacks &callbacks)
{
  validate(settings);
  // Scaling into range (scaling.hpp): the driver runs on 2^e A, with the shift, the target and the
  // callbacks' values in the same units, and the eigenvalues come back in the user's.
  const bool given = settings.norm_estimate > 0 && std::isfinite(settings.norm_estimate);
  long measured = 0; // products of measure_norm
  const double norm = given ? settings.norm_estimate : detail::measure_norm(backend, settings.seed, measured);
  const int e = detail::scale_exponent(norm);
  const UnscaleOnExit unscale(backend);
  backend.set_operator_scale(e);
  const Settings s = detail::scaled_settings(settings, e);
  const Callbacks c = detail::with_defaults(detail::scaled_callbacks(callbacks, e, settings.translation_map), s);
  const bool block = detail::block_variant_applies(s, backend.global_size());
  Result r = run_driver(backend, s, c, block);
  if (r.reason == Reason::ResidualCheck && r.its < s.max_it) r = run_again(backend, s, c, block, r);
  detail::purify_returned(backend, s, r);
  r.matvecs += measured;
  r.matvecs_before_nev += measured;
  r.operator_passes += measured;
  for (double &v : r.eigenvalues) v = std::ldexp(v, -e);
  r.scale_exponent = e;
  r.norm_estimate = norm;
  return r;
}

} // namespace cudalanczos
