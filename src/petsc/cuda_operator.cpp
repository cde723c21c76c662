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
  if (ctx->device >= 0) {
    PetscCheck(ctx->device < count, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "-eps_cudalanczos_device %" PetscInt_FMT " does not exist: this process sees %d CUDA device(s)", ctx->device, count);
    *device = (int)ctx->device;
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
  PetscCall(MatCUDALanczosGetDeviceCopy(A, (int)ctx->kernels, device, &copy));
  *current = copy ? PETSC_TRUE : PETSC_FALSE;
  if (copy) {
    PetscCallCXX(ctx->device_op = std::move(copy));
    PetscFunctionReturn(0);
  }
  if (ctx->backend_cache_op == ctx->device_op) {
    PetscCallCXX(ctx->backend_cache.reset());
    PetscCallCXX(ctx->backend_cache_op.reset());
  }
  PetscCallCXX(ctx->device_op.reset());
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
    PetscCall(MatCUDALanczosUpload(M, isdense, Flavor(ctx->kernels), device, &made));
    PetscCallCXX(*op = std::move(made));
  }
  if (!in_place) PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Upload, eps, 0, 0, 0));
  if (!*op) PetscFunctionReturn(0);
  const std::size_t bytes = static_cast<const cuda::DeviceOperator *>(op->get())->device_bytes();
  if (!in_place) {
    *uploaded = bytes;
    PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  }
  PetscCall(MatCUDALanczosSetDeviceCopy(M, (int)ctx->kernels, device, *op, bytes, in_place));
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
  if (isdense) PetscCallCXX(made = cuda::make_dense_operator_on_device(d.dense, Flavor(ctx->kernels), d.device, origin));
  else PetscCallCXX(made = cuda::make_csr_operator_on_device(d.csr, Flavor(ctx->kernels), d.device, origin));
  PetscCall(MatCUDALanczosSetDeviceCopy(M, (int)ctx->kernels, d.device, made, made->device_bytes(), PETSC_TRUE));
  PetscCallCXX(*op = std::move(made));
  PetscFunctionReturn(0);
}

// ctx->device_op on A's own device data, used in place (nothing copied; 0 uploaded bytes): the operator
// composed on A when A's state is unchanged since it was made (this EPS's cached backend then stays), else
// a new one, composed on A for the next solve. Its device is the one A's data is on. PETSc queues its
// writes to A on its device context's stream: a new operator's set-up (the cuSPARSE analysis reads the
// matrix, on the legacy default stream) is ordered after them by an event (EPSCUDALanczosOrderAfterPETSc),
// and so is every solve's backend (EPSCUDALanczosCreateCUDABackend).
PetscErrorCode UseDeviceMat(EPS eps, Mat A, PetscBool isdense, const DeviceMatData &d)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  PetscCheck(ctx->device < 0 || ctx->device == d.device, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "-eps_cudalanczos_device %" PetscInt_FMT " was chosen, but the %s Mat's data lives on CUDA device %d, where PETSc put it, and "
             "EPSCUDALANCZOS uses it there in place: choose device %d, or leave the device to the solver",
             ctx->device, ((PetscObject)A)->type_name, d.device, d.device);
  PetscBool current = PETSC_FALSE;
  PetscCall(TakeCurrentCopy(eps, A, d.device, &current)); // a stale one (its pointers may be gone) is let go
  if (current) PetscFunctionReturn(0);
  PetscCall(MakeInPlaceOperator(eps, A, isdense, d, &ctx->device_op));
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
  PetscCheck(ctx->device < 0 || ctx->device == data_device, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP,
             "-eps_cudalanczos_device %" PetscInt_FMT " was chosen, but this rank's part of the %s Mat lives on CUDA device %d, where PETSc "
             "put it, and EPSCUDALANCZOS uses it there in place: choose device %d, or leave the device to the solver",
             ctx->device, ((PetscObject)A)->type_name, data_device, data_device);
  PetscCall(TakeCurrentCopy(eps, A, data_device, &current));
  if (current) PetscFunctionReturn(0);
  std::size_t uploaded; // 0: in place
  // Left null where row and column layouts differ (on every rank alike): STApply, as for MPIAIJ.
  PetscCall(MakeDeviceOperator(eps, A, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE, data_device, &ctx->device_op, &uploaded));
  PetscFunctionReturn(0);
}
#endif

// Makes ctx->device_op the operator of A on `device`: A's device copy when it has a current one (no byte
// moves), a CUDA MatShell's own operator, a CUDA PETSc's device Mat used in place (MATSEQAIJCUSPARSE,
// MATSEQDENSECUDA, MATMPIAIJCUSPARSE, MATMPIDENSECUDA, on the device its data is on), or a new upload (dense or AIJ on one process; MPIAIJ
// or MPIDENSE row-distributed, one device per rank) composed on A for the next EPS. Leaves it null when
// A cannot live on the device (other types, other types on several processes). Collective.
PetscErrorCode UploadOperator(EPS eps, Mat A, int device)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        isdense, isaij, ismpiaij, ismpidense;
  PetscMPIInt      size;

  PetscFunctionBegin;
  ctx->uploaded_bytes = 0;
  // A CUDA MatShell (cuda_matshell.cpp) already holds its operator on the device.
  PetscErrorCode (*getop)(Mat, std::shared_ptr<const void> *) = nullptr;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatCUDALanczosGetOperator_C", &getop));
  if (getop) {
    PetscCall(getop(A, &ctx->device_op));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &ismpiaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIDENSE, &ismpidense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQDENSE, &isdense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
#if defined(PETSC_HAVE_CUDA)
  // A device Mat: its own device arrays, used in place. Bound to the CPU (its data is on the host), or
  // not in device memory after all, it is uploaded like the host type it extends.
  PetscBool iscudadense, iscudaaij, bound = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQDENSECUDA, &iscudadense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJCUSPARSE, &iscudaaij));
  PetscBool ismpicudaaij, ismpicudadense;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJCUSPARSE, &ismpicudaaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIDENSECUDA, &ismpicudadense));
  if (ismpicudaaij || ismpicudadense) { // any number of ranks; the same type on every rank
    PetscBool ok;
    int       data_device;
    PetscCall(DistributedDeviceData(A, ismpicudadense, device, &ok, &data_device));
    if (ok) {
      PetscCall(UseDistributedDeviceMat(eps, A, data_device));
      PetscFunctionReturn(0);
    }
    ismpiaij   = ismpicudaaij; // bound to the CPU: uploaded from its host arrays, as MPIAIJ / MPIDENSE
    ismpidense = ismpicudadense;
  }
  if (iscudadense || iscudaaij) {
    PetscCall(MatBoundToCPU(A, &bound));
    if (!bound) {
      DeviceMatData d;
      PetscCall(GetDeviceMatData(A, iscudadense, &d));
      if (d.device >= 0) {
        PetscCall(UseDeviceMat(eps, A, iscudadense, d));
        PetscFunctionReturn(0);
      }
    }
    isdense = iscudadense;
    isaij   = iscudaaij;
  }
#endif
  if (!ismpiaij && !ismpidense && (size > 1 || (!isdense && !isaij))) { // STApply on the host
    PetscCallCXX(ctx->device_op.reset());
    PetscFunctionReturn(0);
  }

  PetscBool current = PETSC_FALSE;
  PetscCall(TakeCurrentCopy(eps, A, device, &current));
  if (current) PetscFunctionReturn(0);

  // MPIAIJ / MPIDENSE: this rank's rows on its device, ghosts exchanged per product (cuda_distributed.cpp).
  const PetscBool distributed = ismpiaij || ismpidense ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MakeDeviceOperator(eps, A, isdense, distributed, PETSC_FALSE, device, &ctx->device_op, &ctx->uploaded_bytes));
  PetscFunctionReturn(0);
}

// A CUDA backend that an ended EPS (EPSReset, EPSDestroy) handed back, for the next EPS of the same
// shape in this process: making one (stream, cuBLAS handle, pinned buffers, basis) cost a new EPS about
// 1.6 ms on an H200 (dense 12288, k = 1: 9.4 ms against a re-solve's 7.8 ms, 2026-12-01). One at a
// time; held without its operator, so a Mat's device memory is never kept by it; one-process backends
// only (a reducer holds the old EPS's communicator). Freed at PetscFinalize.
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
  if (!ctx->backend_cache) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (size == 1 && ctx->device_used >= 0) {
    BackendPool &pool = Pool();
    PetscCallCXX(cuda::rebind_operator(*ctx->backend_cache, nullptr));
    PetscCallCXX(pool.backend = std::move(ctx->backend_cache)); // the one pooled before is freed here
    std::copy(ctx->backend_cache_key, ctx->backend_cache_key + 4, pool.key);
    pool.key[4] = ctx->device_used;
  }
  PetscCallCXX(ctx->backend_cache.reset());
  PetscCallCXX(ctx->backend_cache_op.reset());
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
  if (ctx->backend == EPS_CUDALANCZOS_BACKEND_HOST) PetscFunctionReturn(0);
#if defined(CUDALANCZOS_HAVE_CUDA)
  int count = 0;
  PetscCallCXX(count = cudalanczos::cuda::device_count());
  PetscCheck(count > 0 || ctx->backend != EPS_CUDALANCZOS_BACKEND_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "-eps_cudalanczos_backend cuda was requested but no CUDA device is usable by this process; use -eps_cudalanczos_backend host "
             "or auto");
  *use = count > 0 ? PETSC_TRUE : PETSC_FALSE;
#else
  PetscCheck(ctx->backend != EPS_CUDALANCZOS_BACKEND_CUDA, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS,
             "-eps_cudalanczos_backend cuda was requested but this libslepccudalanczos was built without CUDA; use -eps_cudalanczos_backend "
             "host or auto");
#endif
  // Every rank must take the same path: the reductions of the two backends are the same, but keep it simple.
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, use, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosChooseBlockSize(EPS eps, PetscBool isshift)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscMPIInt      size;
  PetscBool        dense = PETSC_FALSE, use_cuda = PETSC_FALSE;
  Mat              A;
  // 4 from nev 10 (2026-11-30-h200-block.md); 2 below, where a single vector's verification round costs as
  // many products as the solve itself and a block of 2 makes it unnecessary (host counts, dense 2048: 22
  // products at nev 1 -> 8 passes of 2, 278 at nev 4 -> 125).
  const PetscInt   b = eps->nev >= 10 ? 4 : 2;

  PetscFunctionBegin;
  ctx->block_eff  = 1;
  ctx->block_auto = PETSC_FALSE;
  // Every condition but the device is the same on every rank; one rank only (the distributed operators
  // apply a block column by column, so blocks would only add orthogonalization there).
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
  if (ctx->variant != EPS_CUDALANCZOS_THICK_RESTART || (ctx->reorthog_set && ctx->reorthog != EPS_CUDALANCZOS_REORTHOG_FULL) || !isshift || size != 1 ||
      eps->n < kAutoBlockRows || eps->nev + 16 * b + b > eps->n)
    PetscFunctionReturn(0);
  PetscCall(STGetMatrix(eps->st, 0, &A));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &dense, MATSEQDENSE, MATSEQDENSECUDA, ""));
  if (!dense) PetscFunctionReturn(0);
  PetscCall(EPSCUDALanczosUseCUDA(eps, &use_cuda));
  if (!use_cuda) PetscFunctionReturn(0);
  ctx->block_eff  = b;
  ctx->block_auto = PETSC_TRUE;
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
    PetscCall(MatCUDALanczosGetDeviceCopy(B, (int)ctx->kernels, device, op));
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
        PetscCall(MatCUDALanczosGetDeviceCopy(B, (int)ctx->kernels, device, op));
        if (!*op) PetscCall(MakeInPlaceOperator(eps, B, iscudadense, d, op));
        PetscFunctionReturn(0);
      }
    }
    isdense = iscudadense;
    isaij   = iscudaaij;
  }
#endif
  if (!isdense && !isaij) PetscFunctionReturn(0);
  PetscCall(MatCUDALanczosGetDeviceCopy(B, (int)ctx->kernels, device, op));
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
  use = ctx->backend != EPS_CUDALANCZOS_BACKEND_HOST && count > 0 && ctx->device < count ? PETSC_TRUE : PETSC_FALSE;
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &use, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (!use) PetscFunctionReturn(0);
  PetscCall(PickDevice(eps, count, &device, &shared));
  PetscCallCXX(cudalanczos::cuda::warm_up(device));
#else
  (void)eps;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosCreateCUDABackend(EPS eps, cudalanczos::Reducer reduce, PetscInt rstart, const STOperator &hostop,
                                               std::shared_ptr<cudalanczos::Backend> &backend)
{
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  int              count = 0, device = 0;
  PetscBool        shared = PETSC_FALSE, isshift;
  Mat              A;

  PetscFunctionBegin;
  PetscCallCXX(count = cudalanczos::cuda::device_count());
  PetscCall(PickDevice(eps, count, &device, &shared));
  PetscCall(PetscObjectTypeCompare((PetscObject)eps->st, STSHIFT, &isshift));
  // A generalized problem's STSHIFT operator is B^-1 A, not A: only STApply applies it. With a diagonal
  // B the solve's matrix is C = B^-1/2 A B^-1/2 instead (hostop.mat, EPSCUDALanczosCongruence).
  if (eps->isgeneralized && !hostop.mat) isshift = PETSC_FALSE;
  if (hostop.mat) A = hostop.mat;
  else PetscCall(STGetMatrix(eps->st, 0, &A));
  ctx->uploaded_bytes = 0;
  if (isshift) PetscCall(UploadOperator(eps, A, device));
  else PetscCallCXX(ctx->device_op.reset());
  // An upload waited for the warmed context after its host passes; any other first solve of a process
  // waits here
  PetscCall(PetscLogEventBegin(EPS_CUDALanczos_Context, eps, 0, 0, 0));
  PetscCallCXX(cudalanczos::cuda::initialize_context(device));
  PetscCall(PetscLogEventEnd(EPS_CUDALanczos_Context, eps, 0, 0, 0));
  PetscCall(PetscInfo(eps, "cudalanczos: device %d ready; the last warm-up (context and upload staging, at load or set-up) took %g s on a helper thread\n",
                      device, cudalanczos::cuda::warm_up_seconds()));

  cudalanczos::cuda::BackendConfig config;
  config.local_size  = eps->nloc;
  config.global_size = eps->n;
  config.row_offset  = rstart;
  config.device      = device;
  config.flavor      = Flavor(ctx->kernels);
  { // one process: no reducer, so that the backend keeps each Lanczos step's scalars on the device
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)eps), &size));
    if (size > 1) config.reduce = std::move(reduce);
  }
  auto op            = std::static_pointer_cast<const cudalanczos::cuda::DeviceOperator>(ctx->device_op);
  if (op) {
    config.device = device = op->device(); // a CUDA MatShell may live on another device than the default pick
    // The uploaded matrix is A; the operator of STSHIFT is A - sigma I: the driver subtracts sigma.
    PetscScalar sigma;
    PetscCall(STGetShift(eps->st, &sigma));
    ctx->shift = PetscRealPart(sigma);
    const PetscInt key[4] = {eps->nloc, eps->n, rstart, (PetscInt)ctx->kernels};
    if (ctx->backend_cache && ctx->backend_cache_op == ctx->device_op && std::equal(key, key + 4, ctx->backend_cache_key)) {
      backend = ctx->backend_cache;
    } else if (BackendPool &pool = Pool(); pool.backend && !config.reduce && std::equal(key, key + 4, pool.key) && pool.key[4] == device) {
      PetscCallCXX(ctx->backend_cache.reset());
      PetscCallCXX(cudalanczos::cuda::rebind_operator(*pool.backend, op)); // a new EPS of the same shape
      PetscCallCXX(backend = std::move(pool.backend));
      ctx->backend_cache    = backend;
      ctx->backend_cache_op = ctx->device_op;
      std::copy(key, key + 4, ctx->backend_cache_key);
    } else {
      PetscCallCXX(ctx->backend_cache.reset());
      PetscCallCXX(backend = cudalanczos::cuda::make_cuda_backend(config, op));
      ctx->backend_cache    = backend;
      ctx->backend_cache_op = ctx->device_op;
      std::copy(key, key + 4, ctx->backend_cache_key);
    }
#if defined(CUDALANCZOS_PETSC_STREAMS)
    // The Mat's own device arrays: this solve's products wait, on the device, for what PETSc queued on
    // its stream so far (an unchanged Mat has nothing pending there: a few microseconds).
    if (op->in_place()) {
      void *petsc = nullptr;
      PetscCall(EPSCUDALanczosPETScStream(&petsc));
      PetscCallCXX(cudalanczos::cuda::wait_for_stream(*backend, petsc));
    }
#endif
    PetscBool isshell;
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSHELL, &isshell));
    PetscCallCXX(ctx->operator_desc = op->description() + (isshell                ? "; a CUDA MatShell's own operator"
                                                           : op->in_place()      ? "; nothing copied"
                                                           : ctx->uploaded_bytes ? "; copied from the host Mat by this solve, kept with the Mat"
                                                                                 : "; the Mat's device copy, made by an earlier solve"));
  } else {
    PetscBool st_on_device = PETSC_FALSE;
#if defined(CUDALANCZOS_PETSC_STREAMS)
    // The ST's operator (a solve: STSINVERT, or STSHIFT with a B) on a CUDA PETSc's device Mats: STApply
    // on VECCUDA Vecs placed over the basis columns, so that the columns never leave the device; PETSc's
    // stream and the backend's are ordered by events around each product, no host wait.
    if (!hostop.mat) PetscCall(STAppliesOnDevice(eps, hostop, device, &st_on_device));
    if (st_on_device) {
      const ST  st = hostop.st;
      const Vec x = hostop.x, y = hostop.y;
      const int dev = device;
      cudalanczos::cuda::DeviceApply apply = [st, x, y, dev](const PetscScalar *xa, PetscScalar *ya, void *stream) {
        void        *petsc = nullptr;
        PetscScalar *yd;
        if (EPSCUDALanczosPETScStream(&petsc)) throw cudalanczos::Error("PETSc's device context has no stream (see the PETSc error above)");
        cudalanczos::cuda::order_streams(stream, petsc, dev); // PETSc reads the column after our writes
        // VecCUDAGetArray: y's values on the device, in our column, wherever STApply left them
        if (VecCUDAPlaceArray(x, xa) || VecCUDAPlaceArray(y, ya) || STApply(st, x, y) || VecCUDAGetArray(y, &yd) || VecCUDARestoreArray(y, &yd) ||
            VecCUDAResetArray(x) || VecCUDAResetArray(y))
          throw cudalanczos::Error("STApply failed inside the Lanczos iteration (see the PETSc error above)");
        cudalanczos::cuda::order_streams(petsc, stream, dev); // our next work reads what PETSc wrote
      };
      std::shared_ptr<const cudalanczos::cuda::DeviceOperator> stop;
      PetscCallCXX(stop = cudalanczos::cuda::make_callback_operator(eps->nloc, eps->nloc, std::move(apply), "STApply on the device", device));
      PetscCallCXX(backend = cudalanczos::cuda::make_cuda_backend(config, std::move(stop)));
      ctx->operator_desc = "STApply on the device (the ST's device Mats and KSP, on VECCUDA placed over the basis columns); nothing copied";
    }
#endif
    if (!st_on_device) {
      PetscCallCXX(backend = cudalanczos::cuda::make_cuda_backend(config, nullptr, hostop));
      ctx->operator_desc = hostop.mat ? "MatMult on the host, vectors copied per product (matrix type not uploadable)"
                                      : "STApply on the host, vectors copied per product (matrix type or ST not uploadable)";
    }
  }
  ctx->backend_name = "cuda";
  ctx->device_used  = device;
  PetscCallCXX(ctx->device_desc = std::to_string(device) + " " + cudalanczos::cuda::device_description(device) +
                                  (shared ? " (shared by several ranks)" : ""));
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
  if (on_device && eps->nloc > 0 && ctx->device_used >= 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    PetscCallCXX(cudalanczos::cuda::device_memory(ctx->device_used, &free_bytes, &total_bytes));
    // A cached backend's basis is released before the new one is allocated: count it as free.
    if (ctx->backend_cache) free_bytes += static_cast<std::size_t>(ctx->backend_cache->basis_columns()) * eps->nloc * sizeof(PetscScalar);
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

// With `ip` (a standard problem whose BV has an inner-product matrix: the operator is to be self-adjoint in
// that inner product) the probe is on ip A, which is Hermitian exactly when A is self-adjoint in it.
PetscErrorCode EPSCUDALanczosCheckSymmetry(EPS eps, Mat ip)
{
  Mat         A;
  Vec         x, y, Ax, Ay, t = nullptr;
  PetscRandom rnd;
  PetscScalar yAx, xAy;
  PetscReal   nx, ny, nAx, nAy;

  PetscFunctionBegin;
  PetscCall(STGetMatrix(eps->st, 0, &A));
  PetscCall(MatCreateVecs(A, &x, &Ax));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecDuplicate(Ax, &Ay));
  if (ip) PetscCall(VecDuplicate(Ax, &t));
  const auto apply = [&](Vec in, Vec out) -> PetscErrorCode { // out = A in, or ip A in
    PetscFunctionBegin;
    PetscCall(MatMult(A, in, ip ? t : out));
    if (ip) PetscCall(MatMult(ip, t, out));
    PetscFunctionReturn(0);
  };
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)eps), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 0x5eed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(y, rnd));
  PetscCall(VecNormalize(x, nullptr));
  PetscCall(VecNormalize(y, nullptr));
  PetscCall(apply(x, Ax));
  PetscCall(apply(y, Ay));
  { // The products scaled by a power of two (exact) to a largest entry in [1/2, 1), so that the dot products
    // and norms below neither overflow nor underflow whatever ||A|| is: a tiny A gets x and y scaled up
    // before the products (no subnormal products), a huge one the products scaled down.
    PetscReal m1, m2;
    PetscCall(VecNorm(Ax, NORM_INFINITY, &m1));
    PetscCall(VecNorm(Ay, NORM_INFINITY, &m2));
    const PetscReal m = PetscMax(m1, m2);
    if (m > 0 && !PetscIsInfOrNanReal(m)) {
      const int e = PetscMax(-1000, PetscMin(1000, -(std::ilogb(m) + 1)));
      if (e > 0) {
        PetscCall(VecScale(x, std::ldexp(1.0, e)));
        PetscCall(VecScale(y, std::ldexp(1.0, e)));
        PetscCall(apply(x, Ax));
        PetscCall(apply(y, Ay));
        PetscCall(VecScale(x, std::ldexp(1.0, -e)));
        PetscCall(VecScale(y, std::ldexp(1.0, -e)));
      } else if (e < 0) {
        PetscCall(VecScale(Ax, std::ldexp(1.0, e)));
        PetscCall(VecScale(Ay, std::ldexp(1.0, e)));
      }
    }
  }
  PetscCall(VecDot(Ax, y, &yAx));
  PetscCall(VecDot(Ay, x, &xAy));
  PetscCall(VecNorm(x, NORM_2, &nx));
  PetscCall(VecNorm(y, NORM_2, &ny));
  PetscCall(VecNorm(Ax, NORM_2, &nAx));
  PetscCall(VecNorm(Ay, NORM_2, &nAy));
  // Rounding in two products and two dot products of length n is at most ~ n eps (|y||Ax| + |x||Ay|);
  // in practice sqrt(n) eps. A nonsymmetric matrix differs at O(1) relative to the same scale. Complex:
  // VecDot(Ax, y) = y^H A x, which for a Hermitian A is conj(x^H A y) (PetscConj is the identity on reals).
  const PetscReal scale = ny * nAx + nx * nAy;
  const PetscReal bound = 64 * PETSC_MACHINE_EPSILON * PetscSqrtReal((PetscReal)eps->n) * scale;
  const PetscReal diff  = PetscAbsScalar(yAx - PetscConj(xAy));
  PetscCall(PetscInfo(eps, "symmetry probe: |y'Ax - x'Ay| = %g, rounding bound %g\n", (double)diff, (double)bound));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&Ax));
  PetscCall(VecDestroy(&Ay));
  PetscCall(VecDestroy(&t));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCheck(!ip || (!(diff > bound) && !PetscIsNanReal(diff)), PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_WRONG,
             "The operator is not self-adjoint in the inner product of the BV's matrix B (BVSetMatrix): |y'BAx - x'BAy| = %g for "
             "random x, y, above the rounding level %g; EPSCUDALANCZOS needs a Hermitian B A",
             (double)diff, (double)bound);
  PetscCheck(!(diff > bound) && !PetscIsNanReal(diff), PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_WRONG,
             "The matrix is not symmetric: |y'Ax - x'Ay| = %g for random x, y, above the rounding level %g; EPSCUDALANCZOS solves "
             "symmetric (Hermitian) problems only",
             (double)diff, (double)bound);
  PetscFunctionReturn(0);
}
