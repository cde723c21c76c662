/*
   EPSSolve_CUDALanczos: one solve as a sequence of phases, the way SLEPc's EPSSolve_Lanczos reads: the
   inner product, the backend with the operator (its device copy where it has one), the settings and
   callbacks from the EPS, the wrappers for a B-inner product and a deflation space, the start columns,
   the driver's run (src/core), and its results into the EPS and its BV. What the solve holds from phase
   to phase is a Solve, released on every return; what outlives it goes to ctx->last (for -eps_view and
   the getters) and ctx->cache. Collective: every rank runs the same phases in the same order.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include "core/b_inner_product_backend.hpp"
#include "core/constrained_backend.hpp"
#include "host/host_backend.hpp"

#include <slepc/private/epsimpl.h>

#include <cmath>
#include <memory>
#include <string>

void STOperator::operator()(const PetscScalar *xa, PetscScalar *ya) const
{
  // A PETSc error inside becomes an exception: the driver is C++, and PetscCallCXX at the boundary
  // turns it back into a PETSc error (PETSc has already printed the original trace).
  if (VecPlaceArray(x, xa) || VecPlaceArray(y, ya) || (mat ? MatMult(mat, x, y) : STApply(st, x, y)) || VecResetArray(x) || VecResetArray(y))
    throw cudalanczos::Error(mat ? "MatMult failed inside the Lanczos iteration (see the PETSc error above)"
                                 : "STApply failed inside the Lanczos iteration (see the PETSc error above)");
}

void BProduct::operator()(const PetscScalar *xa, PetscScalar *ya) const
{
  if (VecPlaceArray(x, xa) || VecPlaceArray(y, ya) || MatMult(B, x, y) || VecResetArray(x) || VecResetArray(y))
    throw cudalanczos::Error("MatMult with the inner-product matrix B failed inside the Lanczos iteration (see the PETSc error above)");
}

namespace {

using namespace cudalanczos;

// What one solve holds from its first phase to its last. The destructor releases it on every return, the
// error returns of PetscCall/PetscCallCXX included (NaN from the operator, a failing STApply): the
// wrappers before the backend they refer to, the backend before the work vectors, the inner-product
// matrix last.
struct Solve {
  EPS              eps;
  EPS_CUDALANCZOS *ctx;
  MPI_Comm         comm;
  Mat              ipmat = nullptr; // the BV's inner-product matrix (a reference of ours; null: Euclidean)
  Mat              inner = nullptr; // the solve's inner-product matrix: ipmat, or null under the congruence
  PetscBool        congruence = PETSC_FALSE;   // set-up's congruence taken: the standard problem of C
  STOperator       hostop{nullptr, nullptr, nullptr};
  BProduct         bprod{nullptr, nullptr, nullptr};
  PetscInt         rstart = 0;
  double           driver_shift = 0; // STSHIFT's shift where the backend applies A (or C), not A - sigma I
  std::shared_ptr<Backend>              backend; // may be the EPS's cached CUDA backend
  std::unique_ptr<BInnerProductBackend> binner;
  std::unique_ptr<ConstrainedBackend>   constrained;
  Backend                              *solver = nullptr; // the outermost of the three
  PetscInt                              nc     = 0;       // deflation vectors (the BV's constraints)
  Settings                              s;
  PetscBool                             st_assembled = PETSC_FALSE; // SHIFT/SINVERT/CAYLEY on assembled matrices
  Callbacks                             cb;
  PetscErrorCode                        cberr = 0; // first PETSc error raised inside a driver callback
  EPSCUDALanczosNormCache               norm;
  Result                                result;

  explicit Solve(EPS e) : eps(e), ctx((EPS_CUDALANCZOS *)e->data), comm(PetscObjectComm((PetscObject)e)) { hostop.st = e->st; }
  Solve(const Solve &)            = delete;
  Solve &operator=(const Solve &) = delete;
  ~Solve()
  {
    constrained.reset(); // it refers to *binner or *backend
    binner.reset();      // it refers to *backend
    backend.reset();
    (void)VecDestroy(&hostop.x);
    (void)VecDestroy(&hostop.y);
    (void)VecDestroy(&bprod.x);
    (void)VecDestroy(&bprod.y);
    (void)MatDestroy(&ipmat);
  }
};

// The inner product is the BV's: B for a generalized problem (set-up gave the BV the ST's B); for a
// standard one the Euclidean one, or the matrix a user gave the BV after EPSSetUp (BVSetMatrix, as SLEPc's
// ex47 does for an operator S = A^-1 B that is self-adjoint in B's inner product only), which SLEPc's
// Krylov solvers take as they find it. A diagonal B with STSHIFT (set-up decided) makes it the standard
// problem of C = B^-1/2 A B^-1/2 instead, applied as a matrix in the Euclidean inner product; ipmat stays
// B for the final B-normalization.
PetscErrorCode SolveInnerProduct(Solve &sv)
{
  const EPS eps     = sv.eps;
  Mat       ipmat   = nullptr;
  PetscBool ipindef = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(BVGetMatrix(eps->V, &ipmat, &ipindef));
  PetscCheck(!ipindef, sv.comm, PETSC_ERR_SUP, "EPSCUDALANCZOS needs a positive definite inner-product matrix B; an indefinite one (EPS_GHIEP) is not supported");
  PetscCheck(ipmat || !eps->isgeneralized, sv.comm, PETSC_ERR_PLIB, "EPSCUDALANCZOS: the BV of a generalized problem has no inner-product matrix");
  // STSHIFT with a diagonal B (set-up's congruence, EPS_GHEP only) checks it whole in
  // EPSCUDALanczosCongruence; any other inner-product matrix has its diagonal checked here
  if (ipmat && !sv.ctx->plan.congruence) PetscCall(EPSCUDALanczosCheckInnerProductMatrix(eps, ipmat));
  if (ipmat) PetscCall(PetscObjectReference((PetscObject)ipmat));
  sv.ipmat      = ipmat; // released by ~Solve
  sv.congruence = sv.ctx->plan.congruence && sv.ipmat ? PETSC_TRUE : PETSC_FALSE;
  if (sv.congruence) {
    Mat A;
    PetscCall(STGetMatrix(eps->st, 0, &A));
    PetscCall(EPSCUDALanczosCongruence(eps, A, sv.ipmat));
    sv.hostop.mat = sv.ctx->cache.congruent;
  }
  sv.inner = sv.congruence ? nullptr : sv.ipmat;
  PetscFunctionReturn(0);
}

// The backend for this solve: CUDA when chosen and possible (the operator on the device where it can be),
// otherwise the host. Also fills sv.driver_shift: the shift the driver must apply itself (an uploaded
// matrix, and C, are A, not A - sigma I).
PetscErrorCode SolveCreateBackend(Solve &sv)
{
  const EPS        eps = sv.eps;
  EPS_CUDALANCZOS *ctx = sv.ctx;
  PetscBool        use_cuda = PETSC_FALSE;

  PetscFunctionBegin;
  // Without arrays: a product on the host places the backend's columns in them (VecPlaceArray), and an
  // uploaded operator never uses them; two zeroed host vectors a solve cost 2 x 16 MB at 2e6 rows.
  PetscCall(STMatCreateVecsEmpty(eps->st, &sv.hostop.x, &sv.hostop.y));
  PetscCall(VecGetOwnershipRange(sv.hostop.x, &sv.rstart, nullptr));
  // Sums doubles; the backends pass an array of Scalars as kDoublesPerScalar times as many doubles.
  const MPI_Comm comm   = sv.comm;
  Reducer        reduce = [comm](double *v, int count) {
    if (MPI_Allreduce(MPI_IN_PLACE, v, count, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) throw Error("MPI_Allreduce failed");
  };
  sv.driver_shift = 0.0;
  PetscCall(EPSCUDALanczosUseCUDA(eps, &use_cuda));
  if (use_cuda) {
    PetscCall(EPSCUDALanczosCreateCUDABackend(eps, reduce, sv.rstart, sv.hostop, sv.backend, &sv.driver_shift));
  } else {
    PetscCallCXX(sv.backend = std::make_unique<HostBackend>(eps->nloc, eps->n, sv.rstart, sv.hostop, reduce));
    ctx->last.backend_name  = "host";
    ctx->last.operator_desc = sv.hostop.mat ? "MatMult (host)" : "STApply (host)";
    ctx->last.device_desc   = "";
  }
  if (sv.congruence) { // C is applied as it is, without STSHIFT's shift: the driver subtracts it (as for an uploaded A)
    PetscScalar sigma;
    PetscCall(STGetShift(eps->st, &sigma));
    sv.driver_shift = PetscRealPart(sigma);
  }
  PetscFunctionReturn(0);
}

// -eps_cudalanczos_check_symmetry, once the operator is where the solve applies it: on one process with A
// itself on the device (not the congruence's C), the probe's products are taken there. Without the
// option, -eps_view shows no probe line for this solve.
PetscErrorCode SolveCheckSymmetry(Solve &sv)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallCXX(sv.ctx->last.symmetry_desc.clear());
  if (!sv.ctx->opt.check_symmetry) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(sv.comm, &size));
  const bool                  a_on_device = size == 1 && !sv.congruence && sv.ctx->cache.device_op;
  const DeviceOperatorPtr     device_op   = a_on_device ? sv.ctx->cache.device_op : nullptr;
  PetscCall(EPSCUDALanczosCheckSymmetry(sv.eps, sv.eps->isgeneralized ? nullptr : sv.ipmat, device_op));
  PetscFunctionReturn(0);
}

// Whether the operator is applied exactly to rounding, so that the true-residual check may take the
// Lanczos relation's proof (Result::residual_bounds): assembled matrices (a shell may hide an inner solve
// or anything else that is not a fixed matrix), and, where the ST solves (a B, STSINVERT, STCAYLEY), a
// direct solve (KSPPREONLY with PCLU or PCCHOLESKY: the same factors every time). An iterative KSP's
// products are only as exact as its tolerance, and keep a product per converged pair. *assembled: the
// ST is SHIFT/SINVERT/CAYLEY on assembled matrices, so that its operator changes only with them.
PetscErrorCode ExactOperator(EPS eps, bool translation_map, PetscBool *assembled, bool *exact_operator)
{
  PetscInt  nmat;
  PetscBool exact = PETSC_TRUE, known_st;

  PetscFunctionBegin;
  PetscCall(STGetNumMatrices(eps->st, &nmat));
  for (PetscInt i = 0; i < nmat && exact; ++i) {
    Mat M;
    PetscCall(STGetMatrix(eps->st, i, &M));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &exact, MATSEQAIJ, MATMPIAIJ, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQBAIJ, MATMPIBAIJ,
                                        MATSEQSBAIJ, MATMPISBAIJ, MATSEQDENSE, MATMPIDENSE, MATSEQDENSECUDA, MATMPIDENSECUDA, ""));
  }
  PetscCall(PetscObjectTypeCompareAny((PetscObject)eps->st, &known_st, STSHIFT, STSINVERT, STCAYLEY, ""));
  if (!known_st) exact = PETSC_FALSE; // a shell ST (or any other) applies what it likes
  *assembled = exact;
  if (exact && !translation_map) { // the operator solves with the ST's KSP
    KSP       ksp;
    PC        pc;
    PetscBool preonly, factor;
    PetscCall(STGetKSP(eps->st, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPPREONLY, &preonly));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &factor, PCLU, PCCHOLESKY, ""));
    exact = preonly && factor ? PETSC_TRUE : PETSC_FALSE;
  }
  *exact_operator = exact ? true : false;
  PetscFunctionReturn(0);
}

// The driver's settings from the EPS and the plan set-up made (Settings::which is set first, in
// EPSSolve_CUDALanczos, as the first check).
PetscErrorCode SolveSettings(Solve &sv)
{
  const EPS                 eps = sv.eps;
  const EPS_CUDALANCZOS    *ctx = sv.ctx;
  const EPSCUDALanczosPlan &plan = ctx->plan;
  Settings                 &s   = sv.s;
  PetscBool                 isshift, sinvert;

  PetscFunctionBegin;
  s.variant             = ctx->opt.variant == EPS_CUDALANCZOS_THESIS ? Variant::Thesis : Variant::ThickRestart;
  s.reorthogonalization = plan.reorthog_eff == EPS_CUDALANCZOS_REORTHOG_NONE      ? Reorthogonalization::None
                          : plan.reorthog_eff == EPS_CUDALANCZOS_REORTHOG_PARTIAL ? Reorthogonalization::Partial
                                                                                  : Reorthogonalization::Full;
  s.target              = PetscRealPart(eps->target);
  s.shift               = sv.driver_shift;
  s.nev                 = (int)eps->nev;
  s.ncv                 = (int)eps->ncv;
  s.ncv_max             = (int)plan.ncv_limit;
  // 0: the basis bounds the cycle (an mpd too small for a step is allowed only where the basis holds the whole space)
  s.mpd                 = eps->mpd < eps->ncv && eps->mpd >= (plan.block_eff > 1 ? 2 * plan.block_eff : 2) ? (int)eps->mpd : 0;
  s.block_size          = (int)plan.block_eff;
  s.restart             = (double)plan.restart_eff;
  s.restart_raise       = ctx->opt.restart == (PetscReal)PETSC_DEFAULT; // the solver's choice may rise on a stall, a user's stays
  s.tol                 = eps->tol == kEPSUnset ? SLEPC_DEFAULT_TOL : eps->tol;
  s.max_it              = (int)eps->max_it;
  s.initial_vector      = eps->nini > 0;
  s.verify              = ctx->opt.verify ? true : false;
  // STSHIFT's back-transform adds the shift: a translation, which the verification certificate needs.
  // Not in a B-inner product (a diagonal B's solve is Euclidean, on C): the certificate's probability
  // bound is for a start vector uniform on the unit sphere of the inner product the operator is
  // self-adjoint in; our start vector's components in B's eigenvector basis are skewed by up to cond(B),
  // which the bound does not know. A verification round then ends only on convergence
  // (docs/algorithm.md, "Generalized problems").
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, &isshift));
  s.translation_map = isshift && !sv.inner ? true : false;
  PetscCall(ExactOperator(eps, s.translation_map, &sv.st_assembled, &s.exact_operator));
  // SLEPc's purification (EPSSetPurify, on by default; SLEPc does it for STSINVERT, not for STCAYLEY) from
  // the Lanczos relation, without a solve (Settings::purify); a pair the driver leaves (NaN in
  // Result::purify_scale) is purified with STApply after the solve, as SLEPc does.
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSINVERT, &sinvert));
  s.purify = eps->isgeneralized && sinvert && eps->purify;
  PetscFunctionReturn(0);
}

// The driver's callbacks: SLEPc's convergence test, the ST's back-transformation, EPSMonitor and a user's
// stopping test. A PETSc error inside one is kept in sv.cberr (the first one) and raised after the run.
void SolveCallbacks(Solve &sv)
{
  const EPS       eps   = sv.eps;
  PetscErrorCode &cberr = sv.cberr;

  sv.cb.error = [eps, &cberr](double theta, double res) {
    PetscReal err = res;
    if (res == 0) return 0.0; // an exact eigenpair (zero matrix, invariant subspace): 0/|0| would be NaN
    if (!cberr) cberr = (*eps->converged)(eps, theta, 0.0, res, &err, eps->convergedctx);
    return (double)err;
  };
  sv.cb.eigenvalue = [eps, &cberr](double value) {
    PetscScalar re = value, im = 0;
    if (!cberr) cberr = STBackTransform(eps->st, 1, &re, &im);
    return (double)PetscRealPart(re);
  };
  sv.cb.monitor = [eps, &cberr](int its, int nconv, const double *theta, const double *errest, int count) {
    // EPSMonitor wants eigr/eigi/errest arrays of the solver: show the current approximations there.
    const int k = PetscMin(count, (int)eps->ncv);
    for (int i = 0; i < k; ++i) {
      eps->eigr[i]   = theta[i];
      eps->eigi[i]   = 0;
      eps->errest[i] = errest[i];
    }
    if (!cberr) cberr = EPSMonitor(eps, its, nconv, eps->eigr, eps->eigi, eps->errest, k);
  };
  // EPSStoppingBasic (max_it, nconv >= nev) is what the driver does itself, and the threshold test what
  // solve_to_threshold does; only a user's test is called.
  if (eps->stopping != EPSStoppingBasic && !EPSCUDALanczosThresholdTest(eps))
    sv.cb.stop = [eps, &cberr](int its, int nconv) {
      EPSConvergedReason reason = EPS_CONVERGED_ITERATING;
      if (!cberr) cberr = (*eps->stopping)(eps, its, eps->max_it, nconv, eps->nev, &reason, eps->stoppingctx);
      return cberr != 0 || reason != EPS_CONVERGED_ITERATING;
    };
}

// An interval solve's progress, which a narrow window's filtered cycles can keep from EPSMonitor for
// minutes: its plan under -info and, with a monitor set, on standard output before the filtered solves
// start; then every 2 seconds with a monitor (each filtered step then ends with a host round trip, a
// thousand products and more after it). Rank 0 prints; no rank waits for another.
void IntervalProgressCallback(Solve &sv)
{
  const EPS       eps       = sv.eps;
  PetscErrorCode &cberr     = sv.cberr;
  const bool      monitored = eps->numbermonitors > 0;
  if (eps->which != EPS_ALL) return;
  sv.cb.interval_progress = [eps, &cberr, monitored, last = PetscLogDouble(0), start = PetscLogDouble(0)](const cudalanczos::IntervalProgress &p) mutable {
    PetscLogDouble now = 0;
    if (cberr || PetscTime(&now)) return;
    if (p.counting || p.plan) { // the degree before the count estimate, then the plan
      if (p.counting) start = now;
      last = now;
      char line[320];
      cberr = p.counting ? PetscSNPrintf(line, sizeof(line), "  cudalanczos interval [%g, %g]: filter degree %d; counting its eigenvalues with %ld products with A\n",
                                         (double)eps->inta, (double)eps->intb, p.degree, p.count_products)
                         : PetscSNPrintf(line, sizeof(line),
                                         "  cudalanczos interval [%g, %g]: filter degree %d, %.1f +- %.1f eigenvalues estimated, %d basis columns; the "
                                         "first filtered cycle takes %ld products with A\n",
                                         (double)eps->inta, (double)eps->intb, p.degree, p.count_estimate, p.count_error, p.columns,
                                         p.first_cycle_products);
      if (!cberr) cberr = PetscInfo(eps, "%s", line + 2);
      if (!cberr && monitored) cberr = PetscPrintf(PetscObjectComm((PetscObject)eps), "%s", line);
      return;
    }
    if (!monitored || now - last < 2.0) return;
    last  = now;
    cberr = PetscPrintf(PetscObjectComm((PetscObject)eps),
                        "  cudalanczos interval: filtered solve %d, restart %d, %d pairs converged, %ld products with A, %.0f s\n", p.chunk,
                        p.restart, p.found, p.products, (double)(now - start));
  };
  if (monitored) sv.cb.tick = [](int, int, long) {}; // solve_interval puts its own in its filtered solves' callbacks
}

#if defined(CUDALANCZOS_HAVE_CUDA)
// B's products on the device of a CUDA backend (EPSCUDALanczosDeviceB), where B can be there: *apply_b
// set, else left empty.
PetscErrorCode DeviceBProducts(Solve &sv, ColumnOperator *apply_b)
{
  EPS_CUDALANCZOS            *ctx        = sv.ctx;
  std::size_t                 b_uploaded = 0;
  DeviceOperatorPtr           bop;

  PetscFunctionBegin;
  if (sv.backend->kind() == cudalanczos::BackendKind::Cuda) PetscCall(EPSCUDALanczosDeviceB(sv.eps, sv.inner, ctx->cache.device, &bop, &b_uploaded));
  if (!bop) PetscFunctionReturn(0);
#if defined(CUDALANCZOS_PETSC_STREAMS)
  if (bop->in_place()) { // B's own device arrays: this solve's products wait for what PETSc queued on them
    void *petsc = nullptr;
    PetscCall(EPSCUDALanczosPETScStream(&petsc));
    PetscCallCXX(cudalanczos::cuda::wait_for_stream(*sv.backend, petsc));
  }
#endif
  *apply_b = [bop](Backend &basis, int src, int dst) { cudalanczos::cuda::apply_to_columns(basis, *bop, src, dst); };
  PetscCallCXX(ctx->last.b_desc = "on the device: " + bop->description() +
                                  (bop->in_place() ? "" : b_uploaded ? "; copied from the host Mat by this solve, kept with the Mat" : "; the Mat's device copy"));
  PetscFunctionReturn(0);
}
#endif

// A B-inner product around the backend: B's products on the device where B can be there, in place on a
// host basis, or through the host for a device basis (two copies of a column per product).
PetscErrorCode SolveBInnerProduct(Solve &sv)
{
  EPS_CUDALANCZOS *ctx = sv.ctx;
  ColumnOperator   apply_b;

  PetscFunctionBegin;
  sv.bprod.B = sv.inner;
  PetscCall(MatCreateVecs(sv.inner, &sv.bprod.x, &sv.bprod.y));
#if defined(CUDALANCZOS_HAVE_CUDA)
  PetscCall(DeviceBProducts(sv, &apply_b));
#endif
  const bool     on_device = static_cast<bool>(apply_b);
  const BProduct bprod     = sv.bprod;
  if (auto *host = dynamic_cast<HostBackend *>(sv.backend.get())) {
    apply_b                = [host, bprod](Backend &, int src, int dst) { bprod(host->column(src), host->column(dst)); };
    ctx->last.b_desc       = "MatMult on the host basis";
  } else if (!on_device) {
    PetscCallCXX(apply_b = host_round_trip([bprod](const PetscScalar *x, PetscScalar *y) { bprod(x, y); }));
    ctx->last.b_desc = "MatMult on the host, columns copied per product (B of a type not taken to the device)";
  }
  PetscCallCXX(sv.binner = std::make_unique<BInnerProductBackend>(*sv.backend, std::move(apply_b)));
  PetscFunctionReturn(0);
}

// The backend the driver sees. A generalized problem: B-inner products around the backend. A deflation
// space: EPSSetUp put it into V as constraints (columns -nc..-1, orthonormal, dependent vectors dropped);
// the solve runs on its complement through a ConstrainedBackend around the others (so that the
// constraints, B-orthonormal from EPSSetUp, are removed in the B-inner product too), which holds them in
// the first columns of the basis and shows the driver the columns after them.
PetscErrorCode SolveWrapBackend(Solve &sv)
{
  PetscFunctionBegin;
  PetscCall(BVGetNumConstraints(sv.eps->V, &sv.nc));
  sv.ctx->last.b_desc.clear();
  if (sv.inner) PetscCall(SolveBInnerProduct(sv));
  Backend &unconstrained = sv.binner ? static_cast<Backend &>(*sv.binner) : *sv.backend;
  if (sv.nc > 0) PetscCallCXX(sv.constrained = std::make_unique<ConstrainedBackend>(unconstrained, (int)sv.nc));
  sv.solver = sv.constrained ? static_cast<Backend *>(sv.constrained.get()) : &unconstrained;
  PetscFunctionReturn(0);
}

// The basis sized for the solve, the deflation vectors into it, and the user's start vector (EPSSetUp put
// the initial space into V: its first column starts the iteration).
PetscErrorCode SolveStartColumns(Solve &sv, EPSCUDALanczosColumns &columns)
{
  const EPS eps    = sv.eps;
  Backend  &solver = *sv.solver;

  PetscFunctionBegin;
  const PetscBool on_device = sv.backend->kind() == cudalanczos::BackendKind::Cuda ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(EPSCUDALanczosLimitBasis(eps, on_device, &sv.s));
  PetscCall(EPSCUDALanczosCheckBasisFits(eps, on_device, basis_columns_needed(sv.s) + (int)sv.nc));
  PetscCallCXX(solver.resize_basis(basis_columns_needed(sv.s)));
  for (PetscInt i = 0; i < sv.nc; ++i) {
    bool               kept        = false;
    ConstrainedBackend &constrained = *sv.constrained;
    PetscCall(columns.Read(
      i - sv.nc, [&](const PetscScalar *x, void *stream) { return constrained.add_constraint_device(x, stream, &kept); },
      [&](const PetscScalar *x) { kept = constrained.add_constraint(x); }));
    if (!kept) PetscCall(PetscInfo(eps, "cudalanczos: deflation vector %" PetscInt_FMT " is in the span of the ones before it: dropped\n", i));
  }
  if (sv.s.initial_vector && sv.congruence) { // the start x0 in C's space: y0 = B^1/2 x0 (column 0 is overwritten by the results anyway)
    Vec v;
    PetscCall(BVGetColumn(eps->V, 0, &v));
    PetscCall(VecPointwiseDivide(v, v, sv.ctx->cache.b_isqrt));
    PetscCall(BVRestoreColumn(eps->V, 0, &v));
  }
  if (sv.s.initial_vector)
    PetscCall(columns.Read(
      0, [&](const PetscScalar *x, void *stream) { return solver.set_column_device(0, x, stream); },
      [&](const PetscScalar *x) { solver.set_column(0, x); }));
  PetscFunctionReturn(0);
}

// The driver's run (src/core), and the first PETSc error a callback raised.
PetscErrorCode SolveIterate(Solve &sv)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Iterate, sv.eps, 0, 0, 0));
  sv.ctx->last.interval = PETSC_FALSE;
  const PetscBool on_device = sv.backend->kind() == cudalanczos::BackendKind::Cuda ? PETSC_TRUE : PETSC_FALSE;
  if (sv.eps->which == EPS_ALL) PetscCall(EPSCUDALanczosSolveInterval(sv.eps, *sv.solver, sv.s, sv.cb, on_device, &sv.result));
  else if (EPSCUDALanczosThresholdTest(sv.eps)) PetscCall(EPSCUDALanczosSolveThreshold(sv.eps, *sv.solver, sv.s, sv.cb, on_device, &sv.result));
  else PetscCallCXX(sv.result = cudalanczos::solve(*sv.solver, sv.s, sv.cb));
  PetscCallCXX(sv.solver->synchronize());
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Iterate, sv.eps, 0, 0, 0));
  PetscCall(sv.cberr);
  PetscFunctionReturn(0);
}

// Columns 0..n-1 of the BV for the returned vectors. A solve for nev pairs returns at most the columns
// set-up gave the BV (nev, or the initial space's): a block of b may converge up to b - 1 pairs past nev,
// and growing a host BV for them cost more than the rest of returning the vectors (BVResize allocates,
// zeroes and copies every column; docs/tuning.md#petsc-returned-pairs). An interval or the threshold test
// returns every pair it found: the BV grows (its contents, constraints included, kept) as far as PETSc
// can index it (set-up checked that nev columns can be), *n cut to that.
PetscErrorCode ReturnColumns(EPS eps, PetscInt *n)
{
  PetscInt cols, most;

  PetscFunctionBegin;
  PetscCall(BVGetSizes(eps->V, nullptr, nullptr, &cols));
  if (*n <= cols) PetscFunctionReturn(0);
  if (eps->which != EPS_ALL && !EPSCUDALanczosThresholdTest(eps)) {
    PetscCall(PetscInfo(eps, "cudalanczos: %" PetscInt_FMT " converged pairs, the %" PetscInt_FMT " best returned (the BV's columns)\n", *n, cols));
    *n = cols;
    PetscFunctionReturn(0);
  }
  PetscCall(EPSCUDALanczosMaxBVColumns(eps, &most));
  if (*n > most) PetscCall(PetscInfo(eps, "cudalanczos: %" PetscInt_FMT " converged pairs, %" PetscInt_FMT " returned: the BV cannot index more columns\n", *n, PetscMax(most, cols)));
  *n = PetscMax(PetscMin(*n, most), cols);
  if (*n > cols) PetscCall(BVResize(eps->V, *n, PETSC_TRUE));
  PetscFunctionReturn(0);
}

// Results the SLEPc way: eigr/eigi/errest, nconv, its and reason, and the BV (and a non-injective ST's
// DS) sized for the converged vectors.
PetscErrorCode ResultValues(Solve &sv)
{
  const EPS     eps = sv.eps;
  const Result &r   = sv.result;
  PetscBool     injective;

  PetscFunctionBegin;
  const PetscInt nret = PetscMin((PetscInt)r.eigenvalues.size(), eps->ncv);
  for (PetscInt i = 0; i < nret; ++i) {
    eps->eigr[i]   = r.eigenvalues[i]; // real (Hermitian problem), also where PetscScalar is complex
    eps->eigi[i]   = 0;
    eps->errest[i] = r.errors[i];
  }
  eps->nconv = PetscMin((PetscInt)r.nconv, nret);
  eps->its   = r.its;
  sv.ctx->last.converged = eps->nconv;
  PetscCall(ReturnColumns(eps, &eps->nconv));
  PetscCall(STIsInjective(eps->st, &injective));
  if (!injective) PetscCall(DSSetDimensions(eps->ds, eps->nconv, 0, 0)); // EPSComputeValues projects onto V[:, 0:nconv]
  switch (r.reason) {
  case Reason::Converged: eps->reason = EPS_CONVERGED_TOL; break;
  case Reason::MaxIterations: eps->reason = EPS_DIVERGED_ITS; break;
  case Reason::Breakdown: eps->reason = EPS_DIVERGED_BREAKDOWN; break;
  case Reason::UserStop: eps->reason = EPS_CONVERGED_USER; break;
  case Reason::ResidualCheck: eps->reason = EPS_DIVERGED_BREAKDOWN; break; // -eps_view says why
  }
  PetscFunctionReturn(0);
}

// The converged vectors into the BV's first columns, and under the congruence back from C's space:
// x = B^-1/2 y (then x^H B x = y^H y = 1).
PetscErrorCode ResultVectors(Solve &sv, EPSCUDALanczosColumns &columns)
{
  const EPS eps = sv.eps;

  PetscFunctionBegin;
  for (PetscInt j = 0; j < eps->nconv; ++j) PetscCall(columns.Write(*sv.solver, j));
  PetscCallCXX(sv.ctx->last.vectors_desc = columns.device_to_device() ? "the BV's device columns (VECCUDA), copied device to device, ordered with PETSc's stream by events"
                                           : sv.backend->kind() == cudalanczos::BackendKind::Cuda ? "the BV's host columns, copied between host and device"
                                                                          : "the BV's host columns");
  if (sv.congruence)
    for (PetscInt j = 0; j < eps->nconv; ++j) {
      Vec v;
      PetscCall(BVGetColumn(eps->V, j, &v));
      PetscCall(VecPointwiseMult(v, v, sv.ctx->cache.b_isqrt));
      PetscCall(BVRestoreColumn(eps->V, j, &v));
    }
  PetscFunctionReturn(0);
}

// In a B-inner product, purification (SLEPc's EPS_Purify, on by default, EPSSetPurify; SLEPc does it for
// STSINVERT, not for STCAYLEY): the operator's range lies in B's range, so x <- Op x removes from x what
// rounding put outside it (components in B's null space, where B is near-singular). The driver purified
// what the Lanczos relation allowed (Settings::purify): x <- Op x from the kept residual directions, no
// solve; the others take one STApply each here. Then every vector B-normalized.
PetscErrorCode ResultPurifyAndNormalize(Solve &sv)
{
  const EPS eps = sv.eps;
  PetscInt  l, k;

  PetscFunctionBegin;
  sv.ctx->last.purified_solves = sv.ctx->last.purified_relation = 0;
  if (!sv.ipmat || eps->nconv <= 0) PetscFunctionReturn(0);
  if (sv.s.purify) {
    const std::vector<double> &scale = sv.result.purify_scale;
    Vec                        v, z;
    PetscCall(BVCreateVec(eps->V, &v));
    for (PetscInt j = 0; j < eps->nconv; ++j) {
      if (j < (PetscInt)scale.size() && std::isfinite(scale[j])) {
        ++sv.ctx->last.purified_relation;
        continue;
      }
      ++sv.ctx->last.purified_solves;
      PetscCall(BVCopyVec(eps->V, j, v));
      PetscCall(BVGetColumn(eps->V, j, &z));
      PetscCall(STApply(eps->st, v, z));
      PetscCall(BVRestoreColumn(eps->V, j, &z));
    }
    PetscCall(VecDestroy(&v));
  }
  PetscCall(BVGetActiveColumns(eps->V, &l, &k));
  PetscCall(BVSetActiveColumns(eps->V, 0, eps->nconv));
  PetscCall(BVNormalize(eps->V, nullptr)); // in the BV's inner product: x^H B x = 1
  PetscCall(BVSetActiveColumns(eps->V, l, k));
  PetscFunctionReturn(0);
}

// The driver's results into the EPS and its BV.
PetscErrorCode SolveResults(Solve &sv, EPSCUDALanczosColumns &columns)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Vectors, sv.eps, 0, 0, 0));
  PetscCall(ResultValues(sv));
  PetscCall(ResultVectors(sv, columns));
  PetscCall(ResultPurifyAndNormalize(sv));
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Vectors, sv.eps, 0, 0, 0));
  PetscFunctionReturn(0);
}

// What the solve leaves for -eps_view, the getters and the next solve: the Result whole, the facts the
// PETSc layer adds, and the norm estimate for the caches.
PetscErrorCode SolveKeep(Solve &sv)
{
  EPS_CUDALANCZOS         *ctx  = sv.ctx;
  EPSCUDALanczosLastSolve &last = ctx->last;
  const Result            &r    = sv.result;

  PetscFunctionBegin;
  last.b_products      = sv.binner ? sv.binner->b_products() : 0;
  last.generalized     = sv.inner ? PETSC_TRUE : PETSC_FALSE;
  last.congruence_used = sv.congruence;
  if (r.verification_cut)
    PetscCall(PetscInfo(sv.eps, "cudalanczos: the multiplicity verification was cut short (max_it or no basis column left): copies of the wanted eigenvalues may be missing\n"));
  last.norm_reused    = sv.norm.mat_reused;
  last.st_norm_reused = sv.norm.st_reused;
  PetscCall(EPSCUDALanczosNormKeep(sv.eps, sv.norm, r.norm_estimate));
  last.solved = PETSC_TRUE;
  PetscCall(PetscInfo(sv.eps, "cudalanczos: %ld operator applications, %ld reductions, %d breakdowns, max|V'V-I| = %g on %s\n", r.matvecs, r.reductions,
                      r.breakdowns, r.orthogonality, last.backend_name.c_str()));
  PetscCallCXX(last.result = std::move(sv.result));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode EPSSolve_CUDALanczos(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  Solve            sv(eps);

  PetscFunctionBegin;
  if (eps->which != EPS_ALL) PetscCall(EPSCUDALanczosWhich(eps, &sv.s.which)); // an interval needs no `which`
  PetscCall(SolveInnerProduct(sv));
  PetscCall(SolveCreateBackend(sv));
  PetscCall(SolveCheckSymmetry(sv));
  PetscCall(SolveSettings(sv));
  PetscCall(EPSCUDALanczosNormLookUp(eps, sv.congruence, sv.st_assembled, &sv.s, &sv.norm));
  SolveCallbacks(sv);
  IntervalProgressCallback(sv);
  PetscCall(SolveWrapBackend(sv));
  EPSCUDALanczosColumns columns(eps, sv.backend->kind() == cudalanczos::BackendKind::Cuda, ctx->cache.device);
  PetscCall(SolveStartColumns(sv, columns));
  PetscCall(SolveIterate(sv));
  PetscCall(SolveResults(sv, columns));
  PetscCall(SolveKeep(sv));
  PetscFunctionReturn(0);
}
