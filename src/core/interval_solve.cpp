// solve_interval and solve_to_threshold (interval_solve.hpp): bounds, filter, count, chunks, Rayleigh-Ritz.
#include "core/interval_solve.hpp"

#include "core/constrained_backend.hpp"
#include "core/driver_support.hpp"
#include "core/lanczos_driver.hpp"
#include "core/polynomial_filter.hpp"
#include "core/scaling.hpp"
#include "core/symmetric_eigen.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

namespace cudalanczos {

namespace {

/// Most pairs one chunk asks for: its projected problem, 2 nev, is solved on the host at every restart.
constexpr int kMaxChunkNev = 256;
/// The spectrum's ends are found to this relative accuracy (their residuals pad the bounds): the filter
/// only needs the bounds to contain the spectrum, not to be tight.
constexpr double kBoundsTol = 1e-2;
/// Padding of the bounds, as a fraction of the spectrum's width.
constexpr double kBoundsPad = 1e-2;
/// The tightest tolerance of the filtered solves: |p| <= 1, and its products round at about eps times the
/// degree.
constexpr double kFilteredTolFloor = 1e-13;

// SLEPc's default basis for nev pairs, at most what is left of the problem.
int default_ncv(int nev, index_t left) { return static_cast<int>(std::min<index_t>(left, std::max(2 * nev, nev + 15))); }

// A filtered chunk's basis: SLEPc's default, and with blocks of b at least two block steps past nev.
int chunk_ncv(int nev, index_t left, int block)
{
  const int ncv = default_ncv(nev, left);
  return block > 1 ? static_cast<int>(std::min<index_t>(left, std::max(ncv, nev + 2 * block))) : ncv;
}

// The backend's filter is cleared when this goes, whatever happens.
class FilterOnExit {
public:
  explicit FilterOnExit(Backend &b) : b_(b) {}
  ~FilterOnExit()
  {
    try {
      b_.set_operator_filter(nullptr);
    } catch (...) {
    }
  }
  FilterOnExit(const FilterOnExit &) = delete;
  FilterOnExit &operator=(const FilterOnExit &) = delete;

private:
  Backend &b_;
};

struct Bounds {
  double lo = 0, hi = 0, norm = 0;
  long products = 0;
};

// The spectrum's ends from two short solves (largest, then smallest), each padded by its residual and a
// fraction of the width, errors measured against ||A|| (an end may be 0).
Bounds spectrum_bounds(Backend &b, const Settings &base)
{
  Bounds out;
  Settings s = base;
  s.variant = Variant::ThickRestart;
  s.nev = 1;
  s.ncv = default_ncv(8, b.global_size());
  s.ncv_max = 0;
  s.block_size = 1;
  s.tol = kBoundsTol;
  s.verify = s.purify = s.initial_vector = false;
  s.shift = s.target = 0;
  s.max_it = 1000;
  b.resize_basis(basis_columns_needed(s));
  out.norm = s.norm_estimate > 0 ? s.norm_estimate : detail::measure_norm(b, s.seed, out.products);
  s.norm_estimate = out.norm;
  Callbacks c;
  c.error = [norm = out.norm](double, double res) { return norm > 0 ? res / norm : res; };
  double end[2];
  for (int side = 0; side < 2; ++side) {
    s.which = side == 0 ? Which::LargestAlgebraic : Which::SmallestAlgebraic;
    const Result r = solve(b, s, c);
    out.products += r.matvecs;
    if (r.eigenvalues.empty()) throw Error("interval solve: the bounds of the spectrum were not found");
    const double res = r.errors[0] * out.norm;
    end[side] = r.eigenvalues[0] + (side == 0 ? res : -res);
  }
  const double pad = kBoundsPad * (end[0] - end[1]) + 16 * detail::eps * out.norm + std::numeric_limits<double>::min();
  out.lo = end[1] - pad;
  out.hi = end[0] + pad;
  return out;
}

struct CountEstimate {
  double mean = -1, error = 0;
  long products = 0;
};

// Hutchinson's trace estimate of the indicator polynomial: random v with entries uniform in [-1, 1]
// (E v_i^2 = 1/3), so tr p(A) = 3 E[v^H p(A) v]. Columns 0 and 1.
CountEstimate estimate_count(Backend &b, const ChebyshevFilter &indicator, int vectors, std::uint64_t seed)
{
  CountEstimate out;
  if (vectors < 1) return out;
  b.set_operator_filter(&indicator);
  const FilterOnExit clear(b);
  std::vector<double> t(static_cast<std::size_t>(vectors));
  for (int i = 0; i < vectors; ++i) {
    b.set_random(0, seed ^ (0x6a09e667f3bcc909ULL + static_cast<std::uint64_t>(i)));
    b.apply_operator(0, 1);
    Scalar q[2];
    b.project(0, 1, 1, q);
    t[i] = 3 * real_part(q[0]);
  }
  out.mean = std::accumulate(t.begin(), t.end(), 0.0) / vectors;
  double var = 0;
  for (double x : t) var += (x - out.mean) * (x - out.mean);
  out.error = vectors > 1 ? std::sqrt(var / (vectors - 1) / vectors) : out.mean;
  out.products = static_cast<long>(vectors) * indicator.degree();
  return out;
}

struct Chunks {
  std::vector<double> values, errors; // the converged pairs absorbed, in the order the chunks gave them
  Result counts;                      // its, products and reductions summed; reason of the last chunk
  int chunks = 0;
  int unconverged = 0; // the last chunk's unconverged kept vectors, absorbed after its converged ones
  bool capacity_reached = false;
};

// Solves in chunks on the complement of what the chunks before found (cb's constraints), first with
// `first` settings, then `next_nev` pairs at a time, until a converged value is not wanted, a chunk
// stops short, or there is no room for another chunk in cb's `capacity` constraint columns;
// `before_chunk`, where given, sees what the chunks before found and cost as each starts. Each chunk
// has first.max_it restarts of its own: a budget shared by the chunks left the last ones, where the
// values crowd, too few to converge, and the solve ended short of pairs it should have found.
Chunks run_chunks(ConstrainedBackend &cb, const Settings &first, int next_nev, int capacity, const Callbacks &c,
                  const std::function<bool(double)> &wanted, const std::function<void(const Chunks &)> &before_chunk = {})
{
  Chunks out;
  out.counts.reason = Reason::Converged;
  Settings s = first;
  for (;;) {
    const index_t left = cb.global_size();
    if (left == 0) break; // the whole space is found
    s.ncv = static_cast<int>(std::min<index_t>(s.ncv, left));
    s.nev = std::min(s.nev, s.ncv);
    s.seed = first.seed + static_cast<std::uint64_t>(out.chunks);
    if (before_chunk) before_chunk(out);
    const Result r = solve(cb, s, c);
    detail::add_counts(out.counts, r);
    out.counts.verification_cut = out.counts.verification_cut || r.verification_cut;
    out.counts.ncv_used = std::max(out.counts.ncv_used, r.ncv_used);
    out.counts.block_size = std::max(out.counts.block_size, r.block_size); // a chunk too small for a block takes single vectors
    ++out.chunks;
    const int room = capacity - cb.constraints();
    const int k = std::min(r.nconv, room);
    bool beyond = false;
    for (int i = 0; i < k; ++i) {
      out.values.push_back(r.eigenvalues[i]);
      out.errors.push_back(r.errors[i]);
      beyond = beyond || !wanted(r.eigenvalues[i]);
    }
    cb.absorb_leading(k);
    out.counts.reason = r.reason == Reason::ResidualCheck ? Reason::Converged : r.reason;
    // A chunk whose verification round found no room (its locked vectors filled the basis: levels of tens
    // of copies) certified nothing: copies may be missing above the value beyond, and the next chunk, on
    // the complement of what this one found, looks for them with a basis of its own.
    if (r.verification_cut) beyond = false;
    if (beyond || k == 0 || out.counts.reason != Reason::Converged) {
      // The last chunk's unconverged Ritz vectors (orthonormal, after the converged ones) join the space of
      // the final Rayleigh-Ritz step: the directions just beyond the window's ends, whose filtered values
      // lie close to those of pairs inside it, are separated by A there. Not earlier: the complement of an
      // inaccurate vector would cut into the eigenvectors the next chunk has to find.
      out.unconverged = std::min(static_cast<int>(r.eigenvalues.size()) - k, capacity - cb.constraints());
      cb.absorb_leading(out.unconverged);
      break;
    }
    if (k < r.nconv || capacity - cb.constraints() < next_nev) {
      out.capacity_reached = true;
      break;
    }
    s.nev = next_nev;
    s.ncv = chunk_ncv(next_nev, left - k, s.block_size);
  }
  if (out.counts.reason == Reason::Converged && out.values.empty() && cb.global_size() > 0) out.counts.reason = Reason::MaxIterations;
  return out;
}

// Rayleigh-Ritz with A on the orthonormal columns 0..d-1: they become A's Ritz vectors, `lambda` their
// values ascending, `res` their true residuals ||A x - lambda x||. 2 d products; column d is work space.
void rayleigh_ritz(Backend &b, int d, std::vector<double> &lambda, std::vector<double> &res)
{
  const auto D = static_cast<std::size_t>(d);
  std::vector<Scalar> H(D * D), h(D + 1), Y(D * D);
  for (int j = 0; j < d; ++j) {
    b.apply_operator(j, d);
    b.project(0, d, d, h.data());
    for (int i = 0; i < d; ++i) H[i + j * D] = h[i];
  }
  for (int j = 0; j < d; ++j) // the lower triangle of (H + H^H) / 2, which hermitian_eigen reads
    for (int i = j; i < d; ++i) H[i + j * D] = 0.5 * (H[i + j * D] + conj_of(H[j + i * D]));
  lambda.assign(D, 0.0);
  if (d > 0) hermitian_eigen(d, H.data(), d, lambda.data(), Y.data(), d);
  if (d > 0) b.rotate(d, d, Y.data(), d);
  res.assign(D, 0.0);
  for (int j = 0; j < d; ++j) {
    b.apply_operator(j, d);
    const Scalar l = lambda[j];
    res[j] = std::sqrt(std::max(0.0, b.subtract(j, 1, &l, d)));
  }
}

// Columns cols[0], cols[1], ... of 0..d-1 become columns 0, 1, ...
void gather_to_front(Backend &b, int d, const std::vector<int> &cols)
{
  const auto count = static_cast<int>(cols.size());
  bool in_place = true;
  for (int j = 0; j < count; ++j) in_place = in_place && cols[j] == j;
  if (in_place) return;
  std::vector<Scalar> Q(static_cast<std::size_t>(d) * count, Scalar(0));
  for (int j = 0; j < count; ++j) Q[cols[j] + static_cast<std::size_t>(j) * d] = 1.0;
  b.rotate(d, count, Q.data(), d);
}

void validate_interval(const Settings &base, const IntervalSettings &w)
{
  if (!(w.a < w.b)) // an infinite end takes everything on that side
    throw Error("the interval [a, b] needs a < b (" + std::to_string(w.a) + ", " + std::to_string(w.b) + " given)");
  if (w.degree < 0) throw Error("the filter degree must be 0 (automatic) or positive");
  if (w.block_size < 1) throw Error("the filtered solves' block size must be at least 1 (" + std::to_string(w.block_size) + " given)");
  if (w.degree > kMaxFilterDegree) throw Error("the filter degree must be at most " + std::to_string(kMaxFilterDegree));
  if (!(w.end_value > 0 && w.end_value < 1)) throw Error("the filter's end value must lie in (0, 1)");
  if (base.shift != 0) throw Error("an interval solve takes no shift: the window is in the eigenvalues of A");
}

struct ChunkPlan {
  int nev = 0, ncv = 0, next_nev = 0, capacity = 0, columns = 0;
  int block = 1; ///< vectors per filtered step (IntervalSettings::block_size)
};

// Pairs per chunk and room for the found ones, from the count estimate: one chunk when the estimate holds
// (it must converge one value beyond the window's ends to stop), within max_columns.
ChunkPlan plan_chunks(index_t n, double count, double error, const Settings &base, int block, int max_columns)
{
  ChunkPlan p;
  p.block = block;
  const int expected = count >= 0 ? static_cast<int>(std::ceil(count + 2 * error)) : 16;
  p.nev = static_cast<int>(std::min<index_t>(n, std::clamp(expected + 2, 4, kMaxChunkNev)));
  p.next_nev = std::max(16, p.nev / 2);
  const auto total = [&] {
    Settings s = base;
    s.nev = p.nev, s.ncv = p.ncv, s.ncv_max = 0, s.block_size = block, s.purify = false;
    return basis_columns_needed(s);
  };
  p.ncv = chunk_ncv(p.nev, n, block);
  // Room for every pair the first chunk can converge (nev + ncv: its verification rounds lock values past
  // the window too, dozens where a level of many copies lies just beyond an end), so that none is dropped
  // for want of room before the chunk that certifies the window's end.
  p.capacity = static_cast<int>(std::min<index_t>(n, std::max(p.nev + p.ncv, expected + expected / 2 + 16)));
  if (max_columns > 0 && p.capacity + total() > max_columns) {
    p.capacity = max_columns - total();
    if (p.capacity < p.nev + 1) {
      p.nev = std::max(1, (max_columns - 3) / 4);
      p.next_nev = p.nev;
      p.ncv = chunk_ncv(p.nev, n, block);
      p.capacity = max_columns - total();
    }
    if (p.capacity < p.nev + 1)
      throw Error("an interval solve needs at least " + std::to_string(total() + p.nev + 1) + " basis columns of " + std::to_string(n) +
                  " rows; there is room for " + std::to_string(max_columns));
  }
  p.columns = p.capacity + total();
  return p;
}

} // namespace

namespace {

// The first progress an interval solve tells: its filter's degree, before the count estimate's products
// (vectors x degree: seconds on the host at 64 000 rows and a narrow window).
void tell_counting(const Callbacks &c, int degree, int vectors, long products)
{
  IntervalProgress p;
  p.counting = true, p.degree = degree, p.count_products = static_cast<long>(vectors) * degree, p.products = products;
  c.interval_progress(p);
}

// The filtered chunks' settings: the largest values of p(A), whose norm is about 1 (p peaks at 1). Their
// tolerance is tighter than the pairs' own by the window's scale against ||A|| and a digit: a filtered
// residual r leaves an eigenvector of A off by about r / (the gap of p to the directions outside what was
// found), and that error costs up to ||A|| in A's residual, which the convergence test measures against
// the window's scale. Never below what rounding in p(A) allows.
Settings filtered_settings(const Settings &base, const ChunkPlan &plan, double scale, double norm)
{
  Settings s = base;
  s.variant = Variant::ThickRestart;
  s.which = Which::LargestAlgebraic;
  s.shift = s.target = 0;
  s.nev = plan.nev;
  s.ncv = plan.ncv;
  s.ncv_max = 0;
  s.block_size = plan.block;
  s.purify = s.initial_vector = false;
  s.norm_estimate = 1.0;
  s.tol = std::max(base.tol * std::min(1.0, scale / norm) * 0.1, kFilteredTolFloor);
  return s;
}

// A pair's error as the convergence test measures it: at the larger of |lambda| and the window's scale.
double window_error(const Callbacks &c, double scale, double lambda, double res)
{
  return c.error(std::abs(lambda) >= scale ? lambda : std::copysign(scale, lambda), res);
}

// The pairs of columns 0..d-1 (Ritz pairs of A, ascending) whose eigenvalue lies in [a, b], moved to the
// front, into r: within its residual where the pair meets tol (an eigenvalue on an end), within rounding
// where it does not (a Ritz value short of tol just outside, from the unconverged vectors, whose residual
// reaches into the window, is no eigenvalue of it). The pairs that meet tol come first, ascending, then
// those short of it: r.nconv counts the first, and the caller returns those. Each error is the
// convergence test's at the larger of |lambda| and the window's scale (its larger finite end in
// magnitude, or the spectrum's): a window around 0 holds eigenvalues at or near 0, whose relative error
// would otherwise never pass.
void select_window(Backend &b, const IntervalSettings &w, const Callbacks &c, double tol, double scale, int d,
                   const std::vector<double> &lambda, const std::vector<double> &res, Result &r)
{
  std::vector<double> err(static_cast<std::size_t>(d));
  std::vector<int> met, short_of_tol;
  for (int i = 0; i < d; ++i) {
    err[i] = window_error(c, scale, lambda[i], res[i]);
    const double slack = (err[i] < tol ? res[i] : 0) + 8 * detail::eps * scale;
    if (lambda[i] >= w.a - slack && lambda[i] <= w.b + slack) (err[i] < tol ? met : short_of_tol).push_back(i);
  }
  std::vector<int> order = met;
  order.insert(order.end(), short_of_tol.begin(), short_of_tol.end());
  gather_to_front(b, d, order);
  r.eigenvalues.clear();
  r.errors.clear();
  for (const int i : order) {
    r.eigenvalues.push_back(lambda[i]);
    r.errors.push_back(err[i]);
  }
  r.nconv = static_cast<int>(met.size());
  r.residuals_checked = static_cast<int>(order.size()); // every pair's residual computed with A: none proven
  r.residuals_proven = 0;
  r.residual_rejected = static_cast<int>(short_of_tol.size());
  if (r.residual_rejected > 0 && r.reason == Reason::Converged) r.reason = Reason::ResidualCheck;
}

} // namespace

IntervalResult solve_interval(Backend &backend, const Settings &base, const Callbacks &callbacks, const IntervalSettings &w)
{
  validate_interval(base, w);
  IntervalResult out;
  Result &r = out.result;
  const Bounds bd = spectrum_bounds(backend, base);
  out.lo = bd.lo, out.hi = bd.hi;
  r.matvecs = bd.products;
  r.norm_estimate = bd.norm;
  r.reason = Reason::Converged;
  if (w.b < bd.lo || w.a > bd.hi) return out; // no eigenvalue can lie in the window
  const WindowFilter f = window_filter(bd.lo, bd.hi, w.a, w.b, w.degree, w.end_value);
  out.degree = f.p.degree(), out.end_value = f.end_value;
  if (callbacks.interval_progress) tell_counting(callbacks, out.degree, w.count_vectors, r.matvecs);
  const CountEstimate est =
      estimate_count(backend, interval_indicator(bd.lo, bd.hi, w.a, w.b, out.degree), w.count_vectors, base.seed);
  out.count_estimate = est.mean, out.count_error = est.error;
  r.matvecs += est.products;
  const ChunkPlan plan = plan_chunks(backend.global_size(), est.mean, est.error, base, w.block_size, w.max_columns);
  out.columns = plan.columns;
  ConstrainedBackend cb(backend, plan.capacity);
  cb.resize_basis(plan.columns - plan.capacity);
  Callbacks cf; // the filtered values' errors are relative to p's peak, 1
  cf.monitor = callbacks.monitor;
  cf.stop = callbacks.stop;
  cf.error = [](double, double res) { return res; };
  IntervalProgress progress;
  long chunks_before = 0; // filtered products of the chunks before the one under way
  if (callbacks.interval_progress) {
    progress.degree = out.degree, progress.count_estimate = est.mean, progress.count_error = est.error;
    progress.columns = plan.columns, progress.first_cycle_products = static_cast<long>(plan.ncv) * out.degree;
    progress.products = r.matvecs, progress.plan = true;
    callbacks.interval_progress(progress);
    progress.plan = false;
    if (callbacks.tick) cf.tick = [&, own = r.matvecs](int its, int locked, long matvecs) {
      progress.restart = its, progress.found = cb.constraints() + locked;
      progress.products = own + (chunks_before + matvecs) * out.degree;
      callbacks.interval_progress(progress);
    };
  }
  const auto before_chunk = [&](const Chunks &so_far) { progress.chunk = so_far.chunks + 1, chunks_before = so_far.counts.matvecs; };
  const double ends = std::max(std::isfinite(w.a) ? std::abs(w.a) : 0.0, std::isfinite(w.b) ? std::abs(w.b) : 0.0);
  const double spectrum = std::max(-bd.lo, bd.hi); // the largest |lambda| the bounds allow
  const double scale = ends > 0 ? ends : spectrum;  // the window's scale (select_window)
  Chunks ch;
  {
    backend.set_operator_filter(&f.p);
    const FilterOnExit clear(backend);
    ch = run_chunks(cb, filtered_settings(base, plan, scale, spectrum), plan.next_nev, plan.capacity, cf, [&](double v) { return v >= f.end_value; },
                    before_chunk);
  }
  out.chunks = ch.chunks, out.found = static_cast<int>(ch.values.size()), out.capacity_reached = ch.capacity_reached;
  out.filter_applications = ch.counts.matvecs;
  const int d = cb.constraints(); // the converged vectors and the last chunk's unconverged ones
  std::vector<double> lambda, res;
  rayleigh_ritz(backend, d, lambda, res);
  const long own = r.matvecs;
  r = ch.counts;
  r.matvecs = own + ch.counts.matvecs * out.degree + 2L * d;
  r.norm_estimate = bd.norm;
  select_window(backend, w, detail::with_defaults(callbacks, Settings{}), base.tol, scale, d,
                lambda, res, r);
  return out;
}

namespace {

/// Random vectors of a threshold's count estimate: it only sizes the room, which has a margin of half the
/// count, and a short estimate costs a fraction of the solve (a window's takes 8).
constexpr int kThresholdCountVectors = 6;

struct ThresholdRoom {
  int capacity = 0; ///< pairs the constraint block holds
  int nev = 0;      ///< the first chunk's pairs
  double count = -1, error = 0;
  long products = 0;
};

// The count of eigenvalues beyond `threshold` (LargestMagnitude: |lambda| >= |threshold|) from the
// indicators of the operator's values there, the eigenvalues being the values translated by
// c.eigenvalue(0); a relative threshold is taken of the spectrum's end less its padding. The room is
// SLEPc's max(8 nev, 256), or half as much again as the count, within max_columns. The indicator blurs
// the threshold over a few indicator_blur() (the estimate of a 3-D Laplacian's values above 9 was 188
// for 106): where the count does not fit, it is estimated again with the threshold moved 3 blurs
// inward, which counts no value short of it, and the error names that count when it does not fit
// either. Without a translation (a spectral transformation) there is no estimate, and the room is SLEPc's.
ThresholdRoom plan_threshold(Backend &b, const Settings &base, const Callbacks &c, double threshold, bool relative, int chunk_columns,
                             int max_columns)
{
  ThresholdRoom room;
  const index_t n = b.global_size();
  const auto slepc_room = [&](double expected) {
    return static_cast<int>(std::min<double>(static_cast<double>(n), std::max({8.0 * base.nev, 256.0, expected + expected / 2 + 16})));
  };
  room.capacity = slepc_room(0);
  room.nev = std::min(base.nev, kMaxChunkNev);
  if (!base.translation_map) return room;
  const Bounds bd = spectrum_bounds(b, base);
  room.products = bd.products;
  const double delta = c.eigenvalue(0.0);
  const double pad = kBoundsPad * (bd.hi - bd.lo) / (1 + 2 * kBoundsPad);
  const double hi = bd.hi - pad + delta, lo = bd.lo + pad + delta; // the eigenvalues' ends, about
  const double top = base.which == Which::LargestAlgebraic ? hi : std::max(std::abs(hi), std::abs(lo));
  const double t = relative ? threshold * top : threshold;
  // The estimate of the values beyond t, each end of the operator's values moved `inward` blurs.
  const auto estimate = [&](double inward) {
    CountEstimate sum;
    sum.mean = 0;
    const auto add = [&](double a, double z) { // the operator's values in [a, z]
      a = std::max(a, bd.lo), z = std::min(z, bd.hi);
      if (!(a < z)) return;
      int degree = window_filter(bd.lo, bd.hi, a, z, 0, IntervalSettings{}.end_value).p.degree();
      const double end = a > bd.lo ? a : z; // the end inside the spectrum
      while (inward > 0 && degree < kMaxFilterDegree && indicator_blur(bd.lo, bd.hi, end, degree) > (z - a) / 8)
        degree = std::min(2 * degree, kMaxFilterDegree); // moving the end costs at most 3/8 of the window
      if (a > bd.lo) a = std::min(z, a + inward * indicator_blur(bd.lo, bd.hi, a, degree));
      if (z < bd.hi) z = std::max(a, z - inward * indicator_blur(bd.lo, bd.hi, z, degree));
      if (!(a < z)) return;
      const CountEstimate e = estimate_count(b, interval_indicator(bd.lo, bd.hi, a, z, degree), kThresholdCountVectors, base.seed);
      sum.mean += std::max(0.0, e.mean), sum.error = std::hypot(sum.error, e.error), sum.products += e.products;
    };
    if (base.which == Which::SmallestAlgebraic) add(bd.lo, t - delta);
    else if (base.which == Which::LargestAlgebraic) add(t - delta, bd.hi);
    else add(std::abs(t) - delta, bd.hi), add(bd.lo, -std::abs(t) - delta);
    room.products += sum.products;
    return sum;
  };
  const CountEstimate e = estimate(0);
  room.count = e.mean, room.error = e.error;
  const double expected = std::ceil(room.count + 2 * room.error);
  room.capacity = slepc_room(expected);
  room.nev = std::clamp(static_cast<int>(expected) + 2, base.nev, kMaxChunkNev);
  if (max_columns <= 0 || room.capacity <= max_columns - chunk_columns) return room;
  room.capacity = max_columns - chunk_columns;
  const CountEstimate fewest = estimate(3);
  if (fewest.mean - 2 * fewest.error > room.capacity)
    throw Error("at least about " + std::to_string(std::lround(fewest.mean - 2 * fewest.error)) + " eigenvalues lie beyond the threshold (" +
                std::to_string(std::lround(room.count)) + " estimated), more than the " + std::to_string(std::max(room.capacity, 0)) +
                " pairs there is memory for; ask for nev pairs instead, or use more ranks");
  return room;
}

} // namespace

Result solve_to_threshold(Backend &backend, const Settings &base, const Callbacks &callbacks, double threshold, bool relative, int max_columns)
{
  if (base.which != Which::LargestAlgebraic && base.which != Which::SmallestAlgebraic && base.which != Which::LargestMagnitude)
    throw Error("a threshold applies to the largest or smallest algebraic values, or the largest magnitudes");
  if (relative && base.which == Which::SmallestAlgebraic)
    throw Error("a relative threshold applies to the largest algebraic values or the largest magnitudes");
  if (!std::isfinite(threshold)) throw Error("the threshold must be finite");
  const Callbacks c = detail::with_defaults(callbacks, base);
  const index_t n = backend.global_size();
  Settings s = base;
  s.ncv_max = 0;
  s.purify = false;
  const ThresholdRoom room = plan_threshold(backend, base, c, threshold, relative, basis_columns_needed(s), max_columns);
  s.nev = static_cast<int>(std::min<index_t>(n, std::min(room.nev, room.capacity)));
  s.ncv = static_cast<int>(std::min<index_t>(n, std::max(base.ncv, default_ncv(s.nev, n))));
  const int chunk_columns = basis_columns_needed(s);
  int capacity = room.capacity;
  if (max_columns > 0) capacity = std::min(capacity, max_columns - chunk_columns);
  if (capacity < base.nev)
    throw Error("a threshold solve needs at least " + std::to_string(chunk_columns + base.nev) + " basis columns; there is room for " +
                std::to_string(max_columns));
  ConstrainedBackend cb(backend, capacity);
  cb.resize_basis(chunk_columns);
  double key = detail::badness(s, threshold);
  bool keyed = !relative; // a relative threshold is a fraction of the first (best) value converged
  const Chunks ch = run_chunks(cb, s, std::max(base.nev, s.nev / 2), capacity, callbacks, [&](double v) {
    if (!keyed) key = detail::badness(s, threshold * c.eigenvalue(v)), keyed = true;
    return detail::badness(s, c.eigenvalue(v)) <= key;
  });
  Result r = ch.counts;
  r.matvecs += room.products;
  r.eigenvalues = ch.values;
  r.errors = ch.errors;
  r.nconv = static_cast<int>(ch.values.size());
  detail::sort_converged(backend, r, [&](double v) { return detail::badness(s, c.eigenvalue(v)); });
  r.nconv = 0;
  while (r.nconv < static_cast<int>(r.eigenvalues.size()) && detail::badness(s, c.eigenvalue(r.eigenvalues[r.nconv])) <= key) ++r.nconv;
  if (ch.capacity_reached) r.reason = Reason::MaxIterations, r.room_exhausted = true;
  r.count_estimate = room.count, r.count_error = room.error;
  return r;
}

} // namespace cudalanczos
