/*
   EPSCUDALANCZOS: the SLEPc face of the Lanczos driver (src/core), laid out like SLEPc's own solvers
   (src/eps/impls/krylov/lanczos/lanczos.c): a private context (eps_cudalanczos_impl.hpp), static phases
   behind EPSSetUp_/EPSSolve_/EPSView_, and public setters forwarding to composed "_C" functions attached
   here in EPSCreate_CUDALanczos. This file holds the EPS object's life: create, options, reset, destroy
   and the composed accessors. The phases are in eps_cudalanczos_setup.cpp, eps_cudalanczos_solve.cpp
   and eps_cudalanczos_view.cpp.

   The driver works on a Backend. The host backend applies the ST operator (any Mat, any ST) through
   STApply; the CUDA backend (solve_backend.cpp, cuda_operator.cpp) uploads the matrix once (dense or AIJ, with STSHIFT) and
   keeps it while the Mat's object state is unchanged, or falls back to STApply with a copy per product.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>
#include <slepc/private/stimpl.h>

const char *const EPSCUDALanczosVariants[]     = {"thick-restart", "thesis", "EPSCUDALanczosVariant", "EPS_CUDALANCZOS_", nullptr};
const char *const EPSCUDALanczosReorthogs[]    = {"full", "none", "partial", "EPSCUDALanczosReorthog", "EPS_CUDALANCZOS_REORTHOG_", nullptr};
const char *const EPSCUDALanczosBackends[]     = {"auto", "host", "cuda", "EPSCUDALanczosBackend", "EPS_CUDALANCZOS_BACKEND_", nullptr};
const char *const EPSCUDALanczosKernelsTypes[] = {"default", "custom", "vendor", "EPSCUDALanczosKernels", "EPS_CUDALANCZOS_KERNELS_", nullptr};

PetscLogEvent EPS_CUDALanczos_Setup = 0, EPS_CUDALanczos_Upload = 0, EPS_CUDALanczos_Iterate = 0, EPS_CUDALanczos_Vectors = 0;
PetscLogEvent EPS_CUDALanczos_Context = 0, EPS_CUDALanczos_Prepare = 0, EPS_CUDALanczos_Transfer = 0, EPS_CUDALanczos_Analysis = 0;

namespace {

PetscErrorCode EPSBackTransform_CUDALanczos(EPS eps)
{
  PetscFunctionBegin;
  PetscCall(STBackTransform(eps->st, eps->nconv, eps->eigr, eps->eigi));
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
                             (PetscEnum)ctx->opt.variant, (PetscEnum *)&variant, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetVariant(eps, variant));
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_reorthog", "Reorthogonalization", "EPSCUDALanczosSetReorthog", EPSCUDALanczosReorthogs,
                             (PetscEnum)reorthog_now, (PetscEnum *)&reorthog, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetReorthog(eps, reorthog));
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_backend", "Where the Lanczos vectors live", "EPSCUDALanczosSetBackend", EPSCUDALanczosBackends,
                             (PetscEnum)ctx->opt.backend, (PetscEnum *)&backend, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetBackend(eps, backend));
  PetscCall(PetscOptionsEnum("-eps_cudalanczos_kernels", "GPU kernels: custom or cuBLAS/cuSPARSE", "EPSCUDALanczosSetKernels",
                             EPSCUDALanczosKernelsTypes, (PetscEnum)ctx->opt.kernels, (PetscEnum *)&kernels, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetKernels(eps, kernels));
  PetscCall(PetscOptionsInt("-eps_cudalanczos_device", "CUDA device (default: node-local rank modulo device count)",
                            "EPSCUDALanczosSetDevice", ctx->opt.device, &i, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetDevice(eps, i));
  PetscCall(PetscOptionsBool("-eps_cudalanczos_check_symmetry", "Probe the operator for symmetry before solving",
                             "EPSCUDALanczosSetCheckSymmetry", ctx->opt.check_symmetry, &b, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetCheckSymmetry(eps, b));
  PetscCall(PetscOptionsInt("-eps_cudalanczos_ncv_max", "Largest basis the thick-restart variant may grow to when convergence is slow",
                            "EPSCUDALanczosSetNcvMax", ctx->opt.ncv_max, &i, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetNcvMax(eps, i));
  PetscCall(PetscOptionsInt("-eps_cudalanczos_filter_degree", "Degree of the polynomial filter of an interval (EPS_ALL); 0: chosen from its width",
                            "EPSCUDALanczosSetFilterDegree", ctx->opt.filter_degree, &i, &flg));
  if (flg) PetscCall(EPSCUDALanczosSetFilterDegree(eps, i));
  PetscCall(PetscOptionsBool("-eps_cudalanczos_verify", "Search the complement of the converged vectors for missed multiple eigenvalues",
                             "EPSCUDALanczosSetVerify", ctx->opt.verify, &b, &flg));
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

PetscErrorCode EPSReset_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
#if defined(CUDALANCZOS_HAVE_CUDA)
  PetscCall(EPSCUDALanczosReturnBackend(eps));
#endif
  PetscCallCXX(ctx->cache.backend.reset());
  PetscCallCXX(ctx->cache.backend_op.reset());
  PetscCallCXX(ctx->cache.device_op.reset());
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
  PetscCall(MatDestroy(&ctx->cache.congruent));
  PetscCall(VecDestroy(&ctx->cache.b_isqrt));
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
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetFilterDegree_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetFilterDegree_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetBlockSize_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBlockSize_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetRestart_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetRestart_C", nullptr));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBackendInUse_C", nullptr));
  PetscFunctionReturn(0);
}

// --- setters/getters behind the composed functions ------------------------------------------------
#define CUDALANCZOS_ACCESSORS(Name, Type, field)                             \
  PetscErrorCode EPSCUDALanczosSet##Name##_CUDALanczos(EPS eps, Type value)  \
  {                                                                          \
    PetscFunctionBegin;                                                      \
    ((EPS_CUDALANCZOS *)eps->data)->opt.field = value;                       \
    eps->state                                = EPS_STATE_INITIAL;           \
    PetscFunctionReturn(0);                                                  \
  }                                                                          \
  PetscErrorCode EPSCUDALanczosGet##Name##_CUDALanczos(EPS eps, Type *value) \
  {                                                                          \
    PetscFunctionBegin;                                                      \
    *value = ((EPS_CUDALANCZOS *)eps->data)->opt.field;                      \
    PetscFunctionReturn(0);                                                  \
  }
CUDALANCZOS_ACCESSORS(Variant, EPSCUDALanczosVariant, variant)
CUDALANCZOS_ACCESSORS(Backend, EPSCUDALanczosBackend, backend)
CUDALANCZOS_ACCESSORS(Kernels, EPSCUDALanczosKernels, kernels)
CUDALANCZOS_ACCESSORS(Device, PetscInt, device)
CUDALANCZOS_ACCESSORS(CheckSymmetry, PetscBool, check_symmetry)
CUDALANCZOS_ACCESSORS(Verify, PetscBool, verify)
CUDALANCZOS_ACCESSORS(NcvMax, PetscInt, ncv_max)
CUDALANCZOS_ACCESSORS(FilterDegree, PetscInt, filter_degree)
#undef CUDALANCZOS_ACCESSORS

PetscErrorCode EPSCUDALanczosSetReorthog_CUDALanczos(EPS eps, EPSCUDALanczosReorthog value)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  ctx->opt.reorthog     = value;
  ctx->opt.reorthog_set = PETSC_TRUE;
  eps->state        = EPS_STATE_INITIAL;
  PetscFunctionReturn(0);
}

// The reorthogonalization in effect: the one set, or the solver's choice (known after EPSSetUp; full before).
PetscErrorCode EPSCUDALanczosGetReorthog_CUDALanczos(EPS eps, EPSCUDALanczosReorthog *value)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *value = ctx->opt.reorthog_set ? ctx->opt.reorthog : ctx->plan.reorthog_eff;
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
  ((EPS_CUDALANCZOS *)eps->data)->opt.restart = keep;
  eps->state                              = EPS_STATE_INITIAL;
  PetscFunctionReturn(0);
}

// The fraction in effect: the one set, or the solver's choice (known after EPSSetUp; 0.5 before).
PetscErrorCode EPSCUDALanczosGetRestart_CUDALanczos(EPS eps, PetscReal *keep)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *keep = ctx->opt.restart == (PetscReal)PETSC_DEFAULT ? ctx->plan.restart_eff : ctx->opt.restart;
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosSetBlockSize_CUDALanczos(EPS eps, PetscInt value)
{
  PetscFunctionBegin;
  ((EPS_CUDALANCZOS *)eps->data)->opt.block_size = value; // PETSC_DEFAULT: the solver chooses at set-up
  eps->state                                 = EPS_STATE_INITIAL;
  PetscFunctionReturn(0);
}

// The block size in effect: the one set, or the solver's choice (known after EPSSetUp; 1 before); for an
// interval, its filtered solves'.
PetscErrorCode EPSCUDALanczosGetBlockSize_CUDALanczos(EPS eps, PetscInt *value)
{
  const EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  if (eps->which == EPS_ALL) *value = ctx->plan.interval_block;
  else *value = ctx->opt.block_size == PETSC_DEFAULT ? ctx->plan.block_eff : ctx->opt.block_size;
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosGetBackendInUse_CUDALanczos(EPS eps, const char **name)
{
  PetscFunctionBegin;
  *name = ((EPS_CUDALANCZOS *)eps->data)->last.backend_name.c_str();
  PetscFunctionReturn(0);
}

} // namespace

/*MC
   EPSCUDALANCZOS - EPSCUDALANCZOS = "cudalanczos" - Lanczos on NVIDIA GPUs for symmetric (Hermitian)
   eigenproblems, standard and generalized with B positive definite: thick restart with locking, full or
   partial reorthogonalization, block steps, a search for missed copies of multiple eigenvalues, every
   eigenvalue in an interval (EPS_ALL) and the threshold test, on one GPU or one GPU a rank.

   Options Database Keys:
+  -eps_cudalanczos_variant <thick-restart> - thick-restart, or thesis (one pair, no restart)
.  -eps_cudalanczos_reorthog <full,partial,none> - the reorthogonalization (default: chosen by the solver)
.  -eps_cudalanczos_block_size <b> - vectors per Lanczos step (default: chosen by the solver)
.  -eps_cudalanczos_restart <r> - the fraction of the unconverged Ritz vectors kept at a restart
.  -eps_cudalanczos_ncv_max <n> - the largest basis thick restart may grow to
.  -eps_cudalanczos_filter_degree <d> - EPS_ALL: the polynomial filter's degree (0: chosen)
.  -eps_cudalanczos_verify <true> - search the complement of the converged vectors for missed copies
.  -eps_cudalanczos_backend <auto,host,cuda> - where the vectors live
.  -eps_cudalanczos_kernels <default,custom,vendor> - the GPU kernels
.  -eps_cudalanczos_device <d> - the CUDA device (-1: the node-local rank modulo the device count)
-  -eps_cudalanczos_check_symmetry <false> - probe the operator's symmetry before the iteration

   Notes:
   Load it into an unmodified program with -dll_append /path/to/libslepccudalanczos.so, or link it and
   call EPSCUDALanczosRegister(). Without a GPU, or with -eps_cudalanczos_backend host, the same algorithm
   runs on the host through STApply. -eps_view says what each choice was and why.

   EPSGetConverged() gives at most nev pairs (or the initial space's size) for a solve for nev pairs: the
   best ones, where a block converged more; -eps_view says how many did. An interval (EPS_ALL) and the
   threshold test return every pair they found.

   Level: beginner

.seealso: EPSCreate(), EPSSetType(), EPSType, EPSCUDALanczosRegister(), EPSCUDALanczosSetVariant(), EPSCUDALanczosSetReorthog(),
          EPSCUDALanczosSetBlockSize(), EPSCUDALanczosSetBackend(), EPSKRYLOVSCHUR, EPSLANCZOS
M*/
extern "C" PetscErrorCode EPSCreate_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = nullptr;

  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosStartWarmUp("by the first EPSCreate_CUDALanczos"));
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
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetFilterDegree_C", EPSCUDALanczosSetFilterDegree_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetFilterDegree_C", EPSCUDALanczosGetFilterDegree_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetBlockSize_C", EPSCUDALanczosSetBlockSize_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBlockSize_C", EPSCUDALanczosGetBlockSize_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosSetRestart_C", EPSCUDALanczosSetRestart_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetRestart_C", EPSCUDALanczosGetRestart_CUDALanczos));
  PetscCall(PetscObjectComposeFunction((PetscObject)eps, "EPSCUDALanczosGetBackendInUse_C", EPSCUDALanczosGetBackendInUse_CUDALanczos));
  PetscFunctionReturn(0);
}
