// Staged host-to-device uploads (upload.hpp): host threads fill page-locked chunks, the copy engine
// drains them, two chunks per thread so that filling one overlaps the copy of the other.
#include "cuda/device_buffer.hpp"
#include "cuda/upload.hpp"
#include "cuda/vendor_libraries.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace cudalanczos::cuda {
namespace {

// A chunk is long enough that a copy's launch cost (a few microseconds) is lost in its transfer time
// (tens of microseconds at the page-locked bandwidth), and short enough that T threads x 2 chunks stay a
// small pinned footprint (docs/tuning.md#cuda-staged-matrix-upload).
constexpr std::size_t kChunkBytes = std::size_t(4) << 20;
// Below this an image goes through one plain cudaMemcpy: starting threads would cost more than it saves.
constexpr std::size_t kDirectBytes = std::size_t(8) << 20;
constexpr int kDefaultThreadCap = 8;

struct Lane {
  PinnedBuffer<unsigned char> chunk[2];
  Event done[2]; // recorded after each chunk's copy: the chunk may be refilled once it completes
  Stream stream;
};

// What the process keeps between uploads. One upload at a time (the mutex); lanes belong to `device`.
struct Staging {
  std::mutex mutex;
  int device = -1;
  std::vector<Lane> lanes;
  std::atomic<std::size_t> pinned{0};
};

// Never destroyed: a static's destructor could run after the CUDA runtime has gone at exit.
// release_process_state() empties it at PetscFinalize.
Staging &staging()
{
  static Staging *s = new Staging;
  return *s;
}

std::atomic<int> threads_wanted{0};

int upload_threads()
{
  if (const int t = threads_wanted.load(); t > 0) return t;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, std::min(kDefaultThreadCap, cores));
}

// Lanes 0..count-1 for `device` (lanes of another device are dropped first).
void ensure_lanes(Staging &s, int device, int count)
{
  if (s.device != device) {
    s.lanes.clear();
    s.pinned = 0;
    s.device = device;
  }
  while (static_cast<int>(s.lanes.size()) < count) {
    Lane lane;
    for (int b = 0; b < 2; ++b) {
      lane.chunk[b] = PinnedBuffer<unsigned char>(kChunkBytes, "upload staging chunk");
      lane.done[b] = make_event();
    }
    lane.stream = make_stream();
    s.lanes.push_back(std::move(lane));
    s.pinned += 2 * kChunkBytes;
  }
}

std::atomic<UploadPhaseHook> phase_hook{nullptr};

// The warm-up's helper thread: one at a time, waited for by the next warm-up and at release.
struct WarmUp {
  std::mutex mutex;
  std::set<int> devices; // warmed (or being warmed) in this process
  bool load_started = false;
  std::future<void> at_load, pending; // warm_up_at_load's thread, the last warm_up's
  std::atomic<double> seconds{0};
};

WarmUp &warm_up_state()
{
  static WarmUp *w = new WarmUp; // never destroyed, as staging()
  return *w;
}

} // namespace

UploadPhaseScope::UploadPhaseScope(UploadPhase phase) : phase_(phase)
{
  if (const UploadPhaseHook hook = phase_hook.load()) hook(phase_, true);
}

UploadPhaseScope::~UploadPhaseScope()
{
  if (const UploadPhaseHook hook = phase_hook.load()) hook(phase_, false);
}

void set_upload_phase_hook(UploadPhaseHook hook) { phase_hook = hook; }

namespace {

// A warm-up's work on its helper thread: the context of `device`, then the staging chunks. Errors are not
// this thread's to report: the upload that needs the device meets them again.
void warm_device(int device, WarmUp &w)
{
  const auto start = std::chrono::steady_clock::now();
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  try {
    Staging &s = staging();
    std::lock_guard<std::mutex> staging_lock(s.mutex);
    ensure_lanes(s, device, upload_threads());
  } catch (...) {
    (void)cudaGetLastError();
  }
  w.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

void warm_up(int device)
{
  WarmUp &w = warm_up_state();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (!w.devices.insert(device).second) return;
  if (w.pending.valid()) w.pending.wait();
  try {
    w.pending = std::async(std::launch::async, [device, &w] { warm_device(device, w); });
  } catch (...) { // no thread to be had: the first upload does it all, as without a warm-up
    w.devices.erase(device);
  }
}

double warm_up_seconds() { return warm_up_state().seconds.load(); }

bool warm_up_at_load(int local_rank)
{
  WarmUp &w = warm_up_state();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.load_started) return false;
  w.load_started = true;
  try {
    w.at_load = std::async(std::launch::async, [local_rank, &w] {
      int count = 0;
      if (cudaGetDeviceCount(&count) != cudaSuccess) { // no driver or GPU: device_count() says so later
        (void)cudaGetLastError();
        return;
      }
      if (count == 0) return;
      // The vendor libraries (cuBLASLt alone is 500 MB to map) beside the context, which a solve waits
      // for first: the solve then finds both made.
      std::future<void> libraries;
      try {
        libraries = std::async(std::launch::async, open_vendor_libraries);
      } catch (...) { // no thread: their first call opens them
      }
      const int device = local_rank % count;
      bool first = local_rank >= 0;
      if (first) {
        std::lock_guard<std::mutex> devices_lock(w.mutex);
        first = w.devices.insert(device).second; // else a set-up's warm_up came first
      }
      if (first) warm_device(device, w);
      if (libraries.valid()) libraries.wait();
    });
  } catch (...) { // no thread to be had: the first CUDA call initializes the driver, as without this
  }
  return true;
}

void upload_image(void *dst, std::size_t bytes, const ImageFill &fill)
{
  if (bytes == 0) return;
  UploadPhaseScope phase(UploadPhase::Transfer);
  if (bytes <= kDirectBytes) {
    std::vector<unsigned char> image(bytes);
    fill(0, bytes, image.data());
    CUDALANCZOS_CHECK(cudaMemcpy(dst, image.data(), bytes, cudaMemcpyHostToDevice));
    return;
  }
  Staging &s = staging();
  std::lock_guard<std::mutex> lock(s.mutex);
  int device = 0;
  CUDALANCZOS_CHECK(cudaGetDevice(&device));
  const std::size_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(upload_threads()), chunks));
  ensure_lanes(s, device, threads);

  // Thread t copies chunks t, t + threads, ...; its two chunk buffers alternate.
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  const auto work = [&](int t) {
    Lane &lane = s.lanes[static_cast<std::size_t>(t)];
    try {
      CUDALANCZOS_CHECK(cudaSetDevice(device)); // the current device is per thread
      int k = 0;
      for (std::size_t c = static_cast<std::size_t>(t); c < chunks; c += static_cast<std::size_t>(threads), ++k) {
        const int b = k & 1;
        CUDALANCZOS_CHECK(cudaEventSynchronize(lane.done[b].get())); // its previous copy has left the chunk
        const std::size_t offset = c * kChunkBytes, length = std::min(kChunkBytes, bytes - offset);
        fill(offset, length, lane.chunk[b].data());
        CUDALANCZOS_CHECK(cudaMemcpyAsync(static_cast<unsigned char *>(dst) + offset, lane.chunk[b].data(), length,
                                          cudaMemcpyHostToDevice, lane.stream.get()));
        CUDALANCZOS_CHECK(cudaEventRecord(lane.done[b].get(), lane.stream.get()));
      }
      CUDALANCZOS_CHECK(cudaStreamSynchronize(lane.stream.get()));
    } catch (...) {
      errors[static_cast<std::size_t>(t)] = std::current_exception();
      CUDALANCZOS_CHECK_NOTHROW(cudaStreamSynchronize(lane.stream.get())); // nothing may still read the chunks
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(threads - 1));
  try {
    for (int t = 1; t < threads; ++t) helpers.emplace_back(work, t);
  } catch (...) { // no thread to be had: the calling thread does those lanes' chunks after its own
    for (auto &h : helpers) h.join();
    throw;
  }
  work(0);
  for (auto &h : helpers) h.join();
  for (auto &e : errors)
    if (e) std::rethrow_exception(e);
}

void upload_bytes(void *dst, const void *src, std::size_t bytes)
{
  if (bytes <= kDirectBytes) {
    UploadPhaseScope phase(UploadPhase::Transfer);
    if (bytes) CUDALANCZOS_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return;
  }
  const auto *from = static_cast<const unsigned char *>(src);
  upload_image(dst, bytes, [from](std::size_t offset, std::size_t length, unsigned char *out) {
    std::memcpy(out, from + offset, length);
  });
}

void upload_matrix(Scalar *dst, std::size_t dst_ld, const Scalar *src, std::size_t src_ld, std::size_t rows, std::size_t cols)
{
  if (dst_ld < rows || src_ld < rows) throw Error("upload_matrix: a leading dimension is below the row count");
  if (dst_ld == rows && src_ld == rows) return upload_bytes(dst, src, rows * cols * sizeof(Scalar));
  // The image is dst_ld x cols Scalars; a chunk may start and end inside a column.
  static_assert(kChunkBytes % sizeof(Scalar) == 0, "a chunk holds whole Scalars");
  upload_image(dst, dst_ld * cols * sizeof(Scalar), [=](std::size_t offset, std::size_t length, unsigned char *out) {
    std::size_t first = offset / sizeof(Scalar); // offsets are multiples of the chunk size: whole Scalars
    const std::size_t end = first + length / sizeof(Scalar);
    auto *o = reinterpret_cast<Scalar *>(out);
    while (first < end) {
      const std::size_t j = first / dst_ld, i = first % dst_ld;
      const std::size_t n = std::min(dst_ld - i, end - first); // to the end of this column or of the chunk
      const std::size_t real = i < rows ? std::min(rows - i, n) : 0;
      if (real) std::memcpy(o, src + j * src_ld + i, real * sizeof(Scalar));
      std::fill(o + real, o + n, Scalar{});
      o += n;
      first += n;
    }
  });
}

void set_upload_threads(int threads) { threads_wanted = std::max(0, threads); }

std::size_t upload_staging_bytes() { return staging().pinned.load(); }

void release_process_state() noexcept
{
  { // waited for outside the lock: warm_up_at_load's thread takes it
    WarmUp &w = warm_up_state();
    std::future<void> at_load, pending;
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      at_load = std::move(w.at_load);
      pending = std::move(w.pending);
    }
    if (at_load.valid()) at_load.wait();
    if (pending.valid()) pending.wait();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.devices.clear();
  }
  Staging &s = staging();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.lanes.clear(); // streams, events and pinned chunks, each released by its owner
  s.pinned = 0;
  s.device = -1;
}

} // namespace cudalanczos::cuda
