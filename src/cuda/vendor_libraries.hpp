// cuBLAS, cuSPARSE and cuSOLVER, opened at their first call (vendor_libraries.cpp).
#pragma once

namespace cudalanczos::cuda {

/// Opens the three libraries now, as their first call would: for a warm-up that knows a solve is coming,
/// so that the solve does not wait for them. Errors are left for that call to meet and report.
void open_vendor_libraries() noexcept;

} // namespace cudalanczos::cuda
