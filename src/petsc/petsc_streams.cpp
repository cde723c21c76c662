/*
   Ordering the solver's stream with PETSc's own (a CUDA PETSc): see eps_cudalanczos_impl.hpp for why the
   two are ordered by events rather than shared.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#if defined(PETSC_HAVE_CUDA)
#include <petscdevice.h>
#endif

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
#endif
