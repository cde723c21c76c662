#!/usr/bin/env python3
"""Operator applications per suite case and k, without a GPU: SLEPc's krylovschur (its MatMult log count)
against cudalanczos on the host backend with and without the multiplicity verification, and where
cudalanczos's products went (-eps_view: until the nev-th pair converged, verification, true-residual
check, thrown away). Operator counts do not depend on the machine: the host backend and the CUDA backend
run the same driver, so the counts match up to rounding, except the look-ahead steps a one-process GPU
runs ahead of a look that ends its cycle (reported here as "queued and dropped": the host runs none).

    counts.py --bin BUILD --out OUT.jsonl [--mats DIR] [--cases a,b] [--variants v,w] [--medium] [--block 4] [--table OUT.md]
    counts.py --table OUT.md --from A.jsonl [B.jsonl ...] [--before OLD.jsonl ...]

--medium generates the sparse matrices at the sizes of gen_matrices --medium (lap2d 200^2, lap3d 34^3,
powerlaw 2*10^5, randsym 10^5); the dense cases take their size from the name (dense2048, dense4096).
"""
import argparse
import json
import os
import subprocess
import sys

CASES = {  # case -> [(which, ks)]
    "dense2048": [("largest", [1, 10, 50])],
    "dense4096": [("largest", [1, 10, 50])],
    "powerlaw": [("largest", [1, 10, 50])],
    "randsym": [("largest", [1, 10, 50])],
    "lap3d": [("largest", [1, 10, 50]), ("smallest", [10])],
    "lap2d": [("largest", [1, 10, 50]), ("smallest", [10])],
}


def variants(case, block):
    v = [("krylovschur", ["-eps_type", "krylovschur"]),
         ("ours", ["-eps_type", "cudalanczos", "-eps_cudalanczos_backend", "host"]),
         ("ours_noverify", ["-eps_type", "cudalanczos", "-eps_cudalanczos_backend", "host", "-eps_cudalanczos_verify", "0"])]
    if case.startswith("dense") and block > 1:  # what the solver chooses for dense >= 8192 rows at k >= 10
        b = ["-eps_cudalanczos_block_size", str(block)]
        v += [("ours_block", v[1][1] + b), ("ours_block_noverify", v[2][1] + b)]
    return v


def run(a):
    os.makedirs(a.mats, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    with open(a.out, "a") as out:
        for case in a.cases.split(","):
            if not case.startswith("dense") and not os.path.exists(os.path.join(a.mats, case + ".csr")):
                subprocess.run([os.path.join(a.bin, "bench/peers/gen_matrices"), a.mats] + (["--medium"] if a.medium else []) + [case],
                               check=True, stdout=subprocess.DEVNULL)
            for which, ks in CASES[case]:
                for name, opts in variants(case, a.block):
                    if a.variants and name not in a.variants.split(","):
                        continue
                    if name.startswith("ours_block") and max(ks) < 10:
                        continue
                    kk = [k for k in ks if not name.startswith("ours_block") or k >= 10]
                    cmd = [os.path.join(a.bin, "bench/peers/bench_eps"), "-case", case, "-dir", a.mats, "-k", ",".join(map(str, kk)),
                           "-which", which, "-warmup", "none", "-cap", str(a.cap)] + opts
                    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
                    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
                    if p.returncode != 0 or not lines:
                        sys.stderr.write(f"counts.py: {case} {which} {name} failed (rc {p.returncode}):\n{p.stdout[-2000:]}{p.stderr[-2000:]}\n")
                    for l in lines:
                        rec = json.loads(l)
                        rec["variant"] = name
                        rec["command"] = " ".join(cmd)
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
                        print(f"{case:10s} {which:8s} k={rec['k']:3d} {name:20s} matvecs={rec['matvecs']:6d} "
                              f"status={rec['status']} res={rec['max_rel_res']} time={rec['time_s']}", flush=True)


def load(files):
    recs = {}
    for f in files:
        for l in open(f):
            r = json.loads(l)
            recs[(r["case"], r["which"], r["k"], r["variant"])] = r
    return recs


def table(after_files, path, before_files=()):
    """One row per case, which, k (and per block variant): krylovschur, cudalanczos with and without the
    verification (before -> after where a before run is given), the ratios, and the after run's split."""
    after, before = load(after_files), load(before_files)
    order = list(CASES)
    keys = sorted({(c, w, k) for c, w, k, _ in after}, key=lambda t: (order.index(t[0]) if t[0] in order else 99, t[1] != "largest", t[2]))

    def num(r, field="matvecs"):
        if r is None:
            return None
        return r[field] if r["status"] == "ok" else None

    def cell(b, a, field="matvecs"):
        x, y = num(b, field), num(a, field)
        if a is None:
            return "–"
        ys = str(a[field]) + ("" if a["status"] == "ok" else " (" + a["status"] + ")")
        return f"{x} → {ys}" if x is not None and x != y else ys

    lines = ["| case | which | k | krylovschur | cudalanczos, verify | no verify | verify / no verify | no verify / krylovschur "
             "| until nev-th | verification | check | thrown away: redone + look-ahead (GPU) | max res. |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c, w, k in keys:
        ks = after.get((c, w, k, "krylovschur")) or before.get((c, w, k, "krylovschur"))
        for tag, v_on, v_off in [("", "ours", "ours_noverify"), (" (block 4)", "ours_block", "ours_block_noverify")]:
            on, off = after.get((c, w, k, v_on)), after.get((c, w, k, v_off))
            if on is None and off is None:
                continue
            b_on, b_off = before.get((c, w, k, v_on)), before.get((c, w, k, v_off))
            ratio = f"{on['matvecs'] / off['matvecs']:.2f}" if on and off and off["matvecs"] > 0 else "–"
            vs = f"{off['matvecs'] / ks['matvecs']:.2f}" if off and ks and ks["matvecs"] > 0 else "–"
            kscell = str(ks["matvecs"]) if ks else "–"
            if tag:  # passes over A: a block of 4 products is one
                ratio = f"{on['passes'] / off['passes']:.2f}" if on and off and off.get("passes") else ratio
                vs = f"{off['passes'] / ks['matvecs']:.2f} (passes)" if off and ks and off.get("passes") else vs
                kscell = "–" if not ks else kscell
            split = ("–",) * 4
            if on and "before_nev" in on:
                split = (on["before_nev"], on["verification"], on["check"], f"{on['redone']} + {on['lookahead_queued']}")
            oncell = cell(b_on, on) + (f" ({on['passes']} passes)" if tag and on and on.get("passes") else "")
            offcell = cell(b_off, off) + (f" ({off['passes']} passes)" if tag and off and off.get("passes") else "")
            lines.append(f"| {c}{tag} | {w} | {k} | {kscell} | {oncell} | {offcell} | {ratio} | {vs} | "
                         + " | ".join(map(str, split)) + f" | {on['max_rel_res'] if on else '–'} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--out")
    ap.add_argument("--mats", default="/tmp/cudalanczos-counts/mats")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--medium", action="store_true")
    ap.add_argument("--block", type=int, default=4)
    ap.add_argument("--cap", type=float, default=600)
    ap.add_argument("--variants", help="only these (krylovschur, ours, ours_noverify, ours_block, ours_block_noverify)")
    ap.add_argument("--table")
    ap.add_argument("--from", dest="sources", nargs="*", default=[], help="the after runs' JSON lines (default --out)")
    ap.add_argument("--before", nargs="*", default=[], help="an earlier run's JSON lines: its counts are shown as before -> after")
    a = ap.parse_args()
    if a.bin:
        run(a)
    if a.table:
        table(a.sources or [a.out], a.table, a.before)


if __name__ == "__main__":
    main()
