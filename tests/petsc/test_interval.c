/*
   EPS_ALL with an interval (EPSSetInterval) through the plugin: every eigenpair of a 3-D Laplacian in a
   window against the analytic spectrum (sums of three 1-D Laplacians' eigenvalues, with their
   multiplicities), the true residuals and orthonormality of the returned vectors (MeasurePairs), the
   -eps_view line; windows in the interior, at the upper end, with 200 eigenvalues, outside the spectrum,
   and with both ends on (multiple) eigenvalues, and with the filter in blocks of b vectors
   (EPSCUDALanczosSetBlockSize); the threshold test (SLEPc >= 3.26), absolute and relative;
   a window and the threshold test of a generalized problem with a diagonal B (D^1/2 L D^1/2 x = lambda D x,
   whose eigenvalues are the Laplacian L's); and what is refused with a PETSc error. Any number of
   ranks (uneven rows). Options: -eps_cudalanczos_backend host|cuda as for the other tests.
*/
#include "laplacian1d.h"
#include "test_support.h"

#include <math.h>
#include <stdlib.h>

static const PetscInt NX = 8, NY = 9, NZ = 10;

/* The 7-point Laplacian of the NX x NY x NZ grid (Dirichlet), rows split unevenly over the ranks. */
static PetscErrorCode Laplacian3d(Mat *A)
{
  PetscInt n = NX * NY * NZ, nloc, rs, re, r;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 7, NULL, 6, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  for (r = rs; r < re; ++r) {
    const PetscInt i = r % NX, j = (r / NX) % NY, k = r / (NX * NY);
    PetscCall(MatSetValue(*A, r, r, 6.0, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, r, r - 1, -1.0, INSERT_VALUES));
    if (i < NX - 1) PetscCall(MatSetValue(*A, r, r + 1, -1.0, INSERT_VALUES));
    if (j > 0) PetscCall(MatSetValue(*A, r, r - NX, -1.0, INSERT_VALUES));
    if (j < NY - 1) PetscCall(MatSetValue(*A, r, r + NX, -1.0, INSERT_VALUES));
    if (k > 0) PetscCall(MatSetValue(*A, r, r - NX * NY, -1.0, INSERT_VALUES));
    if (k < NZ - 1) PetscCall(MatSetValue(*A, r, r + NX * NY, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static int Ascending(const void *x, const void *y)
{
  const PetscReal a = *(const PetscReal *)x, b = *(const PetscReal *)y;
  return (a > b) - (a < b);
}

/* The Laplacian's eigenvalues, ascending: 2 - 2 cos(p pi / (N + 1)) summed over the three directions. */
static PetscErrorCode AnalyticSpectrum(PetscReal **ev)
{
  PetscInt p, q, s, m = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(NX * NY * NZ, ev));
  for (p = 1; p <= NX; ++p)
    for (q = 1; q <= NY; ++q)
      for (s = 1; s <= NZ; ++s)
        (*ev)[m++] = 6 - 2 * cos(p * PETSC_PI / (NX + 1)) - 2 * cos(q * PETSC_PI / (NY + 1)) - 2 * cos(s * PETSC_PI / (NZ + 1));
  qsort(*ev, (size_t)m, sizeof(PetscReal), Ascending);
  PetscFunctionReturn(0);
}

/* The generalized problem D^1/2 L D^1/2 x = lambda D x with D diagonal (entries 1 to 1.9, varying along
   the rows): its eigenvalues are L's, its vectors x = D^-1/2 y for L's y. *GA and *GB on A's layout. */
static PetscErrorCode DiagonalPencil(Mat A, Mat *GA, Mat *GB)
{
  Vec      d, s;
  PetscInt rs, re, r;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &d, NULL));
  PetscCall(VecGetOwnershipRange(d, &rs, &re));
  for (r = rs; r < re; ++r) PetscCall(VecSetValue(d, r, 1.0 + (PetscReal)((r * 7) % 10) / 10.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(d));
  PetscCall(VecAssemblyEnd(d));
  PetscCall(VecDuplicate(d, &s));
  PetscCall(VecCopy(d, s));
  PetscCall(VecSqrtAbs(s));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, GA));
  PetscCall(MatDiagonalScale(*GA, s, s));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, re - rs, re - rs, PETSC_DETERMINE, PETSC_DETERMINE, 1, NULL, 0, NULL, GB));
  PetscCall(MatDiagonalSet(*GB, d, INSERT_VALUES));
  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&s));
  PetscFunctionReturn(0);
}

/* EPS_GHEP on (A, B), B diagonal: STSHIFT's own set-up factors B (SLEPc's STSetUp), which on several ranks
   needs a parallel LU that a PETSc without MUMPS lacks; Jacobi is exact for a diagonal B. */
static PetscErrorCode GeneralizedOperators(EPS eps, Mat A, Mat B)
{
  ST  st;
  KSP ksp;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(EPSSetOperators(eps, A, B));
  PetscCall(EPSGetST(eps, &st));
  PetscCall(STGetKSP(st, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscFunctionReturn(0);
}

/* The k pairs eps returned against the analytic eigenvalues ev[first], ev[first + step], ... (step 1:
   ascending, -1: descending), through MeasurePairs: eigenvalues, true residuals, orthonormality and real
   values, one Check named `what`. */
static PetscErrorCode CheckPairs(EPS eps, Mat A, Mat B, PetscInt k, const PetscReal *ev, PetscInt first, PetscInt step, const char *what)
{
  PetscScalar *lr;
  PetscReal    diff, res, orth, imag;
  char         detail[256];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(k, &lr));
  for (PetscInt i = 0; i < k; ++i) lr[i] = ev[first + step * i];
  PetscCall(MeasurePairs(eps, A, B, k, lr, &diff, &res, &orth, &imag));
  PetscCall(PetscFree(lr));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "max |lambda - exact| / max|lambda| = %.1e, residual %.1e, orthogonality %.1e", (double)diff,
                          (double)res, (double)orth));
  PetscCall(Check((PetscBool)(diff < 1e-9 && res < 1e-8 && orth < 1e-9 && imag == 0), what, detail));
  PetscFunctionReturn(0);
}

/* EPS_ALL on [a, b] with the options given; every pair against the analytic ones. `atleast`: the window
   must hold that many (a check of the test itself). With B (the diagonal pencil), EPS_GHEP on (A, B). */
static PetscErrorCode CheckWindowOf(Mat A, Mat B, const PetscReal *ev, PetscReal a, PetscReal b, PetscInt atleast, PetscInt block, const char *name)
{
  EPS         eps;
  PetscInt    n = NX * NY * NZ, i, expected = 0, first = -1, nconv;
  PetscReal   tol = 1e-10;
  char        detail[512], line[256];
  PetscBool   found;

  PetscFunctionBeginUser;
  for (i = 0; i < n; ++i) /* the analytic values within rounding of an end count as inside */
    if (ev[i] >= a - 1e-12 && ev[i] <= b + 1e-12) {
      if (first < 0) first = i;
      ++expected;
    }
  PetscCall(CreateEPS(A, B ? EPS_GHEP : EPS_HEP, "cudalanczos", &eps));
  if (B) PetscCall(GeneralizedOperators(eps, A, B));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_ALL));
  PetscCall(EPSSetInterval(eps, a, b));
  PetscCall(EPSSetTolerances(eps, tol, 1000));
  if (block > 0) PetscCall(EPSCUDALanczosSetBlockSize(eps, block)); /* 0: the solver's (2) */
  PetscCall(EPSSetFromOptions(eps));
  /* solved twice: the second time on the same EPS after EPSSetOperators (how SLEPc solves a solved EPS
     again), which must not take the first solve's grown solution size for a setting */
  for (int pass = 0; pass < 2; ++pass) {
    if (pass) PetscCall(EPSSetOperators(eps, A, B));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " returned, %" PetscInt_FMT " in the window", nconv, expected));
    PetscCall(Check((PetscBool)(nconv == expected && expected >= atleast), pass ? "  solved again on the same EPS" : name, detail));
    if (nconv == expected && expected > 0) PetscCall(CheckPairs(eps, A, B, expected, ev, first, 1, "  its pairs"));
  }
  PetscCall(ViewLine(eps, "interval [", line, sizeof(line), &found));
  if (expected > 0) PetscCall(Check(found, "  -eps_view shows the filter", line));
  if (expected > 0) { /* the blocks asked for, 2 by default */
    char     want[32];
    PetscInt got;
    PetscCall(PetscSNPrintf(want, sizeof(want), "in blocks of %d:", (int)(block ? block : 2)));
    PetscCall(ViewLine(eps, "filtered Lanczos", line, sizeof(line), &found));
    PetscCall(Check((PetscBool)(found && (block == 1 ? !strstr(line, "in blocks of") : strstr(line, want) != NULL)), "  -eps_view shows the filter's blocks", line));
    PetscCall(EPSCUDALanczosGetBlockSize(eps, &got));
    PetscCall(Check((PetscBool)(got == (block ? block : 2)), "  EPSCUDALanczosGetBlockSize gives the filter's block size", want));
  }
  if (expected > 0) { /* full reorthogonalization, the solver's choice for an interval: a filtered step is degree products */
    EPSCUDALanczosReorthog r;
    PetscCall(EPSCUDALanczosGetReorthog(eps, &r));
    PetscCall(ViewLine(eps, "reorthogonalization:", line, sizeof(line), &found));
    PetscCall(Check((PetscBool)(r == EPS_CUDALANCZOS_REORTHOG_FULL && found && strstr(line, "full (chosen: an interval")), "  the solver chose full reorthogonalization", line));
  }
  PetscCall(ViewLine(eps, "eigenvalues in the interval:", line, sizeof(line), &found));
  if (expected > 0) PetscCall(Check((PetscBool)(found && strstr(line, "estimated") && strstr(line, "blurred over about")), "  -eps_view shows the count estimate and its blur", line));
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckWindow(Mat A, const PetscReal *ev, PetscReal a, PetscReal b, PetscInt atleast, const char *name)
{
  PetscFunctionBeginUser;
  PetscCall(CheckWindowOf(A, NULL, ev, a, b, atleast, 0, name));
  PetscFunctionReturn(0);
}

#if SLEPC_VERSION_GE(3, 26, 0)
/* The threshold test (EPSSetThreshold) with nev 8: every eigenvalue above `thres` (relative: that fraction
   of the largest), against the analytic ones. */
static PetscErrorCode CheckThreshold(Mat A, Mat B, const PetscReal *ev, PetscReal thres, PetscBool relative, const char *name)
{
  EPS          eps;
  PetscInt     n = NX * NY * NZ, i, expected = 0, nconv;
  PetscReal    t = relative ? thres * ev[n - 1] : thres;
  char         detail[256];

  PetscFunctionBeginUser;
  for (i = n - 1; i >= 0 && ev[i] >= t; --i) ++expected;
  PetscCall(CreateEPS(A, B ? EPS_GHEP : EPS_HEP, "cudalanczos", &eps));
  if (B) PetscCall(GeneralizedOperators(eps, A, B));
  PetscCall(EPSSetWhichEigenpairs(eps, relative ? EPS_LARGEST_MAGNITUDE : EPS_LARGEST_REAL)); /* SLEPc's rule for a relative one */
  PetscCall(EPSSetDimensions(eps, 8, 24, PETSC_DETERMINE));
  PetscCall(EPSSetThreshold(eps, thres, relative));
  PetscCall(EPSSetTolerances(eps, 1e-10, 1000));
  PetscCall(EPSSetFromOptions(eps));
  for (int pass = 0; pass < 2; ++pass) { /* the second time on the same EPS, as CheckWindowOf */
    if (pass) PetscCall(EPSSetOperators(eps, A, B));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " returned, %" PetscInt_FMT " beyond the threshold", nconv, expected));
    PetscCall(Check((PetscBool)(nconv == expected && expected > 8), pass ? "  solved again on the same EPS" : name, detail));
    if (nconv == expected) PetscCall(CheckPairs(eps, A, B, expected, ev, n - 1, -1, "  its pairs"));
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* The threshold test with more eigenvalues beyond the threshold than SLEPc's room of max(8 nev, 256) pairs:
   the count estimate sizes the room, every one of them comes back, and -eps_view shows the estimate. */
static PetscErrorCode CheckThresholdCount(Mat A, const PetscReal *ev)
{
  EPS          eps;
  PetscInt     n = NX * NY * NZ, i, expected = 0, nconv;
  char         detail[256], line[256];
  PetscBool    found;

  PetscFunctionBeginUser;
  for (i = n - 1; i >= 0 && ev[i] >= 2.0; --i) ++expected;
  PetscCall(CreateEPS(A, EPS_HEP, "cudalanczos", &eps));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetDimensions(eps, 8, 24, PETSC_DETERMINE));
  PetscCall(EPSSetThreshold(eps, 2.0, PETSC_FALSE)); /* about 650 of the 720 eigenvalues are above it */
  PetscCall(EPSSetTolerances(eps, 1e-10, 1000));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(ViewLine(eps, "eigenvalues beyond the threshold:", line, sizeof(line), &found));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " returned, %" PetscInt_FMT " beyond; %s", nconv, expected, found ? line : "no such -eps_view line"));
  PetscCall(Check((PetscBool)(found && nconv == expected && expected > 256), "threshold test beyond SLEPc's room", detail));
  if (nconv == expected) PetscCall(CheckPairs(eps, A, NULL, nconv, ev, n - 1, -1, "  its pairs"));
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* SLEPc's ex1 (the 1-D Laplacian, n = 400) with -eps_threshold_absolute 3.9 -eps_largest_real at its
   other defaults (nev 1, max_it): the 40 eigenvalues above 3.9 crowd near 4. The chunks used to share
   one budget of restarts and returned 32. */
static PetscErrorCode CheckThresholdEx1(void)
{
  const PetscInt n = 400;
  Mat            L;
  EPS            eps;
  PetscInt       i, expected = 0, nconv;
  PetscReal     *ev;
  char           detail[256];

  PetscFunctionBeginUser;
  PetscCall(Laplacian1d(PETSC_COMM_WORLD, n, &L));
  PetscCall(PetscMalloc1(n, &ev));
  for (i = 0; i < n; ++i) ev[i] = 2.0 - 2.0 * PetscCosReal((PetscReal)(i + 1) * PETSC_PI / (PetscReal)(n + 1)); /* ascending */
  for (i = n - 1; i >= 0 && ev[i] >= 3.9; --i) ++expected;
  PetscCall(CreateEPS(L, EPS_HEP, "cudalanczos", &eps));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetThreshold(eps, 3.9, PETSC_FALSE));
  PetscCall(EPSSetTolerances(eps, 1e-10, PETSC_DEFAULT)); /* CheckPairs' accuracy; max_it stays SLEPc's */
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " returned, %" PetscInt_FMT " beyond the threshold", nconv, expected));
  PetscCall(Check((PetscBool)(nconv == expected && expected == 40), "threshold test at ex1's defaults", detail));
  if (nconv == expected) PetscCall(CheckPairs(eps, L, NULL, expected, ev, n - 1, -1, "  its pairs"));
  PetscCall(EPSDestroy(&eps));
  PetscCall(PetscFree(ev));
  PetscCall(MatDestroy(&L));
  PetscFunctionReturn(0);
}
#endif

/* EPS_ALL with something it does not support: refused at EPSSolve, the EPS still destroyable. */
static PetscErrorCode CheckRefused(Mat A, const char *what)
{
  EPS eps;
  Vec z;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, "cudalanczos", &eps));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_ALL));
  PetscCall(EPSSetInterval(eps, 5.0, 6.0));
  PetscCall(EPSSetFromOptions(eps));
  if (!strcmp(what, "sinvert")) {
    ST st;
    PetscCall(EPSGetST(eps, &st));
    PetscCall(STSetType(st, STSINVERT));
  } else if (!strcmp(what, "shift")) {
    ST st;
    PetscCall(EPSGetST(eps, &st));
    PetscCall(STSetShift(st, 1.0));
  } else if (!strcmp(what, "ghep")) {
    PetscCall(EPSSetOperators(eps, A, A));
    PetscCall(EPSSetProblemType(eps, EPS_GHEP));
  } else if (!strcmp(what, "deflation")) {
    PetscCall(MatCreateVecs(A, &z, NULL));
    PetscCall(VecSet(z, 1.0));
    PetscCall(EPSSetDeflationSpace(eps, 1, &z));
    PetscCall(VecDestroy(&z));
  } else if (!strcmp(what, "block")) { /* the threshold test's chunks take single vectors */
#if SLEPC_VERSION_GE(3, 26, 0)
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
    PetscCall(EPSSetThreshold(eps, 10.5, PETSC_FALSE));
#endif
    PetscCall(EPSCUDALanczosSetBlockSize(eps, 2));
  }
  PetscCall(CheckSolveRefused(eps, what));
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat        A, GA, GB;
  PetscReal *ev;

  PetscCall(SlepcInitialize(&argc, &argv, NULL, NULL));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(Laplacian3d(&A));
  PetscCall(AnalyticSpectrum(&ev));
  PetscCall(CheckWindow(A, ev, 5.9, 6.3, 20, "interior window, multiple eigenvalues"));
  PetscCall(CheckWindow(A, ev, 11.0, 13.0, 5, "window at the upper end"));
  PetscCall(CheckWindow(A, ev, 3.0, 6.0, 200, "window with 200 eigenvalues"));
  PetscCall(CheckWindow(A, ev, -3.0, -1.0, 0, "window outside the spectrum"));
  PetscCall(CheckWindow(A, ev, ev[100], ev[160], 60, "window with both ends on eigenvalues"));
  PetscCall(DiagonalPencil(A, &GA, &GB));
  PetscCall(CheckWindowOf(GA, GB, ev, 5.9, 6.3, 20, 0, "EPS_GHEP with a diagonal B, interior window"));
  PetscCall(CheckWindowOf(A, NULL, ev, 5.9, 6.3, 20, 1, "interior window, single-vector filtered solves"));
  PetscCall(CheckWindowOf(A, NULL, ev, 5.9, 6.3, 20, 4, "interior window, the filter in blocks of 4"));
  PetscCall(CheckWindowOf(A, NULL, ev, 3.0, 6.0, 200, 8, "window with 200 eigenvalues, the filter in blocks of 8"));
  PetscCall(CheckWindowOf(GA, GB, ev, 11.0, 13.0, 5, 3, "EPS_GHEP with a diagonal B, upper end, the filter in blocks of 3"));
#if SLEPC_VERSION_GE(3, 26, 0)
  PetscCall(CheckThreshold(A, NULL, ev, 10.5, PETSC_FALSE, "threshold test, absolute"));
  PetscCall(CheckThreshold(A, NULL, ev, 0.9, PETSC_TRUE, "threshold test, relative"));
  PetscCall(CheckThreshold(GA, GB, ev, 10.5, PETSC_FALSE, "threshold test, EPS_GHEP with a diagonal B"));
  PetscCall(CheckThresholdCount(A, ev));
  PetscCall(CheckThresholdEx1());
#endif
  PetscCall(MatDestroy(&GA));
  PetscCall(MatDestroy(&GB));
  PetscCall(CheckRefused(A, "sinvert"));
  PetscCall(CheckRefused(A, "shift"));
  PetscCall(CheckRefused(A, "ghep"));
  PetscCall(CheckRefused(A, "deflation"));
#if SLEPC_VERSION_GE(3, 26, 0)
  PetscCall(CheckRefused(A, "block"));
#endif
  PetscCall(PetscFree(ev));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
