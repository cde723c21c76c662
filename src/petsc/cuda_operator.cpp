/*
   The matrix on the device for EPSCUDALANCZOS: uploading a host Mat once (dense or AIJ, one process or
   row-distributed through cuda_distributed.cpp) and keeping the copy while the Mat's object state is
   unchanged, or using a CUDA PETSc's device Mat (MATSEQAIJCUSPARSE, MATSEQDENSECUDA, MATMPIAIJCUSPARSE,
   MATMPIDENSECUDA) in place, ordered after PETSc's stream (petsc_streams.cpp); the same for the B of a
   generalized problem. Which backend a solve gets from it is solve_backend.cpp's.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#include <algorithm>
#include <climits>

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#include "cuda/upload.hpp"
#if defined(PETSC_HAVE_CUDA)
#include <petscdevice.h>
#endif
#endif

#if defined(CUDALANCZOS_HAVE_CUDA)
namespace {

using namespace cudalanczos; // PETSc's arrays (host and device) go to the backend as they are: see eps_cudalanczos_impl.hpp

// Makes A's device copy this EPS's operator when it is current for these kernels and `device` (this
// EPS's backend, built on it, stays too). Otherwise (stale or none: A let go of a stale one) the EPS lets
// go of its operator and backend as well, so that the old copy is freed before a new one is made, not
// after it: the peak is one copy, not two. Collective.
PetscErrorCode TakeCurrentCopy(EPS eps, Mat A, int device, PetscBool *current)
{
  EPS_CUDALANCZOS  *ctx = (EPS_CUDALANCZOS *)eps->data;
  DeviceOperatorPtr copy;

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
                                  DeviceOperatorPtr *op, std::size_t *uploaded)
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
    PetscCall(MatCUDALanczosUpload(M, isdense, EPSCUDALanczosKernelFlavor(ctx->opt.kernels), device, &made));
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
/// Where a device Mat's data is: PETSc's own device arrays (device pointers), and the device they are on.
struct DeviceMatData {
  cuda::DenseView             dense; // MATSEQDENSECUDA
  EPSCUDALanczosDeviceCsrView csr;   // MATSEQAIJCUSPARSE
  int                         device = -1; // -1: not device memory (then not used in place)
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
    d->csr = EPSCUDALanczosDeviceCsrView{m, n, (index_t)info.nz_used, i, j, a};
    where  = i;
    PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(A, &a));
    PetscCall(MatSeqAIJCUSPARSERestoreIJ(A, PETSC_FALSE, &i, &j));
  }
  PetscCallCXX(d->device = cuda::device_of(where));
  PetscFunctionReturn(0);
}

// The device operator of a MATSEQDENSECUDA / MATSEQAIJCUSPARSE on its own device arrays `d` (nothing copied;
// for the default kernels, a uniform pattern split off them on the device), on the device they are on,
// composed on M for the next solve. Its set-up (the cuSPARSE analysis or the split reads the matrix, on
// the legacy default stream) is ordered after PETSc's writes to M by an event.
PetscErrorCode MakeInPlaceOperator(EPS eps, Mat M, PetscBool isdense, const DeviceMatData &d, DeviceOperatorPtr *op)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  std::shared_ptr<cuda::DeviceOperator> made;
  const char *origin = "PETSc's device array";

  PetscFunctionBegin;
  const cuda::KernelFlavor flavor = EPSCUDALanczosKernelFlavor(ctx->opt.kernels);
  PetscCall(EPSCUDALanczosOrderAfterPETSc(nullptr, d.device));
  if (isdense) PetscCallCXX(made = cuda::make_dense_operator_on_device(d.dense, flavor, d.device, origin));
  else {
    // The default kernels take a uniform pattern's value-less product, as for an uploaded host Mat; its
    // arrays are split off on the device and kept with M like a copy.
    if (flavor == cuda::KernelFlavor::Default) PetscCallCXX(made = cuda::make_pattern_operator_on_device(d.csr, d.device, origin));
    if (!made) PetscCallCXX(made = cuda::make_csr_operator_on_device(d.csr, flavor, d.device, origin));
  }
  PetscCall(MatCUDALanczosSetDeviceCopy(M, (int)ctx->opt.kernels, d.device, made, made->device_bytes(), made->in_place() ? PETSC_TRUE : PETSC_FALSE));
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
  const DeviceOperatorPtr &made = ctx->cache.device_op;
  if (!made->in_place()) ctx->last.split_bytes = made->device_bytes(); // a pattern split off A's arrays
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

} // namespace

cudalanczos::cuda::KernelFlavor EPSCUDALanczosKernelFlavor(EPSCUDALanczosKernels k)
{
  switch (k) {
  case EPS_CUDALANCZOS_KERNELS_CUSTOM: return cudalanczos::cuda::KernelFlavor::Custom;
  case EPS_CUDALANCZOS_KERNELS_VENDOR: return cudalanczos::cuda::KernelFlavor::Vendor;
  default: return cudalanczos::cuda::KernelFlavor::Default;
  }
}


// Makes ctx->cache.device_op the operator of A on `device`: A's device copy when it has a current one (no
// byte moves), a CUDA MatShell's own operator, a CUDA PETSc's device Mat used in place (on the device its
// data is on), or a new upload (dense or AIJ on one process; MPIAIJ or MPIDENSE row-distributed, one
// device per rank) composed on A for the next EPS. Leaves it null when A cannot live on the device
// (other types, other types on several processes). Collective.
PetscErrorCode EPSCUDALanczosUploadOperator(EPS eps, Mat A, int device)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  UploadableType   type;
  PetscMPIInt      size;

  PetscFunctionBegin;
  ctx->last.uploaded_bytes = 0;
  ctx->last.split_bytes    = 0;
  // A CUDA MatShell (cuda_matshell.cpp) already holds its operator on the device.
  PetscErrorCode (*getop)(Mat, DeviceOperatorPtr *) = nullptr;
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
    EPSCUDALanczosHostCsr csr;
    PetscCall(EPSCUDALanczosHostCsrView(nrows, n, ia, ja, a, &csr));
    PetscCallCXX(*op = cudalanczos::cuda::make_csr_operator(csr.view, flavor, device));
    PetscCall(MatSeqAIJRestoreArrayRead(A, &a));
    PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  }
  PetscFunctionReturn(0);
}
#endif

#if defined(CUDALANCZOS_HAVE_CUDA)
PetscErrorCode EPSCUDALanczosHostCsrView(PetscInt rows, PetscInt cols, const PetscInt *ia, const PetscInt *ja, const PetscScalar *a,
                                         EPSCUDALanczosHostCsr *csr)
{
  PetscFunctionBegin;
  if constexpr (sizeof(PetscInt) == sizeof(int)) {
    csr->view = cudalanczos::cuda::CsrView{rows, cols, ia[rows], reinterpret_cast<const int *>(ia), reinterpret_cast<const int *>(ja), a};
  } else {
    const PetscInt nnz = ia[rows], most = INT_MAX;
    PetscCheck(nnz <= most && rows < most && cols <= most, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "This process's part of the matrix has %" PetscInt_FMT " rows, %" PetscInt_FMT " columns and %" PetscInt_FMT
               " nonzeros; EPSCUDALANCZOS's device kernels index at most %" PetscInt_FMT " of each on one process: distribute the "
               "matrix over more MPI processes",
               rows, cols, nnz, most);
    // One array: the row pointers, then the column indices.
    PetscCallCXX(csr->storage.resize(static_cast<std::size_t>(rows) + 1 + static_cast<std::size_t>(nnz)));
    std::copy(ia, ia + rows + 1, csr->storage.begin());
    std::copy(ja, ja + nnz, csr->storage.begin() + rows + 1);
    csr->view = cudalanczos::cuda::CsrView{rows, cols, nnz, csr->storage.data(), csr->storage.data() + rows + 1, a};
  }
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosDeviceB(EPS eps, Mat B, int device, DeviceOperatorPtr *op, std::size_t *uploaded)
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
