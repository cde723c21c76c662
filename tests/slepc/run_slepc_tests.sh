#!/usr/bin/env bash
# Runs SLEPc 3.18's own EPS tests and tutorials (Debian package libslepc3.18-dev-examples) through
# SLEPc's test harness with the cudalanczos plugin loaded and selected:
#
#   tests/slepc/run_slepc_tests.sh [PLUGIN_SO]
#
# PLUGIN_SO defaults to build/libslepccudalanczos.so under the repository root (with
# CUDALANCZOS_SCALAR=complex: build-complex/libslepccudalanczos_complex.so). The tests to run are
# listed in tests/slepc/included.txt, the ones left out (with the reason) in tests/slepc/excluded.txt;
# see tests/slepc/README.md. The last line printed is "N passed, M failed"; the exit status is 0 only
# when every included test passed.
#
# Scalar type: a plugin built against a complex PETSc is named libslepccudalanczos_complex.so, and the
# suite then runs in the complex setting: the harness's programs are built against the complex
# PETSc/SLEPc (for Debian's harness, which names the real ones: x86_64-linux-gnu-complex instead of
# -real), so SLEPc's tests take their complex variants, and the list entries marked "complex:" apply
# instead of those marked "real:".
#
# Environment (all optional):
#   SLEPC_EXAMPLES  directory holding gmakefile.test (default /usr/share/slepc/3.18/share/slepc/examples)
#   CUDALANCZOS_SCALAR  real or complex: the scalar type when the plugin's name does not say it
#   SUITE_SOLVER    run the included tests with this EPS type instead (e.g. krylovschur), without the
#                   plugin (PLUGIN_SO then only names the scalar type and need not exist): shows that
#                   the harness, the lists and the references work in a setting, apart from our solver;
#                   SUITE_SOLVER=own runs each test as SLEPc ships it (its own solver, no extra options)
#   JOBS            parallel make jobs (default 2)
#   SLEPC_TESTDIR   work directory (default: a new temporary directory, removed at the end unless
#                   KEEP=1 or a test failed)
#   KEEP=1          keep the work directory
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
fail_early() { # MESSAGE
  echo "run_slepc_tests.sh: $1" >&2
  echo "0 passed, 1 failed"
  exit 2
}
solver=${SUITE_SOLVER:-cudalanczos}
scalar=${CUDALANCZOS_SCALAR:-}
case $scalar in
  complex) plugin_arg=${1:-$root/build-complex/libslepccudalanczos_complex.so} ;;
  real | "") plugin_arg=${1:-$root/build/libslepccudalanczos.so} ;;
  *) fail_early "CUDALANCZOS_SCALAR must be real or complex, not '$scalar'" ;;
esac
# PETSc finds a plugin's registration function by its file name, up to the first dot after "lib"
# (libslepccudalanczos_complex.so: PetscDLLibraryRegister_slepccudalanczos_complex): the copy below
# keeps the name, without a version suffix.
plugin_name=$(basename "$plugin_arg")
plugin_name=${plugin_name%%.so*}.so
if [[ -z $scalar ]]; then
  scalar=real
  [[ $plugin_name == *_complex.so ]] && scalar=complex
fi
if [[ $solver == cudalanczos ]]; then
  [[ -e $plugin_arg ]] || fail_early "plugin not found: $plugin_arg (build it first)"
  plugin=$(realpath -s "$plugin_arg") # absolute, symbolic links kept (the copy below follows them)
  # Debian's two PETSc libraries differ in name: a plugin of the other scalar type would load both
  needed=$(readelf -d "$plugin" 2>/dev/null | grep -o 'libpetsc_\(real\|complex\)' | head -n1)
  [[ -z $needed || $needed == "libpetsc_$scalar" ]] ||
    fail_early "$plugin links $needed, but the suite runs with $scalar scalars (CUDALANCZOS_SCALAR, or the plugin's name: *_complex.so for complex)"
else
  plugin="(none: SUITE_SOLVER=$solver)"
fi

examples=${SLEPC_EXAMPLES:-/usr/share/slepc/3.18/share/slepc/examples}
gmakefile=$examples/gmakefile.test
# Every input of the harness, checked before anything runs: a missing one would otherwise show up as a
# suite of "not run" lines. Each names the file and the Debian package (or the build) that provides it.
missing_input() { # FILE PROVIDER
  echo "run_slepc_tests.sh: $1 not found; it comes with $2 ('make deps' installs it)" >&2
  echo "0 passed, 1 failed"
  exit 2
}
[[ -f $gmakefile ]] || missing_input "$gmakefile" "libslepc3.18-dev-examples (or SLEPC_EXAMPLES=<folder with gmakefile.test>)"
petsc_dir=$(sed -n 's/^PETSC_DIR *[:?]*= *//p' "$gmakefile" | head -n1)
[[ -n $petsc_dir ]] || petsc_dir=${PETSC_DIR:-}
[[ -d $petsc_dir ]] || missing_input "PETSC_DIR ($gmakefile names none that exists: '$petsc_dir')" "libpetsc-real3.18-dev"
slepc_dir=$(sed -n 's/^SLEPC_DIR *[:?]*= *//p' "$gmakefile" | head -n1)
[[ -n $slepc_dir ]] || slepc_dir=${SLEPC_DIR:-}
# The scalar type of a PETSc, from its petscconf.h; the harness picks each test's variant by it
# ("requires: complex" / "!complex" in the test blocks).
scalar_of() { grep -qs '^#define PETSC_USE_COMPLEX 1' "$1/include/petscconf.h" && echo complex || echo real; }
harness_scalar=$(scalar_of "$petsc_dir")
if [[ $harness_scalar != "$scalar" ]]; then
  # Debian installs both scalar types side by side (.../petsc3.18/x86_64-linux-gnu-real and -complex,
  # the same for SLEPc) and one harness, which names the real ones; the harness builds and runs its
  # tests against whichever PETSC_DIR and SLEPC_DIR are given to make. Another harness (a PETSc built
  # from source) serves its own scalar type only: SLEPC_EXAMPLES must then name one of the right type.
  other_petsc=${petsc_dir%-"$harness_scalar"}-$scalar
  other_slepc=${slepc_dir%-"$harness_scalar"}-$scalar
  if [[ $other_petsc != "$petsc_dir" && -d $other_slepc && $(scalar_of "$other_petsc") == "$scalar" ]]; then
    petsc_dir=$other_petsc slepc_dir=$other_slepc
  else
    missing_input "a PETSc with $scalar scalars for the harness ($gmakefile is for $harness_scalar: $petsc_dir; set SLEPC_EXAMPLES to a $scalar SLEPc's examples)" \
      "libpetsc-${scalar}3.18-dev and libslepc-${scalar}3.18-dev"
  fi
fi
[[ -d $slepc_dir ]] || missing_input "SLEPC_DIR ($gmakefile names none that exists: '$slepc_dir')" "libslepc-${scalar}3.18-dev"
# given to every make call: they override the harness's own (plain assignments in gmakefile.test)
harness_dirs=("PETSC_DIR=$petsc_dir" "SLEPC_DIR=$slepc_dir")
[[ -f $petsc_dir/share/petsc/examples/config/gmakegentest.py ]] ||
  missing_input "$petsc_dir/share/petsc/examples/config/gmakegentest.py" "libpetsc3.18-dev-examples"
# Our options must come after each test's own, so that -eps_type cudalanczos wins. PETSc 3.18's harness
# appends EXTRA_OPTIONS (-e) to a test's arguments; newer ones put -e first and append -E instead.
if grep -q 'final_args=' "$petsc_dir/share/petsc/examples/config/petsc_harness.sh" 2>/dev/null; then
  options_last=final
else
  options_last=extra
fi
real_petscdiff=$petsc_dir/lib/petsc/bin/petscdiff
[[ -x $real_petscdiff ]] || missing_input "$real_petscdiff" "libpetsc-${scalar}3.18-dev"
for d in src/eps/tests src/eps/tutorials; do
  [[ -d $examples/$d ]] || missing_input "$examples/$d (SLEPc's example sources)" "libslepc3.18-dev-examples"
done
jobs=${JOBS:-2}

if [[ -n ${SLEPC_TESTDIR:-} ]]; then
  testdir=$SLEPC_TESTDIR
  mkdir -p "$testdir"
else
  testdir=$(mktemp -d "${TMPDIR:-/tmp}/cudalanczos-slepc-tests.XXXXXX")
fi
testdir=$(realpath "$testdir")

# A private copy of the plugin: the build directory may be rebuilt while the tests run. The file name
# stays the plugin's own (PETSc derives the registration symbol from it).
if [[ $solver == cudalanczos ]]; then
  mkdir -p "$testdir/plugin"
  cp -L "$plugin" "$testdir/plugin/$plugin_name"
fi

# --- the test lists -------------------------------------------------------------------------------
# included.txt: "NAME [EXTRA OPTIONS...]  # comment"; excluded.txt: "NAME  [category] reason". A line
# may start with "real:" or "complex:": it applies to that scalar type only (a test SLEPc runs in one
# of them, or with another reason or options there); "3.18:" or "newer:", to Debian's 3.18 harness or to
# another one only (a test whose arguments changed between releases). Prints "NAME REST" for this run.
list_entries() { # FILE
  local line first rest
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    read -r first rest <<<"$line"
    [[ -z ${first:-} ]] && continue
    case $first in
      real: | complex:)
        [[ $first == "$scalar:" ]] || continue
        read -r first rest <<<"$rest"
        ;;
      3.18: | newer:)
        [[ $first == "$([[ $examples == /usr/share/slepc/3.18/share/slepc/examples ]] && echo 3.18 || echo newer):" ]] || continue
        read -r first rest <<<"$rest"
        ;;
    esac
    echo "$first${rest:+ $rest}"
  done <"$1"
}
names=()
declare -A opts_of=()
while read -r name rest; do
  # SUITE_SOLVER: a list's "cudalanczos" as an option value (-type cudalanczos) names that solver
  [[ $solver == own ]] && rest=""
  [[ $solver != cudalanczos && $solver != own ]] && rest=$(sed -E "s/(^|[[:space:]])cudalanczos([[:space:]]|\$)/\1$solver\2/g" <<<"${rest:-}")
  names+=("$name")
  opts_of[$name]=${rest:-}
done < <(list_entries "$here/included.txt")
excluded_entries=$(list_entries "$here/excluded.txt")

# Groups of tests that share the same per-test options: one harness invocation each.
declare -A group_of=()
group_keys=()
for name in "${names[@]}"; do
  key="+${opts_of[$name]}" # "+": bash refuses an empty key
  if [[ -z ${group_of[$key]+x} ]]; then
    group_of[$key]=""
    group_keys+=("$key")
  fi
  group_of[$key]+=" $name"
done

# --- the environment of the harness ---------------------------------------------------------------
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Tests with 4 ranks (test32_3/_4 at nsize 4) on a machine with fewer cores: Debian's harness runs
# mpiexec with oversubscription allowed, a PETSc built from source (3.26.1) does not.
export OMPI_MCA_rmaps_base_oversubscribe=1
# Loops in a test's arguments ("-eps_type {{krylovschur arnoldi}}") become shell loops over the
# variable named after the option, whose value is appended AFTER EXTRA_OPTIONS; the harness takes the
# list from the environment when the variable is set there. One pass with our type instead of one per
# listed solver: eps_type for -eps_type, type for test4's -type.
[[ $solver != own ]] && export eps_type=$solver type=$solver
# Our diff wrapper: filters the "Solution method: <type>" line only (see petscdiff_filter.sh).
export PETSCDIFF=$here/petscdiff_filter.sh
export CUDALANCZOS_REAL_PETSCDIFF=$real_petscdiff
# -eps_view_pre writes each solver's view into the test's run directory: the proof that the test really
# ran cudalanczos (a test that sets its type in code would otherwise pass with another solver).
if [[ $solver == own ]]; then
  base_options=""
elif [[ $solver == cudalanczos ]]; then
  base_options="-dll_append $testdir/plugin/$plugin_name -eps_type cudalanczos -eps_view_pre ascii:cudalanczos_view.txt::append"
else
  base_options="-eps_type $solver -eps_view_pre ascii:cudalanczos_view.txt::append"
fi
# Newer harnesses run with -options_left: the options of the solver a test names (-eps_lanczos_reorthog,
# -eps_gd_blocksize, ...) go unused once our type replaces it, and the warning would differ from the
# reference. That the solver really was ours is checked through cudalanczos_view.txt below.
[[ $options_last == final ]] && base_options+=" -options_left 0"

echo "SLEPc test suite with $([[ $solver == own ]] && echo "each test's own solver" || echo "$solver"), $scalar scalars"
echo "  plugin:   $plugin"
echo "  harness:  $gmakefile"
echo "            PETSC_DIR=$petsc_dir SLEPC_DIR=$slepc_dir"
echo "  work dir: $testdir"
echo "  tests:    ${#names[@]} included ($(grep -c . <<<"$excluded_entries") excluded, see tests/slepc/excluded.txt)"

# The solver check reads cudalanczos_view.txt (appended to): none may survive from an earlier run.
find "$testdir" -name cudalanczos_view.txt -delete
tap_all=$testdir/all_tap.log
: >"$tap_all"
: >"$testdir/make.log"
start=$(date +%s)
g=0
for key in "${group_keys[@]}"; do
  g=$((g + 1))
  gs=${group_of[$key]# }
  extra=${key#+}
  echo "  [$g/${#group_keys[@]}] $(wc -w <<<"$gs") test(s)${extra:+ with extra options: $extra}"
  if [[ $options_last == extra ]]; then
    make -j"$jobs" -f "$gmakefile" "${harness_dirs[@]}" test gs="$gs" TESTDIR="$testdir" \
      EXTRA_OPTIONS="$base_options${extra:+ $extra}" >>"$testdir/make.log" 2>&1
  else # -E: after the test's own arguments (TESTFLAGS replaces the harness's default "-j" too: keep it)
    make -j"$jobs" -f "$gmakefile" "${harness_dirs[@]}" test gs="$gs" TESTDIR="$testdir" \
      TESTFLAGS="-j -E '$base_options${extra:+ $extra}'" >>"$testdir/make.log" 2>&1
  fi
  # every invocation starts a fresh TAP log (pre-clean): keep what this one wrote
  cat "$testdir"/test_*_tap.log >>"$tap_all" 2>/dev/null
done
elapsed=$(($(date +%s) - start))

# --- results --------------------------------------------------------------------------------------
run_dir() { # NAME -> the harness's run directory of that test
  local pkg=${1%%-*} short=${1#*-}
  echo "$testdir/${pkg//_//}/run$short"
}

# The tests the harness knows in this SLEPc build. The lists were made for Debian's 3.18, which has them
# all: there a listed test that does not run is a failure. Another build (tools/petsc-cuda.sh's 3.26.1:
# no ARPACK, ScaLAPACK or Fortran) may lack a test or skip it: that is reported as skipped, with why.
available=$(make -s -f "$gmakefile" "${harness_dirs[@]}" print-test gs='eps_tests-% eps_tutorials-%' TESTDIR="$testdir" 2>/dev/null | tr ' ' '\n' | grep . | sort -u)
debian_harness=false
[[ $examples == /usr/share/slepc/3.18/share/slepc/examples ]] && debian_harness=true

passed=0
failed=0
skipped=0
failures=()
printf '\n%-44s %s\n' "test" "result"
for name in "${names[@]}"; do
  # TAP lines: " ok LABEL", "not ok LABEL # why", " ok LABEL # SKIP why"; LABEL is the name, maybe
  # followed by +loopvar-value, or diff-NAME...
  lines=$(grep -E "^(not)? ?ok (diff-)?${name}(\+[^ ]*)?( |$)" "$tap_all" || true)
  status=PASS
  why=""
  if [[ -z $lines ]] && ! $debian_harness && ! grep -qx "$name" <<<"$available"; then
    status=SKIP why="not in this SLEPc build's harness (a package the test needs is missing, or the test was renamed)"
  elif [[ -z $lines ]]; then
    status=FAIL why="not run (compile error or unknown test name; see $testdir/make.log)"
  elif grep -q '^not ok' <<<"$lines"; then
    if grep -q '^not ok diff-' <<<"$lines"; then why="output differs from SLEPc's reference"; fi
    if grep -q '^not ok [^d]' <<<"$lines"; then why="run failed${why:+; }$why"; fi
    status=FAIL
  elif ! grep -v '# SKIP' <<<"$lines" | grep -q '^ ok'; then
    status=FAIL why="skipped by the harness: $(grep -m1 -o '# SKIP.*' <<<"$lines")"
    $debian_harness || status=SKIP
  elif [[ $solver != own ]]; then
    view=$(run_dir "$name")/cudalanczos_view.txt
    types=$(grep -A1 '^EPS Object' "$view" 2>/dev/null | sed -n 's/^ *type: *//p' | sort -u | tr '\n' ' ')
    if [[ $types != "$solver " ]]; then
      status=FAIL why="did not run $solver (EPS types seen: ${types:-none})"
    fi
  fi
  if [[ $status == PASS ]]; then
    passed=$((passed + 1))
    printf '%-44s ok\n' "$name"
  elif [[ $status == SKIP ]]; then
    skipped=$((skipped + 1))
    printf '%-44s skipped: %s\n' "$name" "$why"
  else
    failed=$((failed + 1))
    failures+=("$name")
    printf '%-44s FAILED: %s\n' "$name" "$why"
  fi
done

if ((failed > 0)); then
  echo
  echo "=== details of the failed tests (run directories under $testdir/eps) ==="
  for name in "${failures[@]}"; do
    d=$(run_dir "$name")
    echo "--- $name"
    grep -E "^not ok (diff-)?${name}(\+[^ ]*)?( |$)" "$tap_all" | head -n 20
    for f in "$d"/diff-*.out; do [[ -s $f ]] && head -n 30 "$f"; done
    for f in "$d"/*.err "$d"/*.tmp; do
      [[ -s $f ]] && grep -m5 -E 'PETSC ERROR: [^-#[:space:]]|signal|rror' "$f" | grep -v 'Configure options'
    done
  done 2>/dev/null
fi

# Tests of the harness that neither list mentions (new SLEPc version?): informational only.
listed=$( (printf '%s\n' "${names[@]}"; awk 'NF{print $1}' <<<"$excluded_entries") | sort -u)
unlisted=$(comm -13 <(echo "$listed") <(echo "$available") | tr '\n' ' ')
[[ -n $unlisted ]] && echo && echo "note: harness tests in neither list: $unlisted"

echo
echo "excluded tests by reason:"
grep -o '\[[^]]*\]' <<<"$excluded_entries" | sort | uniq -c | sort -rn | sed 's/^/  /'
echo
echo "time: ${elapsed}s; work dir: $testdir"
if ((failed == 0)) && [[ -z ${SLEPC_TESTDIR:-} && ${KEEP:-0} != 1 ]]; then
  rm -rf "$testdir"
  echo "(work dir removed; KEEP=1 keeps it)"
fi
if ((skipped > 0)); then echo "$passed passed, $failed failed, $skipped skipped"; else echo "$passed passed, $failed failed"; fi
((failed == 0))
