/*
   Robustness of EPSCUDALANCZOS through PETSc/SLEPc (issue 5): bad input gets a clear PETSc error, never a
   hang, a crash or a wrong answer, and the SAME EPS object is still usable afterwards; plus the edge cases
   of reusing one EPS (changed values, changed pattern, changed size, EPSReset, c*I).

   Every error case is checked twice: (1) the call fails with a PETSc error code and the error message
   names the problem (a keyword), (2) the input is fixed on the same EPS and EPSSolve then returns the right
   eigenvalues (against the closed form of the matrix, or krylovschur) with small true residuals. The EPS
   is destroyed at the end of each case, so leaks show under valgrind (tests/valgrind).

   Run serially and under mpiexec (tests/petsc/CMakeLists.txt) with -eps_cudalanczos_backend host; the
   row layout is deliberately uneven. Prints "ok N - name" / "not ok N - name" per check, then
   "P passed, F failed", and exits non-zero on any failure.
*/
#include "laplacian1d.h"
#include "test_support.h"
#include <float.h>

/* The 1-D Laplacian (laplacian1d.h) as an AIJ matrix on uneven rows. */
static PetscErrorCode Laplacian(PetscInt n, Mat *A)
{
  PetscInt nloc;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 3, NULL, 2, NULL, A));
  PetscCall(Laplacian1dFill(*A, n));
  PetscFunctionReturn(0);
}

/* The k-th largest eigenvalue (k = 0, 1, ...) of the n x n Laplacian. */
static PetscReal LaplacianLargest(PetscInt n, PetscInt k) { return 2 - 2 * PetscCosReal(PETSC_PI * (PetscReal)(n - k) / (PetscReal)(n + 1)); }

/* c * I as an AIJ matrix. */
static PetscErrorCode ScaledIdentity(PetscInt n, PetscScalar c, Mat *A)
{
  PetscInt nloc, rstart, rend, i;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 1, NULL, 0, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) PetscCall(MatSetValue(*A, i, i, c, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* Sets one entry (on the owning rank) and reassembles. */
static PetscErrorCode SetEntry(Mat A, PetscInt i, PetscInt j, PetscScalar v)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  if (i >= rstart && i < rend) PetscCall(MatSetValue(A, i, j, v, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* A fresh EPSCUDALANCZOS on A: Hermitian, nev largest real eigenvalues, tol 1e-10, options applied. */
static PetscErrorCode NewEPS(Mat A, PetscInt nev, EPS *eps)
{
  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, eps));
  PetscCall(EPSSetDimensions(*eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(*eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(*eps, 1e-10, 5000));
  PetscCall(EPSSetFromOptions(*eps)); /* picks up -eps_cudalanczos_backend host from the command line */
  PetscFunctionReturn(0);
}

/* Solves (the EPS is already configured) and checks the first nev eigenvalues against expected[] within
   tol * max(1, |expected|), and the true relative residual of each pair (absolute for lambda = 0). */
static PetscErrorCode SolveAndCheck(EPS eps, PetscInt nev, const PetscReal *expected, PetscReal tol, const char *name)
{
  PetscErrorCode ierr;
  PetscInt       nconv = 0, i;
  PetscReal      diff = 0, worst = 0, err;
  char           detail[512];

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = EPSSolve(eps);
  PetscCall(PetscPopErrorHandler());
  if (ierr) {
    const char *text;
    TEST_ERROR_TEXT specific = NULL;
    PetscCall(PetscErrorMessage(ierr, &text, &specific));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "EPSSolve failed with error %d: %s", (int)ierr, specific ? specific : (text ? text : "")));
    PetscCall(Check(PETSC_FALSE, name, detail));
    PetscFunctionReturn(0);
  }
  PetscCall(EPSGetConverged(eps, &nconv));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar kr;
    PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
    diff = PetscMax(diff, PetscAbsReal(PetscRealPart(kr) - expected[i]) / PetscMax(1, PetscAbsReal(expected[i])));
    PetscCall(EPSComputeError(eps, i, PetscAbsScalar(kr) > 0 ? EPS_ERROR_RELATIVE : EPS_ERROR_ABSOLUTE, &err));
    worst = PetscMax(worst, err);
  }
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT " (want %" PetscInt_FMT "), max rel |diff| %.2e, true residual %.2e", nconv, nev,
                          (double)diff, (double)worst));
  PetscCall(Check((PetscBool)(nconv >= nev && diff <= tol && worst <= 1e-8), name, detail));
  PetscFunctionReturn(0);
}

/* The nev largest eigenvalues of A by krylovschur (the reference when no closed form is at hand). */
static PetscErrorCode Reference(Mat A, PetscInt nev, PetscReal *ref)
{
  EPS      eps;
  PetscInt nconv, i;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, EPSKRYLOVSCHUR, &eps));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(eps, 1e-12, 5000));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCheck(nconv >= nev, PETSC_COMM_WORLD, PETSC_ERR_CONV_FAILED, "krylovschur reference did not converge");
  for (i = 0; i < nev; ++i) {
    PetscScalar kr;
    PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
    ref[i] = PetscRealPart(kr);
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* Records the outcome of a call that must fail: a nonzero code and a message containing `keyword`. */
static PetscErrorCode ExpectFailure(PetscErrorCode ierr, const char *name, const char *keyword)
{
  const char *text     = NULL;
  TEST_ERROR_TEXT specific = NULL;
  char        detail[768];

  PetscFunctionBeginUser;
  if (!ierr) {
    PetscCall(Check(PETSC_FALSE, name, "was accepted"));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscErrorMessage(ierr, &text, &specific));
  const char *msg = specific && specific[0] ? specific : (text ? text : "");
  PetscBool   has = (PetscBool)(keyword == NULL || strstr(msg, keyword) != NULL);
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "error %d%s: \"%s\"", (int)ierr, has ? "" : " (message lacks the expected keyword)", msg));
  PetscCall(Check(has, name, detail));
  PetscFunctionReturn(0);
}

/* EPSSolve under the returning error handler. */
static PetscErrorCode TrySolve(EPS eps, PetscErrorCode *ierr)
{
  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *ierr = EPSSolve(eps);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(0);
}

/* --- a MATSHELL diag(1, 2, ..., n) whose products turn NaN or Inf from the k-th one on --------------- */
typedef struct {
  PetscInt    products, bad_from; /* bad_from <= 0: never */
  PetscScalar bad;
} ShellCtx;

static PetscErrorCode ShellMult(Mat A, Vec x, Vec y)
{
  ShellCtx          *ctx;
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscInt           rstart, rend, i;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &ctx));
  ++ctx->products;
  PetscCall(VecGetOwnershipRange(x, &rstart, &rend));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  for (i = rstart; i < rend; ++i) ya[i - rstart] = (PetscScalar)(i + 1) * xa[i - rstart];
  if (ctx->bad_from > 0 && ctx->products >= ctx->bad_from && rend > rstart) ya[rend - rstart - 1] = ctx->bad; /* last local row of every rank */
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode DiagonalShell(PetscInt n, ShellCtx *ctx, Mat *A)
{
  PetscInt nloc;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateShell(PETSC_COMM_WORLD, nloc, nloc, n, n, ctx, A));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT, (void (*)(void))ShellMult));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_TRANSPOSE, (void (*)(void))ShellMult));
  PetscCall(MatSetOption(*A, MAT_SYMMETRIC, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* --- error cases, each followed by the fix on the same EPS ----------------------------------------- */

static PetscErrorCode Arbitrary(PetscScalar er, PetscScalar ei, Vec xr, Vec xi, PetscScalar *rr, PetscScalar *ri, void *ctx)
{
  (void)ei, (void)xr, (void)xi, (void)ctx;
  *rr = er;
  if (ri) *ri = 0;
  return 0;
}

/* More pairs than a 32-bit PetscInt can index in the BV (nev columns of n rows on one rank): refused at
   set-up with the sizes and the ways out, before anything is allocated; the same EPS then solves with few
   pairs. A diagonal matrix whose 3 largest entries (4, 3, 2) stand far from the rest (in [0, 1)). */
static PetscErrorCode BVBeyondIndexRange(void)
{
  PetscMPIInt    size;
  const PetscInt n = 1000000;
  PetscInt       rstart, rend, i, many;
  Mat            D;
  EPS            eps;
  PetscErrorCode ierr;
  const PetscReal expected[3] = {4, 3, 2};

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (sizeof(PetscInt) > 4) PetscFunctionReturn(0); /* 64-bit indices: nothing to refuse */
  many = (PetscInt)(PETSC_MAX_INT / (n / size)) + 1;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 1, NULL, 0, NULL, &D));
  PetscCall(MatGetOwnershipRange(D, &rstart, &rend));
  for (i = rstart; i < rend; ++i) PetscCall(MatSetValue(D, i, i, i >= n - 3 ? (PetscScalar)(i - (n - 5)) : (PetscScalar)((i * 7919) % 1000) / 1000.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(D, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(D, MAT_FINAL_ASSEMBLY));
  PetscCall(NewEPS(D, many, &eps));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = EPSSetUp(eps);
  PetscCall(PetscPopErrorHandler());
  PetscCall(ExpectFailure(ierr, "a BV past 32-bit PetscInt (n 10^6, nev just past 2^31 / n) is refused at set-up", "64-bit-indices"));
  PetscCall(EPSSetDimensions(eps, 3, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(SolveAndCheck(eps, 3, expected, 1e-10, "  then the same EPS solves with nev 3"));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

static PetscErrorCode ErrorCases(void)
{
  const PetscInt n = 30, nev = 3;
  Mat            A, B;
  EPS            eps;
  PetscErrorCode ierr;
  PetscReal      expected[16];
  PetscInt       i;

  PetscFunctionBeginUser;
  for (i = 0; i < 16; ++i) expected[i] = LaplacianLargest(n, i);
  PetscCall(Laplacian(n, &A));
  PetscCall(ScaledIdentity(n, 2.0, &B));

  /* Problem types other than Hermitian with a positive definite B. */
  {
    const EPSProblemType types[]  = {EPS_NHEP, EPS_GHIEP, EPS_PGNHEP, EPS_GNHEP};
    const char          *names[]  = {"NHEP", "GHIEP with B", "PGNHEP with B", "GNHEP with B"};
    const PetscBool      withB[]  = {PETSC_FALSE, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE};
    char                 name[128];
    for (i = 0; i < 4; ++i) {
      PetscCall(NewEPS(A, nev, &eps));
      if (withB[i]) PetscCall(EPSSetOperators(eps, A, B));
      PetscCall(EPSSetProblemType(eps, types[i]));
      PetscCall(TrySolve(eps, &ierr));
      PetscCall(PetscSNPrintf(name, sizeof(name), "problem type %s is refused", names[i]));
      PetscCall(ExpectFailure(ierr, name, "EPS_HEP"));
      if (withB[i]) PetscCall(EPSSetOperators(eps, A, NULL));
      PetscCall(EPSSetProblemType(eps, EPS_HEP));
      PetscCall(PetscSNPrintf(name, sizeof(name), "  then EPS_HEP on the same EPS solves"));
      PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, name));
      PetscCall(EPSDestroy(&eps));
    }
  }

  /* GHEP with B = 2 I (eigenvalues halved), then EPS_HEP on the same EPS: the B-inner product set on the
     BV for the first solve does not stay for the second. */
  {
    PetscReal halved[16];
    for (i = 0; i < 16; ++i) halved[i] = expected[i] / 2;
    ST  st;
    KSP ksp;
    PC  pc;
    PetscCall(NewEPS(A, nev, &eps));
    PetscCall(EPSSetOperators(eps, A, B));
    PetscCall(EPSSetProblemType(eps, EPS_GHEP));
    /* B^-1 exactly on any number of ranks without a parallel LU (a PETSc without MUMPS has none) */
    PetscCall(EPSGetST(eps, &st));
    PetscCall(STGetKSP(st, &ksp));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(SolveAndCheck(eps, nev, halved, 1e-10, "GHEP with B = 2 I solves (eigenvalues halved)"));
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCall(EPSSetProblemType(eps, EPS_HEP));
    PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then EPS_HEP on the same EPS solves"));
    PetscCall(EPSDestroy(&eps));
  }

  /* A deflation space that leaves nothing, or less than nev, of the problem: refused at set-up with the
     dimensions named; one with a NaN entry: refused (SLEPc's own orthonormalization or ours); after each
     the same EPS solves without it. */
  {
    const PetscInt counts[3] = {n, n - 2, 1};
    const char    *names[3]  = {"a deflation space of all n unit vectors is refused", "a deflation space leaving n - 2 < nev dimensions is refused",
                                "a deflation vector with a NaN entry is refused"};
    const char    *keys[3]   = {"leaves nothing", "left by the deflation space", NULL};
    for (int c = 0; c < 3; ++c) {
      Vec     *z;
      PetscInt lo, hi;
      PetscCall(NewEPS(A, nev, &eps));
      PetscCall(PetscMalloc1(counts[c], &z));
      for (PetscInt k = 0; k < counts[c]; ++k) {
        PetscCall(MatCreateVecs(A, &z[k], NULL));
        PetscCall(VecGetOwnershipRange(z[k], &lo, &hi));
        if (k >= lo && k < hi) PetscCall(VecSetValue(z[k], k, c == 2 ? NAN : 1.0, INSERT_VALUES));
        PetscCall(VecAssemblyBegin(z[k]));
        PetscCall(VecAssemblyEnd(z[k]));
      }
      if (c == 1) PetscCall(EPSSetDimensions(eps, n - 1, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetDeflationSpace(eps, counts[c], z));
      for (PetscInt k = 0; k < counts[c]; ++k) PetscCall(VecDestroy(&z[k]));
      PetscCall(PetscFree(z));
      PetscCall(TrySolve(eps, &ierr));
      PetscCall(ExpectFailure(ierr, names[c], keys[c]));
      PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetDeflationSpace(eps, 0, NULL));
      PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the same EPS solves without it"));
      PetscCall(EPSDestroy(&eps));
    }
  }

  /* nev = 0: SLEPc's EPSSetDimensions refuses it. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = EPSSetDimensions(eps, 0, PETSC_DETERMINE, PETSC_DETERMINE);
  PetscCall(PetscPopErrorHandler());
  PetscCall(ExpectFailure(ierr, "nev = 0 is refused", "nev"));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the same EPS solves with nev 3"));
  PetscCall(EPSDestroy(&eps));

  /* nev > n: SLEPc's EPSSetUp clamps nev to n before any solver sees it (krylovschur alike), so no
     solver can refuse it; what must hold is that all n eigenpairs come back right. */
  {
    const PetscInt m = 6;
    Mat            S;
    PetscReal      exact[6];
    PetscInt       nev_after, ncv_after, mpd_after;
    char           detail[128];
    for (i = 0; i < m; ++i) exact[i] = LaplacianLargest(m, i);
    PetscCall(Laplacian(m, &S));
    PetscCall(NewEPS(S, m + 4, &eps));
    PetscCall(SolveAndCheck(eps, m, exact, 1e-10, "nev > n (n 6, nev 10): SLEPc clamps nev to n, all n eigenpairs correct"));
    PetscCall(EPSGetDimensions(eps, &nev_after, &ncv_after, &mpd_after));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nev %" PetscInt_FMT ", ncv %" PetscInt_FMT, nev_after, ncv_after));
    PetscCall(Check((PetscBool)(nev_after == m && ncv_after == m), "  nev and ncv were clamped to n", detail));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&S));
  }

  /* ncv < nev. */
  PetscCall(NewEPS(A, 5, &eps));
  PetscCall(EPSSetDimensions(eps, 5, 3, PETSC_DETERMINE));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "ncv < nev (nev 5, ncv 3) is refused", "ncv"));
  PetscCall(EPSSetDimensions(eps, 5, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(SolveAndCheck(eps, 5, expected, 1e-10, "  then the default ncv on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* mpd > ncv. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetDimensions(eps, nev, 10, 20));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "mpd > ncv (ncv 10, mpd 20) is refused", "mpd"));
  PetscCall(EPSSetDimensions(eps, nev, 10, 10));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then mpd = ncv on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* mpd 1: the projected problem has no room for a restart (one kept vector plus one step); refused at
     set-up with the numbers named, as krylovschur cannot run with it either. mpd 2 runs but is slow: when
     it ends at the iteration limit, -eps_view says so and why. */
  PetscCall(NewEPS(A, 5, &eps));
  PetscCall(EPSSetDimensions(eps, 5, PETSC_DETERMINE, 1));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "mpd 1 with nev 5 is refused at set-up", "mpd (1) leaves the projected problem no room"));
  {
    const char *text = NULL;
    TEST_ERROR_TEXT specific = NULL;
    PetscCall(PetscErrorMessage(ierr, &text, &specific));
    PetscCall(Check((PetscBool)(specific && strstr(specific, "at least 2") && strstr(specific, "nev 5") && strstr(specific, "ncv 6")),
                    "  the message names the least mpd, nev and ncv", specific ? specific : ""));
  }
  PetscCall(EPSSetDimensions(eps, 5, PETSC_DETERMINE, 2));
  PetscCall(EPSSetTolerances(eps, 1e-10, 3));
  PetscCall(EPSSolve(eps));
  {
    PetscInt  nconv;
    PetscBool found1, found2;
    char      line1[256], line2[256];
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(ViewLine(eps, "wanted pairs converged", line1, sizeof(line1), &found1));
    PetscCall(ViewLine(eps, "ncv 7 leaves", line2, sizeof(line2), &found2));
    PetscCall(Check((PetscBool)(nconv < 5 && found1 && strstr(line1, "iteration limit") && found2 && strstr(line2, "2 columns beyond nev 5")),
                    "  mpd 2, 3 restarts: -eps_view says why fewer than nev converged", found2 ? line2 : "no line on ncv"));
  }
  PetscCall(EPSSetDimensions(eps, 5, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetTolerances(eps, 1e-10, 5000));
  PetscCall(SolveAndCheck(eps, 5, expected, 1e-10, "  then the default mpd on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* which: user-defined, and all (an interval). */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_WHICH_USER));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "which = user is refused", "supported"));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then which = largest_real on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* An interval (EPS_ALL) is computed with the solver's own filter of A: with shift-and-invert (SLEPc's
     spectrum slicing) it is refused, and the same EPS then solves an interval and a largest_real problem. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetInterval(eps, 1.0, 3.0));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_ALL)); /* what -eps_interval does */
  {
    ST       st;
    PetscInt nall;
    char     detail[128];
    PetscCall(EPSGetST(eps, &st));
    PetscCall(STSetType(st, STSINVERT));
    PetscCall(TrySolve(eps, &ierr));
    PetscCall(ExpectFailure(ierr, "which = all (EPSSetInterval) with shift-and-invert is refused", "STSHIFT"));
    PetscCall(STSetType(st, STSHIFT));
    PetscCall(TrySolve(eps, &ierr));
    PetscCall(EPSGetConverged(eps, &nall));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " eigenvalues in [1, 3]", nall));
    PetscCall(Check((PetscBool)(!ierr && nall > 0), "  then with STSHIFT the same EPS computes the interval", detail));
  }
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then which = largest_real on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_IMAGINARY));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "which = largest_imaginary is refused (by SLEPc)", "imaginary"));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then which = largest_real on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* Harmonic extraction. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetExtraction(eps, EPS_HARMONIC));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "harmonic extraction is refused", "extraction"));
  PetscCall(EPSSetExtraction(eps, EPS_RITZ));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then Ritz extraction on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* Balancing. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetBalance(eps, EPS_BALANCE_TWOSIDE, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "balancing is refused", "balancing"));
  PetscCall(EPSSetBalance(eps, EPS_BALANCE_NONE, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then no balancing on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* Arbitrary selection. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetArbitrarySelection(eps, Arbitrary, NULL));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "arbitrary selection is refused", "arbitrary"));
  PetscCall(EPSSetArbitrarySelection(eps, NULL, NULL));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then no arbitrary selection on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* A region (an RG interval). */
  {
    RG rg;
    PetscCall(NewEPS(A, nev, &eps));
    PetscCall(EPSGetRG(eps, &rg));
    PetscCall(RGSetType(rg, RGINTERVAL));
    PetscCall(RGIntervalSetEndpoints(rg, 1.0, 3.0, -1.0, 1.0));
    PetscCall(TrySolve(eps, &ierr));
    PetscCall(ExpectFailure(ierr, "a region (RG interval [1,3]) is refused", "region"));
    PetscCall(RGIntervalSetEndpoints(rg, -PETSC_MAX_REAL, PETSC_MAX_REAL, -PETSC_MAX_REAL, PETSC_MAX_REAL));
    PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the trivial region on the same EPS solves"));
    PetscCall(EPSDestroy(&eps));
  }

#if SLEPC_VERSION_GE(3, 26, 0)
  /* The threshold stopping test (every eigenvalue beyond a value; SLEPc 3.26 has it) is solved in chunks
     (tests/petsc/test_interval); with a target it is refused, where it would be met at nev pairs and
     return too few without a word. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetThreshold(eps, 0.5, PETSC_FALSE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_TARGET_MAGNITUDE));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "the threshold stopping test with a target is refused", "threshold"));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetStoppingTest(eps, EPS_STOP_BASIC));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the basic stopping test on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));
#endif

  /* Two-sided (left eigenvectors). */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSetTwoSided(eps, PETSC_TRUE));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "two-sided is refused (by SLEPc for symmetric problems)", "Two-sided"));
  PetscCall(EPSSetTwoSided(eps, PETSC_FALSE));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then one-sided on the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  /* Option values that do not exist. */
  {
    const char *options[] = {"-eps_cudalanczos_variant", "-eps_cudalanczos_reorthog", "-eps_cudalanczos_backend", "-eps_cudalanczos_kernels"};
    char        name[128];
    for (i = 0; i < 4; ++i) {
      PetscCall(NewEPS(A, nev, &eps));
      PetscCall(PetscOptionsSetValue(NULL, options[i], "bogus"));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = EPSSetFromOptions(eps);
      PetscCall(PetscPopErrorHandler());
      PetscCall(PetscOptionsClearValue(NULL, options[i]));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s bogus is refused by EPSSetFromOptions", options[i]));
      PetscCall(ExpectFailure(ierr, name, "bogus"));
      PetscCall(EPSSetFromOptions(eps));
      PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the same EPS solves once the option is gone"));
      PetscCall(EPSDestroy(&eps));
    }
  }

  /* Enum values that do not exist, from C (a cast int): refused by the setter with the valid values
     named, the EPS keeps its setting and solves. */
  for (i = 0; i < 4; ++i) {
    static const char *names[] = {"EPSCUDALanczosSetVariant(7) is refused", "EPSCUDALanczosSetReorthog(-1) is refused",
                                  "EPSCUDALanczosSetBackend(3) is refused", "EPSCUDALanczosSetKernels(9) is refused"};
    static const char *keywords[] = {"thesis", "partial", "cuda", "vendor"};
    PetscCall(NewEPS(A, nev, &eps));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    if (i == 0) ierr = EPSCUDALanczosSetVariant(eps, (EPSCUDALanczosVariant)7);
    if (i == 1) ierr = EPSCUDALanczosSetReorthog(eps, (EPSCUDALanczosReorthog)-1);
    if (i == 2) ierr = EPSCUDALanczosSetBackend(eps, (EPSCUDALanczosBackend)3);
    if (i == 3) ierr = EPSCUDALanczosSetKernels(eps, (EPSCUDALanczosKernels)9);
    PetscCall(PetscPopErrorHandler());
    PetscCall(ExpectFailure(ierr, names[i], keywords[i]));
    { /* -eps_view indexes the name tables with the kept values */
      PetscBool found;
      PetscCall(ViewLine(eps, "variant: thick-restart", NULL, 0, &found));
      PetscCall(Check(found, "  -eps_view shows the setting kept", found ? "variant: thick-restart" : "no such line"));
    }
    PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the same EPS solves with its earlier setting"));
    PetscCall(EPSDestroy(&eps));
  }

  /* A non-square operator: SLEPc's EPSSetOperators refuses it. */
  {
    Mat R;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n - 10, 1, NULL, 1, NULL, &R));
    PetscCall(MatAssemblyBegin(R, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(R, MAT_FINAL_ASSEMBLY));
    PetscCall(NewEPS(A, nev, &eps));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = EPSSetOperators(eps, R, NULL);
    PetscCall(PetscPopErrorHandler());
    PetscCall(ExpectFailure(ierr, "a non-square operator (30 x 20) is refused by EPSSetOperators", "square"));
    PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the same EPS still solves the square problem"));
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  and again after EPSSetOperators with the square matrix"));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&R));
  }

  /* NaN / Inf in the matrix: an error, then the repaired matrix (EPSSetOperators again) solves. */
  {
    const PetscScalar bad[]   = {NAN, INFINITY, -INFINITY};
    const char       *names[] = {"NaN in the matrix is refused", "Inf in the matrix is refused", "-Inf in the matrix is refused"};
    for (i = 0; i < 3; ++i) {
      Mat C;
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
      PetscCall(NewEPS(C, nev, &eps));
      PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  a first solve before the matrix goes bad"));
      PetscCall(SetEntry(C, n - 1 - 3 * i, n - 1 - 3 * i, bad[i]));
      PetscCall(EPSSetOperators(eps, C, NULL));
      PetscCall(TrySolve(eps, &ierr));
      PetscCall(ExpectFailure(ierr, names[i], "NaN or Inf"));
      PetscCall(SetEntry(C, n - 1 - 3 * i, n - 1 - 3 * i, 2.0));
      PetscCall(EPSSetOperators(eps, C, NULL));
      PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  then the repaired matrix on the same EPS solves"));
      PetscCall(EPSDestroy(&eps));
      PetscCall(MatDestroy(&C));
    }
  }

  /* NaN / Inf appearing during the iteration: a MATSHELL diag(1..n) whose 5th product on is bad. */
  {
    const PetscScalar bad[]   = {NAN, INFINITY};
    const char       *names[] = {"NaN from the 5th product on (MATSHELL) is refused", "Inf from the 5th product on (MATSHELL) is refused"};
    PetscReal         diag[3] = {n, n - 1, n - 2};
    for (i = 0; i < 2; ++i) {
      ShellCtx ctx = {0, 5, bad[i]};
      Mat      S;
      char     detail[64];
      PetscCall(DiagonalShell(n, &ctx, &S));
      PetscCall(NewEPS(S, nev, &eps));
      PetscCall(TrySolve(eps, &ierr));
      PetscCall(ExpectFailure(ierr, names[i], "NaN or Inf"));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " products", ctx.products));
      PetscCall(Check((PetscBool)(ctx.products >= 5 && ctx.products < 100), "  it stopped soon after the bad product", detail));
      ctx.bad_from = 0; /* the operator is healthy again: solve on the same EPS, no other call */
      PetscCall(SolveAndCheck(eps, nev, diag, 1e-10, "  then the healthy operator on the same EPS solves"));
      PetscCall(EPSDestroy(&eps));
      PetscCall(MatDestroy(&S));
    }
  }

  /* Inf from the 20th product on, the operator's scale far from 1 (1e-300 and 1e300: scaled into range
     from a product, MATSHELL has no MatNorm): still an error naming NaN/Inf, soon after it. */
  {
    const PetscReal scales[] = {1e-300, 1e300};
    for (i = 0; i < 2; ++i) {
      ShellCtx ctx = {0, 20, INFINITY};
      Mat      S;
      char     detail[64], name[128];
      PetscCall(DiagonalShell(n, &ctx, &S));
      PetscCall(MatScale(S, scales[i]));
      PetscCall(NewEPS(S, nev, &eps));
      PetscCall(TrySolve(eps, &ierr));
      PetscCall(PetscSNPrintf(name, sizeof(name), "Inf from the 20th product on, diag(1..n) times %g (MATSHELL), is refused", (double)scales[i]));
      PetscCall(ExpectFailure(ierr, name, "NaN or Inf"));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " products", ctx.products));
      PetscCall(Check((PetscBool)(ctx.products >= 20 && ctx.products < 100), "  it stopped soon after the bad product", detail));
      PetscCall(EPSDestroy(&eps));
      PetscCall(MatDestroy(&S));
    }
  }

  /* After EPSReset the operators are gone: EPSSolve is an error, not a crash; EPSSetOperators revives it. */
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "EPSReset: a first solve"));
  PetscCall(EPSReset(eps));
  PetscCall(TrySolve(eps, &ierr));
  PetscCall(ExpectFailure(ierr, "  EPSSolve after EPSReset without operators is an error", NULL));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "  EPSSetOperators after EPSReset, then the same EPS solves"));
  PetscCall(EPSDestroy(&eps));

  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* --- entries outside the comfortable range (issue 21) --------------------------------------------- */

/* The Laplacian of order n times 1e-310 (every entry subnormal, the eigenvalues too: right to about their
   last bit, 2^-1074, or to 1e-9 relative where they have more bits); and the Laplacian with 1e-200 and
   subnormal 4e-320 entries beside its own (no scaling needed: the answer is the Laplacian's, to rounding).
   Both against the closed form. */
static PetscErrorCode MagnitudeCases(void)
{
  const PetscInt n = 40, nev = 4;
  Mat            A;
  EPS            eps;
  PetscInt       i, rstart, rend, nconv;
  PetscReal      worst;
  char           detail[256];

  PetscFunctionBeginUser;
  PetscCall(Laplacian(n, &A));
  PetscCall(MatScale(A, 1e-310));
  PetscCall(NewEPS(A, nev, &eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  worst = 0;
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar kr;
    PetscReal   want = 1e-310 * LaplacianLargest(n, i); /* the stored entries are 2e-310 and -1e-310 rounded: a relative 1e-13 */
    PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
    worst = PetscMax(worst, PetscAbsReal(PetscRealPart(kr) - want) / (4 * DBL_TRUE_MIN + 1e-9 * want)); /* ULP of a subnormal */
  }
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", worst error %.2g of the allowance", nconv, (double)worst));
  PetscCall(Check((PetscBool)(nconv >= nev && worst <= 1), "Laplacian times 1e-310 (all entries subnormal): eigenvalues right", detail));
  {
    PetscBool found;
    char      line[256];
    PetscCall(ViewLine(eps, "operator scaled by 2^", line, sizeof(line), &found));
    PetscCall(Check(found, "  -eps_view reports the scaling", found ? line : "no such line"));
  }
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));

  /* The symmetry probe (-eps_cudalanczos_check_symmetry) on the Laplacian times 1e-300 and 1e300: its dot
     products and norms are taken on products scaled into range, so a symmetric matrix passes it. */
  {
    const PetscReal scales[] = {1e-300, 1e300};
    for (int c = 0; c < 2; ++c) {
      PetscErrorCode ierr;
      char           name[128];
      PetscCall(Laplacian(n, &A));
      PetscCall(MatScale(A, scales[c]));
      PetscCall(NewEPS(A, nev, &eps));
      PetscCall(EPSCUDALanczosSetCheckSymmetry(eps, PETSC_TRUE));
      PetscCall(TrySolve(eps, &ierr));
      worst = 0;
      nconv = 0;
      if (!ierr) PetscCall(EPSGetConverged(eps, &nconv));
      for (i = 0; !ierr && i < PetscMin(nconv, nev); ++i) {
        PetscScalar kr;
        PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
        worst = PetscMax(worst, PetscAbsReal(PetscRealPart(kr) / scales[c] / LaplacianLargest(n, i) - 1));
      }
      PetscCall(PetscSNPrintf(name, sizeof(name), "Laplacian times %g with the symmetry probe: passes it and solves", (double)scales[c]));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "error %d, nconv %" PetscInt_FMT ", worst relative eigenvalue error %.2g", (int)ierr, nconv, (double)worst));
      PetscCall(Check((PetscBool)(!ierr && nconv >= nev && worst < 1e-10), name, detail));
      if (!ierr) { /* the probe's products where the solve's: on the device when one process solves there (its copy of A) */
        PetscBool   probed, on_cuda;
        PetscMPIInt size;
        char        line[256];
        PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
        PetscCall(ViewLine(eps, "backend used: cuda", NULL, 0, &on_cuda));
        PetscCall(ViewLine(eps, "symmetry probe: passed", line, sizeof(line), &probed));
        const PetscBool device_products = (PetscBool)(probed && strstr(line, "products on the device") != NULL);
        PetscCall(PetscSNPrintf(name, sizeof(name), "Laplacian times %g: -eps_view says the probe passed, its products %s", (double)scales[c],
                                on_cuda && size == 1 ? "on the device" : "by MatMult"));
        PetscCall(Check((PetscBool)(probed && device_products == (on_cuda && size == 1)), name, probed ? line : "no such line"));
      }
      PetscCall(EPSDestroy(&eps));
      PetscCall(MatDestroy(&A));
    }
  }

  {
    PetscReal expected[8];
    PetscCall(Laplacian(n, &A));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
    for (i = rstart; i < rend; ++i) {
      if (i + 3 < n) PetscCall(MatSetValue(A, i, i + 3, 1e-200, INSERT_VALUES));
      if (i >= 3) PetscCall(MatSetValue(A, i, i - 3, 1e-200, INSERT_VALUES));
      if (i + 5 < n) PetscCall(MatSetValue(A, i, i + 5, 4e-320, INSERT_VALUES));
      if (i >= 5) PetscCall(MatSetValue(A, i, i - 5, 4e-320, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    for (i = 0; i < nev; ++i) expected[i] = LaplacianLargest(n, i);
    PetscCall(NewEPS(A, nev, &eps));
    PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "entries 1e-200 and 4e-320 (subnormal) beside the Laplacian's: eigenvalues right"));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(0);
}

/* --- reusing one EPS ------------------------------------------------------------------------------ */

static PetscErrorCode ReuseCases(void)
{
  const PetscInt n = 40, nev = 4;
  Mat            A;
  EPS            eps;
  PetscReal      expected[8], ref[8];
  PetscInt       i, rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(Laplacian(n, &A));
  PetscCall(NewEPS(A, nev, &eps));
  for (i = 0; i < nev; ++i) expected[i] = LaplacianLargest(n, i);
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "reuse: first solve, Laplacian n=40"));
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "reuse: EPSSolve again, nothing changed"));

  /* New values, same pattern. SLEPc's EPSSolve does nothing when the EPS is already solved: the
     documented way to say the matrix changed is EPSSetOperators (here with the same Mat). */
  PetscCall(MatScale(A, 2.0));
  PetscCall(EPSSetOperators(eps, A, NULL));
  for (i = 0; i < nev; ++i) expected[i] = 2 * LaplacianLargest(n, i);
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "reuse: matrix scaled by 2, eigenvalues double"));
  PetscCall(MatShift(A, 1.0));
  PetscCall(EPSSetOperators(eps, A, NULL));
  for (i = 0; i < nev; ++i) expected[i] = 2 * LaplacianLargest(n, i) + 1;
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "reuse: then shifted by 1 (MatShift), eigenvalues + 1"));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  /* every value back to the Laplacian's, entry by entry */
  for (i = rstart; i < rend; ++i) PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  for (i = rstart; i < rend; ++i) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(EPSSetOperators(eps, A, NULL));
  for (i = 0; i < nev; ++i) expected[i] = LaplacianLargest(n, i);
  PetscCall(SolveAndCheck(eps, nev, expected, 1e-10, "reuse: values set back with MatSetValues"));

  /* A different nonzero pattern: new entries (i, i+2) and (i+2, i); reference krylovschur. */
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (i = rstart; i < rend; ++i) {
    if (i + 2 < n) PetscCall(MatSetValue(A, i, i + 2, -0.5, INSERT_VALUES));
    if (i >= 2) PetscCall(MatSetValue(A, i, i - 2, -0.5, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(Reference(A, nev, ref));
  PetscCall(SolveAndCheck(eps, nev, ref, 1e-9, "reuse: new nonzero pattern (pentadiagonal), against krylovschur"));

  /* EPSSetOperators with matrices of other sizes. On a solved EPS it resets the EPS (the default ncv and
     mpd of the larger problem stay behind); after a settings change (EPSSetDimensions first) SLEPc does
     not reset it and a basis of the old size is left. SLEPc clamps nev to n, for good: nev is set again
     after the tiny sizes. */
  {
    const PetscInt  sizes[] = {70, 7, 25, 2, 1, 50};
    const PetscBool before[] = {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE};
    char            name[160];
    for (PetscInt k = 0; k < 6; ++k) {
      Mat            C;
      const PetscInt m = sizes[k], want = PetscMin(nev, m);
      PetscCall(Laplacian(m, &C));
      if (before[k]) PetscCall(EPSSetDimensions(eps, want, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetOperators(eps, C, NULL));
      if (!before[k] && m < nev) PetscCall(EPSSetDimensions(eps, want, PETSC_DETERMINE, PETSC_DETERMINE));
      for (i = 0; i < want; ++i) expected[i] = m == 1 ? 2.0 : LaplacianLargest(m, i);
      PetscCall(PetscSNPrintf(name, sizeof(name), "reuse: EPSSetOperators with a %" PetscInt_FMT "x%" PetscInt_FMT " Laplacian%s", m, m,
                              before[k] ? " (after EPSSetDimensions)" : " (on the solved EPS)"));
      PetscCall(SolveAndCheck(eps, want, expected, 1e-10, name));
      PetscCall(MatDestroy(&C));
    }
  }

  /* EPSReset, then the same settings again. */
  PetscCall(EPSReset(eps));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(SolveAndCheck(eps, nev, ref, 1e-9, "reuse: EPSReset + EPSSetOperators, same settings"));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));

  /* All eigenvalues equal: 3 I, largest and smallest. */
  {
    Mat       C;
    PetscReal three[8] = {3, 3, 3, 3, 3, 3, 3, 3};
    PetscCall(ScaledIdentity(60, 3.0, &C));
    PetscCall(NewEPS(C, nev, &eps));
    PetscCall(SolveAndCheck(eps, nev, three, 1e-12, "all-equal eigenvalues 3*I n=60, 4 largest"));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
    PetscCall(EPSSetDimensions(eps, 8, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(SolveAndCheck(eps, 8, three, 1e-12, "all-equal eigenvalues 3*I n=60, 8 smallest"));
    PetscCall(EPSCUDALanczosSetVariant(eps, EPS_CUDALANCZOS_THESIS));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
    PetscCall(EPSSetDimensions(eps, 1, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(SolveAndCheck(eps, 1, three, 1e-12, "all-equal eigenvalues 3*I n=60, thesis variant"));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&C));
  }
  PetscFunctionReturn(0);
}

/* On the GPU: a basis beyond the device's memory (ncv 20000 columns of 2e6 rows, 320 GB) is refused before
   the solve with a PETSc error naming its size, and the EPS stays destroyable. Skipped where a solve here
   runs on the host (the host backend would try to allocate it). */
static PetscErrorCode DeviceMemoryCase(void)
{
  Mat         A;
  EPS         eps;
  const char *used = "";
  PetscBool   cuda;

  PetscFunctionBeginUser;
  PetscCall(Laplacian(30, &A));
  PetscCall(NewEPS(A, 1, &eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
  cuda = strcmp(used, "cuda") == 0 ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  if (!cuda) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# skipped: a basis beyond the device memory (the solves here run on the host)\n"));
    PetscFunctionReturn(0);
  }
  PetscCall(ScaledIdentity(2000000, 1.0, &A));
  PetscCall(NewEPS(A, 1, &eps));
  PetscCall(EPSSetDimensions(eps, 1, 20000, PETSC_DETERMINE));
  PetscCall(CheckSolveRefused(eps, "a basis beyond the device memory (ncv 20000 of 2e6 rows)"));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "EPSCUDALANCZOS robustness"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(ErrorCases());
  PetscCall(BVBeyondIndexRange());
  PetscCall(MagnitudeCases());
  PetscCall(ReuseCases());
  PetscCall(DeviceMemoryCase());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
