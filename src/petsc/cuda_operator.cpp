/*
   The GPU side of EPSCUDALANCZOS's PETSc layer: choosing the device, uploading the matrix once (dense or
   AIJ with STSHIFT) and caching it while the Mat's object state is unchanged, using a CUDA PETSc's device
   Mat (MATSEQAIJCUSPARSE, MATSEQDENSECUDA; MATMPIAIJCUSPARSE, MATMPIDENSECUDA through cuda_distributed.cpp)
   in place instead, ordered with PETSc's stream by events, and the STApply fallback for everything else. Compiled without CUDA too: then backend "cuda" is a clear error.
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
#include <type_traits>

#if defined(CUDALANCZOS_HAVE_CUDA)
namespace {

using namespace cudalanczos;

// PETSc's arrays (host and device) go to the CUDA backend as they are.
static_assert(std::is_same_v<PetscScalar, Scalar>,
              "PetscScalar must be cudalanczos::Scalar: CUDALANCZOS_USE_COMPLEX must be set exactly when PETSc uses complex scalars");

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

cuda::KernelFlavor Flavor(EPSCUDALanczosKernels k)
{
  switch (k) {
  case EPS_CUDALANCZOS_KERNELS_CUSTOM: return cuda::KernelFlavor::Custom;
  case EPS_CUDALANCZOS_KERNELS_VENDOR: return cuda::KernelFlavor::Vendor;
  default: return cuda::KernelFlavor::Default;
  }
}

// Makes A's device copy this EPS's operator when it is current for these kernels and `device` (this
// EPS's backend, built on it, stays too). Otherwise (stale or none: A let go of a stale one) the EPS lets
// go of its operator and backend as well, so that the old copy is freed before a new one is made, not
// after it: the peak is one copy, not two. Collective.
PetscErrorCode TakeCurrentCopy(EPS eps, Mat A, int device, PetscBool *current)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  std::shared_ptr<const void> copy;

  PetscFunctionBegin;
  PetscCall(MatCUDALanczosGetDeviceCopy(A, (int)ctx->opt.kernels, device, &copy));
  *current = copy ? PETSC_TRUE : PETSC_FALSE;
  if (copy) {
    PetscCallCXX(ctx->cache.device_op = std::move(copy));
    PetscFunctionReturn(0);
  }
  if (ctx->cache.backend_op == ctx->cache.device_op) {
    PetscCallCXX(ctx->cache.backend.reset());
    PetscCallCXX(ctx->cache.backend_op.reset());
  }
  PetscCallCXX(ctx->cache.device_op.reset());
  PetscFunctionReturn(0);
}

// Makes the device operator of M on `device` and composes it on M for the next solve: a SEQDENSE (`isdense`)
// or SEQAIJ uploaded from its host arrays, or (`distributed`) an MPIAIJ / MPIDENSE row-distributed
// (cuda_distributed.cpp), from its host arrays or, `in_place`, on a CUDA PETSc's device arrays of its
// MPI CUDA type. An in-place set-up reads what PETSc wrote, so it is ordered after PETSc's stream. *op
// stays null where a distributed M's row and column layouts differ. *uploaded: the bytes that moved
// to the device (0 in place). The one way the matrix A and the B of a generalized problem get their
// device operators. Collective for a distributed M.
PetscErrorCode MakeDeviceOperator(EPS eps, Mat M, PetscBool isdense, PetscBool distributed, PetscBool in_place, int device,
                                  std::shared_ptr<const void> *op, std::size_t *uploaded)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  *uploaded = 0;
  if (!in_place) PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Upload, eps, 0, 0, 0));
#if defined(PETSC_HAVE_CUDA) // only a CUDA PETSc's device Mats are used in place
  else PetscCall(EPSCUDALanczosOrderAfterPETSc(nullptr, device));
#endif
  if (distributed) PetscCall(EPSCUDALanczosUploadDistributed(eps, M, device, in_place, op));
  else {
    std::shared_ptr<const cuda::DeviceOperator> made;
    PetscCall(MatCUDALanczosUpload(M, isdense, Flavor(ctx->opt.kernels), device, &made));
    PetscCallCXX(*op = std::move(made));
  }
  if (!in_place) PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Upload, eps, 0, 0, 0));
  if (!*op) PetscFunctionReturn(0);
  const std::size_t bytes = static_cast<const cuda::DeviceOperator *>(op->get())->device_bytes();
  if (!in_place) {
    *uploaded = bytes;
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  }
  PetscCall(MatCUDALanczosSetDeviceCopy(M, (int)ctx->opt.kernels, device, *op, bytes, in_place));
  PetscFunctionReturn(0);
}

#if defined(PETSC_HAVE_CUDA)
static_assert(sizeof(PetscInt) == sizeof(int), "PETSc's device CSR arrays are used in place as the operators' 32-bit indices");

/// Where a device Mat's data is: PETSc's own device arrays (device pointers), and the device they are on.
struct DeviceMatData {
  cuda::DenseView dense; // MATSEQDENSECUDA
  cuda::CsrView   csr;   // MATSEQAIJCUSPARSE
  int             device = -1; // -1: not device memory (then not used in place)
};

// PETSc's device arrays of a MATSEQDENSECUDA (isdense) or MATSEQAIJCUSPARSE, taken and given back at once:
// they stay valid while A's object state is unchanged (PETSc moves it whenever they may change). Taking
// them makes A's device data current (PETSc copies values last set on the host, as its own MatMult would).
PetscErrorCode GetDeviceMatData(Mat A, PetscBool isdense, DeviceMatData *d)
{
  PetscInt m, n;
  const void *where;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, nullptr));
  PetscCall(MatGetSize(A, nullptr, &n));
  if (isdense) {
    const PetscScalar *a;
    PetscInt           lda;
    PetscCall(MatDenseGetLDA(A, &lda));
    PetscCall(MatDenseCUDAGetArrayRead(A, &a));
    d->dense = cuda::DenseView{m, n, lda, a};
    where    = a;
    PetscCall(MatDenseCUDARestoreArrayRead(A, &a));
  } else {
    const PetscInt    *i, *j;
    const PetscScalar *a;
    MatInfo            info;
    PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
    PetscCall(MatSeqAIJCUSPARSEGetIJ(A, PETSC_FALSE, &i, &j)); // uncompressed: every row, empty ones too
    PetscCall(MatSeqAIJCUSPARSEGetArrayRead(A, &a));
    d->csr = cuda::CsrView{m, n, (index_t)info.nz_used, i, j, a};
    where  = i;
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &a));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
  }
  PetscCallCXX(d->device = cuda::device_of(where));
  PetscFunctionReturn(0);
}

// The device operator of a MATSEQDENSECUDA / MATSEQAIJCUSPARSE on its own device arrays `d` (nothing copied),
// on the device they are on, composed on M for the next solve. Its set-up (the cuSPARSE analysis reads the
// matrix, on the legacy default stream) is ordered after PETSc's writes to M by an event.
PetscErrorCode MakeInPlaceOperator(EPS eps, Mat M, PetscBool isdense, const DeviceMatData &d, std::shared_ptr<const void> *op)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  std::shared_ptr<cuda::DeviceOperator> made;
  const char *origin = "PETSc's device array";

  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosOrderAfterPETSc(nullptr, d.device));
  if (isdense) PetscCallCXX(made = cuda::make_dense_operator_on_device(d.dense, Flavor(ctx->opt.kernels), d.device, origin));
  else PetscCallCXX(made = cuda::make_csr_operator_on_device(d.csr, Flavor(ctx->opt.kernels), d.device, origin));
  PetscCall(MatCUDALanczosSetDeviceCopy(M, (int)ctx->opt.kernels, d.device, made, made->device_bytes(), PETSC_TRUE));
  PetscCallCXX(*op = std::move(made));
  PetscFunctionReturn(0);
}

// ctx->cache.device_op on A's own device data, used in place (nothing copied; 0 uploaded bytes): the operator
// composed on A when A's state is unchanged since it was made (this EPS's cached backend then stays), else
// a new one, composed on A for the next solve. Its device is the one A's data is on. PETSc queues its
// writes to A on its device context's stream: a new operator's set-up (the cuSPARSE analysis reads the
// matrix, on the legacy default stream) is ordered after them by an event (EPSCUDALanczosOrderAfterPETSc),
// and so is every solve's backend (EPSCUDALanczosCreateCUDABackend).
PetscErrorCode UseDeviceMat(EPS eps, Mat A, PetscBool isdense, const DeviceMatData &d)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  PetscCheck(ctx->opt.device < 0 || ctx->opt.device == d.device, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "-eps_cudalanczos_device %" PetscInt_FMT " was chosen, but the %s Mat's data lives on CUDA device %d, where PETSc put it, and "
             "EPSCUDALANCZOS uses it there in place: choose device %d, or leave the device to the solver",
             ctx->opt.device, ((PetscObject)A)->type_name, d.device, d.device);
  PetscBool current = PETSC_FALSE;
  PetscCall(TakeCurrentCopy(eps, A, d.device, &current)); // a stale one (its pointers may be gone) is let go
  if (current) PetscFunctionReturn(0);
  PetscCall(MakeInPlaceOperator(eps, A, isdense, d, &ctx->cache.device_op));
  PetscFunctionReturn(0);
}

// A MATMPIAIJCUSPARSE / MATMPIDENSECUDA: whether every rank's data is in device memory (not bound to the
// CPU), and the device this rank's is on (`device`, this EPS's pick, for a rank without rows). Collective.
PetscErrorCode DistributedDeviceData(Mat A, PetscBool isdense, int device, PetscBool *ok, int *data_device)
{
  PetscBool bound;
  PetscInt  m;
  const void *where = nullptr;

  PetscFunctionBegin;
  *data_device = device;
  PetscCall(MatBoundToCPU(A, &bound));
  PetscCall(MatGetLocalSize(A, &m, nullptr));
  if (!bound && m > 0) { // a rank without rows may have no device arrays: it takes `device`
    if (isdense) {
      const PetscScalar *a;
      PetscCall(MatDenseCUDAGetArrayRead(A, &a));
      where = a;
      PetscCall(MatDenseCUDARestoreArrayRead(A, &a));
    } else {
      Mat             Ad, Ao;
      const PetscInt *garray, *i, *j;
      PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
      PetscCall(MatSeqAIJCUSPARSEGetIJ(Ad, PETSC_FALSE, &i, &j));
      where = i;
      PetscCall(MatSeqAIJCUSPARSERestoreIJ(Ad, PETSC_FALSE, &i, &j));
    }
  }
  int at = -1;
  PetscCallCXX(at = cuda::device_of(where));
  if (at >= 0) *data_device = at;
  *ok = !bound && (at >= 0 || m == 0) ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, ok, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(0);
}

// The distributed twin of UseDeviceMat: a MATMPIAIJCUSPARSE / MATMPIDENSECUDA as the row-distributed
// operator (cuda_distributed.cpp) on the Mat's own device arrays, on every rank the device its data is on.
// Collective.
PetscErrorCode UseDistributedDeviceMat(EPS eps, Mat A, int data_device)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        current = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCheck(ctx->opt.device < 0 || ctx->opt.device == data_device, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "-eps_cudalanczos_device %" PetscInt_FMT " was chosen, but this rank's part of the %s Mat lives on CUDA device %d, where PETSc "
             "put it, and EPSCUDALANCZOS uses it there in place: choose device %d, or leave the device to the solver",
             ctx->opt.device, ((PetscObject)A)->type_name, data_device, data_device);
  PetscCall(TakeCurrentCopy(eps, A, data_device, &current));
  if (current) PetscFunctionReturn(0);
  std::size_t uploaded; // 0: in place
  // Left null where row and column layouts differ (on every rank alike): STApply, as for MPIAIJ.
  PetscCall(MakeDeviceOperator(eps, A, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE, data_device, &ctx->cache.device_op, &uploaded));
  PetscFunctionReturn(0);
}
#endif

// The host Mat types an upload takes: one process's dense and AIJ, or row-distributed MPIAIJ and MPIDENSE.
struct UploadableType {
  PetscBool seqdense = PETSC_FALSE, seqaij = PETSC_FALSE, mpiaij = PETSC_FALSE, mpidense = PETSC_FALSE;
};

#if defined(PETSC_HAVE_CUDA)
// A CUDA PETSc's device Mat (MATSEQAIJCUSPARSE, MATSEQDENSECUDA, MATMPIAIJCUSPARSE, MATMPIDENSECUDA):
// its own device arrays made ctx->cache.device_op, used in place (*done). Bound to the CPU (its data is
// on the host), or not in device memory after all, it is uploaded like the host type it extends: *type
// says which. Collective for the MPI types (the same type on every rank).
PetscErrorCode UseDeviceMatInPlace(EPS eps, Mat A, int device, UploadableType *type, PetscBool *done)
{
  PetscBool iscudadense, iscudaaij, ismpicudaaij, ismpicudadense, bound = PETSC_FALSE;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQDENSECUDA, &iscudadense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &iscudaaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJCUSPARSE, &ismpicudaaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIDENSECUDA, &ismpicudadense));
  if (ismpicudaaij || ismpicudadense) { // any number of ranks
    int data_device;
    PetscCall(DistributedDeviceData(A, ismpicudadense, device, done, &data_device));
    if (*done) PetscCall(UseDistributedDeviceMat(eps, A, data_device));
    type->mpiaij   = ismpicudaaij;
    type->mpidense = ismpicudadense;
  }
  if (iscudadense || iscudaaij) {
    PetscCall(MatBoundToCPU(A, &bound));
    if (!bound) {
      DeviceMatData d;
      PetscCall(GetDeviceMatData(A, iscudadense, &d));
      if (d.device >= 0) PetscCall(UseDeviceMat(eps, A, iscudadense, d));
      *done = d.device >= 0 ? PETSC_TRUE : PETSC_FALSE;
    }
    type->seqdense = iscudadense;
    type->seqaij   = iscudaaij;
  }
  PetscFunctionReturn(0);
}
#endif

// Makes ctx->cache.device_op the operator of A on `device`: A's device copy when it has a current one (no
// byte moves), a CUDA MatShell's own operator, a CUDA PETSc's device Mat used in place (on the device its
// data is on), or a new upload (dense or AIJ on one process; MPIAIJ or MPIDENSE row-distributed, one
// device per rank) composed on A for the next EPS. Leaves it null when A cannot live on the device
// (other types, other types on several processes). Collective.
PetscErrorCode UploadOperator(EPS eps, Mat A, int device)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  UploadableType   type;
  PetscMPIInt      size;

  PetscFunctionBegin;
  ctx->last.uploaded_bytes = 0;
  // A CUDA MatShell (cuda_matshell.cpp) already holds its operator on the device.
  PetscErrorCode (*getop)(Mat, std::shared_ptr<const void> *) = nullptr;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatCUDALanczosGetOperator_C", &getop));
  if (getop) {
    PetscCall(getop(A, &ctx->cache.device_op));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &type.mpiaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIDENSE, &type.mpidense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQDENSE, &type.seqdense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &type.seqaij));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
#if defined(PETSC_HAVE_CUDA)
  PetscBool in_place;
  PetscCall(UseDeviceMatInPlace(eps, A, device, &type, &in_place));
  if (in_place) PetscFunctionReturn(0);
#endif
  if (!type.mpiaij && !type.mpidense && (size > 1 || (!type.seqdense && !type.seqaij))) { // STApply on the host
    PetscCallCXX(ctx->cache.device_op.reset());
    PetscFunctionReturn(0);
  }
  PetscBool current = PETSC_FALSE;
  PetscCall(TakeCurrentCopy(eps, A, device, &current));
  if (current) PetscFunctionReturn(0);
  // MPIAIJ / MPIDENSE: this rank's rows on its device, ghosts exchanged per product (cuda_distributed.cpp).
  const PetscBool distributed = type.mpiaij || type.mpidense ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MakeDeviceOperator(eps, A, type.seqdense, distributed, PETSC_FALSE, device, &ctx->cache.device_op, &ctx->last.uploaded_bytes));
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
  if (size == 1 && ctx->last.device_used >= 0) {
    BackendPool &pool = Pool();
    PetscCallCXX(cuda::rebind_operator(*ctx->cache.backend, nullptr));
    PetscCallCXX(pool.backend = std::move(ctx->cache.backend)); // the one pooled before is freed here
    std::copy(ctx->cache.backend_key, ctx->cache.backend_key + 4, pool.key);
    pool.key[4] = ctx->last.device_used;
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

#if defined(CUDALANCZOS_PETSC_STREAMS)
PetscErrorCode EPSCUDALanczosPETScStream(void **stream)
{
  PetscDeviceContext dctx;
  void              *handle = nullptr;

  PetscDeviceType    type;

  PetscFunctionBegin;
  *stream = nullptr;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetDeviceType(dctx, &type));
  // a host context (-device_enable none, say) has no CUDA stream: PETSc then queues no device work of its
  // own, and the legacy default stream (null) is as good an anchor as any
  if (type != PETSC_DEVICE_CUDA) PetscFunctionReturn(0);
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle)); // a pointer to the context's cudaStream_t
  *stream = handle ? *static_cast<void **>(handle) : nullptr;
  PetscFunctionReturn(0);
}
#endif

#if defined(PETSC_HAVE_CUDA)
PetscErrorCode EPSCUDALanczosOrderAfterPETSc(void *consumer, int device)
{
  PetscFunctionBegin;
#if defined(CUDALANCZOS_PETSC_STREAMS)
  void *petsc = nullptr;
  PetscCall(EPSCUDALanczosPETScStream(&petsc));
  PetscCallCXX(cudalanczos::cuda::order_streams(petsc, consumer, device));
#else
  (void)consumer, (void)device;
  PetscDeviceContext dctx;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextSynchronize(dctx));
#endif
  PetscFunctionReturn(0);
}
#endif

PetscErrorCode MatCUDALanczosUpload(Mat A, PetscBool isdense, cudalanczos::cuda::KernelFlavor flavor, int device,
                                    std::shared_ptr<const cudalanczos::cuda::DeviceOperator> *op)
{
  PetscInt m, n;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(A, &m, nullptr));
  PetscCall(MatGetSize(A, nullptr, &n));
  if (isdense) {
    const PetscScalar *a;
    PetscInt           lda;
    PetscCall(MatDenseGetLDA(A, &lda));
    PetscCall(MatDenseGetArrayRead(A, &a));
    cudalanczos::cuda::DenseView view{m, n, lda, a};
    PetscCallCXX(*op = cudalanczos::cuda::make_dense_operator(view, flavor, device));
    PetscCall(MatDenseRestoreArrayRead(A, &a));
  } else {
    const PetscInt    *ia, *ja;
    const PetscScalar *a;
    PetscInt           nrows;
    PetscBool          done;
    PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetRowIJ could not give the CSR structure of the AIJ matrix");
    PetscCall(MatSeqAIJGetArrayRead(A, &a));
    cudalanczos::cuda::CsrView view{nrows, n, ia[nrows], ia, ja, a};
    PetscCallCXX(*op = cudalanczos::cuda::make_csr_operator(view, flavor, device));
    PetscCall(MatSeqAIJRestoreArrayRead(A, &a));
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  }
  PetscFunctionReturn(0);
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

#if defined(CUDALANCZOS_HAVE_CUDA)
PetscErrorCode EPSCUDALanczosDeviceB(EPS eps, Mat B, int device, std::shared_ptr<const void> *op, std::size_t *uploaded)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscMPIInt      size;
  PetscBool        isdense, isaij;

  PetscFunctionBegin;
  PetscCallCXX(op->reset());
  *uploaded = 0;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (size > 1) { // row-distributed (cuda_distributed.cpp): every rank takes the same path, its products are collective
    PetscBool mpi, in_place = PETSC_FALSE, usable = device >= 0 ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)B, &mpi, MATMPIAIJ, MATMPIAIJCUSPARSE, MATMPIDENSE, MATMPIDENSECUDA, ""));
    if (!mpi) PetscFunctionReturn(0); // the same type on every rank
#if defined(PETSC_HAVE_CUDA)
    PetscBool cudaaij, cudadense;
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIAIJCUSPARSE, &cudaaij));
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATMPIDENSECUDA, &cudadense));
    if (cudaaij || cudadense) { // on the device: used in place where it is on the solve's device on every rank
      int data_device;
      PetscCall(DistributedDeviceData(B, cudadense, device, &in_place, &data_device));
      if (in_place && data_device != device) usable = PETSC_FALSE;
    }
#endif
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &usable, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
    if (!usable) PetscFunctionReturn(0);
    PetscCall(MatCUDALanczosGetDeviceCopy(B, (int)ctx->opt.kernels, device, op));
    // Left null where row and column layouts differ: through the host.
    if (!*op) PetscCall(MakeDeviceOperator(eps, B, PETSC_FALSE, PETSC_TRUE, in_place, device, op, uploaded));
    PetscFunctionReturn(0);
  }
  if (device < 0) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSE, &isdense));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJ, &isaij));
#if defined(PETSC_HAVE_CUDA)
  PetscBool iscudadense, iscudaaij, bound = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSECUDA, &iscudadense));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAIJCUSPARSE, &iscudaaij));
  if (iscudadense || iscudaaij) {
    PetscCall(MatBoundToCPU(B, &bound));
    if (!bound) {
      DeviceMatData d;
      PetscCall(GetDeviceMatData(B, iscudadense, &d));
      if (d.device >= 0 && d.device != device) PetscFunctionReturn(0); // B lives on another device: through the host
      if (d.device == device) {
        PetscCall(MatCUDALanczosGetDeviceCopy(B, (int)ctx->opt.kernels, device, op));
        if (!*op) PetscCall(MakeInPlaceOperator(eps, B, iscudadense, d, op));
        PetscFunctionReturn(0);
      }
    }
    isdense = iscudadense;
    isaij   = iscudaaij;
  }
#endif
  if (!isdense && !isaij) PetscFunctionReturn(0);
  PetscCall(MatCUDALanczosGetDeviceCopy(B, (int)ctx->opt.kernels, device, op));
  if (!*op) PetscCall(MakeDeviceOperator(eps, B, isdense, PETSC_FALSE, PETSC_FALSE, device, op, uploaded));
  PetscFunctionReturn(0);
}
#endif

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

PetscErrorCode EPSCUDALanczosWarmUp(EPS eps)
{
  PetscFunctionBegin;
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPS_CUDALANCZOS *ctx   = (EPS_CUDALANCZOS *)eps->data;
  int              count = 0, device = 0;
  PetscBool        use, shared;
  // EPSCUDALanczosUseCUDA's choice without its errors, which the solve raises where it always did
  PetscCallCXX(count = cudalanczos::cuda::device_count());
  use = ctx->opt.backend != EPS_CUDALANCZOS_BACKEND_HOST && count > 0 && ctx->opt.device < count ? PETSC_TRUE : PETSC_FALSE;
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
// device where it can be (UploadOperator), else null. A generalized problem's STSHIFT operator is B^-1 A,
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
  if (isshift) PetscCall(UploadOperator(eps, *A, device));
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
PetscErrorCode OperatorBackend(EPS eps, cuda::BackendConfig &config, Mat A, PetscInt rstart, std::shared_ptr<Backend> &backend)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  const auto       op  = std::static_pointer_cast<const cuda::DeviceOperator>(ctx->cache.device_op);
  PetscScalar      sigma;
  PetscBool        isshell;

  PetscFunctionBegin;
  PetscCall(STGetShift(eps->st, &sigma));
  ctx->last.shift = PetscRealPart(sigma);
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
                                               std::shared_ptr<cudalanczos::Backend> &backend)
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
  config.flavor      = Flavor(ctx->opt.kernels);
  // one process: no reducer, so that the backend keeps each Lanczos step's scalars on the device
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (size > 1) config.reduce = std::move(reduce);
  if (ctx->cache.device_op) {
    // a CUDA MatShell may live on another device than the default pick
    config.device = device = std::static_pointer_cast<const cuda::DeviceOperator>(ctx->cache.device_op)->device();
    PetscCall(OperatorBackend(eps, config, A, rstart, backend));
  } else PetscCall(STApplyBackend(eps, config, hostop, device, backend));
  ctx->last.backend_name = "cuda";
  ctx->last.device_used  = device;
  PetscCallCXX(ctx->last.device_desc = std::to_string(device) + " " + cuda::device_description(device) + (shared ? " (shared by several ranks)" : ""));
  PetscFunctionReturn(0);
#else
  PetscFunctionBegin;
  SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_SUP_SYS, "libslepccudalanczos was built without CUDA");
#endif
}

PetscErrorCode EPSCUDALanczosLimitBasis(EPS eps, PetscBool on_device, cudalanczos::Settings *s)
{
  PetscFunctionBegin;
  if (s->ncv_max <= s->ncv) PetscFunctionReturn(0);
  PetscInt limit = s->ncv_max;
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  if (on_device && eps->nloc > 0 && ctx->last.device_used >= 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    PetscCallCXX(cudalanczos::cuda::device_memory(ctx->last.device_used, &free_bytes, &total_bytes));
    // A cached backend's basis is released before the new one is allocated: count it as free.
    if (ctx->cache.backend) free_bytes += static_cast<std::size_t>(ctx->cache.backend->basis_columns()) * eps->nloc * sizeof(PetscScalar);
    const double columns = 0.5 * static_cast<double>(free_bytes) / (sizeof(PetscScalar) * static_cast<double>(eps->nloc)) - 3;
    limit = PetscMin(limit, (PetscInt)PetscMax(0.0, PetscMin(columns, 1e9)));
  }
#else
  (void)on_device;
#endif
  // Every rank must take the same growth decisions (the steps per cycle fix the reductions).
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &limit, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)eps)));
  s->ncv_max = (int)PetscMax((PetscInt)s->ncv, limit);
  PetscFunctionReturn(0);
}
