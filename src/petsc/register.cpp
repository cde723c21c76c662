/*
   Registration of EPSCUDALANCZOS: PetscDLLibraryRegister_slepccudalanczos is what -dll_append looks up
   (library name without "lib" and ".so"), PetscDLLibraryRegister_slepccudalanczos_complex for the
   complex build's libslepccudalanczos_complex.so; EPSCUDALanczosRegister is for programs that link us
   directly.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/upload.hpp"
#endif

extern "C" PetscErrorCode EPSCreate_CUDALanczos(EPS);

static PetscBool registered = PETSC_FALSE;

#if defined(CUDALANCZOS_HAVE_CUDA)
// An upload's phases as -log_view events. Called inside the CUDA layer, which knows no PETSc: a logging
// error cannot travel back through it and is dropped (the events only measure).
static void LogUploadPhase(cudalanczos::cuda::UploadPhase phase, bool begin)
{
  PetscLogEvent event = 0;
  switch (phase) {
  case cudalanczos::cuda::UploadPhase::Prepare: event = EPS_CUDALanczos_Prepare; break;
  case cudalanczos::cuda::UploadPhase::Context: event = EPS_CUDALanczos_Context; break;
  case cudalanczos::cuda::UploadPhase::Transfer: event = EPS_CUDALanczos_Transfer; break;
  case cudalanczos::cuda::UploadPhase::Analysis: event = EPS_CUDALanczos_Analysis; break;
  }
  (void)(begin ? PetscLogEventBegin(event, 0, 0, 0, 0) : PetscLogEventEnd(event, 0, 0, 0, 0));
}
#endif

// PetscFinalize: the registration ends, and so does what the process made once for every solve.
static PetscErrorCode EPSCUDALanczosFinalizePackage(void)
{
  PetscFunctionBegin;
  registered = PETSC_FALSE;
#if defined(CUDALANCZOS_HAVE_CUDA)
  EPSCUDALanczosReleaseBackendPool();
  cudalanczos::cuda::release_process_state();
#endif
  PetscFunctionReturn(0);
}

/*@C
   EPSCUDALanczosRegister - Registers the EPS type "cudalanczos" and its log events. Called by
   PetscDLLibraryRegister_slepccudalanczos() when the library is loaded with -dll_append; call it yourself
   after SlepcInitialize() when your program links libslepccudalanczos directly. Calling it twice is harmless.

   Not Collective

   Level: beginner

.seealso: EPSSetType(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosRegister(void)
{
  PetscFunctionBegin;
  if (registered) PetscFunctionReturn(0);
  registered = PETSC_TRUE;
  PetscCall(EPSRegister(EPSCUDALANCZOS, EPSCreate_CUDALanczos));
  PetscCall(PetscLogEventRegister("CUDALancSetUp", EPS_CLASSID, &EPS_CUDALanczos_Setup));
  PetscCall(PetscLogEventRegister("CUDALancUpload", EPS_CLASSID, &EPS_CUDALanczos_Upload));
  PetscCall(PetscLogEventRegister("CUDALancIterate", EPS_CLASSID, &EPS_CUDALanczos_Iterate));
  PetscCall(PetscLogEventRegister("CUDALancVectors", EPS_CLASSID, &EPS_CUDALanczos_Vectors));
  PetscCall(PetscLogEventRegister("CUDALancContext", EPS_CLASSID, &EPS_CUDALanczos_Context));
  PetscCall(PetscLogEventRegister("CUDALancPrepare", EPS_CLASSID, &EPS_CUDALanczos_Prepare));
  PetscCall(PetscLogEventRegister("CUDALancTransfer", EPS_CLASSID, &EPS_CUDALanczos_Transfer));
  PetscCall(PetscLogEventRegister("CUDALancAnalysis", EPS_CLASSID, &EPS_CUDALanczos_Analysis));
#if defined(CUDALANCZOS_HAVE_CUDA)
  cudalanczos::cuda::set_upload_phase_hook(LogUploadPhase);
  cudalanczos::cuda::initialize_driver_async();
#endif
  PetscCall(PetscRegisterFinalize(EPSCUDALanczosFinalizePackage));
  PetscFunctionReturn(0);
}

/*
   PetscDLLibraryRegister_slepccudalanczos - entry point called by PetscInitialize() for a library given
   with -dll_append / -dll_prepend (also through PETSC_OPTIONS or .petscrc). The name follows the file
   name, which CMake makes libslepccudalanczos_complex.so against a PETSc with complex scalars.
*/
#if defined(PETSC_USE_COMPLEX)
PetscErrorCode PetscDLLibraryRegister_slepccudalanczos_complex(void)
#else
PetscErrorCode PetscDLLibraryRegister_slepccudalanczos(void)
#endif
{
  PetscFunctionBegin;
  PetscCall(EPSCUDALanczosRegister());
  PetscFunctionReturn(0);
}
