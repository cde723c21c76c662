/*
   One matrix of the peer benchmark (bench/peers/README.md), solved with whatever -eps_type says
   (default cudalanczos): for each k of -k, an untimed warm-up solve, then a timed one; one JSON line per k.

     bench_eps -case dense12288|dense4096|dense32768|lap2d|lap3d|powerlaw|randsym [-dir DIR] [-n N]
               -k 1,10,50 [-which largest|smallest] [-tol 1e-8] [-cap 60] [-warmup short|full|none]
               [-check_resid] [-eps_type cudalanczos|krylovschur] [any other EPS option]

   -user_times: instead, what a user's program sees, for the first k, each EPSSetUp + EPSSolve: the first
   solve of the process, then 3 new EPS on that Mat, then 3 re-solves of one EPS (EPSSetOperators
   again); medians and all values in one JSON line ("bench":"user_times"), with the re-solve's
   eigenvalues ("values", at most 64). -user_times_reps 1 takes one of each (for solves of seconds), 5
   five. The matrix checksum is skipped
   there (its MatMult would move a device Mat's data before the first solve). In either mode -mat_type
   converts the built Mat (e.g. aijcusparse or densecuda with a CUDA PETSc: SLEPc's own GPU path).

   Matrices: "denseN" (N from the name, or -n) is the thesis matrix of examples/thesis_demo.c, entry
   (i, j) = hash(min(i, j), max(i, j)) uniform in [0, 1] (formula below; peers.py computes the same); the
   sparse ones are read from DIR/NAME.csr, written by gen_matrices (format there). Each rank builds its
   own rows: dense as MATDENSE, sparse as AIJ. A complex file (hofstadter) needs a PETSc with complex
   scalars; a real file is read by either.

   Warm-up: "short" (default) is the same solve stopped after 2 restarts (-eps_max_it 2): it uploads the
   matrix, allocates, loads every kernel; "full" is a whole solve; "none" none. Before each solve the
   operators are set again (a solved EPS would not solve again); cudalanczos keeps its device copy of A.

   -cap S stops a solve after S seconds (a stopping test; all ranks agree): the line then says "timeout".
   Device memory (cudalanczos on the GPU): the largest used-memory reading (cudaMemGetInfo, sampled at
   every restart and after the solve) minus the reading before the first solve. Matrix-vector products:
   cudalanczos -eps_view's "operator applications"; other types the MatMult log count. True residuals:
   max over the k wanted pairs of ||A x - lambda x|| / (|lambda| ||x||): one rank of a real PETSc with
   OpenMP loops, several ranks (or complex scalars) with EPSComputeError (-check_resid computes both and
   reports their largest difference).
*/
#include <slepccudalanczos.h>
#include <petsctime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(_OPENMP)
  #include <omp.h>
#endif
#if defined(CUDALANCZOS_HAVE_CUDA)
  #include <cuda_runtime_api.h>
#endif

#define MAXK 64
#define MAXK_VALUES 64

typedef struct {
  PetscLogDouble t0, cap; /* solve start, cap in seconds (<= 0: none) */
  PetscBool      capped, basic;
  int            sample;  /* sample device memory in the monitor */
  size_t         peak;    /* largest used device memory seen (bytes) */
} BenchCtx;

typedef struct { /* this rank's CSR rows, kept while a SeqAIJ uses them */
  PetscInt    *ia, *ja;
  PetscScalar *a;
  PetscInt     rows;
} LocalCsr;

/* The entry (i, j) of the dense thesis matrix: examples/thesis_demo.c, bit for bit. */
static inline double DenseEntry(uint64_t i, uint64_t j)
{
  uint64_t lo = i < j ? i : j, hi = i < j ? j : i;
  uint64_t x  = lo * 0x9E3779B97F4A7C15ULL ^ (hi + 0x632BE59BD9B4E019ULL);
  x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29, x *= 0x94D049BB133111EBULL, x ^= x >> 32;
  return (double)(x >> 11) / 9007199254740992.0;
}

static void DeviceUsed(size_t *used)
{
  *used = 0;
#if defined(CUDALANCZOS_HAVE_CUDA)
  size_t f = 0, t = 0;
  if (cudaMemGetInfo(&f, &t) == cudaSuccess) *used = t - f;
  else (void)cudaGetLastError();
#endif
}

static PetscErrorCode BuildDense(PetscInt n, Mat *A)
{
  PetscInt     rstart, rend, lda;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(MatCreateDense(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  PetscCall(MatDenseGetLDA(*A, &lda));
  PetscCall(MatDenseGetArrayWrite(*A, &a));
  {
    const PetscInt m = rend - rstart;
    PetscInt       j;
#pragma omp parallel for schedule(static)
    for (j = 0; j < n; ++j) {
      PetscScalar *col = a + (size_t)j * lda;
      for (PetscInt i = 0; i < m; ++i) col[i] = DenseEntry((uint64_t)(rstart + i), (uint64_t)j);
    }
  }
  PetscCall(MatDenseRestoreArrayWrite(*A, &a));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static int ReadAt(FILE *f, long long offset, void *buf, size_t size, size_t count)
{
  if (count == 0) return 0;
  if (fseeko(f, (off_t)offset, SEEK_SET)) return 1;
  return fread(buf, size, count, f) != count;
}

/* This rank's rows of DIR/NAME.csr as AIJ (SeqAIJ over `keep` on one rank, MPIAIJ copies otherwise). */
static PetscErrorCode BuildCsr(const char *path, Mat *A, LocalCsr *keep, PetscInt *nglobal, long long *nnz)
{
  FILE       *f;
  char        magic[8];
  int64_t     head[3];
  PetscMPIInt size;
  PetscInt    n, m = PETSC_DECIDE, rstart = 0, i;
  int32_t    *rp, *cj;
  long long   base;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  f = fopen(path, "rb");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open %s (written by gen_matrices)", path);
  PetscCheck(fread(magic, 1, 8, f) == 8 && (!memcmp(magic, "CLCSR01\n", 8) || !memcmp(magic, "CLCSRZ1\n", 8)) && fread(head, 8, 3, f) == 3,
             PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s is not a CSR file of gen_matrices", path);
  const int complex_file = !memcmp(magic, "CLCSRZ1\n", 8);
#if !defined(PETSC_USE_COMPLEX)
  PetscCheck(!complex_file, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s holds a complex matrix: run a bench_eps built against a PETSc with complex scalars", path);
#endif
  n        = (PetscInt)head[0];
  *nglobal = n;
  *nnz     = (long long)head[1];
  PetscCall(PetscSplitOwnership(PETSC_COMM_WORLD, &m, &n));
  PetscCallMPI(MPI_Scan(&m, &rstart, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
  rstart -= m;
  PetscCall(PetscMalloc1(m + 1, &rp));
  PetscCheck(!ReadAt(f, 32 + 4LL * rstart, rp, 4, (size_t)m + 1), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read in %s", path);
  const long long nz0 = rp[0], nzl = (long long)rp[m] - rp[0];
  PetscCall(PetscMalloc1(nzl, &cj));
  PetscCall(PetscMalloc1(m + 1, &keep->ia));
  PetscCall(PetscMalloc1(nzl, &keep->ja));
  PetscCall(PetscMalloc1(nzl, &keep->a));
  keep->rows = m;
  base       = 32 + 4LL * (head[0] + 1);
  PetscCheck(!ReadAt(f, base + 4 * nz0, cj, 4, (size_t)nzl), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read in %s", path);
  if (complex_file || sizeof(PetscScalar) == 8) { /* the file's values are PetscScalars */
    PetscCheck(!ReadAt(f, base + 4 * head[1] + (long long)sizeof(PetscScalar) * nz0, keep->a, sizeof(PetscScalar), (size_t)nzl), PETSC_COMM_SELF,
               PETSC_ERR_FILE_READ, "short read in %s", path);
  } else { /* real values into complex scalars */
    double *v;
    PetscCall(PetscMalloc1(nzl, &v));
    PetscCheck(!ReadAt(f, base + 4 * head[1] + 8 * nz0, v, 8, (size_t)nzl), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "short read in %s", path);
    for (long long p = 0; p < nzl; ++p) keep->a[p] = v[p];
    PetscCall(PetscFree(v));
  }
  fclose(f);
  for (i = 0; i <= m; ++i) keep->ia[i] = (PetscInt)(rp[i] - nz0);
  for (long long p = 0; p < nzl; ++p) keep->ja[p] = (PetscInt)cj[p];
  PetscCall(PetscFree(rp));
  PetscCall(PetscFree(cj));
  if (size == 1) PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_WORLD, n, n, keep->ia, keep->ja, keep->a, A));
  else {
    PetscCall(MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, m, PETSC_DECIDE, n, n, keep->ia, keep->ja, keep->a, A));
    PetscCall(PetscFree(keep->ia));
    PetscCall(PetscFree(keep->ja));
    PetscCall(PetscFree(keep->a));
  }
  PetscFunctionReturn(0);
}

/* Stopping test: the time cap (all ranks agree), plus SLEPc's basic test for types other than
   cudalanczos (whose driver does max_it and nconv >= nev itself and calls a user test only on top). */
static PetscErrorCode Stop(EPS eps, PetscInt its, PetscInt max_it, PetscInt nconv, PetscInt nev, EPSConvergedReason *reason, void *ptr)
{
  BenchCtx      *ctx = (BenchCtx *)ptr;
  PetscLogDouble t;
  int            over;

  PetscFunctionBeginUser;
  *reason = EPS_CONVERGED_ITERATING;
  if (ctx->basic) PetscCall(EPSStoppingBasic(eps, its, max_it, nconv, nev, reason, NULL));
  if (*reason != EPS_CONVERGED_ITERATING || ctx->cap <= 0) PetscFunctionReturn(0);
  PetscCall(PetscTime(&t));
  over = t - ctx->t0 > ctx->cap;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)eps)));
  if (over) {
    ctx->capped = PETSC_TRUE;
    *reason     = EPS_CONVERGED_USER;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Monitor(EPS eps, PetscInt its, PetscInt nconv, PetscScalar *eigr, PetscScalar *eigi, PetscReal *errest, PetscInt nest, void *ptr)
{
  BenchCtx *ctx = (BenchCtx *)ptr;
  size_t    used;

  PetscFunctionBeginUser;
  if (ctx->sample) {
    DeviceUsed(&used);
    if (used > ctx->peak) ctx->peak = used;
  }
  PetscFunctionReturn(0);
}

#if !defined(PETSC_USE_COMPLEX)
/* max_i ||A x_i - l_i x_i|| / (|l_i| ||x_i||) over the first `k` pairs, on one rank, OpenMP (real scalars). */
static PetscErrorCode ResidualOpenMP(EPS eps, Mat A, PetscBool dense, const LocalCsr *csr, PetscInt k, PetscReal *maxres)
{
  PetscInt     n, c;
  Vec          xr;
  double      *X, *lam, *r2, *x2;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatCreateVecs(A, &xr, NULL));
  PetscCall(PetscMalloc1((size_t)n * k, &X));
  PetscCall(PetscCalloc3(k, &lam, k, &r2, k, &x2));
  for (c = 0; c < k; ++c) {
    PetscScalar        l;
    const PetscScalar *x;
    PetscCall(EPSGetEigenpair(eps, c, &l, NULL, xr, NULL));
    lam[c] = PetscRealPart(l);
    PetscCall(VecGetArrayRead(xr, &x));
    PetscCall(PetscArraycpy(X + (size_t)c * n, x, n));
    PetscCall(VecRestoreArrayRead(xr, &x));
  }
  PetscCall(VecDestroy(&xr));
  if (dense) {
    const PetscScalar *a;
    PetscInt           lda;
    double            *XT;
    const PetscInt     BR = 256, nblk = (n + BR - 1) / BR;
    PetscCall(MatDenseGetLDA(A, &lda));
    PetscCall(MatDenseGetArrayRead(A, &a));
    PetscCall(PetscMalloc1((size_t)n * k, &XT));
    for (PetscInt j = 0; j < n; ++j)
      for (c = 0; c < k; ++c) XT[(size_t)j * k + c] = X[(size_t)c * n + j];
#pragma omp parallel
    {
      double  *Y    = (double *)malloc(sizeof(double) * BR * k);
      double  *part = (double *)calloc(2 * k, sizeof(double));
      PetscInt blk;
#pragma omp for schedule(dynamic, 1)
      for (blk = 0; blk < nblk; ++blk) {
        const PetscInt i0 = blk * BR, nb = PetscMin(BR, n - i0);
        memset(Y, 0, sizeof(double) * BR * k);
        for (PetscInt j = 0; j < n; ++j) {
          const double *col = a + (size_t)j * lda + i0, *xj = XT + (size_t)j * k;
          for (PetscInt cc = 0; cc < k; ++cc) {
            const double xv = xj[cc];
            double      *y  = Y + (size_t)cc * BR;
            for (PetscInt i = 0; i < nb; ++i) y[i] += col[i] * xv;
          }
        }
        for (PetscInt cc = 0; cc < k; ++cc)
          for (PetscInt i = 0; i < nb; ++i) {
            const double xi = X[(size_t)cc * n + i0 + i], r = Y[(size_t)cc * BR + i] - lam[cc] * xi;
            part[cc] += r * r;
            part[k + cc] += xi * xi;
          }
      }
#pragma omp critical
      for (PetscInt cc = 0; cc < k; ++cc) r2[cc] += part[cc], x2[cc] += part[k + cc];
      free(Y);
      free(part);
    }
    PetscCall(MatDenseRestoreArrayRead(A, &a));
    PetscCall(PetscFree(XT));
  } else {
    for (c = 0; c < k; ++c) {
      const double *x = X + (size_t)c * n, l = lam[c];
      double        s = 0, t = 0;
      PetscInt      i;
#pragma omp parallel for reduction(+ : s, t) schedule(dynamic, 4096)
      for (i = 0; i < n; ++i) {
        double y = 0;
        for (PetscInt p = csr->ia[i]; p < csr->ia[i + 1]; ++p) y += csr->a[p] * x[csr->ja[p]];
        const double r = y - l * x[i];
        s += r * r;
        t += x[i] * x[i];
      }
      r2[c] = s, x2[c] = t;
    }
  }
  *maxres = 0;
  for (c = 0; c < k; ++c) {
    const double e = sqrt(r2[c]) / (fabs(lam[c]) * sqrt(x2[c]));
    *maxres        = (isnan(e) || e > *maxres) ? e : *maxres;
    if (isnan(*maxres)) break;
  }
  PetscCall(PetscFree(X));
  PetscCall(PetscFree3(lam, r2, x2));
  PetscFunctionReturn(0);
}
#endif

static PetscErrorCode ResidualSLEPc(EPS eps, PetscInt k, PetscReal *maxres)
{
  PetscFunctionBeginUser;
  *maxres = 0;
  for (PetscInt i = 0; i < k; ++i) {
    PetscReal e;
    PetscCall(EPSComputeError(eps, i, EPS_ERROR_RELATIVE, &e));
    if (PetscIsNanReal(e) || e > *maxres) *maxres = e;
  }
  PetscFunctionReturn(0);
}

/* cudalanczos: its -eps_view lines (the operator applications of the last solve, the basis size it ended
   with when the basis may grow, backend, operator, and where the products went: split[] = until the nev-th
   pair converged, verification, true-residual check, passes over the operator, partial steps redone,
   look-ahead steps run, look-ahead steps queued and dropped; -1 where the line is missing). */
static PetscErrorCode ViewOurs(EPS eps, long *matvecs, int *ncv_end, char *backend, size_t nb, char *op, size_t no, long split[7])
{
  PetscViewer v;
  char        path[PETSC_MAX_PATH_LEN], line[1024];
  PetscMPIInt rank;
  FILE       *f;

  PetscFunctionBeginUser;
  *matvecs   = -1;
  *ncv_end   = -1;
  for (int q = 0; q < 7; ++q) split[q] = -1;
  backend[0] = op[0] = 0;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/bench_eps_view_%d.txt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid()));
  PetscCallMPI(MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, PETSC_COMM_WORLD));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, path, &v));
  PetscCall(EPSView(eps, v));
  PetscCall(PetscViewerDestroy(&v));
  if (rank == 0 && (f = fopen(path, "r"))) {
    while (fgets(line, sizeof(line), f)) {
      char *p;
      line[strcspn(line, "\r\n")] = 0;
      if ((p = strstr(line, "last solve: ")) && strstr(line, " operator applications")) sscanf(p + 12, "%ld", matvecs);
      else if ((p = strstr(line, "basis size when the last solve ended: "))) sscanf(p + 38, "%d", ncv_end);
      else if ((p = strstr(line, "operator applications by part: ")))
        sscanf(p + 31, "%ld until the nev-th pair converged (with the norm estimate), %ld verification, %ld true-residual check; %ld passes", &split[0],
               &split[1], &split[2], &split[3]);
      else if ((p = strstr(line, "thrown away: ")))
        sscanf(p + 13, "%ld partial-reorthogonalization steps redone, %ld look-ahead steps run (%ld queued", &split[4], &split[5], &split[6]);
      else if ((p = strstr(line, "backend used: "))) PetscCall(PetscStrncpy(backend, p + 14, nb));
      else if ((p = strstr(line, "  operator: "))) PetscCall(PetscStrncpy(op, p + 12, no));
    }
    fclose(f);
    remove(path);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode EventInfo(const char *name, PetscLogDouble *time, long *count)
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  *time  = 0;
  *count = 0;
  PetscCall(PetscLogEventGetId(name, &ev));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  *time  = info.time;
  *count = info.count;
  PetscFunctionReturn(0);
}

/* JSON-safe string (drops quotes and backslashes) and number (null for NaN/Inf). */
static void Clean(char *s)
{
  for (char *p = s; *p; ++p)
    if (*p == '"' || *p == '\\' || (unsigned char)*p < 32) *p = '\'';
}
static const char *Num(char *buf, size_t n, double v, const char *fmt)
{
  if (!isfinite(v)) snprintf(buf, n, "null");
  else snprintf(buf, n, fmt, v);
  return buf;
}

static int CompareDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One EPS as a user's program makes it: the type and the rest from the command line. */
static PetscErrorCode UserEPS(Mat A, PetscInt k, const char *which, PetscReal tol, EPS *eps)
{
  PetscFunctionBeginUser;
  PetscCall(EPSCreate(PETSC_COMM_WORLD, eps));
  PetscCall(EPSSetOperators(*eps, A, NULL));
  PetscCall(EPSSetProblemType(*eps, EPS_HEP));
  PetscCall(EPSSetType(*eps, EPSCUDALANCZOS));
  PetscCall(EPSSetWhichEigenpairs(*eps, !strcmp(which, "largest") ? EPS_LARGEST_REAL : EPS_SMALLEST_REAL));
  PetscCall(EPSSetDimensions(*eps, k, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(EPSSetTolerances(*eps, tol, PETSC_DETERMINE));
  PetscCall(EPSSetFromOptions(*eps));
  PetscFunctionReturn(0);
}

/* Wall time of EPSSetUp + EPSSolve (all ranks), what a program waits for, and whether it converged k pairs. */
static PetscErrorCode TimedSolve(EPS eps, PetscInt k, double *seconds, PetscInt *nconv)
{
  PetscLogDouble t0, t1;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t0));
  PetscCall(EPSSetUp(eps));
  PetscCall(EPSSolve(eps));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscTime(&t1));
  *seconds = (double)(t1 - t0);
  PetscCall(EPSGetConverged(eps, nconv));
  (void)k;
  PetscFunctionReturn(0);
}

/* -user_times: the first solve of the process, a new EPS on the solved Mat, a re-solve on one EPS (each
   EPSSetUp + EPSSolve). */
static PetscErrorCode UserTimes(Mat A, const char *cas, PetscInt n, PetscInt k, const char *which, PetscReal tol, int reps)
{
  EPS            eps;
  EPSType        type;
  char           solver[64];
  MatType        mtype;
  double         first, fresh[5] = {0, 0, 0, 0, 0}, again[5] = {0, 0, 0, 0, 0}, sorted[5];
  PetscScalar    values[MAXK_VALUES];
  PetscInt       nvalues = 0;
  PetscInt       nconv, minconv;
  PetscScalar    l0;
  char           nb1[32], nb2[32], nb3[32];

  PetscFunctionBeginUser;
  PetscCall(UserEPS(A, k, which, tol, &eps));
  PetscCall(EPSGetType(eps, &type));
  PetscCall(PetscStrncpy(solver, type, sizeof(solver))); /* type lives with the EPS */
  PetscCall(MatGetType(A, &mtype));
  PetscCall(TimedSolve(eps, k, &first, &minconv));
  PetscCall(EPSGetEigenvalue(eps, 0, &l0, NULL));
  PetscCall(EPSDestroy(&eps));
  for (int r = 0; r < reps; ++r) {
    PetscCall(UserEPS(A, k, which, tol, &eps));
    PetscCall(TimedSolve(eps, k, &fresh[r], &nconv));
    minconv = PetscMin(minconv, nconv);
    PetscCall(EPSDestroy(&eps));
  }
  PetscCall(UserEPS(A, k, which, tol, &eps));
  PetscCall(TimedSolve(eps, k, &again[0], &nconv)); /* untimed: this EPS's first solve */
  for (int r = 0; r < reps; ++r) {
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCall(TimedSolve(eps, k, &again[r], &nconv));
    minconv = PetscMin(minconv, nconv);
  }
  nvalues = PetscMin(PetscMin(nconv, k), MAXK_VALUES); /* the re-solve's values, for the comparison with the peers' */
  for (PetscInt i = 0; i < nvalues; ++i) PetscCall(EPSGetEigenvalue(eps, i, &values[i], NULL));
  PetscCall(EPSDestroy(&eps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "{\"bench\":\"user_times\",\"solver\":\"%s\",\"mat_type\":\"%s\",\"case\":\"%s\",\"n\":%" PetscInt_FMT
                        ",\"k\":%" PetscInt_FMT ",\"which\":\"%s\",\"min_nconv\":%" PetscInt_FMT ",\"lambda0\":%s,\"first_s\":%s", solver, mtype, cas, n, k, which,
                        minconv, Num(nb1, sizeof(nb1), (double)PetscRealPart(l0), "%.15g"), Num(nb2, sizeof(nb2), first, "%.6f")));
  for (int part = 0; part < 2; ++part) { /* the medians (the middle value of 1 or 3) and every value */
    const double *all = part ? again : fresh;
    memcpy(sorted, all, sizeof sorted);
    qsort(sorted, reps, sizeof(double), CompareDouble);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, part ? ",\"resolve_s\":%s,\"resolve_all_s\":[" : ",\"new_eps_s\":%s,\"new_eps_all_s\":[",
                          Num(nb1, sizeof(nb1), sorted[reps / 2], "%.6f")));
    for (int r = 0; r < reps; ++r) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s%s", r ? "," : "", Num(nb1, sizeof(nb1), all[r], "%.6f")));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "]"));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"values\":["));
  for (PetscInt i = 0; i < nvalues; ++i)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s%s", i ? "," : "", Num(nb1, sizeof(nb1), (double)PetscRealPart(values[i]), "%.15g")));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "]}\n"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mat            A;
  EPS            eps;
  EPSType        type;
  PetscBool      ours, dense, flg, check = PETSC_FALSE;
  PetscInt       n = 0, ks[MAXK], nks = MAXK, i;
  long long      nnz;
  char           cas[64] = "dense12288", dir[PETSC_MAX_PATH_LEN] = ".", which[16] = "largest", warm[16] = "short";
  char           path[PETSC_MAX_PATH_LEN];
  PetscReal      tol = 1e-8, cap = 60;
  PetscMPIInt    size, rank;
  LocalCsr       csr = {NULL, NULL, NULL, 0};
  BenchCtx       ctx = {0, 0, PETSC_FALSE, PETSC_FALSE, 0, 0};
  size_t         base = 0;
  PetscScalar    asum;
  PetscLogDouble tsetup0, tsetup1;
  PetscBool      user_times = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, "peer benchmark: one matrix, several k"));
  PetscCall(EPSCUDALanczosRegister());
  PetscCall(PetscLogDefaultBegin());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-case", cas, sizeof(cas), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dir", dir, sizeof(dir), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-which", which, sizeof(which), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-warmup", warm, sizeof(warm), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-cap", &cap, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check_resid", &check, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-k", ks, &nks, &flg));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-user_times", &user_times, NULL));
  if (!flg) ks[0] = 1, nks = 1;
  PetscCheck(!strcmp(which, "largest") || !strcmp(which, "smallest"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-which largest|smallest");
  PetscCheck(!strcmp(warm, "short") || !strcmp(warm, "full") || !strcmp(warm, "none"), PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-warmup short|full|none");

  PetscCall(PetscTime(&tsetup0));
  dense = strncmp(cas, "dense", 5) == 0 ? PETSC_TRUE : PETSC_FALSE;
  if (dense) {
    if (!n) n = (PetscInt)atol(cas + 5);
    PetscCheck(n > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "dense case %s: give the size in the name (dense4096) or -n", cas);
    PetscCall(BuildDense(n, &A));
    nnz = (long long)n * n;
  } else {
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s.csr", dir, cas));
    PetscCall(BuildCsr(path, &A, &csr, &n, &nnz));
  }
  {
    char mtype[64];
    PetscCall(PetscOptionsGetString(NULL, NULL, "-mat_type", mtype, sizeof(mtype), &flg));
    if (flg) PetscCall(MatConvert(A, mtype, MAT_INPLACE_MATRIX, &A));
  }
  if (user_times) {
    PetscInt reps = 3;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-user_times_reps", &reps, NULL));
    PetscCheck(reps == 1 || reps == 3 || reps == 5, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-user_times_reps must be 1, 3 or 5, not %" PetscInt_FMT, reps);
    PetscCall(UserTimes(A, cas, n, ks[0], which, tol, (int)reps));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFree(csr.ia));
    PetscCall(PetscFree(csr.ja));
    PetscCall(PetscFree(csr.a));
    PetscCall(SlepcFinalize());
    return 0;
  }
  { /* checksum: sum of all entries, 1'A1 (the Python peers print the same) */
    Vec one, y;
    PetscCall(MatCreateVecs(A, &one, &y));
    PetscCall(VecSet(one, 1.0));
    PetscCall(MatMult(A, one, y));
    PetscCall(VecSum(y, &asum));
    PetscCall(VecDestroy(&one));
    PetscCall(VecDestroy(&y));
  }
  PetscCall(PetscTime(&tsetup1));

  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetType(eps, EPSCUDALANCZOS));
  PetscCall(EPSSetWhichEigenpairs(eps, !strcmp(which, "largest") ? EPS_LARGEST_REAL : EPS_SMALLEST_REAL));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSGetType(eps, &type));
  PetscCall(PetscObjectTypeCompare((PetscObject)eps, EPSCUDALANCZOS, &ours));
  ctx.basic = ours ? PETSC_FALSE : PETSC_TRUE;
  PetscCall(EPSSetStoppingTestFunction(eps, Stop, &ctx, NULL));
  PetscCall(EPSMonitorSet(eps, Monitor, &ctx, NULL));
#if defined(CUDALANCZOS_HAVE_CUDA)
  if (ours) {
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) {
      (void)cudaFree(0); /* the context, before the baseline reading */
      ctx.sample = 1;
      DeviceUsed(&base);
    } else (void)cudaGetLastError();
  }
#endif

  for (PetscInt q = 0; q < nks; ++q) {
    const PetscInt     k = ks[q];
    PetscInt           maxit, nconv, its, ncv, mpd;
    PetscReal          tolx, maxres = -1, maxres2 = -1;
    PetscLogDouble     t0, t1, w0 = 0, w1 = 0, it0 = 0, it1 = 0, vt0 = 0, vt1 = 0, dummy;
    long               mm0 = 0, mm1 = 0, matvecs = -1, c0, split[7] = {-1, -1, -1, -1, -1, -1, -1};
    int                ncv_end = -1;
    EPSConvergedReason reason;
    char               backend[256] = "", opdesc[256] = "", status[64], eigs[MAXK * 26 + 8] = "[", nb1[32], nb2[32], nb3[32], nb4[32];
    size_t             peak_used;

    PetscCall(EPSSetDimensions(eps, k, PETSC_DETERMINE, PETSC_DETERMINE));
    PetscCall(EPSSetTolerances(eps, tol, PETSC_DEFAULT));
    PetscCall(EPSSetFromOptions(eps)); /* -eps_ncv, -eps_max_it, ... given on the command line */
    PetscCall(EPSGetTolerances(eps, &tolx, &maxit));

    if (strcmp(warm, "none")) {
      if (!strcmp(warm, "short")) PetscCall(EPSSetTolerances(eps, tolx, 2));
      PetscCall(EPSSetOperators(eps, A, NULL));
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      PetscCall(PetscTime(&w0));
      ctx.t0     = w0;
      ctx.cap    = cap;
      ctx.capped = PETSC_FALSE;
      PetscCall(EPSSolve(eps));
      PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
      PetscCall(PetscTime(&w1));
      PetscCall(EPSSetTolerances(eps, tolx, maxit));
    }
    if (ctx.capped) { /* a full warm-up that hit the cap: the timed solve would too */
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "{\"bench\":\"eps\",\"solver\":\"%s\",\"case\":\"%s\",\"n\":%" PetscInt_FMT ",\"nnz\":%lld,\"np\":%d,\"k\":%" PetscInt_FMT
                            ",\"which\":\"%s\",\"tol\":%s,\"status\":\"timeout\",\"note\":\"warm-up solve hit the cap\",\"cap_s\":%s}\n",
                            type, cas, n, nnz, (int)size, k, which, Num(nb1, sizeof(nb1), (double)tolx, "%.3e"), Num(nb2, sizeof(nb2), (double)cap, "%.3f")));
      continue;
    }
    PetscCall(EventInfo("MatMult", &dummy, &mm0));
    if (ours) {
      PetscCall(EventInfo("CUDALancIterate", &it0, &c0));
      PetscCall(EventInfo("CUDALancVectors", &vt0, &c0));
    }
    ctx.peak = 0;
    PetscCall(EPSSetOperators(eps, A, NULL));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    ctx.t0     = t0;
    ctx.capped = PETSC_FALSE;
    PetscCall(EPSSolve(eps));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    if (ctx.sample) {
      DeviceUsed(&peak_used);
      if (peak_used > ctx.peak) ctx.peak = peak_used;
    }
    PetscCall(EventInfo("MatMult", &dummy, &mm1));
    if (ours) {
      PetscCall(EventInfo("CUDALancIterate", &it1, &c0));
      PetscCall(EventInfo("CUDALancVectors", &vt1, &c0));
      PetscCall(ViewOurs(eps, &matvecs, &ncv_end, backend, sizeof(backend), opdesc, sizeof(opdesc), split));
    } else matvecs = mm1 - mm0;
    PetscCall(EPSGetConverged(eps, &nconv));
    PetscCall(EPSGetIterationNumber(eps, &its));
    PetscCall(EPSGetConvergedReason(eps, &reason));
    PetscCall(EPSGetDimensions(eps, NULL, &ncv, &mpd));
    const PetscInt kk = PetscMin(k, nconv);
    for (i = 0; i < PetscMin(kk, MAXK); ++i) { /* the first MAXK: "eigs" stays one JSON array for any k */
      PetscScalar l;
      char        one[32];
      PetscCall(EPSGetEigenvalue(eps, i, &l, NULL));
      PetscCall(PetscSNPrintf(one, sizeof(one), "%s%s", i ? "," : "", Num(nb1, sizeof(nb1), (double)PetscRealPart(l), "%.15g")));
      PetscCall(PetscStrlcat(eigs, one, sizeof(eigs)));
    }
    PetscCall(PetscStrlcat(eigs, "]", sizeof(eigs)));
    if (kk > 0) {
#if !defined(PETSC_USE_COMPLEX)
      if (size == 1) PetscCall(ResidualOpenMP(eps, A, dense, &csr, kk, &maxres));
      if (size > 1 || check) PetscCall(ResidualSLEPc(eps, kk, size > 1 ? &maxres : &maxres2));
#else
      PetscCall(ResidualSLEPc(eps, kk, &maxres));
#endif
    }
    if (ctx.capped) PetscCall(PetscStrncpy(status, "timeout", sizeof(status)));
    else if (reason > 0 && nconv >= k) PetscCall(PetscStrncpy(status, "ok", sizeof(status)));
    else PetscCall(PetscSNPrintf(status, sizeof(status), "not converged (%s)", EPSConvergedReasons[reason]));
    Clean(backend);
    Clean(opdesc);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "{\"bench\":\"eps\",\"solver\":\"%s\",\"case\":\"%s\",\"n\":%" PetscInt_FMT ",\"nnz\":%lld,\"np\":%d,\"k\":%" PetscInt_FMT
                          ",\"which\":\"%s\",\"tol\":%s,\"status\":\"%s\",\"reason\":\"%s\",\"time_s\":%s,\"its\":%" PetscInt_FMT
                          ",\"matvecs\":%ld,\"nconv\":%" PetscInt_FMT ",\"ncv\":%" PetscInt_FMT ",\"max_rel_res\":%s",
                          type, cas, n, nnz, (int)size, k, which, Num(nb2, sizeof(nb2), (double)tolx, "%.3e"), status, EPSConvergedReasons[reason],
                          Num(nb3, sizeof(nb3), (double)(t1 - t0), "%.6f"), its, matvecs, nconv,
                          ncv, maxres < 0 ? "null" : Num(nb1, sizeof(nb1), (double)maxres, "%.3e")));
    if (ncv_end > 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"ncv_end\":%d", ncv_end));
    if (split[0] >= 0)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            ",\"before_nev\":%ld,\"verification\":%ld,\"check\":%ld,\"passes\":%ld,\"redone\":%ld,\"lookahead_ran\":%ld,\"lookahead_queued\":%ld",
                            split[0], split[1], split[2], split[3], split[4], split[5], split[6]));
    if (check && size == 1 && maxres2 >= 0)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"max_rel_res_slepc\":%s", Num(nb2, sizeof(nb2), (double)maxres2, "%.3e")));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"eigs\":%s,\"asum\":%s,\"warmup\":\"%s\",\"warmup_s\":%s,\"setup_s\":%s,\"cap_s\":%s", eigs,
                          Num(nb3, sizeof(nb3), (double)PetscRealPart(asum), "%.17g"), warm, Num(nb1, sizeof(nb1), (double)(w1 - w0), "%.4f"),
                          Num(nb2, sizeof(nb2), (double)(tsetup1 - tsetup0), "%.3f"), Num(nb4, sizeof(nb4), (double)cap, "%.3f")));
    if (ours)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"backend\":\"%s\",\"operator\":\"%s\",\"iterate_s\":%s,\"vectors_s\":%s", backend, opdesc,
                            Num(nb1, sizeof(nb1), (double)(it1 - it0), "%.6f"), Num(nb2, sizeof(nb2), (double)(vt1 - vt0), "%.6f")));
    if (ctx.sample) {
      size_t f = 0, t = 0;
#if defined(CUDALANCZOS_HAVE_CUDA)
      if (cudaMemGetInfo(&f, &t) != cudaSuccess) (void)cudaGetLastError();
#endif
      (void)f;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"dev_mb\":%s,\"dev_total_mb\":%s",
                            Num(nb4, sizeof(nb4), ctx.peak > base ? (double)(ctx.peak - base) / 1048576.0 : 0.0, "%.1f"),
                            Num(nb1, sizeof(nb1), (double)t / 1048576.0, "%.0f")));
    }
#if defined(_OPENMP)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, ",\"omp_threads\":%d", omp_get_max_threads()));
#endif
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "}\n"));
  }

  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree(csr.ia));
  PetscCall(PetscFree(csr.ja));
  PetscCall(PetscFree(csr.a));
  PetscCall(SlepcFinalize());
  return 0;
}
