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

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

extern "C" PetscErrorCode EPSCreate_CUDALanczos(EPS);

static PetscBool registered = PETSC_FALSE;
// -cudalanczos_warm_up_at_load, read when the library loads.
static PetscBool warm_up_early = PETSC_TRUE;

#if defined(CUDALANCZOS_HAVE_CUDA)
// This process's rank on its node, as the launcher tells it (Open MPI, MPICH/Hydra, MVAPICH, PMI, Slurm),
// 0 for a single process, else -1 (unknown: no device is warmed before the first set-up). Not collective:
// the plugin loads inside PetscInitialize, where no collective call is expected of it.
static int NodeLocalRank(void)
{
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *value = std::getenv(name)) return std::atoi(value);
  PetscMPIInt size = 0;
  if (MPI_Comm_size(PETSC_COMM_WORLD, &size) != MPI_SUCCESS) return -1;
  return size == 1 ? 0 : -1;
}

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

// Whether the options database selects the type: an option named eps_type under any prefix (-eps_type,
// -st_ksp_..., -my_eps_type) whose value is cudalanczos, from the command line, PETSC_OPTIONS or .petscrc,
// all of which PetscInitialize has read when it loads the library.
static PetscErrorCode OptionsSelectCUDALanczos(PetscBool *selected)
{
  char *all = nullptr;

  PetscFunctionBegin;
  *selected = PETSC_FALSE;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  {
    std::istringstream tokens(all ? all : "");
    std::string        previous, token;
    const std::string  suffix = "eps_type";
    while (tokens >> token) {
      const bool named = previous.size() > suffix.size() && previous[0] == '-' &&
                         previous.compare(previous.size() - suffix.size(), suffix.size(), suffix) == 0;
      if (named && token == EPSCUDALANCZOS) *selected = PETSC_TRUE;
      previous = token;
    }
  }
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}
#endif

PetscErrorCode EPSCUDALanczosStartWarmUp(const char *when)
{
  PetscFunctionBegin;
#if defined(CUDALANCZOS_HAVE_CUDA)
  if (warm_up_early && cudalanczos::cuda::warm_up_at_load(NodeLocalRank()))
    PetscCall(PetscInfo(NULL, "cudalanczos: warm-up started %s (the CUDA driver and libraries, the default device's context and upload staging)\n", when));
#else
  (void)when;
#endif
  PetscFunctionReturn(0);
}

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

// Registration, once per process. `linked`: the program called EPSCUDALanczosRegister itself, having
// linked the library to use it: its warm-up starts now, overlapping the program's own work before the
// solve (a program that sets the type in code creates the EPS just before it). A library loaded by
// -dll_append, perhaps from ~/.petscrc into a program that never uses it, warms up only when the options
// select the type, else at the first EPSCreate_CUDALanczos.
static PetscErrorCode RegisterPackage(PetscBool linked)
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
  {
    PetscBool selected;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-cudalanczos_warm_up_at_load", &warm_up_early, NULL));
    PetscCall(OptionsSelectCUDALanczos(&selected));
    if (selected) PetscCall(EPSCUDALanczosStartWarmUp("at load: the options select -eps_type cudalanczos"));
    else if (linked) PetscCall(EPSCUDALanczosStartWarmUp("at registration: the program called EPSCUDALanczosRegister"));
    else if (warm_up_early) PetscCall(PetscInfo(NULL, "cudalanczos: no warm-up at load: the options do not select the type\n"));
  }
#else
  (void)linked;
#endif
  PetscCall(PetscRegisterFinalize(EPSCUDALanczosFinalizePackage));
  PetscFunctionReturn(0);
}

/*@C
   EPSCUDALanczosRegister - Registers the EPS type "cudalanczos" and its log events. Call it after
   SlepcInitialize() when your program links libslepccudalanczos directly; a library loaded with
   -dll_append registers itself. Calling it twice is harmless.

   Not Collective

   Notes:
   A program that calls it is taken to use the type: the CUDA driver, the device's context and the
   cuBLAS, cuSPARSE and cuSOLVER start warming up on a helper thread now (unless -cudalanczos_warm_up_at_load 0).

   Level: beginner

.seealso: EPSSetType(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosRegister(void)
{
  PetscFunctionBegin;
  PetscCall(RegisterPackage(PETSC_TRUE));
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
  PetscCall(RegisterPackage(PETSC_FALSE));
  PetscFunctionReturn(0);
}
