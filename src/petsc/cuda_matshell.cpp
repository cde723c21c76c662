/*
   CUDA MatShells: a dense or AIJ matrix copied to the GPU (MatCreateCUDALanczos), or a user's device
   multiply (MatCreateCUDALanczosShell), as a MATSHELL. EPSCUDALANCZOS finds the device operator through
   the composed function "MatCUDALanczosGetOperator_C" and applies it without leaving the device;
   anybody else's MatMult copies the host Vecs in and out.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <petsc/private/petscimpl.h>

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/host_applier.hpp"
#endif

#include <memory>

#if defined(CUDALANCZOS_HAVE_CUDA)
namespace {

using namespace cudalanczos;

struct ShellContext {
  std::unique_ptr<cuda::HostApplier> applier;
};

PetscErrorCode MatMult_CUDALanczosShell(Mat S, Vec x, Vec y)
{
  ShellContext      *ctx;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &ctx));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCallCXX(ctx->applier->apply(xa, ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscFunctionReturn(0);
}

PetscErrorCode MatDestroy_CUDALanczosShell(Mat S)
{
  ShellContext *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &ctx));
  PetscCallCXX(delete ctx);
  PetscCall(PetscObjectComposeFunction((PetscObject)S, "MatCUDALanczosGetOperator_C", nullptr));
  PetscFunctionReturn(0);
}

PetscErrorCode MatCUDALanczosGetOperator_Shell(Mat S, DeviceOperatorPtr *op)
{
  ShellContext *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(S, &ctx));
  *op = ctx->applier->op();
  PetscFunctionReturn(0);
}

PetscErrorCode WrapOperator(MPI_Comm comm, std::shared_ptr<const cuda::DeviceOperator> op, Mat *S)
{
  ShellContext *ctx = nullptr;
  PetscInt      m = (PetscInt)op->rows(), n = (PetscInt)op->cols();

  PetscFunctionBegin;
  PetscCallCXX(ctx = new ShellContext());
  try {
    ctx->applier = std::make_unique<cuda::HostApplier>(std::move(op));
  } catch (const std::exception &e) {
    delete ctx;
    SETERRQ(comm, PETSC_ERR_LIB, "%s", e.what());
  }
  PetscCall(MatCreateShell(comm, m, n, m, n, ctx, S));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT, (void (*)(void))MatMult_CUDALanczosShell));
  PetscCall(MatShellSetOperation(*S, MATOP_MULT_TRANSPOSE, (void (*)(void))MatMult_CUDALanczosShell)); // symmetric by contract
  PetscCall(MatShellSetOperation(*S, MATOP_DESTROY, (void (*)(void))MatDestroy_CUDALanczosShell));
  PetscCall(PetscObjectComposeFunction((PetscObject)*S, "MatCUDALanczosGetOperator_C", MatCUDALanczosGetOperator_Shell));
  PetscFunctionReturn(0);
}

PetscErrorCode CheckOneProcessWithDevice(MPI_Comm comm, const char *what)
{
  PetscMPIInt size;
  int         count = 0;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(size == 1, comm, PETSC_ERR_SUP, "%s: only single-process matrices are supported so far (got %d processes)", what, (int)size);
  PetscCallCXX(count = cuda::device_count());
  PetscCheck(count > 0, comm, PETSC_ERR_SUP_SYS, "%s: no CUDA device is usable by this process", what);
  PetscFunctionReturn(0);
}

} // namespace
#endif

/*@
   MatCreateCUDALanczos - Copies a dense or AIJ matrix to the GPU and wraps it as a MATSHELL.

   Collective on A

   Input Parameter:
.  A - a MATSEQDENSE or MATSEQAIJ matrix (a single-process MATDENSE/MATAIJ), square and symmetric

   Output Parameter:
.  S - the shell; its data lives on the current CUDA device

   Notes:
   MatMult(S, x, y) with ordinary host Vecs copies x to the device and y back. EPSCUDALANCZOS recognizes S
   and applies it on the device with no copies, and keeps using it across EPSSolve() calls. Later changes
   to A do not reach S. The kernels are the default ones (see EPSCUDALanczosSetKernels()).

   Level: intermediate

.seealso: MatCreateCUDALanczosShell(), EPSCUDALANCZOS
@*/
PetscErrorCode MatCreateCUDALanczos(Mat A, Mat *S)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(S, 2);
#if defined(CUDALANCZOS_HAVE_CUDA)
  MPI_Comm  comm = PetscObjectComm((PetscObject)A);
  PetscBool isdense, isaij;
  PetscInt  m, n;
  std::shared_ptr<const cudalanczos::cuda::DeviceOperator> op;

  PetscCall(CheckOneProcessWithDevice(comm, "MatCreateCUDALanczos"));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQDENSE, &isdense));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &isaij));
  PetscCheck(isdense || isaij, comm, PETSC_ERR_SUP, "MatCreateCUDALanczos: matrix type %s is not supported; use MATSEQDENSE or MATSEQAIJ",
             ((PetscObject)A)->type_name);
  PetscCall(MatGetSize(A, &m, &n));
  PetscCheck(m == n, comm, PETSC_ERR_ARG_SIZ, "MatCreateCUDALanczos: the matrix must be square (%" PetscInt_FMT " x %" PetscInt_FMT ")", m, n);
  PetscCall(MatCUDALanczosUpload(A, isdense, cudalanczos::cuda::KernelFlavor::Default, -1, &op));
  PetscCall(WrapOperator(comm, std::move(op), S));
  PetscFunctionReturn(0);
#else
  SETERRQ(PetscObjectComm((PetscObject)A), PETSC_ERR_SUP_SYS, "MatCreateCUDALanczos: libslepccudalanczos was built without CUDA");
#endif
}

/*@C
   MatCreateCUDALanczosShell - Creates a MATSHELL whose multiply is the user's device function.

   Collective

   Input Parameters:
+  comm - a single-process communicator
.  n    - the matrix size (square)
.  N    - must equal n (kept for the multi-process layout to come)
.  mult - the device multiply: mult(ctx, x, y, stream) computes y = A x with x, y device pointers, queued on
          `stream` (a cudaStream_t); it returns 0 or a PETSc error code
-  ctx  - passed to mult

   Output Parameter:
.  S - the shell

   Notes:
   EPSCUDALANCZOS calls mult with pointers into its device basis; MatMult(S, x, y) with host Vecs copies
   in and out around it. The operator must be symmetric.

   Level: intermediate

.seealso: MatCreateCUDALanczos(), EPSCUDALANCZOS
@*/
PetscErrorCode MatCreateCUDALanczosShell(MPI_Comm comm, PetscInt n, PetscInt N, MatCUDALanczosDeviceMult mult, void *ctx, Mat *S)
{
  PetscFunctionBegin;
  PetscAssertPointer(S, 6);
#if defined(CUDALANCZOS_HAVE_CUDA)
  PetscCall(CheckOneProcessWithDevice(comm, "MatCreateCUDALanczosShell"));
  PetscCheck(n == N && n >= 0, comm, PETSC_ERR_ARG_SIZ, "MatCreateCUDALanczosShell: n (%" PetscInt_FMT ") must equal N (%" PetscInt_FMT ") on one process", n, N);
  PetscCheck(mult, comm, PETSC_ERR_ARG_NULL, "MatCreateCUDALanczosShell: mult must not be NULL");
  cudalanczos::cuda::DeviceApply apply = [mult, ctx](const PetscScalar *x, PetscScalar *y, void *stream) {
    if (mult(ctx, x, y, stream)) throw cudalanczos::Error("the user's device multiply of MatCreateCUDALanczosShell returned an error");
  };
  std::shared_ptr<const cudalanczos::cuda::DeviceOperator> op;
  PetscCallCXX(op = cudalanczos::cuda::make_callback_operator(n, n, apply, "user device multiply (MatCreateCUDALanczosShell)", -1));
  PetscCall(WrapOperator(comm, std::move(op), S));
  PetscFunctionReturn(0);
#else
  SETERRQ(comm, PETSC_ERR_SUP_SYS, "MatCreateCUDALanczosShell: libslepccudalanczos was built without CUDA");
#endif
}
