#!/usr/bin/env bash
# The complex carry: the CUDA test binaries under racecheck, each within 170 s (what the device time left
# allowed after B, whose racecheck part ran past the call's limit).
set -uo pipefail
. .gpu-host/env.sh
Z=$PWD/cz; mkdir -p $Z && tar -C $Z -xJf gpurun/complex.tar.xz
mkdir -p $Z/libs && tar -C $Z/libs -xJf $Z/petsc-libs.tar.xz && export LD_LIBRARY_PATH=$Z:$Z/libs:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/complex-racecheck
SUITE_PARTS=sanitizers SANITIZER_TOOLS=racecheck SANITIZER_TIMEOUT=170 SUITE_FOLDERS=cuda \
  bash tests/gpu/run_gpu_suite.sh $Z $OUT/complex-racecheck/logs > $OUT/complex-racecheck/summary.log 2>&1
echo "complex racecheck rc $?" >> $OUT/complex-racecheck/summary.log
tar -C $OUT/complex-racecheck -czf $OUT/complex-racecheck/logs.tar.gz logs && rm -rf $OUT/complex-racecheck/logs
tail -30 $OUT/complex-racecheck/summary.log
