/*
   What the PETSc-level test programs share: TAP-like check lines (each program ends with the
   "N passed, M failed" line CI reads), and the deliberately uneven row layout (rank r owns a share
   proportional to r + 1).
*/
#ifndef CUDALANCZOS_TEST_SUPPORT_H
#define CUDALANCZOS_TEST_SUPPORT_H

#include <slepccudalanczos.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Spelled as each PETSc release wants: Debian's 3.18 and current ones */
#if PETSC_VERSION_GE(3, 24, 0)
#define TEST_MPI_BOOL MPI_C_BOOL
#else
#define TEST_MPI_BOOL MPIU_BOOL
#endif
#if PETSC_VERSION_GE(3, 19, 0)
typedef const char *TEST_ERROR_TEXT; /* PetscErrorMessage's specific message */
#else
typedef char *TEST_ERROR_TEXT;
#endif

static int failures = 0, checks = 0;

/* One "ok N - name: detail" or "not ok N - ..." line; counts failures for TestSummary(). */
static PetscErrorCode Check(PetscBool cond, const char *name, const char *detail)
{
  PetscFunctionBeginUser;
  ++checks;
  if (!cond) ++failures;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %d - %s%s%s\n", cond ? "ok" : "not ok", checks, name, detail && detail[0] ? ": " : "", detail ? detail : ""));
  PetscFunctionReturn(0);
}

/* EPSSolve must fail with a PETSc error (bad input: an unsupported problem, a non-symmetric matrix); the EPS
   stays destroyable. One check, named `name`. */
static inline PetscErrorCode CheckSolveRefused(EPS eps, const char *name)
{
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = EPSSolve(eps);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Check((PetscBool)(ierr != 0), name, ierr ? "refused with a PETSc error" : "was accepted"));
  PetscFunctionReturn(0);
}

/* An EPS of type `type` on A (standard problem) with problem type `problem`, the rest left to each test. */
static inline PetscErrorCode CreateEPS(Mat A, EPSProblemType problem, EPSType type, EPS *eps)
{
  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, eps));
  PetscCall(EPSSetOperators(*eps, A, NULL));
  PetscCall(EPSSetProblemType(*eps, problem));
  PetscCall(EPSSetType(*eps, type));
  PetscFunctionReturn(0);
}

/* This rank's rows of n, proportional to rank + 1 (rank 0 may get none when n is tiny). */
static inline PetscErrorCode UnevenLocalRows(PetscInt n, PetscInt *nloc)
{
  PetscMPIInt rank, size;
  PetscInt    total, before = 0, r;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  total = (PetscInt)size * (size + 1) / 2;
  for (r = 0; r < rank; ++r) before += n * (r + 1) / total;
  *nloc = (rank == size - 1) ? n - before : n * (rank + 1) / total;
  PetscFunctionReturn(0);
}

/* The first line of eps's ASCII -eps_view output that contains `needle`, from the needle on, into
   `text` (len bytes; may be NULL); *found says whether there is one. Written to a file, read back on rank
   0, broadcast. */
static inline PetscErrorCode ViewLine(EPS eps, const char *needle, char *text, size_t len, PetscBool *found)
{
  char        path[PETSC_MAX_PATH_LEN], line[1024];
  PetscMPIInt rank;
  PetscViewer v;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  *found = PETSC_FALSE;
  if (text) text[0] = 0;
  if (!rank) PetscCall(PetscSNPrintf(path, sizeof(path), "/tmp/cudalanczos_test_view_%d.txt", (int)getpid()));
  PetscCallMPI(MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, path, &v));
  PetscCall(EPSView(eps, v));
  PetscCall(PetscViewerDestroy(&v));
  if (!rank) {
    FILE *f = fopen(path, "r");
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot read back %s", path);
    while (!*found && fgets(line, sizeof(line), f)) {
      char *at = strstr(line, needle);
      line[strcspn(line, "\n")] = 0;
      if (at) {
        *found = PETSC_TRUE;
        if (text) PetscCall(PetscStrncpy(text, at, len));
      }
    }
    fclose(f);
    unlink(path);
  }
  PetscCallMPI(MPI_Bcast(found, 1, TEST_MPI_BOOL, 0, PETSC_COMM_WORLD));
  if (text) PetscCallMPI(MPI_Bcast(text, (PetscMPIInt)len, MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}


/* The first nev eigenpairs of a solved eps (nev <= its converged count) measured against reference
   eigenvalues lr[0..nev-1] of A x = lambda B x (B NULL: the identity), each a worst case over the pairs:
   diff |lambda_i - lr_i| / max|lr|, res ||A x_i - lambda_i B x_i|| / (|lambda_i| ||x_i||),
   orth |x_j^H B x_i - delta_ij| (j <= i), imag max(|Im lambda_i|, |eigi|). */
static inline PetscErrorCode MeasurePairs(EPS eps, Mat A, Mat B, PetscInt nev, const PetscScalar *lr, PetscReal *diff, PetscReal *res, PetscReal *orth,
                                          PetscReal *imag)
{
  Vec         *x, Ax, Bx;
  PetscScalar *lc;
  PetscReal    scale = 0;
  PetscInt     i, j;

  PetscFunctionBeginUser;
  *diff = *res = *orth = *imag = 0;
  PetscCall(PetscMalloc2(nev, &x, nev, &lc));
  PetscCall(MatCreateVecs(A, &Ax, &Bx));
  for (i = 0; i < nev; ++i) {
    PetscScalar ki;
    PetscCall(MatCreateVecs(A, &x[i], NULL));
    PetscCall(EPSGetEigenpair(eps, i, &lc[i], &ki, x[i], NULL));
    *imag = PetscMax(*imag, PetscMax(PetscAbsReal(PetscImaginaryPart(lc[i])), PetscAbsScalar(ki)));
    scale = PetscMax(scale, PetscAbsScalar(lr[i]));
  }
  for (i = 0; i < nev; ++i) {
    PetscReal rn, xn;
    *diff = PetscMax(*diff, PetscAbsScalar(lc[i] - lr[i]) / scale);
    PetscCall(MatMult(A, x[i], Ax));
    if (B) PetscCall(MatMult(B, x[i], Bx));
    else PetscCall(VecCopy(x[i], Bx));
    for (j = 0; j <= i; ++j) {
      PetscScalar d;
      PetscCall(VecDot(Bx, x[j], &d)); /* x_j^H B x_i */
      *orth = PetscMax(*orth, PetscAbsScalar(d - (i == j ? 1.0 : 0.0)));
    }
    PetscCall(VecAXPY(Ax, -lc[i], Bx));
    PetscCall(VecNorm(Ax, NORM_2, &rn));
    PetscCall(VecNorm(x[i], NORM_2, &xn));
    *res = PetscMax(*res, rn / (PetscAbsScalar(lc[i]) * xn));
  }
  for (i = 0; i < nev; ++i) PetscCall(VecDestroy(&x[i]));
  PetscCall(VecDestroy(&Ax));
  PetscCall(VecDestroy(&Bx));
  PetscCall(PetscFree2(x, lc));
  PetscFunctionReturn(0);
}

#endif
