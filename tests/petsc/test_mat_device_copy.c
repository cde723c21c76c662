/*
   The device copy belongs to the Mat (src/petsc/mat_device_copy.cpp): a Mat changed in place after a
   solve must be seen by the next solve, on the same EPS after EPSSetOperators (SLEPc's contract) and on
   a new EPS, for each kind of change: MatShift, MatScale, MatSetValues with assembly, MatZeroEntries,
   a new nonzero pattern. Also: two EPS sharing one Mat, a host Mat and (with a CUDA PETSc) a device
   Mat in one program, and, on the CUDA backend, the bytes each solve uploads (a new EPS on an unchanged
   Mat: 0) and the device memory MatDestroy gives back. Dense Mats also with a leading dimension of n + 1
   (on one process). With a CUDA PETSc and a GPU, the same for device Mats (aijcusparse, densecuda):
   on the CUDA backend on one process they are used in place, 0 bytes uploaded by every solve, and each
   change is still seen. The MPI device types (mpiaijcusparse, mpidensecuda) are used in place too, on 1
   rank (asked for by name) and on 2 (what aijcusparse / densecuda become there). Every eigenvalue is
   compared with SLEPc's krylovschur on the same Mat, and every returned eigenvector's true residual
   ||A x - lambda x|| is computed by PETSc (MatMult on the Mat's own vectors: device vectors for device
   Mats) against ||A||_1. A one-process device Mat whose off-diagonal entries are all one value gets its
   pattern split off on the device instead (the value-less product, as for an uploaded host Mat). With a CUDA PETSc (3.20+) on the CUDA backend, the eigenvectors of a device Mat
   go into the BV's VECCUDA columns device to device (-eps_view says so), and so do a host Mat's (the BV
   gets VECCUDA columns from the plugin) and those of a host Mat that makes VECCUDA vectors
   (MatSetVecType), with a VECCUDA initial vector read the same way.

   Options: -eps_cudalanczos_backend host|cuda (CI passes host), -n N (default 400).
*/
#include "test_support.h"

#if defined(CUDALANCZOS_TEST_CUDA)
#include <cuda_runtime_api.h>
#endif

static PetscInt n = 400;
static const PetscInt nev = 3;
static PetscInt lda_pad = 0; /* > 0: dense Mats on one process get the leading dimension n + lda_pad */
static int devices = 0;      /* CUDA devices this process sees (0 where the plugin has no CUDA) */

static PetscBool IsDenseType(MatType type)
{
  PetscBool dense = (PetscBool)(strcmp(type, MATDENSE) == 0);
#if defined(PETSC_HAVE_CUDA)
  dense = (PetscBool)(dense || strcmp(type, MATDENSECUDA) == 0 || strcmp(type, MATMPIDENSECUDA) == 0);
#endif
  return dense;
}

static PetscBool IsDeviceType(MatType type)
{
#if defined(PETSC_HAVE_CUDA)
  return (PetscBool)(strcmp(type, MATAIJCUSPARSE) == 0 || strcmp(type, MATDENSECUDA) == 0 || strcmp(type, MATMPIAIJCUSPARSE) == 0 ||
                     strcmp(type, MATMPIDENSECUDA) == 0);
#else
  (void)type;
  return PETSC_FALSE;
#endif
}

/* Whether the CUDA backend uses a Mat of this type in place: a CUDA PETSc's device Mat, on any number of
   processes (the MPI device types as row-distributed operators on their own device blocks). */
static PetscErrorCode InPlace(MatType type, PetscBool *in_place)
{
  PetscFunctionBeginUser;
  *in_place = (PetscBool)(IsDeviceType(type) && devices > 0);
  PetscFunctionReturn(0);
}

/* ||A x_i - lambda_i x_i|| for the first nev returned pairs, by PETSc on A's own vectors (VECCUDA for a
   device Mat: MatMult on the device), against ||A||_1: the solve asked for 1e-10 relative to |lambda|,
   which is at most ||A||_1; 1e-8 leaves room for the rounding of the products. */
static PetscErrorCode CheckResiduals(EPS eps, Mat A, const char *what)
{
  Vec       x, y;
  PetscReal worst = 0, anorm;
  PetscInt  i, nconv;
  char      name[256], detail[256];
  VecType   vtype;

  PetscFunctionBeginUser;
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(MatNorm(A, NORM_1, &anorm));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar l;
    PetscReal   r;
    PetscCall(EPSGetEigenpair(eps, i, &l, NULL, x, NULL));
    PetscCall(MatMult(A, x, y));
    PetscCall(VecAXPY(y, -l, x));
    PetscCall(VecNorm(y, NORM_2, &r));
    worst = PetscMax(worst, r);
  }
  PetscCall(VecGetType(x, &vtype));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s: true residuals", what));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "max ||Ax - lambda x|| = %.2e, ||A||_1 = %.2e (%s vectors)", (double)worst, (double)anorm, vtype));
  PetscCall(Check((PetscBool)(nconv >= nev && worst <= 1e-8 * anorm), name, detail));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* Whether the last solve put its eigenvectors into the BV's device columns (-eps_view's "vectors:" line). */
static PetscErrorCode CheckDeviceBV(EPS eps, const char *what)
{
  char      line[512], name[256];
  PetscBool found;

  PetscFunctionBeginUser;
  PetscCall(ViewLine(eps, "vectors:", line, sizeof(line), &found));
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s: eigenvectors written to the BV's device columns", what));
  PetscCall(Check((PetscBool)(found && strstr(line, "device columns (VECCUDA)")), name, found ? line : "no vectors line"));
  PetscFunctionReturn(0);
}

/* A tridiagonal matrix with a varying diagonal (distinct eigenvalues), AIJ (or dense) over the ranks. */
static PetscErrorCode BuildMatrix(MatType type, Mat *A)
{
  PetscInt    i, rstart, rend;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, type));
  if (lda_pad > 0 && size == 1 && IsDenseType(type)) PetscCall(MatDenseSetLDA(*A, n + lda_pad));
  PetscCall(MatSetUp(*A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    PetscCall(MatSetValue(*A, i, i, 2.0 + (PetscReal)i / n, INSERT_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* The nev largest eigenvalues of A by krylovschur, the reference. */
static PetscErrorCode Reference(Mat A, PetscReal *lambda)
{
  EPS      eps;
  PetscInt i, nconv;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, EPSKRYLOVSCHUR, &eps));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(eps, 1e-12, 10000));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCheck(nconv >= nev, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "krylovschur converged %" PetscInt_FMT " of %" PetscInt_FMT, nconv, nev);
  for (i = 0; i < nev; ++i) {
    PetscScalar e;
    PetscCall(EPSGetEigenvalue(eps, i, &e, NULL));
    lambda[i] = PetscRealPart(e);
  }
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* A cudalanczos EPS on A (options from the command line: the backend), nev largest. */
static PetscErrorCode CreateSolver(Mat A, EPS *eps)
{
  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, EPSCUDALANCZOS, eps));
  PetscCall(EPSSetDimensions(*eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(*eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(*eps, 1e-10, 10000));
  PetscCall(EPSSetFromOptions(*eps));
  PetscFunctionReturn(0);
}

/* Whether the last solve ran on the CUDA backend, and the matrix bytes it uploaded (-eps_view). */
static PetscErrorCode Uploaded(EPS eps, PetscBool *on_cuda, long *bytes)
{
  char      line[512];
  PetscBool found;

  PetscFunctionBeginUser;
  PetscCall(ViewLine(eps, "backend used: cuda", NULL, 0, on_cuda));
  *bytes = -1;
  PetscCall(ViewLine(eps, "matrix bytes uploaded by the last solve:", line, sizeof(line), &found));
  if (found) *bytes = atol(line + strlen("matrix bytes uploaded by the last solve:"));
  PetscFunctionReturn(0);
}

/* Solves eps and checks its nev values against krylovschur on A; `upload` is what the CUDA backend must
   report: 1 = some bytes, 0 = none, 2 = none and the operator is the Mat's device data used in place,
   -1 = don't check. */
static PetscErrorCode SolveAndCheck(EPS eps, Mat A, const char *what, int upload)
{
  PetscReal ref[8], err = 0;
  PetscInt  i, nconv;
  PetscBool on_cuda;
  long      bytes;
  char      detail[256];

  PetscFunctionBeginUser;
  PetscCall(Reference(A, ref));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar l;
    PetscCall(EPSGetEigenvalue(eps, i, &l, NULL));
    err = PetscMax(err, PetscAbsReal(PetscRealPart(l) - ref[i]) / PetscAbsReal(ref[i]));
  }
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " converged, largest relative error %.2e against krylovschur", nconv, (double)err));
  PetscCall(Check((PetscBool)(nconv >= nev && err < 1e-8), what, detail));
  PetscCall(CheckResiduals(eps, A, what));
  PetscCall(Uploaded(eps, &on_cuda, &bytes));
  if (on_cuda && upload >= 0) { /* the device memory this EPS's backend holds is reported (its basis at least) */
    char        line[512], name[256];
    const char *key = "device memory held: this EPS's backend";
    PetscBool   found;
    PetscCall(ViewLine(eps, key, line, sizeof(line), &found));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s: -eps_view reports the backend's device memory", what));
    PetscCall(Check((PetscBool)(found && atol(strstr(line, key) + strlen(key)) > 0), name, found ? line : "no such line"));
  }
  if (on_cuda && upload >= 0) {
    char name[256];
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s: %s", what, upload == 1 ? "the changed Mat is uploaded" : "nothing uploaded"));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "%ld bytes", bytes));
    PetscCall(Check((PetscBool)(upload == 1 ? bytes > 0 : bytes == 0), name, detail));
  }
  if (on_cuda && upload == 2) {
    char      line[512], name[256];
    PetscBool found;
    PetscCall(ViewLine(eps, "operator:", line, sizeof(line), &found));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s: the Mat's device data used in place, or its pattern split off there", what));
    PetscCall(Check((PetscBool)(found && (strstr(line, "(PETSc's device array, used in place)") || strstr(line, "(split on the device from PETSc's device array)"))), name, line));
#if PETSC_VERSION_GE(3, 20, 0)
    PetscCall(CheckDeviceBV(eps, what)); /* a device Mat's vectors, and so the BV's columns, are VECCUDA */
#endif
  }
  PetscFunctionReturn(0);
}

/* Each change in place, seen by the same EPS after EPSSetOperators and by a new EPS. A device Mat used in
   place uploads nothing, changed or not. */
static PetscErrorCode ChangesAreSeen(MatType type)
{
  const char *changes[] = {"MatShift", "MatScale", "MatSetValues", "MatZeroEntries", "new nonzero pattern"};
  PetscInt    c;
  PetscBool   in_place;
  char        kind[64];

  PetscFunctionBeginUser;
  PetscCall(InPlace(type, &in_place));
  const int changed = in_place ? 2 : IsDeviceType(type) ? 0 : 1, unchanged = in_place ? 2 : 0;
  PetscCall(PetscSNPrintf(kind, sizeof(kind), "%s%s", type, lda_pad > 0 && IsDenseType(type) ? " (lda n + 1)" : ""));
  for (c = 0; c < 5; ++c) {
    Mat  A;
    EPS  eps, other;
    char name[256];
    PetscCall(BuildMatrix(type, &A));
    if (c == 0 && lda_pad > 0 && IsDenseType(type)) {
      PetscInt    lda;
      PetscMPIInt size;
      PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
      PetscCall(MatDenseGetLDA(A, &lda));
      PetscCall(PetscSNPrintf(name, sizeof(name), "lda %" PetscInt_FMT, lda));
      if (size == 1) PetscCall(Check((PetscBool)(lda == n + lda_pad), "the dense Mat has the leading dimension asked for", name));
    }
    PetscCall(CreateSolver(A, &eps));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s: first solve", kind, changes[c]));
    PetscCall(SolveAndCheck(eps, A, name, changed));
    PetscCall(CreateSolver(A, &other));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s: a new EPS on the unchanged Mat", kind, changes[c]));
    PetscCall(SolveAndCheck(other, A, name, unchanged));
    PetscCall(EPSDestroy(&other));
    switch (c) {
    case 0: PetscCall(MatShift(A, 3.0)); break;
    case 1: PetscCall(MatScale(A, -0.5)); break;
    case 2: { /* the last diagonal entry lifted: a new largest eigenvalue */
      PetscInt rstart, rend;
      PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
      if (rend == n) PetscCall(MatSetValue(A, n - 1, n - 1, 10.0, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    } break;
    case 3: { /* zeroed, then another diagonal put back in the same pattern */
      PetscInt rstart, rend, i;
      PetscCall(MatZeroEntries(A));
      PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
      for (i = rstart; i < rend; ++i) PetscCall(MatSetValue(A, i, i, 1.0 + (PetscReal)(i % 7) + (PetscReal)i / n, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    } break;
    case 4: { /* a symmetric pair of new entries far from the diagonal */
      PetscInt rstart, rend;
      PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
      PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
      if (rstart == 0) PetscCall(MatSetValue(A, 0, n - 1, 4.0, INSERT_VALUES));
      if (rend == n) PetscCall(MatSetValue(A, n - 1, 0, 4.0, INSERT_VALUES));
      PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    } break;
    }
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s: the same EPS after EPSSetOperators", kind, changes[c]));
    PetscCall(SolveAndCheck(eps, A, name, changed));
    PetscCall(CreateSolver(A, &other));
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s %s: a new EPS", kind, changes[c]));
    PetscCall(SolveAndCheck(other, A, name, unchanged));
    PetscCall(EPSDestroy(&other));
    PetscCall(EPSDestroy(&eps));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(0);
}

/* Two EPS on one Mat, solving in turn: every solve right, only the first uploads. */
static PetscErrorCode TwoSolversShareAMat(void)
{
  Mat A;
  EPS e1, e2;

  PetscFunctionBeginUser;
  PetscCall(BuildMatrix(MATAIJ, &A));
  PetscCall(CreateSolver(A, &e1));
  PetscCall(CreateSolver(A, &e2));
  PetscCall(SolveAndCheck(e1, A, "two EPS on one Mat: the first", 1));
  PetscCall(SolveAndCheck(e2, A, "two EPS on one Mat: the second", 0));
  PetscCall(EPSSetOperators(e1, A, NULL)); /* SLEPc solves a solved EPS again only after this */
  PetscCall(SolveAndCheck(e1, A, "two EPS on one Mat: the first again", 0));
  PetscCall(EPSDestroy(&e1));
  PetscCall(SolveAndCheck(e2, A, "two EPS on one Mat: the second after the first is gone", 0));
  PetscCall(EPSDestroy(&e2));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* A host Mat and, with a CUDA PETSc, a device Mat of the same matrix in one program. */
static PetscErrorCode HostAndDeviceMats(void)
{
  Mat       A, D;
  EPS       ea, ed;
  PetscBool device_mat = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(BuildMatrix(MATAIJ, &A));
#if defined(PETSC_HAVE_CUDA)
  if (devices > 0) {
    PetscCall(MatConvert(A, MATAIJCUSPARSE, MAT_INITIAL_MATRIX, &D));
    PetscCall(InPlace(MATAIJCUSPARSE, &device_mat));
  } else
#endif
    PetscCall(MatConvert(A, MATDENSE, MAT_INITIAL_MATRIX, &D)); /* no device Mats here: another host type */
  PetscCall(CreateSolver(A, &ea));
  PetscCall(CreateSolver(D, &ed));
  PetscCall(SolveAndCheck(ea, A, "host and device Mats: the host Mat", -1));
#if PETSC_VERSION_GE(3, 20, 0) && defined(PETSC_HAVE_CUDA)
  {
    /* a host Mat solved on the GPU of a CUDA PETSc returns its vectors in VECCUDA columns (CheckResiduals
       above copied them into the host Mat's Vecs) */
    PetscBool on_cuda;
    long      bytes;
    PetscCall(Uploaded(ea, &on_cuda, &bytes));
    if (on_cuda) PetscCall(CheckDeviceBV(ea, "host and device Mats: the host Mat"));
  }
#endif
  PetscCall(SolveAndCheck(ed, D, "host and device Mats: the other", device_mat ? 2 : -1));
  if (device_mat) {
    /* the off-diagonal entries are all -1: on one process the default kernels split the device Mat's
       value-less pattern off on the device, as they do for an uploaded host Mat; MPI types stay in place */
    char        line[512];
    PetscBool   found, on_cuda;
    PetscMPIInt size;
    long        bytes;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(Uploaded(ed, &on_cuda, &bytes));
    PetscCall(ViewLine(ed, "operator:", line, sizeof(line), &found));
    if (on_cuda && size == 1)
      PetscCall(Check((PetscBool)(found && strstr(line, "pattern SpMV") && strstr(line, "(split on the device from PETSc's device array)")),
                      "host and device Mats: a uniform device Mat's pattern is split off on the device", line));
    if (on_cuda && size > 1) PetscCall(Check((PetscBool)(found && strstr(line, "used in place")), "host and device Mats: an MPI device Mat is used in place", line));
  }
  PetscCall(EPSSetOperators(ea, A, NULL));
  PetscCall(SolveAndCheck(ea, A, "host and device Mats: the host Mat again", 0));
  PetscCall(EPSDestroy(&ea));
  PetscCall(EPSDestroy(&ed));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(0);
}

#if defined(PETSC_HAVE_CUDA)
/* A host Mat that makes VECCUDA vectors (MatSetVecType), and a VECCUDA initial vector: the operator is
   uploaded; values against krylovschur, residuals by MatMult on VECCUDA vectors (PETSc takes them to the host
   Mat). A device Mat's BV (device to device) is checked in ChangesAreSeen. */
static PetscErrorCode DeviceBV(void)
{
  Mat         A;
  EPS         eps;
  BV          bv;
  Vec         v0;
  PetscRandom rnd;
  PetscBool   on_cuda;
  long        bytes;

  PetscFunctionBeginUser;
  PetscCall(BuildMatrix(MATAIJ, &A));
  /* SLEPc takes the BV's vector type from the Mat's vectors (BVSetSizesFromVec): a host Mat that makes
     VECCUDA vectors gives the EPS a BV with VECCUDA columns */
  PetscCall(MatSetVecType(A, VECCUDA));
  PetscCall(CreateSolver(A, &eps));
  PetscCall(EPSGetBV(eps, &bv));
  PetscCall(BVSetType(bv, BVSVEC));
  PetscCall(VecCreate(PETSC_COMM_WORLD, &v0));
  PetscCall(VecSetType(v0, VECCUDA));
  PetscCall(VecSetSizes(v0, PETSC_DECIDE, n));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(VecSetRandom(v0, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(EPSSetInitialSpace(eps, 1, &v0));
  PetscCall(SolveAndCheck(eps, A, "host Mat, VECCUDA BV and initial vector", -1));
  PetscCall(Uploaded(eps, &on_cuda, &bytes));
#if PETSC_VERSION_GE(3, 20, 0)
  /* SLEPc sizes a BV from MatCreateVecsEmpty, which gives a host AIJ Mat's vectors the host type whatever
     MatSetVecType said; cudalanczos gives the BV VECCUDA columns itself when it solves on the GPU */
  if (on_cuda) PetscCall(CheckDeviceBV(eps, "host Mat, VECCUDA BV and initial vector"));
#endif
  PetscCall(VecDestroy(&v0));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}
#endif

#if defined(PETSC_HAVE_CUDA)
/* A standard problem by shift-and-invert on a device Mat: the operator is STApply, whose KSP solves on the
   device; the CUDA backend calls it on VECCUDA placed over its basis columns (no copy to the host). The 4
   eigenvalues nearest sigma = -0.1 (below the spectrum: A - sigma I is positive definite) against krylovschur
   with the same ST and KSP: LU by cuSPARSE on one rank, CG with Jacobi on two (no parallel LU in this PETSc;
   with GMRES and Jacobi at an interior shift, 1.5, the two-rank run passed its 60 s limit on an H200). */
static PetscErrorCode ShiftAndInvertOnDevice(void)
{
  Mat         A;
  PetscReal   lambda[2][4] = {{0}};
  PetscInt    nconv[2] = {0, 0};
  PetscMPIInt size;
  char        line[512], detail[512];
  PetscBool   found = PETSC_FALSE;
  PetscReal   err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(BuildMatrix(MATAIJCUSPARSE, &A));
  for (int ours = 0; ours < 2; ++ours) {
    EPS eps;
    ST  st;
    KSP ksp;
    PC  pc;
    PetscCall(CreateEPS(A, EPS_HEP, ours ? EPSCUDALANCZOS : EPSKRYLOVSCHUR, &eps));
    PetscCall(EPSSetDimensions(eps, 4, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(EPSSetTarget(eps, -0.1));
    PetscCall(EPSSetWhichEigenpairs(eps, EPS_TARGET_MAGNITUDE));
    PetscCall(EPSSetTolerances(eps, 1e-10, 10000));
    PetscCall(EPSGetST(eps, &st));
    PetscCall(STSetType(st, STSINVERT));
    PetscCall(STGetKSP(st, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    if (size == 1) {
      PetscCall(KSPSetType(ksp, KSPPREONLY));
      PetscCall(PCSetType(pc, PCLU));
      PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERCUSPARSE));
    } else {
      PetscCall(KSPSetType(ksp, KSPCG));
      PetscCall(PCSetType(pc, PCJACOBI));
      PetscCall(KSPSetTolerances(ksp, 1e-14, 1e-50, PETSC_DEFAULT, 10000));
    }
    PetscCall(EPSSolve(eps));
    PetscCall(EPSGetConverged(eps, &nconv[ours]));
    for (PetscInt i = 0; i < PetscMin(nconv[ours], 4); ++i) {
      PetscScalar l;
      PetscCall(EPSGetEigenvalue(eps, i, &l, NULL));
      lambda[ours][i] = PetscRealPart(l);
    }
    if (ours) PetscCall(ViewLine(eps, "operator: STApply on the device", line, sizeof(line), &found));
    PetscCall(EPSDestroy(&eps));
  }
  for (PetscInt i = 0; i < 4; ++i) err = PetscMax(err, PetscAbsReal(lambda[1][i] - lambda[0][i]) / PetscAbsReal(lambda[0][i]));
  PetscCall(PetscSNPrintf(detail, sizeof(detail), "%" PetscInt_FMT " converged (krylovschur %" PetscInt_FMT "), largest relative difference %.2e; %s",
                          nconv[1], nconv[0], (double)err, found ? line : "-eps_view: the operator is not STApply on the device"));
  PetscCall(Check((PetscBool)(nconv[1] >= 4 && nconv[0] >= 4 && err < 1e-8 && found), "device Mat, STSINVERT: STApply on the device", detail));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}
#endif

#if defined(CUDALANCZOS_TEST_CUDA)
/* On the CUDA backend: MatDestroy gives the Mat's device copy back (the EPS already gone). */
static PetscErrorCode MatDestroyFreesTheCopy(void)
{
  Mat       A;
  EPS       eps;
  PetscBool on_cuda;
  long      bytes;
  size_t    free_before, free_after, total;
  char      detail[256];
  PetscInt  keep = n;

  PetscFunctionBeginUser;
  n = 3000; /* dense: 72 MB, far above what the allocator's granularity could hide */
  PetscCall(BuildMatrix(MATDENSE, &A));
  PetscCall(CreateSolver(A, &eps));
  PetscCall(EPSSolve(eps));
  PetscCall(Uploaded(eps, &on_cuda, &bytes));
  PetscCall(EPSDestroy(&eps));
  if (on_cuda) {
    PetscCheck(cudaMemGetInfo(&free_before, &total) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaMemGetInfo failed");
    PetscCall(MatDestroy(&A));
    PetscCheck(cudaMemGetInfo(&free_after, &total) == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "cudaMemGetInfo failed");
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "copy of %ld bytes; %.1f MB given back", bytes, (double)((long long)free_after - (long long)free_before) / 1e6));
    PetscCall(Check((PetscBool)(bytes > 0 && (long long)free_after - (long long)free_before >= (long long)(0.9 * bytes)), "MatDestroy gives the device copy back", detail));
  } else PetscCall(MatDestroy(&A));
  n = keep;
  PetscFunctionReturn(0);
}
#endif

int main(int argc, char **argv)
{
  PetscMPIInt size;
  PetscBool   device_bv_only = PETSC_FALSE;

  PetscFunctionBeginUser;
#if defined(PETSC_HAVE_CUDA)
  /* Debian's Open MPI is not CUDA-aware: PETSc must not hand it device buffers (device Mats on 2 ranks) */
  PetscCall(PetscOptionsSetValue(NULL, "-use_gpu_aware_mpi", "0"));
#endif
  PetscCall(SlepcInitialize(&argc, &argv, NULL, NULL));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
#if defined(CUDALANCZOS_TEST_CUDA)
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
#endif
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-device_bv_only", &device_bv_only, NULL)); /* one case, for a quick look on a GPU host */
  if (!device_bv_only) PetscCall(ChangesAreSeen(MATAIJ));
  if (!device_bv_only) PetscCall(ChangesAreSeen(MATDENSE));
  if (size == 1 && !device_bv_only) { /* a leading dimension that is not the row count (nor a multiple of 16) */
    lda_pad = 1;
    PetscCall(ChangesAreSeen(MATDENSE));
    lda_pad = 0;
  }
#if defined(PETSC_HAVE_CUDA)
  if (devices > 0 && !device_bv_only) { /* device Mats: in place on one process, lda n (400: a multiple of 16) and n + 1 */
    PetscCall(ChangesAreSeen(MATAIJCUSPARSE));
    PetscCall(ChangesAreSeen(MATDENSECUDA));
    if (size == 1) {
      lda_pad = 1;
      PetscCall(ChangesAreSeen(MATDENSECUDA));
      lda_pad = 0;
      /* the MPI device types asked for by name on one process (on two they are the types above) */
      PetscCall(ChangesAreSeen(MATMPIAIJCUSPARSE));
      PetscCall(ChangesAreSeen(MATMPIDENSECUDA));
    }
  }
  if (devices > 0) PetscCall(DeviceBV());
  if (devices > 0 && !device_bv_only) PetscCall(ShiftAndInvertOnDevice());
#endif
  if (device_bv_only) goto done;
  PetscCall(TwoSolversShareAMat());
  PetscCall(HostAndDeviceMats());
#if defined(CUDALANCZOS_TEST_CUDA)
  PetscCall(MatDestroyFreesTheCopy());
#endif
done:
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
