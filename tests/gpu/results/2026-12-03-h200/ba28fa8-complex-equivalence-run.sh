#!/usr/bin/env bash
# The complex carry: test_backend_equivalence alone (part equivalence).
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
Z=$PWD/cz; mkdir -p $Z && tar -C $Z -xJf gpurun/complex.tar.xz
bash tests/gpu/run_all_on_gpu_host.sh $Z $OUT/complex-equivalence equivalence; echo "complex equivalence part rc $?"
rm -rf $OUT/*/petsc-libs
