#!/usr/bin/env bash
# The solver's restart fraction (a third with partial reorthogonalization, 0.5 after a stall) against
# the old default 0.5, side by side: the complex Hofstadter Hamiltonian with SLEPc-GPU's krylovschur,
# then the four real suite matrices. Re-solves on device Mats.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr; Z=$PWD/cz
for p in "R real" "Z complex"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
M=/tmp/mats; mkdir -p $M $OUT/logs
J=$OUT/final.jsonl; : > $J
t() { local name=$1 c=$2 case=$3 reps=$4; shift 4
  L $c timeout 120 $c/bench/peers/bench_eps -case $case -dir $M -tol 1e-8 -user_times -user_times_reps $reps -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/logs/$name.log 2>&1
  echo "rc $?" >> $OUT/logs/$name.log
  grep '^{' $OUT/logs/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
L $Z $Z/bench/peers/gen_matrices $M hofstadter > $OUT/logs/gen.log 2>&1
for k in 1 10 50; do
  t hof-k$k-default $Z hofstadter 2 -k $k -eps_type cudalanczos -eps_view
  t hof-k$k-f0.5 $Z hofstadter 2 -k $k -eps_type cudalanczos -eps_cudalanczos_restart 0.5 -eps_view
  t hof-k$k-default-nov $Z hofstadter 2 -k $k -eps_type cudalanczos -eps_cudalanczos_verify 0 -eps_view
  t hof-k$k-f0.5-nov $Z hofstadter 2 -k $k -eps_type cudalanczos -eps_cudalanczos_restart 0.5 -eps_cudalanczos_verify 0
  t hof-k$k-ks $Z hofstadter 2 -k $k -eps_type krylovschur -bv_type svec
done
for c in powerlaw randsym lap3d lap2d; do
  L $R $R/bench/peers/gen_matrices $M $c >> $OUT/logs/gen.log 2>&1
  for k in 1 10 50; do
    t $c-k$k-default $R $c 1 -k $k -eps_type cudalanczos -eps_view
    t $c-k$k-f0.5 $R $c 1 -k $k -eps_type cudalanczos -eps_cudalanczos_restart 0.5 -eps_view
  done
done
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
cd $OUT && tar -czf logs.tar.gz logs && rm -rf logs
