/*
   cudalanczos: a GPU Lanczos eigensolver for SLEPc, the EPS type "cudalanczos".

   Unmodified programs load it at run time:
       ./app -dll_append /path/to/libslepccudalanczos.so -eps_type cudalanczos
   Programs that link the library directly call EPSCUDALanczosRegister() after SlepcInitialize().
*/
#ifndef SLEPCCUDALANCZOS_H
#define SLEPCCUDALANCZOS_H

#include <slepceps.h>

#define EPSCUDALANCZOS "cudalanczos"

/*E
   EPSCUDALanczosVariant - the Lanczos algorithm run by EPSCUDALANCZOS

+  EPS_CUDALANCZOS_THICK_RESTART - thick-restart Lanczos with locking (default): any nev, any which
-  EPS_CUDALANCZOS_THESIS - the thesis algorithm: one eigenpair, no restart, no reorthogonalization,
                            stop on the explicit relative residual

   Level: intermediate
E*/
typedef enum { EPS_CUDALANCZOS_THICK_RESTART, EPS_CUDALANCZOS_THESIS } EPSCUDALanczosVariant;
SLEPC_EXTERN const char *const EPSCUDALanczosVariants[];

/*E
   EPSCUDALanczosReorthog - reorthogonalization of the Lanczos vectors

+  EPS_CUDALANCZOS_REORTHOG_FULL - classical Gram-Schmidt against the whole basis, twice when needed (DGKS)
.  EPS_CUDALANCZOS_REORTHOG_NONE - three-term recurrence only
-  EPS_CUDALANCZOS_REORTHOG_PARTIAL - semi-orthogonality: against the kept vectors every step, against the
                                     whole basis only when Simon's omega recurrence says so

   Level: intermediate
E*/
typedef enum { EPS_CUDALANCZOS_REORTHOG_FULL, EPS_CUDALANCZOS_REORTHOG_NONE, EPS_CUDALANCZOS_REORTHOG_PARTIAL } EPSCUDALanczosReorthog;
SLEPC_EXTERN const char *const EPSCUDALanczosReorthogs[];

/*E
   EPSCUDALanczosBackend - where the Lanczos vectors live

+  EPS_CUDALANCZOS_BACKEND_AUTO - the GPU when one is present, else the host
.  EPS_CUDALANCZOS_BACKEND_HOST - the host reference backend (any Mat, any ST)
-  EPS_CUDALANCZOS_BACKEND_CUDA - the GPU; an error when there is none

   Level: intermediate
E*/
typedef enum { EPS_CUDALANCZOS_BACKEND_AUTO, EPS_CUDALANCZOS_BACKEND_HOST, EPS_CUDALANCZOS_BACKEND_CUDA } EPSCUDALanczosBackend;
SLEPC_EXTERN const char *const EPSCUDALanczosBackends[];

/*E
   EPSCUDALanczosKernels - which GPU kernels run the matrix-vector product and the vector operations

+  EPS_CUDALANCZOS_KERNELS_DEFAULT - per matrix type, whichever measured faster
.  EPS_CUDALANCZOS_KERNELS_CUSTOM - the thesis kernels (tiled shared-memory gemv, CSR SpMV, shuffle reductions)
-  EPS_CUDALANCZOS_KERNELS_VENDOR - cuBLAS and cuSPARSE

   Level: intermediate
E*/
typedef enum { EPS_CUDALANCZOS_KERNELS_DEFAULT, EPS_CUDALANCZOS_KERNELS_CUSTOM, EPS_CUDALANCZOS_KERNELS_VENDOR } EPSCUDALanczosKernels;
SLEPC_EXTERN const char *const EPSCUDALanczosKernelsTypes[];

SLEPC_EXTERN PetscErrorCode EPSCUDALanczosRegister(void);
/* What -dll_append calls, named after the library file: libslepccudalanczos.so for a PETSc with real
   scalars, libslepccudalanczos_complex.so for one with complex scalars. */
#if defined(PETSC_USE_COMPLEX)
SLEPC_EXTERN PetscErrorCode PetscDLLibraryRegister_slepccudalanczos_complex(void);
#else
SLEPC_EXTERN PetscErrorCode PetscDLLibraryRegister_slepccudalanczos(void);
#endif

SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetVariant(EPS, EPSCUDALanczosVariant);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetVariant(EPS, EPSCUDALanczosVariant *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetReorthog(EPS, EPSCUDALanczosReorthog);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetReorthog(EPS, EPSCUDALanczosReorthog *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetBackend(EPS, EPSCUDALanczosBackend);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetBackend(EPS, EPSCUDALanczosBackend *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetKernels(EPS, EPSCUDALanczosKernels);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetKernels(EPS, EPSCUDALanczosKernels *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetDevice(EPS, PetscInt);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetDevice(EPS, PetscInt *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetCheckSymmetry(EPS, PetscBool);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetCheckSymmetry(EPS, PetscBool *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetVerify(EPS, PetscBool);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetVerify(EPS, PetscBool *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetNcvMax(EPS, PetscInt);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetNcvMax(EPS, PetscInt *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetFilterDegree(EPS, PetscInt);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetFilterDegree(EPS, PetscInt *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetRestart(EPS, PetscReal);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetRestart(EPS, PetscReal *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosSetBlockSize(EPS, PetscInt);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetBlockSize(EPS, PetscInt *);
SLEPC_EXTERN PetscErrorCode EPSCUDALanczosGetBackendInUse(EPS, const char **);


/*
   CUDA MatShells: matrices whose data (or multiply) lives on the GPU. MatMult with ordinary host Vecs
   copies in and out; EPSCUDALANCZOS recognizes them and applies them on the device without copies.
*/
typedef PetscErrorCode (*MatCUDALanczosDeviceMult)(void *ctx, const PetscScalar *x, PetscScalar *y, void *stream);
SLEPC_EXTERN PetscErrorCode MatCreateCUDALanczos(Mat, Mat *);
SLEPC_EXTERN PetscErrorCode MatCreateCUDALanczosShell(MPI_Comm, PetscInt, PetscInt, MatCUDALanczosDeviceMult, void *, Mat *);

#endif
