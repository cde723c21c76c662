/*
   Generalized Hermitian problems (EPS_GHEP, A x = lambda B x with B symmetric positive definite) with
   EPSCUDALANCZOS through SLEPc's ST: STSHIFT (operator B^-1 A) and STSINVERT (operator (A - sigma B)^-1 B),
   against krylovschur with the same ST and KSP in the same program. Checked for each case: the nev
   eigenvalues agree with krylovschur's, each returned pair has a small relative true residual
   ||A x - lambda B x|| / (|lambda| ||x||), and the vectors are B-orthonormal (x_i^T B x_j = delta_ij).
   Pencils: a 1-D finite-element pencil (stiffness tridiag(-1, 2, -1), consistent mass tridiag(1, 4, 1)/6)
   and a diagonal B. Bad input: EPS_GHIEP and a B that is not positive definite get a PETSc error.
   The host backend always; the CUDA backend too where a GPU is present (backend "auto" picks it), skipped
   otherwise. Runs on any number of ranks (uneven row layouts). Also a standard problem in a B-inner product
   (EPS_HEP on B^-1 A with BVSetMatrix(B), as SLEPc's ex47).
*/
#include "test_support.h"

#include <math.h>

typedef enum { MASS_CONSISTENT, MASS_DIAGONAL, MASS_INDEFINITE, MASS_CONSISTENT_INDEFINITE } MassKind;

/* The pencil as a CUDA PETSc's device Mats (MATAIJCUSPARSE): the ST then solves on the device, and the
   solver must keep its columns there (STApply on VECCUDA placed over them, B's products on one rank by
   its own device operator). Set per pass in main. */
static PetscBool device_mats = PETSC_FALSE;

/* The stiffness tridiag(-1, 2, -1) * (n+1) and mass: consistent tridiag(1, 4, 1) / (6 (n+1)), diagonal with
   entries 1 + (i mod 3) / 2, or either with one negative diagonal entry. */
static PetscErrorCode BuildPencil(PetscInt n, MassKind kind, Mat *A, Mat *B)
{
  PetscInt    nloc, rstart, rend, i;
  const PetscReal h = 1.0 / (PetscReal)(n + 1);

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 3, NULL, 2, NULL, A));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 3, NULL, 2, NULL, B));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    PetscCall(MatSetValue(*A, i, i, 2.0 / h, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0 / h, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0 / h, INSERT_VALUES));
    if (kind == MASS_CONSISTENT || kind == MASS_CONSISTENT_INDEFINITE) {
      PetscCall(MatSetValue(*B, i, i, (kind == MASS_CONSISTENT_INDEFINITE && i == n / 2 ? -4.0 : 4.0) * h / 6.0, INSERT_VALUES));
      if (i > 0) PetscCall(MatSetValue(*B, i, i - 1, h / 6.0, INSERT_VALUES));
      if (i < n - 1) PetscCall(MatSetValue(*B, i, i + 1, h / 6.0, INSERT_VALUES));
    } else {
      PetscReal d = 1.0 + (PetscReal)(i % 3) / 2.0;
      if (kind == MASS_INDEFINITE && i == n / 2) d = -1.0;
      PetscCall(MatSetValue(*B, i, i, d, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
#if defined(PETSC_HAVE_CUDA)
  if (device_mats) {
    PetscCall(MatConvert(*A, MATAIJCUSPARSE, MAT_INPLACE_MATRIX, A));
    PetscCall(MatConvert(*B, MATAIJCUSPARSE, MAT_INPLACE_MATRIX, B));
  }
#endif
  PetscFunctionReturn(0);
}

typedef struct {
  STType      st;
  PetscReal   sigma;  /* STSINVERT's shift (target) */
  PetscInt    nev;
  EPSWhich    which;
  const char *backend; /* "host", "cuda" or NULL for krylovschur */
} Case;

/* The ST's solver: direct, exact to rounding: LU, on several ranks MUMPS where PETSc has it, else
   PCREDUNDANT (a sequential LU of the gathered matrix on each rank; no external package). A diagonal B
   under STSHIFT: Jacobi, exact. Iterative solves would make the operator inexact at the level of
   rtol ||Op||, which limits the accuracy of the smallest eigenvalues of B^-1 A below this test's tol. */
static PetscErrorCode SetUpEPS(Mat A, Mat B, Case c, PetscBool diagonal, EPSType type, EPS *eps)
{
  ST          st;
  KSP         ksp;
  PC          pc;
  PetscMPIInt size;
  PetscBool   mumps, no_mumps;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(EPSCreate(PETSC_COMM_WORLD, eps));
  PetscCall(EPSSetOperators(*eps, A, B));
  PetscCall(EPSSetProblemType(*eps, EPS_GHEP));
  PetscCall(EPSSetType(*eps, type));
  PetscCall(EPSSetDimensions(*eps, c.nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(*eps, 1e-10, 1000));
  PetscCall(EPSSetWhichEigenpairs(*eps, c.which));
  PetscCall(EPSGetST(*eps, &st));
  PetscCall(STSetType(st, c.st));
  if (c.which == EPS_TARGET_MAGNITUDE) PetscCall(EPSSetTarget(*eps, c.sigma));
  PetscCall(STGetKSP(st, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscHasExternalPackage("mumps", &mumps));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-no_mumps", &no_mumps)); /* the PCREDUNDANT path where MUMPS is present too */
  if (no_mumps) mumps = PETSC_FALSE;
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  if (c.st == STSHIFT && diagonal) PetscCall(PCSetType(pc, PCJACOBI));
  else if (size == 1 || mumps) {
    PetscCall(PCSetType(pc, PCLU));
    if (size > 1) PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
#if defined(PETSC_HAVE_CUDA)
    else if (device_mats) PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERCUSPARSE)); /* the triangular solves on the device */
#endif
  } else PetscCall(PCSetType(pc, PCREDUNDANT));
  PetscCall(EPSSetFromOptions(*eps)); /* -eps_monitor, -eps_view, ... for diagnosis */
  if (c.backend) PetscCall(EPSCUDALanczosSetBackend(*eps, !strcmp(c.backend, "cuda") ? EPS_CUDALANCZOS_BACKEND_CUDA : EPS_CUDALANCZOS_BACKEND_HOST));
  PetscFunctionReturn(0);
}

/* The three checks of a solve's nev pairs on the pencil (A, B) against krylovschur's eigenvalues lr: the
   eigenvalues, the true residual ||A x - lambda B x|| / (|lambda| ||x||) and the B-orthonormality. */
static PetscErrorCode CheckPencilPairs(const char *name, EPS eps, Mat A, Mat B, PetscInt nev, const PetscScalar *lr, const char *note)
{
  PetscReal worst_diff, worst_res, worst_borth, imag;
  char      detail[512];

  PetscFunctionBeginUser;
  PetscCall(MeasurePairs(eps, A, B, nev, lr, &worst_diff, &worst_res, &worst_borth, &imag));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "max |lambda - lambda_krylovschur| / max|lambda| = %.2e (%s)", (double)worst_diff, note));
  PetscCall(Check((PetscBool)(worst_diff <= 1e-9), name, detail));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "max ||A x - lambda B x|| / (|lambda| ||x||) = %.2e", (double)worst_res));
  PetscCall(Check((PetscBool)(worst_res <= 1e-8), name, detail));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "max |x_i' B x_j - delta_ij| = %.2e", (double)worst_borth));
  PetscCall(Check((PetscBool)(worst_borth <= 1e-10), name, detail));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(const char *name, PetscInt n, MassKind kind, Case c)
{
  Mat         A, B;
  EPS         ref, eps;
  PetscInt    nref, nconv, i;
  PetscScalar lr[64], l1;
  char        detail[512];
  const char *used = "";

  PetscFunctionBeginUser;
  PetscCall(BuildPencil(n, kind, &A, &B));
  PetscCall(SetUpEPS(A, B, c, (PetscBool)(kind != MASS_CONSISTENT), EPSKRYLOVSCHUR, &ref));
  PetscCall(EPSSolve(ref));
  PetscCall(EPSGetConverged(ref, &nref));
  for (i = 0; i < PetscMin(nref, c.nev); ++i) PetscCall(EPSGetEigenvalue(ref, i, &lr[i], NULL));
  PetscCall(SetUpEPS(A, B, c, (PetscBool)(kind != MASS_CONSISTENT), EPSCUDALANCZOS, &eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "backend %s, %" PetscInt_FMT " converged (krylovschur %" PetscInt_FMT "), nev %" PetscInt_FMT, used,
                          nconv, nref, c.nev));
  PetscCall(Check((PetscBool)(nconv >= c.nev && nref >= c.nev && !strcmp(used, c.backend)), name, detail));
  { /* -eps_view says the solve ran in the B-inner product, or, for STSHIFT with a diagonal B, on the
       standard problem of C = B^-1/2 A B^-1/2 (C a matrix: on the device Mats its own device arrays) */
    char            line[256];
    PetscBool       found;
    const PetscBool congruent = (PetscBool)(c.st == STSHIFT && kind == MASS_DIAGONAL);
    if (congruent) {
      PetscCall(ViewLine(eps, "solved as the standard problem of B^-1/2 A B^-1/2", line, sizeof(line), &found));
      PetscCall(Check(found, name, found ? line : "-eps_view: a diagonal B with STSHIFT is not solved as the standard problem of B^-1/2 A B^-1/2"));
      if (device_mats) {
        PetscCall(ViewLine(eps, "used in place", line, sizeof(line), &found)); /* or, for a uniform C, its pattern split off there */
        if (!found) PetscCall(ViewLine(eps, "split on the device from PETSc's device array", line, sizeof(line), &found));
        PetscCall(Check(found, name, found ? line : "-eps_view: C's device arrays are neither used in place nor split on the device"));
      }
    } else {
      PetscCall(ViewLine(eps, "generalized problem: Lanczos in the B-inner product", line, sizeof(line), &found));
      PetscCall(Check(found, name, found ? line : "-eps_view does not report the B-inner product"));
    }
    if (!congruent && !strcmp(c.backend, "cuda")) { /* B's products on the device: B uploaded, or in place */
      PetscCall(ViewLine(eps, "products with B: on the device", line, sizeof(line), &found));
      PetscCall(Check(found, name, found ? line : "-eps_view: B's products are not on the device"));
    }
    if (device_mats && !congruent) { /* and the ST's solves ran there, on the basis columns */
      PetscCall(ViewLine(eps, "operator: STApply on the device", line, sizeof(line), &found));
      PetscCall(Check(found, name, found ? line : "-eps_view: the operator is not STApply on the device"));
    }
  }
  if (nconv >= c.nev && nref >= c.nev) {
    PetscCall(EPSGetEigenvalue(eps, 0, &l1, NULL));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "lambda_1 = %.10g", (double)PetscRealPart(l1)));
    PetscCall(CheckPencilPairs(name, eps, A, B, c.nev, lr, detail));
  }
  PetscCall(EPSDestroy(&ref));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* The true-residual check is proven by the Lanczos relation only where the operator is exact to
   rounding (Settings::exact_operator): with STSINVERT's default direct solve (KSPPREONLY + LU) some pairs
   are proven; with an iterative KSP (CG + Jacobi) none is, every converged pair gets its product, and the
   solve is still right. One rank: the multi-rank path takes PCREDUNDANT here, which is not counted as
   direct. */
static PetscErrorCode CheckProofFollowsTheSolver(PetscInt n)
{
  Mat         A, B;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size > 1) PetscFunctionReturn(0);
  PetscCall(BuildPencil(n, MASS_CONSISTENT, &A, &B));
  for (int iterative = 0; iterative < 2; ++iterative) {
    const Case  c = {STSINVERT, 0.0, 5, EPS_TARGET_MAGNITUDE, "host"};
    EPS         eps;
    ST          st;
    KSP         ksp;
    PC          pc;
    PetscInt    nconv;
    int         proven = -1, checked = -1, converged = 0;
    PetscBool   found;
    char        text[256], detail[320];
    PetscScalar lr[8];
    PetscReal   diff, res, borth, imag;
    PetscCall(SetUpEPS(A, B, c, PETSC_FALSE, EPSKRYLOVSCHUR, &eps));
    PetscCall(EPSSolve(eps));
    for (PetscInt i = 0; i < c.nev; ++i) PetscCall(EPSGetEigenvalue(eps, i, &lr[i], NULL));
    PetscCall(EPSDestroy(&eps));
    PetscCall(SetUpEPS(A, B, c, PETSC_FALSE, EPSCUDALANCZOS, &eps));
    if (iterative) {
      PetscCall(EPSGetST(eps, &st));
      PetscCall(STGetKSP(st, &ksp));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(KSPSetType(ksp, KSPCG));
      PetscCall(PCSetType(pc, PCJACOBI));
      PetscCall(KSPSetTolerances(ksp, 1e-13, 1e-50, PETSC_DEFAULT, 10000));
    }
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(ViewLine(eps, "true residuals proven without a product: ", text, sizeof(text), &found));
    if (found) sscanf(text, "true residuals proven without a product: %d", &proven);
    PetscCall(ViewLine(eps, "true residuals checked: ", text, sizeof(text), &found));
    if (found) sscanf(text, "true residuals checked: %d", &checked);
    PetscCall(ViewLine(eps, "returned the ", text, sizeof(text), &found)); /* more converged than the nev returned */
    if (!found || sscanf(text, "returned the %*d best of %d", &converged) != 1) converged = (int)nconv;
    diff = res = 1;
    if (nconv >= c.nev) PetscCall(MeasurePairs(eps, A, B, c.nev, lr, &diff, &res, &borth, &imag));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT " (%d converged), proven %d, checked %d, max diff from krylovschur %.2e, max residual %.2e", nconv,
                            converged, proven, checked, (double)diff, (double)res));
    PetscCall(Check((PetscBool)(nconv >= c.nev && proven + checked == converged && (iterative ? proven == 0 : proven >= 1) && diff <= 1e-9 && res <= 1e-8),
                    iterative ? "STSINVERT with CG + Jacobi: no residual proven, every pair checked with a product"
                              : "STSINVERT with its direct solve: residuals proven by the Lanczos relation",
                    detail));
    PetscCall(EPSDestroy(&eps));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* STSHIFT with a diagonal B runs on C = B^-1/2 A B^-1/2, so a user's initial vector x0 must enter as
   y0 = B^1/2 x0. Started from the largest eigenvector krylovschur found, in cycles of 3 columns, the solve must
   end in its first cycle; started from anything else (x0 itself, or B^-1/2 x0) it needs many. */
static PetscErrorCode CheckInitialVectorOfACongruentSolve(PetscInt n)
{
  Mat         A, B;
  EPS         ref, eps;
  Vec         x;
  Case        c = {STSHIFT, 0, 1, EPS_LARGEST_REAL, "host"};
  PetscScalar l0, l1;
  PetscInt    nconv, its = -1;
  int         products = -1;
  char        text[256], detail[256];
  PetscBool   found;

  PetscFunctionBeginUser;
  PetscCall(BuildPencil(n, MASS_DIAGONAL, &A, &B));
  PetscCall(SetUpEPS(A, B, c, PETSC_TRUE, EPSKRYLOVSCHUR, &ref));
  PetscCall(EPSSolve(ref));
  PetscCall(MatCreateVecs(A, &x, NULL));
  PetscCall(EPSGetEigenpair(ref, 0, &l0, NULL, x, NULL));
  PetscCall(SetUpEPS(A, B, c, PETSC_TRUE, EPSCUDALANCZOS, &eps));
  PetscCall(EPSCUDALanczosSetVerify(eps, PETSC_FALSE));
  PetscCall(EPSSetDimensions(eps, 1, 3, PETSC_DEFAULT));
  PetscCall(EPSSetInitialSpace(eps, 1, &x));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(EPSGetIterationNumber(eps, &its));
  PetscCall(ViewLine(eps, "  last solve: ", text, sizeof(text), &found));
  if (found) sscanf(text, "  last solve: %d operator applications", &products);
  l1 = 0;
  if (nconv > 0) PetscCall(EPSGetEigenvalue(eps, 0, &l1, NULL));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " cycle(s), %d products, lambda %.12g (krylovschur %.12g)", its, products,
                          (double)PetscRealPart(l1), (double)PetscRealPart(l0)));
  PetscCall(Check((PetscBool)(nconv >= 1 && its == 1 && products > 0 && PetscAbsScalar(l1 - l0) <= 1e-9 * PetscAbsScalar(l0)),
                  "STSHIFT with a diagonal B: the initial vector enters C's space as B^1/2 x0", detail));
  PetscCall(VecDestroy(&x));
  PetscCall(EPSDestroy(&ref));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* The norm estimate of STSINVERT's operator is a solve: a re-solve on the same EPS takes the last one's
   (-eps_view says so) and, with everything else the same, repeats its eigenvalues with one product fewer. A
   changed matrix (its object state) or a changed shift measures again, and the answers follow the change. */
static PetscErrorCode CheckSTNormReuse(PetscInt n)
{
  Mat         A, B;
  EPS         eps;
  const Case  c = {STSINVERT, 0.0, 3, EPS_TARGET_MAGNITUDE, "host"};
  int         products[4] = {-1, -1, -1, -1};
  PetscBool   reused[4];
  PetscScalar l[4][3];
  char        text[256], detail[512];
  PetscBool   found;
  PetscReal   same = 0, scaled = 0;

  PetscFunctionBeginUser;
  PetscCall(BuildPencil(n, MASS_CONSISTENT, &A, &B));
  PetscCall(SetUpEPS(A, B, c, PETSC_FALSE, EPSCUDALANCZOS, &eps));
  for (int k = 0; k < 4; ++k) {
    if (k == 2) PetscCall(MatScale(A, 2.0)); /* a new state: the eigenvalues double, the norm is measured again */
    if (k == 3) PetscCall(EPSSetTarget(eps, 1e-3)); /* a new shift: measured again */
    if (k > 0) PetscCall(EPSSetOperators(eps, A, B)); /* SLEPc's way to solve again (EPSSolve on a solved EPS returns) */
    PetscCall(EPSSolve(eps));
    for (PetscInt i = 0; i < c.nev; ++i) PetscCall(EPSGetEigenvalue(eps, i, &l[k][i], NULL));
    PetscCall(ViewLine(eps, "  last solve: ", text, sizeof(text), &found));
    if (found) sscanf(text, "  last solve: %d operator applications", &products[k]);
    PetscCall(ViewLine(eps, "of the ST's operator reused", NULL, 0, &reused[k]));
  }
  for (PetscInt i = 0; i < c.nev; ++i) {
    same   = PetscMax(same, PetscAbsScalar(l[1][i] - l[0][i]) / PetscAbsScalar(l[0][i]));
    scaled = PetscMax(scaled, PetscAbsScalar(l[2][i] - 2 * l[0][i]) / PetscAbsScalar(l[2][i]));
  }
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "products %d, %d, %d, %d; reused %d %d %d %d; re-solve differs by %.2e, after scaling A by %.2e", products[0],
                          products[1], products[2], products[3], (int)reused[0], (int)reused[1], (int)reused[2], (int)reused[3], (double)same, (double)scaled));
  PetscCall(Check((PetscBool)(!reused[0] && reused[1] && !reused[2] && !reused[3] && products[0] > 0 && products[1] == products[0] - 1 && same == 0 &&
                              scaled <= 1e-9 && products[3] > 0),
                  "STSINVERT: a re-solve takes the operator's norm estimate from the last solve, a changed matrix or shift measures it", detail));
  /* A matrix changed after the last solve, without EPSSetOperators: the EPS is still destroyed cleanly. */
  PetscCall(MatScale(A, 0.5));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* STSINVERT's purification (EPSSetPurify, on by default) comes from the Lanczos relation, without a solve:
   each returned vector must be what one STApply of the unpurified vector gives, B-normalized (up to sign),
   the unpurified ones taken from the same solve with EPSSetPurify off. -eps_view counts them, and the
   purified solve takes no more solves than the other. A loose tolerance makes the correction large
   enough (about tol) that a wrong one would show; nev 7 returns the pairs that converged last, whose
   correction is the largest (the 5 best moved by 5e-13 only). */
static PetscErrorCode CheckRelationPurification(PetscInt n)
{
  Mat         A, B;
  EPS         eps[2];
  ST          st;
  Vec         x, z, bz;
  const Case  c = {STSINVERT, 0.0, 7, EPS_TARGET_MAGNITUDE, "host"};
  PetscInt    nconv[2];
  int         relation = -1, solves = -1, products[2] = {-1, -1};
  char        text[256], detail[256];
  PetscBool   found;
  PetscReal   worst = 0, moved = 0;

  PetscFunctionBeginUser;
  PetscCall(BuildPencil(n, MASS_CONSISTENT, &A, &B));
  for (int k = 0; k < 2; ++k) {
    PetscCall(SetUpEPS(A, B, c, PETSC_FALSE, EPSCUDALANCZOS, &eps[k]));
    PetscCall(EPSSetTolerances(eps[k], 1e-6, 1000));
    PetscCall(EPSSetPurify(eps[k], k == 1 ? PETSC_TRUE : PETSC_FALSE));
    PetscCall(EPSSolve(eps[k]));
    PetscCall(EPSGetConverged(eps[k], &nconv[k]));
    PetscCall(ViewLine(eps[k], "  last solve: ", text, sizeof(text), &found));
    if (found) sscanf(text, "  last solve: %d operator applications", &products[k]);
  }
  PetscCall(ViewLine(eps[1], "purification: ", text, sizeof(text), &found));
  if (found) sscanf(text, "purification: %d vectors from the Lanczos relation (no solve), %d by STApply", &relation, &solves);
  PetscCall(MatCreateVecs(A, &x, &z));
  PetscCall(VecDuplicate(z, &bz));
  PetscCall(EPSGetST(eps[1], &st));
  for (PetscInt i = 0; i < PetscMin(nconv[0], nconv[1]); ++i) {
    Vec         y;
    PetscScalar zbz, sign;
    PetscReal   d;
    PetscCall(EPSGetEigenvector(eps[0], i, x, NULL));
    PetscCall(STApply(st, x, z));
    PetscCall(MatMult(B, z, bz));
    PetscCall(VecDot(bz, z, &zbz));
    PetscCall(VecScale(z, 1 / PetscSqrtReal(PetscRealPart(zbz))));
    PetscCall(VecDuplicate(z, &y));
    PetscCall(EPSGetEigenvector(eps[1], i, y, NULL));
    PetscCall(VecDot(y, z, &sign)); /* Euclidean: only its sign is used */
    if (PetscRealPart(sign) < 0) PetscCall(VecScale(z, -1));
    PetscCall(VecAXPY(z, -1, y));
    PetscCall(VecNorm(z, NORM_INFINITY, &d));
    worst = PetscMax(worst, d);
    PetscCall(VecAXPY(x, -1, y)); /* how far the purification moved it (up to sign) */
    PetscCall(VecNorm(x, NORM_INFINITY, &d));
    if (d < 1) moved = PetscMax(moved, d);
    PetscCall(VecDestroy(&y));
  }
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT "/%" PetscInt_FMT ", %d from the relation, %d by STApply, products %d/%d, max diff from STApply %.2e, moved %.2e",
                          nconv[0], nconv[1], relation, solves, products[0], products[1], (double)worst, (double)moved));
  PetscCall(Check((PetscBool)(nconv[0] >= c.nev && nconv[1] == nconv[0] && relation == nconv[1] && solves == 0 && products[1] == products[0] && worst <= 1e-10 &&
                              moved > 1e-10),
                  "STSINVERT: purification from the Lanczos relation is one STApply of each vector, without a solve", detail));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&bz));
  PetscCall(EPSDestroy(&eps[0]));
  PetscCall(EPSDestroy(&eps[1]));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

/* A PETSc error, not a crash or an answer. */
/* An EPS_HEP of type cudalanczos on S for nev pairs on `backend` (tol and which where given: not
   PETSC_DEFAULT, not 0), the symmetry probe on or off, set up, and then given `ip` as its BV's
   inner-product matrix (BVSetMatrix after EPSSetUp, as SLEPc's ex47 does). */
static PetscErrorCode CreateEPSWithBVMatrix(Mat S, Mat ip, PetscInt nev, PetscReal tol, EPSWhich which, const char *backend, PetscBool probe, EPS *eps)
{
  BV bv;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(S, EPS_HEP, EPSCUDALANCZOS, eps));
  PetscCall(EPSSetDimensions(*eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  if (tol != (PetscReal)PETSC_DEFAULT) PetscCall(EPSSetTolerances(*eps, tol, 1000));
  if (which) PetscCall(EPSSetWhichEigenpairs(*eps, which));
  PetscCall(EPSCUDALanczosSetBackend(*eps, !strcmp(backend, "cuda") ? EPS_CUDALANCZOS_BACKEND_CUDA : EPS_CUDALANCZOS_BACKEND_HOST));
  PetscCall(EPSCUDALanczosSetCheckSymmetry(*eps, probe));
  PetscCall(EPSSetUp(*eps));
  PetscCall(EPSGetBV(*eps, &bv));
  PetscCall(BVSetMatrix(bv, ip, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* A standard problem whose operator is self-adjoint in another inner product than the Euclidean one, as
   SLEPc's ex47 poses it: EPS_HEP on S = B^-1 A (B diagonal, so S is assembled: A's rows scaled, not
   symmetric), and after EPSSetUp the BV given B as its inner-product matrix (BVSetMatrix). The solver
   must run Lanczos in that inner product: S's eigenvalues are the pencil's, checked against krylovschur on
   the GHEP (A, B), with the pencil's true residual and the B-orthonormality of the vectors. The symmetry
   probe (-eps_cudalanczos_check_symmetry) then probes B S, which is symmetric; with the inner product of
   2 I instead, S is not self-adjoint and the probe refuses the solve. */
static PetscErrorCode CheckBVInnerProductOnAStandardProblem(PetscInt n, const char *backend)
{
  Mat         A, B, S, twoI;
  Vec         binv;
  EPS         ref, eps;
  PetscInt    nconv, nref, i;
  PetscScalar lr[8];
  char        name[256], detail[512], line[256];
  PetscBool   found;
  const char *used = "";
  Case        c    = {STSHIFT, 0, 4, EPS_LARGEST_REAL, backend};

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] EPS_HEP on S = B^-1 A with BVSetMatrix(B) after EPSSetUp (SLEPc's ex47)", backend));
  PetscCall(BuildPencil(n, MASS_DIAGONAL, &A, &B));
  PetscCall(SetUpEPS(A, B, c, PETSC_TRUE, EPSKRYLOVSCHUR, &ref));
  PetscCall(EPSSolve(ref));
  PetscCall(EPSGetConverged(ref, &nref));
  for (i = 0; i < PetscMin(nref, c.nev); ++i) PetscCall(EPSGetEigenvalue(ref, i, &lr[i], NULL));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &S));
  PetscCall(MatCreateVecs(B, &binv, NULL));
  PetscCall(MatGetDiagonal(B, binv));
  PetscCall(VecReciprocal(binv));
  PetscCall(MatDiagonalScale(S, binv, NULL));
  for (int pass = 0; pass < 2; ++pass) { /* the probe off, then on */
    PetscCall(CreateEPSWithBVMatrix(S, B, c.nev, 1e-10, c.which, backend, pass ? PETSC_TRUE : PETSC_FALSE, &eps));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "probe %s, backend %s, %" PetscInt_FMT " converged (krylovschur on the GHEP %" PetscInt_FMT "), nev %" PetscInt_FMT,
                            pass ? "on" : "off", used, nconv, nref, c.nev));
    PetscCall(Check((PetscBool)(nconv >= c.nev && nref >= c.nev && !strcmp(used, backend)), name, detail));
    PetscCall(ViewLine(eps, "a standard problem with the BV's inner-product matrix B (BVSetMatrix): Lanczos in the B-inner product", line, sizeof(line), &found));
    PetscCall(Check(found, name, found ? line : "-eps_view does not report the BV's inner product"));
    if (nconv >= c.nev && nref >= c.nev) {
      PetscCall(CheckPencilPairs(name, eps, A, B, c.nev, lr, "S x = lambda x is A x = lambda B x"));
    }
    PetscCall(EPSDestroy(&eps));
  }
  /* The wrong inner product: S is not self-adjoint in 2 I's; the probe says so */
  PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &twoI));
  PetscCall(MatShift(twoI, 2.0));
  PetscCall(CreateEPSWithBVMatrix(S, twoI, c.nev, PETSC_DEFAULT, (EPSWhich)0, backend, PETSC_TRUE, &eps));
  PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] EPS_HEP on S = B^-1 A with BVSetMatrix(2 I) and the symmetry probe is refused", backend));
  PetscCall(CheckSolveRefused(eps, name));
  PetscCall(EPSDestroy(&eps));
  { /* An inner-product matrix that is not positive definite (one negative diagonal entry), given as
       definite and without the probe: its diagonal is checked before the solve, a PETSc error */
    Mat Bneg, Aneg;
    PetscCall(BuildPencil(n, MASS_INDEFINITE, &Aneg, &Bneg));
    PetscCall(CreateEPSWithBVMatrix(S, Bneg, c.nev, PETSC_DEFAULT, (EPSWhich)0, backend, PETSC_FALSE, &eps));
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] EPS_HEP with BVSetMatrix of an indefinite matrix is refused", backend));
    PetscCall(CheckSolveRefused(eps, name));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&Aneg));
    PetscCall(MatDestroy(&Bneg));
  }
  PetscCall(MatDestroy(&twoI));
  PetscCall(VecDestroy(&binv));
  PetscCall(MatDestroy(&S));
  PetscCall(EPSDestroy(&ref));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectRefusal(const char *name, EPSProblemType problem, MassKind kind, STType st)
{
  Mat            A, B;
  EPS            eps;
  Case           c = {st, 0, 2, st == STSINVERT ? EPS_TARGET_MAGNITUDE : EPS_LARGEST_REAL, "host"};

  PetscFunctionBeginUser;
  PetscCall(BuildPencil(40, kind, &A, &B));
  PetscCall(SetUpEPS(A, B, c, (PetscBool)(kind == MASS_DIAGONAL || kind == MASS_INDEFINITE), EPSCUDALANCZOS, &eps));
  PetscCall(EPSSetProblemType(eps, problem));
  PetscCall(CheckSolveRefused(eps, name));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool   has_cuda_device = PETSC_FALSE;
  const char *backends[2]     = {"host", "cuda"};
  PetscInt    b, n = 101;
  char        name[256];

  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_CUDA)
  /* The device-Mat cases communicate device vectors: Debian's Open MPI is not GPU-aware (PETSc stops otherwise). */
  PetscCall(PetscOptionsSetValue(NULL, "-use_gpu_aware_mpi", "0"));
#endif
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "EPS_GHEP with EPSCUDALANCZOS"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  { /* Which backend does "auto" pick here? The CUDA cases run only where it is the GPU. */
    Mat         A, B;
    EPS         eps;
    const char *used;
    Case        c = {STSHIFT, 0, 1, EPS_LARGEST_REAL, NULL};
    PetscCall(BuildPencil(10, MASS_CONSISTENT, &A, &B));
    PetscCall(SetUpEPS(A, B, c, PETSC_FALSE, EPSCUDALANCZOS, &eps));
    PetscCall(EPSCUDALanczosSetBackend(eps, EPS_CUDALANCZOS_BACKEND_AUTO));
    PetscCall(EPSSolve(eps));
    PetscCall(EPSCUDALanczosGetBackendInUse(eps, &used));
    has_cuda_device = strcmp(used, "cuda") == 0 ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# a GPU is %s: the CUDA cases %s\n", has_cuda_device ? "present" : "absent",
                          has_cuda_device ? "run" : "are skipped"));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
  }
  /* host, cuda, and (with a CUDA PETSc) cuda on the pencil as device Mats */
  for (b = 0; b < (has_cuda_device ? 3 : 1); ++b) {
    const char *be = backends[b < 2 ? b : 1];
    Case        c;
#if defined(PETSC_HAVE_CUDA)
    device_mats = b == 2 ? PETSC_TRUE : PETSC_FALSE;
#else
    if (b == 2) break;
#endif
    const char *tag = b == 2 ? "cuda, device Mats" : be;
    c = (Case){STSHIFT, 0, 4, EPS_SMALLEST_REAL, be};
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] stiffness/consistent mass, STSHIFT (B^-1 A), 4 smallest", tag));
    PetscCall(RunCase(name, n, MASS_CONSISTENT, c));
    c = (Case){STSHIFT, 0, 3, EPS_LARGEST_REAL, be};
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] stiffness/consistent mass, STSHIFT, 3 largest", tag));
    PetscCall(RunCase(name, n, MASS_CONSISTENT, c));
    c = (Case){STSHIFT, 0, 5, EPS_LARGEST_MAGNITUDE, be};
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] stiffness/diagonal mass, STSHIFT as B^-1/2 A B^-1/2, 5 largest magnitude", tag));
    PetscCall(RunCase(name, n, MASS_DIAGONAL, c));
    c = (Case){STSHIFT, 0, 4, EPS_SMALLEST_REAL, be};
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] stiffness/diagonal mass, STSHIFT as B^-1/2 A B^-1/2, 4 smallest", tag));
    PetscCall(RunCase(name, n, MASS_DIAGONAL, c));
    c = (Case){STSINVERT, 50.0, 4, EPS_TARGET_MAGNITUDE, be};
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] stiffness/consistent mass, STSINVERT ((A - sigma B)^-1 B), 4 nearest 50 (interior)", tag));
    PetscCall(RunCase(name, n, MASS_CONSISTENT, c));
    c = (Case){STSINVERT, 0.0, 6, EPS_TARGET_MAGNITUDE, be};
    PetscCall(PetscSNPrintf(name, sizeof(name), "[%s] stiffness/diagonal mass, STSINVERT, 6 nearest 0 (lowest modes)", tag));
    PetscCall(RunCase(name, n, MASS_DIAGONAL, c));
  }
  device_mats = PETSC_FALSE;
  if (!has_cuda_device) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# skipped: the CUDA backend cases (no GPU)\n"));
  PetscCall(CheckProofFollowsTheSolver(n));
  PetscCall(CheckInitialVectorOfACongruentSolve(n));
  PetscCall(CheckSTNormReuse(n));
  PetscCall(CheckRelationPurification(n));
  PetscCall(CheckBVInnerProductOnAStandardProblem(n, "host"));
  if (has_cuda_device) PetscCall(CheckBVInnerProductOnAStandardProblem(n, "cuda"));
  PetscCall(ExpectRefusal("EPS_GHIEP is refused", EPS_GHIEP, MASS_CONSISTENT, STSHIFT));
  PetscCall(ExpectRefusal("EPS_GHEP with an indefinite B is refused", EPS_GHEP, MASS_INDEFINITE, STSHIFT));
  PetscCall(ExpectRefusal("EPS_GHEP with a non-diagonal B with a negative diagonal entry is refused (STSINVERT)", EPS_GHEP, MASS_CONSISTENT_INDEFINITE, STSINVERT));
  PetscCall(ExpectRefusal("EPS_GNHEP is refused", EPS_GNHEP, MASS_CONSISTENT, STSHIFT));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
