#!/usr/bin/env python3
"""The peer benchmark's report: markdown table and PNG plots from suite.py's JSON (bench/peers/README.md).

    report.py RESULTS.json [MORE.json ...] --out DIR [--prefix NAME]

Several JSON files (e.g. a first call and a second one for the long cases) are merged: for the same
(matrix, which, k, solver) a finished record replaces a skipped or timed-out one. Writes DIR/NAME.md,
DIR/NAME-time.png and DIR/NAME-matvecs.png (NAME: the first file's prefix unless --prefix).
"""
import argparse
import json
import math
import os
import sys

TARGET = 1e-8
ORDER = ["dense4096", "dense12288", "dense32768", "powerlaw", "randsym", "lap3d", "lap2d"]
TITLE = {
    "dense4096": "dense 4096",
    "dense12288": "dense 12288",
    "dense32768": "dense 32768",
    "powerlaw": "power law (Chung-Lu)",
    "randsym": "random sparse sym.",
    "lap3d": "3-D Laplacian 100^3",
    "lap2d": "2-D Laplacian 1000^2",
}
PEERS = ["krylovschur", "cupy_eigsh", "cupy_eigh"]
# Best peer on one H200, from the issue (CuPy / SLEPc-GPU / floor), largest eigenvalues.
REFERENCE = {
    ("dense12288", "largest", 1): "12.5 ms / 8.6 ms / 3.1 ms",
    ("dense12288", "largest", 10): "338 / 199 / 133 ms",
    ("powerlaw", "largest", 1): "20 / 23.6 / 10 ms",
    ("powerlaw", "largest", 10): "92 / 86 / 33 ms",
    ("lap2d", "largest", 1): "12.3 s / 7.4 s / 0.25 s",
    ("lap2d", "largest", 10): "26.8 s / 16.7 s / —",
}


def ok(r):
    return r is not None and r.get("status") == "ok" and isinstance(r.get("time_s"), (int, float))


def rank(r):
    """How finished a record is (merging keeps the most finished)."""
    s = r.get("status", "")
    if s == "ok":
        return 3
    if s.startswith(("ok", "not converged")):
        return 2
    if s.startswith(("timeout", "failed")) or (s.startswith("cap:") and s != "cap: budget"):
        return 1
    return 0


def fmt_t(t):
    if t is None or not isinstance(t, (int, float)) or not math.isfinite(t):
        return "—"
    if t < 1e-3:
        return f"{t * 1e6:.0f} µs"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"


def fmt_e(x):
    return "—" if not isinstance(x, (int, float)) or not math.isfinite(x) else f"{x:.1e}"


def short_status(r):
    if r is None:
        return "not run"
    s = r.get("status", "?")
    if s.startswith("timeout"):
        cap = r.get("cap_s")
        return f"timeout (> {fmt_t(cap)})" if isinstance(cap, (int, float)) else "timeout"
    if s.startswith("skipped"):
        return "skipped: budget"
    if s.startswith("failed"):
        return "failed"
    return s


def cell_time_res(r):
    if not ok(r):
        if r is not None and r.get("status", "").startswith("ok (") and isinstance(r.get("time_s"), (int, float)):
            return f"{fmt_t(r['time_s'])} (res {fmt_e(r.get('max_rel_res'))}!)"
        return short_status(r)
    return f"{fmt_t(r['time_s'])} ({fmt_e(r.get('max_rel_res'))})"


def rel_diff(a, b):
    if not a or not b:
        return None
    m = min(len(a), len(b))
    return max(abs(x - y) / max(abs(x), 1e-300) for x, y in zip(a[:m], b[:m]))


_EXACT = {}


def exact_eigs(case, n, which, k):
    """The k wanted eigenvalues of the Dirichlet grid Laplacians, best first: sums of the 1-D spectra
    2 - 2 cos(i pi / (m + 1)) over the grid dimensions (gen_matrices.cpp); None for other matrices."""
    dim = {"lap2d": 2, "lap3d": 3}.get(case)
    if dim is None or not n:
        return None
    if (case, n) not in _EXACT:
        m = round(n ** (1.0 / dim))
        if m ** dim != n:
            return None
        s = [2 - 2 * math.cos(math.pi * i / (m + 1)) for i in range(1, m + 1)]
        vals = s
        for _ in range(dim - 1):
            vals = [a + b for a in vals for b in s]
        _EXACT[(case, n)] = sorted(vals)
    vals = _EXACT[(case, n)]
    return list(reversed(vals[-k:])) if which == "largest" else vals[:k]


def exact_error(r, exact):
    """Largest relative error of a finished solver's k eigenvalues (sorted like `exact`) against them."""
    if not ok(r) or not exact or not r.get("eigs") or len(r["eigs"]) < len(exact):
        return None
    got = sorted(r["eigs"][:len(exact)], reverse=exact[0] > exact[-1])
    return max(abs(x - y) / max(abs(y), 1e-300) for x, y in zip(got, exact))


def load(paths):
    metas, best = [], {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        metas.append(d.get("meta", {}))
        for r in d.get("records", []):
            key = (r.get("case"), r.get("which"), r.get("k"), r.get("peer") or r.get("solver"))
            if key not in best or rank(r) >= rank(best[key]):
                best[key] = r
    return metas, best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--prefix", default="")
    a = ap.parse_args()
    metas, recs = load(a.json)
    meta = metas[0] if metas else {}
    prefix = a.prefix or meta.get("prefix") or os.path.splitext(os.path.basename(a.json[0]))[0]
    os.makedirs(a.out, exist_ok=True)

    rows = sorted({(c, w, k) for (c, w, k, _) in recs if c},
                  key=lambda x: (ORDER.index(x[0]) if x[0] in ORDER else 99, x[1] != "largest", x[2]))
    get = lambda c, w, k, p: recs.get((c, w, k, p))

    ranks = {m.get("mpi_ranks") for m in metas if m.get("mpi_ranks")}
    np_txt = "/".join(str(x) for x in sorted(ranks)) or "?"
    L = []
    L.append(f"# cudalanczos against its peers{' (smoke test, small sizes)' if meta.get('small') else ''}")
    L.append("")
    for i, m in enumerate(metas):
        tag = "" if len(metas) == 1 else f" (run {i + 1})"
        L.append(f"- GPU{tag}: {m.get('gpu', '?')}; host: {m.get('host_cores', '?')} cores; date: {m.get('date', '?')}")
        L.append(f"- command{tag}: `{m.get('command', '?')}` (budget {m.get('budget_s', '?')} s, used {m.get('elapsed_s', '?')} s; "
                 f"caps per solve: {m.get('cap_s', '?')} s, floor {m.get('floor_cap_s', '?')} s, eigh {m.get('eigh_cap_s', '?')} s)")
    vers = sorted({r.get("version") for r in recs.values() if r.get("version")})
    if vers:
        L.append(f"- Python peers: {', '.join(vers)}")
    L.append("")
    L.append("Solve times after an untimed warm-up solve; in parentheses the largest true relative residual "
             "‖Ax − λx‖/(|λ|‖x‖) over the k pairs (target 1e-8). bench/peers/README.md says how each column is measured.")
    L.append("")
    hdr = ["matrix", "n", "nnz", "which", "k", "cudalanczos", "its", "matvecs", "max res.", "dev. MB",
           f"krylovschur (CPU, {np_txt} ranks)", "CuPy eigsh", "CuPy eigh (syevd)", "floor steps", "floor time", "best peer / ours",
           "ours / floor", "Δλ vs peers (closest / farthest)", "error vs exact λ: ours / CuPy eigsh / krylovschur",
           "reference: CuPy / SLEPc-GPU / floor"]
    L.append("| " + " | ".join(hdr) + " |")
    L.append("|" + "|".join(["---"] * 5 + ["---:"] * (len(hdr) - 6) + ["---"]) + "|")
    plot_rows = []
    warnings = []
    for c, w, k in rows:
        ours, fl = get(c, w, k, "cudalanczos"), get(c, w, k, "floor")
        peers = {p: get(c, w, k, p) for p in PEERS}
        any_r = next((r for r in [ours, fl] + list(peers.values()) if r and r.get("n")), None)
        n = any_r.get("n") if any_r else None
        nnz = any_r.get("nnz") if any_r else None
        best = min((r["time_s"] for r in peers.values() if ok(r)), default=None)
        ratio = f"{best / ours['time_s']:.2f}" if best and ok(ours) and ours["time_s"] > 0 else "—"
        fl_ok = fl is not None and fl.get("status") == "ok"
        fsteps = (f"{fl['steps']}" if fl_ok else (f"> {fl['steps']} ({fl.get('status')})" if fl and isinstance(fl.get("steps"), int) else short_status(fl)))
        ftime = fmt_t(fl.get("floor_s")) if fl_ok else "—"
        if fl_ok and ok(ours) and fl.get("floor_s"):
            over = f"{ours['time_s'] / fl['floor_s']:.1f}"
        else:
            over = "—"
        diffs = [rel_diff(ours.get("eigs"), r.get("eigs")) for r in peers.values() if ok(ours) and ok(r)]
        diffs = [d for d in diffs if d is not None]
        dl = (fmt_e(min(diffs)) if len(diffs) == 1 else f"{fmt_e(min(diffs))} / {fmt_e(max(diffs))}") if diffs else "—"
        if fl_ok and ok(ours):
            fd = rel_diff(ours.get("eigs"), fl.get("ritz"))
            if fd is not None and fd > 1e-6:
                ftime += " ‡"
        exact = exact_eigs(c, n, w, k)
        if exact:
            errs = [exact_error(r, exact) for r in (ours, peers["cupy_eigsh"], peers["krylovschur"])]
            ex = " / ".join(fmt_e(e) if e is not None else "—" for e in errs)
            fastest = min((r for r in peers.values() if ok(r)), key=lambda r: r["time_s"], default=None)
            fe = exact_error(fastest, exact)
            if ratio != "—" and fe is not None and fe > 1e-6:
                ratio += " §"
        else:
            ex = "—"
        cells = [TITLE.get(c, c), f"{n:,}" if n else "—", f"{nnz:,}" if nnz else "—", w, str(k),
                 fmt_t(ours["time_s"]) if ok(ours) else short_status(ours),
                 str(ours.get("its", "—")) if ours and ours.get("its") is not None else "—",
                 str(ours.get("matvecs", "—")) if ours and ours.get("matvecs") is not None else "—",
                 fmt_e(ours.get("max_rel_res")) if ours else "—",
                 f"{ours['dev_mb']:.0f}" if ours and isinstance(ours.get("dev_mb"), (int, float)) else "—",
                 cell_time_res(peers["krylovschur"]),
                 cell_time_res(peers["cupy_eigsh"]) + (f", {peers['cupy_eigsh'].get('attempts')} tries" if ok(peers["cupy_eigsh"]) and (peers["cupy_eigsh"].get("attempts") or 1) > 1 else ""),
                 cell_time_res(peers["cupy_eigh"]) if c.startswith("dense") else "n/a",
                 fsteps, ftime, ratio, over, dl, ex, REFERENCE.get((c, w, k), "")]
        L.append("| " + " | ".join(cells) + " |")
        plot_rows.append((c, w, k, ours, peers, fl))
        asums = {p: r.get("asum") for p, r in [("cudalanczos", ours), ("floor", fl)] + list(peers.items()) if r and isinstance(r.get("asum"), (int, float))}
        if len(asums) > 1:
            vals = list(asums.values())
            if max(vals) - min(vals) > 1e-9 * max(abs(v) for v in vals):
                warnings.append(f"{c}: the solvers' matrices differ (sum of entries {asums})")
    L.append("")
    L.append("its: restart cycles (SLEPc's iteration count); matvecs: matrix-vector products of the timed solve; dev. MB: device "
             "memory the solve used, matrix included. best peer / ours > 1: cudalanczos is faster than the fastest peer that "
             "finished. ours / floor: cudalanczos's time over the floor time. Δλ: largest relative difference between "
             "cudalanczos's k eigenvalues and a finished peer's, for the closest and the farthest peer (a large one where the "
             "spectrum has multiple eigenvalues: a solver that misses a copy returns a shifted list). ‡: the floor's Ritz values differ from cudalanczos's eigenvalues "
             "by more than 1e-6 (a single Krylov space misses copies of multiple eigenvalues). error vs exact λ: for the "
             "grid Laplacians, whose spectra are known in closed form, the largest relative error of the k returned eigenvalues "
             "against the k exact ones (multiplicities counted): a solver that misses copies shows it there. §: the fastest "
             "peer's eigenvalues are off the exact ones by more than 1e-6.")
    if warnings:
        L.append("")
        L.append("**Warnings**")
        L.extend("- " + x for x in warnings)

    # details: the peers' matvecs and tolerances
    L.append("")
    L.append("## Details")
    L.append("")
    L.append("| matrix | which | k | cudalanczos: iterate / vectors (s) | ncv (grown to) | cudalanczos, verify off: time / matvecs (res.) | krylovschur its / matvecs | CuPy eigsh its / matvecs / tol | floor: steps / one matvec (ms) / status |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for c, w, k, ours, peers, fl in plot_rows:
        ks_ = peers["krylovschur"]
        cu = peers["cupy_eigsh"]
        ours_split = (f"{ours.get('iterate_s', 0):.4g} / {ours.get('vectors_s', 0):.4g}" if ok(ours) and ours.get("iterate_s") is not None else "—")
        kscell = f"{ks_.get('its')} / {ks_.get('matvecs')}" if ok(ks_) else short_status(ks_)
        cucell = (f"{cu.get('its', '—')} / {cu.get('matvecs', '—')} / {cu.get('tol', float('nan')):.1e}" if ok(cu) else short_status(cu))
        flcell = (f"{fl.get('steps')} / {fl.get('matvec_ms', float('nan')):.4g} / {fl.get('status')}" if fl and fl.get("steps") is not None else short_status(fl))
        nv = get(c, w, k, "cudalanczos_noverify")
        nvcell = f"{fmt_t(nv['time_s'])} / {nv.get('matvecs')} ({fmt_e(nv.get('max_rel_res'))})" if ok(nv) else ("—" if nv is None else short_status(nv))
        ncvcell = (f"{ours.get('ncv')}" + (f" ({ours['ncv_end']})" if ours.get("ncv_end") and ours.get("ncv_end") != ours.get("ncv") else "")
                   if ok(ours) and ours.get("ncv") is not None else "—")
        L.append(f"| {TITLE.get(c, c)} | {w} | {k} | {ours_split} | {ncvcell} | {nvcell} | {kscell} | {cucell} | {flcell} |")
    L.append("")
    L.append(f"![solve times]({prefix}-time.png)")
    L.append("")
    L.append(f"![matrix-vector products]({prefix}-matvecs.png)")
    L.append("")
    md = os.path.join(a.out, prefix + ".md")
    with open(md, "w") as f:
        f.write("\n".join(L) + "\n")

    # plots
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except Exception as e:  # the table is the result; plots are a bonus
        print(f"report.py: no plots ({e})", file=sys.stderr)
        print(md)
        return 0
    series = [("cudalanczos", "cudalanczos (GPU)", "tab:red"), ("krylovschur", f"SLEPc krylovschur (CPU, {np_txt} ranks)", "tab:blue"),
              ("cupy_eigsh", "CuPy eigsh (GPU)", "tab:green"), ("cupy_eigh", "CuPy eigh / syevd (GPU)", "tab:purple"),
              ("floor", "Krylov floor (steps x matvec)", "tab:gray")]
    def label(c, w, k, ours):
        t = f"{TITLE.get(c, c)}, {'' if w == 'largest' else 'smallest '}k={k}"
        return t if ok(ours) else t + f"\n(cudalanczos: {short_status(ours)})"

    labels = [label(c, w, k, ours) for c, w, k, ours, *_ in plot_rows]
    y = np.arange(len(plot_rows))

    def finish_plot(fig, ax, xlabel, title, ncol, legend_in, suffix):
        """The two bar charts' common end: case labels top down, log x axis, legend below, saved."""
        ax.set_yticks(y)
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(axis="x", which="both", alpha=0.3)
        h, lab_ = ax.get_legend_handles_labels()
        fig.legend(h, lab_, loc="lower center", ncol=ncol, fontsize=8)
        fig.tight_layout(rect=(0, legend_in / fig.get_figheight(), 1, 1))
        fig.savefig(os.path.join(a.out, prefix + suffix), dpi=110)
        plt.close(fig)
    hgt = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(11, max(4, 0.55 * len(plot_rows) + 1.5)))
    for si, (key, lab, col) in enumerate(series):
        xs, ys, hatch_x, hatch_y = [], [], [], []
        for ri, (c, w, k, ours, peers, fl) in enumerate(plot_rows):
            r = ours if key == "cudalanczos" else fl if key == "floor" else peers.get(key)
            pos = ri - 0.4 + (si + 0.5) * hgt
            if key == "floor":
                if r and r.get("status") == "ok" and r.get("floor_s"):
                    xs.append(r["floor_s"]), ys.append(pos)
            elif ok(r):
                xs.append(r["time_s"]), ys.append(pos)
            elif r and r.get("status", "").startswith("timeout") and isinstance(r.get("cap_s"), (int, float)):
                hatch_x.append(r["cap_s"]), hatch_y.append(pos)
        if xs:
            ax.barh(ys, xs, height=hgt, color=col, label=lab)
        if hatch_x:
            ax.barh(hatch_y, hatch_x, height=hgt, color="white", edgecolor=col, hatch="//", label=None if xs else lab)
    finish_plot(fig, ax, "seconds (log scale); hatched: stopped at the time cap",
                f"Solve time to tol 1e-8 — {meta.get('gpu', '?').split(',')[0]}, {meta.get('date', '')}", 3, 0.7, "-time.png")

    series_mv = [("cudalanczos", "cudalanczos", "tab:red"), ("krylovschur", "SLEPc krylovschur", "tab:blue"),
                 ("cupy_eigsh", "CuPy eigsh", "tab:green"), ("floor", "Krylov floor (steps)", "tab:gray")]
    hgt = 0.8 / len(series_mv)
    fig, ax = plt.subplots(figsize=(10, max(4, 0.5 * len(plot_rows) + 1.5)))
    for si, (key, lab, col) in enumerate(series_mv):
        xs, ys = [], []
        for ri, (c, w, k, ours, peers, fl) in enumerate(plot_rows):
            r = ours if key == "cudalanczos" else fl if key == "floor" else peers.get(key)
            v = (r.get("steps") if r and r.get("status") == "ok" else None) if key == "floor" else (r.get("matvecs") if ok(r) else None)
            if isinstance(v, (int, float)) and v > 0:
                xs.append(v), ys.append(ri - 0.4 + (si + 0.5) * hgt)
        if xs:
            ax.barh(ys, xs, height=hgt, color=col, label=lab)
    finish_plot(fig, ax, "matrix-vector products of the timed solve (log scale)",
                "Matrix-vector products against the Krylov floor", 4, 0.5, "-matvecs.png")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
