#!/usr/bin/env bash
# Multi-dot chunks (new) against 1a67704 (old): bench_step kernels, the GPU kernel/backend tests, Hofstadter via PETSc.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr; Z=$PWD/cz; ZO=$PWD/czo; OB=$PWD/ob
for p in "R cr" "Z cz" "ZO czo"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
mkdir -p $OB && tar -C $OB -xJf gpurun/old-bench.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
# 1. kernels, old then new then old again, complex and real
for rep in 1 2; do
  timeout 60 $OB/bench_step_complex 1414 16 kernels > $OUT/k-complex-old-$rep.md 2>&1
  L $Z timeout 60 $Z/bench/bench_step 1414 16 kernels > $OUT/k-complex-new-$rep.md 2>&1
  timeout 60 $OB/bench_step_real 1414 16 kernels > $OUT/k-real-old-$rep.md 2>&1
  L $R timeout 60 $R/bench/bench_step 1414 16 kernels > $OUT/k-real-new-$rep.md 2>&1
done
# 2. whole solves (new), complex and real
L $Z timeout 100 $Z/bench/bench_step > $OUT/step-complex.md 2>&1; echo "rc $?" >> $OUT/step-complex.md
L $R timeout 60 $R/bench/bench_step > $OUT/step-real.md 2>&1; echo "rc $?" >> $OUT/step-real.md
# 3. tests of the kernels and the backend, both builds
for c in R Z; do d=${!c}
  L $d timeout 150 $d/tests/cuda/test_cuda_kernels > $OUT/t-kernels-$c.log 2>&1; echo "rc $?" >> $OUT/t-kernels-$c.log
  L $d timeout 150 $d/tests/cuda/test_cuda_backend > $OUT/t-backend-$c.log 2>&1; echo "rc $?" >> $OUT/t-backend-$c.log
  tail -n 3 $OUT/t-kernels-$c.log; tail -n 3 $OUT/t-backend-$c.log
done
# 4. Hofstadter through PETSc: old, new, krylovschur
M=/tmp/mats; mkdir -p $M
L $R $R/bench/peers/gen_matrices $M hofstadter > $OUT/gen.log 2>&1
J=$OUT/hof.jsonl; : > $J
t() { local name=$1 c=$2; shift 2
  L $c timeout 100 $c/bench/peers/bench_eps -case hofstadter -dir $M -tol 1e-8 -user_times -user_times_reps 3 -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/$name.log 2>&1
  grep '^{' $OUT/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
for k in 1 10; do
  t h$k-old $ZO -k $k -eps_type cudalanczos
  t h$k-new $Z -k $k -eps_type cudalanczos
  t h$k-old-nov $ZO -k $k -eps_type cudalanczos -eps_cudalanczos_verify 0
  t h$k-new-nov $Z -k $k -eps_type cudalanczos -eps_cudalanczos_verify 0
  t h$k-ks $Z -k $k -eps_type krylovschur -bv_type svec
  t h$k-new2 $Z -k $k -eps_type cudalanczos
done
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
cd $OUT && tar -czf kernels.tar.gz k-*.md && rm k-*.md && tar -czf tests.tar.gz t-*.log && tar -czf hof-logs.tar.gz h*.log && rm h*.log t-*.log
