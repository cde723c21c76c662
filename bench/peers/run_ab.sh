#!/usr/bin/env bash
# Two builds of the plugin side by side on the GPU host, for a change that must not move the numbers (a
# refactor) or that claims to: the same bench_eps on the same matrices, A and B alternating in one call
# (A B A B ...), so that the machine's drift falls on both. Each run is a fresh process solving each k in
# turn (-warmup short first: the times are a warm solve's); the report compares, per case and k, the
# median times, the products and the eigenvalues.
#
#   run_ab.sh CARRY_A CARRY_B OUT [CASES] [KS] [REPS]     defaults: "dense12288 powerlaw lap3d", "1 10", 3
#
# CARRY_A/B: carry folders of 3.18 builds (libslepccudalanczos.so.0 and bench/peers/{bench_eps,gen_matrices},
# the binaries finding the plugin two folders up). OUT/ab.jsonl holds one line per solve, OUT/ab.md the
# report (bench/peers/ab_report.py), OUT/logs/ each process's output. Extra bench_eps options: AB_OPTIONS.
set -uo pipefail
a=$(cd "$1" && pwd); b=$(cd "$2" && pwd); out=$3
cases=${4:-dense12288 powerlaw lap3d}; ks=${5:-1 10}; reps=${6:-3}
mkdir -p "$out/logs"
mats=${BENCH_SCRATCH:-/tmp/cudalanczos-bench/mats}
mkdir -p "$mats"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
jsonl=$out/ab.jsonl
: >"$jsonl"
for case in $cases; do
  case $case in dense*) ;; *) [ -f "$mats/$case.csr" ] || "$a/bench/peers/gen_matrices" "$mats" "$case" >"$out/logs/gen-$case.log" 2>&1 ;; esac
  for r in $(seq 1 "$reps"); do
    for side in A B; do
      dir=$a; [ $side = B ] && dir=$b
      log=$out/logs/$side-$case-$r.log
      # shellcheck disable=SC2086 # AB_OPTIONS is split into words on purpose
      timeout 300 "$dir/bench/peers/bench_eps" -case "$case" -dir "$mats" -k "$(echo $ks | tr ' ' ,)" -tol 1e-8 -warmup short \
        -eps_type cudalanczos ${AB_OPTIONS:-} >"$log" 2>&1
      rc=$?
      grep '^{' "$log" | sed "s/^{/{\"side\":\"$side\",\"rep\":$r,\"rc\":$rc,/" >>"$jsonl"
    done
  done
done
python3 "$(dirname "$0")/ab_report.py" "$jsonl" >"$out/ab.md"
cat "$out/ab.md"
