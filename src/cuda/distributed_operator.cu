// The row-distributed operator (distributed_operator.hpp): the blocks are ordinary DeviceOperators
// (operators.cu: the dense gemv, CSR SpMV and their cuBLAS/cuSPARSE twins); this file adds only the
// halo's three small kernels (gather, scatter-add, add) and the stream choreography of apply().
#include "cuda/distributed_operator.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/kernels/device_scalar.cuh"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

namespace cudalanczos::cuda {
namespace {
// The halo kernels move and add Scalars as the kernels' DScalar (kernels/device_scalar.cuh): a complex
// sum is the sum of the two parts.
using kernels::scalar_ops::DScalar;
using kernels::scalar_ops::add;
using kernels::scalar_ops::dev;

constexpr int kThreads = 256;

unsigned blocks_for(index_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// send[i] = x[index[i]]
__global__ void __launch_bounds__(kThreads) gather_kernel(index_t n, const int *__restrict__ index,
                                                          const DScalar *__restrict__ x, DScalar *__restrict__ send)
{
  const index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) send[i] = __ldg(x + __ldg(index + i));
}

// y[rows[i]] += t[i]; the rows are distinct, so no two threads touch one entry
__global__ void __launch_bounds__(kThreads) scatter_add_kernel(index_t n, const int *__restrict__ rows,
                                                               const DScalar *__restrict__ t, DScalar *__restrict__ y)
{
  const index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  const int r = __ldg(rows + i);
  y[r] = add(y[r], t[i]);
}

// y[i] += t[i]
__global__ void __launch_bounds__(kThreads) add_kernel(index_t n, const DScalar *__restrict__ t, DScalar *__restrict__ y)
{
  const index_t i = static_cast<index_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) y[i] = add(y[i], t[i]);
}

int resolve_device(int device)
{
  if (device >= 0) return device;
  int current = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&current));
  return current;
}

std::size_t bytes(index_t count) { return static_cast<std::size_t>(count) * sizeof(Scalar); }

/// The highest-priority non-blocking stream: the halo's gather and copies go ahead of the local
/// product's blocks when both are queued, so the exchange starts as early as it can.
Stream make_priority_stream()
{
  int least = 0, greatest = 0;
  CUDALANCZOS_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s{};
  CUDALANCZOS_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
  return Stream(s);
}

float elapsed_ms(const Event &a, const Event &b)
{
  float ms = 0;
  CUDALANCZOS_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

class HaloOperator final : public DistributedOperator {
public:
  HaloOperator(DistributedParts parts, int device)
      : device_(resolve_device(device)), local_(std::move(parts.local)), plan_(std::move(parts.plan)),
        exchange_(std::move(parts.exchange)), description_(std::move(parts.description))
  {
    check_local_block();
    check_plan();
    const index_t tmp_rows = take_remote_blocks(std::move(parts.remote));
    allocate(tmp_rows);
  }

  ~HaloOperator() override
  {
    if (comm_) CUDALANCZOS_CHECK_NOTHROW(cudaStreamSynchronize(comm_.get()));
  }

  index_t rows() const override { return m_; }
  index_t cols() const override { return m_; }
  int device() const override { return device_; }
  index_t send_count() const override { return nsend_; }
  index_t ghost_count() const override { return nghost_; }

  void apply(const Scalar *x, Scalar *y, void *stream) const override
  {
    ScopedDevice guard(device_);
    const auto s = static_cast<cudaStream_t>(stream);
    if (profiling_) CUDALANCZOS_CHECK(cudaEventRecord(t_start_.get(), s));
    send_halo(x, s);
    // 2. the local product on the caller's stream, overlapping 1, 3 and 4
    if (profiling_) CUDALANCZOS_CHECK(cudaEventRecord(t_local0_.get(), s));
    local_->apply(x, y, s);
    if (profiling_) CUDALANCZOS_CHECK(cudaEventRecord(t_local1_.get(), s));
    exchange_halo();
    receive_ghosts(s);
    add_remote_products(y, s);
    if (profiling_) add_timings(s);
  }

  std::string description() const override
  {
    std::string d = description_.empty() ? std::string("row-distributed") : description_;
    d += ": local " + local_->description();
    for (const auto &b : remote_) d += "; ghost block " + b.op->description();
    d += "; halo " + std::to_string(nsend_) + (kComplexScalars ? " complex entries out, " : " doubles out, ") +
         std::to_string(nghost_) +
         " in per product, staged through page-locked host memory";
    return d;
  }

  std::size_t device_bytes() const override
  {
    std::size_t total = local_->device_bytes() + send_index_.bytes() + send_dev_.bytes() + ghosts_.bytes() + tmp_.bytes();
    for (const auto &b : remote_) total += b.op->device_bytes();
    for (const auto &r : row_maps_) total += r.bytes();
    return total;
  }

  /// Every block on the caller's device memory (a CUDA PETSc's MPIAIJCUSPARSE / MPIDENSECUDA blocks):
  /// device_bytes() is then the halo's scratch only.
  bool in_place() const override
  {
    if (!local_->in_place()) return false;
    for (const auto &b : remote_)
      if (!b.op->in_place()) return false;
    return true;
  }

  void set_profiling(bool on) override { profiling_ = on; }
  HaloStats stats() const override
  {
    HaloStats s = stats_;
    s.host_exchange_ms = host_exchange_ms_;
    return s;
  }
  void reset_stats() override
  {
    stats_ = HaloStats{};
    host_exchange_ms_ = 0;
  }

private:
  /// The local block: present, square, on the operator's device; the exchange function present.
  void check_local_block()
  {
    if (!local_) throw Error("make_distributed_operator: no local block");
    if (!exchange_) throw Error("make_distributed_operator: no exchange function");
    m_ = local_->rows();
    if (local_->cols() != m_)
      throw Error("make_distributed_operator: the local block is " + std::to_string(m_) + "x" +
                  std::to_string(local_->cols()) + ", it must be square");
    if (local_->device() != device_)
      throw Error("make_distributed_operator: the local block lives on device " + std::to_string(local_->device()) +
                  ", the operator on device " + std::to_string(device_));
  }

  /// The plan's indices inside the local rows and its ghost segments inside the receive buffer; sets
  /// nsend_ and nghost_.
  void check_plan()
  {
    for (int i : plan_.send_indices)
      if (i < 0 || i >= m_) throw Error("make_distributed_operator: send index " + std::to_string(i) + " outside the local rows");
    if (plan_.send_all && !plan_.send_indices.empty())
      throw Error("make_distributed_operator: send_all and send_indices are exclusive");
    nsend_ = plan_.send_all ? m_ : static_cast<index_t>(plan_.send_indices.size());
    if (plan_.recv_count < 0) throw Error("make_distributed_operator: negative receive count");
    for (const auto &s : plan_.ghost_segments) {
      if (s.offset < 0 || s.length < 0 || s.offset + s.length > plan_.recv_count)
        throw Error("make_distributed_operator: a ghost segment lies outside the receive buffer");
      nghost_ += s.length;
    }
  }

  /// Checks the remote blocks and keeps those that add something; returns the most rows of one (the
  /// scratch vector's length).
  index_t take_remote_blocks(std::vector<RemoteBlock> remote)
  {
    index_t tmp_rows = 0;
    for (auto &b : remote) {
      if (!b.op) throw Error("make_distributed_operator: a remote block without an operator");
      if (b.op->device() != device_) throw Error("make_distributed_operator: a remote block lives on another device");
      if (b.ghost_offset < 0 || b.ghost_offset + b.op->cols() > nghost_)
        throw Error("make_distributed_operator: a remote block reads past the " + std::to_string(nghost_) + " ghosts");
      if (b.rows.empty() ? b.op->rows() != m_ : static_cast<index_t>(b.rows.size()) != b.op->rows())
        throw Error("make_distributed_operator: a remote block's rows do not match its row map");
      for (int r : b.rows)
        if (r < 0 || r >= m_) throw Error("make_distributed_operator: row map entry " + std::to_string(r) + " outside the local rows");
      if (b.op->rows() == 0 || b.op->cols() == 0) continue; // adds nothing
      tmp_rows = std::max(tmp_rows, b.op->rows());
      remote_.push_back(std::move(b));
    }
    return tmp_rows;
  }

  /// The streams, events and buffers of apply(), made once; the send indices and row maps uploaded.
  void allocate(index_t tmp_rows)
  {
    ScopedDevice guard(device_);
    comm_ = make_priority_stream();
    x_ready_ = make_event();
    sent_ = make_event();
    ghosts_ready_ = make_event();
    for (Event *e : {&t_start_, &t_local0_, &t_local1_, &t_ghosts_, &t_remote0_, &t_end_}) *e = make_event(true);
    if (!plan_.send_all && nsend_ > 0) {
      send_index_ = DeviceBuffer<int>(static_cast<std::size_t>(nsend_), "halo send indices");
      send_dev_ = DeviceBuffer<Scalar>(static_cast<std::size_t>(nsend_), "halo send buffer");
      CUDALANCZOS_CHECK(cudaMemcpy(send_index_.data(), plan_.send_indices.data(), send_index_.bytes(), cudaMemcpyHostToDevice));
    }
    send_host_ = PinnedBuffer<Scalar>(static_cast<std::size_t>(nsend_), "halo send buffer (host)");
    recv_host_ = PinnedBuffer<Scalar>(static_cast<std::size_t>(plan_.recv_count), "halo receive buffer (host)");
    ghosts_ = DeviceBuffer<Scalar>(static_cast<std::size_t>(nghost_), "ghost values");
    tmp_ = DeviceBuffer<Scalar>(static_cast<std::size_t>(tmp_rows), "remote block product");
    for (const auto &b : remote_) {
      row_maps_.emplace_back();
      if (b.rows.empty()) continue;
      row_maps_.back() = DeviceBuffer<int>(b.rows.size(), "remote block row map");
      CUDALANCZOS_CHECK(cudaMemcpy(row_maps_.back().data(), b.rows.data(), row_maps_.back().bytes(), cudaMemcpyHostToDevice));
    }
    CUDALANCZOS_CHECK(cudaStreamSynchronize(nullptr)); // the pageable uploads above, before the first apply
  }

  /// 1. values for the other ranks, to the page-locked send buffer (stream c, once x is ready on s)
  void send_halo(const Scalar *x, cudaStream_t s) const
  {
    const cudaStream_t c = comm_.get();
    if (nsend_ > 0 || nghost_ > 0) {
      CUDALANCZOS_CHECK(cudaEventRecord(x_ready_.get(), s));
      CUDALANCZOS_CHECK(cudaStreamWaitEvent(c, x_ready_.get(), 0));
    }
    if (nsend_ == 0) return;
    const Scalar *from = x;
    if (!plan_.send_all) {
      gather_kernel<<<blocks_for(nsend_), kThreads, 0, c>>>(nsend_, send_index_.data(), dev(x), dev(send_dev_.data()));
      CUDALANCZOS_CHECK_LAUNCH();
      from = send_dev_.data();
    }
    CUDALANCZOS_CHECK(cudaMemcpyAsync(send_host_.data(), from, bytes(nsend_), cudaMemcpyDeviceToHost, c));
    CUDALANCZOS_CHECK(cudaEventRecord(sent_.get(), c));
  }

  /// 3. the exchange, on the host; every rank calls it (it may be a collective). The send buffer must
  /// be filled, and the receive buffer no longer read by the last product's upload (stream order on c
  /// puts that upload before this product's send; without a send, wait for it directly).
  void exchange_halo() const
  {
    if (nsend_ > 0) CUDALANCZOS_CHECK(cudaEventSynchronize(sent_.get()));
    else if (nghost_ > 0) CUDALANCZOS_CHECK(cudaEventSynchronize(ghosts_ready_.get()));
    const auto h0 = std::chrono::steady_clock::now();
    exchange_(send_host_.data(), recv_host_.data());
    if (profiling_) host_exchange_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
  }

  /// 4a. the ghosts to the device, contiguous (stream c), and the caller's stream s waits for them
  void receive_ghosts(cudaStream_t s) const
  {
    if (nghost_ == 0) return;
    const cudaStream_t c = comm_.get();
    index_t at = 0;
    for (const auto &seg : plan_.ghost_segments) {
      if (seg.length > 0)
        CUDALANCZOS_CHECK(cudaMemcpyAsync(ghosts_.data() + at, recv_host_.data() + seg.offset, bytes(seg.length),
                                          cudaMemcpyHostToDevice, c));
      at += seg.length;
    }
    CUDALANCZOS_CHECK(cudaEventRecord(ghosts_ready_.get(), c));
    if (profiling_) CUDALANCZOS_CHECK(cudaEventRecord(t_ghosts_.get(), c));
    CUDALANCZOS_CHECK(cudaStreamWaitEvent(s, ghosts_ready_.get(), 0));
  }

  /// 4b. y += P_b A_b g_b on the caller's stream
  void add_remote_products(Scalar *y, cudaStream_t s) const
  {
    if (profiling_) CUDALANCZOS_CHECK(cudaEventRecord(t_remote0_.get(), s));
    for (std::size_t b = 0; b < remote_.size(); ++b) {
      const RemoteBlock &blk = remote_[b];
      const index_t r = blk.op->rows();
      blk.op->apply(ghosts_.data() + blk.ghost_offset, tmp_.data(), s);
      if (blk.rows.empty()) add_kernel<<<blocks_for(r), kThreads, 0, s>>>(r, dev(tmp_.data()), dev(y));
      else scatter_add_kernel<<<blocks_for(r), kThreads, 0, s>>>(r, row_maps_[b].data(), dev(tmp_.data()), dev(y));
      CUDALANCZOS_CHECK_LAUNCH();
    }
  }

  /// While profiling: waits for the product and adds its phases' times to stats_.
  void add_timings(cudaStream_t s) const
  {
    CUDALANCZOS_CHECK(cudaEventRecord(t_end_.get(), s));
    CUDALANCZOS_CHECK(cudaEventSynchronize(t_end_.get()));
    stats_.products += 1;
    stats_.apply_ms += elapsed_ms(t_start_, t_end_);
    stats_.local_ms += elapsed_ms(t_local0_, t_local1_);
    stats_.remote_ms += elapsed_ms(t_remote0_, t_end_);
    if (nghost_ > 0) stats_.exchange_ms += elapsed_ms(t_start_, t_ghosts_);
  }

  int device_;
  index_t m_ = 0, nsend_ = 0, nghost_ = 0;
  std::shared_ptr<const DeviceOperator> local_;
  std::vector<RemoteBlock> remote_;
  HaloPlan plan_;
  HaloExchange exchange_;
  std::string description_;

  Stream comm_;
  Event x_ready_, sent_, ghosts_ready_;
  Event t_start_, t_local0_, t_local1_, t_ghosts_, t_remote0_, t_end_; // timing, used while profiling
  DeviceBuffer<int> send_index_;
  DeviceBuffer<Scalar> send_dev_, ghosts_, tmp_;
  std::vector<DeviceBuffer<int>> row_maps_; // one per remote block (empty for an identity map)
  PinnedBuffer<Scalar> send_host_, recv_host_;

  bool profiling_ = false;
  mutable HaloStats stats_;
  mutable double host_exchange_ms_ = 0;
};

} // namespace

void select_device(int device)
{
  if (device >= 0) CUDALANCZOS_CHECK(cudaSetDevice(device));
}

std::shared_ptr<DistributedOperator> make_distributed_operator(DistributedParts parts, int device)
{
  return std::make_shared<HaloOperator>(std::move(parts), device);
}

} // namespace cudalanczos::cuda
