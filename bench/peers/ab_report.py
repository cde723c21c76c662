#!/usr/bin/env python3
"""The report of run_ab.sh: per case and k, A's and B's median solve time (min-max), B/A, whether the operator
applications and the eigenvalues are the same (largest relative difference of the eigenvalues).

    ab_report.py OUT/ab.jsonl
"""
import json
import statistics
import sys


def main(path):
    runs = {}
    for line in open(path):
        r = json.loads(line)
        runs.setdefault((r["case"], r["k"]), {}).setdefault(r["side"], []).append(r)
    print("| case | k | A median (min–max), ms | B median (min–max), ms | B/A | products A / B | eigenvalues: max rel. diff |")
    print("|---|---:|---:|---:|---:|---|---:|")
    for (case, k), sides in sorted(runs.items()):
        A, B = sides.get("A", []), sides.get("B", [])
        if not A or not B or any(r.get("status") != "ok" for r in A + B):
            print(f"| {case} | {k} | {len(A)} runs | {len(B)} runs | — | not all ok | — |")
            continue
        ta, tb = (statistics.median(r["time_s"] for r in s) * 1e3 for s in (A, B))
        ra, rb = (f"{min(r['time_s'] for r in s) * 1e3:.2f}–{max(r['time_s'] for r in s) * 1e3:.2f}" for s in (A, B))
        ma, mb = sorted({r["matvecs"] for r in A}), sorted({r["matvecs"] for r in B})
        diff = max((abs(x - y) / max(abs(x), 1e-300) for ra, rb in zip(A, B) for x, y in zip(ra["eigs"], rb["eigs"])), default=0.0)
        same = "same" if ma == mb else "differ"
        print(f"| {case} | {k} | {ta:.2f} ({ra}) | {tb:.2f} ({rb}) | {tb / ta:.3f} | {same}: {ma} / {mb} | {diff:.1e} |")


if __name__ == "__main__":
    main(sys.argv[1])
