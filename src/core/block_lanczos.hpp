// Block thick-restart Lanczos: the thick-restart driver with b vectors per step (Settings::block_size).
//
// Each step applies the operator to a block of b orthonormal vectors at once (one pass over A for all
// of them: a matrix-matrix product), orthogonalizes the b results against the whole basis by block
// classical Gram-Schmidt, twice, and orthonormalizes them among themselves by SVQB (Stathopoulos & Wu
// 2002: the eigen-decomposition of the b x b Gram matrix). The projected matrix is then banded
// (block tridiagonal plus the restart's arrow); it is kept dense, as the Gram-Schmidt coefficients
// give it, and diagonalized whole. Restart, locking and verification follow the single-vector driver
// (docs/algorithm.md, "Block steps").
//
// Why: on a GPU one pass over A and over the basis costs about the same for b vectors as for one, so
// a block step brings b Krylov directions for the memory traffic of one; and a block Krylov space holds
// up to b copies of an eigenvalue, which a single vector's cannot.
#pragma once

#include "core/solve_types.hpp"

namespace cudalanczos::detail {

/// Whether solve() runs the block variant for these settings on a problem of n rows: block_size > 1,
/// and room for ncv + block_size columns (a smaller problem runs the single-vector driver, which ends
/// exact on a space it exhausts).
bool block_variant_applies(const Settings &s, index_t n);

/// The block variant (block_variant_applies must hold; solve() checks). Settings::ncv is the basis
/// size; the basis has ncv + block_size columns (the last block is the residual block).
Result solve_block(Backend &backend, const Settings &settings, const Callbacks &callbacks);

} // namespace cudalanczos::detail
