// Launch geometry and argument checks shared by the kernel families: the block size, grids sized from
// the multiprocessor count, and when 16-byte loads are allowed.
//
// Every kernel here is memory-bound: a gemv does 2 flops per 8-byte matrix entry, a dot 2 per 16 bytes.
// So the habits are the bandwidth ones: 16-byte loads coalesced across the warp wherever alignment
// allows, about eight independent loads in flight per thread before the first use, one pass over each
// operand (fused stages), grids sized from the multiprocessor count, and reductions that add in a
// fixed order so that two runs on the same data give the same bits.
#pragma once

#include "cuda/kernels/device_scalar.cuh"

#include <cstdint>

namespace cudalanczos::cuda::kernels::detail {

constexpr int kThreads = 256; // every kernel: 8 warps, enough for one block to hide latency
constexpr int kWarps = kThreads / 32;

struct Limits {
  int sm_count = 0;
  int max_threads_per_sm = 0;
};

/// The current device's multiprocessor count and thread limit, read once per device.
Limits current_limits();

/// Blocks of kThreads that fill the device once (every multiprocessor at its thread limit).
int full_wave_blocks();

/// Blocks for a grid-stride loop over `items`: never more than one full wave (each thread then loops,
/// which keeps several loads in flight), never more than the items need.
int grid_for(index_t items, int cap = 1 << 30);

inline bool aligned16(const void *p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

/// Throws unless V is a valid n x k column block with stride ldv.
void check_matrix(const char *who, index_t n, int k, index_t ldv);

/// 16-byte loads are possible when every column start read and w are 16-byte aligned: the k columns
/// and a window's (which may lie after them, partial reorthogonalization, even when k = 0).
/// Complex: W = 1 always (kWide), a complex entry being one 16-byte load itself.
bool vector_ok(int k, const scalar_ops::DScalar *V, index_t ldv, const scalar_ops::DScalar *w, int window_columns = 0);

} // namespace cudalanczos::cuda::kernels::detail
