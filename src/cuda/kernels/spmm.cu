// Sparse products of a block of vectors (kernels.cuh: csr_spmm, pattern_spmm): the block interleaved
// row by row, then the row-group kernel of the single-vector products over up to 8 columns at once.
#include "cuda/kernels.cuh"

#include "cuda/kernels/sparse_row_groups.cuh"

#include <algorithm>
#include <string>

namespace cudalanczos::cuda::kernels {
namespace {

/// Xr[i * b + c] = X[i + c * ldx]: a column-major block interleaved for the block products. Threads in
/// the order of Xr, so the writes are coalesced; the reads come from b columns, a few rows of each per warp.
__global__ void __launch_bounds__(kThreads) interleave_kernel(index_t rows, int b, const DScalar *__restrict__ X,
                                                              index_t ldx, DScalar *__restrict__ Xr)
{
  const index_t total = rows * b;
  for (index_t e = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * kThreads) {
    const index_t i = e / b;
    const int c = static_cast<int>(e - i * b);
    Xr[e] = __ldg(X + i + c * ldx);
  }
}

/// Y[i + c * ldy] = Xr[i * b + c]: interleave_kernel's inverse, threads in the order of Y (coalesced writes).
__global__ void __launch_bounds__(kThreads) deinterleave_kernel(index_t rows, int b, const DScalar *__restrict__ Xr,
                                                                DScalar *__restrict__ Y, index_t ldy)
{
  const index_t total = rows * b;
  for (index_t e = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x; e < total; e += static_cast<index_t>(gridDim.x) * kThreads) {
    const index_t c = e / rows;
    const index_t i = e - c * rows;
    Y[i + c * ldy] = __ldg(Xr + i * b + c);
  }
}

/// Y = A X for b columns of the interleaved X (row stride ldr >= b), G = lanes (a power of two up to
/// 32), in chunks of 8, 4, 2 and 1 columns: one launch per 8 columns, at most three more for the rest.
template <class Row>
void launch_column_chunks(int lanes, int b, index_t rows, const int *rowptr, const int *colind, Row op, const DScalar *X,
                          index_t ldr, DScalar *Y, index_t ldy, cudaStream_t stream)
{
  for_column_chunks(b, [&](auto width, int c) {
    launch_row_groups<decltype(width)::value>(lanes, rows, rowptr, colind, op, X + c, ldr, ColumnsOut{Y + c * ldy, ldy}, stream);
  });
}

/// The block products' common part: X interleaved into `interleaved` (cols * b Scalars), then the
/// row groups over it.
template <class Row>
void block_product(const char *who, index_t rows, index_t cols, int b, int lanes, const int *rowptr, const int *colind,
                   Row op, const DScalar *X, index_t ldx, DScalar *Y, index_t ldy, DScalar *interleaved, cudaStream_t stream)
{
  if (b < 0 || ldx < std::max<index_t>(cols, 1) || ldy < std::max<index_t>(rows, 1))
    throw Error(std::string(who) + ": need b >= 0, ldx >= cols and ldy >= rows (b = " + std::to_string(b) +
                ", ldx = " + std::to_string(ldx) + ", ldy = " + std::to_string(ldy) + ")");
  if (rows == 0 || b == 0) return;
  if (cols > 0) {
    interleave_kernel<<<grid_for(cols * b), kThreads, 0, stream>>>(cols, b, X, ldx, interleaved);
    CUDALANCZOS_CHECK_LAUNCH();
  }
  launch_column_chunks(lanes, b, rows, rowptr, colind, op, interleaved, b, Y, ldy, stream);
}

} // namespace

void csr_spmm(index_t rows, index_t cols, index_t nnz, const int *rowptr, const int *colind, const Scalar *values, int b,
              const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *interleaved, cudaStream_t stream, int lanes)
{
  if (rows < 0 || cols < 0 || nnz < 0) throw Error("csr_spmm: negative size");
  check_lanes("csr_spmm", lanes);
  const int g = lanes ? lanes : (rows > 0 ? lanes_for(rows, nnz) : 1);
  block_product("csr_spmm", rows, cols, b, g, rowptr, colind, CsrRow{dev(values)}, dev(X), ldx, dev(Y), ldy, dev(interleaved),
                stream);
}

void pattern_spmm(index_t rows, index_t entries, const int *rowptr, const int *colind, Scalar c, Scalar d0,
                  const Scalar *dvec, int b, const Scalar *X, index_t ldx, Scalar *Y, index_t ldy, Scalar *interleaved,
                  cudaStream_t stream, int lanes)
{
  if (rows < 0 || entries < 0) throw Error("pattern_spmm: negative size");
  check_lanes("pattern_spmm", lanes);
  const int g = lanes ? lanes : (rows > 0 ? lanes_for(rows, entries) : 1);
  with_pattern_row(c, d0, dvec, [&](auto op) {
    block_product("pattern_spmm", rows, rows, b, g, rowptr, colind, op, dev(X), ldx, dev(Y), ldy, dev(interleaved), stream);
  });
}

void interleave_columns(index_t rows, int b, const Scalar *X, index_t ldx, Scalar *Xr, cudaStream_t stream)
{
  if (rows < 0 || b < 0 || ldx < rows) throw Error("interleave_columns: need rows, b >= 0 and ldx >= rows");
  if (rows == 0 || b == 0) return;
  interleave_kernel<<<grid_for(rows * b), kThreads, 0, stream>>>(rows, b, dev(X), ldx, dev(Xr));
  CUDALANCZOS_CHECK_LAUNCH();
}

void deinterleave_columns(index_t rows, int b, const Scalar *Xr, Scalar *Y, index_t ldy, cudaStream_t stream)
{
  if (rows < 0 || b < 0 || ldy < rows) throw Error("deinterleave_columns: need rows, b >= 0 and ldy >= rows");
  if (rows == 0 || b == 0) return;
  deinterleave_kernel<<<grid_for(rows * b), kThreads, 0, stream>>>(rows, b, dev(Xr), dev(Y), ldy);
  CUDALANCZOS_CHECK_LAUNCH();
}

} // namespace cudalanczos::cuda::kernels
