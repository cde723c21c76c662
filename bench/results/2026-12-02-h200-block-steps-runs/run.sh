#!/usr/bin/env bash
# Block steps against the solver's single-vector defaults where the verification round is most of a solve:
# the complex Hofstadter Hamiltonian at k = 1, 10, 50 (with SLEPc-GPU's krylovschur), and the lumped
# membrane of examples/vibration_modes (a diagonal B, STSHIFT) and its shift-and-invert, with krylovschur
# on the same ST/KSP/PC. Re-solves on device Mats.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr; Z=$PWD/cz
for p in "R real" "Z complex"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
M=/tmp/mats; mkdir -p $M $OUT/logs
J=$OUT/block.jsonl; : > $J
t() { local name=$1 c=$2 case=$3 reps=$4; shift 4
  L $c timeout ${TLIM:-120} $c/bench/peers/bench_eps -case $case -dir $M -tol 1e-8 -user_times -user_times_reps $reps -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/logs/$name.log 2>&1
  echo "rc $?" >> $OUT/logs/$name.log
  grep '^{' $OUT/logs/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
L $Z $Z/bench/peers/gen_matrices $M hofstadter > $OUT/logs/gen.log 2>&1
for k in 1 10 50; do
  r=3; [ $k = 50 ] && r=1
  t hof-k$k-default $Z hofstadter $r -k $k -eps_type cudalanczos -eps_view
  for b in 2 3 4; do t hof-k$k-b$b $Z hofstadter $r -k $k -eps_type cudalanczos -eps_cudalanczos_block_size $b -eps_view; done
  t hof-k$k-ks $Z hofstadter $r -k $k -eps_type krylovschur -bv_type svec
done
V="-mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0 -eps_tol 1e-8 -solves 5"
LU="-mx 400 -my 400 -nev 10 -st_type sinvert -eps_target 0 -eps_target_magnitude -st_ksp_type preonly -st_pc_type lu -st_pc_factor_mat_solver_type cusparse"
LM="-mx 600 -my 600 -nev 10 -lumped -st_type shift -eps_largest_real -st_ksp_type preonly -st_pc_type jacobi"
v() { local name=$1; shift; L $R timeout 120 $R/examples/vibration_modes "$@" > $OUT/logs/$name.log 2>&1; echo "== $name rc $?: $*" >> $OUT/vib.txt; grep -iE "time|median|last solve|by part|KSPSolve  |MatMult  " $OUT/logs/$name.log >> $OUT/vib.txt; }
for b in 1 2 3; do v lumped-b$b $LM $V -dll_append $R/libslepccudalanczos.so -eps_type cudalanczos -eps_cudalanczos_block_size $b -eps_view -log_view; done
v lumped-default $LM $V -dll_append $R/libslepccudalanczos.so -eps_type cudalanczos -eps_view -log_view
v lumped-ks $LM $V -eps_type krylovschur -bv_type svec -log_view
v sinvert-default $LU $V -dll_append $R/libslepccudalanczos.so -eps_type cudalanczos -eps_view -log_view
v sinvert-b2 $LU $V -dll_append $R/libslepccudalanczos.so -eps_type cudalanczos -eps_cudalanczos_block_size 2 -eps_view -log_view
v sinvert-ks $LU $V -eps_type krylovschur -bv_type svec -log_view
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"), d.get("matvecs"))
PY
for f in $OUT/logs/hof-*.log; do echo "$(basename $f .log): $(grep -h '  last solve:' $f | tail -1 | sed 's/.*last solve: \([0-9]*\) operator.*/\1/') products; $(grep -h 'by part' $f | tail -1)"; done
cat $OUT/vib.txt
cd $OUT && tar -czf logs.tar.gz logs && rm -rf logs
