// Scaling into range: what solve() does around either driver so that squared norms stay in range.
// Internal to src/core (docs/algorithm.md, "Scaling into range").
//
// The drivers measure vectors by their squared norms (w^T w, one fused reduction). For unit vectors
// those are at most ||A||^2, and the smallest that decide anything are a breakdown's (16 eps ||A||)^2 and
// a converged pair's residual squared. Inside [2^-256, 2^256] all of them stay normal numbers with at
// least 2^400 to spare, for any vector length; outside it they may underflow (a 1-D Laplacian times
// 1e-170 then showed zero vectors everywhere and wrong eigenvalues) or overflow. There the whole solve
// runs on 2^e A, e chosen so that its norm lies in [1/2, 1): a power of two, so every product, every
// reduction and every decision of the driver is the unscaled one times a power of two, bit for bit,
// barring the under/overflow it avoids. Inside the range e = 0: scaling would change no bit and would
// cost a pass over the vector per product on a GPU.
#pragma once

#include "core/solve_types.hpp"

#include <limits>

namespace cudalanczos::detail {

/// Norms in [2^-kSafeNormExponent, 2^kSafeNormExponent) are solved unscaled: a quarter of the exponent
/// range each way, so that even (eps ||A||)^2 / 2^60 stays a normal number and ||A||^2 * 2^60 finite.
inline constexpr int kSafeNormExponent = std::numeric_limits<double>::max_exponent / 4;

/// The e of Backend::set_operator_scale for an operator of norm about `norm`: 0 inside the safe range
/// (and for 0, NaN or Inf: nothing to go by), else the e that puts 2^e norm in [1/2, 1), clamped to
/// +-kMaxScaleExponent (a subnormal norm then ends up near 2^-74: still safe).
int scale_exponent(double norm);

/// The squared norm of column `col`, taken where it can neither overflow nor underflow: the column is
/// scaled by 2^(-t) (t a multiple of 400, exact) until its squared norm, returned, lies in
/// [2^-800, 2^800], or it is zero, NaN or Inf (Inf entries). ||v|| = sqrt(result) 2^t. Adds its
/// reductions to `reductions`. For vectors the caller did not make: a start vector, a product.
double squared_norm_in_range(BasisStorage &b, int col, int &t, long &reductions);

/// ||A v|| for a random unit v (seeded by `seed`), measured so that it can neither overflow nor
/// underflow (squared_norm_in_range).
/// Uses the basis's last two columns (nothing the driver has written yet) with the operator unscaled;
/// one product, added to `products`. 0 when A v is zero. Throws Error when A v holds NaN or Inf.
double measure_norm(Backend &b, std::uint64_t seed, long &products);

/// The problem as the driver sees it on 2^e A: the shift scaled, and the target too when the
/// eigenvalue map is a translation (Settings::translation_map: the user's eigenvalues are then in the
/// operator's units; after shift-and-invert, say, they are not).
Settings scaled_settings(Settings s, int e);

/// The user's callbacks for the driver on 2^e A: values and residuals go to them in the user's units;
/// eigenvalues come back scaled where the map is a translation, as they are otherwise
/// (scaled_settings scales the target alike). Empty ones stay empty: the defaults (relative error,
/// value + shift) are the same in the scaled units, and exact there.
Callbacks scaled_callbacks(const Callbacks &user, int e, bool translation_map);

} // namespace cudalanczos::detail
