#!/usr/bin/env bash
# What loading the plugin costs a program, and what its warm-up gives a first solve, two builds side by
# side on the GPU host (bench/peers/README.md, "Loading the plugin"):
#   load     SLEPc's ex1 (-n 100 -eps_type krylovschur), the whole process, without the plugin and with
#            each build loaded by -dll_append (never selected), RUNS times each, interleaved;
#   context  whether a process that loads a build without selecting it holds a CUDA context: nvidia-smi
#            sampled while ex1 solves a larger problem;
#   first    bench_eps -user_times (the first EPSSetUp + EPSSolve of a fresh process, a new EPS, a
#            re-solve) with -eps_type cudalanczos given as an option and with the type set in code only,
#            RUNS fresh processes each, on Debian's 3.18 (host Mat) and, where given, on PETSc 3.26.1 with
#            CUDA (the device Mat; MATS326="host device" adds the host Mat).
#
#   run_load_cost.sh NEW318 OLD318 OUT [NEW326 OLD326]     RUNS (default 5), CASES ("dense12288 powerlaw"), K (1),
#                                                          PARTS ("load context first option code"), FIRST_PETSC ("3.18 3.26")
#
# NEW318/OLD318: carry folders of 3.18 builds (make gpu-pack: the plugin, slepc/ex1, bench/peers/bench_eps,
# bench/peers/gen_matrices); NEW326/OLD326: the plugin and bench/peers/bench_eps of 3.26.1 builds, with
# PETSc/SLEPc 3.26.1's libraries in lib/. One JSON line per measurement in OUT/load_cost.jsonl, the tables
# (load_cost_report.py) in OUT/load_cost.md.
set -uo pipefail
new=$(cd "$1" && pwd); old=$(cd "$2" && pwd); out=$3
new326=${4:+$(cd "$4" && pwd)}; old326=${5:+$(cd "$5" && pwd)}
runs=${RUNS:-5}; cases=${CASES:-dense12288 powerlaw}; k=${K:-1}
mkdir -p "$out/logs"
jsonl=$out/load_cost.jsonl
: >"$jsonl"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mats=${BENCH_SCRATCH:-/tmp/cudalanczos-bench/mats}
mkdir -p "$mats"
ex1=$new/slepc/ex1

ms() { # COMMAND...: its wall time in ms (output dropped)
  local t0; t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  echo $((($(date +%s%N) - t0) / 1000000))
}

parts=${PARTS:-load context first option code} # option, code: where first solves take the type
has() { [[ " $parts " == *" $1 "* ]]; }

# load: three variants per round, so that a drift of the machine touches all of them alike
has load && for r in $(seq "$runs"); do
  echo "{\"part\":\"load\",\"plugin\":\"none\",\"run\":$r,\"ms\":$(ms "$ex1" -n 100 -eps_type krylovschur)}" >>"$jsonl"
  for build in new old; do
    dir=${!build}
    echo "{\"part\":\"load\",\"plugin\":\"$build\",\"run\":$r,\"ms\":$(ms "$ex1" -n 100 -eps_type krylovschur -dll_append "$dir/libslepccudalanczos.so")}" >>"$jsonl"
  done
done

# context: a longer solve with the plugin loaded and not selected; the compute apps nvidia-smi lists
has context && for build in new old; do
  dir=${!build}
  "$ex1" -n 400000 -eps_type krylovschur -eps_max_it 300 -dll_append "$dir/libslepccudalanczos.so" >"$out/logs/context-$build.log" 2>&1 &
  pid=$!
  sleep 2
  apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>&1 | tr '\n' ' ')
  held=false
  grep -qw "$pid" <<<"$apps" && held=true
  alive=false
  kill -0 "$pid" 2>/dev/null && alive=true
  wait "$pid"
  echo "{\"part\":\"context\",\"plugin\":\"$build\",\"alive_when_sampled\":$alive,\"context\":$held,\"apps\":\"$apps\"}" >>"$jsonl"
done

first() { # NAME LIBDIR BENCH ARGS...: one fresh process's bench_eps -user_times line
  local name=$1 libdir=$2 bench=$3; shift 3
  LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 240 "$bench" "$@" >"$out/logs/$name.log" 2>&1
  local rc=$?
  grep '^{' "$out/logs/$name.log" | sed "s/^{/{\"part\":\"first\",\"run\":\"$name\",\"rc\":$rc,/" >>"$jsonl"
}

has first && for case in $cases; do
  case $case in
    dense*) devtype=densecuda ;;
    *) devtype=aijcusparse; [ -f "$mats/$case.csr" ] || "$new/bench/peers/gen_matrices" "$mats" "$case" >"$out/logs/gen-$case.log" 2>&1 ;;
  esac
  common=(-case "$case" -dir "$mats" -k "$k" -tol 1e-8 -user_times -user_times_reps 1)
  for r in $(seq "$runs"); do
    for build in new old; do
      dir=${!build}
      if [[ " ${FIRST_PETSC:-3.18 3.26} " == *" 3.18 "* ]]; then
        has option && first "$build-3.18-option-$case-$r" "$dir" "$dir/bench/peers/bench_eps" "${common[@]}" -eps_type cudalanczos
        has code && first "$build-3.18-code-$case-$r" "$dir" "$dir/bench/peers/bench_eps" "${common[@]}"
      fi
      [ -n "$new326" ] && [[ " ${FIRST_PETSC:-3.18 3.26} " == *" 3.26 "* ]] || continue
      dir326=${build}326
      dir326=${!dir326}
      for mat in ${MATS326:-device}; do
        mopt=(); [ "$mat" = host ] || mat=$devtype mopt=(-mat_type "$devtype" -vec_type cuda)
        has option && first "$build-3.26-$mat-option-$case-$r" "$dir326/lib:$dir326" "$dir326/bench/peers/bench_eps" "${common[@]}" "${mopt[@]}" \
          -use_gpu_aware_mpi 0 -eps_type cudalanczos
        has code && first "$build-3.26-$mat-code-$case-$r" "$dir326/lib:$dir326" "$dir326/bench/peers/bench_eps" "${common[@]}" "${mopt[@]}" \
          -use_gpu_aware_mpi 0
      done
    done
  done
done
python3 "$(dirname "$0")/load_cost_report.py" "$jsonl" >"$out/load_cost.md"
cat "$out/load_cost.md"
echo "wrote $jsonl ($(wc -l <"$jsonl") lines) and $out/load_cost.md"
