// The Lanczos driver's entry points: thick-restart Lanczos with locking and full or partial
// reorthogonalization (the default), and the thesis's plain Lanczos (Algorithms 2-4). It knows neither
// PETSc nor CUDA: long vectors live in a Backend (backend.hpp); the small projected problem is solved
// here, on the host, with our own implicit QR (symmetric_eigen.hpp), or by the backend where it offers a
// faster dense eigensolver for a restart's (Backend::projected_eigen). What a solve takes and gives is in
// solve_types.hpp.
#pragma once

#include "core/solve_types.hpp"

namespace cudalanczos {

/// Runs the chosen variant. On return, basis columns 0..eigenvalues.size()-1 hold the unit Ritz
/// vectors in the order of `eigenvalues`. Before a pair counts as converged, its true residual
/// ||A x - theta x|| must pass Callbacks::error < tol: proven by Result::residual_bounds where the
/// operator is exact to rounding (Settings::exact_operator), otherwise computed (one product per pair,
/// in blocks); a pair that fails is moved after the converged ones (Result::residual_rejected). Throws
/// cudalanczos::Error on invalid settings or when the operator produces NaN/Inf.
Result solve(Backend &backend, const Settings &settings, const Callbacks &callbacks);

/// Basis columns a solve needs for these settings (the caller may set column 0 before solve()).
int basis_columns_needed(const Settings &settings);

/// Of those, the columns that keep residual directions for Settings::purify (the last ones; 0 without it).
int purify_columns(const Settings &settings);

} // namespace cudalanczos
