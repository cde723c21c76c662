/*
   EPS_ALL with an interval (EPSSetInterval, -eps_interval a,b): every eigenpair in [a, b] by Lanczos on a
   polynomial filter of A (src/core/interval_solve.hpp). Set-up checks what the method needs; the solve
   runs it on the solve's backend and grows the EPS's solution arrays to what it found.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

// The filter is a polynomial in A alone: a standard Hermitian problem, STSHIFT without a shift, no
// deflation space, single-vector thick restart.
PetscErrorCode EPSCUDALanczosCheckInterval(EPS eps)
{
  EPS_CUDALANCZOS *ctx  = (EPS_CUDALANCZOS *)eps->data;
  const MPI_Comm   comm = PetscObjectComm((PetscObject)eps);
  PetscBool        isshift, isfilter;
  PetscScalar      sigma;

  PetscFunctionBegin;
  PetscCheck(eps->inta < eps->intb, comm, PETSC_ERR_ARG_WRONG,
             "EPS_ALL needs an interval [a, b] with a < b: EPSSetInterval() or -eps_interval a,b");
  PetscCheck(eps->problem_type == EPS_HEP, comm, PETSC_ERR_SUP,
             "EPSCUDALANCZOS computes an interval (EPS_ALL) for standard Hermitian problems (EPS_HEP) only; for a generalized one use "
             "-eps_type krylovschur with spectrum slicing");
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
  PetscCheck(eps->nds == 0, comm, PETSC_ERR_SUP, "EPSCUDALANCZOS does not combine an interval (EPS_ALL) with a deflation space");
  PetscCheck(ctx->opt.variant == EPS_CUDALANCZOS_THICK_RESTART, comm, PETSC_ERR_SUP,
             "The thesis variant computes one eigenpair; an interval (EPS_ALL) needs -eps_cudalanczos_variant thick_restart");
  PetscCheck(ctx->opt.block_size == PETSC_DEFAULT || ctx->opt.block_size <= 1, comm, PETSC_ERR_SUP,
             "An interval (EPS_ALL) is solved with single-vector steps: leave -eps_cudalanczos_block_size unset or 1");
  if (eps->nev == 0) eps->nev = 1;
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
  w.degree = (int)ctx->opt.filter_degree;
  PetscCall(EPSCUDALanczosDeviceColumns(eps, on_device, &w.max_columns));
  PetscCallCXX(ctx->last.interval_result = cudalanczos::solve_interval(solver, s, cb, w));
  ctx->last.interval = PETSC_TRUE;
  PetscCallCXX(*r = std::move(ctx->last.interval_result.result));
  ctx->last.interval_result.result = cudalanczos::Result{};
  const PetscInt found = (PetscInt)r->eigenvalues.size();
  if (found > eps->ncv) { // the solution arrays and the BV hold every pair of the interval
    eps->ncv = found;
    PetscCall(EPSAllocateSolution(eps, 0));
    for (PetscInt i = 0; i < found; ++i) eps->perm[i] = i; // as EPSSolve set them before the solve, which the sort reads
  }
  PetscFunctionReturn(0);
}
