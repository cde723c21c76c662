#!/usr/bin/env bash
# Runs make targets one after the other, each to its end even when an earlier one failed (a failing real
# part does not hide the complex one), then prints one summary line per part and fails if any part did.
#
#   tests/run_parts.sh TARGET...     e.g. test-real test-complex (what `make test` runs)
#
# Each target's recipe ends in tests/run_part.sh, which writes the part's line; a target that stops before
# it (a failed build or PETSc build) is named with its exit status instead.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.."
summary=$(mktemp "${TMPDIR:-/tmp}/cudalanczos-summary.XXXXXX")
trap 'rm -f "$summary"' EXIT
export CUDALANCZOS_TEST_SUMMARY=$summary

failed=0
start=$SECONDS
for target in "$@"; do
  lines_before=$(wc -l <"$summary")
  part_start=$SECONDS
  make --no-print-directory "$target"
  rc=$?
  ((rc == 0)) || failed=1
  if (($(wc -l <"$summary") == lines_before)); then
    echo "$target: FAILED before its tests ran (make exit $rc after $((SECONDS - part_start)) s: see the build output above)" >>"$summary"
  fi
done

echo
echo "=== test summary ($((SECONDS - start)) s) ==="
cat "$summary"
exit $failed
