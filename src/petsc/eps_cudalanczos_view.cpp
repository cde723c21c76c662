/*
   EPSView_CUDALanczos (-eps_view): the options and the plan in effect, then, after a solve, what it ran on
   and what it did, one phase per group of lines. The last solve's figures are read from its Result,
   kept whole in ctx->last.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include "core/polynomial_filter.hpp"

#include <slepc/private/epsimpl.h>

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#endif

namespace {

using cudalanczos::Reason;

// The reorthogonalization: the user's, or the solver's choice and why (after set-up), or how it will choose.
PetscErrorCode ViewReorthog(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS    *ctx    = (EPS_CUDALANCZOS *)eps->data;
  const EPSCUDALanczosPlan &plan   = ctx->plan;
  const bool                thesis = ctx->opt.variant == EPS_CUDALANCZOS_THESIS;

  PetscFunctionBegin;
  if (thesis || ctx->opt.reorthog_set)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  reorthogonalization: %s\n", thesis ? "none" : EPSCUDALanczosReorthogs[ctx->opt.reorthog]));
  else if (eps->state >= EPS_STATE_SETUP)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  reorthogonalization: %s (chosen: %s)\n", EPSCUDALanczosReorthogs[plan.reorthog_eff],
                                     plan.reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? (plan.block_sparse ? "blocks of 2 on a sparse matrix with STSHIFT" : "single-vector steps with STSHIFT")
                                     : eps->which == EPS_ALL                                ? "an interval, whose filtered step is the filter's degree in products"
                                     : plan.block_eff > 1                                   ? "block steps; partial on request"
                                     : eps->isgeneralized                                   ? "a generalized problem: each product is a solve"
                                     : plan.reorthog_dense                                  ? "a dense matrix, whose product costs more than a full pass"
                                                                                            : "an ST other than STSHIFT"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  reorthogonalization: chosen at set-up (partial for single-vector steps and the chosen blocks of 2 with STSHIFT on a sparse or shell operator of a standard problem, full for an interval and otherwise)\n"));
  PetscFunctionReturn(0);
}

// The thick-restart variant's plan: verification, block size, restart fraction, basis growth.
PetscErrorCode ViewThickRestartPlan(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS    *ctx  = (EPS_CUDALANCZOS *)eps->data;
  const EPSCUDALanczosPlan &plan = ctx->plan;
  PetscReal                 keep;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  multiplicity verification: %s\n", ctx->opt.verify ? "on" : "off"));
  if (plan.block_eff > 1)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  block size: %" PetscInt_FMT " vectors per step%s\n", plan.block_eff,
                                     !plan.block_auto ? ""
                                     : plan.block_many
                                       ? " (chosen: nev " CUDALANCZOS_MANY_PAIRS_NEV_TEXT " or more on GPUs: a block reads the locked and kept vectors once for its " CUDALANCZOS_MANY_PAIRS_BLOCK_TEXT " vectors)"
                                       : plan.block_sparse
                                       ? " (chosen: a sparse matrix of at least " CUDALANCZOS_AUTO_BLOCK_SPARSE_ROWS_TEXT " rows on one GPU, nev at most " CUDALANCZOS_AUTO_BLOCK_SPARSE_NEV_TEXT ": a block of 2 holds two copies of each eigenvalue, which spares the verification round)"
                                       : " (chosen: a dense matrix of at least " CUDALANCZOS_AUTO_BLOCK_ROWS_TEXT " rows on one GPU: 2 vectors below nev 10, 4 from nev 10)"));
  PetscCall(EPSCUDALanczosGetRestart(eps, &keep));
  if (ctx->opt.restart != (PetscReal)PETSC_DEFAULT || eps->state < EPS_STATE_SETUP)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  %d%% of the unconverged Ritz vectors kept after restart\n", (int)(100 * keep + 0.5)));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  %d%% of the unconverged Ritz vectors kept after restart (chosen: %s; 50%% after a stall)\n", (int)(100 * keep + 0.5),
                                     plan.reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? "partial reorthogonalization, whose steps orthogonalize against the kept vectors"
                                                                                          : "krylovschur's default"));
  if (plan.ncv_limit > eps->ncv)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  basis may grow from ncv %" PetscInt_FMT " to %" PetscInt_FMT " columns when convergence is slow\n", eps->ncv, plan.ncv_limit));
  PetscFunctionReturn(0);
}

// Where the last solve ran: backend, device, operator, the device memory held, the vectors' path.
PetscErrorCode ViewBackendUsed(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS         *ctx  = (EPS_CUDALANCZOS *)eps->data;
  const EPSCUDALanczosLastSolve &last = ctx->last;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  backend used: %s%s%s\n", last.backend_name.c_str(), last.device_desc.empty() ? "" : ", device ",
                                   last.device_desc.c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  operator: %s\n", last.operator_desc.c_str()));
  if (!last.symmetry_desc.empty()) PetscCall(PetscViewerASCIIPrintf(viewer, "  symmetry probe: %s\n", last.symmetry_desc.c_str()));
  if (last.backend_name == "cuda") {
    std::size_t copies, bytes, in_place, in_place_bytes, pooled = 0, own = 0;
    MatCUDALanczosDeviceCopies(&copies, &bytes, &in_place, &in_place_bytes);
#if defined(CUDALANCZOS_HAVE_CUDA)
    pooled = EPSCUDALanczosPooledBackendBytes();
    if (ctx->cache.backend) PetscCallCXX(own = cudalanczos::cuda::backend_device_bytes(*ctx->cache.backend));
#endif
    PetscCall(PetscViewerASCIIPrintf(viewer, "  matrix bytes uploaded by the last solve: %zu; device copies composed on this process's Mats: %zu (%zu bytes)\n",
                                     last.uploaded_bytes, copies, bytes));
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  device memory held: this EPS's backend %zu bytes, the pooled backend %zu bytes, operators on device Mats' own arrays: %zu "
                                     "(%zu bytes of scratch)\n",
                                     own, pooled, in_place, in_place_bytes));
  }
  if (!last.vectors_desc.empty()) PetscCall(PetscViewerASCIIPrintf(viewer, "  vectors: %s\n", last.vectors_desc.c_str()));
  if (last.converged > eps->nconv)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  returned the %" PetscInt_FMT " best of %" PetscInt_FMT " converged pairs: the BV's columns\n", eps->nconv, last.converged));
  PetscFunctionReturn(0);
}

// The last solve's operator applications and reductions, and (thick restart) where they went.
PetscErrorCode ViewCounts(EPS eps, PetscViewer viewer, bool thesis)
{
  const cudalanczos::Result &r = ((EPS_CUDALANCZOS *)eps->data)->last.result;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %ld operator applications, %ld global reductions, %d breakdowns, %ld full orthogonalization passes\n",
                                   r.matvecs, r.reductions, r.breakdowns, r.full_reorthogonalizations));
  if (thesis) PetscFunctionReturn(0);
  // Where the products went: the three parts add up to the count above; the thrown-away steps are
  // inside them (their products were paid for, their results not used).
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  operator applications by part: %ld until the nev-th pair converged (with the norm estimate), %ld verification, "
                                   "%ld true-residual check; %ld passes over the operator\n",
                                   r.matvecs_before_nev, r.matvecs_verification, r.matvecs_check, r.operator_passes));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  thrown away: %ld partial-reorthogonalization steps redone, %ld look-ahead steps run (%ld queued and dropped; "
                                   "a one-process GPU runs every queued step)\n",
                                   r.discarded_steps, r.lookahead_discarded, r.lookahead_dropped_steps));
  PetscFunctionReturn(0);
}

// The inner product the last solve ran in, and the orthogonality of the returned vectors in it.
PetscErrorCode ViewInnerProduct(EPS eps, PetscViewer viewer)
{
  const EPSCUDALanczosLastSolve &last = ((EPS_CUDALANCZOS *)eps->data)->last;

  PetscFunctionBegin;
  if (last.congruence_used)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  generalized problem with a diagonal B: solved as the standard problem of B^-1/2 A B^-1/2 "
                                             "(Euclidean inner product, x = B^-1/2 y; no solve or product with B per step)\n"));
  if (!last.generalized) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  orthogonality of the returned vectors: max|V'V-I| = %g\n", (double)last.result.orthogonality));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %s: Lanczos in the B-inner product, %ld products with B\n",
                                   eps->isgeneralized ? "generalized problem" : "a standard problem with the BV's inner-product matrix B (BVSetMatrix)", last.b_products));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  products with B: %s\n", last.b_desc.c_str()));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  B-orthogonality of the returned vectors: max|V'BV-I| = %g\n", (double)last.result.orthogonality));
  if (last.purified_relation + last.purified_solves > 0)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  purification: %d vectors from the Lanczos relation (no solve), %d by STApply\n", last.purified_relation,
                                     last.purified_solves));
  PetscFunctionReturn(0);
}

// How the last thick-restart solve adapted: partial giving way to full, the restart raised, the basis
// grown, block steps fallen back to single vectors.
PetscErrorCode ViewAdaptations(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS     *ctx = (EPS_CUDALANCZOS *)eps->data;
  const cudalanczos::Result &r   = ctx->last.result;

  PetscFunctionBegin;
  if (ctx->plan.reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  partial reorthogonalization: %ld steps redone after a full pass came due inside a chunk\n", r.discarded_steps));
    if (r.switched_to_full)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  partial reorthogonalization gave way to full: a wanted eigenvalue is too small against ||A|| for a semi-orthogonal basis at this tol\n"));
  }
  if (r.restart_raised)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  the last solve kept 50%% of the unconverged Ritz vectors after a stall: four restarts did not lower the leading error\n"));
  if (ctx->plan.ncv_limit > eps->ncv) PetscCall(PetscViewerASCIIPrintf(viewer, "  basis size when the last solve ended: %d columns\n", r.ncv_used));
  if (r.projected_solves > 0)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  projected problems: %d solved in %g s (on the GPU from order 256 where the solve runs there), of order %d at most (mpd bounds it)\n", r.projected_solves,
                                     r.projected_seconds, r.projected_order));
  if (ctx->plan.block_eff > 1 && r.block_size != ctx->plan.block_eff)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  the last solve took single-vector steps: ncv + block size exceeds the problem size\n"));
  PetscFunctionReturn(0);
}

// The operator's scaling and where its norm estimate came from.
PetscErrorCode ViewScaling(EPS eps, PetscViewer viewer)
{
  const EPSCUDALanczosLastSolve &last = ((EPS_CUDALANCZOS *)eps->data)->last;
  const cudalanczos::Result     &r    = last.result;

  PetscFunctionBegin;
  if (r.scale_exponent)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  operator scaled by 2^%d for the last solve: its norm estimate %g (from a product) lies outside [2^-256, 2^256], where "
                                     "squared norms are safe; eigenvalues scaled back\n",
                                     r.scale_exponent, r.norm_estimate));
  if (last.norm_reused)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  norm estimate %g reused from the matrix (unchanged since a solve measured it): no product\n", r.norm_estimate));
  if (last.st_norm_reused)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  norm estimate %g of the ST's operator reused from this EPS's last solve (same ST type, shift and matrices): no solve\n",
                                     r.norm_estimate));
  PetscFunctionReturn(0);
}

// The true-residual check of the converged pairs.
PetscErrorCode ViewResidualCheck(EPS eps, PetscViewer viewer)
{
  const cudalanczos::Result &r = ((EPS_CUDALANCZOS *)eps->data)->last.result;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  true residuals checked: %d converged pairs, %d failed the convergence test and were not counted\n",
                                   r.residuals_checked, r.residual_rejected));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  true residuals proven without a product: %d converged pairs (Lanczos residual + dropped couplings + rounding below tol)\n",
                                   r.residuals_proven));
  if (r.residual_retries)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  after the check left fewer than nev the solve went on, locking pairs only two digits beyond tol\n"));
  PetscFunctionReturn(0);
}

// Why the last solve returned fewer than nev converged pairs, with a hint where the user's ncv leaves few
// columns beyond nev (SLEPc's default is max(2 nev, nev + 15)).
PetscErrorCode ViewShortfall(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS *ctx         = (EPS_CUDALANCZOS *)eps->data;
  const Reason           reason      = ctx->last.result.reason;
  const PetscInt         ncv_default = eps->nev < 500 ? PetscMax(2 * eps->nev, eps->nev + 15) : eps->nev + 500;
  const char            *why         = "";

  PetscFunctionBegin;
  switch (reason) {
  case Reason::MaxIterations: why = "the iteration limit (max_it) was reached"; break;
  case Reason::Breakdown: why = "the Krylov space was exhausted first"; break;
  case Reason::UserStop: why = "the user's stopping test ended it"; break;
  case Reason::ResidualCheck: why = "pairs the iteration counted as converged failed the convergence test on their true residuals"; break;
  case Reason::Converged: why = "the rest did not pass the true-residual check"; break;
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  the last solve returned %" PetscInt_FMT " of %" PetscInt_FMT " wanted pairs converged: %s\n", eps->nconv,
                                   eps->nev, why));
  if (reason == Reason::MaxIterations && ctx->opt.variant == EPS_CUDALANCZOS_THICK_RESTART && eps->ncv < ncv_default && eps->ncv < eps->n)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  ncv %" PetscInt_FMT " leaves %" PetscInt_FMT " columns beyond nev %" PetscInt_FMT
                                     " (the default ncv for it is %" PetscInt_FMT "): a larger ncv or mpd converges in fewer restarts\n",
                                     eps->ncv, eps->ncv - eps->nev, eps->nev, ncv_default));
  PetscFunctionReturn(0);
}

// The multiplicity verification of the last solve.
PetscErrorCode ViewVerification(EPS eps, PetscViewer viewer)
{
  const cudalanczos::Result &r = ((EPS_CUDALANCZOS *)eps->data)->last.result;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  verification rounds ended by the probabilistic certificate: %d\n", r.certificates));
  if (r.verification_cut)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  verification cut short (max_it, or no basis column left for the complement): copies of the wanted "
                                             "eigenvalues may be missing; raise -eps_max_it or -eps_cudalanczos_ncv_max\n"));
  if (r.block_size > 1)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  verification rounds not needed: %d (no wanted value at hand as many times as the block has vectors)\n",
                                     r.block_certified));
  // Looks inside a cycle happen only with the verification on (the last wanted pairs, the rounds).
  PetscCall(PetscViewerASCIIPrintf(viewer, "  look-ahead: %ld steps run ahead of a look that ended its cycle (in the operator applications)\n",
                                   r.lookahead_discarded));
  PetscFunctionReturn(0);
}

// An interval (EPS_ALL): the filter, the count estimate against what was found, and the room.
PetscErrorCode ViewInterval(EPS eps, PetscViewer viewer)
{
  const EPSCUDALanczosLastSolve      &last = ((EPS_CUDALANCZOS *)eps->data)->last;
  const cudalanczos::IntervalResult &ir   = last.interval_result;
  char                               block[64] = "";

  PetscFunctionBegin;
  // A block step applies p(A) to its b vectors together: on the GPU one pass over A per product for all b.
  // The solve's block size is the largest its chunks took (1 where none had room for a block).
  if (last.result.block_size > 1) PetscCall(PetscSNPrintf(block, sizeof(block), " in blocks of %d", last.result.block_size));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  interval [%g, %g]: polynomial filter of degree %d, p(a) = p(b) = %.3f, on the spectrum's bounds [%g, %g]\n",
                                   (double)eps->inta, (double)eps->intb, ir.degree, ir.end_value, ir.lo, ir.hi));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  filtered Lanczos%s: %d chunks, %d pairs converged (the interval's and those beyond its ends), %ld applications "
                                   "of p(A) (%ld products with A), basis of %d columns\n",
                                   block, ir.chunks, ir.found, ir.filter_applications, ir.filter_applications * ir.degree, ir.columns));
  if (ir.count_estimate >= 0) {
    // The estimate counts the eigenvalues within its kernel's blur of an end in part: where the density
    // changes there, it is off by more than its +- (the stochastic error). At the filter's degree the blur
    // is most of the window's width.
    const double blur_a = cudalanczos::indicator_blur(ir.lo, ir.hi, (double)eps->inta, ir.degree);
    const double blur_b = cudalanczos::indicator_blur(ir.lo, ir.hi, (double)eps->intb, ir.degree);
    const double width  = (double)(eps->intb - eps->inta);
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  eigenvalues in the interval: %" PetscInt_FMT " returned, %.1f +- %.1f estimated (kernel polynomial method, its ends "
                                     "blurred over about %.2g and %.2g, the window %.3g wide)\n",
                                     eps->nconv, ir.count_estimate, ir.count_error, blur_a, blur_b, width));
    // The estimate smooths over the filter's width at each end: only a gap well beyond its error is reported.
    if (eps->nconv < ir.count_estimate - 4 * ir.count_error - 0.2 * ir.count_estimate - 2)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  fewer eigenvalues returned than estimated: some may be missing (raise -eps_max_it)\n"));
  }
  if (ir.capacity_reached)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  the basis ran out of room before the interval's end was reached: eigenvalues may be missing (the device memory "
                                             "limits it; split the interval)\n"));
  PetscFunctionReturn(0);
}

// The threshold test's count estimate, which sized the room for its pairs, and whether the room ran out.
PetscErrorCode ViewThreshold(EPS eps, PetscViewer viewer)
{
  const cudalanczos::Result &r = ((EPS_CUDALANCZOS *)eps->data)->last.result;

  PetscFunctionBegin;
  if (r.count_estimate >= 0)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  eigenvalues beyond the threshold: %.1f +- %.1f estimated (kernel polynomial method), which sized the room for them\n",
                                     r.count_estimate, r.count_error));
  if (r.room_exhausted)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  the threshold test ran out of room after %" PetscInt_FMT " pairs, all beyond the threshold: more may be (the room is "
                                             "max(8 nev, 256) pairs or half as many again as estimated, within what the device memory holds)\n",
                                     eps->nconv));
  PetscFunctionReturn(0);
}

// What the last solve ran on and did.
PetscErrorCode ViewLastSolve(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS *ctx    = (EPS_CUDALANCZOS *)eps->data;
  const bool             thesis = ctx->opt.variant == EPS_CUDALANCZOS_THESIS;

  PetscFunctionBegin;
  PetscCall(ViewBackendUsed(eps, viewer));
  PetscCall(ViewCounts(eps, viewer, thesis));
  PetscCall(ViewInnerProduct(eps, viewer));
  if (!thesis) PetscCall(ViewAdaptations(eps, viewer));
  PetscCall(ViewScaling(eps, viewer));
  if (!thesis) PetscCall(ViewResidualCheck(eps, viewer));
  if (ctx->last.interval) PetscCall(ViewInterval(eps, viewer));
  else if (EPSCUDALanczosThresholdTest(eps)) PetscCall(ViewThreshold(eps, viewer));
  else if (eps->nconv < eps->nev) PetscCall(ViewShortfall(eps, viewer));
  if (!thesis && ctx->opt.verify) PetscCall(ViewVerification(eps, viewer));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode EPSView_CUDALanczos(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool              isascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "  variant: %s\n", EPSCUDALanczosVariants[ctx->opt.variant]));
  PetscCall(ViewReorthog(eps, viewer));
  if (ctx->opt.variant != EPS_CUDALANCZOS_THESIS) PetscCall(ViewThickRestartPlan(eps, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  backend requested: %s, kernels: %s\n", EPSCUDALanczosBackends[ctx->opt.backend],
                                   EPSCUDALanczosKernelsTypes[ctx->opt.kernels]));
  if (ctx->last.solved) PetscCall(ViewLastSolve(eps, viewer));
  PetscFunctionReturn(0);
}
