#!/usr/bin/env bash
# Every eigenvalue in an interior window of a 10^6-row sparse Hamiltonian, on the GPU host: the 3-D Anderson
# model at its critical disorder (examples/anderson_window -L 100 -W 16.5, periodic, seed 1: the matrix that
# gen_matrices writes as "anderson"), windows at the band centre holding about 50 and 200 eigenvalues
# (anderson_windows.py: rho(0) = 0.056 per site and unit energy), each solved by
#   cudalanczos      -eps_type cudalanczos: EPS_ALL by Lanczos on the plugin's own polynomial filter of H,
#                    PETSc/SLEPc 3.26.1 with CUDA, H as aijcusparse (the device Mat)
#   cudalanczos-bN   the same with the filter applied to blocks of N vectors (-eps_cudalanczos_block_size N)
#   ks-filter        SLEPc 3.26.1's Krylov-Schur on STFILTER: a Chebyshev series with Jackson damping of
#                    degree FILTER_DEGREE_FACTOR (6 + W/2) / (b - a), nev 1.5 count + 10 (the filter needs
#                    an over-estimate of the count), -mat_type aijcusparse -vec_type cuda -bv_type svec
#   ks-filtlan       the same Krylov-Schur on STFILTER at SLEPc's defaults (-st_type filter, FILTLAN at its
#                    own degree), nev as above
#   cudalanczos-3.18 (with CARRY318) the plugin on Debian's 3.18, H a host Mat (the plugin uploads it)
#   slicing-mumps    (with CARRY318 and SLICING=1) SLEPc's spectrum slicing on the CPU cores: Krylov-Schur
#                    with shift-and-invert, MUMPS Cholesky (its inertia counts the eigenvalues), mpiexec -n NP
# Each run is one process, one solve (the example's EPSSolve, set-up and the first CUDA use included), with
# -eps_view and -log_view; the example prints the count, the solve time and the largest true residual.
# REPEAT=R adds the example's -repeat R: R re-solves of the same EPS and R new EPS on the same H, timed.
# SHOW=N prints the first N eigenvalues (5; all of them to compare the solvers' values, compare_values.py).
#
#   run_interval.sh CARRY326 OUT [CARRY318]
#
# CARRY326: `make gpu-pack BUILD=build-petsc-cuda`'s folder with petsc-libs.tar.xz unpacked into CARRY326/lib
# (examples/anderson_window and the plugin, built against tools/petsc-cuda.sh's PETSc); CARRY318: a carry
# of a Debian 3.18 build (make gpu-pack), whose PETSc has MUMPS. Source .gpu-host/env.sh first.
# Environment: L (100), W (16.5), WINDOWS ("50:-0.000445,0.000445 200:-0.00178,0.00178", NAME:a,b with
# NAME the expected count), SOLVERS ("cudalanczos ks-filter", plus "cudalanczos-3.18 slicing-mumps" with
# CARRY318), TOL (1e-8), TIMEOUT per run (1800 s), FILTER_TYPE (chebyshev; filtlan is SLEPc's default),
# FILTER_DEGREE_FACTOR (1), OURS_OPTIONS (more cudalanczos options, e.g. -eps_cudalanczos_filter_degree N),
# SLICING=1 and NP (nproc) for slicing-mumps, which on reference BLAS takes tens of minutes per MUMPS
# factorization at 10^6 rows (README; put an optimized BLAS's libblas.so.3 and liblapack.so.3, e.g. from
# Debian's libopenblas0-pthread, ahead on LD_LIBRARY_PATH, with OPENBLAS_NUM_THREADS=1), GPU_OPTIONS (the
# device-Mat options of the 3.26.1 runs; "" gives host Mats, which the plugin uploads, or without a GPU a
# smoke test; set PETSC_OPTIONS=-use_gpu_aware_mpi 0 then). A smaller L gives a quicker run: the windows
# then widen as 1/L^3 (give WINDOWS; anderson_windows.py --L computes them).
# Output: OUT/logs/NAME-WINDOW.log per run, OUT/interval.txt (a summary block per run).
set -uo pipefail
usage="usage: run_interval.sh CARRY326 OUT [CARRY318]"
c326=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
c318=""
if [ -n "${3:-}" ]; then c318=$(cd "$3" && pwd) || exit 2; fi
L=${L:-100}; W=${W:-16.5}; tol=${TOL:-1e-8}; limit=${TIMEOUT:-1800}
windows=${WINDOWS:-50:-0.000445,0.000445 200:-0.00178,0.00178}
solvers=${SOLVERS:-cudalanczos ks-filter${c318:+ cudalanczos-3.18}${c318:+${SLICING:+ slicing-mumps}}}
np=${NP:-$(nproc)}
mkdir -p "$out/logs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
summary=$out/interval.txt

plugin_of() { # CARRY: the plugin's path there (real or complex build)
  if [ -e "$1/libslepccudalanczos.so" ]; then echo "$1/libslepccudalanczos.so"; else echo "$1/libslepccudalanczos_complex.so"; fi
}
for c in "$c326" ${c318:+"$c318"}; do
  [ -x "$c/examples/anderson_window" ] || { echo "run_interval.sh: no $c/examples/anderson_window" >&2; exit 2; }
  [ -e "$(plugin_of "$c")" ] || { echo "run_interval.sh: no plugin in $c" >&2; exit 2; }
done

gpu=${GPU_OPTIONS-"-mat_type aijcusparse -vec_type cuda -use_gpu_aware_mpi 0"}
for win in $windows; do
  count=${win%%:*}; ab=${win#*:}; a=${ab%,*}; b=${ab#*,}
  nev=$((count * 3 / 2 + 10))
  degree=$(awk -v f="${FILTER_DEGREE_FACTOR:-1}" -v w="$W" -v a="$a" -v b="$b" 'BEGIN { d = f * (6 + w / 2) / (b - a); print int(d) + (d > int(d)) }')
  common="-L $L -W $W -eps_interval $a,$b -eps_tol $tol -show ${SHOW:-5} -eps_view -log_view${REPEAT:+ -repeat $REPEAT}"
  for s in $solvers; do
    libs=$c326/lib:$c326; bin=$c326/examples/anderson_window; launch=""
    case $s in
      cudalanczos) opts="-dll_append $(plugin_of "$c326") -eps_type cudalanczos $gpu ${OURS_OPTIONS:-}" ;;
      cudalanczos-b*) opts="-dll_append $(plugin_of "$c326") -eps_type cudalanczos -eps_cudalanczos_block_size ${s#cudalanczos-b} $gpu ${OURS_OPTIONS:-}" ;;
      ks-filtlan) opts="-eps_type krylovschur -st_type filter -eps_nev $nev $gpu -bv_type svec" ;;
      ks-filter) opts="-eps_type krylovschur -st_type filter -st_filter_type ${FILTER_TYPE:-chebyshev} -st_filter_damping jackson"
                 opts="$opts -st_filter_degree $degree -eps_nev $nev $gpu -bv_type svec" ;;
      cudalanczos-3.18) libs=$c318; bin=$c318/examples/anderson_window
                        opts="-dll_append $(plugin_of "$c318") -eps_type cudalanczos ${OURS_OPTIONS:-}" ;;
      slicing-mumps) libs=$c318; bin=$c318/examples/anderson_window; launch="mpiexec -n $np"
                     opts="-eps_type krylovschur -st_type sinvert -st_ksp_type preonly -st_pc_type cholesky"
                     opts="$opts -st_pc_factor_mat_solver_type mumps -st_mat_mumps_icntl_13 1" ;;
      *) echo "run_interval.sh: unknown solver $s" >&2; continue ;;
    esac
    name=$s-$count
    start=$SECONDS
    # shellcheck disable=SC2086 # option strings are split into words on purpose
    LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" OMP_NUM_THREADS=1 timeout "$limit" $launch "$bin" $common $opts \
      >"$out/logs/$name.log" 2>&1
    rc=$?
    {
      echo "== $name (rc $rc$([ $rc = 124 ] && echo ", stopped at $limit s"), $((SECONDS - start)) s wall): ${launch:+$launch }anderson_window $common $opts"
      grep -E '^3-D Anderson|^eigenvalues .* max|median' "$out/logs/$name.log" # -repeat: the medians (the runs' times lie between -eps_view's blocks)
      # the plugin's -eps_view (products, filter degree) and STFILTER's (degree, threshold)
      [ $rc = 0 ] || grep 'PETSC ERROR: [A-Z]' "$out/logs/$name.log" | grep -vE 'ERROR: (See |Petsc Release|Configure|PETSc Option)' | sort -u | head -3
      grep -E 'operator applications|filter|degree|gamma|interval|last solve' "$out/logs/$name.log" | grep -vE '^ *-|PETSC ERROR' | sort -u
      # -log_view: count and time (s) of the events that carry the solve; STApply x degree = products with H for STFILTER
      grep -E '^(EPSSolve|EPSSetUp|STApply|MatMult|MatSolve|MatCholFctrNum|MatCholFctrSym|BVOrthogonalizeV|BVMatMult|EPSCUDALanczos[A-Za-z]*|CUDALanc[A-Za-z]*) ' \
        "$out/logs/$name.log" | awk '{print "  " $1, "count", $2, "time", $4}'
    } >>"$summary"
  done
done
echo "wrote $summary ($(grep -c '^==' "$summary") runs), logs in $out/logs"
