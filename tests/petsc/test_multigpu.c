/*
   Multi-rank solves (issue 6, docs/multigpu.md): the same eigenvalues for every rank count and every row
   layout — even, uneven, a rank with no rows in front or in the middle, all rows on the last rank — for
   MATMPIAIJ (nearest-neighbour, 2-D stencil and all-to-all couplings) and MATMPIDENSE; the eigenvectors
   in eps->V in PETSc's layout (the true residual ||Ax - lambda x||/|lambda| of each returned pair, through
   EPSComputeError); and a MATSHELL, which must take the host fallback.

   The matrices are MATMPIAIJ / MATMPIDENSE on one rank too, so one rank runs the same row-distributed
   operator (with an empty halo). When the solve ran on the CUDA backend, the operator line of -eps_view
   must name the row-distributed operator (or, for the shell, the STApply fallback): a silent fallback to
   host products would otherwise pass every eigenvalue check.

   CI runs it with -eps_cudalanczos_backend host under mpiexec -n 1..4; the GPU host without it (auto:
   the CUDA backend, one GPU per rank, or ranks sharing GPUs when there are more ranks than GPUs).
   Prints one "ok N - name" / "not ok N - name" line per check; exits non-zero on any failure.
*/
#include "test_support.h"
#include <unistd.h>

typedef enum { EVEN, UNEVEN, ZERO_FIRST, ZERO_MIDDLE, ALL_LAST, NLAYOUTS } Layout;
static const char *const layout_names[] = {"even", "uneven", "rank 0 empty", "middle rank empty", "all rows on the last rank"};

/* This rank's rows of n under a layout. */
static PetscErrorCode LocalRows(Layout layout, PetscInt n, PetscInt *nloc)
{
  PetscMPIInt rank, size;
  PetscInt    r, total = 0, before = 0, empty = -1, k, j;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  switch (layout) {
  case EVEN: *nloc = n / size + (rank < n % size); break;
  case UNEVEN: /* rank r gets a share proportional to (r+1)^2 */
    for (r = 0; r < size; ++r) total += (r + 1) * (r + 1);
    for (r = 0; r < rank; ++r) before += n * (r + 1) * (r + 1) / total;
    *nloc = (rank == size - 1) ? n - before : n * (rank + 1) * (rank + 1) / total;
    break;
  case ZERO_FIRST:
  case ZERO_MIDDLE:
    if (size == 1) {
      *nloc = n;
      break;
    }
    empty = layout == ZERO_FIRST ? 0 : size / 2;
    if (rank == empty) {
      *nloc = 0;
      break;
    }
    k     = rank < empty ? rank : rank - 1; /* index among the size-1 ranks that have rows */
    j     = size - 1;
    *nloc = n / j + (k < n % j);
    break;
  case ALL_LAST: *nloc = rank == size - 1 ? n : 0; break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "bad layout");
  }
  PetscFunctionReturn(0);
}

typedef enum { LAPLACIAN_1D, LAPLACIAN_2D, SPARSE_ALL_TO_ALL, DENSE, NKINDS } Kind;
static const char *const kind_names[] = {"MPIAIJ 1-D Laplacian n=300", "MPIAIJ 2-D Laplacian 24x24", "MPIAIJ all-to-all couplings n=400",
                                         "MPIDENSE symmetric n=240"};
static const PetscInt    kind_n[]     = {300, 576, 400, 240};
#define NX 24

/* A symmetric hash in [0, 1): the matrix is a function of (i, j) only, the same for every layout. */
static PetscReal Hash(PetscInt i, PetscInt j)
{
  PetscInt lo = PetscMin(i, j), hi = PetscMax(i, j);
  return (PetscReal)((lo * 7919 + hi * 104729 + 13) % 1000003) / 1000003.0;
}

static PetscErrorCode BuildMatrix(Kind kind, Layout layout, Mat *A)
{
  PetscInt n = kind_n[kind], nloc, rstart, rend, i, j;

  PetscFunctionBeginUser;
  PetscCall(LocalRows(layout, n, &nloc));
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, nloc, nloc, n, n));
  if (kind == DENSE) {
    PetscCall(MatSetType(*A, MATMPIDENSE));
    PetscCall(MatSetUp(*A));
  } else {
    PetscCall(MatSetType(*A, MATMPIAIJ)); /* also on one rank: the row-distributed operator with an empty halo */
    PetscCall(MatMPIAIJSetPreallocation(*A, 40, NULL, 40, NULL));
  }
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (i = rstart; i < rend; ++i) {
    switch (kind) {
    case LAPLACIAN_1D:
      if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
      if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, i, i, 2.0, INSERT_VALUES));
      break;
    case LAPLACIAN_2D: { /* 5-point, Dirichlet: rows couple to i +- 1 and i +- NX (ghosts from several ranks) */
      PetscInt x = i % NX, y = i / NX;
      if (x > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0, INSERT_VALUES));
      if (x < NX - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0, INSERT_VALUES));
      if (y > 0) PetscCall(MatSetValue(*A, i, i - NX, -1.0, INSERT_VALUES));
      if (y < NX - 1) PetscCall(MatSetValue(*A, i, i + NX, -1.0, INSERT_VALUES));
      PetscCall(MatSetValue(*A, i, i, 4.0, INSERT_VALUES));
    } break;
    case SPARSE_ALL_TO_ALL: /* (i, j) coupled iff (ij + i + j) mod 29 == 3: about 14 per row, spread over all ranks */
      PetscCall(MatSetValue(*A, i, i, 4 * Hash(i, i), INSERT_VALUES));
      for (j = 0; j < n; ++j)
        if (j != i && (i * j + i + j) % 29 == 3) PetscCall(MatSetValue(*A, i, j, 2 * Hash(i, j) - 1, INSERT_VALUES));
      break;
    case DENSE:
      for (j = 0; j < n; ++j) PetscCall(MatSetValue(*A, i, j, 2 * Hash(i, j) - 1, INSERT_VALUES));
      break;
    default: break;
    }
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static int Descending(const void *a, const void *b)
{
  PetscReal x = *(const PetscReal *)a, y = *(const PetscReal *)b;
  return x < y ? 1 : (x > y ? -1 : 0);
}

/* The nev largest eigenvalues, exactly where they are known (the Laplacians, with multiplicities). */
static PetscErrorCode ExactLargest(Kind kind, PetscInt nev, PetscReal *ref)
{
  PetscInt   i, j, n = kind_n[kind];
  PetscReal *all;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n, &all));
  for (i = 0; i < n; ++i) {
    if (kind == LAPLACIAN_1D) all[i] = 2 - 2 * PetscCosReal(PETSC_PI * (i + 1) / (n + 1));
    else {
      PetscInt a = i % NX + 1, b = i / NX + 1;
      all[i] = 4 - 2 * PetscCosReal(PETSC_PI * a / (NX + 1)) - 2 * PetscCosReal(PETSC_PI * b / (NX + 1));
    }
  }
  qsort(all, (size_t)n, sizeof(PetscReal), Descending);
  for (j = 0; j < nev; ++j) ref[j] = all[j];
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* The "backend used:" and "operator:" lines of -eps_view. */
static PetscErrorCode ViewLines(EPS eps, char *backend, char *op, size_t len)
{
  PetscBool found;

  PetscFunctionBeginUser;
  PetscCall(ViewLine(eps, "backend used:", backend, len, &found));
  PetscCall(ViewLine(eps, "operator:", op, len, &found));
  PetscFunctionReturn(0);
}

/* Solves for the nev largest eigenvalues; returns nconv, the values, the worst true residual, and the
   backend in use with the operator line of -eps_view. */
static PetscErrorCode Solve(Mat A, EPSType type, PetscInt nev, PetscInt *nconv, PetscReal *eig, PetscReal *worst, char *backend, char *op, size_t len)
{
  EPS         eps;
  PetscInt    i, nloc, xloc;
  PetscReal   err;
  Vec         x;
  PetscScalar kr;

  PetscFunctionBeginUser;
  PetscCall(CreateEPS(A, EPS_HEP, type, &eps));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetWhichEigenpairs(eps, EPS_LARGEST_REAL));
  PetscCall(EPSSetTolerances(eps, 1e-10, 5000));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, nconv));
  PetscCall(MatCreateVecs(A, &x, NULL));
  PetscCall(MatGetLocalSize(A, &nloc, NULL));
  PetscCall(VecGetLocalSize(x, &xloc));
  PetscCheck(xloc == nloc, PETSC_COMM_SELF, PETSC_ERR_PLIB, "vector layout differs from the matrix's");
  *worst = 0;
  for (i = 0; i < PetscMin(*nconv, nev); ++i) {
    /* EPSGetEigenpair copies column i of eps->V into x (PETSc's layout): the residual checks it */
    PetscCall(EPSGetEigenpair(eps, i, &kr, NULL, x, NULL));
    eig[i] = PetscRealPart(kr);
    PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &err));
    *worst = PetscMax(*worst, err);
  }
  backend[0] = op[0] = 0;
  if (!strcmp(type, EPSCUDALANCZOS)) PetscCall(ViewLines(eps, backend, op, len));
  PetscCall(VecDestroy(&x));
  PetscCall(EPSDestroy(&eps));
  PetscFunctionReturn(0);
}

/* y = A x through a MATSHELL: no device operator exists for it, on any backend. */
static PetscErrorCode ShellMult(Mat S, Vec x, Vec y)
{
  Mat *A;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(S, &A));
  PetscCall(MatMult(*A, x, y));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt size;
  PetscInt    nev = 6, kinds[NKINDS], layouts[NLAYOUTS], nkinds = NKINDS, nlayouts = NLAYOUTS, k, l;
  PetscBool   shell = PETSC_TRUE, set;
  PetscReal   first[NKINDS][8];
  char        backend[256], op[512], name[256], detail[768];

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "EPSCUDALANCZOS on several ranks"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %d rank(s)\n", (int)size));
  /* -kinds 0,2 -layouts 0,3 -shell false: a subset, for runs under compute-sanitizer (always the even layout first) */
  for (k = 0; k < NKINDS; ++k) kinds[k] = k;
  for (l = 0; l < NLAYOUTS; ++l) layouts[l] = l;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-kinds", kinds, &nkinds, &set));
  if (!set) nkinds = NKINDS;
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-layouts", layouts, &nlayouts, &set));
  if (!set) nlayouts = NLAYOUTS;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-shell", &shell, NULL));

  for (k = 0; k < nkinds; ++k) {
    for (l = -1; l < nlayouts; ++l) {
      const Kind   kind   = (Kind)kinds[k];
      const Layout layout = l < 0 ? EVEN : (Layout)layouts[l];
      if (l >= 0 && layout == EVEN) continue;
      PetscCheck(kind >= 0 && kind < NKINDS && layout >= 0 && layout < NLAYOUTS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "bad -kinds or -layouts");
      Mat       A;
      PetscInt  i, nconv, nref;
      PetscReal eig[8], ref[8], res, resref, diff = 0, spread = 0, scale = 0;

      PetscCall(BuildMatrix(kind, layout, &A));
      if (kind == LAPLACIAN_1D || kind == LAPLACIAN_2D) {
        PetscCall(ExactLargest(kind, nev, ref));
        nref = nev;
      } else {
        PetscCall(Solve(A, EPSKRYLOVSCHUR, nev, &nref, ref, &resref, backend, op, sizeof(backend)));
      }
      PetscCall(Solve(A, EPSCUDALANCZOS, nev, &nconv, eig, &res, backend, op, sizeof(op)));
      if (layout == EVEN)
        for (i = 0; i < PetscMin(nconv, nev); ++i) first[kind][i] = eig[i];
      for (i = 0; i < PetscMin(nev, PetscMin(nconv, nref)); ++i) {
        diff   = PetscMax(diff, PetscAbsReal(eig[i] - ref[i]));
        spread = PetscMax(spread, PetscAbsReal(eig[i] - first[kind][i]));
        scale  = PetscMax(scale, PetscAbsReal(ref[i]));
      }
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s, %s layout", kind_names[kind], layout_names[layout]));
      PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", max|diff| %.2e vs %s, %.2e vs the even layout, true residual %.2e",
                              nconv, (double)diff, kind == LAPLACIAN_1D || kind == LAPLACIAN_2D ? "exact" : "krylovschur", (double)spread, (double)res));
      /* 10 tol |lambda|: eigenvalues converge quadratically in the residual, far below tol */
      PetscCall(Check((PetscBool)(nconv >= nev && nref >= nev && diff <= 1e-9 * PetscMax(scale, 1) && spread <= 1e-9 * PetscMax(scale, 1) && res <= 1e-9), name,
                      detail));
      if (strstr(backend, "backend used: cuda")) {
        PetscCall(PetscSNPrintf(detail, sizeof(detail), "%s | %s", backend, op));
        PetscCall(Check((PetscBool)(strstr(op, "row-distributed") != NULL), "  on the GPU through the row-distributed device operator", detail));
      } else if (layout == EVEN) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "#   %s | %s\n", backend, op));
      PetscCall(MatDestroy(&A));
    }
  }

  /* A MATSHELL has no device operator: the CUDA backend must fall back to STApply on the host. */
  if (shell) {
    Mat       A, S;
    PetscInt  nloc, nconv;
    PetscReal eig[8], ref[8], res, diff = 0;
    PetscCall(BuildMatrix(LAPLACIAN_1D, UNEVEN, &A));
    PetscCall(MatGetLocalSize(A, &nloc, NULL));
    PetscCall(MatCreateShell(PETSC_COMM_WORLD, nloc, nloc, kind_n[LAPLACIAN_1D], kind_n[LAPLACIAN_1D], &A, &S));
    PetscCall(MatShellSetOperation(S, MATOP_MULT, (void (*)(void))ShellMult));
    PetscCall(Solve(S, EPSCUDALANCZOS, nev, &nconv, eig, &res, backend, op, sizeof(op)));
    PetscCall(ExactLargest(LAPLACIAN_1D, nev, ref));
    for (PetscInt i = 0; i < PetscMin(nconv, nev); ++i) diff = PetscMax(diff, PetscAbsReal(eig[i] - ref[i]));
    PetscCall(PetscSNPrintf(detail, sizeof(detail), "nconv %" PetscInt_FMT ", max|diff| %.2e vs exact, true residual %.2e | %s | %s", nconv, (double)diff,
                            (double)res, backend, op));
    PetscCall(Check((PetscBool)(nconv >= nev && diff <= 1e-9 && res <= 1e-9 && (!strstr(backend, "backend used: cuda") || strstr(op, "STApply on the host"))),
                    "MATSHELL (no device operator): host products", detail));
    PetscCall(MatDestroy(&S));
    PetscCall(MatDestroy(&A));
  }

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%d passed, %d failed\n", checks - failures, failures));
  PetscCall(SlepcFinalize());
  return failures ? 1 : 0;
}
