// Counter-based pseudo-random numbers shared by every backend.
//
// Entry i of a random start vector is a pure function of (seed, global row i): the same seed gives the
// same global vector on the host and on the GPU, for any number of ranks and any row distribution,
// which is what makes "same eigenvalues for 1, 2 and 3 ranks" and "host vs CUDA" comparable.
#pragma once

#include "core/host_device.hpp"

#include <cstdint>

namespace cudalanczos {

/// splitmix64 finalizer: a bijective 64-bit mix with good avalanche.
CUDALANCZOS_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1): 53 random bits of mix64(seed, i).
CUDALANCZOS_HOST_DEVICE inline double random_entry(std::uint64_t seed, std::int64_t global_row)
{
  const std::uint64_t bits = mix64(mix64(seed) ^ static_cast<std::uint64_t>(global_row)) >> 11;
  return 2.0 * (static_cast<double>(bits) * (1.0 / 9007199254740992.0)) - 1.0;
}

} // namespace cudalanczos
