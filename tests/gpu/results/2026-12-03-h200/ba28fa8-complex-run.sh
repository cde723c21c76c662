#!/usr/bin/env bash
# The complex carry: the GPU tests part without test_backend_equivalence (part equivalence, call C), then
# the CUDA test binaries under compute-sanitizer racecheck.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
Z=$PWD/cz; mkdir -p $Z && tar -C $Z -xJf gpurun/complex.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
TESTS_SKIP=test_backend_equivalence bash tests/gpu/run_all_on_gpu_host.sh $Z $OUT/complex-tests tests; echo "complex tests part rc $?"
bash tests/gpu/run_all_on_gpu_host.sh $Z $OUT/complex-racecheck racecheck; echo "complex racecheck part rc $?"
rm -rf $OUT/*/petsc-libs
