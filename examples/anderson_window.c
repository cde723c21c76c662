/*
   Every state of an electron in a disordered crystal inside an energy window: the 3-D Anderson model,
   all eigenvalues of a sparse real symmetric H in an interval [a, b] (EPS_ALL).

   An L x L x L simple cubic lattice of sites (x, y, z), numbered x + L (y + L z), with hopping t = 1 between
   nearest neighbours and a random on-site energy e_i, uniform in [-W/2, W/2]:

     H = - sum_<ij> ( |i><j| + |j><i| ) + sum_i e_i |i><i|

   Without disorder the states are Bloch waves filling the band [-6, 6]; disorder localizes them (Anderson
   1958). In three dimensions the states at the band centre stay extended up to the critical disorder
   W_c ~ 16.5 of this box distribution, where they are multifractal: the default W = 16.5 is that critical
   point, and the states around E = 0 there are what studies of the transition compute, for L large, with
   interior eigensolvers. The spectrum lies in [-6 - W/2, 6 + W/2]; the density of states at E = 0 is
   0.056 per site and unit energy at W = 16.5 (bench/peers/anderson_windows.py), so the default window
   [-0.5, 0.5] holds about 0.056 L^3 eigenvalues (59 at L = 10 with the default seed).

   Boundaries (-bc): periodic (default) or open. On 2 sites in a periodic direction the two bonds between
   them add up.

   Each rank assembles its own rows (MatSetValues into owned rows only, nothing sent); e_i is a hash of the
   seed and the global site index, so H is the same on any number of ranks. With the defaults and L = 100
   it is the matrix that bench/peers/gen_matrices writes as "anderson" (10^6 rows).

   It asks SLEPc for every eigenvalue in [a, b] (EPS_HEP, EPS_ALL, EPSSetInterval; -eps_interval a,b sets
   another window) with whatever solver the options name. It is an unmodified SLEPc program: it neither
   includes nor links the cudalanczos plugin, and it leaves the method to the options, e.g.
     SLEPc's spectrum slicing (Krylov-Schur, shift-and-invert; the inertia of the factorizations counts
     the eigenvalues), one process:
       ./anderson_window -st_type sinvert -st_ksp_type preonly -st_pc_type cholesky
     on several processes, one slice per process (each factorization sequential):
       mpiexec -n 4 ./anderson_window -st_type sinvert -st_ksp_type preonly -st_pc_type cholesky
                      -eps_krylovschur_partitions 4
     or each slice on all of them, with a parallel factorization that gives the inertia (MUMPS):
       mpiexec -n 4 ./anderson_window -st_type sinvert -st_ksp_type preonly -st_pc_type cholesky
                      -st_pc_factor_mat_solver_type mumps -st_mat_mumps_icntl_13 1
     SLEPc's polynomial filter (STFILTER; nev an over-estimate of the count, the degree grows as the
     window narrows; SLEPc 3.26 also has -st_filter_type chebyshev, 3.18 not; bench/peers/run_interval.sh):
       ./anderson_window -st_type filter -st_filter_degree 200 -eps_nev 80 [-mat_type aijcusparse]
     the cudalanczos plugin:
       ./anderson_window -dll_append /path/to/libslepccudalanczos.so -eps_type cudalanczos
   -mat_type sets H's type (aijcusparse: H and the vectors on the GPU with a CUDA PETSc).

     ./anderson_window [-L 10] [-W 16.5] [-seed 1] [-bc periodic|open] [-eps_interval -0.5,0.5] [-show 10]
                       [-check] [-repeat 0] [-eps_type ...] [-st_type ...]

   It prints how many eigenvalues the solver found in [a, b] and the solve time (EPSSolve, set-up
   included), the first -show of them in ascending order with their relative residuals
   ||H x - lambda x|| / (||H|| ||x||), and the largest of those residuals (||H|| by Gershgorin, 6 + W/2,
   or with -check dsyev's). -repeat R then times R re-solves of the same EPS (EPSSetOperators again) and
   R new EPS on the same H (what a program that solves again waits for), each of which must find the
   same count.

   -check (L^3 <= 4000) also gathers H on rank 0, computes all its eigenvalues densely with LAPACK's dsyev
   (zheev with complex scalars), and exits non-zero unless, with the EPS tolerance tol and
   thr = 10 max(tol, 100 eps_machine):
     - the count is dsyev's count in [a, b] (a dsyev eigenvalue within thr ||H|| of an end may count or not),
     - the computed eigenvalues, sorted, match dsyev's in the window one by one to thr ||H||
       (a multiple eigenvalue counts with its multiplicity),
     - every residual ||H x - lambda x|| / (||H|| ||x||) is at most thr,
     - the returned vectors are orthonormal to sqrt(thr) (a copy of a vector returned twice fails),
   with ||H|| = max |lambda_dsyev|.
*/
#include <slepceps.h>
#include <petscblaslapack.h>

#if defined(PETSC_USE_COMPLEX)
  #define LAPACK_EIG_NAME "zheev"
#else
  #define LAPACK_EIG_NAME "dsyev"
#endif

typedef enum {
  BC_PERIODIC,
  BC_OPEN
} Boundary;
static const char *const BoundaryTypes[] = {"periodic", "open", "Boundary", "BC_", NULL};

typedef struct {
  PetscInt      L;
  PetscReal     W;
  unsigned long seed;
  Boundary      bc;
} Lattice;

/* splitmix64: a uniform number in [0, 1) from (seed, site) alone, the same on any number of ranks
   (bench/peers/gen_matrices.cpp computes the same). */
static PetscReal UniformOfSite(unsigned long seed, PetscInt site)
{
  unsigned long long z = (unsigned long long)seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)site + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (PetscReal)(z >> 11) * (1.0 / 9007199254740992.0); /* 53 bits / 2^53 */
}

/* H, n = L^3, each rank its own rows (MatSetFromOptions: -mat_type chooses the type). */
static PetscErrorCode Assemble(const Lattice *lat, Mat *H)
{
  const PetscInt  L = lat->L, n = L * L * L;
  const PetscBool periodic = (PetscBool)(lat->bc == BC_PERIODIC);
  PetscInt        rstart, rend, r;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_WORLD, H));
  PetscCall(MatSetSizes(*H, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetFromOptions(*H));
  PetscCall(MatSeqAIJSetPreallocation(*H, 7, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*H, 7, NULL, 6, NULL));
  PetscCall(MatGetOwnershipRange(*H, &rstart, &rend));
  for (r = rstart; r < rend; ++r) {
    const PetscInt c[3] = {r % L, (r / L) % L, r / (L * L)}, stride[3] = {1, L, L * L};
    PetscInt       cols[7], nc = 0;
    PetscScalar    vals[7];

    cols[nc] = r; /* on-site energy; a zero is stored too, so that the diagonal exists */
    vals[nc++] = lat->W != 0 ? lat->W * (UniformOfSite(lat->seed, r) - 0.5) : 0.0;
    for (int d = 0; d < 3; ++d) { /* the neighbours at +1 and -1 along x, y, z */
      if (c[d] + 1 < L || periodic) {
        cols[nc] = r + ((c[d] + 1) % L - c[d]) * stride[d];
        vals[nc++] = -1.0;
      }
      if (c[d] > 0 || periodic) {
        cols[nc] = r + ((c[d] + L - 1) % L - c[d]) * stride[d];
        vals[nc++] = -1.0;
      }
    }
    /* ADD_VALUES: on 2 sites in a periodic direction both bonds join the same pair and add up */
    PetscCall(MatSetValues(*H, 1, &r, nc, cols, vals, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*H, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(*H, MAT_HERMITIAN, PETSC_TRUE)); /* real entries: also with complex scalars */
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

/* All eigenvalues of H by LAPACK's dsyev (zheev) on rank 0, ascending; broadcast to every rank. */
static PetscErrorCode LapackEigenvalues(Mat H, PetscReal *w)
{
  PetscScalar *h;
  PetscInt     n;
  PetscMPIInt  rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MatGetSize(H, &n, NULL));
  PetscCall(GatherDense(H, &h));
  if (!rank) {
    PetscBLASInt bn, lwork, info;
    PetscScalar *work;
    PetscCall(PetscBLASIntCast(n, &bn));
    lwork = 3 * bn;
    PetscCall(PetscMalloc1(lwork, &work));
    /* "L": only the lower triangle is read (H is symmetric by construction) */
#if defined(PETSC_USE_COMPLEX)
    {
      PetscReal *rwork;
      PetscCall(PetscMalloc1(3 * bn, &rwork));
      PetscCallBLAS("LAPACKsyev", LAPACKsyev_("N", "L", &bn, h, &bn, w, work, &lwork, rwork, &info));
      PetscCall(PetscFree(rwork));
    }
#else
    PetscCallBLAS("LAPACKsyev", LAPACKsyev_("N", "L", &bn, h, &bn, w, work, &lwork, &info));
#endif
    PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, LAPACK_EIG_NAME " failed: info %d", (int)info);
    PetscCall(PetscFree(work));
  }
  PetscCallMPI(MPI_Bcast(w, (PetscMPIInt)n, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscCall(PetscFree(h));
  PetscFunctionReturn(0);
}

/* The computed eigenvalues lam[0..m) (ascending) against LAPACK's w[0..n) (ascending) in [a, b], ends
   blurred by delta: whether the count fits, and the largest |lam_i - w_j| / hnorm over the best
   one-to-one pairing of lam with consecutive w (the missing or extra ones can only be at the ends). */
static void CompareWindow(PetscInt m, const PetscReal *lam, PetscInt n, const PetscReal *w, PetscReal a, PetscReal b, PetscReal delta, PetscReal hnorm,
                          PetscInt *must, PetscInt *may, PetscReal *worst_pair, PetscReal *worst_member)
{
  PetscInt lo = n, i, j, s;

  *must = *may = 0;
  for (j = 0; j < n; ++j) {
    if (w[j] >= a + delta && w[j] <= b - delta) ++*must;
    if (w[j] >= a - delta && w[j] <= b + delta) {
      if (lo == n) lo = j;
      ++*may;
    }
  }
  *worst_member = 0; /* each computed value against the nearest of all of LAPACK's */
  for (i = 0; i < m; ++i) {
    PetscReal nearest = PETSC_MAX_REAL;
    for (j = 0; j < n; ++j) nearest = PetscMin(nearest, PetscAbsReal(lam[i] - w[j]));
    *worst_member = PetscMax(*worst_member, nearest / hnorm);
  }
  *worst_pair = PETSC_MAX_REAL;
  if (m > *may) return; /* more values than LAPACK has there: no pairing */
  for (s = lo; s + m <= lo + *may; ++s) { /* lam[i] with w[s + i] */
    PetscReal e = 0;
    for (i = 0; i < m; ++i) e = PetscMax(e, PetscAbsReal(lam[i] - w[s + i]) / hnorm);
    *worst_pair = PetscMin(*worst_pair, e);
  }
  if (m == 0) *worst_pair = 0;
}

/* A solver for every eigenvalue of H in a window: [-0.5, 0.5] unless -eps_interval says otherwise, and
   whatever else the options name. */
static PetscErrorCode CreateSolver(Mat H, EPS *eps)
{
  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, eps));
  PetscCall(EPSSetOperators(*eps, H, NULL));
  PetscCall(EPSSetProblemType(*eps, EPS_HEP));
  PetscCall(EPSSetWhichEigenpairs(*eps, EPS_ALL));
  PetscCall(EPSSetInterval(*eps, -0.5, 0.5));
  PetscCall(EPSSetTolerances(*eps, 1e-10, PETSC_DEFAULT));
  PetscCall(EPSSetFromOptions(*eps)); /* the solver, its ST, -eps_interval */
  PetscFunctionReturn(0);
}

/* -repeat R: what a program that solves again waits for, each R times after the first solve: the same
   EPS solved again (EPSSetOperators with the same H, which SLEPc needs before it solves a solved EPS
   again), and a new EPS on the same H (create, set up from the options, solve, destroy). Prints the
   times, their medians, and how many eigenvalues each found. */
static PetscErrorCode TimeRepeats(Mat H, EPS eps, PetscInt repeat, PetscInt count, PetscBool *differs)
{
  PetscLogDouble t0, t1, *times;
  PetscInt       nconv;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(repeat, &times));
  for (int kind = 0; kind < 2; ++kind) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s:", kind ? "new EPS on the same Mat" : "re-solve on the same EPS"));
    for (PetscInt r = 0; r < repeat; ++r) {
      EPS e = eps;
      PetscCall(PetscTime(&t0));
      if (kind) PetscCall(CreateSolver(H, &e));
      else PetscCall(EPSSetOperators(e, H, NULL));
      PetscCall(EPSSolve(e));
      PetscCall(EPSGetConverged(e, &nconv));
      if (kind) PetscCall(EPSDestroy(&e));
      PetscCall(PetscTime(&t1));
      times[r] = t1 - t0;
      if (nconv != count) *differs = PETSC_TRUE;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %.3f s (%" PetscInt_FMT ")", times[r], nconv));
    }
    PetscCall(PetscSortReal(repeat, times));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; median %.3f s\n", repeat % 2 ? times[repeat / 2] : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2])));
  }
  PetscCall(PetscFree(times));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            H;
  EPS            eps;
  EPSType        type;
  Vec           *X = NULL, x1, Hx;
  Lattice        lat   = {10, 16.5, 1, BC_PERIODIC};
  PetscInt       seed = 1, show = 10, repeat = 0, nconv, i, n;
  PetscReal      a, b, tol, thr, hnorm, *lam = NULL, *res = NULL, *lapack = NULL, worst_res = 0, worst_ortho = 0;
  PetscBool      check = PETSC_FALSE, failed = PETSC_FALSE;
  PetscLogDouble t0, t1;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "The 3-D Anderson model: every eigenvalue in an energy window (EPS_ALL)"));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-L", &lat.L, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-W", &lat.W, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-seed", &seed, NULL));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-bc", BoundaryTypes, (PetscEnum *)&lat.bc, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-show", &show, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check", &check, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-repeat", &repeat, NULL));
  PetscCheck(lat.L >= 2 && lat.L <= 1290, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "need 2 <= L <= 1290 (got %" PetscInt_FMT ")", lat.L);
  PetscCheck(lat.W >= 0 && seed >= 0 && show >= 0 && repeat >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "need W >= 0, seed >= 0, show >= 0 and repeat >= 0");
  lat.seed = (unsigned long)seed;
  n        = lat.L * lat.L * lat.L;
  PetscCheck(!check || n <= 4000, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-check solves densely: at most 4000 sites (L^3 = %" PetscInt_FMT " here)", n);

  PetscCall(Assemble(&lat, &H));

  PetscCall(CreateSolver(H, &eps));
  PetscCall(EPSGetInterval(eps, &a, &b));
  PetscCall(PetscTime(&t0));
  PetscCall(EPSSolve(eps));
  PetscCall(PetscTime(&t1));
  PetscCall(EPSGetType(eps, &type));
  PetscCall(EPSGetTolerances(eps, &tol, NULL));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "3-D Anderson model, %" PetscInt_FMT "^3 = %" PetscInt_FMT " sites (%s), W = %g (seed %" PetscInt_FMT "), window [%g, %g]: %s, %" PetscInt_FMT
                        " eigenvalues in the window in %.3f s\n",
                        lat.L, n, BoundaryTypes[lat.bc], (double)lat.W, seed, (double)a, (double)b, type, nconv, t1 - t0));

  hnorm = 6 + lat.W / 2; /* Gershgorin: ||H||_2 <= 6 + max |e_i| */
  if (check) {
    PetscCall(PetscMalloc1(n, &lapack));
    PetscCall(LapackEigenvalues(H, lapack));
    hnorm = PetscMax(PetscAbsReal(lapack[0]), PetscAbsReal(lapack[n - 1])); /* ||H||_2 of a symmetric H */
  }

  /* every pair: its eigenvalue, its residual, and (with -check) its vector for the orthonormality test */
  PetscCall(MatCreateVecs(H, &x1, &Hx));
  PetscCall(PetscMalloc2(nconv, &lam, nconv, &res));
  if (check && nconv > 0) PetscCall(VecDuplicateVecs(Hx, nconv, &X));
  for (i = 0; i < nconv; ++i) {
    PetscScalar lambda;
    PetscReal   rn, xn;
    Vec         x = X ? X[i] : x1;
    PetscCall(EPSGetEigenpair(eps, i, &lambda, NULL, x, NULL));
    PetscCall(MatMult(H, x, Hx));
    PetscCall(VecAXPY(Hx, -lambda, x));
    PetscCall(VecNorm(Hx, NORM_2, &rn));
    PetscCall(VecNorm(x, NORM_2, &xn));
    lam[i]    = PetscRealPart(lambda);
    res[i]    = rn / (hnorm * xn);
    worst_res = PetscMax(worst_res, res[i]);
  }
  { /* print in ascending order, whatever order the solver returned */
    PetscInt *order;
    PetscCall(PetscMalloc1(nconv, &order));
    for (i = 0; i < nconv; ++i) order[i] = i;
    PetscCall(PetscSortRealWithPermutation(nconv, lam, order));
    if (nconv > 0 && show > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    k           lambda          ||Hx-lx||/(||H|| ||x||)\n"));
    for (i = 0; i < PetscMin(nconv, show); ++i)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %4" PetscInt_FMT "   %18.12f        %10.2e\n", i, (double)lam[order[i]], (double)res[order[i]]));
    if (nconv > show) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "   ... %" PetscInt_FMT " more (-show %" PetscInt_FMT " lists them)\n", nconv - show, nconv));
    if (nconv > 0)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "eigenvalues %.12g to %.12g, max ||Hx-lx||/(||H|| ||x||) over the %" PetscInt_FMT " pairs %.2e (||H|| %s %g)\n", (double)lam[order[0]],
                            (double)lam[order[nconv - 1]], nconv, (double)worst_res, check ? "=" : "<=", (double)hnorm));
    PetscCall(PetscFree(order));
  }

  if (check) {
    PetscInt  must, may;
    PetscReal worst_pair, worst_member;
    PetscBool ok;
    thr = 10 * PetscMax(tol, 100 * PETSC_MACHINE_EPSILON);
    /* orthonormality: max |x_i^H x_j - delta_ij| over the returned vectors */
    for (i = 0; i < nconv; ++i) {
      PetscScalar *dots;
      PetscCall(PetscMalloc1(nconv, &dots));
      PetscCall(VecMDot(X[i], nconv, X, dots));
      for (PetscInt j = 0; j < nconv; ++j) worst_ortho = PetscMax(worst_ortho, PetscAbsScalar(dots[j] - (i == j ? 1.0 : 0.0)));
      PetscCall(PetscFree(dots));
    }
    PetscCall(PetscSortReal(nconv, lam));
    CompareWindow(nconv, lam, n, lapack, a, b, thr * hnorm, hnorm, &must, &may, &worst_pair, &worst_member);
    ok = (PetscBool)(nconv >= must && nconv <= may && worst_pair <= thr && worst_res <= thr && worst_ortho <= PetscSqrtReal(thr));
    if (nconv >= must && nconv <= may && worst_pair > thr && worst_member <= thr)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "every computed eigenvalue is one of " LAPACK_EIG_NAME "'s, but not those of the window one by one: some are repeated and others missing\n"));
    if (must == may)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "check against LAPACK " LAPACK_EIG_NAME ": %" PetscInt_FMT " in [%g, %g] (" LAPACK_EIG_NAME ": %" PetscInt_FMT ")", nconv, (double)a,
                            (double)b, must));
    else
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "check against LAPACK " LAPACK_EIG_NAME ": %" PetscInt_FMT " in [%g, %g] (" LAPACK_EIG_NAME ": %" PetscInt_FMT " to %" PetscInt_FMT ", values within %.1e of an end)",
                            nconv, (double)a, (double)b, must, may, (double)(thr * hnorm)));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", max |lambda - lambda_" LAPACK_EIG_NAME "| / ||H|| = %.2e, max residual %.2e, max |X'X - I| = %.2e (limits %.1e, %.1e, %.1e): %s\n",
                          (double)(worst_pair == PETSC_MAX_REAL ? worst_member : worst_pair), (double)worst_res, (double)worst_ortho, (double)thr, (double)thr,
                          (double)PetscSqrtReal(thr), ok ? "PASSED" : "FAILED"));
    failed = (PetscBool)!ok;
  }
  if (repeat > 0) {
    PetscBool differs = PETSC_FALSE;
    PetscCall(TimeRepeats(H, eps, repeat, nconv, &differs));
    if (differs) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "a repeat found another count than the first solve's %" PetscInt_FMT ": FAILED\n", nconv));
      failed = PETSC_TRUE;
    }
  }
  if (X) PetscCall(VecDestroyVecs(nconv, &X));
  PetscCall(PetscFree2(lam, res));
  PetscCall(PetscFree(lapack));
  PetscCall(VecDestroy(&x1));
  PetscCall(VecDestroy(&Hx));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&H));
  PetscCall(SlepcFinalize());
  return failed ? 1 : 0;
}
