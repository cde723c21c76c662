#!/usr/bin/env bash
# Everything the GPU host should run after a change (GPU time is scarce):
#
#   tests/gpu/run_all_on_gpu_host.sh CARRY_DIR OUT_DIR [PART]
#
# PART splits the run so that each part fits one device call of at most 600 s (the sum of each part's
# step limits stays below 580 s, so a part always ends with its summary and logs written):
#   tests      every test binary on the GPU, the MPI runs, the demos, the plugin under memcheck
#              (measured 2026-12-01 on an H200: the binaries about 150 s, the rest under 60 s);
#              TESTS_FOLDERS=petsc leaves the CUDA test binaries to the part below, and
#              TESTS_SKIP="test_backend_equivalence" that binary to the part equivalence: a complex
#              carry's tests part ran past its 280 s step with both in it (2026-12-02)
#   cuda       the CUDA test binaries (tests/cuda) alone, in a step of 570 s: a complex carry's
#              test_cuda_backend took 127 s on an H200 (2026-12-02; the real one 27 s), which with the
#              PETSc binaries may not fit the tests part's 250 s step
#   equivalence  test_backend_equivalence alone, in a step of 570 s (a complex carry: about 2.6 s a case
#              on an H200's host, 2026-12-02, 120 cases)
#   memcheck   the CUDA test binaries under compute-sanitizer memcheck (leak checking on)
#   racecheck  the same under racecheck (shared-memory hazards)
#   all        the three in a row (the default; for a host without the 600 s limit)
# Each part writes OUT_DIR/summary.log and OUT_DIR/logs.tar.gz: give each part its own OUT_DIR.
#
# CARRY_DIR holds libslepccudalanczos.so(.0) and the binaries in the build folder's layout
# (tests/*/test_*, examples/*, bench/*, slepc/ex1): `make gpu-pack BUILD=<a CUDA build>` makes it. A
# carry of a complex build holds libslepccudalanczos_complex.so(.0) instead, and examples/tight_binding_flux
# (a complex Hermitian problem), which the tests part then runs too.
# The PETSc/SLEPc/Open MPI runtime comes from ../shared/gpu-host/pack.sh (.gpu-host/env.sh), sourced
# by the caller. Writes OUT_DIR/summary.log and OUT_DIR/logs.tar.gz; exits non-zero if anything failed.
set -uo pipefail
carry=$(cd "${1:?usage: run_all_on_gpu_host.sh CARRY_DIR OUT_DIR}" && pwd)
out=${2:?usage: run_all_on_gpu_host.sh CARRY_DIR OUT_DIR [tests|memcheck|racecheck|all]}
part=${3:-all}
case $part in tests | cuda | equivalence | memcheck | racecheck | all) ;; *) echo "unknown part '$part': tests, cuda, equivalence, memcheck, racecheck or all" >&2; exit 2 ;; esac
mkdir -p "$out/logs"
logs=$(cd "$out/logs" && pwd)
export LD_LIBRARY_PATH="$carry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A carry built against a PETSc/SLEPc that is not the system's (make gpu-pack BUILD=build-petsc-cuda)
# brings them as petsc-libs.tar.xz: unpacked once per OUT_DIR, ahead of everything on LD_LIBRARY_PATH
# (which the binaries' RUNPATH comes after).
if [ -f "$carry/petsc-libs.tar.xz" ]; then
  mkdir -p "$out/petsc-libs" && tar -C "$out/petsc-libs" -xJf "$carry/petsc-libs.tar.xz" || exit 2
  export LD_LIBRARY_PATH="$(cd "$out/petsc-libs" && pwd):$LD_LIBRARY_PATH"
  # A CUDA PETSc stops in PetscInitialize under an MPI that is not CUDA-aware (Debian's Open MPI) unless told
  export PETSC_OPTIONS="${PETSC_OPTIONS:+$PETSC_OPTIONS }-use_gpu_aware_mpi 0"
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
plugin=$carry/libslepccudalanczos.so
[ -e "$carry/libslepccudalanczos_complex.so" ] && plugin=$carry/libslepccudalanczos_complex.so
status=0
summary="$out/summary.log"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
step() { # step NAME TIMEOUT COMMAND...: runs, logs, records pass/fail
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s%N)
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  if [ $rc -eq 0 ]; then note "ok      $name ($ms ms)"; else note "FAILED  $name (rc $rc, $ms ms)"; status=1; fi
  grep -E "passed, [0-9]+ failed|GPU SUITE|converged|backend used|operator:|EPSSolve |eigenvalue|  [0-9-]+\.[0-9]+ " "$logs/$name.log" | head -40 | sed 's/^/        /' >>"$summary"
}

note "== $(date -u '+%Y-%m-%d %H:%M UTC') on $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1) (part: $part)"
cs=$(command -v compute-sanitizer || { [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; } || true)

if [ "$part" = tests ] || [ "$part" = all ]; then # step limits: 240 + 70 + 60 + 30 + 20 + 30 + 40 + 20 + 20 + 20 + 10 + 20 (+ 10) = 590 s
  # 1. every test binary, test_mat_device_copy and test_scale_invariance on 1 rank among them
  step gpu-suite 240 env SUITE_PARTS=binaries SUITE_FOLDERS="${TESTS_FOLDERS:-cuda petsc}" SUITE_SKIP="${TESTS_SKIP:-}" bash tests/gpu/run_gpu_suite.sh "$carry" "$logs/suite"
  # 2. the plugin under MPI on one GPU shared by two ranks (host products, device vectors; with a CUDA
  #    PETSc, device Mats as row-distributed operators on their own blocks). The scale sweep
  #    (test_scale_invariance) runs on 1 rank in step 1: on 2 ranks sharing one GPU, where every step's
  #    scalars meet MPI on the host, it took over 300 s on an H200 (2026-12-01; 54 of 56 checks by then,
  #    all passing).
  step petsc-np2 70 mpiexec -n 2 "$carry/tests/petsc/test_eps_cudalanczos"
  step mat-device-copy-np2 60 mpiexec -n 2 "$carry/tests/petsc/test_mat_device_copy"
  #    many pairs (SLEPc's dimensions from nev 500) on one GPU: the solver's block steps for them, 8
  #    vectors in real arithmetic and single vectors in complex (EPSCUDALanczosChooseBlockSize)
  many_block=8
  [ "$plugin" = "$carry/libslepccudalanczos_complex.so" ] && many_block=1
  step many-pairs 30 "$carry/tests/petsc/test_many_eigenpairs" -n 100000 -nev 600 -check_mpd 500 -check_block $many_block
  #    and on two ranks, where the solver chooses the same blocks
  step many-pairs-np2 20 mpiexec -n 2 "$carry/tests/petsc/test_many_eigenpairs" -n 20000 -nev 500 -check_mpd 500 -check_block $many_block
  # 3. the demo, as the README runs it, with -eps_view and -log_view; then the thesis variant and vendor kernels
  step demo 30 "$carry/examples/thesis_demo" -eps_view -log_view
  step demo-thesis-12288 40 "$carry/examples/thesis_demo" -n 12288 -m 300 -eps_cudalanczos_variant thesis -nev 1
  step demo-vendor 20 "$carry/examples/thesis_demo" -eps_cudalanczos_kernels vendor
  # 4. the CUDA MatShells
  step matshell 20 "$carry/examples/cuda_matshell_demo" -n 3000
  # 5. an unmodified SLEPc program with -dll_append
  step slepc-ex1-dll_append 20 "$carry/slepc/ex1" -n 3000 -eps_nev 4 -eps_tol 1e-8 -eps_max_it 100000 -dll_append "$plugin" -eps_type cudalanczos -eps_view
  #    loaded so but never selected: no warm-up, and no CUDA library beyond the runtime mapped (libcuda
  #    included: no context)
  step plugin-load-unselected 10 bash -c 'out=$("$1" -dll_append "$2" -eps_type krylovschur -check_unmapped -info :sys 2>&1); rc=$?
    grep "warm-up\|mapped\|passed" <<<"$out"; [ $rc -eq 0 ] && grep -q "no warm-up at load" <<<"$out" && ! grep -q "warm-up started" <<<"$out"' \
    _ "$carry/tests/petsc/test_plugin_load" "$plugin"
  #    and, in a complex build, the complex Hermitian example (the Hofstadter torus: 4- and 8-fold
  #    eigenvalues) on 2 ranks, checked against zheev
  [ -x "$carry/examples/tight_binding_flux" ] && step tight-binding-flux-np2 10 mpiexec -n 2 "$carry/examples/tight_binding_flux" \
    -dll_append "$plugin" -eps_type cudalanczos -mx 16 -my 12 -bc torus -phi 0.25 -nev 12 -check -eps_view
  # 6. the whole plugin path (PETSc + CUDA) under memcheck with leak checking
  [ -n "$cs" ] && step memcheck-demo 20 "$cs" --tool memcheck --leak-check full --error-exitcode 9 "$carry/examples/thesis_demo" -n 700 -m 30
fi
# 1'. the CUDA test binaries alone (part cuda; not in all, whose tests part runs them), and
# 1''. test_backend_equivalence alone (part equivalence; likewise)
[ "$part" = cuda ] && step gpu-suite-cuda 570 env SUITE_PARTS=binaries SUITE_FOLDERS=cuda bash tests/gpu/run_gpu_suite.sh "$carry" "$logs/suite"
if [ "$part" = equivalence ]; then
  skip=$(find "$carry/tests/petsc" -maxdepth 1 -type f -name 'test_*' ! -name test_backend_equivalence -printf '%f ')
  step gpu-suite-equivalence 570 env SUITE_PARTS=binaries SUITE_FOLDERS=petsc SUITE_SKIP="$skip" bash tests/gpu/run_gpu_suite.sh "$carry" "$logs/suite"
fi
# 7. the CUDA test binaries under compute-sanitizer, one tool per part (each binary and tool at most 280 s)
for tool in memcheck racecheck; do
  if [ "$part" = "$tool" ] || [ "$part" = all ]; then
    if [ -n "$cs" ]; then
      step "sanitizer-$tool" 570 env SUITE_PARTS=sanitizers SANITIZER_TOOLS=$tool SANITIZER_TIMEOUT=280 bash tests/gpu/run_gpu_suite.sh "$carry" "$logs/$tool"
    else
      note "FAILED  sanitizer-$tool: compute-sanitizer not found"
      status=1
    fi
  fi
done
note "== overall: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$logs" "$out/petsc-libs"
exit $status
