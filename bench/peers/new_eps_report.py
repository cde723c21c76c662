#!/usr/bin/env python3
"""Tables of bench/peers/run_new_eps.sh's new_eps.jsonl: per matrix and k, a new EPS and a re-solve
(median and min-max of the 5 in one process) for cudalanczos (defaults and each option set) beside
krylovschur on the GPU (defaults and -eps_ncv) and CuPy's eigsh (its re-solve after a warm-up), with
ours / best peer, and every returned eigenvalue compared with krylovschur's (count and max relative
difference).

    new_eps_report.py new_eps.jsonl [view-logs-folder]

With the logs folder (run_new_eps.sh's OUT/logs), the products and passes of each cudalanczos option set
come from its -eps_view run."""
import json
import math
import os
import re
import sys
from collections import defaultdict


def ms(x):
    return 1e3 * x


def span(all_s):
    return f"{ms(min(all_s)):.1f}–{ms(max(all_s)):.1f}"


def counts(logs, run):
    """'products / passes' from the last -eps_view of an option set's view run, or ''."""
    path = os.path.join(logs, run + "-view.log") if logs else ""
    if not path or not os.path.exists(path):
        return ""
    text = open(path).read()
    prod = re.findall(r"last solve: (\d+) operator applications", text)
    parts = re.findall(r"(\d+) until the nev-th pair converged.*?, (\d+) verification, (\d+) true-residual check; (\d+) passes", text)
    if not prod or not parts:
        return ""
    before, verif, check, passes = parts[-1]
    return f"{prod[-1]} ({before} + {verif} verification + {check} check) / {passes}"


def exact_values(case, n, k):
    """The k largest eigenvalues of the suite's 3-D Laplacian (N^3 rows, Dirichlet): 6 - 2 sum cos(pi i/(N+1))
    over the three axes, copies included; None for other matrices."""
    if case != "lap3d":
        return None
    N = round(n ** (1 / 3))
    c = sorted((2 * math.cos(math.pi * i / (N + 1)) for i in range(1, N + 1)), reverse=True)[:k]
    return sorted((6 + a + b + d for a in c for b in c for d in c), reverse=True)[:k]


def missing(values, exact, tol=1e-7):
    """How many of the exact values (copies counted) the returned ones leave out."""
    left = list(values)
    miss = 0
    for x in exact:
        j = next((i for i, y in enumerate(left) if abs(x - y) <= tol * abs(x)), None)
        if j is None:
            miss += 1
        else:
            left.pop(j)
    return miss


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    logs = sys.argv[2] if len(sys.argv) > 2 else ""
    by = defaultdict(list)
    cupy = {}
    for r in rows:
        if r.get("bench") == "cupy" and r.get("status") == "ok":
            cupy[(r["case"], r["k"])] = r
        elif r.get("bench") == "user_times":
            by[(r["case"], r["k"])].append(r)
    for (case, k), runs in sorted(by.items()):
        peers = [r for r in runs if r["solver"] == "krylovschur"]
        ref = next((r for r in peers if not r["variant"]), None)
        best = min([r["new_eps_s"] for r in peers] + ([cupy[(case, k)]["time_s"]] if (case, k) in cupy else []))
        exact = exact_values(case, runs[0]["n"], k)
        print(f"\n### {case}, k = {k}\n")
        if exact:
            print("Exact values (copies included): " + ", ".join(f"{x:.9f}" for x in exact) + "; the last column says how many each solver left out.\n")
        print("| solver | options | new EPS ms | re-solve ms | first solve ms | new EPS / best peer | nconv | values vs krylovschur | products (parts) / passes |")
        print("|---|---|---:|---:|---:|---:|---:|---|---|")
        for r in runs:
            diff = ""
            if ref and r is not ref and r.get("values") and ref.get("values"):
                a, b = r["values"][:k], ref["values"][:k]
                d = max(abs(x - y) / max(abs(y), 1e-300) for x, y in zip(a, b)) if a and b else float("nan")
                diff = f"{len(a)} of {len(b)}, max rel. diff {d:.1e}"
            if exact and r.get("values"):
                diff += f"; exact values missing: {missing(r['values'][:k], exact)}"
            ratio = f"{r['new_eps_s'] / best:.2f}" if r["solver"] != "krylovschur" else ""
            print(f"| {r['solver']} | `{r['variant'] or 'defaults'}` | {ms(r['new_eps_s']):.1f} ({span(r['new_eps_all_s'])}) | "
                  f"{ms(r['resolve_s']):.1f} ({span(r['resolve_all_s'])}) | {ms(r['first_s']):.1f} | {ratio} | {r['min_nconv']} | {diff} | "
                  f"{counts(logs, r['run']) if r['solver'] != 'krylovschur' else ''} |")
        if (case, k) in cupy:
            c = cupy[(case, k)]
            d = ""
            if ref and ref.get("values"):
                a, b = sorted(c["eigs"], reverse=True)[:k], ref["values"][:k]
                d = f"{len(a)} of {len(b)}, max rel. diff {max(abs(x - y) / abs(y) for x, y in zip(a, b)):.1e}"
                if exact:
                    d += f"; exact values missing: {missing(a, exact)}"
            print(f"| CuPy eigsh | ncv {c['ncv']} | {ms(c['time_s']):.1f} (one re-solve) | | | | {len(c['eigs'])} | {d} | {c['matvecs']} products |")


if __name__ == "__main__":
    main()
