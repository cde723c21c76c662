#!/usr/bin/env bash
# Profile: kernel durations (ncu) of a block-2 power-law solve and a complex Hofstadter solve; variants timed.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/c326; Z=$PWD/c326z
for d in R Z; do :; done
mkdir -p $R $Z && tar -C $R -xJf gpurun/carry326.tar.xz && tar -C $Z -xJf gpurun/carry326z.tar.xz
mkdir -p $R/lib $Z/lib && tar -C $R/lib -xJf $R/petsc-libs.tar.xz && tar -C $Z/lib -xJf $Z/petsc-libs.tar.xz
M=/tmp/mats; mkdir -p $M
( time $R/bench/peers/gen_matrices $M powerlaw hofstadter ) > $OUT/gen.log 2>&1
which ncu > $OUT/ncu-which.txt 2>&1; nvidia-smi -L >> $OUT/ncu-which.txt
NCU="ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-count 6000"
common="-dir $M -tol 1e-8 -user_times -user_times_reps 1 -eps_type cudalanczos -vec_type cuda -use_gpu_aware_mpi 0 -eps_view"
# real power law, block 2 and single
( export LD_LIBRARY_PATH=$R/lib:$R:$LD_LIBRARY_PATH
  timeout 120 $NCU $R/bench/peers/bench_eps -case powerlaw -k 1 -mat_type aijcusparse $common -eps_cudalanczos_block_size 2 > $OUT/ncu-powerlaw-b2.txt 2>&1
  timeout 120 $NCU $R/bench/peers/bench_eps -case powerlaw -k 1 -mat_type aijcusparse $common > $OUT/ncu-powerlaw-b1.txt 2>&1
)
echo "ncu real done"; tail -5 $OUT/ncu-powerlaw-b2.txt
( export LD_LIBRARY_PATH=$Z/lib:$Z:$LD_LIBRARY_PATH
  timeout 150 $NCU --launch-count 3000 $Z/bench/peers/bench_eps -case hofstadter -k 1 -mat_type aijcusparse $common > $OUT/ncu-hof-k1.txt 2>&1
  for v in "" "-eps_cudalanczos_ncv_max 16" "-eps_cudalanczos_ncv_max 24" "-eps_cudalanczos_ncv_max 32" "-eps_cudalanczos_reorthog full" "-eps_cudalanczos_kernels vendor" "-eps_cudalanczos_verify 0" "-eps_cudalanczos_verify 0 -eps_cudalanczos_ncv_max 16" "-eps_cudalanczos_verify 0 -eps_cudalanczos_ncv_max 24"; do
    echo "== variant: $v" >> $OUT/hof-variants.txt
    timeout 60 $Z/bench/peers/bench_eps -case hofstadter -k 1 -mat_type aijcusparse $common $v 2>&1 | grep -E '^\{|operator applications|basis|ncv' >> $OUT/hof-variants.txt
  done
  echo "== krylovschur" >> $OUT/hof-variants.txt
  timeout 60 $Z/bench/peers/bench_eps -case hofstadter -k 1 -mat_type aijcusparse -dir $M -tol 1e-8 -user_times -user_times_reps 1 -eps_type krylovschur -vec_type cuda -bv_type svec -use_gpu_aware_mpi 0 -log_view 2>&1 | grep -E '^\{|^MatMult |^EPSSolve|BVOrth|BVMult|VecMDot|VecMAXPY' >> $OUT/hof-variants.txt
)
cat $OUT/hof-variants.txt | grep -E '^==|^\{' | cut -c1-300
