#!/usr/bin/env bash
# The GPU suite, for the GPU host (CI has no GPU and skips the CUDA tests by name).
#
#   tests/gpu/run_gpu_suite.sh BUILD_DIR [LOG_DIR]
#
# 1. Runs every test binary under BUILD_DIR/tests/*/ directly (ctest's files bake in absolute paths of
#    the machine that configured the build, so the binaries are found and run here instead).
# 2. Runs the CUDA test binaries (BUILD_DIR/tests/cuda/test_cuda_*) under compute-sanitizer memcheck
#    (with leak checking: every device allocation is RAII) and racecheck (shared-memory hazards), when
#    compute-sanitizer is on PATH or in /usr/local/cuda/bin. The "Large" cases (vectors past the L2) and
#    the whole solves are left out there: the sanitizers slow kernels down 10-100x and the small cases
#    run the same code paths. So are the CudaErrors tests, whose planted failing API calls the sanitizer
#    would (rightly) report. Race hazards that racecheck places wholly inside cuSPARSE's or cuBLAS's
#    own kernels are listed but not counted as failures (seen: cusparse::csrmv_v3_kernel, CUDA 13.0).
# Prints a summary table and exits non-zero if any binary failed, any test failed or a sanitizer found
# an error. Full logs go to LOG_DIR (default BUILD_DIR/gpu-suite-logs).
#
# Environment: SUITE_PARTS (which of "binaries" (1.) and "sanitizers" (2.) to run, default both),
# SANITIZER_TOOLS (default "memcheck racecheck"), SANITIZER_FILTER (gtest filter under the sanitizers),
# RACECHECK_FILTER (under racecheck; default SANITIZER_FILTER without the *Scaled* sweeps, which run the
# same shared-memory kernels as the unscaled cases 2000 times over, e = -1000..1000: under racecheck they
# alone took the suite past its time), SANITIZER_TIMEOUT (seconds per binary and tool, default 300),
# TEST_TIMEOUT (seconds per binary, default 600), SUITE_FOLDERS (which folders of BUILD_DIR/tests the
# binaries of 1. come from, default "cuda petsc"), SUITE_SKIP (names of binaries 1. leaves out, e.g.
# "test_backend_equivalence", which another call runs alone). Binaries that need
# PETSc/MPI find them through . DIR/env.sh of /work/shared/gpu-host/pack.sh, sourced here when
# GPU_HOST_ENV names it or BUILD_DIR/../.gpu-host/env.sh exists.
set -uo pipefail

build=${1:?usage: run_gpu_suite.sh BUILD_DIR [LOG_DIR]}
build=$(cd "$build" && pwd) || exit 2
logs=${2:-$build/gpu-suite-logs}
mkdir -p "$logs"
sanitizer_filter=${SANITIZER_FILTER:--*Large*:WholeSolve.*:CudaErrors.*}
racecheck_filter=${RACECHECK_FILTER:-$sanitizer_filter:*Scaled*}
parts=${SUITE_PARTS:-binaries sanitizers}
tools=${SANITIZER_TOOLS:-memcheck racecheck}
want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
sanitizer_timeout=${SANITIZER_TIMEOUT:-300}
test_timeout=${TEST_TIMEOUT:-600}

env_sh=${GPU_HOST_ENV:-$build/../.gpu-host/env.sh}
if [ -f "$env_sh" ]; then
  # shellcheck disable=SC1090
  . "$env_sh"
fi
# The CUDA libraries (cudart, cuBLAS, cuSPARSE) of the host's toolkit, if the loader does not know them.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

echo "== GPU suite: $build ($(date -u '+%Y-%m-%d %H:%M UTC'))"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/   GPU: /'
fi

failures=0
summary=()

# gtest's final lines: "[  PASSED  ] N tests.", "[  SKIPPED ] N tests, ...", "[  FAILED  ] N tests, ..."
count() { grep -E "^\[  $1 *\] [0-9]+ test" "$2" | tail -n 1 | sed -E 's/^\[[^]]*\] ([0-9]+).*/\1/'; }

folders=()
for f in ${SUITE_FOLDERS:-cuda petsc}; do [ -d "$build/tests/$f" ] && folders+=("$build/tests/$f"); done
mapfile -t binaries < <([ ${#folders[@]} -gt 0 ] && find "${folders[@]}" -mindepth 1 -maxdepth 1 -type f -name 'test_*' -perm -u+x | sort |
  while read -r b; do case " ${SUITE_SKIP:-} " in *" $(basename "$b") "*) ;; *) echo "$b" ;; esac; done)
if [ ${#binaries[@]} -eq 0 ]; then
  echo "no test binaries under $build/tests/{${SUITE_FOLDERS:-cuda petsc}}" >&2
  exit 2
fi

want binaries || binaries=()
for bin in "${binaries[@]}"; do
  name=${bin#"$build"/tests/}
  log="$logs/$(echo "$name" | tr '/' '_').log"
  missing=$(ldd "$bin" 2>/dev/null | grep 'not found' | awk '{print $1}' | tr '\n' ' ')
  if [ -n "$missing" ]; then
    summary+=("$(printf '| %-40s | %6s | %6s | %7s | %-28s |' "$name" - - - "MISSING LIBS: $missing")")
    failures=$((failures + 1))
    continue
  fi
  (cd "$(dirname "$bin")" && timeout "$test_timeout" "$bin" --gtest_color=no) >"$log" 2>&1
  rc=$?
  passed=$(count PASSED "$log"); skipped=$(count SKIPPED "$log"); failed=$(count FAILED "$log")
  status=ok
  if [ $rc -ne 0 ]; then
    status="FAILED (exit $rc)"
    [ $rc -eq 124 ] && status="TIMED OUT"
    failures=$((failures + 1))
    grep -E '^\[  FAILED  \] [A-Za-z]' "$log" | sed 's/^/      /' | head -n 20
  fi
  summary+=("$(printf '| %-40s | %6s | %6s | %7s | %-28s |' "$name" "${passed:-0}" "${failed:-0}" "${skipped:-0}" "$status")")
done

sanitizer=$(command -v compute-sanitizer || true)
[ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
san_summary=()
want sanitizers || sanitizer=""
if [ -n "$sanitizer" ]; then
  for bin in "$build"/tests/cuda/test_cuda_*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    for tool in $tools; do
      log="$logs/${name}.${tool}.log"
      extra=()
      filter=$sanitizer_filter
      [ "$tool" = memcheck ] && extra=(--leak-check full)
      [ "$tool" = racecheck ] && filter=$racecheck_filter
      (cd "$(dirname "$bin")" && timeout "$sanitizer_timeout" "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 97 \
        "$bin" --gtest_color=no "--gtest_filter=$filter") >"$log" 2>&1
      rc=$?
      errors=$(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tail -n 1 | sed 's/^========= //')
      status=ok
      # racecheck names the kernel on each "Error: Race reported ..." line. Hazards that lie wholly
      # inside the vendor libraries' own kernels (cuSPARSE, cuBLAS) are not ours to fix: they are
      # listed and counted apart, and fail nothing as long as the tests themselves passed.
      vendor_only=no
      if [ $rc -eq 97 ] && [ "$tool" = racecheck ] && ! grep -q '^\[  FAILED  \]' "$log"; then
        races=$(grep -cE '^========= Error: Race' "$log")
        ours=$(grep -E '^========= Error: Race' "$log" | grep -cvE 'at void (cusparse|cublas|cublasLt)[A-Za-z0-9_]*::' || true)
        [ "$races" -gt 0 ] && [ "$ours" -eq 0 ] && vendor_only=yes
      fi
      if [ $vendor_only = yes ]; then
        status="ok (all $races in vendor kernels)"
        grep -E '^========= Error: Race' "$log" | grep -oE 'at void [A-Za-z0-9_]+::[A-Za-z0-9_]+' | cut -c9- | sort | uniq -c |
          sed 's/^/      vendor-internal race hazard reports: /'
      elif [ $rc -ne 0 ]; then
        status="FAILED (exit $rc)"
        [ $rc -eq 124 ] && status="TIMED OUT after ${sanitizer_timeout}s"
        [ $rc -eq 97 ] && status="ERRORS FOUND"
        failures=$((failures + 1))
        grep -E '^========= (Invalid|Error|Race|.*hazard|Leaked)' "$log" | sort | uniq -c | head -n 10 | sed 's/^/      /'
      fi
      san_summary+=("$(printf '| %-22s | %-9s | %-40s | %-32s |' "$name" "$tool" "${errors:-no summary}" "$status")")
    done
  done
fi

echo
if want binaries; then
  echo "## Test binaries"
  echo
  printf '| %-40s | %6s | %6s | %7s | %-28s |\n' binary passed failed skipped status
  echo "|------------------------------------------|-------:|-------:|--------:|------------------------------|"
  printf '%s\n' "${summary[@]}"
  echo
fi
if [ -n "$sanitizer" ]; then
  echo "## compute-sanitizer ($("$sanitizer" --version | grep -o 'Version [^ ]*' | head -n 1); filter $sanitizer_filter; racecheck $racecheck_filter)"
  echo
  printf '| %-22s | %-9s | %-40s | %-32s |\n' binary tool summary status
  echo "|------------------------|-----------|------------------------------------------|----------------------------------|"
  printf '%s\n' "${san_summary[@]}"
elif want sanitizers; then
  echo "compute-sanitizer not found: memcheck and racecheck NOT run"
fi
echo
if [ $failures -ne 0 ]; then
  echo "GPU SUITE FAILED: $failures problem(s); logs in $logs"
  exit 1
fi
echo "GPU SUITE PASSED; logs in $logs"
