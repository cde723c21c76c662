#!/usr/bin/env bash
# PETSCDIFF wrapper for SLEPc's test harness (run_slepc_tests.sh exports PETSCDIFF=<this file>).
#
# The harness runs "$PETSCDIFF [petscdiff options] REFERENCE OUTPUT" for every diff. This wrapper
# rewrites ONE kind of line in both files and hands them to the real petscdiff with the same options
# (a test's own filters, given with -F/-f, still apply after ours):
#
#   SOLVER_NAME_FILTER: the word after "Solution method:" at the start of a line becomes "<solver>".
#
# Many SLEPc examples print " Solution method: krylovschur" (the EPS type) in their reference output;
# under -eps_type cudalanczos that line names our type. Nothing else is touched: no other line, no
# number, no eigenvalue. Files that do not exist and the -m/-M (replace reference) modes are passed
# through unchanged.
set -u

SOLVER_NAME_FILTER='s/^\([[:space:]]*Solution method:[[:space:]]*\)[^[:space:]]*/\1<solver>/'

real=${CUDALANCZOS_REAL_PETSCDIFF:?CUDALANCZOS_REAL_PETSCDIFF must name the real petscdiff}

args=("$@")
n=${#args[@]}
if ((n < 2)); then exec "$real" "$@"; fi
ref=${args[n - 2]}
out=${args[n - 1]}
for a in "${args[@]:0:n-2}"; do
  case $a in -m | -M) exec "$real" "$@" ;; esac
done
if [[ ! -f $ref || ! -f $out ]]; then exec "$real" "$@"; fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/petscdiff_filter.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sed -e "$SOLVER_NAME_FILTER" "$ref" >"$tmp/reference"
sed -e "$SOLVER_NAME_FILTER" "$out" >"$tmp/output"
"$real" "${args[@]:0:n-2}" "$tmp/reference" "$tmp/output"
