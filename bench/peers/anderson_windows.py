#!/usr/bin/env python3
"""Energy windows of the 3-D Anderson model that hold a given number of eigenvalues (run_interval.sh).

The matrix is examples/anderson_window.c's: an L^3 periodic cubic lattice, hopping -1, on-site energies
W (u - 1/2) with u = splitmix64(seed, site), built here with NumPy bit for bit as the example and
gen_matrices build it, or read from a CSR file of gen_matrices (--csr). The density of states rho(E) is
estimated by the kernel polynomial method: Chebyshev moments of H scaled into [-1, 1] (Gershgorin bounds
+-(6 + W/2)), traced with random +-1 vectors, Jackson damping. For each wanted count N the window is
[E0 - h, E0 + h] with n * integral of rho over it = N. Near the band centre rho is flat over many level
spacings, so the estimate is good to a few per cent; the count of one sample fluctuates around it
(level statistics), so the solvers' counts in the benchmark are the exact ones.

    anderson_windows.py [--L 100] [--W 16.5] [--seed 1] [--csr FILE] [--center 0] [--counts 50,200]
                        [--moments 256] [--vectors 10] [--exact]

--exact (n <= 8000) also counts the eigenvalues in each window with a dense eigvalsh. Prints one line per
count: "N a b estimate" (a and b with 3 significant digits), after a comment line with rho(E0).
Needs NumPy and SciPy; L = 100 takes about a minute on one core (moments x vectors products).
"""
import argparse
import sys

import numpy as np
import scipy.sparse as sp


def uniform_of_site(seed, sites):
    """splitmix64 of (seed, site) to 53 bits in [0, 1): examples/anderson_window.c's UniformOfSite."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + sites.astype(np.uint64) + np.uint64(1)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


def anderson(L, W, seed):
    """H on the periodic L^3 lattice, site (x, y, z) = row x + L (y + L z)."""
    n = L**3
    r = np.arange(n, dtype=np.int64)
    coord, stride = (r % L, (r // L) % L, r // (L * L)), (1, L, L * L)
    rows, cols = [r], [r]
    vals = [W * (uniform_of_site(seed, r) - 0.5) if W else np.zeros(n)]
    for d in range(3):
        for step in (1, -1):
            rows.append(r)
            cols.append(r + ((coord[d] + step) % L - coord[d]) * stride[d])
            vals.append(-np.ones(n))
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))


def read_csr(path):
    """A real CSR file of gen_matrices (format in gen_matrices.cpp)."""
    with open(path, "rb") as f:
        if f.read(8) != b"CLCSR01\n":
            sys.exit(f"{path}: not a real CSR file of gen_matrices")
        n, nnz, _ = np.frombuffer(f.read(24), dtype="<i8")
        rowptr = np.frombuffer(f.read(4 * (n + 1)), dtype="<i4")
        colind = np.frombuffer(f.read(4 * nnz), dtype="<i4")
        values = np.frombuffer(f.read(8 * nnz), dtype="<f8")
    return sp.csr_matrix((values, colind, rowptr), shape=(n, n))


def kpm_moments(H, lo, hi, moments, vectors, rng):
    """mu_k = tr T_k(Hs) / n, Hs = (H - c) / e, by random +-1 vectors (three-term recurrence)."""
    n = H.shape[0]
    c, e = (hi + lo) / 2, (hi - lo) / 2
    mu = np.zeros(moments)
    for _ in range(vectors):
        v = rng.choice([-1.0, 1.0], size=n)
        t0, t1 = v, (H @ v - c * v) / e
        mu[0] += v @ t0
        mu[1] += v @ t1
        for k in range(2, moments):
            t0, t1 = t1, 2 * (H @ t1 - c * t1) / e - t0
            mu[k] += v @ t1
    return mu / (vectors * n), c, e


def count_between(mu, c, e, a, b):
    """n-normalized integral of the Jackson-damped KPM density over [a, b]: with t = acos(x),
    integral of T_k(x) / (pi sqrt(1 - x^2)) dx over [xa, xb] = (sin k ta - sin k tb) / (k pi)."""
    m = len(mu)
    k = np.arange(m)
    g = ((m - k + 1) * np.cos(np.pi * k / (m + 1)) + np.sin(np.pi * k / (m + 1)) / np.tan(np.pi / (m + 1))) / (m + 1)
    ta, tb = np.arccos(np.clip((a - c) / e, -1, 1)), np.arccos(np.clip((b - c) / e, -1, 1))
    terms = np.empty(m)
    terms[0] = (ta - tb) / np.pi
    kk = k[1:]
    terms[1:] = 2 * (np.sin(kk * ta) - np.sin(kk * tb)) / (kk * np.pi)
    return float(np.sum(g * mu * terms))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--L", type=int, default=100)
    p.add_argument("--W", type=float, default=16.5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--csr", help="read H from this gen_matrices file instead of building it")
    p.add_argument("--center", type=float, default=0.0)
    p.add_argument("--counts", default="50,200")
    p.add_argument("--moments", type=int, default=256)
    p.add_argument("--vectors", type=int, default=10)
    p.add_argument("--exact", action="store_true", help="dense eigvalsh counts too (n <= 8000)")
    args = p.parse_args()

    H = read_csr(args.csr) if args.csr else anderson(args.L, args.W, args.seed)
    n = H.shape[0]
    bound = abs(H).sum(axis=1).max()  # Gershgorin: every eigenvalue in [-bound, bound]
    mu, c, e = kpm_moments(H, -bound, bound, args.moments, args.vectors, np.random.default_rng(12345))
    delta = 1e-3
    rho0 = count_between(mu, c, e, args.center - delta, args.center + delta) / (2 * delta)
    print(f"# n = {n}, spectrum within +-{bound:.4g}: rho({args.center:g}) = {rho0:.4f} per site and unit energy "
          f"(KPM, {args.moments} moments, {args.vectors} vectors)")
    exact = np.linalg.eigvalsh(H.toarray()) if args.exact and n <= 8000 else None
    for want in (int(s) for s in args.counts.split(",")):
        h = want / (2 * n * rho0)
        for _ in range(20):  # Newton on n * integral = want, the density at the ends as the slope
            got = n * count_between(mu, c, e, args.center - h, args.center + h)
            h += (want - got) / (2 * n * rho0)
        a, b = float(f"{args.center - h:.3g}"), float(f"{args.center + h:.3g}")
        line = f"{want} {a:.3g} {b:.3g} {n * count_between(mu, c, e, a, b):.1f}"
        if exact is not None:
            line += f" exact {int(((exact >= a) & (exact <= b)).sum())}"
        print(line)


if __name__ == "__main__":
    main()
