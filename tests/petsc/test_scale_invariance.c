/*
   Scale invariance of EPSCUDALANCZOS through PETSc/SLEPc (issue 21): the eigenpairs of c A are c times
   those of A, for c = 10^k, k = -300 .. 300 in steps of 20, on three matrices (a 1-D Laplacian, AIJ: the
   clustered end; a random symmetric matrix with both signs, dense; a path graph's adjacency, AIJ, whose
   spectrum is symmetric about 0, so that largest and smallest magnitude meet ties +-lambda), for every
   `which`, nev 1 and 6, block steps, the thesis variant, STSHIFT with a shift (c times the unscaled one)
   and the verification off.

   The reference is LAPACK's dsyev on the unscaled A, scaled: every returned value lambda is compared, as
   lambda / c, with A's eigenvalues (the `which` keys of the nev returned equal the nev best keys, and
   each returned value is one of A's, each used once: ties may come back either way); every returned
   vector x gets its true residual ||A x - (lambda / c) x|| on the unscaled A (so nothing in the check can
   overflow), and, where A's eigenvalue has a gap, its distance to dsyev's eigenvector (Davis-Kahan:
   at most about residual / gap). -eps_view must say that the operator was scaled at the extremes and
   not at c = 1.

   One check line per matrix and setting sums up its 31 scales (the worst scale named). Run serially and
   on 2 ranks with -eps_cudalanczos_backend host (tests/petsc/CMakeLists.txt); on a GPU host without it.
*/
#include "test_support.h"
#include <petscblaslapack.h>

#define NSCALES 31 /* 10^-300 .. 10^300 in steps of 20 */

typedef struct {
  const char *name;
  PetscInt    n;
  PetscBool   dense;
} MatrixKind;

static const MatrixKind kinds[3] = {{"1-D Laplacian (AIJ)", 64, PETSC_FALSE}, {"random symmetric (dense)", 48, PETSC_TRUE}, {"path adjacency, +-lambda ties (AIJ)", 50, PETSC_FALSE}};

/* Entry (i, j) of the unscaled matrix of kind k: the same on every rank. */
static PetscReal Entry(PetscInt k, PetscInt n, PetscInt i, PetscInt j)
{
  if (k == 0) return i == j ? 2.0 : (PetscAbsInt(i - j) == 1 ? -1.0 : 0.0);
  if (k == 2) return PetscAbsInt(i - j) == 1 ? 1.0 : 0.0;
  { /* a hash of (min, max): symmetric, in [-1, 1], plus a diagonal from -1.5 to 1.5 */
    unsigned long long h = (unsigned long long)PetscMin(i, j) * 1000003ULL + (unsigned long long)PetscMax(i, j) + 0x9e3779b97f4a7c15ULL;
    h ^= h >> 33, h *= 0xff51afd7ed558ccdULL, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ULL, h ^= h >> 33;
    return 2.0 * (double)(h >> 11) / 9007199254740992.0 - 1.0 + (i == j ? 3.0 * ((PetscReal)i - n / 2) / n : 0.0);
  }
}

/* c A of kind k, rows spread unevenly over the ranks. */
static PetscErrorCode BuildMatrix(PetscInt k, PetscReal c, Mat *A)
{
  const PetscInt n = kinds[k].n;
  PetscInt       nloc, rstart, rend, i, j;

  PetscFunctionBeginUser;
  PetscCall(UnevenLocalRows(n, &nloc));
  if (kinds[k].dense) PetscCall(MatCreateDense(PETSC_COMM_WORLD, nloc, nloc, n, n, NULL, A));
  else PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, nloc, nloc, n, n, 3, NULL, 2, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i)
    for (j = 0; j < n; ++j) {
      const PetscReal v = Entry(k, n, i, j);
      if (v != 0) PetscCall(MatSetValue(*A, i, j, c * v, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* dsyev on the unscaled matrix: eigenvalues ascending in w, eigenvectors in the columns of z (n x n). */
static PetscErrorCode Reference(PetscInt k, PetscReal *w, PetscReal *z)
{
  const PetscInt n = kinds[k].n;
  PetscBLASInt   bn, lwork, info;
  PetscReal     *work;

  PetscFunctionBeginUser;
  for (PetscInt j = 0; j < n; ++j)
    for (PetscInt i = 0; i < n; ++i) z[i + j * n] = Entry(k, n, i, j);
  PetscCall(PetscBLASIntCast(n, &bn));
  lwork = 4 * bn;
  PetscCall(PetscMalloc1(lwork, &work));
  PetscCallBLAS("LAPACKsyev", LAPACKsyev_("V", "L", &bn, z, &bn, w, work, &lwork, &info));
  PetscCall(PetscFree(work));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "dsyev failed: info %d", (int)info);
  PetscFunctionReturn(0);
}

typedef struct {
  const char *name;
  EPSWhich    which;
  PetscInt    nev, block;
  PetscBool   thesis, shift, verify_off;
} Setting;

#define NSETTINGS 16
static const Setting settings[NSETTINGS] = {
  {"largest magnitude, nev 1", EPS_LARGEST_MAGNITUDE, 1, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"largest magnitude, nev 6", EPS_LARGEST_MAGNITUDE, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"smallest magnitude, nev 1", EPS_SMALLEST_MAGNITUDE, 1, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"smallest magnitude, nev 6", EPS_SMALLEST_MAGNITUDE, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"largest real, nev 1", EPS_LARGEST_REAL, 1, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"largest real, nev 6", EPS_LARGEST_REAL, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"smallest real, nev 1", EPS_SMALLEST_REAL, 1, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"smallest real, nev 6", EPS_SMALLEST_REAL, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"target magnitude 0.35 c, nev 1", EPS_TARGET_MAGNITUDE, 1, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"target magnitude 0.35 c, nev 6", EPS_TARGET_MAGNITUDE, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"target real 0.35 c, nev 1", EPS_TARGET_REAL, 1, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"target real 0.35 c, nev 6", EPS_TARGET_REAL, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"block size 2, largest real, nev 4", EPS_LARGEST_REAL, 4, 2, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
  {"thesis variant, largest real", EPS_LARGEST_REAL, 1, 0, PETSC_TRUE, PETSC_FALSE, PETSC_FALSE},
  {"STSHIFT shift 0.7 c, largest real, nev 3", EPS_LARGEST_REAL, 3, 0, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
  {"verification off, largest magnitude, nev 6", EPS_LARGEST_MAGNITUDE, 6, 0, PETSC_FALSE, PETSC_FALSE, PETSC_TRUE},
};

static PetscReal Key(EPSWhich which, PetscReal lambda)
{
  switch (which) {
  case EPS_LARGEST_MAGNITUDE: return -PetscAbsReal(lambda);
  case EPS_SMALLEST_MAGNITUDE: return PetscAbsReal(lambda);
  case EPS_LARGEST_REAL: return -lambda;
  case EPS_SMALLEST_REAL: return lambda;
  default: return PetscAbsReal(lambda - 0.35);
  }
}

static int CompareReal(const void *a, const void *b)
{
  const PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b;
  return x < y ? -1 : x > y;
}

/* What one solve of c A must satisfy; the worst numbers so far go to *err (eigenvalue, relative to the
   allowance), *res (residual, likewise) and *vec (eigenvector distance, likewise); *bad says what failed. */
static PetscErrorCode CheckSolve(PetscInt k, const Setting *st, PetscReal c, EPS eps, Mat A0, const PetscReal *w, const PetscReal *z, PetscReal anorm,
                                 PetscReal *err, PetscReal *res, PetscReal *vec, char *bad, size_t len)
{
  const PetscInt n = kinds[k].n;
  PetscInt       nconv, i, j;
  PetscReal      keys_got[8], keys_ref[64];
  PetscBool      used[64] = {PETSC_FALSE};
  Vec            x, ax, all;
  VecScatter     scatter;

  PetscFunctionBeginUser;
  PetscCall(EPSGetConverged(eps, &nconv));
  if (nconv < st->nev) {
    EPSConvergedReason reason;
    PetscCall(EPSGetConvergedReason(eps, &reason));
    if (!bad[0]) PetscCall(PetscSNPrintf(bad, len, "c = %g: %" PetscInt_FMT " of %" PetscInt_FMT " converged (reason %d)", (double)c, nconv, st->nev, (int)reason));
    PetscFunctionReturn(0);
  }
  PetscCall(MatCreateVecs(A0, &x, &ax));
  PetscCall(VecScatterCreateToAll(x, &scatter, &all));
  for (i = 0; i < n; ++i) keys_ref[i] = Key(st->which, w[i]);
  qsort(keys_ref, (size_t)n, sizeof(PetscReal), CompareReal);
  for (i = 0; i < st->nev; ++i) {
    PetscScalar kr;
    PetscReal   lambda, allow, rnorm, best = PETSC_MAX_REAL, gap = PETSC_MAX_REAL;
    PetscInt    match = -1;
    PetscCall(EPSGetEigenpair(eps, i, &kr, NULL, x, NULL));
    lambda      = PetscRealPart(kr) / c; /* c A's eigenvalue, back in A's units */
    keys_got[i] = Key(st->which, lambda);
    allow       = 1e-10 * PetscMax(PetscAbsReal(lambda), 1e-3 * anorm);
    /* one of A's eigenvalues, each at most once */
    for (j = 0; j < n; ++j)
      if (!used[j] && PetscAbsReal(w[j] - lambda) < best) best = PetscAbsReal(w[j] - lambda), match = j;
    *err = PetscMax(*err, best / allow);
    if (best > allow && !bad[0]) PetscCall(PetscSNPrintf(bad, len, "c = %g: eigenvalue %" PetscInt_FMT " = %.16g c is no eigenvalue of A (nearest %.16g)", (double)c, i, (double)lambda, (double)w[match]));
    used[match] = PETSC_TRUE;
    /* the vector, on the unscaled A */
    PetscCall(MatMult(A0, x, ax));
    PetscCall(VecAXPY(ax, -lambda, x));
    PetscCall(VecNorm(ax, NORM_2, &rnorm));
    {
      const PetscReal rallow = 2e-10 * PetscAbsReal(lambda) + 100 * PETSC_MACHINE_EPSILON * anorm; /* tol on c A, plus c A's rounding */
      *res = PetscMax(*res, rnorm / rallow);
      if (rnorm > rallow && !bad[0]) PetscCall(PetscSNPrintf(bad, len, "c = %g: pair %" PetscInt_FMT " has residual %.2e on A", (double)c, i, (double)rnorm));
    }
    for (j = 0; j < n; ++j)
      if (j != match) gap = PetscMin(gap, PetscAbsReal(w[j] - w[match]));
    if (gap > 1e-6 * anorm) { /* ||x -+ z|| against dsyev's vector */
      const PetscScalar *xa;
      PetscReal          dot = 0, dist2 = 0, dallow = 2 * rnorm / gap + 1e-10;
      PetscCall(VecScatterBegin(scatter, x, all, INSERT_VALUES, SCATTER_FORWARD));
      PetscCall(VecScatterEnd(scatter, x, all, INSERT_VALUES, SCATTER_FORWARD));
      PetscCall(VecGetArrayRead(all, &xa));
      for (j = 0; j < n; ++j) dot += PetscRealPart(xa[j]) * z[j + match * n];
      for (j = 0; j < n; ++j) {
        const PetscReal d = PetscRealPart(xa[j]) - (dot < 0 ? -1 : 1) * z[j + match * n];
        dist2 += d * d;
      }
      PetscCall(VecRestoreArrayRead(all, &xa));
      *vec = PetscMax(*vec, PetscSqrtReal(dist2) / dallow);
      if (PetscSqrtReal(dist2) > dallow && !bad[0])
        PetscCall(PetscSNPrintf(bad, len, "c = %g: vector %" PetscInt_FMT " is %.2e from dsyev's (gap %.2e)", (double)c, i, (double)PetscSqrtReal(dist2), (double)gap));
    }
  }
  /* the nev best keys of A's spectrum */
  qsort(keys_got, (size_t)st->nev, sizeof(PetscReal), CompareReal);
  for (i = 0; i < st->nev; ++i) {
    const PetscReal allow = 1e-10 * PetscMax(PetscAbsReal(keys_ref[i]), 1e-3 * anorm);
    *err = PetscMax(*err, PetscAbsReal(keys_got[i] - keys_ref[i]) / allow);
    if (PetscAbsReal(keys_got[i] - keys_ref[i]) > allow && !bad[0])
      PetscCall(PetscSNPrintf(bad, len, "c = %g: wanted value %" PetscInt_FMT " missing (key %.16g, dsyev %.16g)", (double)c, i, (double)keys_got[i], (double)keys_ref[i]));
  }
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&all));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ax));
  PetscFunctionReturn(0);
}

/* -scale_stride K (a divisor of 15): every K-th scale only, the extremes and c = 1 kept. The 3-rank run
   takes 15 (tests/petsc/CMakeLists.txt): its reductions are what a loaded machine slows the most. */
static PetscInt scale_stride = 1;

static PetscErrorCode Sweep(PetscInt k)
{
  const PetscInt n = kinds[k].n;
  PetscReal     *w, *z, anorm = 0, scales[NSCALES];
  Mat            A0, cA[NSCALES];
  PetscInt       s, t, used = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(n, &w, n * n, &z));
  PetscCall(Reference(k, w, z));
  for (s = 0; s < n; ++s) anorm = PetscMax(anorm, PetscAbsReal(w[s]));
  PetscCall(BuildMatrix(k, 1.0, &A0));
  for (s = 0; s < NSCALES; ++s) {
    scales[s] = PetscPowReal(10.0, (PetscReal)(-300 + 20 * s));
    PetscCall(BuildMatrix(k, scales[s], &cA[s]));
  }
  for (t = 0; t < NSETTINGS; ++t) {
    const Setting *st  = &settings[t];
    PetscReal      err = 0, res = 0, vec = 0;
    char           bad[256] = "", name[160], detail[512];
    if (st->thesis && k == 2) continue; /* the path's largest real value is simple; the thesis runs on the other two */
    used = 0;
    for (s = 0; s < NSCALES; ++s) {
      const PetscReal c = scales[s];
      EPS             eps;
      PetscErrorCode  ierr;
      if (s % scale_stride) continue;
      ++used;
      PetscCall(CreateEPS(cA[s], EPS_HEP, EPSCUDALANCZOS, &eps));
      PetscCall(EPSSetDimensions(eps, st->nev, PETSC_DETERMINE, PETSC_DETERMINE));
      PetscCall(EPSSetWhichEigenpairs(eps, st->which));
      if (st->which == EPS_TARGET_MAGNITUDE || st->which == EPS_TARGET_REAL) PetscCall(EPSSetTarget(eps, 0.35 * c));
      PetscCall(EPSSetTolerances(eps, 1e-10, 3000));
      if (st->block) PetscCall(EPSCUDALanczosSetBlockSize(eps, st->block));
      if (st->thesis) PetscCall(EPSCUDALanczosSetVariant(eps, EPS_CUDALANCZOS_THESIS));
      if (st->verify_off) PetscCall(EPSCUDALanczosSetVerify(eps, PETSC_FALSE));
      if (st->shift) {
        ST stx;
        PetscCall(EPSGetST(eps, &stx));
        PetscCall(STSetType(stx, STSHIFT));
        PetscCall(STSetShift(stx, 0.7 * c));
      }
      PetscCall(EPSSetFromOptions(eps));
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = EPSSolve(eps);
      PetscCall(PetscPopErrorHandler());
      if (ierr) {
        if (!bad[0]) PetscCall(PetscSNPrintf(bad, sizeof(bad), "c = %g: EPSSolve failed with error %d", (double)c, (int)ierr));
      } else PetscCall(CheckSolve(k, st, c, eps, A0, w, z, anorm, &err, &res, &vec, bad, sizeof(bad)));
      if (t == 0 && (s == 0 || s == NSCALES - 1 || s == NSCALES / 2)) { /* -eps_view: scaled at the extremes only */
        PetscBool found;
        char      line[256];
        PetscCall(ViewLine(eps, "operator scaled by 2^", line, sizeof(line), &found));
        PetscCall(PetscSNPrintf(name, sizeof(name), "%s, c = %g: -eps_view %s the scaling", kinds[k].name, (double)c, s == NSCALES / 2 ? "does not mention" : "reports"));
        PetscCall(Check((PetscBool)(found == (s != NSCALES / 2)), name, found ? line : "no such line"));
      }
      PetscCall(EPSDestroy(&eps));
    }
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s, %s: c = 1e-300 .. 1e300", kinds[k].name, st->name));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "worst of %d scales, as fractions of the allowance: eigenvalue %.2g, residual on A %.2g, distance to dsyev's vector %.2g%s%s",
                            (int)used, (double)err, (double)res, (double)vec, bad[0] ? "; " : "", bad));
    PetscCall(Check((PetscBool)!bad[0], name, detail));
  }
  for (s = 0; s < NSCALES; ++s) PetscCall(MatDestroy(&cA[s]));
  PetscCall(MatDestroy(&A0));
  PetscCall(PetscFree2(w, z));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "EPSCUDALANCZOS scale invariance"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-scale_stride", &scale_stride, NULL));
  PetscCheck(scale_stride >= 1 && (NSCALES / 2) % scale_stride == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-scale_stride must divide %d (the extremes and c = 1 stay in), not %" PetscInt_FMT, NSCALES / 2, scale_stride);
  for (PetscInt k = 0; k < 3; ++k) PetscCall(Sweep(k));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
