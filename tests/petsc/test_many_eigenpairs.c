/*
   Many eigenpairs: nev (default 200) largest of a sparse symmetric matrix with n (default 10^5) rows,
   checked against the eigenvalues known by construction and by their true residuals.

   The matrix: tridiagonal, diagonal d_i = 10 + (i mod nev_out) for the first nev_out = nev + 20 rows
   (well separated "outliers" spaced by 1) and d_i in [0, 1) for the rest, off-diagonal 1e-3 coupling
   neighbours (rows whose diagonals differ by at least ~1, so the eigenvalues move by O(1e-6) at most:
   each outlier eigenvalue lies within 2e-3 of its diagonal entry, which is what is checked, while the
   solver's own accuracy is checked through the true residual).

   -check_mpd M: also checks the cycle's bound. The solve's dimensions must be SLEPc's (nev >= 500: ncv
   nev + 500, mpd 500; else the mpd given by -eps_mpd, M), and -eps_view's projected problems must be of
   order M at most.
   -check_block B: also checks the block size in effect (the solver's choice unless
   -eps_cudalanczos_block_size sets it): 8 for nev >= 500 on GPUs (any number of ranks) in real arithmetic,
   1 on the host.

     test_many_eigenpairs [-n 100000] [-nev 200] [-check_mpd M] [-check_block B]
*/
#include "test_support.h"

#include <stdlib.h>

/* The largest order of the projected problems that -eps_view reports ("projected problems: ... of order
   K at most"); -1 if the line is missing. */
static PetscErrorCode ProjectedOrder(EPS eps, PetscInt *order)
{
  char        line[1024];
  const char *of;
  PetscBool   found;

  PetscFunctionBeginUser;
  PetscCall(ViewLine(eps, "projected problems:", line, sizeof(line), &found));
  of     = found ? strstr(line, "of order ") : NULL;
  *order = of ? (PetscInt)atoi(of + strlen("of order ")) : -1;
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A;
  EPS         eps;
  PetscInt    n = 100000, nev = 200, i, rstart, rend, nconv, its, bad = 0, outliers, check_mpd = 0, check_block = 0, block;
  PetscReal   worst = 0, worst_pos = 0;
  const char *backend = "-";
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "many eigenpairs"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nev", &nev, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-check_mpd", &check_mpd, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-check_block", &check_block, NULL));
  outliers = nev + 20;

  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 3, NULL, 2, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    /* outliers at rows 0, 2, 4, ... (interleaved with the bulk so neighbours always differ) */
    PetscReal d = (i % 2 == 0 && i / 2 < outliers) ? 10.0 + (PetscReal)(i / 2) : (PetscReal)((i * 7919) % 1000) / 1000.0;
    PetscCall(MatSetValue(A, i, i, d, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, 1e-3, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, 1e-3, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));

  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetType(eps, EPSCUDALANCZOS));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(eps, 1e-8, 1000));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(EPSGetIterationNumber(eps, &its));
  PetscCall(EPSCUDALanczosGetBackendInUse(eps, &backend));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar k;
    PetscReal   err, expect = 10.0 + (PetscReal)(outliers - 1 - i);
    PetscCall(EPSGetEigenvalue(eps, i, &k, NULL));
    PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
    worst     = PetscMax(worst, err);
    worst_pos = PetscMax(worst_pos, PetscAbsReal(PetscRealPart(k) - expect));
    if (err > 1e-7 || PetscAbsReal(PetscRealPart(k) - expect) > 2e-3) ++bad;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "n %" PetscInt_FMT ", nev %" PetscInt_FMT ": %" PetscInt_FMT " converged in %" PetscInt_FMT " restarts on %s; max true residual %.2e, max |lambda - diagonal| %.2e\n", n, nev,
                        nconv, its, backend, (double)worst, (double)worst_pos));
  PetscBool dims_ok = PETSC_TRUE;
  if (check_mpd > 0) {
    PetscInt nev_set, ncv, mpd, order;
    PetscCall(EPSGetDimensions(eps, &nev_set, &ncv, &mpd));
    PetscCall(ProjectedOrder(eps, &order));
    if (nev >= 500 && (ncv != PetscMin(n, nev + 500) || mpd != 500)) dims_ok = PETSC_FALSE;
    if (mpd != check_mpd || order < 1 || order > check_mpd) dims_ok = PETSC_FALSE;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ncv %" PetscInt_FMT ", mpd %" PetscInt_FMT ", projected problems of order %" PetscInt_FMT " at most (bound %" PetscInt_FMT "): %s\n", ncv, mpd,
                          order, check_mpd, dims_ok ? "as expected" : "WRONG"));
  }
  PetscCall(EPSCUDALanczosGetBlockSize(eps, &block));
  if (check_block > 0) {
    if (block != check_block) dims_ok = PETSC_FALSE;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "block size %" PetscInt_FMT " (expected %" PetscInt_FMT ")\n", block, check_block));
  }
  const PetscBool ok = (PetscBool)(nconv >= nev && bad == 0 && dims_ok);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s 1 - %" PetscInt_FMT " largest eigenpairs of a %" PetscInt_FMT "-row sparse matrix\n%d passed, %d failed\n", ok ? "ok" : "not ok", nev, n, ok ? 1 : 0, ok ? 0 : 1));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(SlepcFinalize());
  return ok ? 0 : 1;
}
