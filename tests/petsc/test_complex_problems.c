/*
   Complex Hermitian problems with EPSCUDALANCZOS against a PETSc/SLEPc with complex scalars (the complex
   build, libslepccudalanczos_complex.so). The matrices are genuinely complex: a disordered chain with
   complex nearest- and next-nearest-neighbour hoppings (a_ij = conj(a_ji), a tight-binding Hamiltonian
   with a magnetic flux) as MATAIJ, and for EPS_GHEP a complex Hermitian positive definite tridiagonal B.
   Each case is compared with SLEPc's krylovschur on the same problem in the same program: the nev
   eigenvalues agree, they are real (eigi 0, no imaginary part), every returned pair has a small relative
   true residual ||A x - lambda x|| / (|lambda| ||x||) (||A x - lambda B x|| for EPS_GHEP), and the vectors
   are orthonormal in the problem's inner product (x_i^H x_j or x_i^H B x_j = delta_ij). Largest and
   smallest, full and partial reorthogonalization, block steps, STSHIFT and STSINVERT; a deflation space
   and an initial space of complex vectors; non-Hermitian problem types are refused with a PETSc error. Any number of ranks (uneven row layouts).
*/
#include "test_support.h"

#include <math.h>

#if !defined(PETSC_USE_COMPLEX)
#error "test_complex_problems needs a PETSc with complex scalars"
#endif

/* The chain: diagonal cos(1.3 i), hoppings -e^{i (0.4 + 0.1 i)} to i+1 and 0.3 e^{i 0.9} to i+2. */
static PetscErrorCode BuildHamiltonian(PetscInt n, Mat *A)
{
  PetscInt nloc, rstart, rend, i;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 5, NULL, 4, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    PetscCall(MatSetValue(*A, i, i, PetscCosReal(1.3 * (PetscReal)i), INSERT_VALUES));
    if (i + 1 < n) { /* a_{i,i+1} = t_i, a_{i+1,i} = conj(t_i), both set by the owner of row i */
      const PetscScalar t = -PetscExpScalar(PETSC_i * (0.4 + 0.1 * (PetscReal)i));
      PetscCall(MatSetValue(*A, i, i + 1, t, INSERT_VALUES));
      PetscCall(MatSetValue(*A, i + 1, i, PetscConj(t), INSERT_VALUES));
    }
    if (i + 2 < n) {
      const PetscScalar t = 0.3 * PetscExpScalar(PETSC_i * 0.9);
      PetscCall(MatSetValue(*A, i, i + 2, t, INSERT_VALUES));
      PetscCall(MatSetValue(*A, i + 2, i, PetscConj(t), INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* B = tridiag(e^{-i phi_i}, 4 + (i mod 3), e^{i phi_i}): Hermitian, diagonally dominant, so positive definite. */
static PetscErrorCode BuildMass(PetscInt n, Mat *B)
{
  PetscInt nloc, rstart, rend, i;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 3, NULL, 2, NULL, B));
  PetscCall(MatGetOwnershipRange(*B, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    PetscCall(MatSetValue(*B, i, i, 4.0 + (PetscReal)(i % 3), INSERT_VALUES));
    if (i + 1 < n) {
      const PetscScalar t = PetscExpScalar(PETSC_i * (0.7 * (PetscReal)i));
      PetscCall(MatSetValue(*B, i, i + 1, t, INSERT_VALUES));
      PetscCall(MatSetValue(*B, i + 1, i, PetscConj(t), INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

typedef struct {
  EPSWhich  which;
  PetscInt  nev, block;
  PetscBool partial;
  STType    st;    /* EPS_GHEP only */
  PetscReal sigma; /* STSINVERT's target */
} Case;

static PetscErrorCode SetUpEPS(Mat A, Mat B, Case c, EPSType type, EPS *eps)
{
  ST          st;
  KSP         ksp;
  PC          pc;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(EPSCreate(PETSC_COMM_WORLD, eps));
  PetscCall(EPSSetOperators(*eps, A, B));
  PetscCall(EPSSetProblemType(*eps, B ? EPS_GHEP : EPS_HEP));
  PetscCall(EPSSetType(*eps, type));
  PetscCall(EPSSetDimensions(*eps, c.nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(*eps, 1e-10, 1000));
  PetscCall(EPSSetWhichEigenpairs(*eps, c.which));
  if (B) { /* exact solves (LU; a redundant LU on several ranks), so that the operator is exact */
    PetscCall(EPSGetST(*eps, &st));
    PetscCall(STSetType(st, c.st));
    if (c.which == EPS_TARGET_MAGNITUDE) PetscCall(EPSSetTarget(*eps, c.sigma));
    PetscCall(STGetKSP(st, &ksp));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, size == 1 ? PCLU : PCREDUNDANT));
  }
  PetscCall(EPSSetFromOptions(*eps)); /* -eps_cudalanczos_backend host from the test's arguments */
  if (!strcmp(type, EPSCUDALANCZOS)) {
    if (c.block > 1) PetscCall(EPSCUDALanczosSetBlockSize(*eps, c.block));
    if (c.partial) PetscCall(EPSCUDALanczosSetReorthog(*eps, EPS_CUDALANCZOS_REORTHOG_PARTIAL));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(const char *name, Mat A, Mat B, Case c)
{
  EPS         ref, eps;
  PetscInt    nref, nconv, i;
  PetscScalar lr[32], l1;
  char        detail[512];
  PetscReal   worst_diff, worst_res, worst_orth, worst_imag;

  PetscFunctionBeginUser;
  PetscCall(SetUpEPS(A, B, c, EPSKRYLOVSCHUR, &ref));
  PetscCall(EPSSolve(ref));
  PetscCall(EPSGetConverged(ref, &nref));
  for (i = 0; i < PetscMin(nref, c.nev); ++i) PetscCall(EPSGetEigenvalue(ref, i, &lr[i], NULL));
  PetscCall(SetUpEPS(A, B, c, EPSCUDALANCZOS, &eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " converged (krylovschur %" PetscInt_FMT "), nev %" PetscInt_FMT, nconv, nref, c.nev));
  PetscCall(Check((PetscBool)(nconv >= c.nev && nref >= c.nev), name, detail));
  if (nconv >= c.nev && nref >= c.nev) {
    PetscCall(MeasurePairs(eps, A, B, c.nev, lr, &worst_diff, &worst_res, &worst_orth, &worst_imag));
    PetscCall(EPSGetEigenvalue(eps, 0, &l1, NULL));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "max |lambda - lambda_krylovschur| / max|lambda| = %.2e (lambda_1 = %.10g)", (double)worst_diff,
                            (double)PetscRealPart(l1)));
    PetscCall(Check((PetscBool)(worst_diff <= 1e-9), name, detail));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "eigenvalues real: max |Im lambda|, |eigi| = %.2e", (double)worst_imag));
    PetscCall(Check((PetscBool)(worst_imag == 0), name, detail));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "max true residual / (|lambda| ||x||) = %.2e", (double)worst_res));
    PetscCall(Check((PetscBool)(worst_res <= 1e-8), name, detail));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "max |x_j^H %sx_i - delta_ij| = %.2e", B ? "B " : "", (double)worst_orth));
    PetscCall(Check((PetscBool)(worst_orth <= 1e-10), name, detail));
  }
  PetscCall(EPSDestroy(&ref));
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* Complex vectors in and out of the solver: a deflation space of krylovschur's two largest eigenvectors
   (the next three come out, orthogonal to them), and the largest eigenvector as the initial space (its
   pair comes back). */
static PetscErrorCode SpacesCase(Mat A)
{
  EPS         ref, eps;
  Case        c = {EPS_LARGEST_REAL, 5, 1, PETSC_FALSE, STSHIFT, 0};
  PetscScalar lr[5], lc;
  Vec         v[2], x, Ax;
  PetscInt    nref, nconv, i, k;
  PetscReal   worst_diff = 0, worst_orth = 0, worst_res = 0, rn, xn;
  char        detail[256];

  PetscFunctionBeginUser;
  PetscCall(SetUpEPS(A, NULL, c, EPSKRYLOVSCHUR, &ref));
  PetscCall(EPSSolve(ref));
  PetscCall(EPSGetConverged(ref, &nref));
  PetscCheck(nref >= 5, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "krylovschur converged %" PetscInt_FMT " < 5", nref);
  PetscCall(MatCreateVecs(A, &v[0], &Ax));
  PetscCall(VecDuplicate(v[0], &v[1]));
  PetscCall(VecDuplicate(v[0], &x));
  for (i = 0; i < 5; ++i) PetscCall(EPSGetEigenvalue(ref, i, &lr[i], NULL));
  for (i = 0; i < 2; ++i) PetscCall(EPSGetEigenvector(ref, i, v[i], NULL));

  c.nev = 3;
  PetscCall(SetUpEPS(A, NULL, c, EPSCUDALANCZOS, &eps));
  PetscCall(EPSSetDeflationSpace(eps, 2, v));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " converged, nev 3", nconv));
  PetscCall(Check((PetscBool)(nconv >= 3), "deflation space of 2 complex eigenvectors", detail));
  for (i = 0; i < PetscMin(nconv, 3); ++i) {
    PetscCall(EPSGetEigenpair(eps, i, &lc, NULL, x, NULL));
    worst_diff = PetscMax(worst_diff, PetscAbsScalar(lc - lr[i + 2]) / PetscAbsScalar(lr[0]));
    for (k = 0; k < 2; ++k) {
      PetscScalar d;
      PetscCall(VecDot(x, v[k], &d));
      worst_orth = PetscMax(worst_orth, PetscAbsScalar(d));
    }
    PetscCall(MatMult(A, x, Ax));
    PetscCall(VecAXPY(Ax, -lc, x));
    PetscCall(VecNorm(Ax, NORM_2, &rn));
    PetscCall(VecNorm(x, NORM_2, &xn));
    worst_res = PetscMax(worst_res, rn / (PetscAbsScalar(lc) * xn));
  }
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "lambda_3..5 of A: max rel. difference %.2e, max |v_k^H x| %.2e, max residual %.2e",
                          (double)worst_diff, (double)worst_orth, (double)worst_res));
  PetscCall(Check((PetscBool)(nconv >= 3 && worst_diff <= 1e-9 && worst_orth <= 1e-10 && worst_res <= 1e-8), "deflation space of 2 complex eigenvectors", detail));
  PetscCall(EPSDestroy(&eps));

  c.nev = 1;
  PetscCall(SetUpEPS(A, NULL, c, EPSCUDALANCZOS, &eps));
  PetscCall(VecScale(v[0], PetscExpScalar(PETSC_i * 1.1))); /* another phase: still an eigenvector */
  PetscCall(EPSSetInitialSpace(eps, 1, v));
  PetscCall(EPSCUDALanczosSetVerify(eps, PETSC_FALSE)); /* then the invariant start ends the solve in one cycle */
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  lc = 0;
  if (nconv >= 1) PetscCall(EPSGetEigenpair(eps, 0, &lc, NULL, x, NULL));
  {
    PetscScalar d = 0;
    PetscInt    its;
    PetscCall(VecDot(x, v[0], &d));
    PetscCall(EPSGetIterationNumber(eps, &its));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "lambda %.12g (krylovschur %.12g), |v^H x| = %.15f, %" PetscInt_FMT " iterations",
                            (double)PetscRealPart(lc), (double)PetscRealPart(lr[0]), (double)PetscAbsScalar(d), its));
    PetscCall(Check((PetscBool)(nconv >= 1 && its == 1 && PetscAbsScalar(lc - lr[0]) <= 1e-10 * PetscAbsScalar(lr[0]) && PetscAbsReal(PetscAbsScalar(d) - 1) <= 1e-10),
                    "a complex eigenvector as the initial space", detail));
  }
  PetscCall(EPSDestroy(&eps));
  PetscCall(EPSDestroy(&ref));
  PetscCall(VecDestroy(&v[0]));
  PetscCall(VecDestroy(&v[1]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&Ax));
  PetscFunctionReturn(0);
}

/* The matrix must be genuinely complex (a real one would not test what this program is for) and Hermitian. */
static PetscErrorCode CheckMatrix(Mat A, const char *what)
{
  Mat       H;
  PetscReal diff, nrm, imag;
  Mat       Im;
  char      detail[256];

  PetscFunctionBeginUser;
  PetscCall(MatHermitianTranspose(A, MAT_INITIAL_MATRIX, &H));
  PetscCall(MatAXPY(H, -1.0, A, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(H, NORM_FROBENIUS, &diff));
  PetscCall(MatNorm(A, NORM_FROBENIUS, &nrm));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Im));
  PetscCall(MatImaginaryPart(Im));
  PetscCall(MatNorm(Im, NORM_FROBENIUS, &imag));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "||A^H - A|| = %.1e, ||Im A|| / ||A|| = %.2f", (double)diff, (double)(imag / nrm)));
  PetscCall(Check((PetscBool)(diff == 0 && imag > 0.1 * nrm), what, detail));
  PetscCall(MatDestroy(&H));
  PetscCall(MatDestroy(&Im));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat      A, B, A2;
  EPS      eps;
  PetscInt n = 240;
  Case     c;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "complex Hermitian problems with EPSCUDALANCZOS"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(BuildHamiltonian(n, &A));
  PetscCall(BuildMass(n, &B));
  PetscCall(CheckMatrix(A, "A is complex Hermitian"));
  PetscCall(CheckMatrix(B, "B is complex Hermitian"));

  c = (Case){EPS_LARGEST_REAL, 6, 1, PETSC_FALSE, STSHIFT, 0};
  PetscCall(RunCase("EPS_HEP, 6 largest", A, NULL, c));
  c = (Case){EPS_SMALLEST_REAL, 6, 1, PETSC_FALSE, STSHIFT, 0};
  PetscCall(RunCase("EPS_HEP, 6 smallest", A, NULL, c));
  c = (Case){EPS_LARGEST_MAGNITUDE, 4, 1, PETSC_FALSE, STSHIFT, 0};
  PetscCall(RunCase("EPS_HEP, 4 largest magnitude", A, NULL, c));
  c = (Case){EPS_SMALLEST_REAL, 5, 1, PETSC_TRUE, STSHIFT, 0};
  PetscCall(RunCase("EPS_HEP, 5 smallest, partial reorthogonalization", A, NULL, c));
  c = (Case){EPS_LARGEST_REAL, 6, 3, PETSC_FALSE, STSHIFT, 0};
  PetscCall(RunCase("EPS_HEP, 6 largest, block size 3", A, NULL, c));
  c = (Case){EPS_SMALLEST_REAL, 4, 1, PETSC_FALSE, STSHIFT, 0};
  PetscCall(RunCase("EPS_GHEP, STSHIFT (B^-1 A), 4 smallest", A, B, c));
  c = (Case){EPS_LARGEST_REAL, 4, 2, PETSC_FALSE, STSHIFT, 0};
  PetscCall(RunCase("EPS_GHEP, STSHIFT, 4 largest, block size 2", A, B, c));
  c = (Case){EPS_TARGET_MAGNITUDE, 5, 1, PETSC_FALSE, STSINVERT, 0.05};
  PetscCall(RunCase("EPS_GHEP, STSINVERT, 5 nearest 0.05 (interior)", A, B, c));

  PetscCall(SpacesCase(A));

  /* Non-Hermitian problem types are refused; a complex non-Hermitian A (a_ij != conj(a_ji)) under
     EPS_NHEP too. */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
  PetscCall(MatScale(A2, PETSC_i)); /* i A: skew-Hermitian */
  PetscCall(CreateEPS(A2, EPS_NHEP, EPSCUDALANCZOS, &eps));
  PetscCall(CheckSolveRefused(eps, "EPS_NHEP on a complex matrix is refused"));
  PetscCall(EPSDestroy(&eps));
  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, A, B));
  PetscCall(EPSSetProblemType(eps, EPS_GHIEP));
  PetscCall(EPSSetType(eps, EPSCUDALANCZOS));
  PetscCall(CheckSolveRefused(eps, "EPS_GHIEP is refused"));
  PetscCall(EPSDestroy(&eps));

  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&A2));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
