#include "core/backend.hpp"

#include "core/chebyshev_filter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace cudalanczos {

// The reference for every override (tests/cuda: ExpandIsEquivalentToRef): each scalar goes through a
// project/subtract reduction, so this runs on any number of ranks: three reductions a step, five when
// DGKS repeats the full pass.
void Backend::expand(int first, int last, double anorm, StepRecord *records)
{
  reference_steps(first, last, -1, anorm, records);
}

void Backend::expand_partial(int first, int last, int reach, double anorm, StepRecord *records)
{
  check_partial_reach("expand_partial", first, reach);
  reference_steps(first, last, reach, anorm, records);
}

void Backend::queue_steps(int first, int last, int reach, double anorm)
{
  check_queued("queue_steps", false);
  if (reach >= 0) check_partial_reach("queue_steps", first, reach);
  queued_  = Queued{first, last, reach, anorm};
  pending_ = true;
}

void Backend::collect_steps(StepRecord *records)
{
  check_queued("collect_steps", true);
  pending_ = false;
  if (queued_.reach < 0) expand(queued_.first, queued_.last, queued_.anorm, records);
  else expand_partial(queued_.first, queued_.last, queued_.reach, queued_.anorm, records);
}

int Backend::cancel_steps()
{
  check_queued("cancel_steps", true);
  pending_ = false;
  return 0;
}

void BasisStorage::project_with(int first, int k, int col, int with, Scalar *out)
{
  project(first, k, with, out); // out[k] is v_with^H v_with here, replaced below
  Scalar pair[2] = {0, 0};
  project(with, 1, col, pair); // v_with^H v_col = conj(v_col^H v_with)
  out[k] = conj_of(pair[0]);
}

bool ProjectedEigensolver::projected_eigen(int, const double *, int, double *, double *, int) { return false; }

void BasisStorage::rotate_from(int first, int k, int m, const Scalar *Q, int ldq)
{
  if (first < 0 || m < 0 || m > k || ldq < k) throw Error(name() + " backend: rotate_from needs first >= 0 and m <= k <= ldq");
  if (first == 0) return rotate(k, m, Q, ldq);
  const int K = first + k, M = first + m;
  std::vector<Scalar> padded(static_cast<std::size_t>(K) * M, Scalar(0));
  for (int i = 0; i < first; ++i) padded[i + static_cast<std::size_t>(i) * K] = 1.0;
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < k; ++i) padded[(first + i) + static_cast<std::size_t>(first + j) * K] = Q[i + static_cast<std::size_t>(j) * ldq];
  rotate(K, M, padded.data(), K);
}

void Backend::set_operator_filter(const ChebyshevFilter *filter)
{
  if (filter) throw Error(name() + " backend: cannot apply a polynomial filter of its operator (an interval of eigenvalues needs one)");
}

void OperatorMap::check_filter(const char *who, const ChebyshevFilter &filter, int scale)
{
  if (filter.degree() < 1) throw Error(std::string(who) + ": a polynomial filter needs degree 1 or more");
  if (!(filter.half_width > 0) || !std::isfinite(filter.half_width) || !std::isfinite(filter.center))
    throw Error(std::string(who) + ": the filter's interval must be finite with a positive half width");
  for (double c : filter.coef)
    if (!std::isfinite(c)) throw Error(std::string(who) + ": the filter's coefficients must be finite");
  if (scale != 0) throw Error(std::string(who) + ": a filtered operator must be unscaled (set_operator_scale(0) first)");
}

void Backend::set_operator_scale(int e)
{
  if (e != 0)
    throw Error(name() + " backend: cannot scale its operator (2^" + std::to_string(e) +
                " was asked for, to keep squared norms in range); this problem needs a backend that can");
}

void OperatorMap::check_scale_exponent(const char *who, int e)
{
  if (e < -kMaxScaleExponent || e > kMaxScaleExponent)
    throw Error(std::string(who) + ": operator scale 2^" + std::to_string(e) + " outside 2^-" + std::to_string(kMaxScaleExponent) +
                " .. 2^" + std::to_string(kMaxScaleExponent));
}

void Backend::check_queued(const char *who, bool want) const
{
  if (pending_ != want)
    throw Error(std::string(who) + (want ? ": no steps are queued" : ": steps are already queued (collect_steps or cancel_steps first)"));
}

void LanczosSteps::check_partial_reach(const char *who, int first, int reach)
{
  if (reach < 0 || reach > std::max(0, first - 1))
    throw Error(std::string(who) + ": the pass must end before the window (0 <= reach <= first - 1; reach " +
                std::to_string(reach) + ", first " + std::to_string(first) + ")");
}

void Backend::reference_steps(int first, int last, int reach, double anorm, StepRecord *records)
{
  std::vector<Scalar> g(3), h, h2;
  for (int j = first; j < last; ++j) {
    StepRecord &r = records[j - first];
    const int k = reach < 0 ? j + 1 : reach, w = j + 1; // the pass: columns 0..k-1
    apply_operator(j, w);
    // The three-term window v_{j-1}, v_j.
    const int lo = std::max(0, j - 1), kl = j - lo + 1;
    project(lo, kl, w, g.data());
    r.norm_before = real_part(g[kl]);
    update(lo, kl, g.data(), w); // ||w||^2 after it comes with the full pass's projection
    // Full reorthogonalization; DGKS compares with ||w|| before this pass.
    h.assign(k + 1, Scalar(0));
    project(0, k, w, h.data());
    const double mid = real_part(h[k]);
    const double after1 = subtract(0, k, h.data(), w);
    double after = after1;
    // alpha_j = v_j^H A v_j is real for a Hermitian operator: the imaginary parts are rounding.
    r.alpha = real_part(g[kl - 1]) + (j < k ? real_part(h[j]) : 0.0);
    bool lost = false;
    r.second_pass = step_rule::lost_too_much(after1, mid);
    if (r.second_pass) {
      h2.assign(k + 1, Scalar(0));
      project(0, k, w, h2.data());
      after = subtract(0, k, h2.data(), w);
      if (j < k) r.alpha += real_part(h2[j]);
      lost = step_rule::lost_too_much(after, after1);
    }
    anorm = std::max({anorm, std::sqrt(r.norm_before), std::abs(r.alpha)});
    r.anorm = anorm;
    r.beta = std::sqrt(after);
    r.breakdown = step_rule::is_breakdown(lost, r.beta, anorm, j);
    if (r.breakdown) r.beta = 0;
    scale(w, r.breakdown ? 0.0 : 1.0 / r.beta);
  }
}

// The block operations column by column: b products, 2b reductions for project_block.
void OperatorMap::apply_operator_block(int src, int dst, int b)
{
  if (b < 0 || (src < dst + b && dst < src + b && b > 0))
    throw Error("apply_operator_block: the source and destination blocks overlap or b < 0");
  for (int j = 0; j < b; ++j) apply_operator(src + j, dst + j);
}

void BasisStorage::project_block(int first, int k, int col, int b, Scalar *out)
{
  const int ld = k + b;
  std::vector<Scalar> h(static_cast<std::size_t>(std::max(k, b)) + 1);
  for (int j = 0; j < b; ++j) {
    project(first, k, col + j, h.data());
    std::copy(h.begin(), h.begin() + k, out + static_cast<std::size_t>(j) * ld);
    project(col, b, col + j, h.data());
    std::copy(h.begin(), h.begin() + b, out + k + static_cast<std::size_t>(j) * ld);
  }
}

void BasisStorage::update_block(int first, int k, const Scalar *C, int ldc, int col, int b)
{
  if (ldc < k) throw Error("update_block: ldc < k");
  if (k > 0 && b > 0 && first < col + b && col < first + k) throw Error("update_block: the blocks overlap");
  for (int j = 0; j < b; ++j) update(first, k, C + static_cast<std::size_t>(j) * ldc, col + j);
}

void BasisStorage::window_then_pass_block(int lo, int kw, int first, int k, int col, int b, Scalar *out_w, Scalar *out_p)
{
  if (kw < 1) throw Error("window_then_pass_block: the window needs a column");
  project_block(lo, kw, col, b, out_w);
  update_block(lo, kw, out_w, kw + b, col, b);
  project_block(first, k, col, b, out_p);
  update_block(first, k, out_p, k + b, col, b);
}

void BasisStorage::transform_block(int col, int b, const Scalar *M, int ldm)
{
  if (ldm < b) throw Error("transform_block: ldm < b");
  const std::size_t n = static_cast<std::size_t>(local_size());
  std::vector<Scalar> in(n * b), out(n * b, Scalar(0));
  for (int j = 0; j < b; ++j) get_column(col + j, in.data() + j * n);
  for (int j = 0; j < b; ++j)
    for (int i = 0; i < b; ++i) {
      const Scalar m = M[i + static_cast<std::size_t>(j) * ldm];
      if (m == Scalar(0)) continue;
      for (std::size_t r = 0; r < n; ++r) out[r + j * n] += m * in[r + i * n];
    }
  for (int j = 0; j < b; ++j) set_column(col + j, out.data() + j * n);
}

} // namespace cudalanczos
