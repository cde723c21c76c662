// One checking macro family for every CUDA runtime, cuBLAS, cuSPARSE and cuSOLVER call (RAFT's RAFT_CUDA_TRY).
//
//   CUDALANCZOS_CHECK(call)          throws cudalanczos::Error("file:line: call: library message")
//   CUDALANCZOS_CHECK_LAUNCH()       the same for the kernel launch just made (cudaGetLastError)
//   CUDALANCZOS_CHECK_NOTHROW(call)  for destructors: prints the same text to stderr and carries on
//
// The status type picks the overload, so one macro serves the four libraries. Device allocations
// go through device_allocate() (device_buffer.hpp), which adds the requested and free byte counts to
// an out-of-memory message: "out of memory" alone does not tell a user whether to shrink ncv or n.
#pragma once

#include "core/backend.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <cstdio>
#include <string>
#include <type_traits>

namespace cudalanczos::cuda::detail {

inline std::string status_message(cudaError_t s)
{
  return std::string(cudaGetErrorName(s)) + " (" + cudaGetErrorString(s) + ")";
}
inline std::string status_message(cublasStatus_t s)
{
  return std::string("cuBLAS ") + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")";
}
inline std::string status_message(cusparseStatus_t s)
{
  return std::string("cuSPARSE ") + cusparseGetErrorName(s) + " (" + cusparseGetErrorString(s) + ")";
}

inline std::string status_message(cusolverStatus_t s) { return "cuSOLVER status " + std::to_string(static_cast<int>(s)); }

inline bool is_success(cudaError_t s) { return s == cudaSuccess; }
inline bool is_success(cusolverStatus_t s) { return s == CUSOLVER_STATUS_SUCCESS; }
inline bool is_success(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS; }
inline bool is_success(cusparseStatus_t s) { return s == CUSPARSE_STATUS_SUCCESS; }

inline std::string format_failure(const std::string &message, const char *call, const char *file, int line)
{
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + message;
}

template <class Status>
void check(Status s, const char *call, const char *file, int line)
{
  if (is_success(s)) return;
  // A failed runtime call leaves its code in the thread's "last error"; clear it (non-sticky errors
  // only; sticky ones come back anyway) so the next CUDALANCZOS_CHECK_LAUNCH does not report it again.
  if constexpr (std::is_same_v<Status, cudaError_t>) (void)cudaGetLastError();
  throw Error(format_failure(status_message(s), call, file, line));
}

template <class Status>
void check_nothrow(Status s, const char *call, const char *file, int line) noexcept
{
  if (is_success(s)) return;
  if constexpr (std::is_same_v<Status, cudaError_t>) (void)cudaGetLastError();
  std::fprintf(stderr, "cudalanczos: %s\n", format_failure(status_message(s), call, file, line).c_str());
}

} // namespace cudalanczos::cuda::detail

#define CUDALANCZOS_CHECK(call) ::cudalanczos::cuda::detail::check((call), #call, __FILE__, __LINE__)
#define CUDALANCZOS_CHECK_NOTHROW(call) ::cudalanczos::cuda::detail::check_nothrow((call), #call, __FILE__, __LINE__)
#define CUDALANCZOS_CHECK_LAUNCH() \
  ::cudalanczos::cuda::detail::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
