// Host-to-device copies of matrices at the pinned bandwidth.
//
// cudaMemcpy from pageable memory goes through the driver's own staging buffer, one thread, one
// chunk at a time: about a seventh of the page-locked bandwidth (docs/tuning.md#cuda-staged-matrix-upload).
// A matrix upload instead runs `threads` host threads, each filling
// its own two page-locked chunks from the source while the copy engine drains the chunk it filled
// before (double buffering), so the host copies and the DMA overlap and the host side is not one
// core's memcpy. The chunks, their streams and events are made once per process and kept until
// release_process_state().
#pragma once

#include "core/backend.hpp"

#include <cstddef>
#include <functional>

namespace cudalanczos::cuda {

/// Writes bytes [offset, offset + length) of the destination image into `out` (a staging chunk).
/// Called from several host threads at once, for disjoint ranges.
using ImageFill = std::function<void(std::size_t offset, std::size_t length, unsigned char *out)>;

/// Copies the `bytes`-long image that `fill` describes to device memory `dst` on the current device;
/// returns when it is there. Small images go through one cudaMemcpy.
void upload_image(void *dst, std::size_t bytes, const ImageFill &fill);

/// upload_image of a plain host array.
void upload_bytes(void *dst, const void *src, std::size_t bytes);

/// A rows x cols column-major host matrix of Scalars with leading dimension `src_ld` into device memory
/// with leading dimension `dst_ld` >= rows; the padding rows are written as zeros.
void upload_matrix(Scalar *dst, std::size_t dst_ld, const Scalar *src, std::size_t src_ld, std::size_t rows, std::size_t cols);

/// The staging threads (default: min(8, cores)); 0 restores the default. For benchmarks and tests.
void set_upload_threads(int threads);

/// Page-locked bytes the upload machinery holds (0 before the first large upload).
std::size_t upload_staging_bytes();

/// Frees what this process made once for all solves (the staging chunks, their streams and events).
/// Called at PetscFinalize; the next upload makes them again. Waits for a warm-up still running.
void release_process_state() noexcept;

/// Starts, on a helper thread, what a first upload to `device` would otherwise wait for: the device's
/// primary context and the staging chunks. Returns at once; the first upload then waits only for what
/// is left of it (the CUDA runtime orders the context's creation; the chunks are made under the staging
/// lock). Once per process and device; errors are left for the upload itself to meet and report.
void warm_up(int device);

/// Wall-clock seconds the last warm-up took on its helper thread (0 before one ended).
double warm_up_seconds();

/// Starts, on a helper thread, the CUDA driver's initialization and, where there is a device, the opening
/// of cuBLAS, cuSPARSE and cuSOLVER (vendor_libraries.hpp) and, for a process that knows its rank on the
/// node (`local_rank` >= 0), warm_up() of the device a solve picks by default (local_rank modulo the
/// device count); returns at once. Called when the plugin loads (PetscInitialize) with options that
/// select the type, or at the first EPS of the type, so that it overlaps with the program's own work
/// before its first solve. Once per process: returns whether this call started it.
bool warm_up_at_load(int local_rank);

/// The parts of an upload that the PETSc layer logs apart (-log_view): the host passes over the matrix
/// before any copy, the wait for the device's context (made by then, or still being made by warm_up),
/// the host-to-device copies, and the vendor library's analysis of the copied matrix.
enum class UploadPhase { Prepare, Context, Transfer, Analysis };

/// Told on the uploading thread when a phase begins (`begin` true) and ends. One per process, set once
/// by the PETSc layer; none is called while it is null.
using UploadPhaseHook = void (*)(UploadPhase phase, bool begin);
void set_upload_phase_hook(UploadPhaseHook hook);

/// Marks a phase for its lifetime.
class UploadPhaseScope {
public:
  explicit UploadPhaseScope(UploadPhase phase);
  ~UploadPhaseScope();
  UploadPhaseScope(const UploadPhaseScope &) = delete;
  UploadPhaseScope &operator=(const UploadPhaseScope &) = delete;

private:
  UploadPhase phase_;
};

} // namespace cudalanczos::cuda
