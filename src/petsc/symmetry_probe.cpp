/*
   -eps_cudalanczos_check_symmetry: a randomized probe of the operator's symmetry before a solve. Lanczos
   on a nonsymmetric matrix returns meaningless values without failing, so the probe compares y'Ax with
   x'Ay for random x, y against the rounding level of the two products. Collective.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#include <cmath>

namespace {

// The probe's vectors: x and y random unit vectors, Ax and Ay their products with A (or ip A), t scratch.
struct Probe {
  Mat A, ip;
  Vec x = nullptr, y = nullptr, Ax = nullptr, Ay = nullptr, t = nullptr;

  PetscErrorCode Apply(Vec in, Vec out) const // out = A in, or ip A in
  {
    PetscFunctionBegin;
    PetscCall(MatMult(A, in, ip ? t : out));
    if (ip) PetscCall(MatMult(ip, t, out));
    PetscFunctionReturn(0);
  }
};

// Ax and Ay scaled by a power of two (exact) to a largest entry in [1/2, 1), so that the dot products and
// norms that follow neither overflow nor underflow whatever ||A|| is: a tiny A gets x and y scaled up
// before the products (no subnormal products), a huge one the products scaled down.
PetscErrorCode ScaleProducts(const Probe &p)
{
  PetscReal m1, m2;

  PetscFunctionBegin;
  PetscCall(VecNorm(p.Ax, NORM_INFINITY, &m1));
  PetscCall(VecNorm(p.Ay, NORM_INFINITY, &m2));
  const PetscReal m = PetscMax(m1, m2);
  if (!(m > 0) || PetscIsInfOrNanReal(m)) PetscFunctionReturn(0);
  const int e = PetscMax(-1000, PetscMin(1000, -(std::ilogb(m) + 1)));
  if (e > 0) {
    PetscCall(VecScale(p.x, std::ldexp(1.0, e)));
    PetscCall(VecScale(p.y, std::ldexp(1.0, e)));
    PetscCall(p.Apply(p.x, p.Ax));
    PetscCall(p.Apply(p.y, p.Ay));
    PetscCall(VecScale(p.x, std::ldexp(1.0, -e)));
    PetscCall(VecScale(p.y, std::ldexp(1.0, -e)));
  } else if (e < 0) {
    PetscCall(VecScale(p.Ax, std::ldexp(1.0, e)));
    PetscCall(VecScale(p.Ay, std::ldexp(1.0, e)));
  }
  PetscFunctionReturn(0);
}

// |y'Ax - x'Ay| and its rounding bound. Rounding in two products and two dot products of length n is at
// most ~ n eps (|y||Ax| + |x||Ay|); in practice sqrt(n) eps. A nonsymmetric matrix differs at O(1)
// relative to the same scale. Complex: VecDot(Ax, y) = y^H A x, which for a Hermitian A is conj(x^H A y)
// (PetscConj is the identity on reals).
PetscErrorCode Difference(EPS eps, const Probe &p, PetscReal *diff, PetscReal *bound)
{
  PetscScalar yAx, xAy;
  PetscReal   nx, ny, nAx, nAy;

  PetscFunctionBegin;
  PetscCall(VecDot(p.Ax, p.y, &yAx));
  PetscCall(VecDot(p.Ay, p.x, &xAy));
  PetscCall(VecNorm(p.x, NORM_2, &nx));
  PetscCall(VecNorm(p.y, NORM_2, &ny));
  PetscCall(VecNorm(p.Ax, NORM_2, &nAx));
  PetscCall(VecNorm(p.Ay, NORM_2, &nAy));
  const PetscReal scale = ny * nAx + nx * nAy;
  *bound                = 64 * PETSC_MACHINE_EPSILON * PetscSqrtReal((PetscReal)eps->n) * scale;
  *diff                 = PetscAbsScalar(yAx - PetscConj(xAy));
  PetscFunctionReturn(0);
}

} // namespace

// With `ip` (a standard problem whose BV has an inner-product matrix: the operator is to be self-adjoint in
// that inner product) the probe is on ip A, which is Hermitian exactly when A is self-adjoint in it.
PetscErrorCode EPSCUDALanczosCheckSymmetry(EPS eps, Mat ip)
{
  Probe       p;
  PetscRandom rnd;
  PetscReal   diff = 0, bound = 0;

  PetscFunctionBegin;
  PetscCall(STGetMatrix(eps->st, 0, &p.A));
  p.ip = ip;
  PetscCall(MatCreateVecs(p.A, &p.x, &p.Ax));
  PetscCall(VecDuplicate(p.x, &p.y));
  PetscCall(VecDuplicate(p.Ax, &p.Ay));
  if (ip) PetscCall(VecDuplicate(p.Ax, &p.t));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)eps), &rnd));
  PetscCall(PetscRandomSetSeed(rnd, 0x5eed));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecSetRandom(p.x, rnd));
  PetscCall(VecSetRandom(p.y, rnd));
  PetscCall(VecNormalize(p.x, nullptr));
  PetscCall(VecNormalize(p.y, nullptr));
  PetscCall(p.Apply(p.x, p.Ax));
  PetscCall(p.Apply(p.y, p.Ay));
  PetscCall(ScaleProducts(p));
  PetscCall(Difference(eps, p, &diff, &bound));
  PetscCall(PetscInfo(eps, "symmetry probe: |y'Ax - x'Ay| = %g, rounding bound %g\n", (double)diff, (double)bound));
  PetscCall(VecDestroy(&p.x));
  PetscCall(VecDestroy(&p.y));
  PetscCall(VecDestroy(&p.Ax));
  PetscCall(VecDestroy(&p.Ay));
  PetscCall(VecDestroy(&p.t));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCheck(!ip || (!(diff > bound) && !PetscIsNanReal(diff)), PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_WRONG,
             "The operator is not self-adjoint in the inner product of the BV's matrix B (BVSetMatrix): |y'BAx - x'BAy| = %g for "
             "random x, y, above the rounding level %g; EPSCUDALANCZOS needs a Hermitian B A",
             (double)diff, (double)bound);
  PetscCheck(!(diff > bound) && !PetscIsNanReal(diff), PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_WRONG,
             "The matrix is not symmetric: |y'Ax - x'Ay| = %g for random x, y, above the rounding level %g; EPSCUDALANCZOS solves "
             "symmetric (Hermitian) problems only",
             (double)diff, (double)bound);
  PetscFunctionReturn(0);
}
