#!/usr/bin/env bash
# What a SLEPc user sees, side by side on the GPU host (bench_eps -user_times): the first EPSSolve of a
# fresh process, a new EPS on a Mat solved before, and a re-solve on the same EPS, for
#   cudalanczos  on Debian's PETSc 3.18 (host Mat: the device copy composed on the Mat),
#   cudalanczos  on PETSc 3.26.1 with CUDA, host Mat and (-mat_type) device Mat,
#   krylovschur  on PETSc 3.26.1 with CUDA, -mat_type aijcusparse|densecuda -vec_type cuda (SLEPc's GPU path),
# and CuPy eigsh (bench/peers/peers.py: its re-solve time after a warm-up) where python3 has CuPy.
#
#   run_user_times.sh CARRY318 CARRY326 OUT [CASES] [KS]     CASES default "dense12288 powerlaw", KS "1 10"
#
# OURS_VARIANTS="-eps_cudalanczos_verify 0|..." (option sets separated by |) adds a cudalanczos run on
# PETSc 3.26.1 with the device Mat per option set, named ...-v1, -v2, ... (the option set in "variant").
# DEVICE_MATS_ONLY=1 leaves out the host-Mat runs (3.18 and 3.26.1): the peers and the device Mat only.
# USER_TIMES_REPS=1 takes one new EPS and one re-solve per run instead of three (solves of seconds);
# NO_CUPY=1 leaves CuPy out.
#
# CARRY318: a carry folder of a 3.18 build (make gpu-pack); CARRY326: the plugin, bench_eps and lib/
# (libpetsc/libslepc 3.26.1) of a build against tools/petsc-cuda.sh's PETSc. One JSON line per run in
# OUT/user_times.jsonl, each process's output in OUT/logs/.
set -uo pipefail
c318=$(cd "$1" && pwd); c326=$(cd "$2" && pwd); out=$3
cases=${4:-dense12288 powerlaw}; ks=${5:-1 10}
mkdir -p "$out/logs"
mats=${BENCH_SCRATCH:-/tmp/cudalanczos-bench/mats}
mkdir -p "$mats"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
here=$(cd "$(dirname "$0")" && pwd)
jsonl=$out/user_times.jsonl
: >"$jsonl"

run() { # NAME COMMAND...: one process, its JSON line kept
  local name=$1; shift
  timeout 240 "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  grep '^{' "$out/logs/$name.log" | sed "s/^{/{\"run\":\"$name\",\"rc\":$rc,/" >>"$jsonl"
  [ $rc -eq 0 ] || echo "{\"run\":\"$name\",\"rc\":$rc,\"status\":\"failed\"}" >>"$jsonl"
}

for case in $cases; do
  case $case in
    dense*) devtype=densecuda ;;
    *) devtype=aijcusparse; [ -f "$mats/$case.csr" ] || "$c318/bench/peers/gen_matrices" "$mats" "$case" >"$out/logs/gen-$case.log" 2>&1 ;;
  esac
  for k in $ks; do
    common=(-case "$case" -dir "$mats" -k "$k" -tol 1e-8 -user_times -user_times_reps "${USER_TIMES_REPS:-3}")
    if [ -z "${DEVICE_MATS_ONLY:-}" ]; then
      run "cudalanczos-3.18-$case-k$k" "$c318/bench/peers/bench_eps" "${common[@]}" -eps_type cudalanczos
      LD_LIBRARY_PATH="$c326/lib:$c326:${LD_LIBRARY_PATH:-}" run "cudalanczos-3.26-hostmat-$case-k$k" \
        "$c326/bench/peers/bench_eps" "${common[@]}" -eps_type cudalanczos -use_gpu_aware_mpi 0
    fi
    LD_LIBRARY_PATH="$c326/lib:$c326:${LD_LIBRARY_PATH:-}" run "cudalanczos-3.26-$devtype-$case-k$k" \
      "$c326/bench/peers/bench_eps" "${common[@]}" -eps_type cudalanczos -mat_type "$devtype" -vec_type cuda -use_gpu_aware_mpi 0
    if [ -n "${OURS_VARIANTS:-}" ]; then
      IFS='|' read -ra sets <<<"$OURS_VARIANTS"
      for i in "${!sets[@]}"; do
        # shellcheck disable=SC2086 # an option set is split into words on purpose
        LD_LIBRARY_PATH="$c326/lib:$c326:${LD_LIBRARY_PATH:-}" run "cudalanczos-3.26-$devtype-$case-k$k-v$((i + 1))" \
          "$c326/bench/peers/bench_eps" "${common[@]}" -eps_type cudalanczos -mat_type "$devtype" -vec_type cuda -use_gpu_aware_mpi 0 ${sets[$i]}
        sed -i "\$s|}\$|,\"variant\":\"${sets[$i]}\"}|" "$jsonl"
      done
    fi
    LD_LIBRARY_PATH="$c326/lib:$c326:${LD_LIBRARY_PATH:-}" run "krylovschur-3.26-$devtype-$case-k$k" \
      "$c326/bench/peers/bench_eps" "${common[@]}" -eps_type krylovschur -mat_type "$devtype" -vec_type cuda -bv_type svec -use_gpu_aware_mpi 0
  done
  if [ -z "${NO_CUPY:-}" ] && python3 -c 'import cupy' 2>/dev/null; then
    timeout 300 python3 "$here/peers.py" --solver eigsh --case "$case" --dir "$mats" --ks "$(echo $ks | tr ' ' ,)" \
      >"$out/logs/cupy-$case.log" 2>&1
    grep '^{' "$out/logs/cupy-$case.log" | sed "s/^{/{\"run\":\"cupy-eigsh-$case\",/" >>"$jsonl"
  fi
done
echo "wrote $jsonl ($(wc -l <"$jsonl") lines)"
