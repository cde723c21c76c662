/*
   EPSSetUp_CUDALanczos: what the solver decides before a solve, as a sequence of phases the way SLEPc's
   own EPSSetUp_Lanczos reads: check the problem, the eigenvalues wanted, the congruence of a diagonal B,
   the dimensions (ncv, mpd, max_it), the block size, the reorthogonalization and restart, the basis limit,
   then the solution's storage and the BV's inner product. Every decision lands in ctx->plan; the options
   (ctx->opt) are read, never written. Collective: every rank takes the same decisions in the same order.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#include <cmath>

PetscErrorCode EPSCUDALanczosWhich(EPS eps, cudalanczos::Which *w)
{
  using cudalanczos::Which;

  PetscFunctionBegin;
  switch (eps->which) {
  case EPS_LARGEST_MAGNITUDE: *w = Which::LargestMagnitude; break;
  case EPS_SMALLEST_MAGNITUDE: *w = Which::SmallestMagnitude; break;
  case EPS_LARGEST_REAL: *w = Which::LargestAlgebraic; break;
  case EPS_SMALLEST_REAL: *w = Which::SmallestAlgebraic; break;
  case EPS_TARGET_MAGNITUDE: *w = Which::TargetMagnitude; break;
  case EPS_TARGET_REAL: *w = Which::TargetReal; break;
  default:
    SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
            "EPSCUDALANCZOS does not support this -eps_which value; supported: largest_magnitude, smallest_magnitude, largest_real, "
            "smallest_real, target_magnitude, target_real");
  }
  PetscFunctionReturn(0);
}

namespace {

// Hermitian problems only, none of the features a Lanczos driver has no use for, and a stopping test that
// ends at nev pairs.
PetscErrorCode CheckProblem(EPS eps)
{
  PetscFunctionBegin;
  PetscCheck(eps->problem_type != EPS_GHIEP, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "EPSCUDALANCZOS solves Hermitian problems with a positive definite B only (EPS_HEP, EPS_GHEP): EPS_GHIEP (B indefinite) "
             "needs a pseudo-Lanczos method; use -eps_type krylovschur");
  PetscCheck(eps->problem_type == EPS_HEP || eps->problem_type == EPS_GHEP, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "EPSCUDALANCZOS solves Hermitian problems only: EPS_HEP (A x = lambda x, -eps_hermitian) and EPS_GHEP (A x = lambda B x "
             "with B Hermitian positive definite, -eps_gen_hermitian); for %s problems use another EPS type",
             eps->isgeneralized ? "generalized non-Hermitian" : "non-Hermitian");
  EPSCheckUnsupported(eps, EPS_FEATURE_BALANCE | EPS_FEATURE_ARBITRARY | EPS_FEATURE_REGION | EPS_FEATURE_EXTRACTION | EPS_FEATURE_TWOSIDED);
  // The driver ends at nev converged pairs (or a user's test says stop); the threshold test (EPSSetThreshold,
  // SLEPc >= 3.26 here) runs in chunks of nev until a value beyond it converges (its own checks follow the
  // congruence's choice, in EPSSetUp). Any other stopping test would be met at nev and return too few pairs
  // without saying so.
  PetscCheck(eps->stop == EPS_STOP_BASIC || eps->stop == EPS_STOP_USER || EPSCUDALanczosThresholdTest(eps), PetscObjectComm((PetscObject)eps),
             PETSC_ERR_SUP,
             "EPSCUDALANCZOS supports the basic stopping test (nev pairs or max_it), a user's (EPSSetStoppingTestFunction) and, with SLEPc 3.26 "
             "or later, the threshold test (EPSSetThreshold), not EPSStop %d; use -eps_type krylovschur for it, or ask for nev pairs",
             (int)eps->stop);
  PetscFunctionReturn(0);
}

// The eigenvalues wanted: SLEPc's default `which` for a Krylov method (EPSSetWhichEigenpairs_Default, not
// exported) and at least one of them.
PetscErrorCode ChooseWhich(EPS eps)
{
  cudalanczos::Which which;

  PetscFunctionBegin;
  if (eps->which == EPS_ALL) { // every eigenvalue in an interval: its own checks (eps_cudalanczos_interval.cpp)
    PetscCall(EPSCUDALanczosCheckInterval(eps));
    PetscFunctionReturn(0);
  }
  if (!eps->which) {
    PetscBool target;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)eps->st, &target, STSINVERT, STCAYLEY, ""));
    eps->which = target ? EPS_TARGET_MAGNITUDE : EPS_LARGEST_MAGNITUDE;
  }
  PetscCall(EPSCUDALanczosWhich(eps, &which));
  if (eps->nev == 0) eps->nev = 1; // SLEPc >= 3.22 leaves nev 0 until set-up; 3.18 starts at 1
  PetscCheck(eps->nev >= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE, "nev must be at least 1");
  PetscFunctionReturn(0);
}

// The choices below made for STSHIFT are for its operator being the matrix (one pass over it per product);
// with a B its operator is B^-1 A, a solve per product, as with the other STs, unless B is diagonal: then
// the problem is solved as the standard one of B^-1/2 A B^-1/2 (EPSCUDALanczosCongruence), a matrix
// again. Not with a deflation space (its vectors would have to be taken to that space too). *isshift on
// return: whether the operator is a matrix applied as STSHIFT applies it.
PetscErrorCode ChooseCongruence(EPS eps, PetscInt nds, PetscBool *isshift)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, isshift));
  ctx->plan.congruence = PETSC_FALSE;
  if (eps->isgeneralized && *isshift && nds == 0 && ctx->opt.variant == EPS_CUDALANCZOS_THICK_RESTART) {
    Mat B;
    PetscCall(STGetMatrix(eps->st, 1, &B));
    PetscCall(EPSCUDALanczosIsDiagonal(B, &ctx->plan.congruence));
  }
  if (eps->isgeneralized && !ctx->plan.congruence) *isshift = PETSC_FALSE;
  if (!ctx->plan.congruence) { // a C kept from an earlier problem is not needed any more
    PetscCall(MatDestroy(&ctx->cache.congruent));
    PetscCall(VecDestroy(&ctx->cache.b_isqrt));
  }
  PetscFunctionReturn(0);
}

// The block size the solver chooses when the user left it (EPSCUDALanczosSetBlockSize), on GPUs with
// STSHIFT (docs/tuning.md#petsc-automatic-block-size); else 1:
// - many pairs (EPSCUDALanczosManyPairsBlocks), on any number of ranks: kManyPairsBlock. Each step's
//   orthogonalization passes over the locked and kept vectors, hundreds to thousands of columns, at every
//   product; a block reads them once for all its vectors, twice per block instead of twice per vector, and
//   sums its inner products over the ranks once.
// - a dense matrix of at least kAutoBlockRows rows, on one rank: 4 from nev 10 and 2 below. A pass over
//   the matrix costs about the same for b vectors as for one.
// - a sparse (AIJ) matrix of at least kAutoBlockSparseRows rows, on one rank, real, standard, nev at most
//   kAutoBlockSparseNev: 2, with partial reorthogonalization (ChooseReorthog). A block space of 2 random
//   vectors holds two copies of every eigenvalue, which spares the verification round, and took 0.35-0.6
//   of the passes a single vector took on most matrices measured; blocks of 2 lose where they take as
//   many passes (clustered values with copies).
// Distributed operators apply a block column by column, so the last two rules are one rank's only. The
// reorthogonalization must be left to the solver or full (partial too for a sparse matrix).
// Sets plan.block_eff, plan.block_auto, plan.block_many and plan.block_sparse. Collective.
PetscErrorCode EPSCUDALanczosChooseBlockSize(EPS eps, PetscBool isshift)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscMPIInt      size;
  PetscBool        dense = PETSC_FALSE, sparse = PETSC_FALSE, use_cuda = PETSC_FALSE;
  Mat              A;
  // Not for an interval or the threshold test (their chunks take single-vector steps) nor a generalized
  // problem (untried there).
  const PetscBool plain = eps->which != EPS_ALL && !EPSCUDALanczosThresholdTest(eps) && !eps->isgeneralized ? PETSC_TRUE : PETSC_FALSE;
  const PetscBool many  = EPSCUDALanczosManyPairsBlocks(eps->nev) && plain ? PETSC_TRUE : PETSC_FALSE;
  const PetscBool full  = !ctx->opt.reorthog_set || ctx->opt.reorthog == EPS_CUDALANCZOS_REORTHOG_FULL ? PETSC_TRUE : PETSC_FALSE;
  const PetscBool part  = !ctx->opt.reorthog_set || ctx->opt.reorthog == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? PETSC_TRUE : PETSC_FALSE;
  // 2 below nev 10: a block of 2 makes the verification round unnecessary, which costs a single vector
  // as many products as the solve itself
  PetscInt b = many ? kManyPairsBlock : eps->nev >= 10 ? 4 : 2;

  PetscFunctionBegin;
  ctx->plan.block_eff  = 1;
  ctx->plan.block_auto = ctx->plan.block_many = ctx->plan.block_sparse = PETSC_FALSE;
  // Every condition but the device is the same on every rank.
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (ctx->opt.variant != EPS_CUDALANCZOS_THICK_RESTART || !isshift || !(full || part)) PetscFunctionReturn(0);
  if (!many) {
    if (size != 1) PetscFunctionReturn(0);
    PetscCall(STGetMatrix(eps->st, 0, &A));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &dense, MATSEQDENSE, MATSEQDENSECUDA, ""));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &sparse, MATSEQAIJ, MATSEQAIJCUSPARSE, ""));
    sparse = sparse && plain && part && !PetscDefined(USE_COMPLEX) && eps->n >= kAutoBlockSparseRows && eps->nev <= kAutoBlockSparseNev ? PETSC_TRUE : PETSC_FALSE;
    if (sparse) b = 2;
    else if (!(dense && full && eps->n >= kAutoBlockRows)) PetscFunctionReturn(0);
  } else if (!full) PetscFunctionReturn(0);
  if (eps->nev + 16 * b + b > eps->n) PetscFunctionReturn(0);
  PetscCall(EPSCUDALanczosUseCUDA(eps, &use_cuda));
  if (!use_cuda) PetscFunctionReturn(0);
  ctx->plan.block_eff    = b;
  ctx->plan.block_auto   = PETSC_TRUE;
  ctx->plan.block_many   = many;
  ctx->plan.block_sparse = sparse;
  PetscFunctionReturn(0);
}

// The thesis variant keeps every Lanczos vector: ncv is the most steps it may take; one vector per step,
// one eigenpair, no reorthogonalization.
PetscErrorCode PlanThesis(EPS eps, PetscInt neff)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  PetscCheck(ctx->plan.block_eff == 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "The thesis variant of EPSCUDALANCZOS takes one vector per step (block size %" PetscInt_FMT " requested); use "
             "-eps_cudalanczos_variant thick-restart for block steps",
             ctx->plan.block_eff);
  PetscCheck(eps->nev == 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "The thesis variant of EPSCUDALANCZOS computes one eigenpair (nev = %" PetscInt_FMT " requested); use "
             "-eps_cudalanczos_variant thick-restart for more",
             eps->nev);
  if (eps->ncv == kEPSUnset) eps->ncv = PetscMin(neff, 128);
  PetscCheck(eps->ncv >= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE, "ncv must be at least 1");
  if (eps->mpd == kEPSUnset) eps->mpd = eps->ncv;
  if (eps->max_it == kEPSUnset) eps->max_it = eps->ncv;
  ctx->plan.reorthog_eff = EPS_CUDALANCZOS_REORTHOG_NONE;
  PetscFunctionReturn(0);
}

// ncv from the user's ncv or mpd, or SLEPc's Krylov default (EPSSetDimensions_Default, not exported)
// widened for block steps.
PetscErrorCode ChooseNcv(EPS eps, PetscInt neff)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  if (eps->ncv != kEPSUnset) {
    PetscCheck(eps->ncv >= eps->nev + 1 || (eps->ncv == eps->nev && eps->ncv == neff), PetscObjectComm((PetscObject)eps),
               PETSC_ERR_USER_INPUT, "The value of ncv (%" PetscInt_FMT ") must be at least nev+1 (%" PetscInt_FMT ")", eps->ncv, eps->nev + 1);
  } else if (eps->mpd != kEPSUnset) {
    eps->ncv = PetscMin(neff, eps->nev + eps->mpd);
  } else if (eps->nev < kManyPairsNev) {
    eps->ncv = PetscMin(neff, PetscMax(2 * eps->nev, eps->nev + 15));
    // Block steps: room for the wanted pairs and 16 blocks. A restarted block Krylov space is only as
    // deep as its blocks per cycle; with few of them it needs several times the products of
    // single-vector steps (docs/tuning.md#petsc-basis-size-for-block-steps).
    if (ctx->plan.block_eff > 1) eps->ncv = PetscMin(neff, PetscMax(eps->ncv, eps->nev + 16 * ctx->plan.block_eff));
  } else {
    // SLEPc's rule for many pairs: 500 columns past nev, and a projected problem of at most 500 (a cycle
    // holds mpd columns past the locked ones), which bounds each restart's work on the host.
    eps->ncv = PetscMin(neff, eps->nev + 500);
    eps->mpd = PetscMin(neff, 500);
  }
  PetscFunctionReturn(0);
}

// mpd (SLEPc's meaning: the projected problem of a cycle) and max_it, checked against ncv and the block.
PetscErrorCode ChooseMpdAndMaxIt(EPS eps, PetscInt neff)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  const PetscInt   b   = ctx->plan.block_eff;

  PetscFunctionBegin;
  // An mpd beyond the problem size is clamped as EPSSetUp clamps ncv: it is what a default mpd
  // from an earlier, larger operator (EPSSetOperators with a smaller matrix) left behind.
  if (eps->mpd > neff) eps->mpd = neff;
  if (eps->mpd == kEPSUnset) eps->mpd = eps->ncv;
  PetscCheck(eps->mpd <= eps->ncv, PetscObjectComm((PetscObject)eps), PETSC_ERR_USER_INPUT,
             "mpd (%" PetscInt_FMT ") must not exceed ncv (%" PetscInt_FMT ")", eps->mpd, eps->ncv);
  // A thick restart keeps at least one Ritz vector (a block) and extends it by at least one step (block).
  // Below that nothing can converge (-eps_mpd 1 -eps_nev 5 ran 100 restarts and returned nothing); a
  // basis that holds the whole space is solved exactly in one cycle whatever mpd says. An mpd below ncv
  // bounds every block cycle, which then needs a block of kept vectors and a block step.
  const PetscInt least = b > 1 && eps->mpd < eps->ncv ? 2 * b : 1 + b;
  PetscCheck(eps->mpd >= least || eps->ncv >= neff, PetscObjectComm((PetscObject)eps), PETSC_ERR_USER_INPUT,
             "mpd (%" PetscInt_FMT ") leaves the projected problem no room: a thick restart keeps at least one %s and adds at least one "
             "Lanczos step%s to it, so mpd must be at least %" PetscInt_FMT " (nev %" PetscInt_FMT ", ncv %" PetscInt_FMT ")",
             eps->mpd, b > 1 ? "block" : "vector", b > 1 ? " (a block)" : "", least, eps->nev, eps->ncv);
  if (eps->max_it == kEPSUnset) eps->max_it = PetscMax(100, 2 * neff / eps->ncv);
  PetscFunctionReturn(0);
}

// ncv, mpd and max_it of the thick-restart variant, with the block size when it is left to the solver
// (it needs ncv left too). An ncv this EPS chose at an earlier set-up counts as chosen again: the basis
// may grow from it (EPSCUDALanczosSetNcvMax). *chosen: the solver chose ncv.
PetscErrorCode ChooseDimensions(EPS eps, PetscInt neff, PetscBool isshift, PetscBool *chosen)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  EPSCUDALanczosPlan &plan = ctx->plan;

  PetscFunctionBegin;
  *chosen = (eps->ncv == kEPSUnset || (plan.ncv_chosen > 0 && eps->ncv == plan.ncv_chosen)) &&
                (eps->mpd == kEPSUnset || (plan.ncv_chosen > 0 && eps->mpd == plan.mpd_chosen))
              ? PETSC_TRUE
              : PETSC_FALSE;
  if (*chosen) eps->ncv = eps->mpd = kEPSUnset;
  if (ctx->opt.block_size == PETSC_DEFAULT && eps->ncv == kEPSUnset && eps->mpd == kEPSUnset) PetscCall(EPSCUDALanczosChooseBlockSize(eps, isshift));
  PetscCall(ChooseNcv(eps, neff));
  PetscCall(ChooseMpdAndMaxIt(eps, neff));
  plan.ncv_chosen = *chosen ? eps->ncv : 0;
  plan.mpd_chosen = *chosen ? eps->mpd : 0;
  PetscFunctionReturn(0);
}

// Block steps reorthogonalize (fully or partially) and need room for a block beyond the wanted pairs.
PetscErrorCode CheckBlockSteps(EPS eps, PetscInt neff)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  const PetscInt   b   = ctx->plan.block_eff;

  PetscFunctionBegin;
  if (b <= 1) PetscFunctionReturn(0);
  PetscCheck(!ctx->opt.reorthog_set || ctx->opt.reorthog != EPS_CUDALANCZOS_REORTHOG_NONE, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "Block steps (block size %" PetscInt_FMT ") reorthogonalize, fully or partially; -eps_cudalanczos_reorthog none needs block size 1", b);
  PetscCheck(eps->ncv >= eps->nev + b || eps->ncv + b > neff, PetscObjectComm((PetscObject)eps), PETSC_ERR_USER_INPUT,
             "Block steps need ncv >= nev + block size (ncv %" PetscInt_FMT ", nev %" PetscInt_FMT ", block size %" PetscInt_FMT ")", eps->ncv,
             eps->nev, b);
  PetscFunctionReturn(0);
}

// Left to the solver: partial for single-vector steps with STSHIFT on a sparse or shell matrix, where a
// step's orthogonalization is what costs (the product is one matrix pass), and for the blocks of 2 set-up
// chooses for a sparse matrix (measured with partial); full otherwise. Other block steps take full; other
// STs are chosen so that few steps are needed and each product is a solve, so full costs next to nothing
// there; a dense matrix's product reads n^2 entries against a pass over the
// basis's n ncv, and partial cost it products; an interval's filtered step is the filter's degree in
// products, and its semi-orthogonal basis cost a third more of them
// (docs/tuning.md#petsc-default-reorthogonalization).
PetscErrorCode ChooseReorthog(EPS eps, PetscBool isshift)
{
  EPS_CUDALANCZOS *ctx   = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        dense = PETSC_FALSE;

  PetscFunctionBegin;
  if (isshift) {
    Mat A;
    PetscCall(STGetMatrix(eps->st, 0, &A));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &dense, MATSEQDENSE, MATMPIDENSE, MATSEQDENSECUDA, MATMPIDENSECUDA, ""));
  }
  ctx->plan.reorthog_dense = dense;
  if (ctx->opt.reorthog_set) ctx->plan.reorthog_eff = ctx->opt.reorthog;
  else
    ctx->plan.reorthog_eff = (ctx->plan.block_eff == 1 || ctx->plan.block_sparse) && isshift && !dense && eps->which != EPS_ALL
                               ? EPS_CUDALANCZOS_REORTHOG_PARTIAL
                               : EPS_CUDALANCZOS_REORTHOG_FULL;
  PetscFunctionReturn(0);
}

// Left to the solver: a third with partial reorthogonalization, whose steps orthogonalize against the kept
// (and locked) vectors only, so that they are most of a step's cost where a product is cheap; a stall
// raises it to 0.5 (Settings::restart_raise). Half otherwise: with full reorthogonalization each step
// passes over the whole basis anyway, and with a solving ST a product is a solve, where fewer products
// pay (docs/tuning.md#petsc-default-restart-fraction).
void ChooseRestart(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  if (ctx->opt.restart != (PetscReal)PETSC_DEFAULT) ctx->plan.restart_eff = ctx->opt.restart;
  else ctx->plan.restart_eff = ctx->plan.reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? 0.33 : 0.5;
}

// The largest basis the solve may grow to (EPSCUDALanczosSetNcvMax): the user's limit, or by default
// max(2 ncv, ncv + 32) when the solver chose ncv, only with STSHIFT, whose operator is the matrix with its
// clustered ends: other STs are chosen to separate the wanted values, and a non-injective one (spectrum
// folding) has SLEPc sort the returned pairs by their Rayleigh quotients, so more converged pairs there
// change what is reported. The block variant keeps its basis size, and so does a cycle bounded by an
// mpd below ncv, which a larger basis would not lengthen.
void ChooseBasisLimit(EPS eps, PetscInt neff, PetscBool chosen, PetscBool isshift)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  const PetscInt   max = ctx->opt.ncv_max;

  if (ctx->plan.block_eff > 1) ctx->plan.ncv_limit = eps->ncv;
  else if (eps->mpd < eps->ncv && (max == PETSC_DEFAULT || max == PETSC_DECIDE)) ctx->plan.ncv_limit = eps->ncv;
  else if (max != PETSC_DEFAULT && max != PETSC_DECIDE) ctx->plan.ncv_limit = PetscMax(eps->ncv, PetscMin(max, neff));
  else ctx->plan.ncv_limit = chosen && isshift ? PetscMin(neff, PetscMax(2 * eps->ncv, eps->ncv + 32)) : eps->ncv;
}

// The thick-restart variant's plan: dimensions and block size, then the reorthogonalization, the restart
// fraction and the basis limit, each depending on the ones before.
PetscErrorCode PlanThickRestart(EPS eps, PetscInt neff, PetscBool isshift)
{
  PetscBool chosen;

  PetscFunctionBegin;
  PetscCall(ChooseDimensions(eps, neff, isshift, &chosen));
  PetscCall(CheckBlockSteps(eps, neff));
  PetscCall(ChooseReorthog(eps, isshift));
  ChooseRestart(eps);
  ChooseBasisLimit(eps, neff, chosen, isshift);
  PetscFunctionReturn(0);
}

// The returned vectors on the solve's GPU where the Mat makes host vectors (a host-assembled Mat on a CUDA
// PETSc): a BV of host columns is allocated and zeroed by every new EPS, and the vectors would cross to the
// host in every solve, whether or not the program reads them; VECCUDA columns are copied into device to
// device, and EPSGetEigenvector copies one to a host Vec when asked (VecCopy). Only for a BV without a
// layout yet, sized here as EPSAllocateSolution would, but from a VECCUDA template (MatCreateVecsEmpty
// gives a host Mat's type, whatever MatSetVecType said).
PetscErrorCode PlaceReturnedColumns(EPS eps, PetscInt cols)
{
  PetscFunctionBegin;
#if defined(CUDALANCZOS_PETSC_STREAMS)
  Vec         t;
  PetscBool   host_type, use;
  PetscMPIInt size;

  PetscCall(STMatCreateVecsEmpty(eps->st, &t, nullptr));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)t, &host_type, VECSEQ, VECMPI, VECSTANDARD, ""));
  PetscCall(VecDestroy(&t));
  if (!host_type) PetscFunctionReturn(0);
  PetscCall(EPSCUDALanczosReturnOnDevice(eps, cols, &use));
  if (!use) PetscFunctionReturn(0);
  if (!((PetscObject)eps->V)->type_name) PetscCall(BVSetType(eps->V, BVMAT)); // EPSAllocateSolution's default
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (size > 1) PetscCall(VecCreateMPIWithArrayAndMemType(PetscObjectComm((PetscObject)eps), PETSC_MEMTYPE_CUDA, 1, eps->nloc, eps->n, nullptr, &t));
  else PetscCall(VecCreateSeqWithArrayAndMemType(PetscObjectComm((PetscObject)eps), PETSC_MEMTYPE_CUDA, 1, eps->n, nullptr, &t));
  PetscCall(BVSetSizesFromVec(eps->V, t, cols));
  PetscCall(VecDestroy(&t));
#else
  (void)eps, (void)cols;
#endif
  PetscFunctionReturn(0);
}

// Refuses a BV of `cols` columns that EPSCUDALanczosMaxBVColumns says PETSc cannot index, naming the sizes
// and the ways out. Collective.
PetscErrorCode CheckBVIndexRange(EPS eps, PetscInt cols)
{
  PetscInt    most;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosMaxBVColumns(eps, &most));
  if (cols <= most) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  const double entries = (double)eps->n * (double)cols, ranks = std::ceil(entries / (double)PETSC_MAX_INT);
  SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
          "The eigenvectors' BV would hold %" PetscInt_FMT " columns of %" PetscInt_FMT " rows (%.3g entries on %d MPI process%s), past the "
          "%" PetscInt_FMT " entries a rank can index with this PETSc's 32-bit PetscInt: ask for at most %" PetscInt_FMT " pairs, run on at "
          "least %.0f MPI processes, or use a PETSc configured --with-64-bit-indices",
          cols, eps->n, entries, (int)size, size > 1 ? "es" : "", (PetscInt)PETSC_MAX_INT, most, ranks);
}

// The solution's storage: eigr, eigi, errest and perm for the ncv values a solve may return, and a BV for
// the returned vectors only (nev columns, or the initial space's, grown by the solve when more pairs
// converge), never shrunk. The Lanczos basis lives in the backend: SLEPc's EPSAllocateSolution would give
// the BV ncv columns, zeroed on the host, a new EPS's largest set-up cost on large matrices (16 MB a
// column at 2e6 rows). A BV with a deflation space (constraints) cannot be resized later: it gets the ncv
// columns. A BV of another size (EPSSetOperators resets only a set-up EPS: after a settings change a BV
// of the old size is left) is made anew.
PetscErrorCode AllocateSolution(EPS eps)
{
  const PetscInt ncv = eps->ncv;
  PetscInt       cols = PetscMax(PetscMax(eps->nev, PetscAbsInt(eps->nini)), 1), current = 0, constraints = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (eps->V) {
    PetscInt nloc_v, n_v;
    PetscCall(BVGetSizes(eps->V, &nloc_v, &n_v, nullptr));
    if (n_v && (nloc_v != eps->nloc || n_v != eps->n)) {
      PetscCall(BVDestroy(&eps->V));
      PetscCall(VecDestroyVecs(eps->nwork, &eps->work));
      eps->nwork = 0;
    }
  }
  if (eps->V) PetscCall(BVGetSizes(eps->V, nullptr, nullptr, &current));
  if (eps->V) PetscCall(BVGetNumConstraints(eps->V, &constraints));
  if (eps->nds || constraints) cols = ncv;
  cols = PetscMin(PetscMax(cols, current), eps->n);
  PetscCall(CheckBVIndexRange(eps, cols));
  if (!eps->V) PetscCall(EPSGetBV(eps, &eps->V));
  if (!current) PetscCall(PlaceReturnedColumns(eps, cols));
  eps->ncv = cols; // what EPSAllocateSolution sizes the BV (and eigr) by
  ierr     = EPSAllocateSolution(eps, 0);
  eps->ncv = ncv;
  PetscCall(ierr);
  PetscCall(EPSCUDALanczosValueArrays(eps, ncv));
  PetscFunctionReturn(0);
}


// A generalized problem: the BV's inner product is B's (SLEPc's own solvers set it in their set-up, not in
// EPSSetUp), so that the deflation space EPSSetUp inserts, BVNormalize and the vectors returned are
// B-orthonormal; the solve runs Lanczos in the same inner product. B itself for every ST: the operators
// of STSHIFT (B^-1 A), STSINVERT ((A - sigma B)^-1 B) and STCAYLEY ((A - sigma B)^-1 (A + nu B) =
// I + (sigma + nu) (A - sigma B)^-1 B) are all self-adjoint in it, and it is positive definite, where
// STCAYLEY's own bilinear form A + nu B need not be. A BV this EPS kept from a generalized problem
// (EPSSetOperators(eps, A, NULL) after one) loses it.
PetscErrorCode SetInnerProduct(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  if (eps->isgeneralized) {
    Mat B = nullptr;
    PetscCall(STGetMatrix(eps->st, 1, &B));
    PetscCall(BVSetMatrix(eps->V, B, PETSC_FALSE));
    ctx->plan.bv_matrix_set = PETSC_TRUE;
  } else if (ctx->plan.bv_matrix_set) {
    PetscCall(BVSetMatrix(eps->V, nullptr, PETSC_FALSE));
    ctx->plan.bv_matrix_set = PETSC_FALSE;
  }
  PetscFunctionReturn(0);
}

// With a non-injective ST (STSHELL without a back-transformation) EPSSolve takes the eigenvalues from the
// Rayleigh quotients V'AV of the returned vectors through eps->ds (EPSComputeValues), as for SLEPc's Krylov
// solvers: that DS must exist (a missing one crashed EPSSolve) and is sized in the solve.
PetscErrorCode SetUpRayleighQuotients(EPS eps)
{
  PetscBool injective;

  PetscFunctionBegin;
  PetscCall(STIsInjective(eps->st, &injective));
  if (injective) PetscFunctionReturn(0);
  if (!eps->ds) PetscCall(EPSGetDS(eps, &eps->ds));
  PetscCall(DSSetType(eps->ds, DSHEP));
  PetscCall(DSAllocate(eps->ds, eps->ncv + 1));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode EPSSetUp_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        isshift;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Setup, eps, 0, 0, 0));
  // The last solve's growth of ncv to the pairs it found (an interval, the threshold test) is undone.
  if (ctx->plan.ncv_grown > 0 && eps->ncv == ctx->plan.ncv_grown) eps->ncv = ctx->plan.ncv_before_growth;
  ctx->plan.ncv_grown = 0;
  PetscCall(CheckProblem(eps));
  PetscCall(EPSCUDALanczosWarmUp(eps));
  // Deflation vectors (EPSSetDeflationSpace; a negative count until EPSSetUp inserts them into V as
  // constraints, after this function): the solve runs on their orthogonal complement (ConstrainedBackend),
  // whose dimension bounds nev and ncv. Dependent ones are dropped then, as SLEPc drops them.
  const PetscInt nds = PetscAbsInt(eps->nds), neff = eps->n - nds;
  PetscCheck(neff >= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
             "The deflation space (%" PetscInt_FMT " vectors) leaves nothing of the problem's %" PetscInt_FMT " dimensions", nds, eps->n);
  // The congruence first: an interval's and the threshold test's checks read whether it was taken.
  PetscCall(ChooseCongruence(eps, nds, &isshift));
  PetscCall(ChooseWhich(eps));
  if (EPSCUDALanczosThresholdTest(eps)) PetscCall(EPSCUDALanczosCheckThreshold(eps));
  ctx->plan.block_eff  = ctx->opt.block_size == PETSC_DEFAULT ? 1 : ctx->opt.block_size;
  ctx->plan.block_auto = ctx->plan.block_many = ctx->plan.block_sparse = PETSC_FALSE;
  if (ctx->opt.variant == EPS_CUDALANCZOS_THESIS) PetscCall(PlanThesis(eps, neff));
  else PetscCall(PlanThickRestart(eps, neff, isshift));
  PetscCheck(eps->nev <= neff, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
             "nev (%" PetscInt_FMT ") exceeds the problem size (%" PetscInt_FMT "%s)", eps->nev, neff,
             nds ? " dimensions left by the deflation space" : "");
  PetscCall(AllocateSolution(eps));
  PetscCall(SetInnerProduct(eps));
  PetscCall(SetUpRayleighQuotients(eps));
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Setup, eps, 0, 0, 0));
  PetscFunctionReturn(0);
}

// The sorting criterion from `which` (EPSSetUpSort_Default is not exported): without it, sorting two
// or more converged values dereferences a null comparison.
PetscErrorCode EPSSetUpSort_CUDALanczos(EPS eps)
{
  PetscFunctionBegin;
  switch (eps->which) {
  case EPS_LARGEST_MAGNITUDE: eps->sc->comparison = SlepcCompareLargestMagnitude; eps->sc->comparisonctx = nullptr; break;
  case EPS_SMALLEST_MAGNITUDE: eps->sc->comparison = SlepcCompareSmallestMagnitude; eps->sc->comparisonctx = nullptr; break;
  case EPS_LARGEST_REAL: eps->sc->comparison = SlepcCompareLargestReal; eps->sc->comparisonctx = nullptr; break;
  case EPS_SMALLEST_REAL: eps->sc->comparison = SlepcCompareSmallestReal; eps->sc->comparisonctx = nullptr; break;
  case EPS_TARGET_MAGNITUDE: eps->sc->comparison = SlepcCompareTargetMagnitude; eps->sc->comparisonctx = &eps->target; break;
  case EPS_TARGET_REAL: eps->sc->comparison = SlepcCompareTargetReal; eps->sc->comparisonctx = &eps->target; break;
  case EPS_ALL: eps->sc->comparison = SlepcCompareSmallestReal; eps->sc->comparisonctx = nullptr; break; // an interval, ascending
  default: SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP, "Unsupported -eps_which for EPSCUDALANCZOS");
  }
  eps->sc->map    = nullptr;
  eps->sc->mapobj = nullptr;
  PetscBool injective;
  PetscCall(STIsInjective(eps->st, &injective));
  if (!injective && eps->ds) { // the DS that sorts the Rayleigh quotients (see SetUpRayleighQuotients)
    SlepcSC sc;
    PetscCall(DSGetSlepcSC(eps->ds, &sc));
    sc->rg            = nullptr;
    sc->comparison    = eps->sc->comparison;
    sc->comparisonctx = eps->sc->comparisonctx;
    sc->map           = SlepcMap_ST;
    sc->mapobj        = (PetscObject)eps->st;
  }
  PetscFunctionReturn(0);
}

// The most columns the BV may hold: BVMAT keeps them in one dense Mat of nloc x cols entries on each rank,
// counted in PetscInt, and with 32-bit indices a count past PETSC_MAX_INT wraps: the columns then lie
// outside the storage (a CUDA PETSc's BV gave invalid device addresses, Debian's 3.18 stopped in its
// allocation). Collective.
PetscErrorCode EPSCUDALanczosMaxBVColumns(EPS eps, PetscInt *most)
{
  PetscFunctionBegin;
  *most = PETSC_MAX_INT;
#if !defined(PETSC_USE_64BIT_INDICES)
  PetscInt nloc_max = eps->nloc;
  PetscCallMPI(MPIU_Allreduce(&eps->nloc, &nloc_max, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)eps)));
  if (nloc_max > 0) *most = PETSC_MAX_INT / nloc_max;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosValueArrays(EPS eps, PetscInt n)
{
  PetscFunctionBegin;
  PetscCall(PetscFree4(eps->eigr, eps->eigi, eps->errest, eps->perm));
  PetscCall(PetscCalloc4(n, &eps->eigr, n, &eps->eigi, n, &eps->errest, n, &eps->perm));
  for (PetscInt i = 0; i < n; ++i) eps->perm[i] = i;
  PetscFunctionReturn(0);
}
