/*
   What loading the plugin costs a program that does not use it: an unmodified SLEPc program (it does not
   link the plugin; ctest loads it with -dll_append) solves the 1-D Laplacian with the type the options or
   -type_in_code name. With -check_unmapped it then reads /proc/self/maps and fails if a CUDA library beyond
   the runtime (cuBLAS, cuBLASLt, cuSPARSE, cuSOLVER, or the driver, libcuda) is mapped: none of them is
   needed by a process that never selects cudalanczos (a CUDA PETSc maps them itself: not checked there).
   Built with CUDALANCZOS_TEST_LINKED (test_plugin_linked) it links the plugin and calls
   EPSCUDALanczosRegister() as such programs do. The plugin's -info lines say when its warm-up
   started; tests/petsc/CMakeLists.txt matches them.
*/
#include "laplacian1d.h"

#include <slepceps.h>
#if defined(CUDALANCZOS_TEST_LINKED)
#include <slepccudalanczos.h>
#endif

#include <stdio.h>
#include <string.h>

/* Whether a library whose path holds `name` is mapped into this process (Linux only: elsewhere, never). */
static PetscErrorCode Mapped(const char *name, PetscBool *mapped)
{
  FILE *maps;
  char  line[4096];

  PetscFunctionBeginUser;
  *mapped = PETSC_FALSE;
  maps    = fopen("/proc/self/maps", "r");
  if (!maps) PetscFunctionReturn(0);
  while (fgets(line, sizeof(line), maps))
    if (strstr(line, name)) *mapped = PETSC_TRUE;
  fclose(maps);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const char *libraries[] = {"libcublas.so", "libcublasLt.so", "libcusparse.so", "libcusolver.so", "libcuda.so"};
  Mat         A;
  EPS         eps;
  PetscInt    n = 100, nconv;
  PetscBool   check = PETSC_FALSE, mapped, any = PETSC_FALSE;
  char        type[64] = "";

  PetscFunctionBeginUser;
  PetscCall(SlepcInitialize(&argc, &argv, NULL, NULL));
#if defined(CUDALANCZOS_TEST_LINKED)
  PetscCall(EPSCUDALanczosRegister());
#endif
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-check_unmapped", &check, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-type_in_code", type, sizeof(type), NULL));

  PetscCall(Laplacian1d(PETSC_COMM_WORLD, n, &A));

  PetscCall(EPSCreate(PETSC_COMM_WORLD, &eps));
  PetscCall(EPSSetOperators(eps, A, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  if (type[0]) PetscCall(EPSSetType(eps, type));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nconv));
  PetscCheck(nconv >= 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "test_plugin_load: the solve converged no pair");

  for (size_t i = 0; i < sizeof(libraries) / sizeof(libraries[0]); i++) {
    PetscCall(Mapped(libraries[i], &mapped));
    if (mapped) PetscCall(PetscPrintf(PETSC_COMM_SELF, "test_plugin_load: %s is mapped\n", libraries[i]));
    any = (PetscBool)(any || mapped);
  }
#if defined(PETSC_HAVE_CUDA)
  /* a CUDA PETSc links cuBLAS, cuSPARSE and cuSOLVER and starts the driver itself: only the -info lines tell */
  if (check) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_plugin_load: PETSc is built with CUDA and maps its libraries itself: not checked\n"));
  check = PETSC_FALSE;
#endif
  PetscCheck(!check || !any, PETSC_COMM_SELF, PETSC_ERR_PLIB, "test_plugin_load: a CUDA library is mapped into a process that never selected cudalanczos");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_plugin_load: %" PetscInt_FMT " pairs converged; passed\n", nconv));

  PetscCall(EPSDestroy(&eps));
  PetscCall(MatDestroy(&A));
  PetscCall(SlepcFinalize());
  return 0;
}
