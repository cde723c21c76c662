// The build's Scalar as the kernels see it, the arithmetic they do on it, and its 16-byte loads.
//
// Scalar is double, or std::complex<double> in a build against a complex PETSc; on the device it is
// double, or double2 (x real, y imaginary part), which has std::complex<double>'s layout. Only the build's
// type is compiled. On double each helper is the one operation the real kernels always did
// (fma(a, x, acc), fma(-c, v, w), ...), so the real build computes the same bits as before.
#pragma once

#include "core/backend.hpp"

#include <cuda_runtime.h>

#include <cstring>
#include <type_traits>

// (Outside an anonymous namespace: a build uses only its own type's overloads, and unused functions
// of internal linkage would each be a warning.)
namespace cudalanczos::cuda::kernels::scalar_ops {

using DScalar = std::conditional_t<kComplexScalars, double2, double>;
static_assert(sizeof(DScalar) == sizeof(Scalar), "Scalar and its device twin must have one layout");
/// Elements per 16-byte vector load: two doubles, or one complex.
constexpr int kWide = kComplexScalars ? 1 : 2;

inline DScalar *dev(Scalar *p) { return reinterpret_cast<DScalar *>(p); }
inline const DScalar *dev(const Scalar *p) { return reinterpret_cast<const DScalar *>(p); }
inline DScalar dev_value(const Scalar &x)
{
  DScalar d;
  std::memcpy(&d, &x, sizeof d);
  return d;
}

/// acc + a x
__device__ __forceinline__ double mul_add(double a, double x, double acc) { return fma(a, x, acc); }
__device__ __forceinline__ double2 mul_add(double2 a, double2 x, double2 acc)
{
  return make_double2(fma(a.x, x.x, fma(-a.y, x.y, acc.x)), fma(a.x, x.y, fma(a.y, x.x, acc.y)));
}
__device__ __forceinline__ double2 mul_add(double a, double2 x, double2 acc)
{
  return make_double2(fma(a, x.x, acc.x), fma(a, x.y, acc.y));
}
/// acc + conj(a) x: the inner products' term (the left factor conjugated)
__device__ __forceinline__ double conj_mul_add(double a, double x, double acc) { return fma(a, x, acc); }
__device__ __forceinline__ double2 conj_mul_add(double2 a, double2 x, double2 acc)
{
  return make_double2(fma(a.x, x.x, fma(a.y, x.y, acc.x)), fma(a.x, x.y, fma(-a.y, x.x, acc.y)));
}
/// acc - c v
__device__ __forceinline__ double sub_mul(double c, double v, double acc) { return fma(-c, v, acc); }
__device__ __forceinline__ double2 sub_mul(double2 c, double2 v, double2 acc)
{
  return make_double2(fma(-c.x, v.x, fma(c.y, v.y, acc.x)), fma(-c.x, v.y, fma(-c.y, v.x, acc.y)));
}
/// acc + |x|^2 (a real accumulator)
__device__ __forceinline__ double norm_add(double x, double acc) { return fma(x, x, acc); }
__device__ __forceinline__ double norm_add(double2 x, double acc) { return fma(x.x, x.x, fma(x.y, x.y, acc)); }
/// acc + |x|^2 in a Scalar accumulator: the imaginary part is left as it is (0), not formed from
/// rounding errors as conj(x) x would form it
__device__ __forceinline__ double norm_add_to(double x, double acc) { return fma(x, x, acc); }
__device__ __forceinline__ double2 norm_add_to(double2 x, double2 acc) { return make_double2(norm_add(x, acc.x), acc.y); }
__device__ __forceinline__ double add(double a, double b) { return a + b; }
__device__ __forceinline__ double2 add(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double mul(double a, double b) { return a * b; }
__device__ __forceinline__ double2 mul(double2 a, double2 b) { return make_double2(fma(a.x, b.x, -a.y * b.y), fma(a.x, b.y, a.y * b.x)); }
/// x times the real a (x * a: the real kernels' order of the operands)
__device__ __forceinline__ double scaled(double a, double x) { return x * a; }
__device__ __forceinline__ double2 scaled(double a, double2 x) { return make_double2(x.x * a, x.y * a); }
__device__ __forceinline__ double real_of(double x) { return x; }
__device__ __forceinline__ double real_of(double2 x) { return x.x; }
__device__ __forceinline__ double with_real(double, double x) { return x; }
__device__ __forceinline__ double2 with_real(double2, double x) { return make_double2(x, 0.0); }
/// x as a Scalar (imaginary part 0)
__device__ __forceinline__ DScalar from_real(double x) { return with_real(DScalar{}, x); }
__device__ __forceinline__ double shfl_down(double v, int offset, int width = 32)
{
  return __shfl_down_sync(0xffffffffu, v, offset, width);
}
__device__ __forceinline__ double2 shfl_down(double2 v, int offset, int width = 32)
{
  return make_double2(__shfl_down_sync(0xffffffffu, v.x, offset, width), __shfl_down_sync(0xffffffffu, v.y, offset, width));
}

/// W consecutive Scalars through the read-only path (16 bytes at once for W = 2 doubles: p 16-byte
/// aligned; a complex is one 16-byte load at W = 1).
template <int W>
__device__ __forceinline__ void load_ro(const DScalar *p, DScalar (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(W != 2 || !kComplexScalars, "two complex entries are 32 bytes: W = 1");
    const double2 t = __ldg(reinterpret_cast<const double2 *>(p));
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = __ldg(p);
  }
}

/// The same through the ordinary path, for data this kernel also writes.
template <int W>
__device__ __forceinline__ void load_rw(const DScalar *p, DScalar (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(W != 2 || !kComplexScalars, "two complex entries are 32 bytes: W = 1");
    const double2 t = *reinterpret_cast<const double2 *>(p);
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = *p;
  }
}

template <int W>
__device__ __forceinline__ void store(DScalar *p, const DScalar (&v)[W])
{
  if constexpr (W == 2) {
    static_assert(W != 2 || !kComplexScalars, "two complex entries are 32 bytes: W = 1");
    *reinterpret_cast<double2 *>(p) = make_double2(v[0], v[1]);
  } else {
    *p = v[0];
  }
}

} // namespace cudalanczos::cuda::kernels::scalar_ops
