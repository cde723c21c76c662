/*
   -eps_cudalanczos_check_symmetry: a randomized probe of the operator's symmetry before a solve. Lanczos
   on a nonsymmetric matrix returns meaningless values without failing, so the probe compares y'Ax with
   x'Ay for random x, y against the rounding level of the two products. Where the solve's operator is on
   the device (a host Mat's device copy), the products are taken there: a host MatMult of a large sparse
   matrix costs more than the solve's own products. Collective.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/host_applier.hpp"
#endif

#include <cmath>
#include <memory>

namespace {

// The probe's vectors: x and y random unit vectors, Ax and Ay their products with A (or ip A), t scratch.
// `device` (one process, no ip): A's products on its device operator, the Vecs' host arrays copied over.
struct Probe {
  Mat A, ip;
  Vec x = nullptr, y = nullptr, Ax = nullptr, Ay = nullptr, t = nullptr;
#if defined(CUDALANCZOS_HAVE_CUDA)
  std::unique_ptr<cudalanczos::cuda::HostApplier> device;
#endif

  PetscErrorCode Apply(Vec in, Vec out) const // out = A in, or ip A in
  {
    PetscFunctionBegin;
#if defined(CUDALANCZOS_HAVE_CUDA)
    if (device) {
      const PetscScalar *xa;
      PetscScalar       *ya;
      PetscCall(VecGetArrayRead(in, &xa));
      PetscCall(VecGetArrayWrite(out, &ya));
      PetscCallCXX(device->apply(xa, ya));
      PetscCall(VecRestoreArrayWrite(out, &ya));
      PetscCall(VecRestoreArrayRead(in, &xa));
      PetscFunctionReturn(0);
    }
#endif
    PetscCall(MatMult(A, in, ip ? t : out));
    if (ip) PetscCall(MatMult(ip, t, out));
    PetscFunctionReturn(0);
  }
};

// The probe's products on `device_op` (the solve's operator on the device, when it is A itself) where the
// probe's Vecs are host Vecs: a device Mat's own MatMult runs on the device already. Not collective.
PetscErrorCode UseDeviceOperator(Probe &p, const DeviceOperatorPtr &device_op)
{
  PetscBool host_vecs;

  PetscFunctionBegin;
  if (!device_op || p.ip) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)p.x, &host_vecs, VECSEQ, VECSTANDARD, ""));
  if (!host_vecs) PetscFunctionReturn(0);
#if defined(CUDALANCZOS_HAVE_CUDA)
  PetscCallCXX(p.device = std::make_unique<cudalanczos::cuda::HostApplier>(device_op));
#endif
  PetscFunctionReturn(0);
}

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

bool UsesDevice(const Probe &p)
{
#if defined(CUDALANCZOS_HAVE_CUDA)
  return p.device != nullptr;
#else
  (void)p;
  return false;
#endif
}

} // namespace

// With `ip` (a standard problem whose BV has an inner-product matrix: the operator is to be self-adjoint in
// that inner product) the probe is on ip A, which is Hermitian exactly when A is self-adjoint in it.
PetscErrorCode EPSCUDALanczosCheckSymmetry(EPS eps, Mat ip, const DeviceOperatorPtr &device_op)
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
  PetscCall(UseDeviceOperator(p, device_op));
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
  const bool on_device = UsesDevice(p);
  PetscCall(PetscInfo(eps, "symmetry probe%s: |y'Ax - x'Ay| = %g, rounding bound %g\n", on_device ? " (on the device)" : "", (double)diff, (double)bound));
#if defined(CUDALANCZOS_HAVE_CUDA)
  p.device.reset();
#endif
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
  char desc[160];
  PetscCall(PetscSNPrintf(desc, sizeof(desc), "passed, |y'Ax - x'Ay| = %.3g against the rounding level %.3g, products %s", (double)diff, (double)bound,
                          on_device ? "on the device" : "by MatMult"));
  PetscCallCXX(((EPS_CUDALANCZOS *)eps->data)->last.symmetry_desc = desc);
  PetscFunctionReturn(0);
}
