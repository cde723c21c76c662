// uniform_pattern_on_device (device_pattern.hpp): three passes of kernels/pattern_split.cu, with the host
// reading back only the survey, the common value and the total.
#include "cuda/device_pattern.hpp"

#include "cuda/kernels.cuh"

namespace cudalanczos::cuda {
namespace {

template <class T>
T read_back(const T *device)
{
  T host{};
  CUDALANCZOS_CHECK(cudaMemcpy(&host, device, sizeof host, cudaMemcpyDeviceToHost));
  return host;
}

} // namespace

std::optional<DeviceUniformPattern> uniform_pattern_on_device(const CsrView &A)
{
  if (A.rows != A.cols || A.rows == 0 || A.nnz == 0 || A.rows >= kernels::kNoEntry) return std::nullopt;
  const auto rows = static_cast<std::size_t>(A.rows);
  DeviceBuffer<int> counts(rows + 1, "pattern split: row counts");
  DeviceBuffer<Scalar> diagonal(rows, "pattern split: diagonal");
  DeviceBuffer<kernels::PatternSurvey> survey(1, "pattern split: survey");
  kernels::pattern_survey(A.rows, A.rowptr, A.colind, A.values, counts.data(), diagonal.data(), survey.data(), nullptr);
  const kernels::PatternSurvey found = read_back(survey.data()); // waits for the survey
  if (found.first_offdiagonal == kernels::kNoEntry) return std::nullopt; // diagonal only: the general kernels are as good
  if (found.flags & (kernels::kPatternTwoDiagonals | kernels::kPatternValuesDiffer)) return std::nullopt;

  DeviceUniformPattern p;
  p.offdiagonal = read_back(A.values + found.first_offdiagonal);
  p.rowptr = DeviceBuffer<int>(rows + 1, "pattern row pointers");
  {
    const std::size_t bytes = kernels::pattern_offsets_workspace_bytes(A.rows);
    DeviceBuffer<unsigned char> workspace(bytes, "pattern split: scan workspace");
    kernels::pattern_offsets(A.rows, counts.data(), p.rowptr.data(), workspace.data(), bytes, nullptr);
    p.entries = read_back(p.rowptr.data() + A.rows); // waits for the scan before the workspace goes
  }
  p.colind = DeviceBuffer<int>(static_cast<std::size_t>(p.entries), "pattern column indices");
  kernels::pattern_compact(A.rows, A.rowptr, A.colind, p.rowptr.data(), p.colind.data(), nullptr);
  DeviceBuffer<int> longest(1, "pattern split: longest row");
  kernels::longest_row(A.rows, p.rowptr.data(), longest.data(), nullptr);
  p.longest = read_back(longest.data());
  if (found.flags & kernels::kPatternDiagonalVaries) p.diagonal_vector = std::move(diagonal);
  else p.diagonal = read_back(diagonal.data());
  CUDALANCZOS_CHECK(cudaStreamSynchronize(nullptr));
  return p;
}

} // namespace cudalanczos::cuda
