#!/usr/bin/env bash
# The complex carry after a97643e (a third kept with partial reorthogonalization): test_complex_problems and
# test_eps_cudalanczos on the GPU, and the Hofstadter torus example with single-vector steps on 1 and 2 ranks.
set -uo pipefail
. .gpu-host/env.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
Z=$PWD/cz; mkdir -p $Z/lib && tar -C $Z -xJf gpurun/complex.tar.xz && tar -C $Z/lib -xJf $Z/petsc-libs.tar.xz
L() { LD_LIBRARY_PATH=$Z/lib:$Z:$LD_LIBRARY_PATH "$@"; }
mkdir -p $OUT/logs
for b in test_complex_problems test_eps_cudalanczos; do
  L timeout 100 $Z/tests/petsc/$b > $OUT/logs/$b.log 2>&1; echo "$b rc $?: $(grep -h 'passed, ' $OUT/logs/$b.log | tail -n1)"; grep -h "not ok" $OUT/logs/$b.log | head -5
done
for np in 1 2; do
  L timeout 60 mpiexec -n $np $Z/examples/tight_binding_flux -dll_append $Z/libslepccudalanczos_complex.so -eps_type cudalanczos -mx 16 -my 12 -bc torus -phi 0.25 -nev 12 -check -eps_view > $OUT/logs/torus-np$np.log 2>&1
  echo "torus np$np rc $?"; grep -hiE "check|kept after|backend used|last solve:" $OUT/logs/torus-np$np.log | head -8
done
cd $OUT && tar -czf logs.tar.gz logs && rm -rf logs
