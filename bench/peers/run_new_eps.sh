#!/usr/bin/env bash
# A new EPS and a re-solve on a device Mat, ours and SLEPc's GPU path side by side on the GPU host
# (bench/peers/README.md, "A new EPS on sparse matrices"): one bench_eps process per solver and option
# set, -user_times -user_times_reps 5 (the first solve, then 5 new EPS and 5 re-solves: medians with
# min-max), PETSc/SLEPc 3.26.1 with CUDA, -mat_type aijcusparse -vec_type cuda, tol 1e-8, largest.
#
#   run_new_eps.sh CARRY326 OUT [CASES] [KS]       CASES default "powerlaw randsym anderson lap3d", KS "1 10"
#
# OURS_VARIANTS="-eps_cudalanczos_block_size 2|..." (option sets separated by |): cudalanczos runs besides
# the defaults. KS_NCV="1:48 10:57": krylovschur again with -eps_ncv set to the basis ours grows to, per k.
# Each cudalanczos option set runs once more with -eps_view (one solve) for its products and passes.
# CuPy's eigsh joins where python3 has CuPy (peers.py). One JSON line per run in OUT/new_eps.jsonl.
set -uo pipefail
c326=$(cd "$1" && pwd); out=$2
cases=${3:-powerlaw randsym anderson lap3d}; ks=${4:-1 10}
mkdir -p "$out/logs"
mats=${BENCH_SCRATCH:-/tmp/cudalanczos-bench/mats}
mkdir -p "$mats"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH="$c326/lib:$c326:${LD_LIBRARY_PATH:-}"
here=$(cd "$(dirname "$0")" && pwd)
jsonl=$out/new_eps.jsonl
: >"$jsonl"
bench=$c326/bench/peers/bench_eps

run() { # NAME VARIANT COMMAND...: one process, its JSON line kept with the variant
  local name=$1 variant=$2; shift 2
  timeout 240 "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  grep '^{' "$out/logs/$name.log" | sed "s|^{|{\"run\":\"$name\",\"variant\":\"$variant\",\"rc\":$rc,|" >>"$jsonl"
  [ $rc -eq 0 ] || echo "{\"run\":\"$name\",\"variant\":\"$variant\",\"rc\":$rc,\"status\":\"failed\"}" >>"$jsonl"
}

IFS='|' read -ra sets <<<"${OURS_VARIANTS:-}"
sets=("" "${sets[@]}")
for case in $cases; do
  [ -f "$mats/$case.csr" ] || "$c326/bench/peers/gen_matrices" "$mats" "$case" >"$out/logs/gen-$case.log" 2>&1
  for k in $ks; do
    common=(-case "$case" -dir "$mats" -k "$k" -tol 1e-8 -mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0)
    for i in "${!sets[@]}"; do
      # shellcheck disable=SC2086 # an option set is split into words on purpose
      run "ours-$case-k$k-v$i" "${sets[$i]}" "$bench" "${common[@]}" -user_times -user_times_reps 5 -eps_type cudalanczos ${sets[$i]}
      # shellcheck disable=SC2086
      timeout 120 "$bench" "${common[@]}" -user_times -user_times_reps 1 -eps_type cudalanczos ${sets[$i]} -eps_view \
        >"$out/logs/ours-$case-k$k-v$i-view.log" 2>&1
    done
    run "krylovschur-$case-k$k" "" "$bench" "${common[@]}" -user_times -user_times_reps 5 -eps_type krylovschur -bv_type svec
    for kn in ${KS_NCV:-}; do
      [ "${kn%%:*}" = "$k" ] || continue
      run "krylovschur-$case-k$k-ncv${kn#*:}" "-eps_ncv ${kn#*:}" "$bench" "${common[@]}" -user_times -user_times_reps 5 -eps_type krylovschur \
        -bv_type svec -eps_ncv "${kn#*:}"
    done
  done
  if [ -z "${NO_CUPY:-}" ] && python3 -c 'import cupy' 2>/dev/null; then
    timeout 150 python3 "$here/peers.py" --solver eigsh --case "$case" --dir "$mats" --ks "$(echo "$ks" | tr ' ' ,)" >"$out/logs/cupy-$case.log" 2>&1
    grep '^{' "$out/logs/cupy-$case.log" | sed "s/^{/{\"run\":\"cupy-eigsh-$case\",/" >>"$jsonl"
  fi
done
echo "wrote $jsonl ($(wc -l <"$jsonl") lines)"
