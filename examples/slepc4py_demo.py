#!/usr/bin/env python3
"""cudalanczos from Python, through slepc4py: the 4 largest eigenvalues of the 1-D Laplacian
tridiag(-1, 2, -1) of order n, checked against their closed form 2 - 2 cos(k pi / (n + 1)).

    python3 examples/slepc4py_demo.py /path/to/libslepccudalanczos.so [PETSc/SLEPc options]
    CUDALANCZOS_LIB=/path/to/libslepccudalanczos.so mpiexec -n 2 python3 examples/slepc4py_demo.py

Options: -n (order, default 1000) and any -eps_ option (-eps_nev, -eps_tol, -eps_view,
-eps_cudalanczos_backend host, ...). Debian's python3-slepc4py-real installs slepc4py and petsc4py
outside Python's path: PYTHONPATH must name both folders, e.g.
/usr/lib/slepcdir/slepc3.18/x86_64-linux-gnu-real/lib/python3/dist-packages and
/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/lib/python3/dist-packages.
Exits 1 when an eigenvalue is wrong or a pair did not converge.
"""
import math
import os
import sys


def missing(e):
    sys.exit(f"slepc4py_demo: {e}. slepc4py comes with python3-slepc4py-real (make deps), for Debian's "
             f"/usr/bin/python3; PYTHONPATH must name its folder and petsc4py's "
             f"(now: {os.environ.get('PYTHONPATH', '')!r}).")


try:
    import slepc4py
except ImportError as e:
    missing(e)

args = sys.argv[1:]
lib = args.pop(0) if args and not args[0].startswith('-') else os.environ.get('CUDALANCZOS_LIB', '')
if not lib or not os.path.isfile(lib):
    sys.exit(f"slepc4py_demo: the plugin {lib!r} does not exist; give its path as the first argument or in "
             "CUDALANCZOS_LIB")

# -dll_append loads the plugin before SLEPc reads its options: PETSc calls its registration function,
# which adds the EPS type "cudalanczos".
try:
    slepc4py.init(['-dll_append', lib] + args)
    from petsc4py import PETSc  # after init, as slepc4py requires
    from slepc4py import SLEPc
except ImportError as e:  # petsc4py, or numpy, which it needs
    missing(e)

n = PETSc.Options().getInt('n', 1000)

A = PETSc.Mat().createAIJ([n, n], nnz=(3, 2), comm=PETSc.COMM_WORLD)
rstart, rend = A.getOwnershipRange()
for i in range(rstart, rend):
    if i > 0:
        A[i, i - 1] = -1.0
    A[i, i] = 2.0
    if i < n - 1:
        A[i, i + 1] = -1.0
A.assemble()

E = SLEPc.EPS().create(comm=PETSc.COMM_WORLD)
E.setOperators(A)
E.setProblemType(SLEPc.EPS.ProblemType.HEP)
E.setType('cudalanczos')
E.setWhichEigenpairs(SLEPc.EPS.Which.LARGEST_REAL)
E.setDimensions(nev=4)
E.setTolerances(tol=1e-8)
E.setFromOptions()
E.solve()

nev, _, _ = E.getDimensions()
tol, _ = E.getTolerances()
nconv = E.getConverged()
PETSc.Sys.Print(f"EPS type {E.getType()}, n = {n}, {nconv} converged (nev = {nev}) in {E.getIterationNumber()} iterations")
PETSc.Sys.Print("      eigenvalue            exact   |error|   ||Ax-kx||/||kx||")

ok = E.getType() == 'cudalanczos' and nconv >= nev
x, r = A.createVecs()
for i in range(min(nconv, nev)):
    lam = E.getEigenpair(i, x).real
    exact = 2.0 - 2.0 * math.cos((n - i) * math.pi / (n + 1))  # the i-th largest
    A.mult(x, r)
    r.axpy(-lam, x)
    res = r.norm() / x.norm()  # the true residual of the returned pair
    rel = res / abs(lam)
    # The eigenvalues are simple and 3 pi^2 / (n+1)^2 apart at the top: the exact one nearest to lam,
    # the i-th largest, is within ||r|| of it (Weyl), plus rounding.
    good = abs(lam - exact) <= 2.0 * res + 64 * sys.float_info.epsilon * 4.0 and rel <= 10 * tol
    ok = ok and good
    PETSc.Sys.Print(f"  {lam:.12f}  {exact:.12f}  {abs(lam - exact):.1e}  {rel:.3e}{'' if good else '  WRONG'}")

PETSc.Sys.Print("slepc4py_demo: " + ("ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
