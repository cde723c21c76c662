#!/usr/bin/env bash
# The restart fraction on the GPU: cudalanczos re-solves at -eps_cudalanczos_restart 0.5 / 0.33 / 0.2,
# the complex Hofstadter Hamiltonian (with SLEPc-GPU's krylovschur) and the four real suite matrices.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr; Z=$PWD/cz
for p in "R real" "Z complex"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
M=/tmp/mats; mkdir -p $M
J=$OUT/restart.jsonl; : > $J
t() { local name=$1 c=$2 case=$3; shift 3
  L $c timeout ${TLIM:-120} $c/bench/peers/bench_eps -case $case -dir $M -tol 1e-8 -user_times -user_times_reps ${REPS:-1} -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/logs/$name.log 2>&1
  echo "rc $?" >> $OUT/logs/$name.log
  grep '^{' $OUT/logs/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
mkdir -p $OUT/logs
L $Z $Z/bench/peers/gen_matrices $M hofstadter > $OUT/logs/gen.log 2>&1
for k in ${HOF_KS:-1 10 50}; do
  for f in ${FRACS:-0.5 0.33 0.2}; do t hof-k$k-f$f $Z hofstadter -k $k -eps_type cudalanczos -eps_cudalanczos_restart $f -eps_view; done
  t hof-k$k-f0.33-nov $Z hofstadter -k $k -eps_type cudalanczos -eps_cudalanczos_restart 0.33 -eps_cudalanczos_verify 0
  t hof-k$k-f0.5-nov $Z hofstadter -k $k -eps_type cudalanczos -eps_cudalanczos_restart 0.5 -eps_cudalanczos_verify 0
  [ $k = 50 ] || t hof-k$k-ks $Z hofstadter -k $k -eps_type krylovschur -bv_type svec
done
for c in ${CASES:-powerlaw randsym lap3d lap2d}; do
  L $R $R/bench/peers/gen_matrices $M $c >> $OUT/logs/gen.log 2>&1
  for k in ${KS:-1 10 50}; do
    for f in ${FRACS:-0.5 0.33 0.2}; do t $c-k$k-f$f $R $c -k $k -eps_type cudalanczos -eps_cudalanczos_restart $f -eps_view; done
  done
done
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
cd $OUT && tar -czf logs.tar.gz logs && rm -rf logs
