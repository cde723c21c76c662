/*
   EPS_ALL with an interval (EPSSetInterval, -eps_interval a,b): every eigenpair in [a, b] by Lanczos on a
   polynomial filter of A; and the threshold test (EPSSetThreshold): every eigenpair beyond a value, in
   chunks of nev (src/core/interval_solve.hpp). Set-up checks what each needs; the solve runs it on the
   solve's backend and grows the EPS's solution arrays to what it found.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

namespace {

// What the solves in chunks (an interval, the threshold test; src/core/interval_solve.hpp) need: a matrix's
// products in the Euclidean inner product (A, or for EPS_GHEP the congruent B^-1/2 A B^-1/2 of a diagonal
// B, which set-up's ChooseCongruence has taken by now), the basis's first columns for the chunks' own
// constraints (no deflation space), thick restart. `what` names the feature in the messages.
PetscErrorCode CheckChunkedSolve(EPS eps, const char *what)
{
  EPS_CUDALANCZOS *ctx  = (EPS_CUDALANCZOS *)eps->data;
  const MPI_Comm   comm = PetscObjectComm((PetscObject)eps);

  PetscFunctionBegin;
  PetscCheck(eps->nds == 0, comm, PETSC_ERR_SUP, "EPSCUDALANCZOS does not combine %s with a deflation space", what);
  PetscCheck(ctx->opt.variant == EPS_CUDALANCZOS_THICK_RESTART, comm, PETSC_ERR_SUP,
             "The thesis variant computes one eigenpair; %s needs -eps_cudalanczos_variant thick_restart", what);
  // With no deflation space and thick restart, the congruence was not taken only for a B that is not
  // diagonal or an ST other than STSHIFT.
  PetscCheck(eps->problem_type == EPS_HEP || ctx->plan.congruence, comm, PETSC_ERR_SUP,
             "EPSCUDALANCZOS computes %s for standard Hermitian problems (EPS_HEP), and for EPS_GHEP with STSHIFT and a diagonal B (an AIJ "
             "matrix with only its diagonal stored, solved as B^-1/2 A B^-1/2); for another generalized one use -eps_type krylovschur", what);
  PetscFunctionReturn(0);
}

// The solution arrays and the BV hold `found` pairs; perm as EPSSolve set it before the solve (its sort reads it).
// The grown ncv is what SLEPc sizes them by, not a setting: the next set-up starts from set-up's ncv
// again (a re-solve that took the grown one for the user's would also take set-up's mpd as the user's,
// and bound the filtered solve's cycles by it).
PetscErrorCode GrowSolution(EPS eps, PetscInt found)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  if (found <= eps->ncv) PetscFunctionReturn(0);
  ctx->plan.ncv_before_growth = eps->ncv;
  ctx->plan.ncv_grown         = found;
  eps->ncv                    = found;
  PetscCall(EPSAllocateSolution(eps, 0)); // the BV's columns (it leaves eigr alone when the BV has them already)
  PetscCall(EPSCUDALanczosValueArrays(eps, found));
  PetscFunctionReturn(0);
}

} // namespace

// An interval's filtered solves take blocks of 2 unless told otherwise: fewer applications of the filter
// than single vectors (the block certifies the verification), each product a pass over A for both on the
// GPU; blocks of 4 and 8 took longer (docs/tuning.md#core-block-filter).
constexpr PetscInt kIntervalBlock = 2;

// The filter is a polynomial in A alone: STSHIFT without a shift, and what every solve in chunks needs.
// Sets the filtered solves' block size.
PetscErrorCode EPSCUDALanczosCheckInterval(EPS eps)
{
  EPS_CUDALANCZOS *ctx  = (EPS_CUDALANCZOS *)eps->data;
  const MPI_Comm   comm = PetscObjectComm((PetscObject)eps);
  PetscBool      isshift, isfilter;
  PetscScalar    sigma;

  PetscFunctionBegin;
  PetscCheck(eps->inta < eps->intb, comm, PETSC_ERR_ARG_WRONG,
             "EPS_ALL needs an interval [a, b] with a < b: EPSSetInterval() or -eps_interval a,b");
  PetscCall(CheckChunkedSolve(eps, "an interval (EPS_ALL)"));
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, &isshift));
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, "filter", &isfilter));
  PetscCheck(!isfilter, comm, PETSC_ERR_SUP,
             "EPSCUDALANCZOS builds its own polynomial filter for an interval (EPS_ALL): leave the ST as STSHIFT (-st_type shift) and set the "
             "degree with -eps_cudalanczos_filter_degree; STFILTER's parameters would not be read");
  PetscCheck(isshift, comm, PETSC_ERR_SUP,
             "EPSCUDALANCZOS computes an interval (EPS_ALL) with a polynomial filter of A: the ST must be STSHIFT (-st_type shift), not %s",
             ((PetscObject)eps->st)->type_name);
  PetscCall(STGetShift(eps->st, &sigma));
  PetscCheck(sigma == 0.0, comm, PETSC_ERR_SUP, "EPSCUDALANCZOS computes an interval (EPS_ALL) of A itself: the ST's shift must be 0");
  if (eps->nev == 0) eps->nev = 1;
  ctx->plan.interval_block = ctx->opt.block_size == PETSC_DEFAULT ? kIntervalBlock : ctx->opt.block_size;
  PetscFunctionReturn(0);
}

bool EPSCUDALanczosThresholdTest(EPS eps)
{
#if SLEPC_VERSION_GE(3, 26, 0)
  return eps->stop == EPS_STOP_THRESHOLD;
#else
  (void)eps;
  return false;
#endif
}

// Chunks of nev pairs, with A's products: largest or smallest real values, or largest magnitudes (a
// relative threshold: largest ones), and what every solve in chunks needs.
PetscErrorCode EPSCUDALanczosCheckThreshold(EPS eps)
{
  PetscFunctionBegin;
#if SLEPC_VERSION_GE(3, 26, 0)
  const bool largest = eps->which == EPS_LARGEST_REAL || eps->which == EPS_LARGEST_MAGNITUDE;
  PetscCheck(largest || (eps->which == EPS_SMALLEST_REAL && !eps->threlative), PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "EPSCUDALANCZOS takes the threshold test (EPSSetThreshold) with -eps_largest_real or -eps_largest_magnitude, or an absolute "
             "threshold with -eps_smallest_real");
#endif
  PetscCall(CheckChunkedSolve(eps, "the threshold test"));
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscCheck(ctx->opt.block_size == PETSC_DEFAULT || ctx->opt.block_size <= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "Solved with single-vector steps, the threshold test needs -eps_cudalanczos_block_size unset or 1");
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosSolveThreshold(EPS eps, cudalanczos::Backend &solver, const cudalanczos::Settings &s, const cudalanczos::Callbacks &cb,
                                            PetscBool on_device, cudalanczos::Result *r)
{
  int                   max_columns = 0;
  cudalanczos::Settings chunk       = s;

  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosDeviceColumns(eps, on_device, &max_columns));
  // nev is only where the search starts (SLEPc's nev with a threshold): chunks of at least 16 pairs, so
  // that SLEPc's default nev of 1 does not make every chunk start a Krylov space for one pair.
  chunk.nev = (int)PetscMin((PetscInt)PetscMax(s.nev, 16), eps->n);
  chunk.ncv = (int)PetscMin((PetscInt)PetscMax(s.ncv, PetscMax(2 * chunk.nev, chunk.nev + 15)), eps->n);
#if SLEPC_VERSION_GE(3, 26, 0)
  PetscCallCXX(*r = cudalanczos::solve_to_threshold(solver, chunk, cb, (double)eps->thres, eps->threlative ? true : false, max_columns));
#else
  (void)solver, (void)s, (void)cb;
  SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP, "the threshold test needs SLEPc 3.26 or later");
#endif
  PetscCall(GrowSolution(eps, (PetscInt)r->eigenvalues.size()));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosSolveInterval(EPS eps, cudalanczos::Backend &solver, const cudalanczos::Settings &s, const cudalanczos::Callbacks &cb,
                                           PetscBool on_device, cudalanczos::Result *r)
{
  EPS_CUDALANCZOS              *ctx = (EPS_CUDALANCZOS *)eps->data;
  cudalanczos::IntervalSettings w;

  PetscFunctionBegin;
  w.a      = eps->inta;
  w.b      = eps->intb;
  w.degree     = (int)ctx->opt.filter_degree;
  w.block_size = (int)ctx->plan.interval_block;
  PetscCall(EPSCUDALanczosDeviceColumns(eps, on_device, &w.max_columns));
  PetscCallCXX(ctx->last.interval_result = cudalanczos::solve_interval(solver, s, cb, w));
  ctx->last.interval = PETSC_TRUE;
  PetscCallCXX(*r = std::move(ctx->last.interval_result.result));
  ctx->last.interval_result.result = cudalanczos::Result{};
  PetscCall(GrowSolution(eps, (PetscInt)r->eigenvalues.size()));
  PetscFunctionReturn(0);
}
