#!/usr/bin/env bash
# Thousands of eigenpairs of a 10^6-row sparse Hamiltonian on the GPU host: the largest NEV eigenvalues of
# the 3-D Anderson model (gen_matrices' "anderson": L = 100, W = 16.5, periodic, seed 1; 7 entries a row),
# each solved by
#   cudalanczos   -eps_type cudalanczos, PETSc/SLEPc 3.26.1 with CUDA, the matrix as aijcusparse
#   krylovschur   SLEPc 3.26.1's Krylov-Schur on the GPU: -mat_type aijcusparse -vec_type cuda
# with SLEPc's default dimensions for both (nev >= 500: ncv = nev + 500, mpd = 500). bench_eps runs a short
# warm-up solve (2 restarts: the upload, the allocations, the kernels) and then the timed solve
# (EPSSetUp + EPSSolve, stopped after CAP seconds); its JSON line has the time, the products, the
# restarts, the converged count and the largest true residual ||A x - lambda x|| / |lambda| over the
# wanted pairs, and `eigs` the first 64 eigenvalues.
#
#   run_many.sh CARRY326 OUT
#
# CARRY326: `make gpu-pack BUILD=build-petsc-cuda`'s folder with petsc-libs.tar.xz unpacked into
# CARRY326/lib. Source .gpu-host/env.sh first. Environment: NEVS ("1000 5000"), SOLVERS ("cudalanczos
# krylovschur"), CAP per solve in seconds (600), TOL (1e-8), OURS_OPTIONS (more cudalanczos options),
# GPU_OPTIONS (the device-Mat options; "" runs on host Mats, for a smoke test without a GPU), MEDIUM=1 for
# gen_matrices' --medium size (64 000 rows), NP (1) MPI ranks per solve, one GPU each (the node-local
# rank's: run it on a host with NP GPUs). Output: OUT/many.jsonl (one line per run), OUT/logs/.
set -uo pipefail
usage="usage: run_many.sh CARRY326 OUT"
c326=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
nevs=${NEVS:-1000 5000}; solvers=${SOLVERS:-cudalanczos krylovschur}; cap=${CAP:-600}; tol=${TOL:-1e-8}
mats=${BENCH_SCRATCH:-/tmp/cudalanczos-bench/mats}${MEDIUM:+-medium}
mkdir -p "$out/logs" "$mats"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH="$c326/lib:$c326:${LD_LIBRARY_PATH:-}"
[ -x "$c326/bench/peers/bench_eps" ] || { echo "run_many.sh: no $c326/bench/peers/bench_eps" >&2; exit 2; }
[ -f "$mats/anderson.csr" ] || "$c326/bench/peers/gen_matrices" "$mats" ${MEDIUM:+--medium} anderson >"$out/logs/gen-anderson.log" 2>&1
jsonl=$out/many.jsonl
: >"$jsonl"

gpu=${GPU_OPTIONS-"-mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0"}
launch=()
[ "${NP:-1}" -gt 1 ] && launch=(mpiexec -n "$NP" --bind-to none)
for nev in $nevs; do
  for s in $solvers; do
    name=$s-nev$nev${NP:+-np$NP}
    common=(-case anderson -dir "$mats" -k "$nev" -tol "$tol" -cap "$cap" -warmup short -eps_view)
    case $s in
      cudalanczos) opts=(-eps_type cudalanczos $gpu ${OURS_OPTIONS:-}) ;; # bench_eps registers the plugin
      krylovschur) opts=(-eps_type krylovschur $gpu) ;;
      *) echo "run_many.sh: unknown solver $s" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    timeout $((3 * cap + 120)) "${launch[@]}" "$c326/bench/peers/bench_eps" "${common[@]}" "${opts[@]}" >"$out/logs/$name.log" 2>&1
    rc=$?
    grep '^{' "$out/logs/$name.log" | sed "s/^{/{\"run\":\"$name\",\"rc\":$rc,\"wall_s\":$(($(date +%s) - start)),/" >>"$jsonl"
    [ $rc -eq 0 ] || echo "{\"run\":\"$name\",\"rc\":$rc,\"status\":\"failed\"}" >>"$jsonl"
    echo "$name: rc $rc, $(($(date +%s) - start)) s"
  done
done
