/*
   CUDA MatShells with EPSCUDALANCZOS:
     (a) MatCreateCUDALanczos: an AIJ matrix (the 1-D Laplacian) copied to the GPU once and wrapped as a
         MATSHELL; the solver applies it on the device, and MatMult with host Vecs still works;
     (b) MatCreateCUDALanczosShell: the same operator as the user's own device multiply (a stencil kernel,
         no matrix stored at all).
   Both must give the largest eigenvalues of the 1-D Laplacian, 2 - 2 cos(k pi/(n+1)).

     ./cuda_matshell_demo [-n 3000] [-nev 4]

   (The largest eigenvalues of the 1-D Laplacian crowd together as n grows, gap ~ 3 pi^2/n^2: Lanczos
   needs O(n) steps for them, so the default n stays modest.)
*/
#include <slepccudalanczos.h>

#include <cuda_runtime.h>

// y = T x for T = tridiag(-1, 2, -1): the matrix-free operator of (b). S is PetscScalar: double, or a
// complex type with a complex PETSc (the matrix is real either way).
template <class S>
__global__ void laplacian_1d(const S *x, S *y, PetscInt n)
{
  const PetscInt i = blockIdx.x * (PetscInt)blockDim.x + threadIdx.x;
  if (i >= n) return;
  S v = 2.0 * x[i];
  if (i > 0) v -= x[i - 1];
  if (i < n - 1) v -= x[i + 1];
  y[i] = v;
}

static PetscErrorCode DeviceMult(void *ctx, const PetscScalar *x, PetscScalar *y, void *stream)
{
  const PetscInt n = *(const PetscInt *)ctx;

  PetscFunctionBeginUser;
  if (n > 0) laplacian_1d<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(x, y, n);
  PetscCheck(cudaGetLastError() == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "the stencil kernel failed to launch");
  PetscFunctionReturn(0);
}

static PetscErrorCode SolveAndReport(Mat S, PetscInt n, PetscInt nev, const char *title)
{
  EPS         eps;
  PetscInt    i, nconv;
  const char *backend = "-";

  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, S, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetType(eps, EPSCUDALANCZOS));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(eps, 1e-8, 100000)); /* clustered eigenvalues: many restarts (see above) */
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSCUDALanczosGetBackendInUse(eps, &backend));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: backend %s, %" PetscInt_FMT " converged\n", title, backend, nconv));
  for (i = 0; i < PetscMin(nev, nconv); ++i) {
    PetscScalar k;
    PetscReal   err;
    const PetscReal exact = 2 - 2 * PetscCosReal(PETSC_PI * (n - i) / (n + 1));
    PetscCall(EPSGetEigenvalue(eps, i, &k, NULL));
    PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %.12f (exact %.12f)  residual %.2e\n", (double)PetscRealPart(k), (double)exact, (double)err));
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat      A, S;
  Vec      x, y;
  PetscInt n = 3000, nev = 4, i;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "CUDA MatShell demo"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nev", &nev, NULL));

  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 3, NULL, &A));
  for (i = 0; i < n; ++i) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, 2.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));

  /* (a) the AIJ matrix on the GPU; MatMult with host Vecs agrees with the original */
  PetscCall(MatCreateCUDALanczos(A, &S));
  PetscCall(MatCreateVecs(A, &x, &y));
  {
    Vec       z;
    PetscReal nrm;
    PetscCall(VecSetRandom(x, NULL));
    PetscCall(VecDuplicate(y, &z));
    PetscCall(MatMult(A, x, y));
    PetscCall(MatMult(S, x, z));
    PetscCall(VecAXPY(z, -1.0, y));
    PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MatMult of the CUDA MatShell vs the AIJ matrix: max difference %.2e\n", (double)nrm));
    PetscCall(VecDestroy(&z));
  }
  PetscCall(SolveAndReport(S, n, nev, "(a) MatCreateCUDALanczos(AIJ)"));
  PetscCall(MatDestroy(&S));

  /* (b) the user's device multiply */
  PetscCall(MatCreateCUDALanczosShell(PETSC_COMM_SELF, n, n, DeviceMult, &n, &S));
  PetscCall(SolveAndReport(S, n, nev, "(b) MatCreateCUDALanczosShell(stencil kernel)"));
  PetscCall(MatDestroy(&S));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(SlepcFinalize());
  return 0;
}
