/*
   Electrons on a square lattice in a perpendicular magnetic field (the Hofstadter model): the lowest
   eigenvalues of a complex Hermitian tight-binding Hamiltonian. Needs a PETSc/SLEPc configured with
   complex scalars (--with-scalar-type=complex; Debian's libslepc-complex3.18-dev).

   An mx x my lattice of sites (x, y), numbered x + y mx, with hopping t between nearest neighbours and
   an optional random on-site energy e(x, y), uniform in [-W/2, W/2] (Anderson disorder):

     H = -t sum_(x,y) ( |x+1,y><x,y| + exp(i 2 pi phi x) |x,y+1><x,y| + h.c. ) + sum_(x,y) e(x,y) |x,y><x,y|

   The field enters through the Peierls phase in the Landau gauge A = (0, B x, 0): a hop in +y at column
   x picks up exp(i 2 pi phi x), a hop in x none, so the phase around every plaquette is exp(i 2 pi phi):
   phi is the flux per plaquette in units of the flux quantum h/e. H is complex Hermitian (real only at
   phi = 0 or 1/2), so it needs complex scalars.

   Boundaries (-bc):
     open      (default) no wrap-around bonds: any phi.
     cylinder  periodic in y, open in x: any phi (the phase of a y-bond depends on x only, so the bond
               from (x, my-1) to (x, 0) carries the same phase as the others of its column).
     torus     periodic in x and y: the bond from (mx-1, y) to (0, y) closes plaquettes whose flux is
               phi (1 - mx), which equals phi modulo 1 only when phi mx is an integer; other phi are
               refused (in this gauge it is periodicity in x, not in y, that quantizes the flux).
   On 2 sites in a periodic direction the two bonds between them add up, as they do in the closed form.

   Each rank assembles its own rows (MatSetValues into owned rows only, nothing sent); the disorder is
   a hash of the seed and the site, so the matrix is the same on any number of ranks.

   It asks SLEPc for the nev lowest eigenvalues (EPS_HEP, EPS_SMALLEST_REAL) with whatever solver the
   options name: SLEPc's default (krylovschur) or, with the cudalanczos plugin loaded,
     ./tight_binding_flux -dll_append /path/to/libslepccudalanczos_complex.so -eps_type cudalanczos
   It is an unmodified SLEPc program: it neither includes nor links the plugin.

     ./tight_binding_flux [-mx 40] [-my 30] [-t 1] [-phi 0.1] [-bc open|cylinder|torus] [-W 0] [-seed 1]
                          [-nev 8] [-eps_type ...] [-check]

   It prints, for each eigenvalue, lambda, the relative residual ||H x - lambda x|| / (|lambda| ||x||)
   (divided by ||H|| instead of |lambda| where |lambda| < sqrt(eps) ||H||) and, at phi = 0 without
   disorder, the closed form: with k = 2 pi j / m along a periodic direction and k = pi j / (m + 1),
   j = 1..m, along an open one, lambda = -2 t (cos kx + cos ky).

   -check (small lattices) also gathers H on rank 0, computes all its eigenvalues densely with LAPACK's
   zheev, and exits non-zero unless: nev pairs converged, each computed eigenvalue is within
   1e-9 ||H|| of zheev's (||H|| = max |lambda_zheev|) and has |Im lambda| <= 1e-10 ||H||, every residual
   is below 1e-8, H - H^H is zero to 1e-14 ||H|| (Frobenius norm), and, at phi = 0 without disorder,
   zheev's whole spectrum agrees with the closed form to 1e-12 ||H|| (a check of the assembly).
   Multiple eigenvalues count with their multiplicity (the torus has many): a solver that returns one
   copy where there are several fails the check, and the output says so.
*/
#include <slepceps.h>
#include <petscblaslapack.h>

#if !defined(PETSC_USE_COMPLEX)
  #error "tight_binding_flux.c needs a PETSc/SLEPc with complex scalars (PETSc's --with-scalar-type=complex): the Peierls phases make H complex Hermitian"
#endif

typedef enum {
  BC_OPEN,
  BC_CYLINDER,
  BC_TORUS
} Boundary;
static const char *const BoundaryTypes[] = {"open", "cylinder", "torus", "Boundary", "BC_", NULL};

typedef struct {
  PetscInt      mx, my;
  PetscReal     t, phi, W;
  unsigned long seed;
  Boundary      bc;
} Lattice;

/* splitmix64: a uniform number in [0, 1) from (seed, site) alone, the same on any number of ranks. */
static PetscReal UniformOfSite(unsigned long seed, PetscInt site)
{
  unsigned long long z = (unsigned long long)seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)site + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (PetscReal)(z >> 11) * (1.0 / 9007199254740992.0); /* 53 bits / 2^53 */
}

/* H, n = mx my, each rank its own rows. Entry H(r, s) is the amplitude of a hop from s to r. */
static PetscErrorCode Assemble(const Lattice *L, Mat *H)
{
  const PetscInt mx = L->mx, my = L->my, n = mx * my;
  const PetscBool px = (PetscBool)(L->bc == BC_TORUS), py = (PetscBool)(L->bc != BC_OPEN);
  PetscInt        rstart, rend, r;

  PetscFunctionBeginUser;
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 5, NULL, 4, NULL, H));
  PetscCall(MatGetOwnershipRange(*H, &rstart, &rend));
  for (r = rstart; r < rend; ++r) {
    const PetscInt    x = r % mx, y = r / mx;
    /* the phase of the hop (x, y) -> (x, y+1); the hop (x, y+1) -> (x, y) carries its conjugate */
    const PetscScalar up = PetscExpComplex(PETSC_i * (PetscReal)(2 * PETSC_PI * L->phi * x));
    PetscInt          cols[5], nc = 0;
    PetscScalar       vals[5];

    cols[nc] = r; /* on-site energy; a zero is stored too, so that the diagonal exists */
    vals[nc++] = L->W != 0 ? L->W * (UniformOfSite(L->seed, r) - 0.5) : 0.0;
    if (x + 1 < mx || px) { /* from (x+1, y): no phase */
      cols[nc] = (x + 1) % mx + y * mx;
      vals[nc++] = -L->t;
    }
    if (x > 0 || px) { /* from (x-1, y) */
      cols[nc] = (x + mx - 1) % mx + y * mx;
      vals[nc++] = -L->t;
    }
    if (y > 0 || py) { /* from (x, y-1): an up hop into r, phase exp(+i 2 pi phi x) */
      cols[nc] = x + ((y + my - 1) % my) * mx;
      vals[nc++] = -L->t * up;
    }
    if (y + 1 < my || py) { /* from (x, y+1): a down hop into r, the conjugate phase */
      cols[nc] = x + ((y + 1) % my) * mx;
      vals[nc++] = -L->t * PetscConj(up);
    }
    /* ADD_VALUES: on 2 sites in a periodic direction both bonds join the same pair and add up */
    PetscCall(MatSetValues(*H, 1, &r, nc, cols, vals, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*H, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*H, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* ||H - H^H||_F, computed in parallel on the assembled matrix. */
static PetscErrorCode HermitianDefect(Mat H, PetscReal *defect)
{
  Mat Hh;

  PetscFunctionBeginUser;
  PetscCall(MatHermitianTranspose(H, MAT_INITIAL_MATRIX, &Hh));
  PetscCall(MatAXPY(Hh, -1.0, H, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(Hh, NORM_FROBENIUS, defect));
  PetscCall(MatDestroy(&Hh));
  PetscFunctionReturn(0);
}

static int CompareReal(const void *a, const void *b)
{
  const PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b;
  return x < y ? -1 : x > y;
}

/* The whole spectrum at phi = 0 without disorder, ascending (n = mx my values). */
static PetscErrorCode ClosedFormEigenvalues(const Lattice *L, PetscReal *all)
{
  const PetscBool px = (PetscBool)(L->bc == BC_TORUS), py = (PetscBool)(L->bc != BC_OPEN);
  PetscInt        i, j;

  PetscFunctionBeginUser;
  for (j = 1; j <= L->my; ++j)
    for (i = 1; i <= L->mx; ++i) {
      const PetscReal kx = px ? 2 * PETSC_PI * i / L->mx : PETSC_PI * i / (L->mx + 1);
      const PetscReal ky = py ? 2 * PETSC_PI * j / L->my : PETSC_PI * j / (L->my + 1);
      all[(i - 1) + (j - 1) * L->mx] = -2 * L->t * (PetscCosReal(kx) + PetscCosReal(ky));
    }
  qsort(all, (size_t)(L->mx * L->my), sizeof(PetscReal), CompareReal);
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

/* All eigenvalues of H by LAPACK's zheev on rank 0, ascending; broadcast to every rank. */
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
    PetscReal   *rwork;
    PetscCall(PetscBLASIntCast(n, &bn));
    lwork = 2 * bn;
    PetscCall(PetscMalloc2(lwork, &work, 3 * bn, &rwork));
    /* "L": zheev reads the lower triangle only; that H equals H^H is checked separately */
    PetscCallBLAS("LAPACKheev", LAPACKheev_("N", "L", &bn, h, &bn, w, work, &lwork, rwork, &info));
    PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "zheev failed: info %d", (int)info);
    PetscCall(PetscFree2(work, rwork));
  }
  PetscCallMPI(MPI_Bcast(w, (PetscMPIInt)n, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscCall(PetscFree(h));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            H;
  EPS            eps;
  Vec            x, Hx;
  EPSType        type;
  Lattice        L    = {40, 30, 1.0, 0.1, 0.0, 1, BC_OPEN};
  PetscInt       nev  = 8, nconv, i, n, seed = 1;
  PetscReal     *exact = NULL, *lapack = NULL, hnorm_bound, hnorm, defect, worst_res = 0, worst_lapack = 0, worst_imag = 0, worst_closed = 0, worst_member = 0;
  PetscBool      check = PETSC_FALSE, closed, failed = PETSC_FALSE;
  PetscLogDouble t0, t1;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "Tight-binding electrons on a square lattice in a magnetic field (complex Hermitian)"));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mx", &L.mx, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-my", &L.my, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-t", &L.t, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-phi", &L.phi, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-W", &L.W, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-seed", &seed, NULL));
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-bc", BoundaryTypes, (PetscEnum *)&L.bc, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-nev", &nev, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check", &check, NULL));
  PetscCheck(L.mx >= 2 && L.my >= 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "need mx, my >= 2 (got %" PetscInt_FMT " x %" PetscInt_FMT ")", L.mx, L.my);
  PetscCheck(L.t != 0 && L.W >= 0 && seed >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "need t != 0, W >= 0 and seed >= 0");
  /* flux quantization on the torus (see the comment at the top): phi mx must be an integer */
  PetscCheck(L.bc != BC_TORUS || PetscAbsReal(L.phi * L.mx - PetscFloorReal(L.phi * L.mx + 0.5)) <= 1e-12 * PetscMax(1, PetscAbsReal(L.phi * L.mx)), PETSC_COMM_WORLD,
             PETSC_ERR_ARG_OUTOFRANGE, "-bc torus needs phi * mx to be an integer (phi = %g, mx = %" PetscInt_FMT "): use -bc cylinder or open for other fluxes",
             (double)L.phi, L.mx);
  L.seed = (unsigned long)seed;
  n      = L.mx * L.my;
  PetscCheck(nev >= 1 && nev <= n, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "nev must lie in 1..%" PetscInt_FMT, n);
  PetscCheck(!check || n <= 4000, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-check solves densely: at most 4000 sites (%" PetscInt_FMT " here)", n);
  /* phi is the flux per plaquette modulo 1: the spectrum at phi and phi + 1 is the same */
  closed = (PetscBool)(L.W == 0 && PetscAbsReal(L.phi - PetscFloorReal(L.phi + 0.5)) == 0);

  PetscCall(Assemble(&L, &H));
  PetscCall(HermitianDefect(H, &defect));
  PetscCall(MatSetOption(H, MAT_HERMITIAN, PETSC_TRUE));
  hnorm_bound = 4 * PetscAbsReal(L.t) + L.W / 2; /* Gershgorin: ||H||_2 <= 4|t| + max|e| */

  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, H, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_SMALLEST_REAL));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(eps, 1e-10, PETSC_DEFAULT));
  PetscCall(EPSSetFromOptions(eps)); /* the solver: -eps_type (SLEPc's default otherwise) */
  PetscCall(PetscTime(&t0));
  PetscCall(EPSSolve(eps));
  PetscCall(PetscTime(&t1));
  PetscCall(EPSGetType(eps, &type));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "square lattice %" PetscInt_FMT " x %" PetscInt_FMT " (%s), t = %g, flux %g per plaquette, disorder W = %g (seed %" PetscInt_FMT
                        "), %" PetscInt_FMT " sites: %s, %" PetscInt_FMT " eigenvalues converged in %.3f s\n",
                        L.mx, L.my, BoundaryTypes[L.bc], (double)L.t, (double)L.phi, (double)L.W, seed, n, type, nconv, t1 - t0));

  if (check || closed) {
    PetscCall(PetscMalloc1(n, &exact));
    PetscCall(ClosedFormEigenvalues(&L, exact));
  }
  hnorm = hnorm_bound;
  if (check) {
    PetscCall(PetscMalloc1(n, &lapack));
    PetscCall(LapackEigenvalues(H, lapack));
    hnorm = PetscMax(PetscAbsReal(lapack[0]), PetscAbsReal(lapack[n - 1])); /* ||H||_2 of a Hermitian H */
    if (closed)
      for (i = 0; i < n; ++i) worst_closed = PetscMax(worst_closed, PetscAbsReal(lapack[i] - exact[i]) / hnorm);
  }
  PetscCall(MatCreateVecs(H, &x, &Hx));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    k             lambda            %s   ||Hx-lx||/(|l||x|)\n", closed ? "    closed form      " : ""));
  for (i = 0; i < PetscMin(nconv, nev); ++i) {
    PetscScalar lambda;
    PetscReal   rn, xn, res, scale;
    PetscCall(EPSGetEigenpair(eps, i, &lambda, NULL, x, NULL));
    PetscCall(MatMult(H, x, Hx));
    PetscCall(VecAXPY(Hx, -lambda, x));
    PetscCall(VecNorm(Hx, NORM_2, &rn));
    PetscCall(VecNorm(x, NORM_2, &xn));
    /* relative to |lambda|, except near 0, where only ||H|| gives the residual a scale */
    scale = PetscAbsScalar(lambda) >= PETSC_SQRT_MACHINE_EPSILON * hnorm ? PetscAbsScalar(lambda) : hnorm;
    res   = rn / (scale * xn);
    worst_res  = PetscMax(worst_res, res);
    worst_imag = PetscMax(worst_imag, PetscAbsReal(PetscImaginaryPart(lambda)) / hnorm);
    if (lapack) {
      PetscReal nearest = PETSC_MAX_REAL;
      worst_lapack = PetscMax(worst_lapack, PetscAbsReal(PetscRealPart(lambda) - lapack[i]) / hnorm);
      for (PetscInt j = 0; j < n; ++j) nearest = PetscMin(nearest, PetscAbsReal(PetscRealPart(lambda) - lapack[j]) / hnorm);
      worst_member = PetscMax(worst_member, nearest);
    }
    if (closed) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %4" PetscInt_FMT "   %18.12f   %18.12f        %10.2e\n", i, (double)PetscRealPart(lambda), (double)exact[i], (double)res));
      if (!check) worst_closed = PetscMax(worst_closed, PetscAbsReal(PetscRealPart(lambda) - exact[i]) / hnorm);
    } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %4" PetscInt_FMT "   %18.12f        %10.2e\n", i, (double)PetscRealPart(lambda), (double)res));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "||H - H^H||_F = %.2e\n", (double)defect));
  if (check) {
    PetscBool ok = (PetscBool)(nconv >= nev && worst_lapack <= 1e-9 && worst_imag <= 1e-10 && worst_res <= 1e-8 && defect <= 1e-14 * hnorm);
    if (closed) ok = (PetscBool)(ok && worst_closed <= 1e-12);
    /* A Krylov solver started from one vector may return fewer copies of a multiple eigenvalue than it
       has (the torus's are 4- and 8-fold at phi = 1/4): say so, rather than only that values differ. */
    if (worst_lapack > 1e-9 && worst_member <= 1e-9)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "every computed eigenvalue is one of zheev's, but not the lowest %" PetscInt_FMT " in order: copies of a multiple eigenvalue are missing\n", nev));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "check against LAPACK zheev: %" PetscInt_FMT " of %" PetscInt_FMT " converged, max |lambda - lambda_zheev| / ||H|| = %.2e, max |Im lambda| / ||H|| = %.2e, "
                          "max residual %.2e, ||H - H^H||_F / ||H|| = %.2e",
                          nconv, nev, (double)worst_lapack, (double)worst_imag, (double)worst_res, (double)(defect / hnorm)));
    if (closed) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ", zheev against the closed form %.2e", (double)worst_closed));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, ": %s\n", ok ? "PASSED" : "FAILED"));
    failed = (PetscBool)!ok;
  } else if (closed) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max |lambda - closed form| / ||H|| = %.2e\n", (double)worst_closed));
  PetscCall(PetscFree(exact));
  PetscCall(PetscFree(lapack));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&Hx));
  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&H));
  PetscCall(SlepcFinalize());
  return failed ? 1 : 0;
}
