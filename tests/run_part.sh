#!/usr/bin/env bash
# One part of `make test`: ctest in a build folder, then SLEPc's own suite with that folder's plugin. Both
# run even when the first fails; the part fails if either did. Prints one summary line at the end (and
# appends it to $CUDALANCZOS_TEST_SUMMARY when that names a file, for tests/run_parts.sh).
#
#   tests/run_part.sh NAME BUILD_DIR [CTEST_ARGUMENTS...]
#     NAME       the part's name in the summary (real, complex, petsc-3.26-real, ...)
#     BUILD_DIR  a configured and built folder; its plugin is libslepccudalanczos(_complex).so there
#   Environment: JOBS (ctest -j, default nproc); SLEPC_EXAMPLES (the harness, see tests/slepc/run_slepc_tests.sh);
#   CUDALANCZOS_SLEPC_SUITE=skip: ctest only (a PETSc whose build the harness's programs cannot match)
set -u
[[ $# -ge 2 ]] || { echo "usage: tests/run_part.sh NAME BUILD_DIR [CTEST_ARGUMENTS...]" >&2; exit 2; }
name=$1 build=$2
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=${JOBS:-$(nproc)}
log=$(mktemp "${TMPDIR:-/tmp}/cudalanczos-part.XXXXXX")
trap 'rm -f "$log"' EXIT

plugin=$build/libslepccudalanczos.so
[[ -e $build/libslepccudalanczos_complex.so ]] && plugin=$build/libslepccudalanczos_complex.so
petsc=$(sed -n 's/^PETSC_VERSION:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)

start=$SECONDS
ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@" 2>&1 | tee "$log"
ctest_rc=${PIPESTATUS[0]}
ctest_time=$((SECONDS - start))
# "100% tests passed, 0 tests failed out of 1550"; skipped and disabled tests count as passed there
read -r ctest_failed ctest_total < <(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$log" | tail -n1)
ctest_skipped=$(grep -cE '\((Skipped|Disabled)\)$' "$log")
if [[ -n ${ctest_total:-} ]]; then
  ctest_summary="ctest $((ctest_total - ctest_failed - ctest_skipped)) passed, $ctest_failed failed, $ctest_skipped skipped"
else
  ctest_summary="ctest did not run to its end (exit $ctest_rc)"
fi

start=$SECONDS
if [[ ${CUDALANCZOS_SLEPC_SUITE:-} == skip ]]; then
  suite_rc=0 suite_summary="not run"
else
  bash "$here/slepc/run_slepc_tests.sh" "$(realpath "$plugin")" 2>&1 | tee "$log"
  suite_rc=${PIPESTATUS[0]}
  suite_summary=$(tail -n1 "$log")
fi
suite_time=$((SECONDS - start))

status=PASSED
((ctest_rc == 0 && suite_rc == 0)) || status=FAILED
line="$name${petsc:+ (PETSc $petsc)}: $status: $ctest_summary (${ctest_time} s); SLEPc suite $suite_summary (${suite_time} s)"
echo
echo "$line"
[[ -n ${CUDALANCZOS_TEST_SUMMARY:-} ]] && echo "$line" >>"$CUDALANCZOS_TEST_SUMMARY"
[[ $status == PASSED ]]
