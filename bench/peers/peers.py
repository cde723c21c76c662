#!/usr/bin/env python3
"""The GPU peers of the benchmark suite (bench/peers/README.md): CuPy on the same GPU.

    peers.py --solver eigsh|eigh --case NAME [--dir DIR] [--n N] [--which largest|smallest]
             [--ks 1,10,50] [--target 1e-8] [--cap 60] [--dry-run]

One JSON line per k on stdout, as bench_eps prints them.

eigsh  cupyx.scipy.sparse.linalg.eigsh (thick-restart Lanczos; which 'LA' / 'SA'; CuPy's default ncv,
       max(2k, k + 32)). Its tol is absolute, on the 2-norm of the k residual estimates together, so it is
       chosen so that the true relative residuals reach --target: tol = target/2 * min |lambda| of the
       warm-up's Ritz values; if the timed solve's true residuals miss the target, tol shrinks by
       target/2 / (max true residual) and the solve is timed again (at most 4 attempts). The line gives
       the time of the attempt that reached the target, all attempts' times and the tol used.
       Warm-up: the same call with maxiter = ncv + 1 (one restart), untimed. Matrix-vector products:
       ncv + (restart cycles - 1) (ncv - k), the cycles counted by wrapping CuPy's Ritz solver.
eigh   cupy.linalg.eigh (cuSOLVER syevd), dense cases only: all eigenpairs once, after a warm-up on a
       256 x 256 matrix (handles, library load); one line per k with the same time, residuals of the k
       wanted pairs.
Device memory: CuPy's memory pool after the solve (freed before each warm-up): blocks it holds, the
matrix included, i.e. the peak of the pool.
True residual: max over the k pairs of ||A x - lambda x|| / (|lambda| ||x||), on the GPU.
Matrices: denseN by the formula of examples/thesis_demo.c (uint64 hash of (min(i,j), max(i,j))), the
sparse ones from DIR/NAME.csr (gen_matrices; complex Hermitian ones, such as hofstadter, as complex128:
eigsh takes them as they are). --dry-run: NumPy/SciPy instead of CuPy (ARPACK's eigsh,
numpy eigh), to test everything but the GPU on a machine without one.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

C1, C2 = 0x9E3779B97F4A7C15, 0x632BE59BD9B4E019
M1, M2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB

_CUDA_DENSE = r"""
    const unsigned long long row = (unsigned long long)(r0 + (long long)i / n), col = (unsigned long long)((long long)i % n);
    const unsigned long long lo = row < col ? row : col, hi = row < col ? col : row;
    unsigned long long x = lo * 0x9E3779B97F4A7C15ULL ^ (hi + 0x632BE59BD9B4E019ULL);
    x ^= x >> 31; x *= 0xBF58476D1CE4E5B9ULL; x ^= x >> 29; x *= 0x94D049BB133111EBULL; x ^= x >> 32;
    a = (double)(x >> 11) / 9007199254740992.0;
"""


def dense_numpy(n, r0, r1):
    """Rows r0..r1-1 of the thesis matrix (examples/thesis_demo.c), NumPy uint64 (wrapping) arithmetic."""
    u = np.uint64
    rows = np.arange(r0, r1, dtype=np.uint64)[:, None]
    cols = np.arange(n, dtype=np.uint64)[None, :]
    lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
    with np.errstate(over="ignore"):
        x = (lo * u(C1)) ^ (hi + u(C2))
        x ^= x >> u(31)
        x *= u(M1)
        x ^= x >> u(29)
        x *= u(M2)
        x ^= x >> u(32)
    return (x >> u(11)).astype(np.float64) / 9007199254740992.0


def read_csr(path):
    """A gen_matrices file: real (magic CLCSR01, float64 values) or complex Hermitian (CLCSRZ1, complex128)."""
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic not in (b"CLCSR01\n", b"CLCSRZ1\n"):
            raise SystemExit(f"{path} is not a CSR file of gen_matrices")
        rows, nnz, _ = np.frombuffer(f.read(24), dtype="<i8")
        indptr = np.fromfile(f, dtype="<i4", count=rows + 1)
        indices = np.fromfile(f, dtype="<i4", count=nnz)
        data = np.fromfile(f, dtype="<c16" if magic == b"CLCSRZ1\n" else "<f8", count=nnz)
    if data.size != nnz:
        raise SystemExit(f"{path} is truncated")
    return int(rows), int(nnz), indptr, indices, data


class Env:
    """CuPy (GPU) or NumPy/SciPy (--dry-run) behind one face."""

    def __init__(self, dry):
        self.dry = dry
        if dry:
            import scipy.sparse
            import scipy.sparse.linalg
            self.xp, self.sp = np, scipy.sparse
            self.eigsh_fn = scipy.sparse.linalg.eigsh
            self.eigh_fn = np.linalg.eigh
            self.device = "none (dry run: NumPy/SciPy on the host)"
            self.version = "numpy " + np.__version__
            self.pool = None
        else:
            import cupy
            import cupyx.scipy.sparse
            import cupyx.scipy.sparse.linalg
            self.xp, self.sp = cupy, cupyx.scipy.sparse
            self.eigsh_fn = cupyx.scipy.sparse.linalg.eigsh
            self.eigh_fn = cupy.linalg.eigh
            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            name = props["name"]
            self.device = name.decode() if isinstance(name, bytes) else str(name)
            self.version = "cupy " + cupy.__version__
            self.pool = cupy.get_default_memory_pool()
            self.kernel = cupy.ElementwiseKernel("int64 r0, int64 n", "float64 a", _CUDA_DENSE, "bench_dense_thesis")
            cupy.random.seed(1234)
        self.cycles = 0
        self._wrap_ritz()

    def _wrap_ritz(self):
        """Counts CuPy eigsh's restart cycles (calls of its Ritz solver), for the matvec count."""
        self.can_count = False
        if self.dry:
            return
        try:
            from cupyx.scipy.sparse.linalg import _eigen
            inner = _eigen._eigsh_solve_ritz

            def counted(*a, **kw):
                self.cycles += 1
                return inner(*a, **kw)

            _eigen._eigsh_solve_ritz = counted
            self.can_count = True
        except Exception:  # another CuPy layout: no count
            pass

    def sync(self):
        if not self.dry:
            self.xp.cuda.Device().synchronize()

    def free(self):
        if self.pool is not None:
            self.pool.free_all_blocks()

    def pool_mb(self):
        return None if self.pool is None else self.pool.total_bytes() / 2**20

    def dense(self, n):
        xp = self.xp
        A = xp.empty((n, n), dtype=xp.float64)
        block = max(1, (1 << 27) // n)
        for r0 in range(0, n, block):
            r1 = min(n, r0 + block)
            if self.dry:
                A[r0:r1] = dense_numpy(n, r0, r1)
            else:
                self.kernel(r0, n, A[r0:r1])
        self.sync()
        return A

    def load(self, case, directory, n_override):
        """The matrix (device), n, nnz, 1'A1."""
        if case.startswith("dense"):
            n = n_override or int(case[5:])
            A = self.dense(n)
            return A, n, n * n, float(A.sum())
        n, nnz, indptr, indices, data = read_csr(os.path.join(directory, case + ".csr"))
        xp = self.xp
        A = self.sp.csr_matrix((xp.asarray(data), xp.asarray(indices), xp.asarray(indptr)), shape=(n, n))
        return A, n, nnz, float(data.sum().real)  # bench_eps prints the real part of 1'A1 too

    def residuals(self, A, w, V):
        """max_i ||A v_i - w_i v_i|| / (|w_i| ||v_i||)."""
        xp = self.xp
        R = A @ V - V * w[None, :]
        r = xp.linalg.norm(R, axis=0) / (xp.abs(w) * xp.linalg.norm(V, axis=0))
        return float(r.max())


def best_first(env, w, V, k, largest):
    """The k wanted pairs, best first (largest: descending)."""
    xp = env.xp
    order = xp.argsort(w)
    sel = order[::-1][:k] if largest else order[:k]
    return w[sel], V[:, sel]


def eigs_list(env, w):
    return [float(x) for x in (w.get() if hasattr(w, "get") else w)]


def eigsh_name(env):
    return "cupy_eigsh" if not env.dry else "scipy_eigsh (dry run)"


def run_eigsh(env, A, n, k, largest, target, cap, base):
    xp = env.xp
    which = "LA" if largest else "SA"
    ncv = min(max(2 * k, k + 32), n - 1)
    out = dict(base, solver=eigsh_name(env), k=k, ncv=ncv, target=target)
    if k >= n - 1:
        return dict(out, status="failed: k too large for n")
    t_all = time.perf_counter()
    env.free()
    env.sync()
    t0 = time.perf_counter()
    if env.dry:
        w0 = env.eigsh_fn(A, k=k, which=which, ncv=ncv, tol=1e-4, return_eigenvectors=False)  # ARPACK: a loose full solve
    else:
        w0 = env.eigsh_fn(A, k=k, which=which, maxiter=ncv + 1, return_eigenvectors=False)
    env.sync()
    out["warmup_s"] = round(time.perf_counter() - t0, 4)
    est = float(xp.abs(xp.asarray(w0)).min())
    tol = 0.5 * target * est if est > 0 else target
    times, tols = [], []
    for attempt in range(1, 5):
        env.cycles = 0
        env.sync()
        t0 = time.perf_counter()
        if env.dry:
            w, V = env.eigsh_fn(A, k=k, which=which, ncv=ncv, tol=tol / max(est, 1e-300))
        else:
            w, V = env.eigsh_fn(A, k=k, which=which, tol=tol)
        env.sync()
        dt = time.perf_counter() - t0
        times.append(round(dt, 6))
        tols.append(tol)
        w, V = best_first(env, w, V, k, largest)
        res = env.residuals(A, w, V)
        out.update(time_s=round(dt, 6), attempts=attempt, attempt_times=times, tol=tol, tols=tols, max_rel_res=res,
                   eigs=eigs_list(env, w))
        if env.can_count:
            out.update(its=env.cycles, matvecs=ncv + max(0, env.cycles - 1) * (ncv - k))
        spent = time.perf_counter() - t_all
        if res <= target and math.isfinite(res):
            out["status"] = "ok"
            break
        minw = float(xp.abs(w).min())
        tol = min(tol, 0.5 * target * minw) * min(1.0, 0.5 * target / res) if math.isfinite(res) and res > 0 else tol / 10
        if spent > cap:
            out["status"] = "timeout"
            out["note"] = f"residual {res:.1e} above target after {attempt} attempt(s) within the cap"
            break
    else:
        out["status"] = "failed: residual above target after 4 attempts"
    out["dev_mb"] = env.pool_mb()
    out["total_s"] = round(time.perf_counter() - t_all, 3)
    return out


def run_eigh(env, A, n, ks, largest, target, base):
    xp = env.xp
    rng = np.random.default_rng(1)
    W = rng.random((256, 256))
    W = xp.asarray(W + W.T)
    env.free()
    t0 = time.perf_counter()
    env.eigh_fn(W)
    env.sync()
    warm = time.perf_counter() - t0
    env.sync()
    t0 = time.perf_counter()
    w, V = env.eigh_fn(A)
    env.sync()
    dt = time.perf_counter() - t0
    lines = []
    for k in ks:
        wk, Vk = best_first(env, w, V, k, largest)
        res = env.residuals(A, wk, Vk)
        lines.append(dict(base, solver="cupy_eigh" if not env.dry else "numpy_eigh (dry run)", k=k, status="ok" if res <= target else "ok (residual above target)",
                          time_s=round(dt, 6), max_rel_res=res, eigs=eigs_list(env, wk), warmup_s=round(warm, 4), dev_mb=env.pool_mb(),
                          note="one decomposition for every k"))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--solver", choices=["eigsh", "eigh"], required=True)
    p.add_argument("--case", required=True)
    p.add_argument("--dir", default=".")
    p.add_argument("--n", type=int, default=0, help="dense size override (smoke tests)")
    p.add_argument("--which", choices=["largest", "smallest"], default="largest")
    p.add_argument("--ks", default="1,10,50")
    p.add_argument("--target", type=float, default=1e-8, help="true relative residual to reach")
    p.add_argument("--cap", type=float, default=60.0, help="seconds per k; larger k are skipped once one k exceeds it")
    p.add_argument("--dry-run", action="store_true", help="NumPy/SciPy on the host instead of CuPy")
    a = p.parse_args()
    ks = sorted(int(x) for x in a.ks.split(",") if x)
    largest = a.which == "largest"
    env = Env(a.dry_run)
    t0 = time.perf_counter()
    A, n, nnz, asum = env.load(a.case, a.dir, a.n)
    env.sync()
    setup = time.perf_counter() - t0
    base = dict(bench="cupy", case=a.case, n=n, nnz=nnz, which=a.which, asum=asum, setup_s=round(setup, 3), device=env.device,
                version=env.version, cap_s=a.cap)
    if a.solver == "eigh":
        if not a.case.startswith("dense"):
            raise SystemExit("eigh: dense cases only")
        for line in run_eigh(env, A, n, ks, largest, a.target, base):
            print(json.dumps(line), flush=True)
        return
    over = None
    for k in ks:
        if over is not None:
            print(json.dumps(dict(base, solver=eigsh_name(env), k=k, status="timeout", note=f"skipped: k={over} exceeded the cap")), flush=True)
            continue
        t = time.perf_counter()
        try:
            line = run_eigsh(env, A, n, k, largest, a.target, a.cap, base)
        except Exception as e:  # a failing peer is reported as such
            line = dict(base, solver=eigsh_name(env), k=k, status="failed: " + type(e).__name__ + ": " + str(e)[:200])
        print(json.dumps(line), flush=True)
        if time.perf_counter() - t > a.cap:
            over = k


if __name__ == "__main__":
    sys.exit(main())
