#!/usr/bin/env bash
# Build PETSc and SLEPc 3.26.1 with CUDA, once per machine, into a cache folder outside the clone:
# what SLEPc users with GPUs run (a current release, built with CUDA), next to Debian's 3.18.
#
#   usage: tools/petsc-cuda.sh [PREFIX [SCALAR [INDICES]]]
#     PREFIX   default ${CUDALANCZOS_CACHE:-$HOME/.cache/cudalanczos}/petsc-3.26.1-cuda (-complex for complex,
#              -int64 for 64-bit indices)
#     SCALAR   real (default) or complex: PETSc's --with-scalar-type, the two builds SLEPc users run
#     INDICES  32 (default) or 64: PETSc's --with-64-bit-indices, what runs with more than 2^31 entries a rank
#
# Leaves PREFIX/petsc and PREFIX/slepc (each with lib/pkgconfig/*.pc) and PREFIX/.complete; a second
# call with .complete present prints the prefix and does nothing else. The sources are PyPI's source
# distributions (pip only downloads them; their own configure/make build them). Needs the CUDA toolkit
# at /usr/local/cuda and Debian's Open MPI and reference LAPACK (make deps). About 16 minutes on 2 cores.
set -euo pipefail
version=3.26.1
scalar=${2:-real}
case $scalar in
  real) suffix= ;;
  complex) suffix=-complex ;;
  *) echo "petsc-cuda.sh: SCALAR must be real or complex, not '$scalar'" >&2; exit 1 ;;
esac
indices=${3:-32}
case $indices in
  32) index_flag= ;;
  64) index_flag=--with-64-bit-indices; suffix=$suffix-int64 ;;
  *) echo "petsc-cuda.sh: INDICES must be 32 or 64, not '$indices'" >&2; exit 1 ;;
esac
prefix=${1:-${CUDALANCZOS_CACHE:-$HOME/.cache/cudalanczos}/petsc-$version-cuda$suffix}
if [ -f "$prefix/.complete" ]; then echo "$prefix"; exit 0; fi
cuda=${CUDA_HOME:-/usr/local/cuda}
[ -x "$cuda/bin/nvcc" ] || { echo "petsc-cuda.sh: no nvcc at $cuda/bin/nvcc (set CUDA_HOME)" >&2; exit 1; }
command -v mpicc >/dev/null || { echo "petsc-cuda.sh: no mpicc: run 'make deps' first (Debian's openmpi-bin, libopenmpi-dev)" >&2; exit 1; }
jobs=${JOBS:-$(nproc)}
work=$prefix.build
rm -rf "$work" "$prefix"; mkdir -p "$work"
log=$work/build.log
echo "petsc-cuda.sh: building PETSc/SLEPc $version ($scalar scalars, $indices-bit indices) with CUDA into $prefix (log: $log)"
step() { echo "  $(date +%H:%M:%S) $*"; }

step "downloading the source distributions"
python3 -m venv "$work/venv" >>"$log" 2>&1
"$work/venv/bin/pip" install -q setuptools wheel >>"$log" 2>&1
"$work/venv/bin/pip" download -q --no-deps --no-binary petsc "petsc==$version" -d "$work" >>"$log" 2>&1
tar -C "$work" -xzf "$work/petsc-$version.tar.gz"

step "PETSc: configure"
cd "$work/petsc-$version"
./configure --prefix="$prefix/petsc" --with-cc=mpicc --with-cxx=mpicxx --with-fc=0 \
  --with-cuda=1 --with-cuda-dir="$cuda" --with-cuda-arch=90 \
  --with-scalar-type="$scalar" $index_flag --with-debugging=0 --with-x=0 --with-blaslapack-lib="-llapack -lblas" \
  COPTFLAGS=-O2 CXXOPTFLAGS=-O2 CUDAOPTFLAGS=-O2 >>"$log" 2>&1 || { tail -40 configure.log >&2; exit 1; }
arch=$(sed -n 's/^PETSC_ARCH=//p' lib/petsc/conf/petscvariables | head -1)
step "PETSc: make ($jobs jobs)"
make PETSC_DIR="$PWD" PETSC_ARCH="$arch" MAKE_NP="$jobs" all >>"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
make PETSC_DIR="$PWD" PETSC_ARCH="$arch" install >>"$log" 2>&1

step "SLEPc: download, configure, make, install"
cd "$work"
PETSC_DIR="$prefix/petsc" "$work/venv/bin/pip" download -q --no-deps --no-build-isolation --no-binary slepc \
  "slepc==$version" -d "$work" >>"$log" 2>&1
tar -C "$work" -xzf "$work/slepc-$version.tar.gz"
cd "$work/slepc-$version"
export PETSC_DIR="$prefix/petsc" PETSC_ARCH=""
./configure --prefix="$prefix/slepc" >>"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
make SLEPC_DIR="$PWD" MAKE_NP="$jobs" >>"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
make SLEPC_DIR="$PWD" install >>"$log" 2>&1
cp "$log" "$prefix/build.log"
rm -rf "$work"
touch "$prefix/.complete"
step "done"
echo "$prefix"
