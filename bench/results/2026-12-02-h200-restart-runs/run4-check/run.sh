#!/usr/bin/env bash
# After the stall criterion changed (4 cycles, 0.1 %): the solves whose fraction the old criterion raised,
# with the defaults; the Hofstadter Hamiltonian at k = 1 and 10 with SLEPc-GPU; test_eps_cudalanczos on 1 and 2 ranks.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr; Z=$PWD/cz
for p in "R real" "Z complex"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
M=/tmp/mats; mkdir -p $M $OUT/logs
J=$OUT/check.jsonl; : > $J
t() { local name=$1 c=$2 case=$3 reps=$4; shift 4
  L $c timeout 120 $c/bench/peers/bench_eps -case $case -dir $M -tol 1e-8 -user_times -user_times_reps $reps -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/logs/$name.log 2>&1
  echo "rc $?" >> $OUT/logs/$name.log
  grep '^{' $OUT/logs/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
L $Z $Z/bench/peers/gen_matrices $M hofstadter > $OUT/logs/gen.log 2>&1
for k in 1 10; do
  t hof-k$k-default $Z hofstadter 3 -k $k -eps_type cudalanczos -eps_view
  t hof-k$k-default-nov $Z hofstadter 3 -k $k -eps_type cudalanczos -eps_cudalanczos_verify 0 -eps_view
  t hof-k$k-ks $Z hofstadter 3 -k $k -eps_type krylovschur -bv_type svec
done
for c in randsym lap3d lap2d; do L $R $R/bench/peers/gen_matrices $M $c >> $OUT/logs/gen.log 2>&1; done
t randsym-k10-default $R randsym 1 -k 10 -eps_type cudalanczos -eps_view
for k in 10 50; do t lap3d-k$k-default $R lap3d 1 -k $k -eps_type cudalanczos -eps_view; done
for k in 1 10 50; do t lap2d-k$k-default $R lap2d 1 -k $k -eps_type cudalanczos -eps_view; done
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
for f in $OUT/logs/*-default*.log; do echo "$(basename $f .log): $(grep -h '  last solve:' $f | tail -1 | sed 's/.*last solve: \([0-9]*\) operator.*/\1/') products, raised $(grep -c 'the last solve kept 50' $f)"; done
L $R timeout 120 $R/tests/petsc/test_eps_cudalanczos > $OUT/logs/t-np1.log 2>&1; echo "np1 rc $?"; tail -n1 $OUT/logs/t-np1.log; grep -h "restart fraction" $OUT/logs/t-np1.log
L $R timeout 120 mpiexec -n 2 $R/tests/petsc/test_eps_cudalanczos > $OUT/logs/t-np2.log 2>&1; echo "np2 rc $?"; grep -h "passed, " $OUT/logs/t-np2.log | tail -n1; grep -h "not ok" $OUT/logs/t-np2.log | head
cd $OUT && tar -czf logs.tar.gz logs && rm -rf logs
