/*
   Row-distributed device operators for EPSCUDALANCZOS under mpiexec: one GPU per rank, each holding
   this rank's rows of a MATMPIAIJ or MATMPIDENSE, with the ghost values exchanged every product
   (src/cuda/distributed_operator.hpp does the device side; this file builds its parts and the MPI
   transport). See docs/multigpu.md.

   MPIAIJ: the diagonal block Ad (local columns) and the off-diagonal block Ao whose columns are already
   compressed to the ghosts, garray[] giving their global indices in ascending order
   (MatMPIAIJGetSeqAIJ). The matrix's own scatter lives in a header Debian does not install, so the
   plan is built here: the owner of each ghost from the ownership ranges, then one MPI_Alltoall (how
   many) and one MPI_Alltoallv (which) tell every rank what to send to whom. Per product: MPI_Irecv
   from each rank we need ghosts from, MPI_Isend to each rank that needs ours, MPI_Waitall, on
   page-locked host buffers (Debian's Open MPI is not CUDA-aware). Ao is uploaded with only its nonzero
   rows, so the ghost product and its scatter-add cost O(boundary), not O(local rows).

   MPIDENSE: the local row block m x N, split into the m x m diagonal column block and the column blocks
   left and right of it. Per product: MPI_Allgatherv of x; the ghosts are x_full without our own part.

   A CUDA PETSc's MATMPIAIJCUSPARSE / MATMPIDENSECUDA are used in place (in_place): the same blocks and
   the same plan (garray and the ownership ranges), the blocks being views of the Mat's own device arrays
   (the diagonal and off-diagonal MATSEQAIJCUSPARSE blocks, or the local dense array), nothing copied.
   The halo itself still goes through page-locked host memory (Debian's Open MPI is not CUDA-aware).

   Set-up is collective. Every decision that could differ between ranks (a failed upload, an unexpected
   layout) is agreed on with one MPI_Allreduce, so no rank is left waiting in an exchange.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/distributed_operator.hpp"

#include <climits>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace cudalanczos;

static_assert(std::is_same_v<PetscScalar, Scalar>,
              "PetscScalar must be cudalanczos::Scalar: CUDALANCZOS_USE_COMPLEX must be set exactly when PETSc uses complex scalars");

/// Point-to-point halo messages: what the exchange callback of an MPIAIJ operator holds.
struct Messages {
  MPI_Comm                 comm = MPI_COMM_NULL; // the Mat's (PETSc's inner) communicator, alive as long as the Mat
  PetscMPIInt              tag  = 0;             // a tag of our own on it (PetscObjectGetNewTag)
  std::vector<PetscMPIInt> recv_rank, recv_offset, recv_count; // ghosts, in ghost order
  std::vector<PetscMPIInt> send_rank, send_offset, send_count; // our entries, in send-buffer order
  std::vector<MPI_Request> requests;

  // Entries are PetscScalars (MPIU_SCALAR: MPI_DOUBLE, or PETSc's complex type), counted in entries.
  void operator()(const PetscScalar *send, PetscScalar *recv)
  {
    int n = 0;
    for (std::size_t p = 0; p < recv_rank.size(); ++p)
      if (MPI_Irecv(recv + recv_offset[p], recv_count[p], MPIU_SCALAR, recv_rank[p], tag, comm, &requests[n++]) != MPI_SUCCESS)
        throw Error("halo exchange: MPI_Irecv failed");
    for (std::size_t p = 0; p < send_rank.size(); ++p)
      if (MPI_Isend(send + send_offset[p], send_count[p], MPIU_SCALAR, send_rank[p], tag, comm, &requests[n++]) != MPI_SUCCESS)
        throw Error("halo exchange: MPI_Isend failed");
    if (n && MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS) throw Error("halo exchange: MPI_Waitall failed");
  }
};

/// The allgather of a dense row block's x: every rank's entries, own included, at its row offset.
struct Allgather {
  MPI_Comm                 comm = MPI_COMM_NULL;
  std::vector<PetscMPIInt> count, offset;
  PetscMPIInt              mine = 0;

  void operator()(const PetscScalar *send, PetscScalar *recv) const
  {
    static const PetscScalar none = 0; // a rank with no rows still takes part; some MPIs dislike null buffers
    if (MPI_Allgatherv(mine ? send : &none, mine, MPIU_SCALAR, recv, count.data(), offset.data(), MPIU_SCALAR, comm) != MPI_SUCCESS)
      throw Error("halo exchange: MPI_Allgatherv failed");
  }
};

PetscErrorCode ToMPIInt(PetscInt64 v, PetscMPIInt *out)
{
  PetscFunctionBegin;
  PetscCheck(v >= 0 && v <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "halo of %" PetscInt64_FMT " entries exceeds an MPI count", v);
  *out = (PetscMPIInt)v;
  PetscFunctionReturn(0);
}

/// Builds the MPIAIJ plan: who sends which of its entries to whom, from the ghosts' global indices.
PetscErrorCode BuildAIJPlan(MPI_Comm comm, const PetscInt *ranges, PetscInt nghost, const PetscInt *garray, cuda::HaloPlan &plan,
                            Messages &msg)
{
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  const PetscInt rstart = ranges[rank], m = ranges[rank + 1] - rstart;
  // ghosts per owner; garray is ascending, so each owner's ghosts are one run, the runs in rank order
  std::vector<PetscMPIInt> need(size, 0), give(size, 0), need_at(size, 0), give_at(size, 0);
  for (PetscInt g = 0, p = 0; g < nghost; ++g) {
    while (p < size && garray[g] >= ranges[p + 1]) ++p;
    PetscCheck(p < size && garray[g] >= ranges[p] && p != rank, PETSC_COMM_SELF, PETSC_ERR_PLIB, "ghost column %" PetscInt_FMT " owned by no other rank",
               garray[g]);
    ++need[p];
  }
  PetscCallMPI(MPI_Alltoall(need.data(), 1, MPI_INT, give.data(), 1, MPI_INT, comm));
  PetscInt64 total_give = 0;
  for (PetscMPIInt p = 0; p < size; ++p) {
    need_at[p] = p ? need_at[p - 1] + need[p - 1] : 0;
    PetscCall(ToMPIInt(total_give, &give_at[p]));
    total_give += give[p];
  }
  std::vector<PetscInt> wanted((std::size_t)total_give);
  PetscCallMPI(MPI_Alltoallv(garray, need.data(), need_at.data(), MPIU_INT, wanted.data(), give.data(), give_at.data(), MPIU_INT, comm));
  plan.send_indices.resize(wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    PetscCheck(wanted[i] >= rstart && wanted[i] < rstart + m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "rank asked for row %" PetscInt_FMT " which it does not own",
               wanted[i]);
    plan.send_indices[i] = (int)(wanted[i] - rstart);
  }
  plan.recv_count = nghost;
  plan.ghost_segments.push_back({0, nghost});
  for (PetscMPIInt p = 0; p < size; ++p) {
    if (need[p]) {
      msg.recv_rank.push_back(p);
      msg.recv_offset.push_back(need_at[p]);
      msg.recv_count.push_back(need[p]);
    }
    if (give[p]) {
      msg.send_rank.push_back(p);
      msg.send_offset.push_back(give_at[p]);
      msg.send_count.push_back(give[p]);
    }
  }
  msg.requests.resize(msg.recv_rank.size() + msg.send_rank.size());
  PetscFunctionReturn(0);
}

/// The device blocks of this rank's rows of an MPIAIJ matrix; may throw (upload failures).
PetscErrorCode AIJBlocks(Mat A, cuda::KernelFlavor flavor, int device, cuda::DistributedParts &parts)
{
  Mat                Ad, Ao;
  const PetscInt    *garray, *ia, *ja;
  const PetscScalar *a;
  PetscInt           m, nghost, nrows;
  PetscBool          done;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetLocalSize(A, &m, nullptr));
  PetscCall(MatGetSize(Ao, nullptr, &nghost));
  // diagonal block: local rows x local columns, as it is
  PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  PetscCheck(done && nrows == m, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetRowIJ could not give the CSR structure of the diagonal block");
  PetscCall(MatSeqAIJGetArrayRead(Ad, &a));
  {
    EPSCUDALanczosHostCsr csr;
    PetscCall(EPSCUDALanczosHostCsrView(m, m, ia, ja, a, &csr));
    PetscCallCXX(parts.local = cuda::make_csr_operator(csr.view, flavor, device));
  }
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &a));
  PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  if (nghost == 0) PetscFunctionReturn(0);
  // off-diagonal block: only its nonzero rows, columns already the ghost indices
  PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  PetscCheck(done && nrows == m, PETSC_COMM_SELF, PETSC_ERR_SUP, "MatGetRowIJ could not give the CSR structure of the off-diagonal block");
  PetscCall(MatSeqAIJGetArrayRead(Ao, &a));
  cuda::RemoteBlock block;
  std::vector<int>    rowptr(1, 0), colind;
  std::vector<PetscScalar> values;
  PetscCheck(ia[m] <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "This process's off-diagonal block has %" PetscInt_FMT " nonzeros; EPSCUDALANCZOS's device kernels index at most %d on one "
             "process: distribute the matrix over more MPI processes",
             ia[m], INT_MAX);
  PetscCallCXX(colind.reserve(ia[m]));
  PetscCallCXX(values.reserve(ia[m]));
  for (PetscInt r = 0; r < m; ++r) {
    if (ia[r + 1] == ia[r]) continue;
    PetscCallCXX(block.rows.push_back((int)r));
    PetscCallCXX(colind.insert(colind.end(), ja + ia[r], ja + ia[r + 1]));
    PetscCallCXX(values.insert(values.end(), a + ia[r], a + ia[r + 1]));
    PetscCallCXX(rowptr.push_back((int)colind.size()));
  }
  PetscCall(MatSeqAIJRestoreArrayRead(Ao, &a));
  PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ia, &ja, &done));
  if (!block.rows.empty()) {
    cuda::CsrView view{(cudalanczos::index_t)block.rows.size(), nghost, (cudalanczos::index_t)colind.size(), rowptr.data(), colind.data(), values.data()};
    PetscCallCXX(block.op = cuda::make_csr_operator(view, flavor, device));
    PetscCallCXX(parts.remote.push_back(std::move(block)));
  }
  PetscFunctionReturn(0);
}

#if defined(PETSC_HAVE_CUDA)
constexpr const char *kOrigin = "PETSc's device array";

/// A MATSEQAIJCUSPARSE block's own device CSR arrays (every row, empty ones too), taken and given back at
/// once: they stay valid while the Mat's object state is unchanged (as for the single-process Mats in
/// cuda_operator.cpp). Where PETSc keeps the block in compressed-row form (an off-diagonal block's empty
/// rows left out) it makes and keeps a full row-offset array on the device itself (m + 1 integers): PETSc's
/// memory, kept with the Mat, not a copy of ours.
PetscErrorCode DeviceCsr(Mat B, PetscInt cols, EPSCUDALanczosDeviceCsrView *view)
{
  const PetscInt    *i, *j;
  const PetscScalar *a;
  PetscInt           m;
  MatInfo            info;

  PetscFunctionBegin;
  PetscCall(MatGetLocalSize(B, &m, nullptr));
  PetscCall(MatGetInfo(B, MAT_LOCAL, &info));
  PetscCall(MatSeqAIJCUSPARSEGetIJ(B, PETSC_FALSE, &i, &j));
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(B, &a));
  *view = EPSCUDALanczosDeviceCsrView{m, cols, (cudalanczos::index_t)info.nz_used, i, j, a};
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(B, &a));
  PetscCall(MatSeqAIJCUSPARSERestoreIJ(B, PETSC_FALSE, &i, &j));
  PetscFunctionReturn(0);
}

/// The blocks of this rank's rows of a MATMPIAIJCUSPARSE on their own device arrays, used in place: the
/// diagonal block as it is, the off-diagonal block (columns already the ghosts, garray) with all m rows,
/// its empty ones too, so that it adds into y without a row map. May throw.
PetscErrorCode AIJBlocksInPlace(Mat A, cuda::KernelFlavor flavor, int device, cuda::DistributedParts &parts)
{
  Mat                         Ad, Ao;
  const PetscInt             *garray;
  PetscInt                    m, nghost;
  EPSCUDALanczosDeviceCsrView view;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetLocalSize(A, &m, nullptr));
  PetscCall(MatGetSize(Ao, nullptr, &nghost));
  if (m == 0) { // no rows here: an empty operator (PETSc may hold no device arrays for an empty block)
    static const int zero = 0;
    PetscCallCXX(parts.local = cuda::make_csr_operator(cuda::CsrView{0, 0, 0, &zero, nullptr, nullptr}, flavor, device));
    PetscFunctionReturn(0);
  }
  PetscCall(DeviceCsr(Ad, m, &view));
  PetscCallCXX(parts.local = cuda::make_csr_operator_on_device(view, flavor, device, kOrigin));
  if (nghost == 0) PetscFunctionReturn(0);
  PetscCall(DeviceCsr(Ao, nghost, &view));
  if (view.nnz == 0) PetscFunctionReturn(0);
  cuda::RemoteBlock block;
  PetscCallCXX(block.op = cuda::make_csr_operator_on_device(view, flavor, device, kOrigin));
  PetscCallCXX(parts.remote.push_back(std::move(block)));
  PetscFunctionReturn(0);
}
#endif

/// The device blocks of this rank's row block of an MPIDENSE matrix: the diagonal column block, and
/// the column blocks before and after it (ghost offsets 0 and rstart: x_full without our own part).
/// `in_place`: a MATMPIDENSECUDA's own device array, used in place (the blocks are views into it, with
/// its leading dimension); otherwise the host array, uploaded.
PetscErrorCode DenseBlocks(Mat A, PetscInt rstart, PetscInt rend, PetscInt N, cuda::KernelFlavor flavor, int device, PetscBool in_place,
                           cuda::DistributedParts &parts)
{
  const PetscScalar *a;
  PetscInt           lda;
  const PetscInt     m = rend - rstart;

  PetscFunctionBegin;
  PetscCall(MatDenseGetLDA(A, &lda));
  lda = PetscMax(lda, PetscMax(m, 1));
#if defined(PETSC_HAVE_CUDA)
  if (in_place) PetscCall(MatDenseCUDAGetArrayRead(A, &a));
  else
#endif
    PetscCall(MatDenseGetArrayRead(A, &a));
  const auto make = [&](const cuda::DenseView &view) {
#if defined(PETSC_HAVE_CUDA)
    if (in_place) return cuda::make_dense_operator_on_device(view, flavor, device, kOrigin);
#endif
    return cuda::make_dense_operator(view, flavor, device);
  };
  {
    cuda::DenseView view{m, m, lda, m ? a + rstart * lda : nullptr};
    PetscCallCXX(parts.local = make(view));
  }
  if (m > 0 && rstart > 0) {
    cuda::RemoteBlock left;
    cuda::DenseView   view{m, rstart, lda, a};
    PetscCallCXX(left.op = make(view));
    left.ghost_offset = 0;
    PetscCallCXX(parts.remote.push_back(std::move(left)));
  }
  if (m > 0 && rend < N) {
    cuda::RemoteBlock right;
    cuda::DenseView   view{m, N - rend, lda, a + rend * lda};
    PetscCallCXX(right.op = make(view));
    right.ghost_offset = rstart;
    PetscCallCXX(parts.remote.push_back(std::move(right)));
  }
#if defined(PETSC_HAVE_CUDA)
  if (in_place) PetscCall(MatDenseCUDARestoreArrayRead(A, &a));
  else
#endif
    PetscCall(MatDenseRestoreArrayRead(A, &a));
  PetscFunctionReturn(0);
}

/// The layout of a distributed operator's rows: the ranks' row ranges, this rank's.
struct RowLayout {
  MPI_Comm        comm;
  PetscMPIInt     size, rank;
  const PetscInt *ranges;
  PetscInt        rstart, rend, N;
};

/// An MPIAIJ matrix's parts: the halo plan with its point-to-point messages, and this rank's blocks
/// (uploaded, or `in_place` on a MATMPIAIJCUSPARSE's own device arrays). A failed upload (PETSc has
/// printed its trace) sets `failure`, agreed on by the caller so that every rank stops together.
PetscErrorCode AIJParts(Mat A, const RowLayout &rows, cuda::KernelFlavor flavor, int device, PetscBool in_place, cuda::DistributedParts &parts,
                        std::string &failure)
{
  Mat             Ad, Ao;
  const PetscInt *garray;
  PetscInt        nghost;
  Messages        msg;

  PetscFunctionBegin;
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetSize(Ao, nullptr, &nghost));
  msg.comm = rows.comm;
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &msg.tag));
  PetscCall(BuildAIJPlan(rows.comm, rows.ranges, nghost, garray, parts.plan, msg));
  parts.exchange    = std::move(msg);
  parts.description = "row-distributed AIJ over " + std::to_string(rows.size) + (rows.size > 1 ? " ranks" : " rank");
#if defined(PETSC_HAVE_CUDA)
  if (in_place) {
    if (AIJBlocksInPlace(A, flavor, device, parts)) failure = "see the error above";
    PetscFunctionReturn(0);
  }
#endif
  if (AIJBlocks(A, flavor, device, parts)) failure = "see the error above";
  PetscFunctionReturn(0);
}

/// An MPIDENSE matrix's parts: the allgather of x (nothing on one rank) and this rank's column blocks.
/// `failure` as for AIJParts.
PetscErrorCode DenseParts(Mat A, const RowLayout &rows, cuda::KernelFlavor flavor, int device, PetscBool in_place, cuda::DistributedParts &parts,
                          std::string &failure)
{
  Allgather ag;

  PetscFunctionBegin;
  ag.comm = rows.comm;
  ag.count.resize(rows.size);
  ag.offset.resize(rows.size);
  for (PetscMPIInt p = 0; p < rows.size; ++p) {
    PetscCall(ToMPIInt(rows.ranges[p + 1] - rows.ranges[p], &ag.count[p]));
    PetscCall(ToMPIInt(rows.ranges[p], &ag.offset[p]));
  }
  ag.mine = ag.count[rows.rank];
  if (rows.size > 1) {
    parts.plan.send_all   = true;
    parts.plan.recv_count = rows.N;
    // a rank without rows takes part in the allgather but needs none of it on its device
    if (rows.rend > rows.rstart) parts.plan.ghost_segments = {{0, rows.rstart}, {rows.rend, rows.N - rows.rend}};
    parts.exchange = std::move(ag);
  } else parts.exchange = [](const PetscScalar *, PetscScalar *) {}; // one rank: nothing to exchange
  parts.description = "row-distributed dense over " + std::to_string(rows.size) + (rows.size > 1 ? " ranks (allgather of x)" : " rank");
  if (DenseBlocks(A, rows.rstart, rows.rend, rows.N, flavor, device, in_place, parts)) failure = "see the error above";
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode EPSCUDALanczosUploadDistributed(EPS eps, Mat A, int device, PetscBool in_place, DeviceOperatorPtr *out)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscBool        isaij, isdense, same;
  PetscLayout      rmap, cmap;
  RowLayout        rows;

  PetscFunctionBegin;
  out->reset();
  // the device types too: used in place (in_place), or, bound to the CPU, uploaded from their host arrays
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &isaij, MATMPIAIJ, MATMPIAIJCUSPARSE, ""));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &isdense, MATMPIDENSE, MATMPIDENSECUDA, ""));
  if (!isaij && !isdense) PetscFunctionReturn(0);
#if !defined(PETSC_HAVE_CUDA)
  PetscCheck(!in_place, PETSC_COMM_SELF, PETSC_ERR_PLIB, "device Mats used in place need a PETSc built with CUDA");
#endif
  // The backend's vectors have this rank's rows; the local block must be square in the same layout.
  PetscCall(MatGetLayouts(A, &rmap, &cmap));
  PetscCall(PetscLayoutCompare(rmap, cmap, &same));
  if (!same) PetscFunctionReturn(0); // the same on every rank: the layouts are global
  rows.comm = PetscObjectComm((PetscObject)A);
  PetscCallMPI(MPI_Comm_size(rows.comm, &rows.size));
  PetscCallMPI(MPI_Comm_rank(rows.comm, &rows.rank));
  PetscCall(MatGetOwnershipRanges(A, &rows.ranges));
  rows.rstart = rows.ranges[rows.rank], rows.rend = rows.ranges[rows.rank + 1], rows.N = rows.ranges[rows.size];
  const auto flavor = EPSCUDALanczosKernelFlavor(ctx->opt.kernels);
  PetscCallCXX(cuda::select_device(device)); // every upload below, and the backend, on this rank's device only

  cuda::DistributedParts parts;
  std::string            failure; // this rank's upload error, agreed on below so that no rank is left behind
  if (isaij) PetscCall(AIJParts(A, rows, flavor, device, in_place, parts, failure));
  else PetscCall(DenseParts(A, rows, flavor, device, in_place, parts, failure));
  std::shared_ptr<cuda::DistributedOperator> op;
  if (failure.empty()) {
    try {
      op = cuda::make_distributed_operator(std::move(parts), device);
    } catch (const std::exception &e) {
      failure = e.what();
    }
  }
  PetscBool failed = failure.empty() ? PETSC_FALSE : PETSC_TRUE, any;
  PetscCall(MPIU_Allreduce(&failed, &any, 1, CUDALANCZOS_MPI_BOOL, MPI_LOR, rows.comm));
  PetscCheck(!failed, PETSC_COMM_SELF, PETSC_ERR_LIB, "Uploading this rank's rows to the GPU failed: %s", failure.c_str());
  PetscCheck(!any, rows.comm, PETSC_ERR_LIB, "Uploading the matrix to the GPUs failed on another rank");
  *out = op;
  PetscFunctionReturn(0);
}

#else

PetscErrorCode EPSCUDALanczosUploadDistributed(EPS, Mat, int, PetscBool, DeviceOperatorPtr *out)
{
  PetscFunctionBegin;
  out->reset();
  PetscFunctionReturn(0);
}

#endif
