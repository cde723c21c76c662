/*
   The backend of an EPSCUDALANCZOS solve: whether it runs on the GPU, the device it picks, the warm-up at
   set-up, the CUDA backend over the matrix's device operator (cuda_operator.cpp) or over STApply (kept with
   the EPS while its operator and layout are the same, or taken from the process's pool of one), and the
   limit on the basis from the device's free memory. Compiled without CUDA too: then backend "cuda" is a
   clear error.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#include "cuda/upload.hpp"
#if defined(PETSC_HAVE_CUDA)
#include <petscdevice.h>
#endif
#endif

#include <algorithm>
#include <cmath>
#include <string>

#if defined(CUDALANCZOS_HAVE_CUDA)
namespace {

using namespace cudalanczos; // PETSc's arrays (host and device) go to the backend as they are: see eps_cudalanczos_impl.hpp

// EPSCUDALanczosUseCUDA's choice on this rank, without its errors (the solve raises those where it always
// did), for the set-up's decisions: a backend other than host, and a device to pick among `count`.
bool WouldUseCUDA(const EPS_CUDALANCZOS *ctx, int count)
{
  return ctx->opt.backend != EPS_CUDALANCZOS_BACKEND_HOST && count > 0 && ctx->opt.device < count;
}

// Node-local rank modulo the device count, unless the user chose a device.
PetscErrorCode PickDevice(EPS eps, int count, int *device, PetscBool *shared)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  MPI_Comm         node;
  PetscMPIInt      local_rank, local_size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_split_type(PetscObjectComm((PetscObject)eps), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_rank(node, &local_rank));
  PetscCallMPI(MPI_Comm_size(node, &local_size));
  PetscCallMPI(MPI_Comm_free(&node));
  if (ctx->opt.device >= 0) {
    PetscCheck(ctx->opt.device < count, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "-eps_cudalanczos_device %" PetscInt_FMT " does not exist: this process sees %d CUDA device(s)", ctx->opt.device, count);
    *device = (int)ctx->opt.device;
  } else *device = local_rank % count;
  *shared = local_size > count ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

// A CUDA backend that an ended EPS (EPSReset, EPSDestroy) handed back, for the next EPS of the same
// shape in this process: making one (stream, cuBLAS handle, pinned buffers, basis) costs a new EPS more
// than a small re-solve's difference (docs/tuning.md#petsc-backend-pool). One at a time; held without its
// operator, so a Mat's device memory is never kept by it; one-process backends only (a reducer holds the
// old EPS's communicator). Freed at PetscFinalize.
struct BackendPool {
  std::shared_ptr<Backend> backend;
  PetscInt                 key[5] = {-1, -1, -1, -1, -1}; // nloc, n, rstart, kernels, device
};

BackendPool &Pool()
{
  static auto *pool = new BackendPool; // never destroyed: a static's destructor could run after CUDA's
  return *pool;
}

} // namespace

PetscErrorCode EPSCUDALanczosReturnBackend(EPS eps)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscMPIInt      size;

  PetscFunctionBegin;
  if (!ctx->cache.backend) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (size == 1 && ctx->cache.device >= 0) {
    BackendPool &pool = Pool();
    PetscCallCXX(cuda::rebind_operator(*ctx->cache.backend, nullptr));
    PetscCallCXX(pool.backend = std::move(ctx->cache.backend)); // the one pooled before is freed here
    std::copy(ctx->cache.backend_key, ctx->cache.backend_key + 4, pool.key);
    pool.key[4] = ctx->cache.device;
  }
  PetscCallCXX(ctx->cache.backend.reset());
  PetscCallCXX(ctx->cache.backend_op.reset());
  PetscFunctionReturn(0);
}

void EPSCUDALanczosReleaseBackendPool() noexcept { Pool().backend.reset(); }

std::size_t EPSCUDALanczosPooledBackendBytes() noexcept
{
  const BackendPool &pool = Pool();
  return pool.backend ? cudalanczos::cuda::backend_device_bytes(*pool.backend) : 0;
}
#endif

PetscErrorCode EPSCUDALanczosUseCUDA(EPS eps, PetscBool *use)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *use = PETSC_FALSE;
  if (ctx->opt.backend == EPS_CUDALANCZOS_BACKEND_HOST) PetscFunctionReturn(0);
#if defined(CUDALANCZOS_HAVE_CUDA)
  int count = 0;
  PetscCallCXX(count = cudalanczos::cuda::device_count());
  PetscCheck(count > 0 || ctx->opt.backend != EPS_CUDALANCZOS_BACKEND_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "-eps_cudalanczos_backend cuda was requested but no CUDA device is usable by this process; use -eps_cudalanczos_backend host "
             "or auto");
  *use = count > 0 ? PETSC_TRUE : PETSC_FALSE;
#else
  PetscCheck(ctx->opt.backend != EPS_CUDALANCZOS_BACKEND_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "-eps_cudalanczos_backend cuda was requested but this libslepccudalanczos was built without CUDA; use -eps_cudalanczos_backend "
             "host or auto");
#endif
  // Every rank must take the same path: the reductions of the two backends are the same, but keep it simple.
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, use, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  PetscFunctionReturn(0);
}

#if defined(CUDALANCZOS_PETSC_STREAMS)
namespace {
// Whether STApply runs on the device: every matrix of the ST a device Mat whose data is on the device
// (not bound to the CPU), and the Vecs it gets VECCUDA on `device`. Collective.
PetscErrorCode STAppliesOnDevice(EPS eps, const STOperator &hostop, int device, PetscBool *on_device)
{
  PetscInt  nmat;
  PetscBool ok;

  PetscFunctionBegin;
  *on_device = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)hostop.x, &ok, VECSEQCUDA, VECMPICUDA, ""));
  PetscCall(STGetNumMatrices(eps->st, &nmat));
  for (PetscInt i = 0; i < nmat && ok; ++i) {
    Mat       M;
    PetscBool bound;
    PetscCall(STGetMatrix(eps->st, i, &M));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)M, &ok, MATSEQAIJCUSPARSE, MATMPIAIJCUSPARSE, MATSEQDENSECUDA, MATMPIDENSECUDA, ""));
    if (ok) {
      PetscCall(MatBoundToCPU(M, &bound));
      ok = bound ? PETSC_FALSE : PETSC_TRUE;
    }
  }
  if (ok && eps->nloc > 0) { // PETSc's vectors on the device the solve runs on (hostop's have no array: a BV vector's)
    const PetscScalar *a;
    int                at = -1;
    Vec                v;
    PetscCall(BVCreateVec(eps->V, &v));
    PetscCall(VecCUDAGetArrayRead(v, &a));
    PetscCallCXX(at = cuda::device_of(a));
    PetscCall(VecCUDARestoreArrayRead(v, &a));
    PetscCall(VecDestroy(&v));
    ok = at == device ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &ok, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  *on_device = ok;
  PetscFunctionReturn(0);
}
} // namespace
#endif

#if defined(CUDALANCZOS_PETSC_STREAMS)
PetscErrorCode EPSCUDALanczosReturnOnDevice(EPS eps, PetscInt columns, PetscBool *use)
{
  EPS_CUDALANCZOS *ctx   = (EPS_CUDALANCZOS *)eps->data;
  int              count = 0, device = 0;
  PetscBool        shared, ok;

  PetscFunctionBegin;
  PetscCallCXX(count = cudalanczos::cuda::device_count());
  ok = WouldUseCUDA(ctx, count) && !eps->isgeneralized && !eps->nds ? PETSC_TRUE : PETSC_FALSE;
  if (ok) {
    PetscDeviceContext dctx;
    PetscDeviceType    type;
    PetscDevice        petsc_device;
    PetscInt           id = -1;
    std::size_t        free_bytes = 0, total_bytes = 0;

    PetscCall(PickDevice(eps, count, &device, &shared));
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
    if (type == PETSC_DEVICE_CUDA) {
      PetscCall(PetscDeviceContextGetDevice(dctx, &petsc_device));
      PetscCall(PetscDeviceGetDeviceId(petsc_device, &id));
    }
    // the columns and the basis of ncv, with room left for the basis to grow and the work columns
    const double bytes = static_cast<double>(columns + eps->ncv) * static_cast<double>(eps->nloc) * sizeof(PetscScalar);
    if (id == device) PetscCallCXX(cudalanczos::cuda::device_memory(device, &free_bytes, &total_bytes));
    ok = id == device && bytes <= 0.5 * static_cast<double>(free_bytes) ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &ok, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  *use = ok;
  PetscFunctionReturn(0);
}
#endif

PetscErrorCode EPSCUDALanczosWarmUp(EPS eps)
{
  PetscFunctionBegin;
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPS_CUDALANCZOS *ctx   = (EPS_CUDALANCZOS *)eps->data;
  int              count = 0, device = 0;
  PetscBool        use, shared;
  PetscCallCXX(count = cudalanczos::cuda::device_count());
  use = WouldUseCUDA(ctx, count) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &use, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (!use) PetscFunctionReturn(0);
  PetscCall(PickDevice(eps, count, &device, &shared));
  PetscCallCXX(cudalanczos::cuda::warm_up(device));
#else
  (void)eps;
#endif
  PetscFunctionReturn(0);
}

#if defined(CUDALANCZOS_HAVE_CUDA)
namespace {
// ctx->cache.device_op for this solve: STSHIFT's matrix (A, or C under the congruence: hostop.mat) on the
// device where it can be (EPSCUDALanczosUploadOperator), else null. A generalized problem's STSHIFT operator is B^-1 A,
// not A: only STApply applies it. *A: the matrix. Collective.
PetscErrorCode ChooseDeviceOperator(EPS eps, const STOperator &hostop, int device, Mat *A)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        isshift;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, &isshift));
  if (eps->isgeneralized && !hostop.mat) isshift = PETSC_FALSE;
  if (hostop.mat) *A = hostop.mat;
  else PetscCall(STGetMatrix(eps->st, 0, A));
  ctx->last.uploaded_bytes = 0;
  ctx->last.split_bytes    = 0;
  if (isshift) PetscCall(EPSCUDALanczosUploadOperator(eps, *A, device));
  else PetscCallCXX(ctx->cache.device_op.reset());
  PetscFunctionReturn(0);
}

// The backend over the device operator `op`: this EPS's cached one while its operator and layout are the
// same, else the process's pooled one (a new EPS of the same shape, one process), else a new one, kept as
// this EPS's cache.
PetscErrorCode TakeBackend(EPS eps, cuda::BackendConfig &config, const std::shared_ptr<const cuda::DeviceOperator> &op, PetscInt rstart,
                           std::shared_ptr<Backend> &backend)
{
  EPS_CUDALANCZOS *ctx    = (EPS_CUDALANCZOS *)eps->data;
  const PetscInt   key[4] = {eps->nloc, eps->n, rstart, (PetscInt)ctx->opt.kernels};
  BackendPool     &pool   = Pool();

  PetscFunctionBegin;
  if (ctx->cache.backend && ctx->cache.backend_op == ctx->cache.device_op && std::equal(key, key + 4, ctx->cache.backend_key)) {
    backend = ctx->cache.backend;
    PetscFunctionReturn(0);
  }
  PetscCallCXX(ctx->cache.backend.reset());
  if (pool.backend && !config.reduce && std::equal(key, key + 4, pool.key) && pool.key[4] == config.device) {
    PetscCallCXX(cuda::rebind_operator(*pool.backend, op));
    PetscCallCXX(backend = std::move(pool.backend));
  } else PetscCallCXX(backend = cuda::make_cuda_backend(config, op));
  ctx->cache.backend    = backend;
  ctx->cache.backend_op = ctx->cache.device_op;
  std::copy(key, key + 4, ctx->cache.backend_key);
  PetscFunctionReturn(0);
}

// The backend over the device operator, the driver's shift (the uploaded matrix is A; the operator of
// STSHIFT is A - sigma I: the driver subtracts sigma), and where the operator came from (-eps_view).
PetscErrorCode OperatorBackend(EPS eps, cuda::BackendConfig &config, Mat A, PetscInt rstart, std::shared_ptr<Backend> &backend, double *driver_shift)
{
  EPS_CUDALANCZOS         *ctx = (EPS_CUDALANCZOS *)eps->data;
  const DeviceOperatorPtr &op  = ctx->cache.device_op;
  PetscScalar              sigma;
  PetscBool                isshell;

  PetscFunctionBegin;
  PetscCall(STGetShift(eps->st, &sigma));
  *driver_shift = PetscRealPart(sigma);
  PetscCall(TakeBackend(eps, config, op, rstart, backend));
#if defined(CUDALANCZOS_PETSC_STREAMS)
  // The Mat's own device arrays: this solve's products wait, on the device, for what PETSc queued on
  // its stream so far (an unchanged Mat has nothing pending there: a few microseconds).
  if (op->in_place()) {
    void *petsc = nullptr;
    PetscCall(EPSCUDALanczosPETScStream(&petsc));
    PetscCallCXX(cuda::wait_for_stream(*backend, petsc));
  }
#endif
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSHELL, &isshell));
  PetscCallCXX(ctx->last.operator_desc = op->description() + (isshell                     ? "; a CUDA MatShell's own operator"
                                                              : op->in_place()             ? "; nothing copied"
                                                              : ctx->last.uploaded_bytes ? "; copied from the host Mat by this solve, kept with the Mat"
                                                              : ctx->last.split_bytes    ? "; made by this solve, kept with the Mat"
                                                                                         : "; the Mat's device copy, made by an earlier solve"));
  PetscFunctionReturn(0);
}

#if defined(CUDALANCZOS_PETSC_STREAMS)
// The ST's operator (a solve: STSINVERT, or STSHIFT with a B) on a CUDA PETSc's device Mats: STApply on
// VECCUDA Vecs placed over the basis columns, so that the columns never leave the device; PETSc's stream
// and the backend's are ordered by events around each product, no host wait.
PetscErrorCode DeviceSTApplyBackend(EPS eps, cuda::BackendConfig &config, const STOperator &hostop, int device, std::shared_ptr<Backend> &backend)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  const ST         st  = hostop.st;
  const Vec        x = hostop.x, y = hostop.y;

  PetscFunctionBegin;
  cuda::DeviceApply apply = [st, x, y, device](const PetscScalar *xa, PetscScalar *ya, void *stream) {
    void        *petsc = nullptr;
    PetscScalar *yd;
    if (EPSCUDALanczosPETScStream(&petsc)) throw Error("PETSc's device context has no stream (see the PETSc error above)");
    cuda::order_streams(stream, petsc, device); // PETSc reads the column after our writes
    // VecCUDAGetArray: y's values on the device, in our column, wherever STApply left them
    if (VecCUDAPlaceArray(x, xa) || VecCUDAPlaceArray(y, ya) || STApply(st, x, y) || VecCUDAGetArray(y, &yd) || VecCUDARestoreArray(y, &yd) ||
        VecCUDAResetArray(x) || VecCUDAResetArray(y))
      throw Error("STApply failed inside the Lanczos iteration (see the PETSc error above)");
    cuda::order_streams(petsc, stream, device); // our next work reads what PETSc wrote
  };
  std::shared_ptr<const cuda::DeviceOperator> stop;
  PetscCallCXX(stop = cuda::make_callback_operator(eps->nloc, eps->nloc, std::move(apply), "STApply on the device", device));
  PetscCallCXX(backend = cuda::make_cuda_backend(config, std::move(stop)));
  ctx->last.operator_desc = "STApply on the device (the ST's device Mats and KSP, on VECCUDA placed over the basis columns); nothing copied";
  PetscFunctionReturn(0);
}
#endif

// The backend without a device operator: STApply on the device where the ST's matrices and Vecs are there,
// else STApply (or MatMult with C) on the host, the vectors copied per product.
PetscErrorCode STApplyBackend(EPS eps, cuda::BackendConfig &config, const STOperator &hostop, int device, std::shared_ptr<Backend> &backend)
{
  EPS_CUDALANCZOS *ctx          = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        st_on_device = PETSC_FALSE;

  PetscFunctionBegin;
#if defined(CUDALANCZOS_PETSC_STREAMS)
  if (!hostop.mat) PetscCall(STAppliesOnDevice(eps, hostop, device, &st_on_device));
  if (st_on_device) PetscCall(DeviceSTApplyBackend(eps, config, hostop, device, backend));
#else
  (void)device;
#endif
  if (!st_on_device) {
    PetscCallCXX(backend = cuda::make_cuda_backend(config, nullptr, hostop));
    ctx->last.operator_desc = hostop.mat ? "MatMult on the host, vectors copied per product (matrix type not uploadable)"
                                         : "STApply on the host, vectors copied per product (matrix type or ST not uploadable)";
  }
  PetscFunctionReturn(0);
}
} // namespace
#endif

PetscErrorCode EPSCUDALanczosCreateCUDABackend(EPS eps, cudalanczos::Reducer reduce, PetscInt rstart, const STOperator &hostop,
                                               std::shared_ptr<cudalanczos::Backend> &backend, double *driver_shift)
{
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPS_CUDALANCZOS *ctx   = (EPS_CUDALANCZOS *)eps->data;
  int              count = 0, device = 0;
  PetscBool        shared = PETSC_FALSE;
  PetscMPIInt      size;
  Mat              A;

  PetscFunctionBegin;
  PetscCallCXX(count = cuda::device_count());
  PetscCall(PickDevice(eps, count, &device, &shared));
  PetscCall(ChooseDeviceOperator(eps, hostop, device, &A));
  // An upload waited for the warmed context after its host passes; any other first solve of a process
  // waits here
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Context, eps, 0, 0, 0));
  PetscCallCXX(cuda::initialize_context(device));
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Context, eps, 0, 0, 0));
  PetscCall(PetscInfo(eps, "cudalanczos: device %d ready; the last warm-up (context and upload staging, at load or set-up) took %g s on a helper thread\n",
                      device, cuda::warm_up_seconds()));

  cuda::BackendConfig config;
  config.local_size  = eps->nloc;
  config.global_size = eps->n;
  config.row_offset  = rstart;
  config.device      = device;
  config.flavor      = EPSCUDALanczosKernelFlavor(ctx->opt.kernels);
  // one process: no reducer, so that the backend keeps each Lanczos step's scalars on the device
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (size > 1) config.reduce = std::move(reduce);
  if (ctx->cache.device_op) {
    // a CUDA MatShell may live on another device than the default pick
    config.device = device = ctx->cache.device_op->device();
    PetscCall(OperatorBackend(eps, config, A, rstart, backend, driver_shift));
  } else PetscCall(STApplyBackend(eps, config, hostop, device, backend));
  ctx->cache.device      = device;
  ctx->last.backend_name = "cuda";
  PetscCallCXX(ctx->last.device_desc = std::to_string(device) + " " + cuda::device_description(device) + (shared ? " (shared by several ranks)" : ""));
  PetscFunctionReturn(0);
#else
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP_SYS, "libslepccudalanczos was built without CUDA");
#endif
}

namespace {

// This rank's basis columns that the free memory of the solve's device holds (a cached backend's basis
// counts as free: it is released before the new one is allocated); -1 when the solve is not on a device.
PetscErrorCode FreeDeviceColumns(EPS eps, PetscBool on_device, double *columns)
{
  PetscFunctionBegin;
  *columns = -1;
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  if (on_device && eps->nloc > 0 && ctx->cache.device >= 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    PetscCallCXX(cudalanczos::cuda::device_memory(ctx->cache.device, &free_bytes, &total_bytes));
    if (ctx->cache.backend) free_bytes += static_cast<std::size_t>(ctx->cache.backend->basis_columns()) * eps->nloc * sizeof(PetscScalar);
    *columns = static_cast<double>(free_bytes) / (sizeof(PetscScalar) * static_cast<double>(eps->nloc));
  }
#else
  (void)eps, (void)on_device;
#endif
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode EPSCUDALanczosDeviceColumns(EPS eps, PetscBool on_device, int *columns)
{
  PetscInt limit = PETSC_MAX_INT;
  double   free_columns;

  PetscFunctionBegin;
  PetscCall(FreeDeviceColumns(eps, on_device, &free_columns));
  if (free_columns >= 0) limit = (PetscInt)PetscMax(1.0, PetscMin(0.8 * free_columns, 1e9));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &limit, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)eps)));
  *columns = limit == PETSC_MAX_INT ? 0 : (int)limit;
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosCheckBasisFits(EPS eps, PetscBool on_device, int columns)
{
  double    free_columns;
  PetscReal worst[2]; // the largest shortfall in columns, and that rank's free bytes (negated for MAX)

  PetscFunctionBegin;
  PetscCall(FreeDeviceColumns(eps, on_device, &free_columns));
  const double bytes_per_column = sizeof(PetscScalar) * (double)eps->nloc;
  worst[0] = free_columns >= 0 ? (PetscReal)(columns - free_columns) : (PetscReal)-1;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, worst, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)eps)));
  if (worst[0] <= 0) PetscFunctionReturn(0);
  worst[1] = free_columns >= 0 ? (PetscReal)(free_columns * bytes_per_column) : (PetscReal)0;
  SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_MEM,
          "The Lanczos basis does not fit in the GPU's memory: it needs %d columns of %" PetscInt_FMT " rows on this rank (%.2f GiB: ncv %" PetscInt_FMT
          ", mpd %" PetscInt_FMT ", nev %" PetscInt_FMT ", and the solver's work columns) and %.2f GiB are free. Lower nev or ncv (-eps_ncv; "
          "for nev >= 500 the default is nev + 500, -eps_mpd 500), or spread the rows over more GPUs (mpiexec -n)",
          columns, eps->nloc, columns * bytes_per_column / 1073741824.0, eps->ncv, eps->mpd, eps->nev, (double)worst[1] / 1073741824.0);
}

PetscErrorCode EPSCUDALanczosLimitBasis(EPS eps, PetscBool on_device, cudalanczos::Settings *s)
{
  double free_columns;

  PetscFunctionBegin;
  if (s->ncv_max <= s->ncv) PetscFunctionReturn(0);
  PetscInt limit = s->ncv_max;
  PetscCall(FreeDeviceColumns(eps, on_device, &free_columns));
  if (free_columns >= 0) limit = PetscMin(limit, (PetscInt)PetscMax(0.0, PetscMin(0.5 * free_columns - 3, 1e9)));
  // Every rank must take the same growth decisions (the steps per cycle fix the reductions).
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &limit, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)eps)));
  s->ncv_max = (int)PetscMax((PetscInt)s->ncv, limit);
  PetscFunctionReturn(0);
}
