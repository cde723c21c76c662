/*
   Vibration modes of a stretched membrane: the generalized Hermitian eigenproblem K x = lambda M x of
   bilinear (Q1) finite elements, the lowest modes by shift-and-invert.

   The membrane covers [0, Lx] x [0, Ly] (default 1 x 0.75) and is fixed along its edge: its transverse
   displacement u obeys -T Laplace(u) = rho omega^2 u with u = 0 on the boundary (T = rho = 1 here, the
   same equation as the pressure modes of a 2-D acoustic cavity with sound-soft walls). The example
   assembles, on an mx x my grid of rectangles, the stiffness K (integrals of grad(phi_i) . grad(phi_j))
   and the consistent mass M (integrals of phi_i phi_j) over the interior nodes, both symmetric positive
   definite, and asks for the nev lowest eigenvalues lambda = omega^2 with STSINVERT around 0:
   EPS_GHEP, EPS_TARGET_MAGNITUDE, -eps_type cudalanczos by default (any -eps_type, -st_type, -st_ksp_type,
   -st_pc_type, ... from the options).

   It prints, for each mode, lambda, the frequency omega = sqrt(lambda), the relative residual
   ||K x - lambda M x|| / (|lambda| ||x||), x^T M x (1: M-normalized), and the exact eigenvalue of the
   discretization: Q1 elements on a tensor grid give K = Kx (x) My + Mx (x) Ky and M = Mx (x) My with the
   1-D P1 matrices, so lambda = mu_x(i) + mu_y(j), mu(k) = (6 / h^2) (1 - cos t) / (2 + cos t), t = k pi / m.
   With -lumped the mass is lumped (its row sums on the diagonal: hx hy, less next to the fixed edge), the
   formula no longer holds, and the column prints NaN; -check still compares with LAPACK.

     ./vibration_modes [-mx 40] [-my 30] [-Lx 1] [-Ly 0.75] [-nev 8] [-eps_type cudalanczos|krylovschur|...]
                       [-check] [-lumped] [-solves N] [-mat_type aijcusparse]

   -solves N solves N - 1 more times on the same EPS (after EPSSetOperators with the same K and M) and
   prints the first solve's time and the median of the others. The matrices take -mat_type (aijcusparse: on the GPU with a CUDA PETSc, vectors included).

   -check (small grids) also gathers K and M on rank 0, solves K x = lambda M x densely with LAPACK's
   dsygv, and exits non-zero unless the nev computed eigenvalues match its lowest nev (its highest with
   -eps_largest_real or -eps_largest_magnitude) to 1e-9 relative,
   every residual is below 1e-8 and every x^T M x is 1 to 1e-10 (tests/ runs it this way).
*/
#include <slepccudalanczos.h>
#include <petscblaslapack.h>

/* Q1 element matrices on an hx x hy rectangle, nodes (0,0), (hx,0), (hx,hy), (0,hy). */
static void ElementMatrices(PetscReal hx, PetscReal hy, PetscScalar Ke[16], PetscScalar Me[16])
{
  static const PetscReal kx[16] = {2, -2, -1, 1, -2, 2, 1, -1, -1, 1, 2, -2, 1, -1, -2, 2};
  static const PetscReal ky[16] = {2, 1, -1, -2, 1, 2, -2, -1, -1, -2, 2, 1, -2, -1, 1, 2};
  static const PetscReal m[16]  = {4, 2, 1, 2, 2, 4, 2, 1, 1, 2, 4, 2, 2, 1, 2, 4};
  for (int i = 0; i < 16; ++i) {
    Ke[i] = hy / (6 * hx) * kx[i] + hx / (6 * hy) * ky[i];
    Me[i] = hx * hy / 36 * m[i];
  }
}

/* K and M over the interior nodes (i, j), 1 <= i < mx, 1 <= j < my, numbered (i-1) + (j-1)(mx-1). Each rank
   adds the elements of its share (ADD_VALUES sends the entries of other ranks' rows to them). */
static PetscErrorCode CreateMatrix(PetscInt n, PetscInt nz, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetFromOptions(*A)); /* -mat_type aijcusparse: the matrices (and so the vectors) on the GPU */
  PetscCall(MatSeqAIJSetPreallocation(*A, nz, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, nz, NULL, nz, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode Assemble(PetscInt mx, PetscInt my, PetscReal Lx, PetscReal Ly, PetscBool lumped, Mat *K, Mat *M)
{
  const PetscInt  nx = mx - 1, ny = my - 1, n = nx * ny, nel = mx * my;
  const PetscReal hx = Lx / mx, hy = Ly / my;
  PetscScalar     Ke[16], Me[16];
  PetscInt        e, estart = 0, eloc = PETSC_DECIDE, nel_total = nel;

  PetscFunctionBeginUser;
  ElementMatrices(hx, hy, Ke, Me);
  PetscCall(CreateMatrix(n, 9, K));
  PetscCall(CreateMatrix(n, 9, M));
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &eloc, &nel_total));
  PetscCallMPI(MPI_Scan(&eloc, &estart, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  estart -= eloc;
  for (e = estart; e < estart + eloc; ++e) {
    const PetscInt ei = e % mx, ej = e / mx; /* lower-left corner node (ei, ej) */
    const PetscInt ci[4] = {ei, ei + 1, ei + 1, ei}, cj[4] = {ej, ej, ej + 1, ej + 1};
    PetscInt       idx[4];
    for (int a = 0; a < 4; ++a) /* a boundary node is not an unknown: -1 makes MatSetValues skip it */
      idx[a] = (ci[a] >= 1 && ci[a] <= nx && cj[a] >= 1 && cj[a] <= ny) ? (ci[a] - 1) + (cj[a] - 1) * nx : -1;
    PetscCall(MatSetValues(*K, 4, idx, 4, idx, Ke, ADD_VALUES));
    PetscCall(MatSetValues(*M, 4, idx, 4, idx, Me, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*K, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*K, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
  if (lumped) { /* the row-sum (lumped) mass: diagonal */
    Vec d;
    PetscCall(MatCreateVecs(*M, &d, NULL));
    PetscCall(MatGetRowSum(*M, d));
    PetscCall(MatDestroy(M));
    PetscCall(CreateMatrix(n, 1, M));
    PetscCall(MatDiagonalSet(*M, d, INSERT_VALUES));
    PetscCall(VecDestroy(&d));
  }
  PetscCall(MatSetOption(*K, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(*M, MAT_SYMMETRIC, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static int CompareReal(const void *a, const void *b)
{
  const PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b;
  return x < y ? -1 : x > y;
}

/* The exact eigenvalues of the discretization, ascending, the lowest `count` of them. */
static PetscErrorCode ExactEigenvalues(PetscInt mx, PetscInt my, PetscReal Lx, PetscReal Ly, PetscInt count, PetscReal *exact)
{
  const PetscInt nx = mx - 1, ny = my - 1;
  PetscReal     *all;
  PetscInt       i, j;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nx * ny, &all));
  for (j = 1; j <= ny; ++j)
    for (i = 1; i <= nx; ++i) {
      const PetscReal hx = Lx / mx, hy = Ly / my, cx = PetscCosReal(i * PETSC_PI / mx), cy = PetscCosReal(j * PETSC_PI / my);
      all[(i - 1) + (j - 1) * nx] = 6 / (hx * hx) * (1 - cx) / (2 + cx) + 6 / (hy * hy) * (1 - cy) / (2 + cy);
    }
  qsort(all, (size_t)(nx * ny), sizeof(PetscReal), CompareReal);
  for (i = 0; i < count; ++i) exact[i] = all[i];
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* The n x n dense copy of A on rank 0 (column-major; NULL elsewhere): column by column to rank 0. */
static PetscErrorCode GatherDense(Mat A, PetscScalar **dense)
{
  PetscInt    n, j;
  Vec         col, col0;
  VecScatter  toz;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatCreateVecs(A, &col, NULL));
  PetscCall(VecScatterCreateToZero(col, &toz, &col0));
  *dense = NULL;
  if (!rank) PetscCall(PetscMalloc1(n * n, dense));
  for (j = 0; j < n; ++j) {
    PetscCall(MatGetColumnVector(A, col, j));
    PetscCall(VecScatterBegin(toz, col, col0, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(toz, col, col0, INSERT_VALUES, SCATTER_FORWARD));
    if (!rank) {
      const PetscScalar *c;
      PetscCall(VecGetArrayRead(col0, &c));
      PetscCall(PetscArraycpy(*dense + j * n, c, n));
      PetscCall(VecRestoreArrayRead(col0, &c));
    }
  }
  PetscCall(VecScatterDestroy(&toz));
  PetscCall(VecDestroy(&col0));
  PetscCall(VecDestroy(&col));
  PetscFunctionReturn(0);
}

/* The eigenvalues of K x = lambda M x by LAPACK's dsygv on rank 0, ascending; broadcast to every rank. */
static PetscErrorCode LapackEigenvalues(Mat K, Mat M, PetscReal *w)
{
  PetscScalar *k, *m;
  PetscInt     n;
  PetscMPIInt  rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetSize(K, &n, NULL));
  PetscCall(GatherDense(K, &k));
  PetscCall(GatherDense(M, &m));
  if (!rank) {
    PetscBLASInt itype = 1, bn, lwork, info;
    PetscScalar *work;
    PetscCall(PetscBLASIntCast(n, &bn));
    lwork = 3 * bn;
    PetscCall(PetscMalloc1(lwork, &work));
#if defined(PETSC_USE_COMPLEX)
    { /* with complex scalars LAPACKsygv_ is zhegv, which takes a real workspace too (K and M are real) */
      PetscReal *rwork;
      PetscCall(PetscMalloc1(3 * bn, &rwork));
      PetscCallBLAS("LAPACKsygv", LAPACKsygv_(&itype, "N", "L", &bn, k, &bn, m, &bn, w, work, &lwork, rwork, &info));
      PetscCall(PetscFree(rwork));
    }
#else
    PetscCallBLAS("LAPACKsygv", LAPACKsygv_(&itype, "N", "L", &bn, k, &bn, m, &bn, w, work, &lwork, &info));
#endif
    PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "dsygv failed: info %d", (int)info);
    PetscCall(PetscFree(work));
  }
  PetscCallMPI(MPI_Bcast(w, (PetscMPIInt)n, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscCall(PetscFree(k));
  PetscCall(PetscFree(m));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            K, M;
  EPS            eps;
  ST             st;
  Vec            x, Kx, Mx;
  EPSType        type;
  PetscInt       mx = 40, my = 30, nev = 8, nconv, i, n;
  PetscReal      Lx = 1.0, Ly = 0.75, *exact, *lapack = NULL, worst_res = 0, worst_norm = 0, worst_lapack = 0;
  PetscBool      check = PETSC_FALSE, lumped = PETSC_FALSE, top, ours, failed = PETSC_FALSE;
  EPSWhich       which;
  PetscInt       solves = 1;
  PetscLogDouble t0, t1;
  const char    *backend = "-";

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "Vibration modes of a membrane: K x = lambda M x by shift-and-invert"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mx", &mx, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-my", &my, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-Lx", &Lx, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-Ly", &Ly, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nev", &nev, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check", &check, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-lumped", &lumped, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-solves", &solves, NULL));
  PetscCheck(solves >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-solves must be at least 1");
  PetscCheck(mx >= 2 && my >= 2 && Lx > 0 && Ly > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "need mx, my >= 2 and Lx, Ly > 0");
  n = (mx - 1) * (my - 1);
  PetscCheck(nev >= 1 && nev <= n, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "nev must lie in 1..%" PetscInt_FMT, n);
  PetscCheck(!check || n <= 4000, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-check solves densely: at most 4000 unknowns (%" PetscInt_FMT " here)", n);

  PetscCall(Assemble(mx, my, Lx, Ly, lumped, &K, &M));
  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, K, M));
  PetscCall(EPSSetProblemType(eps, EPS_GHEP));
  PetscCall(EPSSetType(eps, EPSCUDALANCZOS)); /* -eps_type overrides */
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSGetST(eps, &st));
  PetscCall(STSetType(st, STSINVERT)); /* the lowest modes: the largest of (K - 0 M)^-1 M */
  PetscCall(EPSSetTarget(eps, 0.0));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_TARGET_MAGNITUDE));
  PetscCall(EPSSetTolerances(eps, 1e-10, PETSC_DEFAULT));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSGetWhichEigenpairs(eps, &which));
  top = (PetscBool)(which == EPS_LARGEST_REAL || which == EPS_LARGEST_MAGNITUDE); /* K, M definite: the same */
  PetscCall(PetscTime(&t0));
  PetscCall(EPSSolve(eps));
  PetscCall(PetscTime(&t1));
  if (solves > 1) { /* -solves N: N - 1 re-solves on the same EPS after EPSSetOperators with the same K, M (the
                       ST set up again: a shift-and-invert factorization included, for every solver alike), their median */
    PetscReal     *times;
    PetscLogDouble tr0, tr1;
    PetscCall(PetscMalloc1(solves - 1, &times));
    for (i = 0; i < solves - 1; ++i) {
      PetscCall(PetscTime(&tr0));
      PetscCall(EPSSetOperators(eps, K, M));
      PetscCall(EPSSolve(eps));
      PetscCall(PetscTime(&tr1));
      times[i] = (PetscReal)(tr1 - tr0);
    }
    PetscCall(PetscSortReal(solves - 1, times));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solve times: first %.6f s, re-solve median %.6f s of %" PetscInt_FMT "\n", t1 - t0,
                          (solves - 1) % 2 ? times[(solves - 1) / 2] : 0.5 * (times[(solves - 1) / 2 - 1] + times[(solves - 1) / 2]), solves - 1));
    PetscCall(PetscFree(times));
  }
  PetscCall(EPSGetType(eps, &type));
  PetscCall(PetscObjectTypeCompare((PetscObject)eps, EPSCUDALANCZOS, &ours));
  if (ours) PetscCall(EPSCUDALanczosGetBackendInUse(eps, &backend));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "membrane %g x %g, %" PetscInt_FMT " x %" PetscInt_FMT " Q1 elements, %" PetscInt_FMT
                                          " unknowns: %s (backend %s), %" PetscInt_FMT " modes converged in %.3f s\n",
                        (double)Lx, (double)Ly, mx, my, n, type, backend, nconv, t1 - t0));

  PetscCall(PetscMalloc1(nev, &exact));
  PetscCall(ExactEigenvalues(mx, my, Lx, Ly, nev, exact));
  if (check) {
    PetscCall(PetscMalloc1(n, &lapack));
    PetscCall(LapackEigenvalues(K, M, lapack));
  }
  PetscCall(MatCreateVecs(K, &x, &Kx));
  PetscCall(VecDuplicate(Kx, &Mx));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, " mode      lambda = omega^2       omega        exact (tensor formula)   ||Kx-lMx||/(|l||x|)   x'Mx\n"));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar lambda, xmx;
    PetscReal   rn, xn, res;
    PetscCall(EPSGetEigenpair(eps, i, &lambda, NULL, x, NULL));
    PetscCall(MatMult(K, x, Kx));
    PetscCall(MatMult(M, x, Mx));
    PetscCall(VecDot(x, Mx, &xmx));
    PetscCall(VecAXPY(Kx, -lambda, Mx));
    PetscCall(VecNorm(Kx, NORM_2, &rn));
    PetscCall(VecNorm(x, NORM_2, &xn));
    res = rn / (PetscAbsScalar(lambda) * xn);
    worst_res  = PetscMax(worst_res, res);
    worst_norm = PetscMax(worst_norm, PetscAbsScalar(xmx - 1.0));
    if (lapack) { /* dsygv's ascending values: the lowest nev, or the highest where the largest were asked for */
      const PetscReal ref = top ? lapack[n - 1 - i] : lapack[i], scale = top ? lapack[n - 1] : lapack[nev - 1];
      worst_lapack = PetscMax(worst_lapack, PetscAbsScalar(lambda - ref) / scale);
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %4" PetscInt_FMT "   %18.10f   %12.8f   %18.10f        %10.2e        %.12f\n", i, (double)PetscRealPart(lambda),
                          (double)PetscSqrtReal(PetscRealPart(lambda)), lumped ? (double)NAN : (double)exact[i], (double)res, (double)PetscRealPart(xmx)));
  }
  if (check) {
    const PetscBool ok = (PetscBool)(nconv >= nev && worst_lapack <= 1e-9 && worst_res <= 1e-8 && worst_norm <= 1e-10);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "check against LAPACK dsygv: %" PetscInt_FMT " of %" PetscInt_FMT " converged, max |lambda - lambda_dsygv| / lambda_nev = %.2e, "
                          "max residual %.2e, max |x'Mx - 1| = %.2e: %s\n",
                          nconv, nev, (double)worst_lapack, (double)worst_res, (double)worst_norm, ok ? "PASSED" : "FAILED"));
    failed = (PetscBool)!ok;
  }
  PetscCall(PetscFree(exact));
  PetscCall(PetscFree(lapack));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&Kx));
  PetscCall(VecDestroy(&Mx));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&K));
  PetscCall(MatDestroy(&M));
  PetscCall(SlepcFinalize());
  return failed ? 1 : 0;
}
