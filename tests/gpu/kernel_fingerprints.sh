#!/usr/bin/env bash
# Whether two source trees' CUDA kernels compute the same bits (tests/gpu/kernel_fingerprints.cu).
#
#   here:  kernel_fingerprints.sh build TREE OUT_PREFIX      OUT_PREFIX-real and OUT_PREFIX-complex
#   there: kernel_fingerprints.sh compare BIN_A BIN_B OUT    exits 1 when a fingerprint differs
#
# TREE is a checkout (e.g. `git worktree add /tmp/old <commit>`); its kernels are src/cuda/kernels.cu or
# src/cuda/kernels/*.cu, whichever it has, behind the same cuda/kernels.cuh launchers. Binaries link the
# CUDA runtime statically: they need no PETSc on the GPU host. sm_90 unless CUDA_ARCH says otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case ${1:-} in
  build)
    tree=$(cd "$2" && pwd); prefix=$3
    nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
    srcs=$(ls "$tree"/src/cuda/kernels.cu 2>/dev/null || ls "$tree"/src/cuda/kernels/*.cu)
    for scalars in real complex; do
      defs=""; [ $scalars = complex ] && defs="-DCUDALANCZOS_USE_COMPLEX=1"
      objs=$(mktemp -d)
      for f in "$here/kernel_fingerprints.cu" $srcs; do
        $nvcc -std=c++17 -O3 -arch="${CUDA_ARCH:-sm_90}" --expt-relaxed-constexpr -x cu $defs -I"$tree/src" -c "$f" \
          -o "$objs/$(basename "$f").o" &
      done
      wait
      $nvcc -arch="${CUDA_ARCH:-sm_90}" "$objs"/*.o -o "$prefix-$scalars"
      rm -rf "$objs"
    done ;;
  compare)
    a=$2; b=$3; out=$4
    mkdir -p "$out"
    "$a" >"$out/a.txt"; "$b" >"$out/b.txt"
    if diff "$out/a.txt" "$out/b.txt" >"$out/diff.txt"; then
      echo "same: $(wc -l <"$out/a.txt") fingerprints"
    else
      echo "DIFFER: $(grep -c '^<' "$out/diff.txt") of $(wc -l <"$out/a.txt") fingerprints (see $out/diff.txt)"; exit 1
    fi ;;
  *) sed -n 2,9p "$0"; exit 2 ;;
esac
