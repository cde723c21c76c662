/*
   Generalized problems A x = lambda B x at the PETSc boundary: whether B is diagonal, the check that B (or
   the BV's inner-product matrix) can define an inner product, and the congruence that turns a diagonal
   B's problem into a standard one. Each result is kept with the EPS while its matrices are unchanged
   (ctx->cache), and decided by all ranks together.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#include <algorithm>

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

PetscErrorCode EPSCUDALanczosObjectKey(PetscObject obj, PetscInt64 key[2])
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
PetscErrorCode EPSCUDALanczosCheckInnerProductMatrix(EPS eps, Mat B)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscInt64       of[2];
  Vec              d;

  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosObjectKey((PetscObject)B, of));
  PetscBool checked = std::equal(of, of + 2, ctx->cache.ipmat_checked_of) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &checked, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (checked) PetscFunctionReturn(0);
  PetscCall(MatCreateVecs(B, &d, nullptr));
  PetscErrorCode ierr = CheckDiagonal(eps, B, d, PETSC_FALSE, eps->isgeneralized ? "EPS_GHEP" : "the BV's inner-product matrix");
  PetscCall(VecDestroy(&d));
  PetscCall(ierr);
  std::copy(of, of + 2, ctx->cache.ipmat_checked_of);
  PetscFunctionReturn(0);
}

// ctx->cache.congruent = B^-1/2 A B^-1/2 and ctx->cache.b_isqrt = diag(B)^-1/2, kept while A and B are the same
// objects in the same state. A diagonal entry of B that is not positive is an error. Collective.
PetscErrorCode EPSCUDALanczosCongruence(EPS eps, Mat A, Mat B)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscInt64       of[4];

  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosObjectKey((PetscObject)A, of));
  PetscCall(EPSCUDALanczosObjectKey((PetscObject)B, of + 2));
  // Kept or rebuilt by all ranks together: the rebuild is collective, and Mat states are per process.
  PetscBool kept = ctx->cache.congruent && std::equal(of, of + 4, ctx->cache.congruent_of) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &kept, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (kept) PetscFunctionReturn(0);
  PetscCall(MatDestroy(&ctx->cache.congruent));
  PetscCall(VecDestroy(&ctx->cache.b_isqrt));
  PetscCall(MatCreateVecs(B, &ctx->cache.b_isqrt, nullptr));
  { // positive definite: every diagonal entry real and positive (B is diagonal here: the whole condition)
    PetscErrorCode ierr = CheckDiagonal(eps, B, ctx->cache.b_isqrt, PETSC_TRUE, "EPS_GHEP with STSHIFT");
    if (ierr) PetscCall(VecDestroy(&ctx->cache.b_isqrt));
    PetscCall(ierr);
  }
  PetscCall(VecSqrtAbs(ctx->cache.b_isqrt));
  PetscCall(VecReciprocal(ctx->cache.b_isqrt));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &ctx->cache.congruent));
  PetscCall(MatDiagonalScale(ctx->cache.congruent, ctx->cache.b_isqrt, ctx->cache.b_isqrt));
  std::copy(of, of + 4, ctx->cache.congruent_of);
  PetscFunctionReturn(0);
}
