#!/usr/bin/env bash
# After a97643e (another leading pair restarts the stall count): the Laplacian solves whose fraction
# 5d78c21 still raised, with the defaults, and the 2-D Laplacian at k = 10 with 0.5 side by side.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr
mkdir -p $R/lib && tar -C $R -xJf gpurun/real.tar.xz && tar -C $R/lib -xJf $R/petsc-libs.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
M=/tmp/mats; mkdir -p $M $OUT/logs
J=$OUT/check2.jsonl; : > $J
t() { local name=$1 c=$2 case=$3 reps=$4; shift 4
  L $c timeout 120 $c/bench/peers/bench_eps -case $case -dir $M -tol 1e-8 -user_times -user_times_reps $reps -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/logs/$name.log 2>&1
  echo "rc $?" >> $OUT/logs/$name.log
  grep '^{' $OUT/logs/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
for c in lap3d lap2d; do L $R $R/bench/peers/gen_matrices $M $c >> $OUT/logs/gen.log 2>&1; done
for k in 10 50; do t lap3d-k$k-default $R lap3d 1 -k $k -eps_type cudalanczos -eps_view; done
for k in 1 10 50; do t lap2d-k$k-default $R lap2d 1 -k $k -eps_type cudalanczos -eps_view; done
t lap2d-k10-f0.5 $R lap2d 1 -k 10 -eps_type cudalanczos -eps_cudalanczos_restart 0.5 -eps_view
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
for f in $OUT/logs/lap*.log; do echo "$(basename $f .log): $(grep -h '  last solve:' $f | tail -1 | sed 's/.*last solve: \([0-9]*\) operator.*/\1/') products, raised $(grep -c 'the last solve kept 50' $f)"; done
cd $OUT && tar -czf logs.tar.gz logs && rm -rf logs
