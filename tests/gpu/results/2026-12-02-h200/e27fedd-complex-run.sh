#!/usr/bin/env bash
# The complex carry at e27fedd: the GPU tests part (test_backend_equivalence left to its own part).
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
Z=$PWD/cz; mkdir -p $Z && tar -C $Z -xJf gpurun/complex.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
TESTS_SKIP="test_backend_equivalence" bash tests/gpu/run_all_on_gpu_host.sh $Z $OUT/complex-tests tests; echo "complex tests part rc $?"
rm -rf $OUT/complex-tests/petsc-libs
