#!/usr/bin/env python3
"""Operator applications per suite case and k, without a GPU: SLEPc's krylovschur (its MatMult log count)
against cudalanczos on the host backend with and without the multiplicity verification, and where
cudalanczos's products went (-eps_view: until the nev-th pair converged, verification, true-residual
check, thrown away). Operator counts do not depend on the machine: the host backend and the CUDA backend
run the same driver, so the counts match up to rounding, except the look-ahead steps a one-process GPU
runs ahead of a look that ends its cycle (reported here as "queued and dropped": the host runs none).

    counts.py --bin BUILD --out OUT.jsonl [--mats DIR] [--cases a,b] [--medium] [--block 4] [--table OUT.md]
    counts.py --table OUT.md --from A.jsonl [B.jsonl ...]

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


def table(files, path):
    recs = {}
    for f in files:
        for l in open(f):
            r = json.loads(l)
            recs[(r["case"], r["which"], r["k"], r["variant"])] = r
    keys = sorted({(c, w, k) for c, w, k, _ in recs}, key=lambda t: (list(CASES).index(t[0]) if t[0] in CASES else 99, t[1], t[2]))

    def cell(r, field="matvecs"):
        if r is None:
            return "–"
        s = str(r[field])
        return s if r["status"] == "ok" else s + " (" + r["status"] + ")"

    lines = ["| case | n | which | k | krylovschur | ours, verify | ours, no verify | with/without | no verify / krylovschur "
             "| until nev-th | verification | check | thrown away (redone + look-ahead queued) | max res. (verify) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c, w, k in keys:
        ks, o, n = (recs.get((c, w, k, v)) for v in ("krylovschur", "ours", "ours_noverify"))
        for tag, o2, n2 in [("", o, n), (" (block)", recs.get((c, w, k, "ours_block")), recs.get((c, w, k, "ours_block_noverify")))]:
            if o2 is None and n2 is None:
                continue
            ratio = f"{o2['matvecs'] / n2['matvecs']:.2f}" if o2 and n2 and n2["matvecs"] > 0 else "–"
            vs = f"{n2['matvecs'] / ks['matvecs']:.2f}" if n2 and ks and ks["matvecs"] > 0 else "–"
            if tag and o2 and "passes" in o2:
                ratio += f" (passes {o2['passes']}/{n2['passes']})" if n2 else ""
            split = ("–",) * 4
            if o2 and "before_nev" in o2:
                split = (o2["before_nev"], o2["verification"], o2["check"], f"{o2['redone'] + o2['lookahead_queued']} ({o2['redone']} + {o2['lookahead_queued']})")
            n_rows = (o2 or n2 or ks)["n"]
            lines.append(f"| {c}{tag} | {n_rows} | {w} | {k} | {cell(ks)} | {cell(o2)} | {cell(n2)} | {ratio} | {vs} | "
                         + " | ".join(map(str, split)) + f" | {o2['max_rel_res'] if o2 else '–'} |")
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
    ap.add_argument("--table")
    ap.add_argument("--from", dest="sources", nargs="*", default=[])
    a = ap.parse_args()
    if a.bin:
        run(a)
    if a.table:
        table(a.sources or [a.out], a.table)


if __name__ == "__main__":
    main()
