/*
   The thesis problem and a sparse one, solved with whatever -eps_type says (default: cudalanczos).

     1. the thesis's dense symmetric matrix: n x n (default 4000), entries uniform in [0,1], symmetrized
        (A = (B + B^T)/2), its largest eigenpair;
     2. the 2-D Laplacian on an m x m grid (default 100 x 100, five-point stencil, AIJ), its nev (default 4)
        largest eigenpairs.

   For each: eigenvalues, the true relative residual ||Ax - lambda x||/|lambda| of every pair, the
   EPSSolve time and the backend that ran it.

     ./thesis_demo [-n 4000] [-m 100] [-nev 4] [-eps_type cudalanczos|krylovschur|...] [-eps_cudalanczos_variant thesis]
*/
#include <slepccudalanczos.h>

static PetscErrorCode Solve(Mat A, PetscInt nev, const char *title)
{
  EPS            eps;
  EPSType        type;
  PetscInt       i, nconv, its;
  PetscLogDouble t0, t1, first;
  PetscBool      ours;
  const char    *backend = "-";

  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetType(eps, EPSCUDALANCZOS)); /* -eps_type overrides */
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetFromOptions(eps));
  /* The first solve includes setting up the device and uploading the matrix; the second reuses both
     (the matrix is unchanged), which is what a program solving repeatedly sees. */
  PetscCall(PetscTime(&t0));
  PetscCall(EPSSolve(eps));
  PetscCall(PetscTime(&t1));
  first = t1 - t0;
  PetscCall(EPSSetOperators(eps, A, NULL)); /* a solved EPS would not solve again; the device copy of A stays */
  PetscCall(PetscTime(&t0));
  PetscCall(EPSSolve(eps));
  PetscCall(PetscTime(&t1));
  PetscCall(EPSGetType(eps, &type));
  PetscCall(PetscObjectTypeCompare((PetscObject)eps, EPSCUDALANCZOS, &ours));
  if (ours) PetscCall(EPSCUDALanczosGetBackendInUse(eps, &backend));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(EPSGetIterationNumber(eps, &its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n%s\n  solver %s, backend %s: %" PetscInt_FMT " converged in %" PetscInt_FMT " iterations\n  EPSSolve %.4f s (first solve, with set-up and upload: %.4f s)\n", title, type,
                        backend, nconv, its, (double)(t1 - t0), (double)first));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "        eigenvalue     ||Ax-kx||/||kx||\n"));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar k;
    PetscReal   err;
    PetscCall(EPSGetEigenvalue(eps, i, &k, NULL));
    PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %18.10f   %12.3e\n", (double)PetscRealPart(k), (double)err));
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat         A;
  PetscRandom rnd;
  PetscInt    n = 4000, m = 100, nev = 4, i, j, rstart, rend;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "cudalanczos demo"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-m", &m, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nev", &nev, NULL));

  /* 1. dense, uniform [0,1], symmetrized: each (i,j), i<=j, drawn once from a hash so every rank agrees */
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  {
    PetscScalar *a;
    PetscInt     lda;
    PetscCall(MatDenseGetLDA(A, &lda));
    PetscCall(MatDenseGetArrayWrite(A, &a));
    for (j = 0; j < n; ++j)
      for (i = rstart; i < rend; ++i) {
        unsigned long long lo = (unsigned long long)PetscMin(i, j), hi = (unsigned long long)PetscMax(i, j);
        unsigned long long x  = lo * 0x9E3779B97F4A7C15ULL ^ (hi + 0x632BE59BD9B4E019ULL);
        x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29, x *= 0x94D049BB133111EBULL, x ^= x >> 32;
        a[(i - rstart) + j * lda] = (PetscScalar)((double)(x >> 11) / 9007199254740992.0);
      }
    PetscCall(MatDenseRestoreArrayWrite(A, &a));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  {
    char title[128];
    PetscCall(PetscSNPrintf(title, sizeof(title), "Thesis problem: dense symmetric %" PetscInt_FMT " x %" PetscInt_FMT ", entries uniform in [0,1], largest eigenpair", n, n));
    PetscCall(Solve(A, 1, title));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(PetscRandomDestroy(&rnd));

  /* 2. 2-D Laplacian, five-point stencil on an m x m grid */
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, m * m, m * m, 5, NULL, 2, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    PetscInt r = i / m, c = i % m;
    if (r > 0) PetscCall(MatSetValue(A, i, i - m, -1.0, INSERT_VALUES));
    if (r < m - 1) PetscCall(MatSetValue(A, i, i + m, -1.0, INSERT_VALUES));
    if (c > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (c < m - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, 4.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  {
    char title[128];
    PetscCall(PetscSNPrintf(title, sizeof(title), "2-D Laplacian %" PetscInt_FMT " x %" PetscInt_FMT " grid (n = %" PetscInt_FMT ", AIJ), %" PetscInt_FMT " largest eigenpairs", m, m, m * m, nev));
    PetscCall(Solve(A, nev, title));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(SlepcFinalize());
  return 0;
}
