#!/usr/bin/env bash
# Final kernels (dot chunks of 8, short-row SpMV): bench_step, Hofstadter old/new/krylovschur,
# the complex CUDA tests, then the real GPU tests part.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
R=$PWD/cr; Z=$PWD/cz; ZO=$PWD/czo; OB=$PWD/ob
for p in "R cr" "Z cz" "ZO czo"; do set -- $p; d=${!1}; mkdir -p $d/lib && tar -C $d -xJf gpurun/$2.tar.xz && tar -C $d/lib -xJf $d/petsc-libs.tar.xz; done
mkdir -p $OB && tar -C $OB -xJf gpurun/old-bench.tar.xz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L() { LD_LIBRARY_PATH=$1/lib:$1:$LD_LIBRARY_PATH "${@:2}"; }
for rep in 1; do
  timeout 60 $OB/bench_step_complex 1414 16 kernels > $OUT/k-complex-old-$rep.md 2>&1
  L $Z timeout 60 $Z/bench/bench_step 1414 16 kernels > $OUT/k-complex-new-$rep.md 2>&1
  timeout 60 $OB/bench_step_real 1414 16 kernels > $OUT/k-real-old-$rep.md 2>&1
  L $R timeout 60 $R/bench/bench_step 1414 16 kernels > $OUT/k-real-new-$rep.md 2>&1
done
L $Z timeout 60 $Z/bench/bench_step > $OUT/step-complex.md 2>&1; echo "rc $?" >> $OUT/step-complex.md
sed -n '/| nev/,$p' $OUT/step-complex.md
M=/tmp/mats; mkdir -p $M
L $R $R/bench/peers/gen_matrices $M hofstadter > $OUT/gen.log 2>&1
J=$OUT/hof.jsonl; : > $J
t() { local name=$1 c=$2; shift 2
  L $c timeout 100 $c/bench/peers/bench_eps -case hofstadter -dir $M -tol 1e-8 -user_times -user_times_reps 3 -vec_type cuda -use_gpu_aware_mpi 0 -mat_type aijcusparse "$@" > $OUT/$name.log 2>&1
  grep '^{' $OUT/$name.log | sed "s/^{/{\"run\":\"$name\",/" >> $J; }
for k in 1 10; do
  [ $k = 50 ] || t h$k-old $ZO -k $k -eps_type cudalanczos
  t h$k-new $Z -k $k -eps_type cudalanczos -eps_view
  [ $k = 50 ] || t h$k-old-nov $ZO -k $k -eps_type cudalanczos -eps_cudalanczos_verify 0
  t h$k-new-nov $Z -k $k -eps_type cudalanczos -eps_cudalanczos_verify 0
  t h$k-ks $Z -k $k -eps_type krylovschur -bv_type svec -eps_view
  [ $k = 50 ] || t h$k-new2 $Z -k $k -eps_type cudalanczos
done
python3 - $J <<'PY'
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); print(d["run"], "first %.4f new %.4f resolve %.4f"%(d["first_s"],d["new_eps_s"],d["resolve_s"]), d.get("lambda0"), d.get("min_nconv"))
PY
for b in test_cuda_kernels test_cuda_backend; do
  L $Z timeout 120 $Z/tests/cuda/$b > $OUT/z-$b.log 2>&1; echo "rc $?" >> $OUT/z-$b.log; tail -n 3 $OUT/z-$b.log
done
cd $OUT && tar -czf kernels.tar.gz k-*.md && rm k-*.md && tar -czf hof-logs.tar.gz h*.log z-*.log && rm h*.log z-*.log && cd - > /dev/null
bash tests/gpu/run_all_on_gpu_host.sh $R $OUT/tests tests > $OUT/run.log 2>&1
echo "rc $?"
grep -E '^(ok|FAIL|not ok)|overall' $OUT/tests/summary.log
mkdir -p /tmp/gl && tar -C /tmp/gl -xzf $OUT/tests/logs.tar.gz && for f in /tmp/gl/logs/suite/*; do echo "$(basename $f .log): $(grep -hE '\[  PASSED  \] [0-9]+ tests|^[0-9]+ passed, [0-9]+ failed' $f | tail -1)"; done
