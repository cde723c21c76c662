#!/usr/bin/env bash
# The multi-GPU run on a host with 2 GPUs, in one call (GPU time is scarce): tests, then the
# scaling benchmark, then compute-sanitizer on a subset of the multi-rank tests.
#
#   bench/bench_multigpu.sh CARRY_DIR OUT_DIR [restarts]
#
# CARRY_DIR holds libslepccudalanczos.so(.0), tests/petsc/test_* and bench/bench_multigpu (the build
# folder's layout); the PETSc/SLEPc/Open MPI runtime comes from /work/shared/gpu-host/pack.sh's env.sh,
# sourced by the caller. Writes OUT_DIR/summary.log, OUT_DIR/bench.log (the benchmark's ROW lines and
# details) and OUT_DIR/logs.tar.gz; exits non-zero if anything failed.
set -uo pipefail
carry=$(cd "${1:?usage: bench_multigpu.sh CARRY_DIR OUT_DIR [restarts]}" && pwd)
out=${2:?usage: bench_multigpu.sh CARRY_DIR OUT_DIR [restarts]}
restarts=${3:-6}
mkdir -p "$out/logs"
logs=$(cd "$out/logs" && pwd)
export LD_LIBRARY_PATH="$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_MCA_rmaps_base_oversubscribe=1
status=0
summary="$out/summary.log"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() { # step NAME TIMEOUT COMMAND...: runs, logs, records pass/fail and the lines worth a glance
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s%N)
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  if [ $rc -eq 0 ]; then note "ok      $name ($ms ms)"; else note "FAILED  $name (rc $rc, $ms ms)"; status=1; fi
  grep -E "not ok|passed, [0-9]+ failed|ERROR SUMMARY|^ROW|^# |rror" "$logs/$name.log" | head -30 | sed 's/^/        /' >>"$summary"
}

note "== $(date -u '+%Y-%m-%d %H:%M UTC'): $(nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tr '\n' ';')"
nvidia-smi topo -m >"$logs/topology.log" 2>&1 && sed 's/^/        /' "$logs/topology.log" | head -8 >>"$summary"

# 1. correctness on the device: every layout and rank count, ranks sharing GPUs at -n 3 and -n 4.
# A hang (a halo exchange waiting for a rank that never comes) stops the run here: no GPU time
# is spent on a benchmark of a broken operator.
for np in 1 2 3 4; do
  step multigpu-np$np 90 mpiexec -n $np "$carry/tests/petsc/test_multigpu"
  if [ $status -ne 0 ] && grep -q "FAILED  multigpu-np$np (rc 124" "$summary"; then
    note "== stopped after a timeout"; tar -C "$out" -czf "$out/logs.tar.gz" logs; exit 1
  fi
done
# the GPU suite's plugin tests under mpiexec -n 2: now one GPU per rank, the row-distributed operator
step eps_cudalanczos-np2 90 mpiexec -n 2 "$carry/tests/petsc/test_eps_cudalanczos"
# the operator line as a user sees it, with ranks sharing a device
step eps_view-np3 60 mpiexec -n 3 "$carry/tests/petsc/test_multigpu" -kinds 2 -layouts 0 -shell false -eps_view

# 2. the benchmark: strong scaling (sparse 2.1e8 nonzeros, dense 40000), weak scaling (sparse)
b="$carry/bench/bench_multigpu"
: >"$out/bench.log"
bench() { # bench NAME NP ARGS...
  local name=$1 np=$2; shift 2
  step "bench-$name" 120 mpiexec -n "$np" "$b" "$@" "$restarts"
  grep -E "^ROW|^# " "$logs/bench-$name.log" >>"$out/bench.log"
}
bench stencil-1gpu 1 stencil 200 200 200
bench stencil-2gpu 2 stencil 200 200 200
bench stencil-weak-2gpu 2 stencil 200 200 400
bench dense-1gpu 1 dense 40000
bench dense-2gpu 2 dense 40000

# 3. memcheck (leaks included) on both ranks, a few small cases: the halo kernels and copies
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$cs" ]; then
  step memcheck-np2 90 mpiexec -n 2 "$cs" --tool memcheck --leak-check full --error-exitcode 9 \
    "$carry/tests/petsc/test_multigpu" -kinds 1,3 -layouts 2 -shell false
fi
note "== overall: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs"
exit $status
