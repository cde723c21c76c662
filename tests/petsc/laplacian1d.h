/*
   The 1-D Laplacian tridiag(-1, 2, -1) of order n (SLEPc's ex1): eigenvalues 2 - 2 cos(k pi / (n + 1)),
   k = 1..n. A header of its own, without the plugin's: test_plugin_load is built without it.
*/
#pragma once

#include <petscmat.h>

/* Each rank's rows of the Laplacian of order n into A, created with its layout by the caller; assembled. */
static inline PetscErrorCode Laplacian1dFill(Mat A, PetscInt n)
{
  PetscInt rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* The Laplacian of order n with PETSc's row layout, of the type the options name (MatSetFromOptions). */
static inline PetscErrorCode Laplacian1d(MPI_Comm comm, PetscInt n, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatSetUp(*A));
  PetscCall(Laplacian1dFill(*A, n));
  PetscFunctionReturn(0);
}
