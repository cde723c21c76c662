// The uniform-pattern split (csr_scan.hpp: UniformPattern) of a CSR matrix that is already on the device,
// made there (kernels/pattern_split.cu): PETSc's device Mats get the value-less product too, without a
// trip of the matrix to the host.
#pragma once

#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"

#include <optional>

namespace cudalanczos::cuda {

/// A square device CSR matrix whose off-diagonal entries all hold one value, split on the device.
struct DeviceUniformPattern {
  Scalar offdiagonal = 0, diagonal = 0;
  DeviceBuffer<Scalar> diagonal_vector; ///< empty: every row's diagonal is `diagonal`
  DeviceBuffer<int> rowptr, colind;     ///< the off-diagonal entries' pattern (rows + 1 and `entries` ints)
  index_t entries = 0;
  index_t longest = 0; ///< the most off-diagonal entries in one row
};

/// The split of the device CSR matrix A (its arrays device memory of the current device, its indices
/// trusted as make_csr_operator_on_device trusts them), or nothing where uniform_pattern (csr_scan.hpp)
/// would find none: not square, no off-diagonal entry, two entries on one row's diagonal, or two
/// different off-diagonal values (bit for bit). Runs on the legacy default stream and waits for it; the
/// caller orders it after whatever writes A.
std::optional<DeviceUniformPattern> uniform_pattern_on_device(const CsrView &A);

} // namespace cudalanczos::cuda
