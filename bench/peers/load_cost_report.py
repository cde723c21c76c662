#!/usr/bin/env python3
"""The tables of run_load_cost.sh's JSON lines: ex1's whole-process time per plugin build (median, min-max,
ratio to no plugin), whether an unselected load held a CUDA context, and the first solve (EPSSetUp +
EPSSolve of a fresh process) and a new EPS per build, PETSc, Mat and where the type was chosen.

    load_cost_report.py OUT/load_cost.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def spread(values, scale=1.0):
    v = sorted(x * scale for x in values)
    return statistics.median(v), v[0], v[-1]


def main(path):
    records = [json.loads(line) for line in open(path) if line.startswith("{")]
    load = defaultdict(list)
    for r in records:
        if r["part"] == "load":
            load[r["plugin"]].append(r["ms"])
    if load:
        base = statistics.median(load["none"]) if load.get("none") else None
        print("| ex1 -n 100 -eps_type krylovschur | runs | median ms | min-max | / no plugin |\n|---|---:|---:|---:|---:|")
        for plugin in ("none", "new", "old"):
            if plugin in load:
                m, lo, hi = spread(load[plugin])
                print(f"| {plugin} | {len(load[plugin])} | {m:.0f} | {lo:.0f}-{hi:.0f} | {m / base:.3f} |" if base else "")
        print()
    for r in records:
        if r["part"] == "context":
            print(f"- context, plugin {r['plugin']} loaded and not selected: {'a CUDA context' if r['context'] else 'no CUDA context'}"
                  f" (process alive when sampled: {r['alive_when_sampled']})")
    first = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["part"] == "first" and r.get("rc") == 0 and "first_s" in r:
            build, petsc, *rest = r["run"].split("-")
            config = "-".join(rest[:-2])  # [mat-]option|code
            first[(r["case"], petsc, config)][build].append((r["first_s"], r["new_eps_s"]))
    if first:
        print("\n| case | PETSc | Mat, type chosen | new: first ms | old: first ms | new / old | new: new EPS ms | old: new EPS ms |")
        print("|---|---|---|---:|---:|---:|---:|---:|")
        for (case, petsc, config), builds in sorted(first.items()):
            row = [case, petsc, config]
            med = {}
            for b in ("new", "old"):
                if b in builds:
                    m, lo, hi = spread([x[0] for x in builds[b]], 1e3)
                    med[b] = m
                    row.append(f"{m:.1f} ({lo:.1f}-{hi:.1f})")
                else:
                    row.append("-")
            row.append(f"{med['new'] / med['old']:.3f}" if len(med) == 2 else "-")
            for b in ("new", "old"):
                row.append(f"{spread([x[1] for x in builds[b]], 1e3)[0]:.1f}" if b in builds else "-")
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
