/*
   What the PETSc-level test programs share: TAP-like check lines (each program ends with the
   "N passed, M failed" line CI reads), and the deliberately uneven row layout (rank r owns a share
   proportional to r + 1).
*/
#ifndef CUDALANCZOS_TEST_SUPPORT_H
#define CUDALANCZOS_TEST_SUPPORT_H

#include <slepccudalanczos.h>

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

#endif
