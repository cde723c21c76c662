#!/usr/bin/env bash
# Block steps with a window and one full pass (N) against the previous carry (R); complex step profile (Z).
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/c326; N=$PWD/c326n; Z=$PWD/c326z
for p in "R carry326" "N carry326n" "Z carry326z"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
M=/tmp/mats; mkdir -p $M
$R/bench/peers/gen_matrices $M powerlaw hofstadter > $OUT/gen.log 2>&1
( export LD_LIBRARY_PATH=$N/lib:$N:$LD_LIBRARY_PATH
  timeout 120 $N/tests/cuda/test_cuda_backend --gtest_filter='*Block*' > $OUT/n-cuda-backend-block.log 2>&1; echo "rc $?" >> $OUT/n-cuda-backend-block.log
  timeout 150 $N/tests/petsc/test_eps_cudalanczos > $OUT/n-eps.log 2>&1; echo "rc $?" >> $OUT/n-eps.log )
tail -2 $OUT/n-cuda-backend-block.log; grep -E '^not ok|passed|^rc' $OUT/n-eps.log | tail -3
J=$OUT/times.jsonl; : > $J
t() { # NAME CARRY ARGS...
  local name=$1 c=$2; shift 2
  LD_LIBRARY_PATH=$c/lib:$c:$LD_LIBRARY_PATH timeout 120 $c/bench/peers/bench_eps -dir $M -tol 1e-8 -user_times -user_times_reps 3 -vec_type cuda -use_gpu_aware_mpi 0 "$@" > $OUT/$name.log 2>&1
  grep '^{' $OUT/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J
}
for k in 1; do
  t pl-k$k-old-b2 $R -case powerlaw -k $k -mat_type aijcusparse -eps_type cudalanczos -eps_cudalanczos_block_size 2
  t pl-k$k-new-b2 $N -case powerlaw -k $k -mat_type aijcusparse -eps_type cudalanczos -eps_cudalanczos_block_size 2 -eps_view
  t pl-k$k-new $N -case powerlaw -k $k -mat_type aijcusparse -eps_type cudalanczos
  t pl-k$k-ks $N -case powerlaw -k $k -mat_type aijcusparse -eps_type krylovschur -bv_type svec
done
for k in 10 50; do
  t d-k$k-old $R -case dense12288 -k $k -mat_type densecuda -eps_type cudalanczos
  t d-k$k-new $N -case dense12288 -k $k -mat_type densecuda -eps_type cudalanczos -eps_view
  t d-k$k-ks $N -case dense12288 -k $k -mat_type densecuda -eps_type krylovschur -bv_type svec
done
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
( export LD_LIBRARY_PATH=$Z/lib:$Z:$LD_LIBRARY_PATH
  timeout 170 ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 1500 --launch-count 350 \
    $Z/bench/peers/bench_eps -case hofstadter -dir $M -k 1 -tol 1e-8 -eps_type cudalanczos -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse -eps_cudalanczos_verify 0 -eps_cudalanczos_ncv_max 16 > $OUT/ncu-hof.txt 2>&1
  echo "hof rc $?" )
