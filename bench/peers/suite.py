#!/usr/bin/env python3
"""Runs the peer benchmark (bench/peers/README.md) within a time budget; run_suite.sh is its front door.

    suite.py --bin DIR --out OUT [--budget 420] [--quick | --small] [--cases a,b] [--peers p,q] [--np N]
             [--cap 60] [--floor-cap 60] [--eigh-cap 150] [--scratch DIR] [--python-dry-run] [--prefix P]

DIR is a build folder or a carry folder: the binaries are DIR/bench/peers/{bench_eps,krylov_floor,
gen_matrices}, the plugin DIR/libslepccudalanczos.so. Items (one process each: one solver, one matrix,
one `which`, one or several k) run cheap first; an item that no longer fits the budget is recorded as
"skipped: budget"; one that runs out of it is stopped and its missing k recorded as "timeout". Every
record goes to OUT/PREFIX.json; report.py turns it into OUT/PREFIX.md and the PNGs; the raw logs go to
OUT/PREFIX-logs.tar.gz (six files in all, small enough to copy back from the GPU host).
"""
import argparse
import datetime
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# case -> (kind, dense size in --small runs)
CASES = {
    "dense4096": ("dense", 300),
    "dense12288": ("dense", 600),
    "dense32768": ("dense", 1000),
    "powerlaw": ("sparse", 0),
    "randsym": ("sparse", 0),
    "lap3d": ("sparse", 0),
    "lap2d": ("sparse", 0),
}
PEERS = ["cudalanczos", "cudalanczos_noverify", "cudalanczos_block", "floor", "cupy_eigsh", "cupy_eigh", "krylovschur"]


def plan(quick, noverify=False, block=0):
    """(case, which, ks, peer) in the order they run. The GPU solvers and the floor first, cheap matrices
    first (all k in one process each); the CPU peer (krylovschur, minutes on the big cases) after the
    GPU solvers of the same group; the Laplacians one k at a time (seconds to minutes per solve)."""
    items = []
    gpu = (["cudalanczos"] + (["cudalanczos_noverify"] if noverify else []) + (["cudalanczos_block"] if block > 1 else [])
           + ["floor", "cupy_eigsh", "cupy_eigh"])

    def add(case, which, ks, peers):
        for p in peers:
            if p == "cupy_eigh" and not case.startswith("dense"):
                continue
            items.append((case, which, ks, p))

    if quick:
        for c in ["dense4096", "dense12288", "powerlaw"]:
            add(c, "largest", [1, 10], gpu + ["krylovschur"])
        return items
    for c in ["dense4096", "dense12288", "powerlaw", "randsym"]:
        add(c, "largest", [1, 10, 50], gpu + ["krylovschur"])
    add("dense32768", "largest", [1, 10, 50], [p for p in gpu if p != "cupy_eigh"])
    for c in ["lap3d", "lap2d"]:
        add(c, "largest", [1], [p for p in gpu if p != "cupy_eigh"])
    add("dense32768", "largest", [1, 10, 50], ["krylovschur"])
    for c in ["lap3d", "lap2d"]:
        add(c, "largest", [1], ["krylovschur"])
    add("dense32768", "largest", [1, 10, 50], ["cupy_eigh"])
    for which, k in [("largest", 10), ("smallest", 10), ("largest", 50)]:
        for c in ["lap3d", "lap2d"]:
            add(c, which, [k], ["cudalanczos", "floor", "cupy_eigsh", "krylovschur"])
    return items


def sh(cmd):
    return " ".join(shlex.quote(str(c)) for c in cmd)


def gpu_info():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        return out[0] if out else "no GPU (nvidia-smi printed nothing)"
    except Exception:
        return "no GPU (no nvidia-smi)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=420)
    ap.add_argument("--quick", action="store_true", help="dense4096, dense12288, powerlaw; k = 1, 10")
    ap.add_argument("--small", action="store_true", help="smoke-test sizes (no GPU needed)")
    ap.add_argument("--cases", default="", help="only these matrices (comma-separated)")
    ap.add_argument("--peers", default="", help="only these solvers: " + ",".join(PEERS))
    ap.add_argument("--np", type=int, default=0, help="MPI ranks for krylovschur (default: nproc)")
    ap.add_argument("--cap", type=float, default=60, help="seconds per solve (cudalanczos, krylovschur, CuPy eigsh)")
    ap.add_argument("--floor-cap", type=float, default=60)
    ap.add_argument("--eigh-cap", type=float, default=150)
    ap.add_argument("--noverify", action="store_true",
                    help="also cudalanczos with -eps_cudalanczos_verify false (cheap matrices, the big dense one, Laplacians k=1)")
    ap.add_argument("--block", type=int, default=0,
                    help="also cudalanczos with -eps_cudalanczos_block_size BLOCK (peer cudalanczos_block)")
    ap.add_argument("--block-options", default="", help="more PETSc options for cudalanczos_block, e.g. '-eps_ncv 96'")
    ap.add_argument("--scratch", default=os.environ.get("BENCH_SCRATCH", "/tmp/cudalanczos-bench"))
    ap.add_argument("--python-dry-run", action="store_true", help="peers.py --dry-run (NumPy/SciPy instead of CuPy)")
    ap.add_argument("--resume", default="", help="an earlier run's PREFIX.json: its finished items are not run again, and the "
                    "report merges both")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--command", default="", help="the command line to record (run_suite.sh passes its own)")
    a = ap.parse_args()

    t_start = time.monotonic()
    reserve = 15.0  # report, plots, tarball
    bindir = os.path.abspath(a.bin)
    peers_bin = os.path.join(bindir, "bench", "peers")
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    logs = os.path.join(a.scratch, "logs")
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs, exist_ok=True)
    mats = os.path.join(a.scratch, "mats-small" if a.small else "mats")
    os.makedirs(mats, exist_ok=True)
    nproc = os.cpu_count() or 1
    np_ranks = a.np or nproc
    gpu = gpu_info()
    short = gpu.split(",")[0].replace("NVIDIA", "").strip().lower().replace(" ", "-") if not gpu.startswith("no GPU") else "nogpu"
    prefix = a.prefix or f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}-{short}-suite"

    # Environments: binaries get the PETSc/MPI runtime (env.sh's LD_LIBRARY_PATH, kept by run_suite.sh)
    # and the plugin's folder; Python gets the library path without that runtime (its own libraries).
    bin_env = dict(os.environ)
    bin_env["LD_LIBRARY_PATH"] = ":".join(x for x in [bindir, os.environ.get("BENCH_BIN_LD_LIBRARY_PATH", os.environ.get("LD_LIBRARY_PATH", ""))] if x)
    bin_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    bin_env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    py_env = dict(os.environ)
    py_env["PYTHONUNBUFFERED"] = "1"
    py_env.pop("BENCH_BIN_LD_LIBRARY_PATH", None)

    only_cases = set(filter(None, a.cases.split(",")))
    only_peers = set(filter(None, a.peers.split(",")))
    items = [it for it in plan(a.quick, a.noverify, a.block) if (not only_cases or it[0] in only_cases) and (not only_peers or it[3] in only_peers)]

    done = set()
    if a.resume:
        with open(a.resume) as f:
            for r in json.load(f).get("records", []):
                st = str(r.get("status", ""))
                if not st.startswith("skipped") and st != "cap: budget":
                    done.add((r.get("case"), r.get("which"), r.get("k"), r.get("peer")))
        items = [it for it in items if not all((it[0], it[1], k, it[3]) in done for k in it[2])]
    records = []
    meta = dict(gpu=gpu, date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                command=a.command or sh([sys.argv[0]] + sys.argv[1:]), host_cores=nproc, mpi_ranks=np_ranks, budget_s=a.budget,
                cap_s=a.cap, floor_cap_s=a.floor_cap, eigh_cap_s=a.eigh_cap, small=a.small, quick=a.quick, prefix=prefix,
                python=sys.version.split()[0], hostname=os.uname().nodename)
    json_path = os.path.join(out, prefix + ".json")

    def save():
        meta["elapsed_s"] = round(time.monotonic() - t_start, 1)
        with open(json_path, "w") as f:
            json.dump(dict(meta=meta, records=records), f, indent=1)

    def remaining():
        return a.budget - (time.monotonic() - t_start) - reserve

    def log(msg):
        print(f"[{time.monotonic() - t_start:7.1f} s] {msg}", flush=True)

    def run(cmd, timeout, env, name):
        """Runs cmd, returns (rc, JSON lines, seconds, timed_out). Output to logs/name.log."""
        t0 = time.monotonic()
        path = os.path.join(logs, name + ".log")
        with open(path, "w") as f:
            f.write("$ " + sh(cmd) + "\n")
            f.flush()
            try:
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True, start_new_session=True)
            except OSError as e:
                f.write(f"cannot start: {e}\n")
                return 127, [], 0.0, False
            lines, timed_out = [], False
            try:
                stdout, _ = p.communicate(timeout=max(1.0, timeout))
            except subprocess.TimeoutExpired:
                # the process group it started: SIGTERM first (mpiexec then ends its ranks), SIGKILL after 5 s
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    stdout, _ = p.communicate(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    stdout, _ = p.communicate()
            f.write(stdout or "")
            f.write(f"\n# rc {p.returncode}, {time.monotonic() - t0:.1f} s{', killed at the time limit' if timed_out else ''}\n")
        for line in (stdout or "").splitlines():
            line = line.strip()
            if line.startswith("{") and '"bench"' in line:
                try:
                    lines.append(json.loads(line))
                except ValueError:
                    pass
        return p.returncode, lines, time.monotonic() - t0, timed_out

    generated = {}

    def ensure_matrix(case):
        if CASES[case][0] == "dense":
            return True
        if case in generated:
            return generated[case]
        path = os.path.join(mats, case + ".csr")
        if os.path.exists(path):
            generated[case] = True
            return True
        cmd = [os.path.join(peers_bin, "gen_matrices"), mats] + (["--small"] if a.small else []) + [case]
        rc, lines, secs, to = run(cmd, min(180, max(5, remaining())), bin_env, f"gen-{case}")
        log(f"gen {case}: rc {rc}, {secs:.1f} s")
        generated[case] = rc == 0 and os.path.exists(path)
        return generated[case]

    log(f"{len(items)} items{f' ({len(done)} records done in {a.resume})' if a.resume else ''}, budget {a.budget:.0f} s, GPU: {gpu}, {nproc} cores, krylovschur on {np_ranks} ranks")
    for case, which, ks, peer in items:
        name = f"{peer}-{case}-{which}-k{'_'.join(map(str, ks))}"
        base = dict(case=case, which=which, peer=peer, solver=peer)
        left = remaining()
        if left < 10:
            for k in ks:
                records.append(dict(base, k=k, status="skipped: budget"))
            log(f"{name}: skipped (budget)")
            save()
            continue
        if not ensure_matrix(case):
            for k in ks:
                records.append(dict(base, k=k, status="failed: matrix generation"))
            save()
            continue
        left = remaining()
        dense_n = CASES[case][1] if (a.small and CASES[case][0] == "dense") else 0
        kl = ",".join(map(str, ks))
        nsolves = len(ks)
        if peer in ("cudalanczos", "cudalanczos_noverify", "cudalanczos_block", "krylovschur"):
            cap = min(a.cap, max(1.0, left - 5))
            cmd = [os.path.join(peers_bin, "bench_eps"), "-case", case, "-dir", mats, "-k", kl, "-which", which, "-cap", f"{cap:.1f}",
                   "-eps_type", "cudalanczos" if peer.startswith("cudalanczos") else peer]
            if peer == "cudalanczos_noverify":
                cmd += ["-eps_cudalanczos_verify", "false"]
            if peer == "cudalanczos_block":
                cmd += ["-eps_cudalanczos_block_size", str(a.block)] + a.block_options.split()
            if dense_n:
                cmd += ["-n", str(dense_n)]
            env = dict(bin_env)
            if peer == "krylovschur":
                env["OMP_NUM_THREADS"] = "1"
                mpi = ["mpiexec", "-n", str(np_ranks)] + (["--use-hwthread-cpus"] if np_ranks <= nproc else ["--oversubscribe"])
                cmd = mpi + cmd + ["-mat_type", "aij"] if CASES[case][0] == "sparse" else mpi + cmd
            limit = nsolves * (cap * 1.15 + 10) + 60
        elif peer == "floor":
            cap = min(a.floor_cap, max(1.0, left - 5))
            cmd = [os.path.join(peers_bin, "krylov_floor"), "--case", case, "--dir", mats, "--ks", kl, "--which", which, "--cap", f"{cap:.1f}"]
            if dense_n:
                cmd += ["--n", str(dense_n)]
            env = bin_env
            limit = cap * 1.2 + 90
        else:
            cap = min(a.eigh_cap if peer == "cupy_eigh" else a.cap, max(1.0, left - 5))
            cmd = [sys.executable, os.path.join(HERE, "peers.py"), "--solver", "eigh" if peer == "cupy_eigh" else "eigsh", "--case", case,
                   "--dir", mats, "--ks", kl, "--which", which, "--cap", f"{cap:.1f}"]
            if dense_n:
                cmd += ["--n", str(dense_n)]
            if a.python_dry_run:
                cmd.append("--dry-run")
            env = py_env
            # CuPy cannot be stopped inside a solve: the process is, at the cap (plus loading and warm-up)
            limit = cap + 40 if peer == "cupy_eigh" else nsolves * cap + 40
        timeout = min(limit, left)
        rc, lines, secs, timed_out = run(cmd, timeout, env, name)
        if peer == "krylovschur" and rc != 0 and not lines and secs < 20 and "--use-hwthread-cpus" in cmd:
            # an mpiexec that refuses the slot count: once more, oversubscribed
            cmd = [c if c != "--use-hwthread-cpus" else "--oversubscribe" for c in cmd]
            rc, lines, secs2, timed_out = run(cmd, min(limit, remaining()), env, name + "-retry")
            secs += secs2
        full_cap = a.floor_cap if peer == "floor" else a.eigh_cap if peer == "cupy_eigh" else a.cap
        budget_cut = cap < full_cap - 0.5  # the cap was lowered to fit the budget
        got = set()
        for d in lines:
            if d.get("bench") == "gen":
                continue
            d.update(peer=peer, item=name)
            if budget_cut and str(d.get("status", "")).startswith(("timeout", "cap: time")):
                d["status"] = "cap: budget" if peer == "floor" else "skipped: budget"
                d["note"] = f"stopped at {cap:.0f} s, when the budget ran out"
            if d.get("bench") == "cupy" and not a.python_dry_run:
                d["solver"] = peer
            records.append(d)
            got.add(d.get("k"))
        for k in ks:
            if k not in got:
                if timed_out and timeout < limit:
                    why, note = "skipped: budget", f"stopped after {secs:.0f} s when the budget ran out"
                elif timed_out:
                    why, note = "timeout", f"killed after {secs:.0f} s (the item's limit, from the caps)"
                    records.append(dict(base, k=k, status=why, note=note, item=name, cap_s=cap))
                    continue
                else:
                    why, note = f"failed (rc {rc})", "see the log"
                records.append(dict(base, k=k, status=why, note=note, item=name))
        status = ", ".join(f"k={d.get('k')}: {d.get('status')} {d.get('time_s', '')}" for d in records if d.get("item") == name)
        log(f"{name}: rc {rc}, {secs:.1f} s; {status}")
        save()

    # report: markdown and plots
    save()
    rep = [sys.executable, os.path.join(HERE, "report.py")] + ([os.path.abspath(a.resume)] if a.resume else []) + [json_path, "--out", out,
                                                                                                                 "--prefix", prefix]
    rc, _, secs, _ = run(rep, 120, py_env, "report")
    log(f"report: rc {rc}, {secs:.1f} s -> {os.path.join(out, prefix + '.md')}")
    with tarfile.open(os.path.join(out, prefix + "-logs.tar.gz"), "w:gz") as t:
        t.add(logs, arcname=prefix + "-logs")
    shutil.rmtree(logs, ignore_errors=True)
    log(f"done in {time.monotonic() - t_start:.0f} s; outputs: {', '.join(sorted(os.listdir(out)))}")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
