#!/usr/bin/env bash
# The peer benchmark suite in one command (bench/peers/README.md):
#
#   bench/peers/run_suite.sh BUILD_OR_CARRY_DIR OUT_DIR [--quick] [--budget 420] [more suite.py options]
#
# BUILD_OR_CARRY_DIR holds libslepccudalanczos.so(.0) and bench/peers/{bench_eps,krylov_floor,gen_matrices}
# (a build folder, or a copy of those files in that layout). On the GPU host source the PETSc/MPI runtime
# first (. .gpu-host/env.sh, from ../shared/gpu-host/pack.sh); python3 there has CuPy, NumPy, Matplotlib.
# Writes OUT_DIR/<date>-<gpu>-suite.{md,json}, -time.png, -matvecs.png and -logs.tar.gz; stops within the
# budget (seconds, default 420) whatever happens: items that no longer fit are reported "skipped: budget".
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${1:?usage: run_suite.sh BUILD_OR_CARRY_DIR OUT_DIR [--quick] [--budget S] [suite.py options]}
out=${2:?usage: run_suite.sh BUILD_OR_CARRY_DIR OUT_DIR [--quick] [--budget S] [suite.py options]}
invocation="bench/peers/run_suite.sh $*"
shift 2
for f in bench_eps krylov_floor gen_matrices; do
  [ -x "$bin/bench/peers/$f" ] || { echo "run_suite.sh: $bin/bench/peers/$f is missing" >&2; exit 2; }
done
# The binaries keep the runtime's library path; Python gets the path without it (env.sh puts Debian's
# libraries first, and the Python packages bring their own).
export BENCH_BIN_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}
py_ld=""
IFS=: read -ra parts <<<"${LD_LIBRARY_PATH:-}"
for p in "${parts[@]}"; do
  [ -n "$p" ] || continue
  if [ -n "${OPAL_PREFIX:-}" ] && [[ $p == "$OPAL_PREFIX"* ]]; then continue; fi
  py_ld=${py_ld:+$py_ld:}$p
done
exec env LD_LIBRARY_PATH="$py_ld" python3 "$here/suite.py" --bin "$bin" --out "$out" --command "$invocation" "$@"
