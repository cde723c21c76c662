/*
   The BV's columns to and from a solve's backend: the deflation and start vectors in, the eigenvectors
   out. Columns in device memory (VECCUDA, -bv_type svec with -vec_type cuda on a CUDA PETSc) go to and
   from the CUDA backend's basis device to device, ordered with PETSc's stream by events (see
   eps_cudalanczos_impl.hpp); host columns (and the host backend) go through the host.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

EPSCUDALanczosColumns::EPSCUDALanczosColumns(EPS eps, bool on_device, int device) : eps_(eps), on_device_(on_device), device_(device) {}

#if defined(CUDALANCZOS_PETSC_STREAMS)
// A column on the backend's own device goes device to device (the events are made there); one on another
// device (a backend placed by -eps_cudalanczos_device away from PETSc's) through the host.
bool EPSCUDALanczosColumns::OnOurDevice(PetscMemType mtype, const void *x) const
{
  int at = -1;
  if (PetscMemTypeDevice(mtype)) at = cudalanczos::cuda::device_of(x);
  return at >= 0 && at == device_;
}

// PETSc's stream, taken when the first device column is met.
PetscErrorCode EPSCUDALanczosColumns::TakeStream()
{
  PetscFunctionBegin;
  if (!have_stream_) PetscCall(EPSCUDALanczosPETScStream(&stream_));
  have_stream_ = true;
  PetscFunctionReturn(0);
}

// Column `col` device to device where it lives on our device and the backend takes it (*done).
PetscErrorCode EPSCUDALanczosColumns::ReadDevice(Vec v, const ToDevice &to_device, bool *done)
{
  const PetscScalar *x;
  PetscMemType       mtype;
  bool               ours = false;

  PetscFunctionBegin;
  *done = false;
  PetscCall(VecGetArrayReadAndMemType(v, &x, &mtype));
  PetscCallCXX(ours = OnOurDevice(mtype, x));
  if (ours) {
    PetscCall(TakeStream());
    PetscCallCXX(*done = to_device(x, stream_));
  }
  PetscCall(VecRestoreArrayReadAndMemType(v, &x));
  if (*done) device_to_device_ = true;
  PetscFunctionReturn(0);
}

// Every entry of the column is written: the Write accessors (PETSc copies nothing to the device first).
// A VECCUDA column takes the device array even where its last values are on the host: the ...AndMemType
// accessor hands out the host array of a column PETSc last wrote there (a host Mat's BV, filled by
// EPSSetUp on the host), and every entry is overwritten here anyway. *done: the column is written (device
// to device, or a host column from the backend); not done: device memory on another device, or a
// wrapper backend without device columns, to go through the host.
PetscErrorCode EPSCUDALanczosColumns::WriteDevice(cudalanczos::Backend &solver, PetscInt j, Vec v, bool *done)
{
  PetscScalar *x;
  PetscMemType mtype;
  bool         ours = false;
  PetscBool    cudavec;

  PetscFunctionBegin;
  *done = false;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &cudavec, VECSEQCUDA, VECMPICUDA, ""));
  if (cudavec) {
    PetscCall(VecCUDAGetArrayWrite(v, &x));
    mtype = PETSC_MEMTYPE_CUDA;
  } else PetscCall(VecGetArrayWriteAndMemType(v, &x, &mtype));
  PetscCallCXX(ours = OnOurDevice(mtype, x));
  if (ours) {
    PetscCall(TakeStream());
    PetscCallCXX(*done = solver.get_column_device((int)j, x, stream_));
  } else if (!PetscMemTypeDevice(mtype)) PetscCallCXX((solver.get_column((int)j, x), *done = true));
  if (cudavec) PetscCall(VecCUDARestoreArrayWrite(v, &x));
  else PetscCall(VecRestoreArrayWriteAndMemType(v, &x));
  if (*done && ours) device_to_device_ = true;
  PetscFunctionReturn(0);
}
#endif

PetscErrorCode EPSCUDALanczosColumns::Read(PetscInt col, const ToDevice &to_device, const ToHost &to_host)
{
  const PetscScalar *x;
  Vec                v;
  bool               done = false;

  PetscFunctionBegin;
  PetscCall(BVGetColumn(eps_->V, col, &v));
#if defined(CUDALANCZOS_PETSC_STREAMS)
  if (on_device_) PetscCall(ReadDevice(v, to_device, &done));
#else
  (void)to_device;
#endif
  if (!done) { // a host column, or a wrapper backend without device columns: through the host
    PetscCall(VecGetArrayRead(v, &x));
    PetscCallCXX(to_host(x));
    PetscCall(VecRestoreArrayRead(v, &x));
  }
  PetscCall(BVRestoreColumn(eps_->V, col, &v));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosColumns::Write(cudalanczos::Backend &solver, PetscInt j)
{
  Vec          v;
  PetscScalar *x;
  bool         done = false;

  PetscFunctionBegin;
  PetscCall(BVGetColumn(eps_->V, j, &v));
#if defined(CUDALANCZOS_PETSC_STREAMS)
  if (on_device_) PetscCall(WriteDevice(solver, j, v, &done));
#endif
  if (!done) {
    PetscCall(VecGetArray(v, &x));
    PetscCallCXX(solver.get_column((int)j, x));
    PetscCall(VecRestoreArray(v, &x));
  }
  PetscCall(BVRestoreColumn(eps_->V, j, &v));
  PetscFunctionReturn(0);
}
