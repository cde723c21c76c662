#!/usr/bin/env bash
# cudalanczos with several option sets on one of the suite's matrices, side by side in one run:
#
#   bench/peers/run_variants.sh BUILD_OR_CARRY_DIR OUT_FILE CASE K[,K...] "OPTIONS" ["OPTIONS" ...]
#
# e.g. run_variants.sh gpucarry $OUT/v.jsonl powerlaw 10,50 "" "-eps_cudalanczos_reorthog partial" "-eps_ncv 48"
# Each option set is one bench_eps process (an untimed warm-up solve, then the timed ones); its JSON
# lines go to OUT_FILE with the option set added as "variant". The sparse matrices are generated once
# into ${VARIANT_MATRICES:-/tmp/cudalanczos-matrices}; dense cases need nothing. Which options were
# tried, and what came of it, goes with the results (bench/results/).
set -uo pipefail
bin=${1:?usage: run_variants.sh BUILD_OR_CARRY_DIR OUT_FILE CASE K[,K...] OPTIONS...}
out=${2:?usage: run_variants.sh BUILD_OR_CARRY_DIR OUT_FILE CASE K[,K...] OPTIONS...}
case=${3:?usage: run_variants.sh BUILD_OR_CARRY_DIR OUT_FILE CASE K[,K...] OPTIONS...}
ks=${4:?usage: run_variants.sh BUILD_OR_CARRY_DIR OUT_FILE CASE K[,K...] OPTIONS...}
shift 4
[ $# -gt 0 ] || { echo "run_variants.sh: no option sets (give \"\" for the defaults)" >&2; exit 2; }
mats=${VARIANT_MATRICES:-/tmp/cudalanczos-matrices}
which=largest
case $case in
*-smallest) which=smallest; case=${case%-smallest} ;;
esac
if [[ $case != dense* ]] && [ ! -f "$mats/$case.csr" ]; then
  mkdir -p "$mats" && "$bin/bench/peers/gen_matrices" "$mats" "$case" >&2 || exit 1
fi
status=0
for options in "$@"; do
  # shellcheck disable=SC2086 # an option set is split into words on purpose
  lines=$("$bin/bench/peers/bench_eps" -case "$case" -dir "$mats" -k "$ks" -which "$which" -eps_type cudalanczos $options 2>&1)
  rc=$?
  [ $rc -eq 0 ] || status=1
  grep '^{' <<<"$lines" | sed "s|}\$|,\"variant\":\"${options//|/ }\",\"rc\":$rc}|" >>"$out"
  [ $rc -eq 0 ] || { echo "run_variants.sh: '$options' failed (rc $rc):" >&2; tail -5 <<<"$lines" >&2; }
done
exit $status
