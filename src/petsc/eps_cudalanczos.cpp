/*
   EPSCUDALANCZOS: the SLEPc face of the Lanczos driver (src/core), laid out like SLEPc's own
   solvers (src/eps/impls/krylov/lanczos/lanczos.c): a private struct, static EPSSetUp_/EPSSolve_/...
   functions, public setters forwarding to composed "_C" functions attached in EPSCreate_CUDALanczos.

   The driver works on a Backend. The host backend applies the ST operator (any Mat, any ST) through
   STApply; the CUDA backend uploads the matrix once (dense or AIJ, with STSHIFT) and keeps it while the
   Mat's object state is unchanged, or falls back to STApply with a copy per product.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include "core/lanczos_driver.hpp"
#include "core/b_inner_product_backend.hpp"
#include "core/constrained_backend.hpp"
#include "host/host_backend.hpp"

#include <slepc/private/epsimpl.h>
#include <slepc/private/stimpl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

const char *const EPSCUDALanczosVariants[]     = {"thick-restart", "thesis", "EPSCUDALanczosVariant", "EPS_CUDALANCZOS_", nullptr};
const char *const EPSCUDALanczosReorthogs[]    = {"full", "none", "partial", "EPSCUDALanczosReorthog", "EPS_CUDALANCZOS_REORTHOG_", nullptr};
const char *const EPSCUDALanczosBackends[]     = {"auto", "host", "cuda", "EPSCUDALanczosBackend", "EPS_CUDALANCZOS_BACKEND_", nullptr};
const char *const EPSCUDALanczosKernelsTypes[] = {"default", "custom", "vendor", "EPSCUDALanczosKernels", "EPS_CUDALANCZOS_KERNELS_", nullptr};

PetscLogEvent EPS_CUDALanczos_Setup = 0, EPS_CUDALanczos_Upload = 0, EPS_CUDALanczos_Iterate = 0, EPS_CUDALanczos_Vectors = 0;
PetscLogEvent EPS_CUDALanczos_Context = 0, EPS_CUDALanczos_Prepare = 0, EPS_CUDALanczos_Transfer = 0, EPS_CUDALanczos_Analysis = 0;

// Composed data on a Mat: the ||A|| estimate a solve measured (EPSSolve_CUDALanczos), registered on first use.
static PetscInt EPS_CUDALanczos_NormId = -1;

static PetscErrorCode EPSCUDALanczosNormId(void)
{
  PetscFunctionBegin;
  if (EPS_CUDALanczos_NormId < 0) PetscCall(PetscObjectComposedDataRegister(&EPS_CUDALanczos_NormId));
  PetscFunctionReturn(0);
}

void STOperator::operator()(const PetscScalar *xa, PetscScalar *ya) const
{
  // A PETSc error inside becomes an exception: the driver is C++, and PetscCallCXX at the boundary
  // turns it back into a PETSc error (PETSc has already printed the original trace).
  if (VecPlaceArray(x, xa) || VecPlaceArray(y, ya) || (mat ? MatMult(mat, x, y) : STApply(st, x, y)) || VecResetArray(x) || VecResetArray(y))
    throw cudalanczos::Error(mat ? "MatMult failed inside the Lanczos iteration (see the PETSc error above)"
                                 : "STApply failed inside the Lanczos iteration (see the PETSc error above)");
}

void BProduct::operator()(const PetscScalar *xa, PetscScalar *ya) const
{
  if (VecPlaceArray(x, xa) || VecPlaceArray(y, ya) || MatMult(B, x, y) || VecResetArray(x) || VecResetArray(y))
    throw cudalanczos::Error("MatMult with the inner-product matrix B failed inside the Lanczos iteration (see the PETSc error above)");
}

namespace {

using namespace cudalanczos;

PetscErrorCode ToWhich(EPS eps, Which *w)
{
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

// The solution's storage: eigr, eigi, errest and perm for the ncv values a solve may return, and a BV for
// the returned vectors only (nev columns, or the initial space's, grown by EPSCUDALanczosReturnColumns
// when more pairs converge), never shrunk. The Lanczos basis lives in the backend: SLEPc's
// EPSAllocateSolution would give the BV ncv columns, zeroed on the host, a new EPS's largest set-up cost
// on large matrices (16 MB a column at 2e6 rows). A BV with a deflation space (constraints) cannot be
// resized later: it gets the ncv columns.
static PetscErrorCode EPSCUDALanczosAllocateSolution(EPS eps)
{
  const PetscInt ncv = eps->ncv;
  PetscInt       cols = PetscMax(PetscMax(eps->nev, PetscAbsInt(eps->nini)), 1), current = 0, constraints = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (eps->V) PetscCall(BVGetSizes(eps->V, nullptr, nullptr, &current));
  if (eps->V) PetscCall(BVGetNumConstraints(eps->V, &constraints));
  if (eps->nds || constraints) cols = ncv;
  cols = PetscMin(PetscMax(cols, current), eps->n);
  eps->ncv = cols; // what EPSAllocateSolution sizes the BV (and eigr) by
  ierr     = EPSAllocateSolution(eps, 0);
  eps->ncv = ncv;
  PetscCall(ierr);
  PetscCall(PetscFree4(eps->eigr, eps->eigi, eps->errest, eps->perm));
  PetscCall(PetscMalloc4(ncv, &eps->eigr, ncv, &eps->eigi, ncv, &eps->errest, ncv, &eps->perm));
  PetscFunctionReturn(0);
}

// Columns 0..n-1 of the BV for the returned vectors: grown (its contents, constraints included, kept)
// where a solve returns more than set-up gave it room for.
static PetscErrorCode EPSCUDALanczosReturnColumns(EPS eps, PetscInt n)
{
  PetscInt cols;

  PetscFunctionBegin;
  PetscCall(BVGetSizes(eps->V, nullptr, nullptr, &cols));
  if (n > cols) PetscCall(BVResize(eps->V, n, PETSC_TRUE));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSSetUp_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        isshift;
  Which            which;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Setup, eps, 0, 0, 0));
  PetscCheck(eps->problem_type != EPS_GHIEP, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "EPSCUDALANCZOS solves Hermitian problems with a positive definite B only (EPS_HEP, EPS_GHEP): EPS_GHIEP (B indefinite) "
             "needs a pseudo-Lanczos method; use -eps_type krylovschur");
  PetscCheck(eps->problem_type == EPS_HEP || eps->problem_type == EPS_GHEP, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "EPSCUDALANCZOS solves Hermitian problems only: EPS_HEP (A x = lambda x, -eps_hermitian) and EPS_GHEP (A x = lambda B x "
             "with B Hermitian positive definite, -eps_gen_hermitian); for %s problems use another EPS type",
             eps->isgeneralized ? "generalized non-Hermitian" : "non-Hermitian");
  EPSCheckUnsupported(eps, EPS_FEATURE_BALANCE | EPS_FEATURE_ARBITRARY | EPS_FEATURE_REGION | EPS_FEATURE_EXTRACTION | EPS_FEATURE_TWOSIDED);
  // The driver ends at nev converged pairs (or a user's test says stop); a stopping test that lets the
  // solve run past nev, such as the threshold test of newer SLEPc releases (EPSSetThreshold,
  // -eps_threshold_absolute/relative: every eigenvalue beyond a value), would be met at nev and return too
  // few pairs without saying so. Compared by value so that this compiles against releases without it.
  PetscCheck(eps->stop == EPS_STOP_BASIC || eps->stop == EPS_STOP_USER, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
             "EPSCUDALANCZOS supports the basic stopping test (nev pairs or max_it) and a user's (EPSSetStoppingTestFunction), not EPSStop %d "
             "(the threshold test of EPSSetThreshold?); use -eps_type krylovschur for it, or ask for nev pairs",
             (int)eps->stop);
  PetscCall(EPSCUDALanczosWarmUp(eps));
  // Deflation vectors (EPSSetDeflationSpace; a negative count until EPSSetUp inserts them into V as
  // constraints, after this function): the solve runs on their orthogonal complement (ConstrainedBackend),
  // whose dimension bounds nev and ncv. Dependent ones are dropped then, as SLEPc drops them.
  const PetscInt nds = PetscAbsInt(eps->nds), neff = eps->n - nds;
  PetscCheck(neff >= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
             "The deflation space (%" PetscInt_FMT " vectors) leaves nothing of the problem's %" PetscInt_FMT " dimensions", nds, eps->n);
  if (!eps->which) { // SLEPc's default for a Krylov method (EPSSetWhichEigenpairs_Default, not exported)
    PetscBool target;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)eps->st, &target, STSINVERT, STCAYLEY, ""));
    eps->which = target ? EPS_TARGET_MAGNITUDE : EPS_LARGEST_MAGNITUDE;
  }
  PetscCall(ToWhich(eps, &which));
  if (eps->nev == 0) eps->nev = 1; // SLEPc >= 3.22 leaves nev 0 until set-up; 3.18 starts at 1
  PetscCheck(eps->nev >= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE, "nev must be at least 1");
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, &isshift));
  // The choices below made for STSHIFT are for its operator being the matrix (one pass over it per
  // product); with a B its operator is B^-1 A, a solve per product, as with the other STs, unless B is
  // diagonal: then the problem is solved as the standard one of B^-1/2 A B^-1/2 (EPSCUDALanczosCongruence),
  // a matrix again. Not with a deflation space (its vectors would have to be taken to that space too).
  ctx->congruence = PETSC_FALSE;
  if (eps->isgeneralized && isshift && nds == 0 && ctx->variant == EPS_CUDALANCZOS_THICK_RESTART) {
    Mat B;
    PetscCall(STGetMatrix(eps->st, 1, &B));
    PetscCall(EPSCUDALanczosIsDiagonal(B, &ctx->congruence));
  }
  if (eps->isgeneralized && !ctx->congruence) isshift = PETSC_FALSE;
  if (!ctx->congruence) { // a C kept from an earlier problem is not needed any more
    PetscCall(MatDestroy(&ctx->congruent));
    PetscCall(VecDestroy(&ctx->b_isqrt));
  }

  ctx->block_eff  = ctx->block_size == PETSC_DEFAULT ? 1 : ctx->block_size;
  ctx->block_auto = PETSC_FALSE;
  if (ctx->variant == EPS_CUDALANCZOS_THESIS) {
    PetscCheck(ctx->block_eff == 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
               "The thesis variant of EPSCUDALANCZOS takes one vector per step (block size %" PetscInt_FMT " requested); use "
               "-eps_cudalanczos_variant thick-restart for block steps",
               ctx->block_eff);
    PetscCheck(eps->nev == 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
               "The thesis variant of EPSCUDALANCZOS computes one eigenpair (nev = %" PetscInt_FMT " requested); use "
               "-eps_cudalanczos_variant thick-restart for more",
               eps->nev);
    // The thesis keeps every Lanczos vector: ncv is the most steps it may take.
    if (eps->ncv == kEPSUnset) eps->ncv = PetscMin(neff, 128);
    PetscCheck(eps->ncv >= 1, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE, "ncv must be at least 1");
    if (eps->mpd == kEPSUnset) eps->mpd = eps->ncv;
    if (eps->max_it == kEPSUnset) eps->max_it = eps->ncv;
    ctx->reorthog_eff = EPS_CUDALANCZOS_REORTHOG_NONE;
  } else {
    // SLEPc's Krylov defaults (EPSSetDimensions_Default, which is not exported). An ncv this EPS chose
    // at an earlier set-up counts as chosen again: the basis may grow from it (EPSCUDALanczosSetNcvMax).
    const bool chosen = (eps->ncv == kEPSUnset || (ctx->ncv_chosen > 0 && eps->ncv == ctx->ncv_chosen)) &&
                        (eps->mpd == kEPSUnset || (ctx->ncv_chosen > 0 && eps->mpd == ctx->mpd_chosen));
    if (chosen) eps->ncv = eps->mpd = kEPSUnset;
    if (ctx->block_size == PETSC_DEFAULT && eps->ncv == kEPSUnset && eps->mpd == kEPSUnset)
      PetscCall(EPSCUDALanczosChooseBlockSize(eps, isshift));
    if (eps->ncv != kEPSUnset) {
      PetscCheck(eps->ncv >= eps->nev + 1 || (eps->ncv == eps->nev && eps->ncv == neff), PetscObjectComm((PetscObject)eps),
                 PETSC_ERR_USER_INPUT, "The value of ncv (%" PetscInt_FMT ") must be at least nev+1 (%" PetscInt_FMT ")", eps->ncv, eps->nev + 1);
    } else if (eps->mpd != kEPSUnset) {
      eps->ncv = PetscMin(neff, eps->nev + eps->mpd);
    } else {
      eps->ncv = eps->nev < 500 ? PetscMin(neff, PetscMax(2 * eps->nev, eps->nev + 15)) : PetscMin(neff, eps->nev + 500);
      // Block steps: room for the wanted pairs and 16 blocks. A restarted block Krylov space is only as
      // deep as its blocks per cycle; with few of them it needs several times the products of
      // single-vector steps (host runs of the seeded sweep: block 8 with ncv 40 took 2-20x the
      // products of single-vector steps, with ncv 160 1.5-2x).
      if (ctx->block_eff > 1) eps->ncv = PetscMin(neff, PetscMax(eps->ncv, eps->nev + 16 * ctx->block_eff));
    }
    // An mpd beyond the problem size is clamped as EPSSetUp clamps ncv: it is what a default mpd
    // from an earlier, larger operator (EPSSetOperators with a smaller matrix) left behind.
    if (eps->mpd > neff) eps->mpd = neff;
    if (eps->mpd == kEPSUnset) eps->mpd = eps->ncv;
    PetscCheck(eps->mpd <= eps->ncv, PetscObjectComm((PetscObject)eps), PETSC_ERR_USER_INPUT,
               "mpd (%" PetscInt_FMT ") must not exceed ncv (%" PetscInt_FMT ")", eps->mpd, eps->ncv);
    // mpd bounds the projected problem of a cycle (SLEPc's meaning): a thick restart keeps at least one
    // Ritz vector and extends it by at least one step, or one block. Below that nothing can converge
    // (-eps_mpd 1 -eps_nev 5 ran 100 restarts and returned nothing); a basis that holds the whole
    // space is solved exactly in one cycle whatever mpd says.
    PetscCheck(eps->mpd >= 1 + ctx->block_eff || eps->ncv >= neff, PetscObjectComm((PetscObject)eps), PETSC_ERR_USER_INPUT,
               "mpd (%" PetscInt_FMT ") leaves the projected problem no room: a thick restart keeps at least one vector and adds at least one "
               "Lanczos step%s to it, so mpd must be at least %" PetscInt_FMT " (nev %" PetscInt_FMT ", ncv %" PetscInt_FMT ")",
               eps->mpd, ctx->block_eff > 1 ? " (a block)" : "", 1 + ctx->block_eff, eps->nev, eps->ncv);
    if (eps->max_it == kEPSUnset) eps->max_it = PetscMax(100, 2 * neff / eps->ncv);
    ctx->ncv_chosen = chosen ? eps->ncv : 0;
    ctx->mpd_chosen = chosen ? eps->mpd : 0;
    if (ctx->block_eff > 1) {
      PetscCheck(!ctx->reorthog_set || ctx->reorthog == EPS_CUDALANCZOS_REORTHOG_FULL, PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP,
                 "Block steps (block size %" PetscInt_FMT ") orthogonalize fully; -eps_cudalanczos_reorthog %s needs block size 1",
                 ctx->block_eff, EPSCUDALanczosReorthogs[ctx->reorthog]);
      PetscCheck(eps->ncv >= eps->nev + ctx->block_eff || eps->ncv + ctx->block_eff > neff, PetscObjectComm((PetscObject)eps),
                 PETSC_ERR_USER_INPUT, "Block steps need ncv >= nev + block size (ncv %" PetscInt_FMT ", nev %" PetscInt_FMT ", block size %" PetscInt_FMT ")",
                 eps->ncv, eps->nev, ctx->block_eff);
    }
    // Left to the solver: partial for single-vector steps with STSHIFT, where a step's orthogonalization
    // is what costs (the product is one matrix pass). Measured on an H200 against full, side by side
    // (bench/results/2026-11-30-h200-partial-reorthogonalization.md, c796b8a-1192b79, and
    // 2026-11-30-h200-partial-default-lookahead.md, a14a113): 0.81-0.90 of full's time on the 3-D
    // and 2-D Laplacians, 0.83-0.99 on the power-law graph, 0.95 on dense 4096 at nev = 10, 1.02-1.04 on
    // a random sparse matrix; the same products and true residuals. Block steps need full. Other STs are
    // chosen so that few steps are needed and each product is a solve: full costs next to nothing there.
    // A dense matrix takes full as well: its product reads n^2 entries against a pass over the basis's
    // n ncv, so a full pass costs next to nothing, and partial cost products there (host, dense 2048,
    // 2026-12-01: 25, 300 and 744 products at nev 1, 10 and 50 against full's 18, 262 and 601; the
    // steps redone after a full pass came due, and slower convergence on the semi-orthogonal basis).
    PetscBool dense = PETSC_FALSE;
    if (isshift) {
      Mat A;
      PetscCall(STGetMatrix(eps->st, 0, &A));
      PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &dense, MATSEQDENSE, MATMPIDENSE, MATSEQDENSECUDA, MATMPIDENSECUDA, ""));
    }
    ctx->reorthog_dense = dense;
    if (ctx->reorthog_set) ctx->reorthog_eff = ctx->reorthog;
    else ctx->reorthog_eff = ctx->block_eff == 1 && isshift && !dense ? EPS_CUDALANCZOS_REORTHOG_PARTIAL : EPS_CUDALANCZOS_REORTHOG_FULL;
    // With partial reorthogonalization each step orthogonalizes against the kept vectors (and the locked
    // ones) only, so they are most of a step's cost where a product is cheap: keeping a third instead of
    // krylovschur's half took 0.66-0.94x of the re-solve time in 12 of 15 cases of the GPU suite's sparse
    // matrices and the Hofstadter Hamiltonian at k = 1, 10, 50, 1.06x and 1.10x in two, for at most 17 % more
    // products (bench/results/2026-12-02-h200-restart.md). A stall raises it to 0.5 (Settings::restart_raise).
    // With full reorthogonalization each step passes over the whole basis anyway, and with a solving ST a
    // product is a solve: fewer products pay there.
    if (ctx->restart != (PetscReal)PETSC_DEFAULT) ctx->restart_eff = ctx->restart;
    else ctx->restart_eff = ctx->reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? 0.33 : 0.5;
    if (ctx->block_eff > 1) ctx->ncv_limit = eps->ncv; // the block variant keeps its basis size
    else if (ctx->ncv_max != PETSC_DEFAULT && ctx->ncv_max != PETSC_DECIDE) ctx->ncv_limit = PetscMax(eps->ncv, PetscMin(ctx->ncv_max, neff));
    // By default only with STSHIFT, whose operator is the matrix with its clustered ends: other STs are
    // chosen to separate the wanted values, and a non-injective one (spectrum folding) has SLEPc sort the
    // returned pairs by their Rayleigh quotients, so more converged pairs there change what is reported.
    else ctx->ncv_limit = chosen && isshift ? PetscMin(neff, PetscMax(2 * eps->ncv, eps->ncv + 32)) : eps->ncv;
  }
  PetscCheck(eps->nev <= neff, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
             "nev (%" PetscInt_FMT ") exceeds the problem size (%" PetscInt_FMT "%s)", eps->nev, neff,
             nds ? " dimensions left by the deflation space" : "");

  if (eps->V) { // EPSSetOperators resets only a set-up EPS: after a settings change a BV of the old size is left
    PetscInt nloc_v, n_v;
    PetscCall(BVGetSizes(eps->V, &nloc_v, &n_v, nullptr));
    if (n_v && (nloc_v != eps->nloc || n_v != eps->n)) {
      PetscCall(BVDestroy(&eps->V));
      PetscCall(VecDestroyVecs(eps->nwork, &eps->work));
      eps->nwork = 0;
    }
  }
  PetscCall(EPSCUDALanczosAllocateSolution(eps));
  { // A generalized problem: the BV's inner product is B's (SLEPc's own solvers get it in their set-up,
    // not in EPSSetUp), so that the deflation space EPSSetUp inserts, BVNormalize and the vectors
    // returned are B-orthonormal; EPSSolve_CUDALanczos runs Lanczos in the same inner product. B itself
    // for every ST: the operators of STSHIFT (B^-1 A), STSINVERT ((A - sigma B)^-1 B) and STCAYLEY
    // ((A - sigma B)^-1 (A + nu B) = I + (sigma + nu) (A - sigma B)^-1 B) are all self-adjoint in it, and
    // it is positive definite, where STCAYLEY's own bilinear form A + nu B need not be.
    // A BV this EPS kept from a generalized problem (EPSSetOperators(eps, A, NULL) after one) loses it.
    if (eps->isgeneralized) {
      Mat B = nullptr;
      PetscCall(STGetMatrix(eps->st, 1, &B));
      PetscCall(BVSetMatrix(eps->V, B, PETSC_FALSE));
      ctx->bv_matrix_set = PETSC_TRUE;
    } else if (ctx->bv_matrix_set) {
      PetscCall(BVSetMatrix(eps->V, nullptr, PETSC_FALSE));
      ctx->bv_matrix_set = PETSC_FALSE;
    }
  }
  // With a non-injective ST (STSHELL without a back-transformation) EPSSolve takes the eigenvalues from
  // the Rayleigh quotients V'AV of the returned vectors through eps->ds (EPSComputeValues), as for
  // SLEPc's Krylov solvers: that DS must exist (a missing one crashed EPSSolve) and is sized in solve.
  PetscBool injective;
  PetscCall(STIsInjective(eps->st, &injective));
  if (!injective) {
    if (!eps->ds) PetscCall(EPSGetDS(eps, &eps->ds));
    PetscCall(DSSetType(eps->ds, DSHEP));
    PetscCall(DSAllocate(eps->ds, eps->ncv + 1));
  }
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
  default: SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP, "Unsupported -eps_which for EPSCUDALANCZOS");
  }
  eps->sc->map    = nullptr;
  eps->sc->mapobj = nullptr;
  PetscBool injective;
  PetscCall(STIsInjective(eps->st, &injective));
  if (!injective && eps->ds) { // the DS that sorts the Rayleigh quotients (see EPSSetUp_CUDALanczos)
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

PetscErrorCode EPSBackTransform_CUDALanczos(EPS eps)
{
  PetscFunctionBegin;
  PetscCall(STBackTransform(eps->st, eps->nconv, eps->eigr, eps->eigi));
  PetscFunctionReturn(0);
}

} // namespace

// A generalized problem with STSHIFT and a diagonal B (a lumped mass matrix, say) is the standard problem of
// C = B^-1/2 A B^-1/2: y = B^1/2 x turns A x = lambda B x into C y = lambda y, and Lanczos on C in the
// Euclidean inner product is Lanczos on B^-1 A in the B-inner product, vector for vector (V = B^-1/2 Y).
// Solved that way, a step is one product with C (on the device where C is), with no solve with B and no
// products with B, and the start vector is uniform on the sphere of the inner product C is self-adjoint
// in, which the verification's certificate assumes (docs/algorithm.md, Generalized problems).

// Whether B is diagonal: an AIJ Mat (host or CUDA) with as many stored entries as rows, whose row sums
// are its diagonal (B 1 = diag(B), exactly: a row of one entry sums without rounding). With N entries in N
// rows, a row holding an off-diagonal entry either leaves another row empty or has two entries, and
// its sum differs from its diagonal unless that entry is a stored 0 (then B is diagonal after all, with
// a zero where a diagonal entry is missing, which EPSCUDALanczosCongruence refuses). Collective.
PetscErrorCode EPSCUDALanczosIsDiagonal(Mat B, PetscBool *diagonal)
{
  PetscBool aij;
  MatInfo   info;
  PetscInt  N;
  Vec       one, sum, d;
  PetscReal diff;

  PetscFunctionBegin;
  *diagonal = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &aij, MATSEQAIJ, MATMPIAIJ, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, ""));
  if (!aij) PetscFunctionReturn(0);
  PetscCall(MatGetSize(B, &N, nullptr));
  PetscCall(MatGetInfo(B, MAT_GLOBAL_SUM, &info));
  if (info.nz_used != (PetscLogDouble)N) PetscFunctionReturn(0);
  PetscCall(MatCreateVecs(B, &one, &sum));
  PetscCall(VecDuplicate(sum, &d));
  PetscCall(VecSet(one, 1.0));
  PetscCall(MatMult(B, one, sum));
  PetscCall(MatGetDiagonal(B, d));
  PetscCall(VecAXPY(sum, -1.0, d));
  PetscCall(VecNorm(sum, NORM_INFINITY, &diff));
  PetscCall(VecDestroy(&one));
  PetscCall(VecDestroy(&sum));
  PetscCall(VecDestroy(&d));
  *diagonal = diff == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

// key[0..1] = the object's id and state: what the caches below are kept with (an object changed since, or
// another object, does not match).
static PetscErrorCode ObjectKey(PetscObject obj, PetscInt64 key[2])
{
  PetscObjectId    id;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetId(obj, &id));
  PetscCall(PetscObjectStateGet(obj, &state));
  key[0] = (PetscInt64)id, key[1] = (PetscInt64)state;
  PetscFunctionReturn(0);
}

// A necessary condition for B to be positive semi-definite, for any B: every diagonal entry e_i^H B e_i real
// and not negative; with `definite`, positive. Semi-definite is what a generalized problem may have: a
// singular B (a mass matrix with a null space, SLEPc's ex13 with -nulldim) under STSINVERT, whose
// operator (A - sigma B)^-1 B keeps the iteration in B's range. One pass over B's diagonal; what it misses
// (a B with such a diagonal and a negative eigenvalue) the B-inner-product backend finds only where a
// vector meets it (x^H B x < 0), as SLEPc's BV does. An error names the first offending row. Collective.
// `d` holds B's diagonal on return.
static PetscErrorCode CheckDiagonal(EPS eps, Mat B, Vec d, PetscBool definite, const char *what)
{
  PetscReal          lo = PETSC_MAX_REAL;
  PetscInt           m, first = PETSC_MAX_INT, rstart;
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(MatGetDiagonal(B, d));
  PetscCall(VecGetLocalSize(d, &m));
  PetscCall(VecGetOwnershipRange(d, &rstart, nullptr));
  PetscCall(VecGetArrayRead(d, &a));
  for (PetscInt i = 0; i < m; ++i) {
    const PetscReal r = PetscRealPart(a[i]);
    if (!(definite ? r > 0 : r >= 0) || PetscImaginaryPart(a[i]) != 0) first = PetscMin(first, rstart + i), lo = PetscMin(lo, r);
  }
  PetscCall(VecRestoreArrayRead(d, &a));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &first, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)eps)));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &lo, 1, MPIU_REAL, MPIU_MIN, PetscObjectComm((PetscObject)eps)));
  PetscCheck(first == PETSC_MAX_INT, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_WRONG,
             "EPSCUDALANCZOS needs a positive %s B (%s), but B's diagonal has a %s or non-real entry in row %" PetscInt_FMT
             " (the smallest real part: %g); use EPS_GHIEP's solvers (krylovschur) for an indefinite B",
             definite ? "definite" : "(semi-)definite", what, definite ? "non-positive" : "negative", first, (double)lo);
  PetscFunctionReturn(0);
}

// The check above (semi-definite) for the solve's inner-product matrix, once per B object and state. Whether to check is
// decided by all ranks together: a Mat's state is kept per process, and a rank that checked alone would
// wait in the check's reductions for the others.
static PetscErrorCode CheckInnerProductMatrix(EPS eps, Mat B)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscInt64       of[2];
  Vec              d;

  PetscFunctionBegin;
  PetscCall(ObjectKey((PetscObject)B, of));
  PetscBool checked = std::equal(of, of + 2, ctx->ipmat_checked_of) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &checked, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (checked) PetscFunctionReturn(0);
  PetscCall(MatCreateVecs(B, &d, nullptr));
  PetscErrorCode ierr = CheckDiagonal(eps, B, d, PETSC_FALSE, eps->isgeneralized ? "EPS_GHEP" : "the BV's inner-product matrix");
  PetscCall(VecDestroy(&d));
  PetscCall(ierr);
  std::copy(of, of + 2, ctx->ipmat_checked_of);
  PetscFunctionReturn(0);
}

// ctx->congruent = B^-1/2 A B^-1/2 and ctx->b_isqrt = diag(B)^-1/2, kept while A and B are the same
// objects in the same state. A diagonal entry of B that is not positive is an error. Collective.
PetscErrorCode EPSCUDALanczosCongruence(EPS eps, Mat A, Mat B)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscInt64       of[4];

  PetscFunctionBegin;
  PetscCall(ObjectKey((PetscObject)A, of));
  PetscCall(ObjectKey((PetscObject)B, of + 2));
  // Kept or rebuilt by all ranks together: the rebuild is collective, and Mat states are per process.
  PetscBool kept = ctx->congruent && std::equal(of, of + 4, ctx->congruent_of) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &kept, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (kept) PetscFunctionReturn(0);
  PetscCall(MatDestroy(&ctx->congruent));
  PetscCall(VecDestroy(&ctx->b_isqrt));
  PetscCall(MatCreateVecs(B, &ctx->b_isqrt, nullptr));
  { // positive definite: every diagonal entry real and positive (B is diagonal here: the whole condition)
    PetscErrorCode ierr = CheckDiagonal(eps, B, ctx->b_isqrt, PETSC_TRUE, "EPS_GHEP with STSHIFT");
    if (ierr) PetscCall(VecDestroy(&ctx->b_isqrt));
    PetscCall(ierr);
  }
  PetscCall(VecSqrtAbs(ctx->b_isqrt));
  PetscCall(VecReciprocal(ctx->b_isqrt));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &ctx->congruent));
  PetscCall(MatDiagonalScale(ctx->congruent, ctx->b_isqrt, ctx->b_isqrt));
  std::copy(of, of + 4, ctx->congruent_of);
  PetscFunctionReturn(0);
}

namespace {

// Builds the backend for this solve: CUDA when chosen and possible, otherwise the host. Also fills
// ctx->shift: the shift the driver must apply itself (an uploaded matrix is A, not A - sigma I).
PetscErrorCode EPSCUDALanczosCreateBackend(EPS eps, Reducer reduce, PetscInt rstart, const STOperator &hostop, std::shared_ptr<Backend> &backend)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  ctx->shift = 0.0;
  PetscBool use_cuda = PETSC_FALSE;
  PetscCall(EPSCUDALanczosUseCUDA(eps, &use_cuda));
  if (use_cuda) {
    PetscCall(EPSCUDALanczosCreateCUDABackend(eps, reduce, rstart, hostop, backend));
  } else {
    PetscCallCXX(backend = std::make_unique<HostBackend>(eps->nloc, eps->n, rstart, hostop, reduce));
    ctx->backend_name   = "host";
    ctx->operator_desc  = hostop.mat ? "MatMult (host)" : "STApply (host)";
    ctx->device_desc    = "";
  }
  PetscFunctionReturn(0);
}

PetscErrorCode EPSSolve_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx  = (EPS_CUDALANCZOS *)eps->data;
  MPI_Comm         comm = PetscObjectComm((PetscObject)eps);
  PetscInt         rstart, rend;
  Which            which;
  STOperator       hostop{eps->st, nullptr, nullptr};
  Settings         s;
  Callbacks        cb;
  Result           result;
  PetscErrorCode   cberr = 0; // first PETSc error raised inside a driver callback

  PetscFunctionBegin;
  PetscCall(ToWhich(eps, &which));
  // The inner product is the BV's: B for a generalized problem (EPSSetUp_CUDALanczos gave the BV the ST's
  // B); for a standard one the Euclidean one, or the matrix a user gave the BV after EPSSetUp
  // (BVSetMatrix, as SLEPc's ex47 does for an operator S = A^-1 B that is self-adjoint in B's inner
  // product only), which SLEPc's Krylov solvers take as they find it. A B-inner product wraps the
  // backend in a BInnerProductBackend.
  Mat       ipmat = nullptr;
  PetscBool ipindef = PETSC_FALSE;
  PetscCall(BVGetMatrix(eps->V, &ipmat, &ipindef));
  PetscCheck(!ipindef, comm, PETSC_ERR_SUP, "EPSCUDALANCZOS needs a positive definite inner-product matrix B; an indefinite one (EPS_GHIEP) is not supported");
  PetscCheck(ipmat || !eps->isgeneralized, comm, PETSC_ERR_PLIB, "EPSCUDALANCZOS: the BV of a generalized problem has no inner-product matrix");
  // STSHIFT with a diagonal B (set-up's congruence, EPS_GHEP only) checks it whole in
  // EPSCUDALanczosCongruence; any other inner-product matrix has its diagonal checked here
  if (ipmat && !ctx->congruence) PetscCall(CheckInnerProductMatrix(eps, ipmat));
  if (ipmat) PetscCall(PetscObjectReference((PetscObject)ipmat)); // released below
  // A diagonal B with STSHIFT (set-up decided): the standard problem of C = B^-1/2 A B^-1/2, applied as a
  // matrix (MatMult, or its device operator) in the Euclidean inner product; `inner` is the solve's
  // inner-product matrix (null: Euclidean), ipmat stays B for the final B-normalization.
  const PetscBool congruence = ctx->congruence && ipmat ? PETSC_TRUE : PETSC_FALSE;
  if (congruence) {
    Mat A;
    PetscCall(STGetMatrix(eps->st, 0, &A));
    PetscCall(EPSCUDALanczosCongruence(eps, A, ipmat));
    hostop.mat = ctx->congruent;
  }
  Mat inner = congruence ? nullptr : ipmat;
  struct MatRef {
    Mat &m;
    ~MatRef() { (void)MatDestroy(&m); }
  } ipmat_ref{ipmat};
  if (ctx->check_symmetry) PetscCall(EPSCUDALanczosCheckSymmetry(eps, eps->isgeneralized ? nullptr : ipmat));
  // Destroys the two work vectors on every return, the error returns of PetscCall/PetscCallCXX included
  // (NaN from the operator, a failing STApply): they leaked there. Declared before `backend`, so it runs after it.
  struct WorkVecs {
    STOperator &op;
    ~WorkVecs()
    {
      (void)VecDestroy(&op.x);
      (void)VecDestroy(&op.y);
    }
  } work_vecs{hostop};
  // Without arrays: a product on the host places the backend's columns in them (VecPlaceArray), and an
  // uploaded operator never uses them; two zeroed host vectors a solve cost 2 x 16 MB at 2e6 rows.
  PetscCall(STMatCreateVecsEmpty(eps->st, &hostop.x, &hostop.y));
  PetscCall(VecGetOwnershipRange(hostop.x, &rstart, &rend));

  // Sums doubles; the backends pass an array of Scalars as kDoublesPerScalar times as many doubles.
  Reducer reduce = [comm](double *v, int count) {
    if (MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) throw Error("MPI_Allreduce failed");
  };

  std::shared_ptr<Backend> backend; // may be the EPS's cached CUDA backend (EPSCUDALanczosCreateCUDABackend)
  PetscCall(EPSCUDALanczosCreateBackend(eps, reduce, rstart, hostop, backend));
  if (congruence) { // C is applied as it is, without STSHIFT's shift: the driver subtracts it (as for an uploaded A)
    PetscScalar sigma;
    PetscCall(STGetShift(eps->st, &sigma));
    ctx->shift = PetscRealPart(sigma);
  }

  s.variant             = ctx->variant == EPS_CUDALANCZOS_THESIS ? Variant::Thesis : Variant::ThickRestart;
  s.reorthogonalization = ctx->reorthog_eff == EPS_CUDALANCZOS_REORTHOG_NONE      ? Reorthogonalization::None
                          : ctx->reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? Reorthogonalization::Partial
                                                                                  : Reorthogonalization::Full;
  s.which               = which;
  s.target              = PetscRealPart(eps->target);
  s.shift               = ctx->shift;
  s.nev                 = (int)eps->nev;
  s.ncv                 = (int)eps->ncv;
  s.ncv_max             = (int)ctx->ncv_limit;
  s.block_size          = (int)ctx->block_eff;
  s.restart             = (double)ctx->restart_eff;
  s.restart_raise       = ctx->restart == (PetscReal)PETSC_DEFAULT; // the solver's choice may rise on a stall, a user's stays
  s.tol                 = eps->tol == kEPSUnset ? SLEPC_DEFAULT_TOL : eps->tol;
  s.max_it              = (int)eps->max_it;
  s.initial_vector      = eps->nini > 0;
  s.verify              = ctx->verify ? true : false;
  { // STSHIFT's back-transform adds the shift: a translation, which the verification certificate needs.
    // Not in a B-inner product (a diagonal B's solve is Euclidean, on C): the certificate's probability
    // bound is for a start vector uniform on the unit sphere of the inner product the operator is
    // self-adjoint in; our start vector's components in B's
    // eigenvector basis are skewed by up to cond(B), which the bound does not know. A verification
    // round then ends only on convergence (docs/algorithm.md, "Generalized problems").
    PetscBool isshift;
    PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, &isshift));
    s.translation_map = isshift && !inner ? true : false;
  }
  PetscBool st_assembled; // SHIFT/SINVERT/CAYLEY on assembled matrices: its operator changes only with them
  { // The true-residual check may take the Lanczos relation's proof (Result::residual_bounds) only for an
    // operator applied exactly to rounding: assembled matrices (a shell may hide an inner solve or anything
    // else that is not a fixed matrix), and, where the ST solves (a B, STSINVERT, STCAYLEY), a direct
    // solve (KSPPREONLY with PCLU or PCCHOLESKY: the same factors every time). An iterative KSP's products
    // are only as exact as its tolerance, and keep a product per converged pair.
    PetscInt  nmat;
    PetscBool exact = PETSC_TRUE;
    PetscCall(STGetNumMatrices(eps->st, &nmat));
    for (PetscInt i = 0; i < nmat && exact; ++i) {
      Mat M;
      PetscCall(STGetMatrix(eps->st, i, &M));
      PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &exact, MATSEQAIJ, MATMPIAIJ, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQBAIJ, MATMPIBAIJ,
                                          MATSEQSBAIJ, MATMPISBAIJ, MATSEQDENSE, MATMPIDENSE, MATSEQDENSECUDA, MATMPIDENSECUDA, ""));
    }
    PetscBool known_st;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)eps->st, &known_st, STSHIFT, STSINVERT, STCAYLEY, ""));
    if (!known_st) exact = PETSC_FALSE; // a shell ST (or any other) applies what it likes
    st_assembled = exact;
    if (exact && !s.translation_map) {  // the operator solves with the ST's KSP
      KSP       ksp;
      PC        pc;
      PetscBool preonly, factor;
      PetscCall(STGetKSP(eps->st, &ksp));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPPREONLY, &preonly));
      PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &factor, PCLU, PCCHOLESKY, ""));
      exact = preonly && factor ? PETSC_TRUE : PETSC_FALSE;
    }
    s.exact_operator = exact ? true : false;
  }
  { // SLEPc's purification (EPSSetPurify, on by default; SLEPc does it for STSINVERT, not for STCAYLEY) from
    // the Lanczos relation, without a solve (Settings::purify); a pair the driver leaves (NaN in
    // Result::purify_scale) is purified with STApply after the solve, as SLEPc does.
    PetscBool sinvert;
    PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSINVERT, &sinvert));
    s.purify = eps->isgeneralized && sinvert && eps->purify;
  }
  // The norm estimate: the driver measures ||A|| with one product on the backend (a device product where
  // the matrix is on the device) rather than a host pass over the matrix (MatNorm) that every new EPS
  // would pay; its scaling dead zone [2^-256, 2^256] needs the norm within far less. The measured value
  // is composed on the matrix, valid while its state is unchanged (PETSc's cached-norm mechanism): a
  // re-solve, or a new EPS on the same Mat, takes it and saves the product. Only where the backend
  // applies the assembled matrix itself (STSHIFT with no B: A, or A - sigma I with sigma = 0 where the
  // ST applies it); a factor of sqrt(n) either way would not change the scaling.
  Mat       norm_mat = nullptr;
  PetscBool norm_cached = PETSC_FALSE;
  {
    PetscScalar sigma;
    PetscCall(STGetShift(eps->st, &sigma));
    if (s.translation_map && s.exact_operator && (PetscAbsScalar(sigma) == 0 || ctx->shift != 0)) {
      PetscReal nrm = 0;
      if (congruence) norm_mat = ctx->congruent;
      else PetscCall(STGetMatrix(eps->st, 0, &norm_mat));
      PetscCall(EPSCUDALanczosNormId());
      // The macro reads the Mat's arrays at the id: only where they reach it (they grow when data is set).
      if (((PetscObject)norm_mat)->real_idmax > EPS_CUDALanczos_NormId)
        PetscCall(PetscObjectComposedDataGetReal((PetscObject)norm_mat, EPS_CUDALanczos_NormId, nrm, norm_cached));
      if (!(nrm > 0)) norm_cached = PETSC_FALSE;
      // Every rank takes the same path: measuring is a product and a reduction, and a Mat's state is kept
      // per process (a rank whose state moved alone must not leave the others waiting in the reduction).
      PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &norm_cached, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, comm));
      if (norm_cached) s.norm_estimate = (double)nrm;
    }
  }
  // Where the ST applies the operator with a solve (a B, STSINVERT, STCAYLEY), measuring its norm is a
  // solve: the estimate of an earlier solve of this EPS is taken while the ST's type, shift and matrices
  // are the same. With the same seed the measurement would repeat that value bit for bit (a direct
  // solve), or to the KSP's tolerance; the scaling needs it within far less.
  PetscInt64 st_of[6] = {-1, -1, -1, -1, -1, -1};
  PetscBool  st_norm_cached = PETSC_FALSE;
  const bool st_norm_key = !s.translation_map && st_assembled && !congruence;
  if (st_norm_key) {
    PetscInt    nmat;
    PetscScalar sigma;
    PetscCall(STGetNumMatrices(eps->st, &nmat));
    for (PetscInt i = 0; i < PetscMin(nmat, 2); ++i) {
      Mat M;
      PetscCall(STGetMatrix(eps->st, i, &M));
      PetscCall(ObjectKey((PetscObject)M, st_of + 2 * i));
    }
    PetscCall(STGetShift(eps->st, &sigma));
    const double parts[2] = {(double)PetscRealPart(sigma), (double)PetscImaginaryPart(sigma)};
    std::memcpy(&st_of[4], parts, sizeof parts);
    const char *type;
    PetscCall(PetscObjectGetType((PetscObject)eps->st, &type));
    st_norm_cached = ctx->st_norm > 0 && std::equal(st_of, st_of + 6, ctx->st_norm_of) && ctx->st_norm_type == type ? PETSC_TRUE : PETSC_FALSE;
    // every rank alike: a rank whose matrix state moved alone would otherwise measure (a collective) alone
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &st_norm_cached, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, comm));
    if (st_norm_cached) s.norm_estimate = ctx->st_norm;
    else PetscCallCXX((ctx->st_norm = 0, ctx->st_norm_type = type));
  }

  cb.error = [&](double theta, double res) {
    PetscReal err = res;
    if (res == 0) return 0.0; // an exact eigenpair (zero matrix, invariant subspace): 0/|0| would be NaN
    if (!cberr) cberr = (*eps->converged)(eps, theta, 0.0, res, &err, eps->convergedctx);
    return (double)err;
  };
  cb.eigenvalue = [&](double value) {
    PetscScalar re = value, im = 0;
    if (!cberr) cberr = STBackTransform(eps->st, 1, &re, &im);
    return (double)PetscRealPart(re);
  };
  cb.monitor = [&](int its, int nconv, const double *theta, const double *errest, int count) {
    // EPSMonitor wants eigr/eigi/errest arrays of the solver: show the current approximations there.
    const int k = PetscMin(count, (int)eps->ncv);
    for (int i = 0; i < k; ++i) {
      eps->eigr[i]   = theta[i];
      eps->eigi[i]   = 0;
      eps->errest[i] = errest[i];
    }
    if (!cberr) cberr = EPSMonitor(eps, its, nconv, eps->eigr, eps->eigi, eps->errest, k);
  };
  // EPSStoppingBasic (max_it, nconv >= nev) is what the driver does itself; only a user's test is called.
  if (eps->stopping != EPSStoppingBasic) cb.stop = [&](int its, int nconv) {
    EPSConvergedReason reason = EPS_CONVERGED_ITERATING;
    if (!cberr) cberr = (*eps->stopping)(eps, its, eps->max_it, nconv, eps->nev, &reason, eps->stoppingctx);
    return cberr != 0 || reason != EPS_CONVERGED_ITERATING;
  };

  // A deflation space: EPSSetUp put it into V as constraints (columns -nc..-1, orthonormal, dependent
  // vectors dropped); the solve runs on its complement through a ConstrainedBackend, which holds it in
  // the first columns of the backend's basis and shows the driver the columns after them.
  // A generalized problem: B-inner products around the backend, and the constraints (B-orthonormal
  // from EPSSetUp) around those, so that they are removed in the B-inner product too.
  PetscInt nc = 0;
  PetscCall(BVGetNumConstraints(eps->V, &nc));
  BProduct                              bprod{inner, nullptr, nullptr};
  struct BProductVecs {
    BProduct &p;
    ~BProductVecs()
    {
      (void)VecDestroy(&p.x);
      (void)VecDestroy(&p.y);
    }
  } bprod_vecs{bprod};
  std::unique_ptr<BInnerProductBackend> binner;
  ctx->b_desc.clear();
  if (inner) {
    PetscCall(MatCreateVecs(inner, &bprod.x, &bprod.y));
    ColumnOperator apply_b;
    std::shared_ptr<const void> bop; // B on the device of a CUDA backend (EPSCUDALanczosDeviceB)
#if defined(CUDALANCZOS_HAVE_CUDA)
    std::size_t b_uploaded = 0;
    if (backend->name() == "cuda") PetscCall(EPSCUDALanczosDeviceB(eps, inner, ctx->device_used, &bop, &b_uploaded));
    if (bop) {
      const auto dop = std::static_pointer_cast<const cudalanczos::cuda::DeviceOperator>(bop);
#if defined(CUDALANCZOS_PETSC_STREAMS)
      if (dop->in_place()) { // B's own device arrays: this solve's products wait for what PETSc queued on them
        void *petsc = nullptr;
        PetscCall(EPSCUDALanczosPETScStream(&petsc));
        PetscCallCXX(cudalanczos::cuda::wait_for_stream(*backend, petsc));
      }
#endif
      apply_b = [dop](Backend &basis, int src, int dst) { cudalanczos::cuda::apply_to_columns(basis, *dop, src, dst); };
      PetscCallCXX(ctx->b_desc = "on the device: " + dop->description() +
                                 (dop->in_place() ? "" : b_uploaded ? "; copied from the host Mat by this solve, kept with the Mat" : "; the Mat's device copy"));
    }
#endif
    if (auto *host = dynamic_cast<HostBackend *>(backend.get())) { // in place on the host basis
      apply_b     = [host, bprod](Backend &, int src, int dst) { bprod(host->column(src), host->column(dst)); };
      ctx->b_desc = "MatMult on the host basis";
    } else if (!bop) { // a device basis: through the host (two copies of a column per product)
      PetscCallCXX(apply_b = host_round_trip([bprod](const PetscScalar *x, PetscScalar *y) { bprod(x, y); }));
      ctx->b_desc = "MatMult on the host, columns copied per product (B of a type not taken to the device)";
    }
    PetscCallCXX(binner = std::make_unique<BInnerProductBackend>(*backend, std::move(apply_b)));
  }
  Backend &unconstrained = binner ? static_cast<Backend &>(*binner) : *backend;
  std::unique_ptr<ConstrainedBackend> constrained;
  if (nc > 0) PetscCallCXX(constrained = std::make_unique<ConstrainedBackend>(unconstrained, (int)nc));
  Backend &solver = constrained ? static_cast<Backend &>(*constrained) : unconstrained;

  PetscCall(EPSCUDALanczosLimitBasis(eps, backend->name() == "cuda" ? PETSC_TRUE : PETSC_FALSE, &s));
  PetscCallCXX(solver.resize_basis(basis_columns_needed(s)));
  // The BV's columns in device memory (VECCUDA, -bv_type svec with -vec_type cuda on a CUDA PETSc) go to
  // and from the CUDA backend's basis device to device, ordered with PETSc's stream by events (see
  // eps_cudalanczos_impl.hpp); host columns (and the host backend) through the host as before.
  void     *petsc_stream = nullptr; // PETSc's stream, taken when the first device column is met
  PetscBool device_bv    = PETSC_FALSE; // whether any column went device to device
#if defined(CUDALANCZOS_PETSC_STREAMS)
  const PetscBool use_device = backend->name() == "cuda" ? PETSC_TRUE : PETSC_FALSE;
  // A column on the backend's own device goes device to device (the events are made there); one on
  // another device (a backend placed by -eps_cudalanczos_device away from PETSc's) through the host.
  const auto on_our_device = [&](PetscMemType mtype, const void *x) {
    int at = -1;
    if (PetscMemTypeDevice(mtype)) at = cudalanczos::cuda::device_of(x);
    return at >= 0 && at == ctx->device_used;
  };
  PetscBool have_stream = PETSC_FALSE;
  const auto take_stream = [&]() -> PetscErrorCode {
    PetscFunctionBegin;
    if (!have_stream) PetscCall(EPSCUDALanczosPETScStream(&petsc_stream));
    have_stream = PETSC_TRUE;
    PetscFunctionReturn(0);
  };
#endif
  // Reads column `col` of V (device memory where it lives there) into the solver: `to_device` takes a
  // device pointer and returns false where the backend cannot, `to_host` a host one.
  const auto read_column = [&](PetscInt col, const auto &to_device, const auto &to_host) -> PetscErrorCode {
    const PetscScalar *x;
    Vec                v;
    PetscFunctionBegin;
    PetscCall(BVGetColumn(eps->V, col, &v));
#if defined(CUDALANCZOS_PETSC_STREAMS)
    if (use_device) {
      PetscMemType mtype;
      bool         done = false;
      PetscCall(VecGetArrayReadAndMemType(v, &x, &mtype));
      bool ours = false;
      PetscCallCXX(ours = on_our_device(mtype, x));
      if (ours) {
        PetscCall(take_stream());
        PetscCallCXX(done = to_device(x));
      }
      PetscCall(VecRestoreArrayReadAndMemType(v, &x));
      if (done) {
        device_bv = PETSC_TRUE;
        PetscCall(BVRestoreColumn(eps->V, col, &v));
        PetscFunctionReturn(0);
      } // else a host column, or a wrapper backend without device columns: through the host below
    }
#endif
    PetscCall(VecGetArrayRead(v, &x));
    PetscCallCXX(to_host(x));
    PetscCall(VecRestoreArrayRead(v, &x));
    PetscCall(BVRestoreColumn(eps->V, col, &v));
    PetscFunctionReturn(0);
  };
  for (PetscInt i = 0; i < nc; ++i) {
    bool kept = false;
    PetscCall(read_column(
      i - nc, [&](const PetscScalar *x) { return constrained->add_constraint_device(x, petsc_stream, &kept); },
      [&](const PetscScalar *x) { kept = constrained->add_constraint(x); }));
    if (!kept) PetscCall(PetscInfo(eps, "cudalanczos: deflation vector %" PetscInt_FMT " is in the span of the ones before it: dropped\n", i));
  }
  if (s.initial_vector && congruence) { // the start x0 in C's space: y0 = B^1/2 x0 (column 0 is overwritten by the results anyway)
    Vec v;
    PetscCall(BVGetColumn(eps->V, 0, &v));
    PetscCall(VecPointwiseDivide(v, v, ctx->b_isqrt));
    PetscCall(BVRestoreColumn(eps->V, 0, &v));
  }
  if (s.initial_vector) { // EPSSetUp put the user's initial space into V: its first column starts the iteration
    PetscCall(read_column(
      0, [&](const PetscScalar *x) { return solver.set_column_device(0, x, petsc_stream); },
      [&](const PetscScalar *x) { solver.set_column(0, x); }));
  }

  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Iterate, eps, 0, 0, 0));
  PetscCallCXX(result = cudalanczos::solve(solver, s, cb));
  PetscCallCXX(solver.synchronize());
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Iterate, eps, 0, 0, 0));
  PetscCall(cberr);

  // Results the SLEPc way: eigr/eigi/errest/nconv/its/reason and the vectors in eps->V.
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Vectors, eps, 0, 0, 0));
  const PetscInt nret = PetscMin((PetscInt)result.eigenvalues.size(), eps->ncv);
  for (PetscInt i = 0; i < nret; ++i) {
    eps->eigr[i]   = result.eigenvalues[i]; // real (Hermitian problem), also where PetscScalar is complex
    eps->eigi[i]   = 0;
    eps->errest[i] = result.errors[i];
  }
  eps->nconv = PetscMin((PetscInt)result.nconv, nret);
  eps->its   = result.its;
  PetscCall(EPSCUDALanczosReturnColumns(eps, eps->nconv));
  {
    PetscBool injective;
    PetscCall(STIsInjective(eps->st, &injective));
    if (!injective) PetscCall(DSSetDimensions(eps->ds, eps->nconv, 0, 0)); // EPSComputeValues projects onto V[:, 0:nconv]
  }
  switch (result.reason) {
  case Reason::Converged: eps->reason = EPS_CONVERGED_TOL; break;
  case Reason::MaxIterations: eps->reason = EPS_DIVERGED_ITS; break;
  case Reason::Breakdown: eps->reason = EPS_DIVERGED_BREAKDOWN; break;
  case Reason::UserStop: eps->reason = EPS_CONVERGED_USER; break;
  case Reason::ResidualCheck: eps->reason = EPS_DIVERGED_BREAKDOWN; break; // -eps_view says why
  }
  for (PetscInt j = 0; j < eps->nconv; ++j) {
    Vec          v;
    PetscScalar *x;
    PetscCall(BVGetColumn(eps->V, j, &v));
#if defined(CUDALANCZOS_PETSC_STREAMS)
    if (use_device) { // every entry is written: the Write accessors (PETSc copies nothing to the device first)
      PetscMemType mtype;
      bool         done = false, ours = false;
      PetscBool    cudavec;
      // A VECCUDA column takes the device array even where its last values are on the host: the
      // ...AndMemType accessor hands out the host array of a column PETSc last wrote there (a host Mat's
      // BV, filled by EPSSetUp on the host), and every entry is overwritten here anyway.
      PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cudavec, VECSEQCUDA, VECMPICUDA, ""));
      if (cudavec) {
        PetscCall(VecCUDAGetArrayWrite(v, &x));
        mtype = PETSC_MEMTYPE_CUDA;
      } else PetscCall(VecGetArrayWriteAndMemType(v, &x, &mtype));
      PetscCallCXX(ours = on_our_device(mtype, x));
      if (ours) {
        PetscCall(take_stream());
        PetscCallCXX(done = solver.get_column_device((int)j, x, petsc_stream));
      } else if (!PetscMemTypeDevice(mtype)) PetscCallCXX((solver.get_column((int)j, x), done = true));
      if (cudavec) PetscCall(VecCUDARestoreArrayWrite(v, &x));
      else PetscCall(VecRestoreArrayWriteAndMemType(v, &x));
      if (done) {
        if (ours) device_bv = PETSC_TRUE;
        PetscCall(BVRestoreColumn(eps->V, j, &v));
        continue;
      } // else: device memory on another device, or a wrapper backend without device columns: through the host below
    }
#endif
    PetscCall(VecGetArray(v, &x));
    PetscCallCXX(solver.get_column((int)j, x));
    PetscCall(VecRestoreArray(v, &x));
    PetscCall(BVRestoreColumn(eps->V, j, &v));
  }
  PetscCallCXX(ctx->vectors_desc = device_bv ? "the BV's device columns (VECCUDA), copied device to device, ordered with PETSc's stream by events"
                                   : backend->name() == "cuda" ? "the BV's host columns, copied between host and device"
                                                                : "the BV's host columns");
  if (congruence) // back from C's space: x = B^-1/2 y (then x^H B x = y^H y = 1)
    for (PetscInt j = 0; j < eps->nconv; ++j) {
      Vec v;
      PetscCall(BVGetColumn(eps->V, j, &v));
      PetscCall(VecPointwiseMult(v, v, ctx->b_isqrt));
      PetscCall(BVRestoreColumn(eps->V, j, &v));
    }
  ctx->purified_relation = ctx->purified_solves = 0;
  if (ipmat && eps->nconv > 0) {
    // Purification (SLEPc's EPS_Purify, on by default, EPSSetPurify; SLEPc does it for STSINVERT, not for
    // STCAYLEY): the operator's range lies in B's range, so x <- Op x removes from x what rounding put
    // outside it (components in B's null space, where B is near-singular). Then every vector B-normalized.
    // The driver purified what the Lanczos relation allowed (Settings::purify): x <- Op x from the kept
    // residual directions, no solve; the others take one STApply each here.
    if (s.purify) {
      ctx->purified_relation = result.purified;
      Vec v, z;
      PetscCall(BVCreateVec(eps->V, &v));
      for (PetscInt j = 0; j < eps->nconv; ++j) {
        if (j < (PetscInt)result.purify_scale.size() && std::isfinite(result.purify_scale[j])) continue;
        ++ctx->purified_solves;
        PetscCall(BVCopyVec(eps->V, j, v));
        PetscCall(BVGetColumn(eps->V, j, &z));
        PetscCall(STApply(eps->st, v, z));
        PetscCall(BVRestoreColumn(eps->V, j, &z));
      }
      PetscCall(VecDestroy(&v));
    }
    PetscInt l, k;
    PetscCall(BVGetActiveColumns(eps->V, &l, &k));
    PetscCall(BVSetActiveColumns(eps->V, 0, eps->nconv));
    PetscCall(BVNormalize(eps->V, nullptr)); // in the BV's inner product: x^H B x = 1
    PetscCall(BVSetActiveColumns(eps->V, l, k));
  }
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Vectors, eps, 0, 0, 0));

  ctx->b_products    = binner ? binner->b_products() : 0;
  ctx->generalized   = inner ? PETSC_TRUE : PETSC_FALSE;
  ctx->congruence_used = congruence;
  ctx->matvecs       = result.matvecs;
  ctx->reductions    = result.reductions;
  ctx->breakdowns    = result.breakdowns;
  ctx->orthogonality = result.orthogonality;
  ctx->full_passes   = result.full_reorthogonalizations;
  ctx->discarded     = result.discarded_steps;
  ctx->lookahead_dropped = result.lookahead_discarded;
  ctx->lookahead_queued = result.lookahead_dropped_steps;
  ctx->matvecs_before_nev   = result.matvecs_before_nev;
  ctx->matvecs_verification = result.matvecs_verification;
  ctx->matvecs_check        = result.matvecs_check;
  ctx->operator_passes      = result.operator_passes;
  ctx->switched_to_full = result.switched_to_full ? PETSC_TRUE : PETSC_FALSE;
  ctx->restart_raised   = result.restart_raised ? PETSC_TRUE : PETSC_FALSE;
  ctx->certificates  = result.certificates;
  ctx->verification_cut = result.verification_cut ? PETSC_TRUE : PETSC_FALSE;
  if (result.verification_cut)
    PetscCall(PetscInfo(eps, "cudalanczos: the multiplicity verification was cut short (max_it or no basis column left): copies of the wanted eigenvalues may be missing\n"));
  ctx->block_certified = result.block_certified;
  ctx->ncv_used      = result.ncv_used;
  ctx->block_used    = result.block_size;
  ctx->scale_exponent = result.scale_exponent;
  ctx->norm_estimate = result.norm_estimate;
  ctx->norm_reused   = norm_cached;
  ctx->st_norm_reused = st_norm_cached;
  if (st_norm_key && !st_norm_cached && result.norm_estimate > 0) {
    ctx->st_norm = result.norm_estimate;
    std::copy(st_of, st_of + 6, ctx->st_norm_of);
  }
  if (norm_mat && !norm_cached && result.norm_estimate > 0)
    PetscCall(PetscObjectComposedDataSetReal((PetscObject)norm_mat, EPS_CUDALanczos_NormId, (PetscReal)result.norm_estimate));
  ctx->residuals_checked = result.residuals_checked;
  ctx->residual_rejected = result.residual_rejected;
  ctx->residuals_proven  = result.residuals_proven;
  ctx->residual_retries  = result.residual_retries;
  ctx->last_reason   = (int)result.reason;
  ctx->solved        = PETSC_TRUE;
  PetscCall(PetscInfo(eps, "cudalanczos: %ld operator applications, %ld reductions, %d breakdowns, max|V'V-I| = %g on %s\n",
                      result.matvecs, result.reductions, result.breakdowns, result.orthogonality, ctx->backend_name.c_str()));
  constrained.reset(); // it refers to *binner or *backend
  binner.reset();      // it refers to *backend
  backend.reset();
  PetscCall(VecDestroy(&hostop.x));
  PetscCall(VecDestroy(&hostop.y));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSSetFromOptions_CUDALanczos(EPS eps, CUDALanczosOptionItems PetscOptionsObject)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        flg, b;
  PetscInt         i;
  EPSCUDALanczosVariant  variant;
  EPSCUDALanczosReorthog reorthog;
  EPSCUDALanczosBackend  backend;
  EPSCUDALanczosKernels  kernels;

  PetscFunctionBegin;
  // The values shown as current: those in effect, as the getters report them (the user's, or the
  // solver's choice after a set-up).
  EPSCUDALanczosReorthog reorthog_now;
  PetscInt               block_now;
  PetscReal              restart_now, r;
  PetscCall(EPSCUDALanczosGetReorthog(eps, &reorthog_now));
  PetscCall(EPSCUDALanczosGetBlockSize(eps, &block_now));
  PetscCall(EPSCUDALanczosGetRestart(eps, &restart_now));
  PetscOptionsHeadBegin(PetscOptionsObject, "EPS CUDA Lanczos Options");
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_variant", "Lanczos variant", "EPSCUDALanczosSetVariant", EPSCUDALanczosVariants,
                             (PetscEnum)ctx->variant, (PetscEnum *)&variant, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetVariant(eps, variant));
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_reorthog", "Reorthogonalization", "EPSCUDALanczosSetReorthog", EPSCUDALanczosReorthogs,
                             (PetscEnum)reorthog_now, (PetscEnum *)&reorthog, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetReorthog(eps, reorthog));
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_backend", "Where the Lanczos vectors live", "EPSCUDALanczosSetBackend", EPSCUDALanczosBackends,
                             (PetscEnum)ctx->backend, (PetscEnum *)&backend, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetBackend(eps, backend));
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_kernels", "GPU kernels: custom or cuBLAS/cuSPARSE", "EPSCUDALanczosSetKernels",
                             EPSCUDALanczosKernelsTypes, (PetscEnum)ctx->kernels, (PetscEnum *)&kernels, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetKernels(eps, kernels));
  PetscCall(PetscOptionsInt("-eps_cudalanczos_device", "CUDA device (default: node-local rank modulo device count)",
                            "EPSCUDALanczosSetDevice", ctx->device, &i, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetDevice(eps, i));
  PetscCall(PetscOptionsBool("-eps_cudalanczos_check_symmetry", "Probe the operator for symmetry before solving",
                             "EPSCUDALanczosSetCheckSymmetry", ctx->check_symmetry, &b, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetCheckSymmetry(eps, b));
  PetscCall(PetscOptionsInt("-eps_cudalanczos_ncv_max", "Largest basis the thick-restart variant may grow to when convergence is slow",
                            "EPSCUDALanczosSetNcvMax", ctx->ncv_max, &i, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetNcvMax(eps, i));
  PetscCall(PetscOptionsBool("-eps_cudalanczos_verify", "Search the complement of the converged vectors for missed multiple eigenvalues",
                             "EPSCUDALanczosSetVerify", ctx->verify, &b, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetVerify(eps, b));
  PetscCall(PetscOptionsReal("-eps_cudalanczos_restart", "Fraction of the unconverged Ritz vectors kept at a restart (default: chosen by the solver)",
                             "EPSCUDALanczosSetRestart", restart_now, &r, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetRestart(eps, r));
  PetscCall(PetscOptionsInt("-eps_cudalanczos_block_size", "Vectors per Lanczos step (thick-restart variant; default: chosen by the solver)",
                            "EPSCUDALanczosSetBlockSize", block_now, &i, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetBlockSize(eps, i));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

// Why the last solve returned fewer than nev converged pairs (-eps_view), with a hint where the user's
// ncv leaves few columns beyond nev (SLEPc's default is max(2 nev, nev + 15)).
PetscErrorCode EPSCUDALanczosViewShortfall(EPS eps, PetscViewer viewer)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  const PetscInt         ncv_default = eps->nev < 500 ? PetscMax(2 * eps->nev, eps->nev + 15) : eps->nev + 500;
  const char            *why = "";

  PetscFunctionBegin;
  switch ((Reason)ctx->last_reason) {
  case Reason::MaxIterations: why = "the iteration limit (max_it) was reached"; break;
  case Reason::Breakdown: why = "the Krylov space was exhausted first"; break;
  case Reason::UserStop: why = "the user's stopping test ended it"; break;
  case Reason::ResidualCheck: why = "pairs the iteration counted as converged failed the convergence test on their true residuals"; break;
  case Reason::Converged: why = "the rest did not pass the true-residual check"; break;
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  the last solve returned %" PetscInt_FMT " of %" PetscInt_FMT " wanted pairs converged: %s\n", eps->nconv,
                                   eps->nev, why));
  if ((Reason)ctx->last_reason == Reason::MaxIterations && ctx->variant == EPS_CUDALANCZOS_THICK_RESTART && eps->ncv < ncv_default &&
      eps->ncv < eps->n)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  ncv %" PetscInt_FMT " leaves %" PetscInt_FMT " columns beyond nev %" PetscInt_FMT
                                     " (the default ncv for it is %" PetscInt_FMT "): a larger ncv or mpd converges in fewer restarts\n",
                                     eps->ncv, eps->ncv - eps->nev, eps->nev, ncv_default));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSView_CUDALanczos(EPS eps, PetscViewer viewer)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        isascii;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  const bool thesis = ctx->variant == EPS_CUDALANCZOS_THESIS;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  variant: %s\n", EPSCUDALanczosVariants[ctx->variant]));
  if (thesis || ctx->reorthog_set) PetscCall(PetscViewerASCIIPrintf(viewer, "  reorthogonalization: %s\n", thesis ? "none" : EPSCUDALanczosReorthogs[ctx->reorthog]));
  else if (eps->state >= EPS_STATE_SETUP)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  reorthogonalization: %s (chosen: %s)\n", EPSCUDALanczosReorthogs[ctx->reorthog_eff],
                                     ctx->reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? "single-vector steps with STSHIFT"
                                     : ctx->block_eff > 1                                   ? "block steps need it"
                                     : eps->isgeneralized                                   ? "a generalized problem: each product is a solve"
                                     : ctx->reorthog_dense                                  ? "a dense matrix, whose product costs more than a full pass"
                                                                                            : "an ST other than STSHIFT"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "  reorthogonalization: chosen at set-up (partial for single-vector steps with STSHIFT on a sparse or shell operator of a standard problem, else full)\n"));
  if (!thesis) PetscCall(PetscViewerASCIIPrintf(viewer, "  multiplicity verification: %s\n", ctx->verify ? "on" : "off"));
  if (!thesis && ctx->block_eff > 1)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  block size: %" PetscInt_FMT " vectors per step%s\n", ctx->block_eff,
                                     ctx->block_auto ? " (chosen: a dense matrix of at least " CUDALANCZOS_AUTO_BLOCK_ROWS_TEXT " rows on one GPU: 2 vectors below nev 10, 4 from nev 10)" : ""));
  if (!thesis) {
    PetscReal keep;
    PetscCall(EPSCUDALanczosGetRestart(eps, &keep));
    if (ctx->restart != (PetscReal)PETSC_DEFAULT || eps->state < EPS_STATE_SETUP)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  %d%% of the unconverged Ritz vectors kept after restart\n", (int)(100 * keep + 0.5)));
    else
      PetscCall(PetscViewerASCIIPrintf(viewer, "  %d%% of the unconverged Ritz vectors kept after restart (chosen: %s; 50%% after a stall)\n", (int)(100 * keep + 0.5),
                                       ctx->reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? "partial reorthogonalization, whose steps orthogonalize against the kept vectors"
                                                                                            : "krylovschur's default"));
  }
  if (!thesis && ctx->ncv_limit > eps->ncv)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  basis may grow from ncv %" PetscInt_FMT " to %" PetscInt_FMT " columns when convergence is slow\n", eps->ncv, ctx->ncv_limit));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  backend requested: %s, kernels: %s\n", EPSCUDALanczosBackends[ctx->backend],
                                   EPSCUDALanczosKernelsTypes[ctx->kernels]));
  if (ctx->solved) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  backend used: %s%s%s\n", ctx->backend_name.c_str(), ctx->device_desc.empty() ? "" : ", device ",
                                     ctx->device_desc.c_str()));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  operator: %s\n", ctx->operator_desc.c_str()));
    if (ctx->backend_name == "cuda") {
      std::size_t copies, bytes, in_place, in_place_bytes, pooled = 0, own = 0;
      MatCUDALanczosDeviceCopies(&copies, &bytes, &in_place, &in_place_bytes);
#if defined(CUDALANCZOS_HAVE_CUDA)
      pooled = EPSCUDALanczosPooledBackendBytes();
      if (ctx->backend_cache) PetscCallCXX(own = cudalanczos::cuda::backend_device_bytes(*ctx->backend_cache));
#endif
      PetscCall(PetscViewerASCIIPrintf(viewer, "  matrix bytes uploaded by the last solve: %zu; device copies composed on this process's Mats: %zu (%zu bytes)\n",
                                       ctx->uploaded_bytes, copies, bytes));
      PetscCall(PetscViewerASCIIPrintf(viewer,
                                       "  device memory held: this EPS's backend %zu bytes, the pooled backend %zu bytes, operators on device Mats' own arrays: %zu "
                                       "(%zu bytes of scratch)\n",
                                       own, pooled, in_place, in_place_bytes));
    }
    if (!ctx->vectors_desc.empty()) PetscCall(PetscViewerASCIIPrintf(viewer, "  vectors: %s\n", ctx->vectors_desc.c_str()));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  last solve: %ld operator applications, %ld global reductions, %d breakdowns, %ld full orthogonalization passes\n",
                                     ctx->matvecs, ctx->reductions, ctx->breakdowns, ctx->full_passes));
    if (!thesis) {
      // Where the products went: the three parts add up to the count above; the thrown-away steps are
      // inside them (their products were paid for, their results not used).
      PetscCall(PetscViewerASCIIPrintf(viewer,
                                       "  operator applications by part: %ld until the nev-th pair converged (with the norm estimate), %ld verification, "
                                       "%ld true-residual check; %ld passes over the operator\n",
                                       ctx->matvecs_before_nev, ctx->matvecs_verification, ctx->matvecs_check, ctx->operator_passes));
      PetscCall(PetscViewerASCIIPrintf(viewer,
                                       "  thrown away: %ld partial-reorthogonalization steps redone, %ld look-ahead steps run (%ld queued and dropped; "
                                       "a one-process GPU runs every queued step)\n",
                                       ctx->discarded, ctx->lookahead_dropped, ctx->lookahead_queued));
    }
    if (ctx->congruence_used)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  generalized problem with a diagonal B: solved as the standard problem of B^-1/2 A B^-1/2 "
                                               "(Euclidean inner product, x = B^-1/2 y; no solve or product with B per step)\n"));
    if (ctx->generalized) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  %s: Lanczos in the B-inner product, %ld products with B\n",
                                       eps->isgeneralized ? "generalized problem" : "a standard problem with the BV's inner-product matrix B (BVSetMatrix)", ctx->b_products));
      PetscCall(PetscViewerASCIIPrintf(viewer, "  products with B: %s\n", ctx->b_desc.c_str()));
      PetscCall(PetscViewerASCIIPrintf(viewer, "  B-orthogonality of the returned vectors: max|V'BV-I| = %g\n", (double)ctx->orthogonality));
      if (ctx->purified_relation + ctx->purified_solves > 0)
        PetscCall(PetscViewerASCIIPrintf(viewer, "  purification: %d vectors from the Lanczos relation (no solve), %d by STApply\n", ctx->purified_relation,
                                         ctx->purified_solves));
    } else {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  orthogonality of the returned vectors: max|V'V-I| = %g\n", (double)ctx->orthogonality));
    }
    if (!thesis && ctx->reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  partial reorthogonalization: %ld steps redone after a full pass came due inside a chunk\n", ctx->discarded));
      if (ctx->switched_to_full)
        PetscCall(PetscViewerASCIIPrintf(viewer, "  partial reorthogonalization gave way to full: a wanted eigenvalue is too small against ||A|| for a semi-orthogonal basis at this tol\n"));
    }
    if (!thesis && ctx->restart_raised)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  the last solve kept 50%% of the unconverged Ritz vectors after a stall: four restarts did not lower the leading error\n"));
    if (!thesis && ctx->ncv_limit > eps->ncv) PetscCall(PetscViewerASCIIPrintf(viewer, "  basis size when the last solve ended: %d columns\n", ctx->ncv_used));
    if (!thesis && ctx->block_eff > 1 && ctx->block_used != ctx->block_eff)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  the last solve took single-vector steps: ncv + block size exceeds the problem size\n"));
    if (ctx->scale_exponent)
      PetscCall(PetscViewerASCIIPrintf(viewer,
                                       "  operator scaled by 2^%d for the last solve: its norm estimate %g (from a product) lies outside [2^-256, 2^256], where "
                                       "squared norms are safe; eigenvalues scaled back\n",
                                       ctx->scale_exponent, ctx->norm_estimate));
    if (ctx->norm_reused)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  norm estimate %g reused from the matrix (unchanged since a solve measured it): no product\n", ctx->norm_estimate));
    if (ctx->st_norm_reused)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  norm estimate %g of the ST's operator reused from this EPS's last solve (same ST type, shift and matrices): no solve\n",
                                       ctx->norm_estimate));
    if (!thesis) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residuals checked: %d converged pairs, %d failed the convergence test and were not counted\n",
                                       ctx->residuals_checked, ctx->residual_rejected));
      PetscCall(PetscViewerASCIIPrintf(viewer, "  true residuals proven without a product: %d converged pairs (Lanczos residual + dropped couplings + rounding below tol)\n",
                                       ctx->residuals_proven));
      if (ctx->residual_retries)
        PetscCall(PetscViewerASCIIPrintf(viewer, "  after the check left fewer than nev the solve went on, locking pairs only two digits beyond tol\n"));
    }
    if (eps->nconv < eps->nev) PetscCall(EPSCUDALanczosViewShortfall(eps, viewer));
    if (!thesis && ctx->verify) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "  verification rounds ended by the probabilistic certificate: %d\n", ctx->certificates));
      if (ctx->verification_cut)
        PetscCall(PetscViewerASCIIPrintf(viewer, "  verification cut short (max_it, or no basis column left for the complement): copies of the wanted "
                                                 "eigenvalues may be missing; raise -eps_max_it or -eps_cudalanczos_ncv_max\n"));
      if (ctx->block_used > 1)
        PetscCall(PetscViewerASCIIPrintf(viewer, "  verification rounds not needed: %d (no wanted value at hand as many times as the block has vectors)\n",
                                         ctx->block_certified));
      // Looks inside a cycle happen only with the verification on (the last wanted pairs, the rounds).
      PetscCall(PetscViewerASCIIPrintf(viewer, "  look-ahead: %ld steps run ahead of a look that ended its cycle (in the operator applications)\n",
                                       ctx->lookahead_dropped));
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode EPSReset_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
#if defined(CUDALANCZOS_HAVE_CUDA)
  PetscCall(EPSCUDALanczosReturnBackend(eps));
#endif
  PetscCallCXX(ctx->backend_cache.reset());
  PetscCallCXX(ctx->backend_cache_op.reset());
  PetscCallCXX(ctx->device_op.reset());
  // A Mat changed since its last solve and solved no more gives its device memory back now. The ST's
  // own reference, not STGetMatrix: that refuses a matrix whose state moved since EPSSetOperators, the
  // very case here, and a reset (EPSDestroy) must not fail on it.
  if (eps->st && eps->st->nmat > 0 && eps->st->A && eps->st->A[0]) PetscCall(MatCUDALanczosDropStaleDeviceCopy(eps->st->A[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSDestroy_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  PetscCall(MatDestroy(&ctx->congruent));
  PetscCall(VecDestroy(&ctx->b_isqrt));
  PetscCallCXX(delete ctx);
  eps->data = nullptr;
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetVariant_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetVariant_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetReorthog_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetReorthog_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetBackend_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBackend_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetKernels_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetKernels_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetDevice_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetDevice_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetCheckSymmetry_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetCheckSymmetry_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetVerify_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetVerify_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetNcvMax_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetNcvMax_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetBlockSize_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBlockSize_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetRestart_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetRestart_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBackendInUse_C", nullptr));
  PetscFunctionReturn(0);
}

// --- setters/getters behind the composed functions ------------------------------------------------
#define CUDALANCZOS_ACCESSORS(Name, Type, field)                                  \
  PetscErrorCode EPSCUDALanczosSet##Name##_CUDALanczos(EPS eps, Type value)       \
  {                                                                               \
    PetscFunctionBegin;                                                           \
    ((EPS_CUDALANCZOS *)eps->data)->field = value;                                \
    eps->state                            = EPS_STATE_INITIAL;                    \
    PetscFunctionReturn(0);                                                       \
  }                                                                               \
  PetscErrorCode EPSCUDALanczosGet##Name##_CUDALanczos(EPS eps, Type *value)      \
  {                                                                               \
    PetscFunctionBegin;                                                           \
    *value = ((EPS_CUDALANCZOS *)eps->data)->field;                               \
    PetscFunctionReturn(0);                                                       \
  }
CUDALANCZOS_ACCESSORS(Variant, EPSCUDALanczosVariant, variant)
CUDALANCZOS_ACCESSORS(Backend, EPSCUDALanczosBackend, backend)
CUDALANCZOS_ACCESSORS(Kernels, EPSCUDALanczosKernels, kernels)
CUDALANCZOS_ACCESSORS(Device, PetscInt, device)
CUDALANCZOS_ACCESSORS(CheckSymmetry, PetscBool, check_symmetry)
CUDALANCZOS_ACCESSORS(Verify, PetscBool, verify)
CUDALANCZOS_ACCESSORS(NcvMax, PetscInt, ncv_max)
#undef CUDALANCZOS_ACCESSORS

PetscErrorCode EPSCUDALanczosSetReorthog_CUDALanczos(EPS eps, EPSCUDALanczosReorthog value)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  ctx->reorthog     = value;
  ctx->reorthog_set = PETSC_TRUE;
  eps->state        = EPS_STATE_INITIAL;
  PetscFunctionReturn(0);
}

// The reorthogonalization in effect: the one set, or the solver's choice (known after EPSSetUp; full before).
PetscErrorCode EPSCUDALanczosGetReorthog_CUDALanczos(EPS eps, EPSCUDALanczosReorthog *value)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *value = ctx->reorthog_set ? ctx->reorthog : ctx->reorthog_eff;
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosSetRestart_CUDALanczos(EPS eps, PetscReal keep)
{
  PetscFunctionBegin;
  if (keep == (PetscReal)PETSC_DEFAULT || keep == (PetscReal)PETSC_DECIDE) keep = PETSC_DEFAULT; // the solver chooses at set-up
  else
    PetscCheck(keep >= 0.1 && keep <= 0.9, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
               "The restart fraction %g must lie in [0.1, 0.9] (the fraction of the unconverged Ritz vectors kept, as for krylovschur), or be PETSC_DEFAULT",
               (double)keep);
  ((EPS_CUDALANCZOS *)eps->data)->restart = keep;
  eps->state                              = EPS_STATE_INITIAL;
  PetscFunctionReturn(0);
}

// The fraction in effect: the one set, or the solver's choice (known after EPSSetUp; 0.5 before).
PetscErrorCode EPSCUDALanczosGetRestart_CUDALanczos(EPS eps, PetscReal *keep)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *keep = ctx->restart == (PetscReal)PETSC_DEFAULT ? ctx->restart_eff : ctx->restart;
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosSetBlockSize_CUDALanczos(EPS eps, PetscInt value)
{
  PetscFunctionBegin;
  ((EPS_CUDALANCZOS *)eps->data)->block_size = value; // PETSC_DEFAULT: the solver chooses at set-up
  eps->state                                 = EPS_STATE_INITIAL;
  PetscFunctionReturn(0);
}

// The block size in effect: the one set, or the solver's choice (known after EPSSetUp; 1 before).
PetscErrorCode EPSCUDALanczosGetBlockSize_CUDALanczos(EPS eps, PetscInt *value)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *value = ctx->block_size == PETSC_DEFAULT ? ctx->block_eff : ctx->block_size;
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosGetBackendInUse_CUDALanczos(EPS eps, const char **name)
{
  PetscFunctionBegin;
  *name = ((EPS_CUDALANCZOS *)eps->data)->backend_name.c_str();
  PetscFunctionReturn(0);
}

} // namespace

extern "C" PetscErrorCode EPSCreate_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = nullptr;

  PetscFunctionBegin;
  PetscCallCXX(ctx = new EPS_CUDALANCZOS());
  eps->data = (void *)ctx;

  eps->useds = PETSC_FALSE; // the projected problem is solved by our own implicit QR
  eps->categ = EPS_CATEGORY_KRYLOV;

  eps->ops->solve          = EPSSolve_CUDALanczos;
  eps->ops->setup          = EPSSetUp_CUDALanczos;
  eps->ops->setupsort      = EPSSetUpSort_CUDALanczos;
  eps->ops->setfromoptions = EPSSetFromOptions_CUDALanczos;
  eps->ops->destroy        = EPSDestroy_CUDALanczos;
  eps->ops->reset          = EPSReset_CUDALanczos;
  eps->ops->view           = EPSView_CUDALanczos;
  eps->ops->backtransform  = EPSBackTransform_CUDALanczos;

  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetVariant_C", EPSCUDALanczosSetVariant_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetVariant_C", EPSCUDALanczosGetVariant_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetReorthog_C", EPSCUDALanczosSetReorthog_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetReorthog_C", EPSCUDALanczosGetReorthog_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetBackend_C", EPSCUDALanczosSetBackend_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBackend_C", EPSCUDALanczosGetBackend_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetKernels_C", EPSCUDALanczosSetKernels_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetKernels_C", EPSCUDALanczosGetKernels_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetDevice_C", EPSCUDALanczosSetDevice_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetDevice_C", EPSCUDALanczosGetDevice_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetCheckSymmetry_C", EPSCUDALanczosSetCheckSymmetry_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetCheckSymmetry_C", EPSCUDALanczosGetCheckSymmetry_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetVerify_C", EPSCUDALanczosSetVerify_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetVerify_C", EPSCUDALanczosGetVerify_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetNcvMax_C", EPSCUDALanczosSetNcvMax_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetNcvMax_C", EPSCUDALanczosGetNcvMax_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetBlockSize_C", EPSCUDALanczosSetBlockSize_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBlockSize_C", EPSCUDALanczosGetBlockSize_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetRestart_C", EPSCUDALanczosSetRestart_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetRestart_C", EPSCUDALanczosGetRestart_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBackendInUse_C", EPSCUDALanczosGetBackendInUse_CUDALanczos));
  PetscFunctionReturn(0);
}
