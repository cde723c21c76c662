#!/usr/bin/env python3
"""Every eigenvalue two solvers returned for the same window, compared (run_interval.sh's logs, SHOW=all).

    compare_values.py LOGS_DIR [REFERENCE]

Reads each LOGS_DIR/SOLVER-WINDOW.log: the eigenvalues examples/anderson_window listed after its first
solve (-show at least the count), ascending. For every window, each solver's list is compared with the
REFERENCE solver's (default: ks-filtlan, SLEPc's Krylov-Schur on STFILTER at its defaults): the counts,
and the largest |lambda - lambda_ref| over the pairs taken in order, relative to ||H|| (the Gershgorin bound
the example prints). Prints one line per solver and window; exits 1 if a count differs or a list was cut
short (-show below the count).
"""
import pathlib
import re
import sys

ROW = re.compile(r"^\s+(\d+)\s+(-?[0-9.]+(?:e[-+]?\d+)?)\s+[0-9.e+-]+\s*$")
COUNT = re.compile(r": \S+, (\d+) eigenvalues in the window in")
NORM = re.compile(r"\(\|\|H\|\| <= ([0-9.]+)\)")


def read(log):
    """(count, eigenvalues listed, ||H|| bound) of the first solve in a log."""
    count, values, norm = None, [], None
    for line in log.read_text(errors="replace").splitlines():
        if count is None:
            m = COUNT.search(line)
            if m:
                count = int(m.group(1))
            continue
        m = ROW.match(line)
        if m and int(m.group(1)) == len(values):
            values.append(float(m.group(2)))
        elif values or "more (-show" in line:
            n = NORM.search(line)
            if n:
                norm = float(n.group(1))
                break
    return count, values, norm


def main():
    logs = pathlib.Path(sys.argv[1])
    reference = sys.argv[2] if len(sys.argv) > 2 else "ks-filtlan"
    runs = {}
    for log in sorted(logs.glob("*.log")):
        solver, window = log.stem.rsplit("-", 1)
        runs.setdefault(window, {})[solver] = read(log)
    bad = False
    for window, solvers in sorted(runs.items(), key=lambda kv: int(kv[0])):
        if reference not in solvers:
            print(f"window {window}: no {reference} run to compare with")
            continue
        rcount, rvalues, norm = solvers[reference]
        for solver, (count, values, _) in sorted(solvers.items()):
            if solver == reference:
                continue
            short = len(values) < (count or 0) or len(rvalues) < (rcount or 0)
            diff = max((abs(a - b) for a, b in zip(values, rvalues)), default=0.0) / (norm or 1.0)
            same = count == rcount and not short
            bad = bad or not same
            print(f"window {window}: {solver} {count} eigenvalues, {reference} {rcount}; "
                  f"max |lambda - lambda_ref| / ||H|| = {diff:.1e}" + ("" if same else " (DIFFERENT COUNT OR CUT SHORT)"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
