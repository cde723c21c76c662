/*
   The CUDA backend against LAPACK (dsyev) and against the host reference backend through the whole
   plugin, on a seeded sweep of random symmetric matrices (dense and sparse, sizes 1..2000, varied spectra
   and `which`; -cases N, default 120), with the true residual of every returned pair; and device memory
   after 100 create/solve/destroy cycles. Needs a GPU: without one it exits 77, which CTest reports as
   skipped.
*/
#include "test_support.h"
#include <petscblaslapack.h>
#include <cuda_runtime_api.h>

/* xorshift: the matrices are the same on every run */
static unsigned long long state = 88172645463325252ULL;
static double Uniform(void)
{
  state ^= state << 13, state ^= state >> 7, state ^= state << 17;
  return (double)(state >> 11) / 9007199254740992.0;
}

/* Dense: Q diag(d) Q^T is too costly to build here; a random symmetric matrix plus a diagonal shaping
   the spectrum (clustered: few distinct diagonal values; graded: 10^(-6..0)) is enough variety. */
static PetscErrorCode RandomMatrix(PetscInt n, PetscInt kind, Mat *A)
{
  PetscInt i, j;
  PetscBool dense = (PetscBool)(kind % 2 == 0);

  PetscFunctionBeginUser;
  if (dense) {
    PetscScalar *a;
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, n, NULL, A));
    PetscCall(MatDenseGetArrayWrite(*A, &a));
    for (j = 0; j < n; ++j)
      for (i = 0; i <= j; ++i) a[i + j * n] = a[j + i * n] = (2 * Uniform() - 1) / PetscSqrtReal((PetscReal)n);
    for (i = 0; i < n; ++i) a[i + i * n] += (kind == 2) ? (PetscReal)(i % 3) : (kind == 4 ? PetscPowReal(10.0, -6.0 * Uniform()) : 0);
    PetscCall(MatDenseRestoreArrayWrite(*A, &a));
  } else {
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 7, NULL, A));
    PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* mirrored entries: row counts vary */
    for (i = 0; i < n; ++i) {
      PetscCall(MatSetValue(*A, i, i, (kind == 3) ? (PetscReal)(i % 4) : 4 * Uniform(), ADD_VALUES));
      for (j = 0; j < 3; ++j) {
        PetscInt    c = (PetscInt)(Uniform() * n);
        PetscScalar v = 2 * Uniform() - 1;
        if (c == i) continue;
        PetscCall(MatSetValue(*A, i, c, v, ADD_VALUES));
        PetscCall(MatSetValue(*A, c, i, v, ADD_VALUES));
      }
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* All eigenvalues of A by LAPACK's dsyev, then the nev wanted ones in the order EPS returns them. */
static int key_which;
static int CompareKey(const void *a, const void *b)
{
  const PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b;
  PetscReal       kx = 0, ky = 0;
  switch (key_which) {
  case 0: kx = -x, ky = -y; break;                                  /* largest real */
  case 1: kx = x, ky = y; break;                                    /* smallest real */
  default: kx = -PetscAbsReal(x), ky = -PetscAbsReal(y); break;      /* largest magnitude */
  }
  return kx < ky ? -1 : kx > ky ? 1 : 0;
}

static PetscErrorCode LapackWanted(Mat A, PetscInt nev, int which, PetscReal *wanted)
{
  Mat                D;
  const PetscScalar *a;
  PetscScalar       *copy, *work, lwork_query;
  PetscReal         *w;
  PetscBLASInt       n, lda, lwork = -1, info;
  PetscInt           N, i, lda_mat;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATSEQDENSE, MAT_INITIAL_MATRIX, &D));
  PetscCall(MatGetSize(D, &N, NULL));
  PetscCall(MatDenseGetLDA(D, &lda_mat));
  PetscCall(PetscBLASIntCast(N, &n));
  lda = n;
  PetscCall(PetscMalloc2(N * N, &copy, N, &w));
  PetscCall(MatDenseGetArrayRead(D, &a));
  for (i = 0; i < N; ++i) PetscCall(PetscArraycpy(copy + i * N, a + i * lda_mat, N));
  PetscCall(MatDenseRestoreArrayRead(D, &a));
#if defined(PETSC_USE_COMPLEX) /* zheev: the Hermitian matrix's eigenvalues, with its real workspace */
  PetscReal *rwork;
  PetscCall(PetscMalloc1(PetscMax(1, 3 * N - 2), &rwork));
  PetscCallBLAS("LAPACKheev", LAPACKheev_("N", "L", &n, copy, &lda, w, &lwork_query, &lwork, rwork, &info));
  lwork = (PetscBLASInt)PetscRealPart(lwork_query);
  PetscCall(PetscMalloc1(lwork, &work));
  PetscCallBLAS("LAPACKheev", LAPACKheev_("N", "L", &n, copy, &lda, w, work, &lwork, rwork, &info));
  PetscCall(PetscFree(rwork));
#else
  PetscCallBLAS("LAPACKsyev", LAPACKsyev_("N", "L", &n, copy, &lda, w, &lwork_query, &lwork, &info));
  lwork = (PetscBLASInt)PetscRealPart(lwork_query);
  PetscCall(PetscMalloc1(lwork, &work));
  PetscCallBLAS("LAPACKsyev", LAPACKsyev_("N", "L", &n, copy, &lda, w, work, &lwork, &info));
#endif
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "dsyev/zheev failed: info %d", (int)info);
  key_which = which;
  qsort(w, (size_t)N, sizeof(PetscReal), CompareKey);
  for (i = 0; i < nev; ++i) wanted[i] = w[i];
  PetscCall(PetscFree(work));
  PetscCall(PetscFree2(copy, w));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

static PetscErrorCode SolveWith(Mat A, EPSCUDALanczosBackend backend, EPSCUDALanczosKernels kernels, PetscInt nev, EPSWhich which, PetscInt *nconv,
                                PetscReal *eig, PetscReal *res, char *used, size_t usedlen)
{
  EPS      eps;
  PetscInt i;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, &eps));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, which));
  PetscCall(EPSSetTolerances(eps, 1e-10, 10000));
  PetscCall(EPSCUDALanczosSetBackend(eps, backend));
  PetscCall(EPSCUDALanczosSetKernels(eps, kernels));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, nconv));
  if (used) { /* copied: the name lives in the EPS, destroyed below */
    const char *name;
    PetscCall(EPSCUDALanczosGetBackendInUse(eps, &name));
    PetscCall(PetscStrncpy(used, name, usedlen));
  }
  *res = 0;
  for (i = 0; i < PetscMin(*nconv, nev); ++i) {
    PetscScalar k;
    PetscReal   e;
    PetscCall(EPSGetEigenvalue(eps, i, &k, NULL));
    eig[i] = PetscRealPart(k);
    PetscCall(EPSComputeError(eps, i, PetscAbsReal(eig[i]) > 0 ? EPS_ERROR_RELATIVE : EPS_ERROR_ABSOLUTE, &e));
    *res = PetscMax(*res, e);
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  int         ndev = 0;
  PetscBool   without_gpu = PETSC_FALSE;
  PetscInt    c, ncases = 120;
  const char *whichname[] = {"largest_real", "smallest_real", "largest_magnitude", "smallest_magnitude"};
  EPSWhich    whichval[]  = {EPS_LARGEST_REAL, EPS_SMALLEST_REAL, EPS_LARGEST_MAGNITUDE, EPS_SMALLEST_MAGNITUDE};

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "host vs CUDA backends"));
  PetscCall(EPSCUDALanczosRegister());
  /* -without_gpu: run the sweep on the host backend twice (checks this test's own LAPACK reference) */
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-without_gpu", &without_gpu, NULL));
  if (!without_gpu && (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "no CUDA device: skipped\n"));
    PetscCall(SlepcFinalize());
    return 77;
  }
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cases", &ncases, NULL));

  for (c = 0; c < ncases; ++c) {
    Mat         A;
    PetscInt    n    = (c < 4) ? c + 1 : 10 + (PetscInt)(Uniform() * 1990), kind = c % 5, w = c % 4, nev = 1 + (PetscInt)(Uniform() * 8);
    PetscInt    nh, nd, i;
    PetscReal   eh[16], ed[16], el[16], rh, rd, diff = 0, diffl = 0, scale = 0;
    char used[16] = "";
    char        name[128], detail[256];
    EPSCUDALanczosKernels kernels = (c % 3 == 0) ? EPS_CUDALANCZOS_KERNELS_CUSTOM : (c % 3 == 1 ? EPS_CUDALANCZOS_KERNELS_VENDOR : EPS_CUDALANCZOS_KERNELS_DEFAULT);
    if (w == 3) w = 2; /* smallest magnitude on indefinite random matrices converges slowly without shift-and-invert */
    nev = PetscMin(nev, n);
    PetscCall(RandomMatrix(n, kind, &A));
    PetscCall(SolveWith(A, EPS_CUDALANCZOS_BACKEND_HOST, kernels, nev, whichval[w], &nh, eh, &rh, NULL, 0));
    PetscCall(SolveWith(A, without_gpu ? EPS_CUDALANCZOS_BACKEND_HOST : EPS_CUDALANCZOS_BACKEND_CUDA, kernels, nev, whichval[w], &nd, ed, &rd, used, sizeof(used)));
    PetscCall(LapackWanted(A, nev, (int)w, el));
    for (i = 0; i < PetscMin(nev, PetscMin(nh, nd)); ++i) {
      diff  = PetscMax(diff, PetscAbsReal(eh[i] - ed[i]));
      diffl = PetscMax(diffl, PetscAbsReal(el[i] - ed[i]));
      scale = PetscMax(scale, PetscAbsReal(el[i]));
    }
    PetscCall(PetscSNPrintf(name, sizeof(name), "case %" PetscInt_FMT ": %s n=%" PetscInt_FMT " nev=%" PetscInt_FMT " %s, %s kernels", c, kind % 2 ? "aij" : "dense", n, nev,
                            whichname[w], kernels == EPS_CUDALANCZOS_KERNELS_CUSTOM ? "custom" : kernels == EPS_CUDALANCZOS_KERNELS_VENDOR ? "vendor" : "default"));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "backend %s, nconv %" PetscInt_FMT "/%" PetscInt_FMT ", max|cuda-lapack| %.1e, max|cuda-host| %.1e, residual host %.1e cuda %.1e", used, nd,
                            nh, (double)diffl, (double)diff, (double)rh, (double)rd));
    PetscCall(Check((PetscBool)(!strcmp(used, without_gpu ? "host" : "cuda") && nh >= nev && nd >= nev && diff <= 1e-8 * PetscMax(scale, 1) && diffl <= 1e-8 * PetscMax(scale, 1) && rd <= 1e-9),
                    name, detail));
    PetscCall(MatDestroy(&A));
  }

  /* 100 create/solve/destroy cycles: device memory back where it started (after one warm-up solve, which
     creates the CUDA context and the libraries' own lasting state). */
  if (!without_gpu) {
    Mat       A;
    size_t    free0, free1, total;
    PetscInt  cycle, nconv;
    PetscReal eig[4], res;
    char      detail[160];
    PetscCall(RandomMatrix(1500, 0, &A));
    PetscCall(SolveWith(A, EPS_CUDALANCZOS_BACKEND_CUDA, EPS_CUDALANCZOS_KERNELS_DEFAULT, 2, EPS_LARGEST_REAL, &nconv, eig, &res, NULL, 0));
    PetscCheck(cudaMemGetInfo(&free0, &total) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaMemGetInfo failed");
    for (cycle = 0; cycle < 100; ++cycle) {
      Mat B;
      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B)); /* a new Mat each cycle: a new upload each time */
      PetscCall(SolveWith(B, EPS_CUDALANCZOS_BACKEND_CUDA, EPS_CUDALANCZOS_KERNELS_DEFAULT, 2, EPS_LARGEST_REAL, &nconv, eig, &res, NULL, 0));
      PetscCall(MatDestroy(&B));
    }
    PetscCheck(cudaMemGetInfo(&free1, &total) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaMemGetInfo failed");
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "free device memory %zu bytes before, %zu after (difference %lld)", free0, free1, (long long)free0 - (long long)free1));
    PetscCall(Check((PetscBool)(free1 == free0), "100 create/solve/destroy cycles leave device memory where it started", detail));
    PetscCall(MatDestroy(&A));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
