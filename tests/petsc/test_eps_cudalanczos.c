/*
   The plugin through PETSc/SLEPc, as a user meets it: every case solves with EPSCUDALANCZOS and checks the
   eigenvalues against SLEPc's krylovschur (or known ones), the true residual ||Ax - lambda x||/|lambda| of
   every returned pair, and that bad input is refused with a PETSc error that leaves the EPS usable.
   Run serially and under mpiexec (tests/petsc/CMakeLists.txt): the row layout is deliberately uneven.

   Prints one "ok N - name" / "not ok N - name" line per check and exits non-zero on any failure.
*/
#include "test_support.h"

typedef enum { LAPLACIAN_1D, SPIKED_LAPLACIAN, DIAGONAL, DIAGONAL_TOP4, DENSE_RANDOM, DENSE_UNIFORM, IDENTITY, ZERO, RANK_ONE, NEG_DEFINITE, NONSYMMETRIC } Kind;

/* Builds test matrices; dense ones are MATDENSE, the others AIJ. Entries are a function of (i,j) only,
   so the matrix is the same for any number of ranks. */
static PetscErrorCode BuildMatrix(Kind kind, PetscInt n, Mat *A)
{
  PetscInt  nloc, rstart, rend, i, j;
  PetscBool dense = (kind == DENSE_RANDOM || kind == DENSE_UNIFORM || kind == RANK_ONE || kind == NONSYMMETRIC) ? PETSC_TRUE : PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, nloc, nloc, n, n));
  PetscCall(MatSetType(*A, dense ? MATDENSE : MATAIJ));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    switch (kind) {
    case LAPLACIAN_1D:
    case SPIKED_LAPLACIAN: /* plus 100 at (0,0): one eigenvalue near 102, the others in (0, 4) */
      if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
      if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, i, i, (kind == SPIKED_LAPLACIAN && i == 0) ? 102.0 : 2.0, INSERT_VALUES));
      break;
    case DIAGONAL: /* eigenvalues 1..n/2, each twice: multiplicity 2 */
      PetscCall(MatSetValue(*A, i, i, (PetscScalar)(i / 2 + 1), INSERT_VALUES));
      break;
    case DIAGONAL_TOP4: /* eigenvalues 1..n-4 once and n four times */
      PetscCall(MatSetValue(*A, i, i, i < n - 4 ? (PetscScalar)(i + 1) : (PetscScalar)n, INSERT_VALUES));
      break;
    case IDENTITY: PetscCall(MatSetValue(*A, i, i, 1.0, INSERT_VALUES)); break;
    case ZERO: PetscCall(MatSetValue(*A, i, i, 0.0, INSERT_VALUES)); break;
    case NEG_DEFINITE: PetscCall(MatSetValue(*A, i, i, -1.0 - (PetscReal)i / n, INSERT_VALUES)); break;
    default:
      for (j = 0; j < n; ++j) {
        PetscInt    lo = PetscMin(i, j), hi = PetscMax(i, j);
        PetscReal   h  = (PetscReal)((lo * 7919 + hi * 104729 + 13) % 1000003) / 1000003.0; /* symmetric in (i,j) */
        PetscScalar v;
        if (kind == DENSE_RANDOM) v = 2 * h - 1;
        else if (kind == DENSE_UNIFORM) v = h;
        else if (kind == RANK_ONE) v = (PetscReal)(i + 1) * (PetscReal)(j + 1) / (PetscReal)(n * n);
        else v = (i < j) ? h : 0.5 * h; /* NONSYMMETRIC */
        PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Solves with `type` and the given options prefix-free settings; returns nconv and the first k eigenvalues. */
typedef struct {
  EPSType  type;
  PetscInt nev, ncv;
  EPSWhich which;
  PetscReal target, shift, tol;
  EPSConv  conv;
  EPSCUDALanczosVariant variant;
  Vec      initial;
  PetscInt block; /* EPSCUDALanczosSetBlockSize, 0: not called */
  EPSCUDALanczosReorthog reorthog; /* EPSCUDALanczosSetReorthog, called when set_reorthog */
  PetscBool set_reorthog;           /* PETSC_FALSE: the solver's choice (partial for these STSHIFT solves) */
} Solve;

static PetscErrorCode RunSolve(Mat A, const Solve *s, PetscInt *nconv, PetscReal *eig, PetscReal *worst_residual, PetscInt *its)
{
  EPS       eps;
  ST        st;
  PetscInt  i;
  PetscReal err;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, s->type, &eps));
  PetscCall(EPSSetDimensions(eps, s->nev, s->ncv ? s->ncv : PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, s->which));
  PetscCall(EPSSetTolerances(eps, s->tol ? s->tol : 1e-10, 5000));
  if (s->which == EPS_TARGET_MAGNITUDE || s->which == EPS_TARGET_REAL) PetscCall(EPSSetTarget(eps, s->target));
  if (s->conv) PetscCall(EPSSetConvergenceTest(eps, s->conv));
  PetscCall(EPSGetST(eps, &st));
  PetscCall(STSetType(st, STSHIFT));
  if (s->shift != 0) PetscCall(STSetShift(st, s->shift));
  if (s->initial) PetscCall(EPSSetInitialSpace(eps, 1, (Vec *)&s->initial));
  PetscCall(EPSSetFromOptions(eps));
  if (!strcmp(s->type, EPSCUDALANCZOS)) PetscCall(EPSCUDALanczosSetVariant(eps, s->variant));
  if (!strcmp(s->type, EPSCUDALANCZOS) && s->block) PetscCall(EPSCUDALanczosSetBlockSize(eps, s->block));
  if (!strcmp(s->type, EPSCUDALANCZOS) && s->set_reorthog) PetscCall(EPSCUDALanczosSetReorthog(eps, s->reorthog));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, nconv));
  PetscCall(EPSGetIterationNumber(eps, its));
  *worst_residual = 0;
  for (i = 0; i < PetscMin(*nconv, s->nev); ++i) {
    PetscScalar kr;
    PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
    eig[i] = PetscRealPart(kr);
    /* the true residual, recomputed from the returned vector: relative to |lambda| unless lambda == 0 */
    PetscCall(EPSComputeError(eps, i, PetscAbsReal(eig[i]) > 0 ? EPS_ERROR_RELATIVE : EPS_ERROR_ABSOLUTE, &err));
    *worst_residual = PetscMax(*worst_residual, err);
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* Our solver against krylovschur on the same problem. */
/* -case_stride K -case_offset O: Compare runs the cases numbered O, O + K, ... only. The 3- and 4-rank
   runs take a third each (tests/petsc/CMakeLists.txt): their reductions are what a loaded machine slows
   the most, and 1 and 2 ranks run every case. */
static PetscInt case_stride = 1, case_offset = 0, case_number = 0;

static PetscErrorCode Compare(const char *name, Kind kind, PetscInt n, Solve s)
{
  Mat       A;
  PetscInt  i, nref, nours, its;
  PetscReal ref[64], ours[64], res, resref, diff = 0, scale = 0;
  char      detail[256];

  PetscFunctionBeginUser;
  if (case_number++ % case_stride != case_offset) PetscFunctionReturn(0);
  PetscCall(BuildMatrix(kind, n, &A));
  if (kind == DIAGONAL && s.which == EPS_LARGEST_REAL) {
    /* Known exactly: n/2, n/2, n/2-1, n/2-1, ... Single-vector Krylov-Schur may miss a copy (it relies on
       rounding to bring the second direction in), so it is no reference here. */
    nref = s.nev;
    for (i = 0; i < s.nev; ++i) ref[i] = (PetscReal)(n / 2 - i / 2);
  } else {
    s.type = EPSKRYLOVSCHUR;
    PetscCall(RunSolve(A, &s, &nref, ref, &resref, &its));
  }
  s.type = EPSCUDALANCZOS;
  PetscCall(RunSolve(A, &s, &nours, ours, &res, &its));
  for (i = 0; i < PetscMin(s.nev, PetscMin(nref, nours)); ++i) {
    diff  = PetscMax(diff, PetscAbsReal(ours[i] - ref[i]));
    scale = PetscMax(scale, PetscAbsReal(ref[i]));
  }
  /* Eigenvalues converge quadratically in the residual: both solvers are far below tol*|lambda|. */
  const PetscReal tol = s.tol ? s.tol : 1e-10;
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT " (ref %" PetscInt_FMT "), max|diff| %.2e, true residual %.2e, its %" PetscInt_FMT,
                          nours, nref, (double)diff, (double)res, its));
  PetscCall(Check((PetscBool)(nours >= s.nev && nref >= s.nev && diff <= 10 * tol * PetscMax(scale, 1) && res <= 10 * tol), name, detail));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* A call that must fail with a PETSc error; the EPS must then still be destroyable. */
static PetscErrorCode ExpectError(const char *name, Kind kind, PetscInt n, EPSProblemType type, PetscInt nev, PetscInt ncv, EPSWhich which,
                                  EPSCUDALanczosVariant variant, const char *backend)
{
  Mat            A;
  EPS            eps;

  PetscFunctionBeginUser;
  PetscCall(BuildMatrix(kind, n, &A));
  PetscCall(CreateEPS(A, type, EPSCUDALANCZOS, &eps));
  PetscCall(EPSCUDALanczosSetVariant(eps, variant));
  if (backend) PetscCall(EPSCUDALanczosSetBackend(eps, !strcmp(backend, "cuda") ? EPS_CUDALANCZOS_BACKEND_CUDA : EPS_CUDALANCZOS_BACKEND_HOST));
  if (kind == NONSYMMETRIC) PetscCall(EPSCUDALanczosSetCheckSymmetry(eps, PETSC_TRUE));
  PetscCall(EPSSetDimensions(eps, nev, ncv, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, which));
  PetscCall(CheckSolveRefused(eps, name));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool has_cuda_device = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "EPSCUDALANCZOS through PETSc"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-case_stride", &case_stride, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-case_offset", &case_offset, NULL));
  PetscCheck(case_stride >= 1 && case_offset >= 0 && case_offset < case_stride, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-case_offset must be in [0, -case_stride)");
  /* Which backend does "auto" pick here? On a GPU host the cases below run on the device. */
  {
    Mat         A;
    EPS         eps;
    const char *used;
    PetscCall(BuildMatrix(LAPLACIAN_1D, 10, &A));
    PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
    PetscCall(EPSCUDALanczosSetBackend(eps, EPS_CUDALANCZOS_BACKEND_AUTO));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
    has_cuda_device = strcmp(used, "cuda") == 0 ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(EPSSetFromOptions(eps));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# backend for these cases: %s (a GPU is %s)\n", used, has_cuda_device ? "present" : "absent"));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }

  Solve base = {EPSKRYLOVSCHUR, 1, 0, EPS_LARGEST_REAL, 0, 0, 0, (EPSConv)0, EPS_CUDALANCZOS_THICK_RESTART, NULL, 0};
  Solve s;

  s = base, s.nev = 5;
  PetscCall(Compare("1-D Laplacian n=200, 5 largest", LAPLACIAN_1D, 200, s));
  s = base, s.nev = 4, s.which = EPS_SMALLEST_REAL, s.ncv = 40;
  PetscCall(Compare("1-D Laplacian n=150, 4 smallest", LAPLACIAN_1D, 150, s));
  s = base, s.nev = 6, s.which = EPS_LARGEST_MAGNITUDE;
  PetscCall(Compare("dense random n=300, 6 largest magnitude", DENSE_RANDOM, 300, s));
  s = base, s.nev = 3, s.which = EPS_SMALLEST_MAGNITUDE, s.ncv = 60;
  PetscCall(Compare("dense random n=120, 3 smallest magnitude", DENSE_RANDOM, 120, s));
  s = base, s.nev = 6, s.which = EPS_LARGEST_REAL;
  PetscCall(Compare("diagonal with double eigenvalues n=100, 6 largest (multiplicity 2)", DIAGONAL, 100, s));
  s = base, s.nev = 1, s.variant = EPS_CUDALANCZOS_THESIS, s.tol = 1e-8;
  PetscCall(Compare("thesis variant, dense uniform [0,1] n=400, largest", DENSE_UNIFORM, 400, s));
  s = base, s.nev = 3, s.shift = 1.5;
  PetscCall(Compare("STSHIFT shift 1.5, 1-D Laplacian n=100, 3 largest", LAPLACIAN_1D, 100, s));
  s = base, s.nev = 2, s.which = EPS_TARGET_MAGNITUDE, s.target = 2.05, s.ncv = 60;
  PetscCall(Compare("target magnitude 2.05, 1-D Laplacian n=60", LAPLACIAN_1D, 60, s));
  s = base, s.nev = 3, s.conv = EPS_CONV_ABS, s.tol = 1e-9;
  PetscCall(Compare("absolute convergence test", LAPLACIAN_1D, 100, s));
  s = base, s.nev = 3, s.conv = EPS_CONV_NORM, s.tol = 1e-9;
  PetscCall(Compare("norm convergence test", LAPLACIAN_1D, 100, s));
  s = base, s.nev = 3, s.which = EPS_LARGEST_MAGNITUDE;
  PetscCall(Compare("negative definite diagonal n=50, 3 largest magnitude", NEG_DEFINITE, 50, s));
  s = base, s.nev = 1;
  PetscCall(Compare("rank-1 dense n=40", RANK_ONE, 40, s));
  s = base, s.nev = 2, s.ncv = 2;
  PetscCall(Compare("n=2, nev=ncv=n", LAPLACIAN_1D, 2, s));
  s = base, s.nev = 1;
  PetscCall(Compare("n=1", LAPLACIAN_1D, 1, s));
  s = base, s.nev = 5, s.ncv = 30;
  PetscCall(Compare("n < default ncv (n=12, nev 5)", LAPLACIAN_1D, 12, s));

  /* The cases above run the solver's choice of reorthogonalization: partial for these single-vector
     STSHIFT solves of sparse matrices (on one GPU, the device's expand_partial chunks), full for dense ones. Full, set by the user, gives the same
     answers; the smallest values of the Laplacian are too small against ||A|| for a semi-orthogonal basis
     at tol 1e-10, so partial set by the user switches that solve to full reorthogonalization. */
  s = base, s.nev = 5, s.set_reorthog = PETSC_TRUE, s.reorthog = EPS_CUDALANCZOS_REORTHOG_FULL;
  PetscCall(Compare("full reorthogonalization: 1-D Laplacian n=400, 5 largest", LAPLACIAN_1D, 400, s));
  s = base, s.nev = 6, s.set_reorthog = PETSC_TRUE, s.reorthog = EPS_CUDALANCZOS_REORTHOG_FULL;
  PetscCall(Compare("full reorthogonalization: diagonal with double eigenvalues n=100, 6 largest", DIAGONAL, 100, s));
  s = base, s.nev = 6, s.which = EPS_LARGEST_MAGNITUDE, s.set_reorthog = PETSC_TRUE, s.reorthog = EPS_CUDALANCZOS_REORTHOG_FULL;
  PetscCall(Compare("full reorthogonalization: dense random n=300, 6 largest magnitude", DENSE_RANDOM, 300, s));
  s = base, s.nev = 4, s.which = EPS_SMALLEST_REAL, s.ncv = 40, s.set_reorthog = PETSC_TRUE, s.reorthog = EPS_CUDALANCZOS_REORTHOG_PARTIAL;
  PetscCall(Compare("partial reorthogonalization: 1-D Laplacian n=150, 4 smallest (switches to full)", LAPLACIAN_1D, 150, s));

  /* The solver's choice, as EPSCUDALanczosGetReorthog and -eps_view report it after set-up: partial for
     single-vector steps with STSHIFT on a sparse matrix; full with block steps, with STSINVERT and on a dense
     matrix; none in the thesis variant; and the user's value, without "chosen", when set. */
  {
    static const struct {
      const char            *name;
      int                    mode; /* 0 default, 1 block 2, 2 sinvert, 3 thesis, 4 user full, 5 default on a dense matrix */
      EPSCUDALanczosReorthog expect;
      const char            *line; /* the view line from "reorthogonalization:" on: its start, or all of it when exact */
      PetscBool              exact;
    } cases[] = {
      {"reorthogonalization left to the solver: partial for single-vector steps with STSHIFT", 0, EPS_CUDALANCZOS_REORTHOG_PARTIAL,
       "reorthogonalization: partial (chosen: single-vector steps", PETSC_FALSE},
      {"reorthogonalization left to the solver: full with block steps", 1, EPS_CUDALANCZOS_REORTHOG_FULL, "reorthogonalization: full (chosen: block steps; partial on request)", PETSC_TRUE},
      {"reorthogonalization left to the solver: full with STSINVERT", 2, EPS_CUDALANCZOS_REORTHOG_FULL, "reorthogonalization: full (chosen: an ST other than STSHIFT)", PETSC_TRUE},
      {"reorthogonalization of the thesis variant: none", 3, EPS_CUDALANCZOS_REORTHOG_NONE, "reorthogonalization: none", PETSC_TRUE},
      {"reorthogonalization set to full by the user: full, not 'chosen'", 4, EPS_CUDALANCZOS_REORTHOG_FULL, "reorthogonalization: full", PETSC_TRUE},
      {"reorthogonalization left to the solver: full for a dense matrix", 5, EPS_CUDALANCZOS_REORTHOG_FULL,
       "reorthogonalization: full (chosen: a dense matrix, whose product costs more than a full pass)", PETSC_TRUE},
    };
    Mat A, D;
    PetscCall(BuildMatrix(LAPLACIAN_1D, 200, &A));
    PetscCall(BuildMatrix(DENSE_RANDOM, 200, &D));
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
      EPS                    eps;
      EPSCUDALanczosReorthog after;
      PetscBool              found, match;
      PetscInt               nconv;
      char                   text[256], detail[384];
      PetscCall(CreateEPS(cases[c].mode == 5 ? D : A, EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(EPSSetDimensions(eps, cases[c].mode == 3 ? 1 : 3, PETSC_DETERMINE, PETSC_DETERMINE));
      if (cases[c].mode == 1) PetscCall(EPSCUDALanczosSetBlockSize(eps, 2));
      if (cases[c].mode == 2) { /* CG + Jacobi: runs on any number of ranks */
        ST  st;
        KSP ksp;
        PC  pc;
        PetscCall(EPSGetST(eps, &st));
        PetscCall(STSetType(st, STSINVERT));
        PetscCall(STGetKSP(st, &ksp));
        PetscCall(KSPSetType(ksp, KSPCG));
        PetscCall(KSPGetPC(ksp, &pc));
        PetscCall(PCSetType(pc, PCJACOBI));
        PetscCall(KSPSetTolerances(ksp, 1e-13, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
        PetscCall(EPSSetTarget(eps, 0.0));
        PetscCall(EPSSetWhichEigenpairs(eps, EPS_TARGET_MAGNITUDE));
      }
      if (cases[c].mode == 3) PetscCall(EPSCUDALanczosSetVariant(eps, EPS_CUDALANCZOS_THESIS));
      if (cases[c].mode == 4) PetscCall(EPSCUDALanczosSetReorthog(eps, EPS_CUDALANCZOS_REORTHOG_FULL));
      PetscCall(EPSSolve(eps));
      PetscCall(EPSGetConverged(eps, &nconv));
      PetscCall(EPSCUDALanczosGetReorthog(eps, &after));
      PetscCall(ViewLine(eps, "reorthogonalization:", text, sizeof(text), &found));
      match = (PetscBool)(found && (cases[c].exact ? !strcmp(text, cases[c].line) : strstr(text, cases[c].line) == text));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "EPSCUDALanczosGetReorthog %s, nconv %" PetscInt_FMT ", view: '%s'", EPSCUDALanczosReorthogs[after], nconv, text));
      /* the thesis variant's convergence on this slow end is not the point here */
      PetscCall(Check((PetscBool)(after == cases[c].expect && match && (nconv >= 3 || cases[c].mode == 3)), cases[c].name, detail));
      PetscCall(EPSDestroy(&eps));
    }
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&D));
  }

  /* Block steps (EPSCUDALanczosSetBlockSize): the same answers. */
  s = base, s.nev = 6, s.which = EPS_LARGEST_REAL, s.block = 4;
  PetscCall(Compare("block size 4: diagonal with double eigenvalues n=100, 6 largest", DIAGONAL, 100, s));
  s = base, s.nev = 5, s.which = EPS_SMALLEST_REAL, s.block = 3, s.ncv = 40;
  PetscCall(Compare("block size 3, ncv 40: 1-D Laplacian n=150, 5 smallest", LAPLACIAN_1D, 150, s));
  s = base, s.nev = 4, s.which = EPS_LARGEST_MAGNITUDE, s.block = 2;
  PetscCall(Compare("block size 2: dense random n=300, 4 largest magnitude", DENSE_RANDOM, 300, s));
  s = base, s.nev = 3, s.block = 8;
  PetscCall(Compare("block size 8 on n=20 (too small: single-vector steps)", LAPLACIAN_1D, 20, s));
  s = base, s.nev = 6, s.which = EPS_LARGEST_REAL, s.block = 2, s.set_reorthog = PETSC_TRUE, s.reorthog = EPS_CUDALANCZOS_REORTHOG_PARTIAL;
  PetscCall(Compare("block size 2, partial reorthogonalization: diagonal with double eigenvalues n=100, 6 largest", DIAGONAL, 100, s));
  s = base, s.nev = 4, s.which = EPS_LARGEST_REAL, s.block = 2, s.ncv = 60, s.set_reorthog = PETSC_TRUE, s.reorthog = EPS_CUDALANCZOS_REORTHOG_PARTIAL;
  PetscCall(Compare("block size 2, partial reorthogonalization, ncv 60: 1-D Laplacian n=400, 4 largest", LAPLACIAN_1D, 400, s));
  {
    Mat       A;
    EPS       eps;
    PetscBool found, fallback;
    PetscInt  bs, ncv;
    char      detail[160];
    PetscCall(BuildMatrix(LAPLACIAN_1D, 200, &A));
    for (int small = 0; small <= 1; ++small) {
      PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(EPSSetDimensions(eps, 4, small ? 20 : PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSCUDALanczosSetBlockSize(eps, small ? 16 : 4));
      PetscCall(EPSCUDALanczosGetBlockSize(eps, &bs));
      PetscCall(EPSSolve(eps));
      PetscCall(EPSGetDimensions(eps, NULL, &ncv, NULL));
      PetscCall(ViewLine(eps, small ? "block size: 16 vectors per step" : "block size: 4 vectors per step", NULL, 0, &found));
      PetscCall(ViewLine(eps, "single-vector steps", NULL, 0, &fallback));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "block size %" PetscInt_FMT ", ncv %" PetscInt_FMT ", view line %s, fallback line %s", bs, ncv,
                              found ? "printed" : "absent", fallback ? "printed" : "absent"));
      if (!small)
        PetscCall(Check((PetscBool)(bs == 4 && ncv == 4 + 16 * 4 && found && !fallback), "block size 4: ncv nev + 16 blocks, -eps_view shows the block size", detail));
      else
        PetscCall(Check((PetscBool)(bs == 16 && ncv == 20 && found && !fallback), "block size 16 with ncv 20 = nev + block size is accepted", detail));
      PetscCall(EPSDestroy(&eps));
    }
    /* Refused: block steps with the thesis variant, without reorthogonalization, with ncv < nev + block
       size, and a block size below 1. */
    for (int bad = 0; bad < 4; ++bad) {
      static const char *names[] = {"block size 2 with the thesis variant is refused", "block size 2 without reorthogonalization is refused",
                                    "block size 4 with ncv < nev + 4 is refused", "block size 0 is refused"};
      PetscErrorCode      ierr;
      PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
      if (bad == 0) PetscCall(EPSCUDALanczosSetVariant(eps, EPS_CUDALANCZOS_THESIS));
      if (bad == 1) PetscCall(EPSCUDALanczosSetReorthog(eps, EPS_CUDALANCZOS_REORTHOG_NONE));
      if (bad == 2) PetscCall(EPSSetDimensions(eps, 4, 6, PETSC_DETERMINE));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = EPSCUDALanczosSetBlockSize(eps, bad == 3 ? 0 : bad == 2 ? 4 : 2);
      if (!ierr) ierr = EPSSolve(eps);
      PetscCall(PetscPopErrorHandler());
      PetscCall(Check((PetscBool)(ierr != 0), names[bad], ierr ? "refused with a PETSc error" : "was accepted"));
      PetscCall(EPSDestroy(&eps));
    }
    PetscCall(MatDestroy(&A));
  }
  {
    /* The solver's own block size for a dense matrix of at least 8192 rows solved on one GPU (-eps_view
       says it chose it): 4 from nev 10, 2 below; else 1. Without a GPU, or on several ranks, a dense 300
       must get 1; with one, the dense 8192 gets 4 at nev 10 and 2 at nev 1, and agrees with the same
       solve in single-vector steps. */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    const PetscBool gpu = (PetscBool)(has_cuda_device && size == 1);
    const PetscInt  n   = gpu ? 8192 : 300;
    Mat             A;
    PetscCall(BuildMatrix(DENSE_UNIFORM, n, &A));
    for (int nevcase = 0; nevcase < 2; ++nevcase) {
      const PetscInt nev = nevcase == 0 ? 10 : 1, expect = nev >= 10 ? 4 : 2;
      PetscReal      eig[2][10], res[2] = {0, 0};
      PetscInt       bs[2] = {0, 0}, nconv[2] = {0, 0};
      PetscBool      chosen = PETSC_FALSE;
      char           detail[256], name[160];
      for (int forced = 0; forced <= (gpu ? 1 : 0); ++forced) {
        EPS eps;
        PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
        PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
        PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
        PetscCall(EPSSetTolerances(eps, 1e-10, 5000));
        if (forced) PetscCall(EPSCUDALanczosSetBlockSize(eps, 1));
        PetscCall(EPSSolve(eps));
        PetscCall(EPSCUDALanczosGetBlockSize(eps, &bs[forced]));
        if (!forced) PetscCall(ViewLine(eps, "vectors per step (chosen", NULL, 0, &chosen));
        PetscCall(EPSGetConverged(eps, &nconv[forced]));
        for (PetscInt i = 0; i < PetscMin(nconv[forced], nev); ++i) {
          PetscScalar k;
          PetscReal   err;
          PetscCall(EPSGetEigenpair(eps, i, &k, NULL, NULL, NULL));
          eig[forced][i] = PetscRealPart(k);
          PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
          res[forced] = PetscMax(res[forced], err);
        }
        PetscCall(EPSDestroy(&eps));
      }
      if (!gpu) {
        PetscCall(PetscSNPrintf(detail, sizeof(detail), "n %" PetscInt_FMT ", nev %" PetscInt_FMT ", block size %" PetscInt_FMT ", chosen line %s, nconv %" PetscInt_FMT ", residual %.2e",
                                n, nev, bs[0], chosen ? "printed" : "absent", nconv[0], (double)res[0]));
        PetscCall(PetscSNPrintf(name, sizeof(name), "left to the solver, nev %" PetscInt_FMT ": block size 1 below 8192 rows or off the GPU", nev));
        PetscCall(Check((PetscBool)(bs[0] == 1 && !chosen && nconv[0] >= nev && res[0] < 1e-8), name, detail));
      } else {
        PetscReal diff = 0;
        for (PetscInt i = 0; i < nev; ++i) diff = PetscMax(diff, PetscAbsReal(eig[0][i] - eig[1][i]) / PetscAbsReal(eig[1][i]));
        PetscCall(PetscSNPrintf(detail, sizeof(detail), "block size %" PetscInt_FMT " (forced %" PetscInt_FMT "), chosen line %s, nconv %" PetscInt_FMT "/%" PetscInt_FMT ", residuals %.2e/%.2e, max rel diff %.2e",
                                bs[0], bs[1], chosen ? "printed" : "absent", nconv[0], nconv[1], (double)res[0], (double)res[1], (double)diff));
        PetscCall(PetscSNPrintf(name, sizeof(name), "left to the solver: block size %" PetscInt_FMT " for a dense 8192 on the GPU at nev %" PetscInt_FMT ", same eigenvalues as single-vector steps", expect, nev));
        PetscCall(Check((PetscBool)(bs[0] == expect && bs[1] == 1 && chosen && nconv[0] >= nev && nconv[1] >= nev && res[0] < 1e-8 && res[1] < 1e-8 && diff < 1e-9), name, detail));
      }
    }
    PetscCall(MatDestroy(&A));
  }

  {
    /* The solver's own block size for a sparse (AIJ) matrix of at least 100000 rows solved on one GPU:
       2 with partial reorthogonalization up to nev 10, the -eps_view lines saying so; 1 from nev 11, below
       100000 rows, off the GPU and on several ranks. The diagonal matrix holds every value twice: the
       block returns both copies of the 2 largest, as single-vector steps with their verification do. */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    const PetscBool gpu = (PetscBool)(has_cuda_device && size == 1);
    const PetscInt  n   = gpu ? 100000 : 300, top = n / 2;
    Mat             A;
    PetscCall(BuildMatrix(DIAGONAL, n, &A));
    for (int nevcase = 0; nevcase < 2; ++nevcase) {
      const PetscInt nev = nevcase == 0 ? 4 : 11, expect = gpu && nev <= 10 ? 2 : 1;
      PetscInt       bs = 0, nconv = 0;
      PetscReal      worst = 0, res = 0;
      PetscBool      chosen = PETSC_FALSE, partial = PETSC_FALSE;
      EPSCUDALanczosReorthog reorthog;
      char           detail[256], name[160];
      EPS            eps;
      PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
      PetscCall(EPSSetTolerances(eps, 1e-10, 100000));
      PetscCall(EPSSolve(eps));
      PetscCall(EPSCUDALanczosGetBlockSize(eps, &bs));
      PetscCall(EPSCUDALanczosGetReorthog(eps, &reorthog));
      PetscCall(ViewLine(eps, "block size: 2 vectors per step (chosen: a sparse matrix", NULL, 0, &chosen));
      PetscCall(ViewLine(eps, "reorthogonalization: partial (chosen: blocks of 2 on a sparse matrix", NULL, 0, &partial));
      PetscCall(EPSGetConverged(eps, &nconv));
      for (PetscInt i = 0; i < PetscMin(nconv, nev); ++i) {
        PetscScalar k;
        PetscReal   err;
        PetscCall(EPSGetEigenpair(eps, i, &k, NULL, NULL, NULL));
        worst = PetscMax(worst, PetscAbsReal(PetscRealPart(k) - (PetscReal)(top - i / 2)) / top); /* top, top, top - 1, top - 1, ... */
        PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
        res = PetscMax(res, err);
      }
      PetscCall(EPSDestroy(&eps));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "n %" PetscInt_FMT ", block size %" PetscInt_FMT ", reorthogonalization %s, chosen lines %s/%s, nconv %" PetscInt_FMT ", max rel. error %.2e, residual %.2e",
                              n, bs, EPSCUDALanczosReorthogs[reorthog], chosen ? "printed" : "absent", partial ? "printed" : "absent", nconv, (double)worst, (double)res));
      PetscCall(PetscSNPrintf(name, sizeof(name), "left to the solver, a sparse matrix, nev %" PetscInt_FMT ": block size %" PetscInt_FMT "%s, every copy returned", nev, expect,
                              expect == 2 ? " with partial reorthogonalization on the GPU" : ""));
      PetscCall(Check((PetscBool)(bs == expect && (expect == 2) == (chosen && partial) && (expect == 1 || reorthog == EPS_CUDALANCZOS_REORTHOG_PARTIAL) && nconv >= nev && worst < 1e-9 && res < 1e-8),
                      name, detail));
    }
    PetscCall(MatDestroy(&A));
  }

  {
    /* A block converges pairs past nev: the solve returns the nev best, in the BV's nev columns (no
       BVResize, which on a host BV of 10^6 rows cost more than writing the vectors), and -eps_view says
       how many converged. nev 3 with blocks of 4 on a diagonal whose largest value n has 4 copies: the
       4 directions of its eigenspace in the block space converge together, in real and complex builds.
       On one rank. */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size == 1) {
      const PetscInt n = 300, nev = 3;
      Mat            A;
      EPS            eps;
      BV             V;
      PetscInt       nconv = 0, cols = 0, converged = 0;
      PetscReal      worst = 0;
      PetscBool      found;
      char           line[256] = "", detail[320];
      PetscCall(BuildMatrix(DIAGONAL_TOP4, n, &A));
      PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
      PetscCall(EPSCUDALanczosSetBlockSize(eps, 4));
      PetscCall(EPSSetTolerances(eps, 1e-10, 100000));
      PetscCall(EPSSolve(eps));
      PetscCall(EPSGetConverged(eps, &nconv));
      PetscCall(EPSGetBV(eps, &V));
      PetscCall(BVGetSizes(V, NULL, NULL, &cols));
      PetscCall(ViewLine(eps, "returned the 3 best of ", line, sizeof(line), &found));
      if (found && sscanf(line, "returned the 3 best of %" PetscInt_FMT, &converged) != 1) converged = 0;
      for (PetscInt i = 0; i < nconv; ++i) {
        PetscScalar k;
        PetscCall(EPSGetEigenpair(eps, i, &k, NULL, NULL, NULL));
        worst = PetscMax(worst, PetscAbsReal(PetscRealPart(k) - (PetscReal)n) / n);
      }
      PetscCall(EPSDestroy(&eps));
      PetscCall(MatDestroy(&A));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", BV columns %" PetscInt_FMT ", -eps_view line '%s', max rel. error %.2e", nconv, cols,
                              found ? line : "absent", (double)worst));
      PetscCall(Check((PetscBool)(nconv == nev && cols == nev && converged > nev && worst < 1e-9), "a block's pairs past nev: the nev best returned in nev BV columns", detail));
    }
  }

  /* Identity and zero: every vector is an eigenvector; beta = 0 at the first step (breakdown). */
  {
    Mat       A;
    PetscInt  nconv, its;
    PetscReal eig[8], res;
    char      detail[128];
    s = base, s.nev = 3, s.type = EPSCUDALANCZOS;
    PetscCall(BuildMatrix(IDENTITY, 50, &A));
    PetscCall(RunSolve(A, &s, &nconv, eig, &res, &its));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", eig %g %g %g, residual %.1e", nconv, (double)eig[0], (double)eig[1], (double)eig[2], (double)res));
    PetscCall(Check((PetscBool)(nconv >= 3 && PetscAbsReal(eig[0] - 1) < 1e-12 && PetscAbsReal(eig[2] - 1) < 1e-12 && res < 1e-10), "identity n=50, 3 eigenpairs", detail));
    PetscCall(MatDestroy(&A));
    PetscCall(BuildMatrix(ZERO, 50, &A));
    PetscCall(RunSolve(A, &s, &nconv, eig, &res, &its));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", eig %g, residual %.1e", nconv, (double)eig[0], (double)res));
    PetscCall(Check((PetscBool)(nconv >= 3 && eig[0] == 0 && res < 1e-12), "zero matrix n=50, 3 eigenpairs", detail));
    PetscCall(MatDestroy(&A));
  }

  /* The caller's initial vector: an exact eigenvector of the 1-D Laplacian converges at once. */
  {
    Mat       A;
    Vec       v;
    PetscInt  i, rstart, rend, nconv, its, n = 80;
    PetscReal eig[2], res;
    char      detail[128];
    PetscCall(BuildMatrix(LAPLACIAN_1D, n, &A));
    PetscCall(MatCreateVecs(A, &v, NULL));
    PetscCall(VecGetOwnershipRange(v, &rstart, &rend));
    for (i = rstart; i < rend; ++i) PetscCall(VecSetValue(v, i, PetscSinReal(PETSC_PI * n * (i + 1) / (n + 1)), INSERT_VALUES));
    PetscCall(VecAssemblyBegin(v));
    PetscCall(VecAssemblyEnd(v));
    s = base, s.type = EPSCUDALANCZOS, s.variant = EPS_CUDALANCZOS_THESIS, s.initial = v;
    PetscCall(RunSolve(A, &s, &nconv, eig, &res, &its));
    const PetscReal exact = 2 - 2 * PetscCosReal(PETSC_PI * n / (n + 1));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "its %" PetscInt_FMT ", eig %.15g (exact %.15g)", its, (double)eig[0], (double)exact));
    PetscCall(Check((PetscBool)(nconv == 1 && its == 1 && PetscAbsReal(eig[0] - exact) < 1e-12), "initial vector = eigenvector converges in one step", detail));
    PetscCall(VecDestroy(&v));
    PetscCall(MatDestroy(&A));
  }

  /* The verification round's certificate, as -eps_view reports it: one eigenvalue near 102 far above
     the rest, in (0, 4), so the first cycle of the round certifies that no copy of it was missed; with the
     verification off the line is not printed. The look-ahead's line comes with the verification (the
     looks it overlaps are the verification's); the host backend runs queued steps only when the driver
     collects them, so it never drops any. */
  for (int verify = 1; verify >= 0; --verify) {
    Mat         A;
    EPS         eps;
    PetscBool   found, ahead;
    PetscInt    nconv;
    char        detail[192], text[256];
    long        dropped = -1;
    const char *used;
    PetscCall(BuildMatrix(SPIKED_LAPLACIAN, 400, &A));
    PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
    PetscCall(EPSCUDALanczosSetVerify(eps, verify ? PETSC_TRUE : PETSC_FALSE));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(ViewLine(eps, "ended by the probabilistic certificate: 1", NULL, 0, &found));
    PetscCall(ViewLine(eps, "look-ahead: ", text, sizeof(text), &ahead));
    if (ahead && sscanf(text, "look-ahead: %ld steps", &dropped) != 1) dropped = -1;
    PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", certificate line %s, look-ahead line %s (%ld dropped, %s backend)", nconv,
                            found ? "printed" : "absent", ahead ? "printed" : "absent", dropped, used));
    if (verify)
      PetscCall(Check((PetscBool)(nconv >= 1 && found && ahead && dropped >= 0 && (strcmp(used, "host") || dropped == 0)),
                      "-eps_view: the verification of an isolated largest eigenvalue ends on its certificate; the look-ahead's dropped steps are shown", detail));
    else
      PetscCall(Check((PetscBool)(nconv >= 1 && !found && !ahead), "-eps_view: no certificate or look-ahead line with the verification off", detail));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }

  /* Partial reorthogonalization, as -eps_view reports it: the smallest values of a 1-D Laplacian at tol
     1e-10 are out of a semi-orthogonal basis's reach, and the view says the solve gave way to full; the
     largest are not, and it does not. */
  for (int smallest = 1; smallest >= 0; --smallest) {
    Mat       A;
    EPS       eps;
    PetscBool found, steps;
    PetscInt  nconv;
    char      detail[128];
    PetscCall(BuildMatrix(LAPLACIAN_1D, 150, &A));
    PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
    PetscCall(EPSSetDimensions(eps, 4, 40, PETSC_DETERMINE));
    PetscCall(EPSSetTolerances(eps, 1e-10, 5000));
    PetscCall(EPSSetWhichEigenpairs(eps, smallest ? EPS_SMALLEST_REAL : EPS_LARGEST_REAL));
    PetscCall(EPSCUDALanczosSetReorthog(eps, EPS_CUDALANCZOS_REORTHOG_PARTIAL));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(ViewLine(eps, "partial reorthogonalization gave way to full", NULL, 0, &found));
    PetscCall(ViewLine(eps, "steps redone after a full pass", NULL, 0, &steps));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", gave-way line %s, redone-steps line %s", nconv,
                            found ? "printed" : "absent", steps ? "printed" : "absent"));
    PetscCall(Check((PetscBool)(nconv >= 4 && steps && found == (smallest ? PETSC_TRUE : PETSC_FALSE)),
                    smallest ? "-eps_view: partial reorthogonalization says it gave way to full for small eigenvalues"
                             : "-eps_view: partial reorthogonalization keeps to itself for the largest eigenvalues",
                    detail));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }

  /* A deflation space (EPSSetDeflationSpace), SLEPc's way: the solve runs on its orthogonal complement.
     (a) Known eigenvectors: the diagonal matrix with eigenvalues 1..n/2 twice, the two copies of the
         largest deflated: the largest four left are n/2-1, n/2-1, n/2-2, n/2-2 (true residuals small).
     (b) A space that is no invariant subspace, three vectors of which the third is the sum of the first
         two (dropped): the eigenvalues of the projected problem, against krylovschur with the same space.
     In both, every returned vector is orthogonal to the space. */
  for (int kind = 0; kind < 2; ++kind) {
    const PetscInt n = kind == 0 ? 60 : 80, nd = kind == 0 ? 2 : 3, nev = 4;
    Mat         A;
    Vec         z[3];
    PetscReal   ref[4], ours[4], diff = 0, orth = 0, res = 0;
    PetscInt    nconv = 0, nref = 0;
    char        detail[256];
    const char *types[2] = {EPSKRYLOVSCHUR, EPSCUDALANCZOS};
    PetscCall(BuildMatrix(kind == 0 ? DIAGONAL : DENSE_RANDOM, n, &A));
    for (PetscInt k = 0; k < nd; ++k) {
      PetscInt lo, hi;
      PetscCall(MatCreateVecs(A, &z[k], NULL));
      PetscCall(VecGetOwnershipRange(z[k], &lo, &hi));
      for (PetscInt i = lo; i < hi; ++i) {
        PetscScalar v;
        if (kind == 0) v = (i == n - 1 - k) ? 1.0 : 0.0; /* e_{n-1}, e_{n-2}: eigenvalue n/2 twice */
        else if (k < 2) v = PetscSinReal((PetscReal)((k + 1) * (i + 1))) + 0.1 * k;
        else v = PetscSinReal((PetscReal)(i + 1)) + PetscSinReal((PetscReal)(2 * (i + 1))) + 0.1;
        PetscCall(VecSetValue(z[k], i, v, INSERT_VALUES));
      }
      PetscCall(VecAssemblyBegin(z[k]));
      PetscCall(VecAssemblyEnd(z[k]));
    }
    if (kind == 0)
      for (PetscInt i = 0; i < nev; ++i) ref[i] = (PetscReal)(n / 2 - 1 - i / 2);
    for (int t = kind == 0 ? 1 : 0; t < 2; ++t) {
      EPS       eps;
      PetscInt  got;
      PetscReal *out = t ? ours : ref;
      PetscCall(CreateEPS(A, EPS_HEP, types[t], &eps));
      PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
      PetscCall(EPSSetTolerances(eps, 1e-10, 5000));
      PetscCall(EPSSetDeflationSpace(eps, nd, z));
      PetscCall(EPSSolve(eps));
      PetscCall(EPSGetConverged(eps, &got));
      if (t) nconv = got;
      else nref = got;
      for (PetscInt i = 0; i < PetscMin(got, nev); ++i) {
        PetscScalar kr;
        Vec         x;
        PetscScalar dots[3];
        PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
        out[i] = PetscRealPart(kr);
        if (!t) continue;
        PetscCall(MatCreateVecs(A, &x, NULL));
        PetscCall(EPSGetEigenvector(eps, i, x, NULL));
        PetscCall(VecMDot(x, nd, z, dots));
        for (PetscInt k = 0; k < nd; ++k) {
          PetscReal zn;
          PetscCall(VecNorm(z[k], NORM_2, &zn));
          orth = PetscMax(orth, PetscAbsScalar(dots[k]) / zn);
        }
        if (kind == 0) {
          PetscReal err;
          PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
          res = PetscMax(res, err);
        }
        PetscCall(VecDestroy(&x));
      }
      PetscCall(EPSDestroy(&eps));
    }
    if (kind == 0) nref = nev;
    for (PetscInt i = 0; i < PetscMin(nev, PetscMin(nconv, nref)); ++i) diff = PetscMax(diff, PetscAbsReal(ours[i] - ref[i]) / PetscMax(PetscAbsReal(ref[i]), 1));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT " (ref %" PetscInt_FMT "), max rel. diff %.2e, max |z'x| %.2e, true residual %.2e",
                            nconv, nref, (double)diff, (double)orth, (double)res));
    PetscCall(Check((PetscBool)(nconv >= nev && nref >= nev && diff <= 1e-9 && orth <= 1e-10 && res <= 1e-9),
                    kind == 0 ? "deflation space: known eigenvectors (a double eigenvalue) are deflated"
                              : "deflation space: a general space, one vector dependent, gives krylovschur's projected problem",
                    detail));
    for (PetscInt k = 0; k < nd; ++k) PetscCall(VecDestroy(&z[k]));
    PetscCall(MatDestroy(&A));
  }

  /* Basis growth: the 1-D Laplacian's largest eigenvalue converges slowly at the default ncv 16, so the
     basis grows (up to max(2 ncv, ncv + 32) = 48) and -eps_view says how far; an ncv given by the user,
     or EPSCUDALanczosSetNcvMax at ncv, keeps it fixed. */
  for (int mode = 0; mode < 4; ++mode) {
    Mat       A;
    EPS       eps;
    PetscBool found, grows;
    PetscInt  nconv, n = 600, limit = -1, ncv1, mpd1, ncv2, mpd2;
    PetscReal eig;
    int       used = 0;
    char      text[256], detail[256];
    PetscCall(BuildMatrix(LAPLACIAN_1D, n, &A));
    PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
    PetscCall(EPSSetTolerances(eps, 1e-8, 100000));
    if (mode == 1) PetscCall(EPSSetDimensions(eps, 1, 16, PETSC_DETERMINE));
    if (mode == 2) PetscCall(EPSCUDALanczosSetNcvMax(eps, 16));
    if (mode == 3) PetscCall(EPSCUDALanczosSetNcvMax(eps, PETSC_DECIDE));
    PetscCall(EPSCUDALanczosGetNcvMax(eps, &limit));
    PetscCall(EPSSolve(eps));
    /* A second set-up (new operators) must choose the same ncv and mpd, not read the chosen ones as the user's. */
    PetscCall(EPSGetDimensions(eps, NULL, &ncv1, &mpd1));
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetDimensions(eps, NULL, &ncv2, &mpd2));
    PetscCall(EPSGetConverged(eps, &nconv));
    eig = 0;
    if (nconv > 0) {
      PetscScalar e;
      PetscCall(EPSGetEigenvalue(eps, 0, &e, NULL));
      eig = PetscRealPart(e);
    }
    PetscCall(ViewLine(eps, "basis may grow from ncv 16 to 48", NULL, 0, &grows));
    PetscCall(ViewLine(eps, "basis size when the last solve ended: ", text, sizeof(text), &found));
    if (found) sscanf(text, "basis size when the last solve ended: %d", &used);
    const PetscReal exact = 2 - 2 * PetscCosReal(PETSC_PI * n / (n + 1));
    PetscCall(PetscSNPrintf(detail, sizeof(detail),
                            "nconv %" PetscInt_FMT ", eig %.12g (exact %.12g), growth line %s, ended at %d columns, limit %" PetscInt_FMT ", ncv/mpd %" PetscInt_FMT "/%" PetscInt_FMT " then %" PetscInt_FMT "/%" PetscInt_FMT,
                            nconv, (double)eig, (double)exact, grows ? "printed" : "absent", used, limit, ncv1, mpd1, ncv2, mpd2));
    const PetscBool right = (PetscBool)(nconv >= 1 && PetscAbsReal(eig - exact) <= 1e-7 * exact && ncv1 == 16 && ncv2 == 16 && mpd1 == 16 && mpd2 == 16);
    if (mode == 0 || mode == 3)
      PetscCall(Check((PetscBool)(right && grows && found && used > 16 && used <= 48 && limit == (mode == 0 ? PETSC_DEFAULT : PETSC_DECIDE)),
                      mode == 0 ? "default ncv: the basis grows on a clustered end, -eps_view says how far" : "EPSCUDALanczosSetNcvMax(PETSC_DECIDE) is the default", detail));
    else PetscCall(Check((PetscBool)(right && !grows && !found && limit == (mode == 2 ? 16 : PETSC_DEFAULT)), mode == 1 ? "ncv given: the basis stays at ncv" : "EPSCUDALanczosSetNcvMax(ncv): the basis stays at ncv", detail));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }

  /* The restart fraction (EPSCUDALanczosSetRestart, -eps_cudalanczos_restart). The solver's choice: a
     third with partial reorthogonalization (a sparse matrix with STSHIFT), half with full; -eps_view says
     which and why. 0.2 from the options database is kept and shown. All three find the 1-D Laplacian's
     largest eigenvalue, 0.2 and the default with different operator counts (the fraction reaches the
     restarts). 0.05 and 0.95 are refused with an error, and the EPS stays destroyable. */
  {
    const PetscInt  n = 600;
    const PetscReal exact = 2 - 2 * PetscCosReal(PETSC_PI * n / (n + 1));
    static const char *lines[3] = {"33% of the unconverged Ritz vectors kept after restart (chosen: partial reorthogonalization",
                                   "20% of the unconverged Ritz vectors kept after restart", "50% of the unconverged Ritz vectors kept after restart (chosen: krylovschur's default"};
    Mat             A;
    int             mv[3] = {0, 0, 0};
    PetscReal       keep[3] = {0, 0, 0}, eig[3] = {0, 0, 0};
    PetscBool       line[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE};
    char            text[256], detail[400];
    PetscCall(BuildMatrix(LAPLACIAN_1D, n, &A));
    for (int f = 0; f < 3; ++f) {
      EPS       eps;
      PetscInt  nconv;
      PetscBool found;
      PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
      PetscCall(EPSSetTolerances(eps, 1e-8, 100000));
      if (f == 1) { /* through the options database, as a user would */
        PetscCall(PetscOptionsSetValue(NULL, "-eps_cudalanczos_restart", "0.2"));
        PetscCall(EPSSetFromOptions(eps));
        PetscCall(PetscOptionsClearValue(NULL, "-eps_cudalanczos_restart"));
      }
      if (f == 2) PetscCall(EPSCUDALanczosSetReorthog(eps, EPS_CUDALANCZOS_REORTHOG_FULL));
      PetscCall(EPSSolve(eps));
      PetscCall(EPSCUDALanczosGetRestart(eps, &keep[f]));
      PetscCall(EPSGetConverged(eps, &nconv));
      if (nconv > 0) {
        PetscScalar e;
        PetscCall(EPSGetEigenvalue(eps, 0, &e, NULL));
        eig[f] = PetscRealPart(e);
      }
      PetscCall(ViewLine(eps, lines[f], NULL, 0, &line[f]));
      /* two spaces: not the CUDA backend's "uploaded by the last solve: N" line */
      PetscCall(ViewLine(eps, "  last solve: ", text, sizeof(text), &found));
      if (found) sscanf(text, "  last solve: %d operator applications", &mv[f]);
      PetscCall(EPSDestroy(&eps));
    }
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "fractions in effect %g / %g / %g, view lines %d / %d / %d, eigenvalues %.12g / %.12g / %.12g (exact %.12g), products %d / %d / %d",
                            (double)keep[0], (double)keep[1], (double)keep[2], (int)line[0], (int)line[1], (int)line[2], (double)eig[0], (double)eig[1], (double)eig[2],
                            (double)exact, mv[0], mv[1], mv[2]));
    PetscBool right = (PetscBool)(PetscAbsReal(keep[0] - 0.33) < 1e-15 && PetscAbsReal(keep[1] - 0.2) < 1e-15 && keep[2] == 0.5 && mv[0] > 0 && mv[1] > 0 && mv[0] != mv[1]);
    for (int f = 0; f < 3; ++f) right = (PetscBool)(right && line[f] && PetscAbsReal(eig[f] - exact) <= 1e-7 * exact);
    PetscCall(Check(right, "restart fraction: the solver's third with partial reorthogonalization and half with full, 0.2 from the options database; all converge", detail));
    for (int bad = 0; bad < 2; ++bad) {
      EPS            eps;
      PetscErrorCode ierr;
      PetscReal      kept = 0;
      PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = EPSCUDALanczosSetRestart(eps, bad ? 0.95 : 0.05);
      PetscCall(PetscPopErrorHandler());
      PetscCall(EPSCUDALanczosGetRestart(eps, &kept));
      PetscCall(Check((PetscBool)(ierr == PETSC_ERR_ARG_OUTOFRANGE && kept == 0.5), bad ? "restart fraction 0.95 is refused" : "restart fraction 0.05 is refused",
                      ierr ? "refused with PETSC_ERR_ARG_OUTOFRANGE, the fraction unchanged (0.5 before a set-up)" : "was accepted"));
      PetscCall(EPSDestroy(&eps));
    }
    PetscCall(MatDestroy(&A));
  }

  /* The norm estimate's product: a re-solve on an unchanged Mat reuses the estimate composed on it (one
     product fewer, -eps_view says so, the same eigenvalue); once the Mat changes (MatScale by 2^600, far
     outside the unscaled range) it is measured again, and the solve scales into range and is right. An
     assembled matrix: the true residuals are proven without a product (the proven line counts the pair). */
  {
    const PetscInt n = 300;
    Mat            A;
    EPS            eps;
    int            mv[3] = {0, 0, 0}, proven = -1;
    PetscBool      reused[3] = {PETSC_FALSE, PETSC_FALSE, PETSC_FALSE}, found;
    PetscReal      eig[3] = {0, 0, 0};
    char           text[256], detail[320];
    PetscCall(BuildMatrix(LAPLACIAN_1D, n, &A));
    PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
    PetscCall(EPSSetTolerances(eps, 1e-9, 100000));
    for (int solve = 0; solve < 3; ++solve) {
      PetscInt nconv;
      if (solve == 2) PetscCall(MatScale(A, PetscPowReal(2.0, 600)));
      if (solve > 0) PetscCall(EPSSetOperators(eps, A, NULL)); /* what makes EPSSolve solve again */
      PetscCall(EPSSolve(eps));
      PetscCall(EPSGetConverged(eps, &nconv));
      if (nconv > 0) {
        PetscScalar e;
        PetscCall(EPSGetEigenvalue(eps, 0, &e, NULL));
        eig[solve] = PetscRealPart(e);
      }
      /* two spaces: not the CUDA backend's "uploaded by the last solve: N" line */
      PetscCall(ViewLine(eps, "  last solve: ", text, sizeof(text), &found));
      if (found) sscanf(text, "  last solve: %d operator applications", &mv[solve]);
      PetscCall(ViewLine(eps, "reused from the matrix", NULL, 0, &reused[solve]));
      if (solve == 0) {
        PetscCall(ViewLine(eps, "true residuals proven without a product: ", text, sizeof(text), &found));
        if (found) sscanf(text, "true residuals proven without a product: %d", &proven);
      }
    }
    const PetscReal exact = 2 - 2 * PetscCosReal(PETSC_PI * n / (n + 1)), scaled = PetscPowReal(2.0, 600) * exact;
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "products %d, %d, %d; reused %d %d %d; proven %d; eig %.12g %.12g %.6e (exact %.12g, %.6e)", mv[0], mv[1], mv[2],
                            (int)reused[0], (int)reused[1], (int)reused[2], proven, (double)eig[0], (double)eig[1], (double)eig[2], (double)exact, (double)scaled));
    PetscCall(Check((PetscBool)(!reused[0] && reused[1] && mv[1] == mv[0] - 1 && eig[1] == eig[0] && PetscAbsReal(eig[0] - exact) <= 1e-8 * exact && proven >= 1),
                    "re-solve on an unchanged Mat: the norm estimate reused (one product fewer, same eigenvalue); residual proven", detail));
    PetscCall(Check((PetscBool)(!reused[2] && PetscAbsReal(eig[2] - scaled) <= 1e-8 * scaled), "a changed Mat (scaled by 2^600): the norm measured again, the eigenvalue right", detail));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }

  /* Bad input: a PETSc error, never a crash or a wrong answer. */
  PetscCall(ExpectError("NHEP is refused", LAPLACIAN_1D, 30, EPS_NHEP, 1, PETSC_DEFAULT, EPS_LARGEST_REAL, EPS_CUDALANCZOS_THICK_RESTART, NULL));
  PetscCall(ExpectError("ncv < nev+1 is refused", LAPLACIAN_1D, 30, EPS_HEP, 5, 5, EPS_LARGEST_REAL, EPS_CUDALANCZOS_THICK_RESTART, NULL));
  PetscCall(ExpectError("thesis variant with nev=2 is refused", LAPLACIAN_1D, 30, EPS_HEP, 2, PETSC_DEFAULT, EPS_LARGEST_REAL, EPS_CUDALANCZOS_THESIS, NULL));
  PetscCall(ExpectError("which = all is refused", LAPLACIAN_1D, 30, EPS_HEP, 1, PETSC_DEFAULT, EPS_ALL, EPS_CUDALANCZOS_THICK_RESTART, NULL));
  PetscCall(ExpectError("a nonsymmetric matrix fails the symmetry probe", NONSYMMETRIC, 40, EPS_HEP, 1, PETSC_DEFAULT, EPS_LARGEST_REAL, EPS_CUDALANCZOS_THICK_RESTART, NULL));
  if (!has_cuda_device)
    PetscCall(ExpectError("backend cuda without a usable GPU is refused", LAPLACIAN_1D, 30, EPS_HEP, 1, PETSC_DEFAULT, EPS_LARGEST_REAL, EPS_CUDALANCZOS_THICK_RESTART, "cuda"));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
