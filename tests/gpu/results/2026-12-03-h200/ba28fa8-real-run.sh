#!/usr/bin/env bash
# The real carry: the GPU tests part (every binary, the MPI runs, the demos, memcheck of the plugin), then
# the CUDA test binaries under compute-sanitizer memcheck.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$PWD/cr; mkdir -p $R && tar -C $R -xJf gpurun/real.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
bash tests/gpu/run_all_on_gpu_host.sh $R $OUT/real-tests tests; echo "real tests part rc $?"
bash tests/gpu/run_all_on_gpu_host.sh $R $OUT/real-memcheck memcheck; echo "real memcheck part rc $?"
rm -rf $OUT/*/petsc-libs
