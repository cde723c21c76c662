#!/usr/bin/env bash
# Generalized Hermitian problems on the GPU host, side by side: examples/vibration_modes (a membrane's
# K x = lambda M x, Q1 elements) with cudalanczos and SLEPc 3.26.1's krylovschur, both on the device Mats
# (-mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0), the same ST, KSP and PC:
#   sinvert   the lowest nev modes, STSINVERT at 0, consistent mass, LU by cuSPARSE (solves on the device)
#   lumped    the largest nev, STSHIFT (B^-1 A), the lumped (diagonal) mass, Jacobi (exact for a diagonal B)
# and cudalanczos without the verification. Each run is one process solving -solves N times on one EPS: the
# first solve of the process, then the median re-solve.
#
#   run_ghep.sh CARRY OUT [MX MY NEV SOLVES]      defaults 1000 1000 10 5
#
# PROBLEMS="sinvert lumped" (the default) chooses the problems; a second call with other sizes appends to
# OUT/ghep.txt. LOG_VIEW=1 adds -log_view to every solver, for its solve counts and event times (the logs'
# names end in -logview); time with LOG_VIEW=0, the default, so that no solver's times carry the logging.
# CARRY: `make gpu-pack BUILD=build-petsc-cuda`'s folder with petsc-libs.tar.xz unpacked into CARRY/lib.
# Each process's output (with -eps_view / -log_view's solve counts) in OUT/logs/, a summary in OUT/ghep.txt.
set -uo pipefail
carry=$(cd "${1:?usage: run_ghep.sh CARRY OUT [MX MY NEV SOLVES]}" && pwd); out=${2:?}
mx=${3:-1000}; my=${4:-1000}; nev=${5:-10}; solves=${6:-5}
mkdir -p "$out/logs"
export LD_LIBRARY_PATH="$carry/lib:$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
vm=$carry/examples/vibration_modes
gpu="-mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0"
declare -A problem=(
  [sinvert]="-st_type sinvert -eps_target 0 -eps_target_magnitude -st_ksp_type preonly -st_pc_type lu -st_pc_factor_mat_solver_type cusparse"
  [lumped]="-lumped -st_type shift -eps_largest_real -st_ksp_type preonly -st_pc_type jacobi"
)
declare -A solver=(
  [cudalanczos]="-eps_type cudalanczos -eps_view"
  [cudalanczos-noverify]="-eps_type cudalanczos -eps_cudalanczos_verify 0 -eps_view"
  [krylovschur]="-eps_type krylovschur -bv_type svec"
)
logview=""; suffix=""
if [ "${LOG_VIEW:-0}" = 1 ]; then logview="-log_view"; suffix="-logview"; fi
for p in ${PROBLEMS:-sinvert lumped}; do
  for s in krylovschur cudalanczos cudalanczos-noverify; do
    name=$p-$s-${mx}x$my$suffix
    timeout 300 "$vm" -mx "$mx" -my "$my" -nev "$nev" -solves "$solves" -eps_tol 1e-8 ${problem[$p]} ${solver[$s]} $logview $gpu \
      >"$out/logs/$name.log" 2>&1
    rc=$?
    {
      echo "== $name (rc $rc): vibration_modes -mx $mx -my $my -nev $nev -solves $solves -eps_tol 1e-8 ${problem[$p]} ${solver[$s]} $logview $gpu"
      grep -E '^membrane|^solve times|^ +0 ' "$out/logs/$name.log"
      grep -E 'last solve:|by part:|products with B|operator:|generalized problem' "$out/logs/$name.log" | sort -u
      grep -E '^(KSPSolve|MatSolve|MatMult|PCApply|STApply|EPSSolve|BVDotVec|BVOrthogonalizeV|EPSCUDALanczos[A-Za-z]*) ' "$out/logs/$name.log" | awk '{print $1, "count", $2, "time", $4}'
    } >>"$out/ghep.txt"
  done
done
