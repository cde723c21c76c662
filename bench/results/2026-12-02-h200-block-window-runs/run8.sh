#!/usr/bin/env bash
# Profile: kernel durations (ncu) of single-vector steps: complex Hofstadter (ncv 16, no verification) and the power law.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/c326; Z=$PWD/c326z
mkdir -p $R $Z && tar -C $R -xJf gpurun/carry326.tar.xz && tar -C $Z -xJf gpurun/carry326z.tar.xz
mkdir -p $R/lib $Z/lib && tar -C $R/lib -xJf $R/petsc-libs.tar.xz && tar -C $Z/lib -xJf $Z/petsc-libs.tar.xz
M=/tmp/mats; mkdir -p $M
[ -f $M/hofstadter.csr ] || $R/bench/peers/gen_matrices $M powerlaw hofstadter > $OUT/gen.log 2>&1
common="-dir $M -tol 1e-8 -user_times -user_times_reps 1 -eps_type cudalanczos -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse"
NCU="ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel"
( export LD_LIBRARY_PATH=$Z/lib:$Z:$LD_LIBRARY_PATH
  timeout 200 $NCU --launch-skip 3000 --launch-count 1400 $Z/bench/peers/bench_eps -case hofstadter -k 1 $common -eps_cudalanczos_verify 0 -eps_cudalanczos_ncv_max 16 > $OUT/ncu-hof.txt 2>&1
  echo "hof rc $?" )
( export LD_LIBRARY_PATH=$R/lib:$R:$LD_LIBRARY_PATH
  timeout 150 $NCU --launch-skip 100 --launch-count 500 $R/bench/peers/bench_eps -case powerlaw -k 1 $common > $OUT/ncu-pl-b1.txt 2>&1
  echo "pl rc $?" )
