// A row-distributed operator on one device per rank: this rank's rows of A, applied to a vector whose
// other ranks' entries (the ghosts) arrive by a halo exchange every product.
//
//   y = A_local x  +  sum_b  P_b A_b g[offset_b : offset_b + cols_b]
//
// A_local is the square block of this rank's rows and columns (the "diagonal block" of PETSc's
// MATMPIAIJ, or the m x m column block of a MATMPIDENSE row block); g is the ghost vector, the entries
// of x owned by other ranks that this rank's rows touch; A_b are the blocks that multiply ghosts
// (MPIAIJ: one, the off-diagonal block with its columns compressed to the ghosts and its rows to the
// rows that have off-rank entries; dense: the column blocks left and right of the diagonal block) and
// P_b scatters their rows into y.
//
// Plain C++ like cuda_backend.hpp, and no MPI: the PETSc layer (src/petsc/cuda_distributed.cpp) builds
// the blocks and the plan, and gives an exchange callback that moves page-locked host buffers between
// ranks (MPI_Isend/Irecv, or MPI_Allgatherv for dense). One apply():
//
//   stream c (high priority)  gather x[send_indices] -> D2H send buffer      H2D ghost segments
//   host                                      wait -> exchange(send, recv) ->|
//   caller's stream s          A_local x  (overlaps the three lines above)   wait -> A_b g, y += P_b t
//
// so the exchange hides behind the local product whenever that is the longer of the two.
#pragma once

#include "cuda/cuda_backend.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cudalanczos::cuda {

/// What one rank sends and receives per product. Ranks do not appear: the exchange callback that comes
/// with the plan knows which part of the buffers belongs to which rank.
struct HaloPlan {
  /// Local indices of x, gathered on the device, in send-buffer order (grouped by destination rank).
  std::vector<int> send_indices;
  /// Instead of send_indices: the send buffer is the whole local x (a dense row block's allgather).
  bool send_all = false;
  /// Scalars the exchange writes into the receive buffer.
  index_t recv_count = 0;
  /// The ghost vector is these (offset in the receive buffer, length) pieces, one after the other:
  /// {0, recv_count} for point-to-point messages; for an allgather of the whole vector, the parts
  /// before and after this rank's own rows.
  struct Segment {
    index_t offset = 0, length = 0;
  };
  std::vector<Segment> ghost_segments;
};

/// Sends `send` (page-locked host memory, as many Scalars as the plan sends) and fills `recv` (the
/// plan's recv_count Scalars, page-locked; MPIU_SCALAR's entries in the PETSc layer). Called once per product on every rank, even one with
/// nothing to send or receive (it may be a collective). Throws cudalanczos::Error on failure.
using HaloExchange = std::function<void(const Scalar *send, Scalar *recv)>;

/// A block that multiplies ghosts: t = op g[ghost_offset : ghost_offset + op->cols()], then
/// y[rows[i]] += t[i] (rows empty: op has all local rows, y += t).
struct RemoteBlock {
  std::shared_ptr<const DeviceOperator> op;
  index_t ghost_offset = 0;
  std::vector<int> rows;
};

struct DistributedParts {
  std::shared_ptr<const DeviceOperator> local; ///< m x m, m = this rank's rows (may be 0)
  std::vector<RemoteBlock> remote;             ///< may be empty (one rank, or a block-diagonal A)
  HaloPlan plan;
  HaloExchange exchange;
  std::string description; ///< the first part of description(), e.g. "row-distributed AIJ over 4 ranks"
};

/// Where the time of the products went, summed since the last reset (only while profiling is on: it
/// adds timing events and one stream synchronization per product).
struct HaloStats {
  long products = 0;
  double apply_ms = 0;    ///< whole product, from x ready to y ready (device clock)
  double local_ms = 0;    ///< A_local x
  double remote_ms = 0;   ///< the ghost blocks and their scatter-add into y
  double exchange_ms = 0; ///< from x ready to the ghosts on the device: gather, D2H, exchange, H2D
  double host_exchange_ms = 0; ///< the exchange callback alone (host clock): MPI time, waits for other ranks included
};

class DistributedOperator : public DeviceOperator {
public:
  /// Scalars sent / ghosts received per product (the halo volume).
  virtual index_t send_count() const = 0;
  virtual index_t ghost_count() const = 0;
  virtual void set_profiling(bool on) = 0;
  virtual HaloStats stats() const = 0;
  virtual void reset_stats() = 0;
};

/// Makes `device` current for the calling thread (cudaSetDevice). Call it before building the blocks:
/// their uploads then create no context on the default device, which every rank would share.
void select_device(int device);

/// Builds the operator on `device` (< 0: the current one). The blocks must live on that device; sizes
/// are checked (local square, every block inside the ghost vector, row maps inside the local rows).
std::shared_ptr<DistributedOperator> make_distributed_operator(DistributedParts parts, int device);

} // namespace cudalanczos::cuda
