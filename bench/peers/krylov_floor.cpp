// The Krylov floor of the peer benchmark (bench/peers/README.md): how many steps an unrestarted
// single-vector Lanczos with full reorthogonalization needs, from cudalanczos's own start vector, until
// the k wanted Ritz pairs all reach the tolerance; floor time = those steps x the measured time of one
// matrix-vector product. No restart, no locking, no verification: the fewest products any single-vector
// Krylov method with this start vector could have used.
//
//   krylov_floor --case NAME [--dir DIR] [--n N] [--which largest|smallest] [--ks 1,10,50] [--tol 1e-8]
//                [--max-steps 12000] [--cap 60] [--host]
//
// The matrices are those of bench_eps: denseN by the thesis formula, the sparse ones from DIR/NAME.csr.
// The iteration runs through the library's Backend (src/core/backend.hpp): the CUDA backend with the
// operator uploaded as cudalanczos uploads it (KernelFlavor::Default), or with --host (or no GPU) the host
// reference backend. Step j: w = A v_j; classical Gram-Schmidt against v_0..v_j, repeated once when
// ||w|| dropped below 1/sqrt(2) of itself (DGKS, as the driver does); alpha_j = v_j'Av_j, beta_j = ||w||.
// Start vector: Backend::set_random(0, 0x5eed), normalized: the driver's default (Settings::seed).
// Convergence after s steps: the k wanted eigenvalues theta_i of T_s (LAPACK dstevx: bisection and
// inverse iteration on the tridiagonal) all have beta_s |z_i(s)| <= tol |theta_i|: the relative
// residual estimate SLEPc's default test (EPS_CONV_REL) and cudalanczos use. Checked every step up to
// 64, then every ~s/64 steps, walking back over the skipped ones once a check succeeds, so the count is
// exact. One run serves every k of --ks (the iteration is the same).
// Limits: --max-steps, the device memory for the basis (90 % of what is free, less 2 GB), and --cap seconds; a k
// not reached within them is reported with status "cap: ..." and the steps taken.
// A matrix-vector product is timed alone: median of 20 (CUDA events on its stream, after 3 warm-ups; on
// the host, steady_clock).
#include "csr_file.hpp"
#include "core/backend.hpp"
#include "core/random.hpp"
#include "host/host_backend.hpp"
#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"
#include "cuda/device_buffer.hpp"
#endif

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

extern "C" void dstevx_(const char *jobz, const char *range, const int *n, double *d, double *e, const double *vl, const double *vu,
                        const int *il, const int *iu, const double *abstol, int *m, double *w, double *z, const int *ldz, double *work,
                        int *iwork, int *ifail, int *info, std::size_t, std::size_t);

using namespace cudalanczos;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double dense_entry(std::uint64_t i, std::uint64_t j) // examples/thesis_demo.c, bit for bit
{
  std::uint64_t lo = std::min(i, j), hi = std::max(i, j);
  std::uint64_t x = lo * 0x9E3779B97F4A7C15ULL ^ (hi + 0x632BE59BD9B4E019ULL);
  x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ULL, x ^= x >> 29, x *= 0x94D049BB133111EBULL, x ^= x >> 32;
  return static_cast<double>(x >> 11) / 9007199254740992.0;
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)> &body)
{
  const int threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
  for (auto &th : pool) th.join();
}

struct Matrix {
  bool dense = false;
  std::int64_t n = 0, nnz = 0;
  std::vector<double> a; // dense: column-major n x n; CSR: values
  std::vector<int> rowptr, colind;

  void apply(const double *x, double *y) const // host y = A x (threads)
  {
    if (dense) {
      parallel_for(n, [&](std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) y[i] = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const double *col = a.data() + j * n;
          for (std::int64_t i = i0; i < i1; ++i) y[i] += col[i] * x[j];
        }
      });
    } else {
      parallel_for(n, [&](std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) {
          double s = 0;
          for (int p = rowptr[i]; p < rowptr[i + 1]; ++p) s += a[p] * x[colind[p]];
          y[i] = s;
        }
      });
    }
  }
};

bool load(const std::string &name, const std::string &dir, std::int64_t n_override, Matrix &M, std::string &err)
{
  if (name.rfind("dense", 0) == 0) {
    M.dense = true;
    M.n = n_override > 0 ? n_override : std::atoll(name.c_str() + 5);
    if (M.n <= 0) return err = "dense case needs a size (dense4096) or --n", false;
    M.nnz = M.n * M.n;
    M.a.resize(static_cast<std::size_t>(M.n * M.n));
    parallel_for(M.n, [&](std::int64_t j0, std::int64_t j1) {
      for (std::int64_t j = j0; j < j1; ++j)
        for (std::int64_t i = 0; i < M.n; ++i) M.a[i + j * M.n] = dense_entry(i, j);
    });
    return true;
  }
  bench::CsrFile F;
  if (!bench::read_csr_file(dir + "/" + name + ".csr", F, err)) return false;
  M.n = F.rows;
  M.nnz = F.nnz;
  M.rowptr = std::move(F.rowptr);
  M.colind = std::move(F.colind);
  M.a = std::move(F.values);
  return true;
}

double median(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

/// The k wanted eigenvalues of T_s (alpha[0..s-1], beta[0..s-2]) and whether all have
/// beta[s-1] |z_i(s)| <= tol |theta_i|.
bool converged(int s, int k, bool largest, double tol, const std::vector<double> &alpha, const std::vector<double> &beta,
               std::vector<double> &theta, double &worst)
{
  if (s < k) return false;
  std::vector<double> d(alpha.begin(), alpha.begin() + s), e(std::max(1, s)), w(s), z(static_cast<std::size_t>(s) * k), work(5 * s);
  std::vector<int> iwork(5 * s), ifail(s);
  std::copy(beta.begin(), beta.begin() + (s - 1), e.begin());
  const int il = largest ? s - k + 1 : 1, iu = largest ? s : k, ldz = s;
  const double vl = 0, vu = 0, abstol = 2 * DBL_MIN;
  int m = 0, info = 0;
  dstevx_("V", "I", &s, d.data(), e.data(), &vl, &vu, &il, &iu, &abstol, &m, w.data(), z.data(), &ldz, work.data(), iwork.data(),
          ifail.data(), &info, 1, 1);
  if (info != 0 || m != k) return false;
  theta.assign(w.begin(), w.begin() + m);
  if (largest) std::reverse(theta.begin(), theta.end());
  worst = 0;
  for (int i = 0; i < m; ++i) {
    const double est = std::abs(beta[s - 1] * z[(s - 1) + static_cast<std::size_t>(i) * ldz]);
    worst = std::max(worst, std::abs(w[i]) > 0 ? est / std::abs(w[i]) : est);
  }
  return worst <= tol;
}

} // namespace

int main(int argc, char **argv)
{
  std::string name = "dense4096", dir = ".", which = "largest";
  std::vector<int> ks{1, 10, 50};
  double tol = 1e-8, cap = 60;
  long max_steps = 12000;
  std::int64_t n_override = 0;
  [[maybe_unused]] bool host = false; // read only in a CUDA build
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "krylov_floor: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--case") name = next();
    else if (a == "--dir") dir = next();
    else if (a == "--which") which = next();
    else if (a == "--tol") tol = std::atof(next().c_str());
    else if (a == "--cap") cap = std::atof(next().c_str());
    else if (a == "--max-steps") max_steps = std::atol(next().c_str());
    else if (a == "--n") n_override = std::atoll(next().c_str());
    else if (a == "--host") host = true;
    else if (a == "--ks") {
      ks.clear();
      const std::string s = next();
      for (std::size_t p = 0; p < s.size();) {
        const std::size_t q = s.find(',', p);
        ks.push_back(std::atoi(s.substr(p, q - p).c_str()));
        p = q == std::string::npos ? s.size() : q + 1;
      }
    } else {
      std::fprintf(stderr, "usage: krylov_floor --case NAME [--dir DIR] [--n N] [--which largest|smallest] [--ks 1,10,50] [--tol 1e-8] "
                           "[--max-steps 12000] [--cap 60] [--host]\n");
      return 2;
    }
  }
  const bool largest = which != "smallest";
  const auto t_start = Clock::now();
  try {
    Matrix M;
    std::string err;
    if (!load(name, dir, n_override, M, err)) throw Error(err);
    const std::int64_t n = M.n;
    double asum = 0;
    { // 1'A1, as bench_eps and peers.py print it
      std::vector<double> one(n, 1.0), y(n);
      M.apply(one.data(), y.data());
      for (double v : y) asum += v;
    }

    std::unique_ptr<Backend> b;
    std::string backend = "host";
    double matvec_ms = 0;
    long cols = std::min<long>(max_steps + 1, n);
    bool cols_by_memory = false;
    const std::int64_t nnz = M.dense ? n * n : M.nnz;
    std::vector<double> xr(n), yr(n);
    for (std::int64_t i = 0; i < n; ++i) xr[i] = random_entry(7, i);
#if defined(CUDALANCZOS_HAVE_CUDA)
    if (!host && cuda::device_count() > 0) {
      using namespace cudalanczos::cuda;
      std::shared_ptr<DeviceOperator> op;
      if (M.dense) op = make_dense_operator({n, n, n, M.a.data()}, KernelFlavor::Default, -1);
      else op = make_csr_operator({n, n, M.nnz, M.rowptr.data(), M.colind.data(), M.a.data()}, KernelFlavor::Default, -1);
      backend = "cuda: " + op->description() + " on " + device_description(op->device());
      { // one product alone: median of 20 after 3
        Stream stream = make_stream();
        DeviceBuffer<double> x(n), y(n);
        CUDALANCZOS_CHECK(cudaMemcpy(x.data(), xr.data(), n * sizeof(double), cudaMemcpyHostToDevice));
        Event e0 = make_event(true), e1 = make_event(true);
        std::vector<double> t;
        for (int r = 0; r < 23; ++r) {
          CUDALANCZOS_CHECK(cudaEventRecord(e0.get(), stream.get()));
          op->apply(x.data(), y.data(), stream.get());
          CUDALANCZOS_CHECK(cudaEventRecord(e1.get(), stream.get()));
          CUDALANCZOS_CHECK(cudaEventSynchronize(e1.get()));
          float ms = 0;
          CUDALANCZOS_CHECK(cudaEventElapsedTime(&ms, e0.get(), e1.get()));
          if (r >= 3) t.push_back(ms);
        }
        matvec_ms = median(t);
      }
      M.a.clear(), M.a.shrink_to_fit(); // the device holds it now (the host apply is not needed any more)
      std::size_t free_b = 0, total_b = 0;
      device_memory(op->device(), &free_b, &total_b);
      // the basis (8 n per column) and the backend's cols x cols rotation matrix, 2 GB to spare
      long fit = static_cast<long>((0.9 * free_b - 2e9) / (8.0 * n));
      for (int it = 0; it < 3; ++it) fit = static_cast<long>((0.9 * free_b - 2e9) / (8.0 * (n + static_cast<double>(std::min(fit, cols)))));
      if (fit < cols) cols = fit, cols_by_memory = true;
      BackendConfig config;
      config.local_size = config.global_size = n;
      b = make_cuda_backend(config, op);
    }
#endif
    if (!b) {
      // host basis: at most a quarter of the memory
      const double mem = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
      const long fit = static_cast<long>(0.25 * mem / (8.0 * n)) - 4;
      if (fit < cols) cols = fit, cols_by_memory = true;
      std::vector<double> t;
      for (int r = 0; r < 23; ++r) {
        const auto a = Clock::now();
        M.apply(xr.data(), yr.data());
        if (r >= 3) t.push_back(1e3 * seconds_since(a));
      }
      matvec_ms = median(t);
      auto shared = std::make_shared<Matrix>(std::move(M));
      b = std::make_unique<HostBackend>(n, n, 0, [shared](const double *x, double *y) { shared->apply(x, y); });
    }
    if (cols < 2) throw Error("no room for a Lanczos basis");
    b->resize_basis(static_cast<int>(cols));

    // start: the driver's default start vector
    b->set_random(0, 0x5eedULL);
    double nrm2 = 0;
    b->project(0, 0, 0, &nrm2);
    b->scale(0, 1.0 / std::sqrt(nrm2));

    std::vector<int> pending(ks);
    std::sort(pending.begin(), pending.end());
    struct Done {
      int k;
      std::string status;
      long steps;
      double time_s, worst;
      std::vector<double> theta;
    };
    std::vector<Done> done;
    std::vector<double> alpha, beta, h, h2, theta;
    double anorm = 0;
    long last_checked = 0;
    std::string stop_reason;
    const auto t_iter = Clock::now();
    long s = 0; // steps taken (size of T)
    for (int j = 0; j + 1 < cols && !pending.empty(); ++j) {
      b->apply_operator(j, j + 1);
      h.assign(j + 2, 0.0);
      b->project(0, j + 1, j + 1, h.data());
      const double before = h[j + 1];
      double after = b->subtract(0, j + 1, h.data(), j + 1);
      if (after < 0.5 * before) {
        h2.assign(j + 2, 0.0);
        b->project(0, j + 1, j + 1, h2.data());
        after = b->subtract(0, j + 1, h2.data(), j + 1);
        for (int i = 0; i <= j; ++i) h[i] += h2[i];
      }
      if (!std::isfinite(after) || !std::isfinite(h[j])) throw Error("NaN/Inf in the Lanczos recurrence at step " + std::to_string(j));
      alpha.push_back(h[j]);
      beta.push_back(std::sqrt(std::max(after, 0.0)));
      anorm = std::max({anorm, std::sqrt(before), std::abs(h[j])});
      s = j + 1;
      const bool invariant = beta.back() <= 1e-13 * anorm;
      if (!invariant) b->scale(j + 1, 1.0 / beta.back());
      else beta.back() = 0; // exact Ritz pairs of an invariant subspace
      const long stride = s <= 64 ? 1 : s / 64;
      if (invariant || s % stride == 0 || j + 2 >= cols) {
        // check the smallest pending k; on success walk back to the first step that converged
        while (!pending.empty()) {
          const int k = pending.front();
          double worst = 0;
          if (!converged(static_cast<int>(s), k, largest, tol, alpha, beta, theta, worst)) break;
          long first = s;
          std::vector<double> th2;
          double w2 = 0;
          for (long q = std::max<long>(last_checked + 1, k); q < s; ++q)
            if (converged(static_cast<int>(q), k, largest, tol, alpha, beta, th2, w2)) {
              first = q, theta = th2, worst = w2;
              break;
            }
          done.push_back({k, "ok", first, seconds_since(t_iter), worst, theta});
          pending.erase(pending.begin());
        }
        last_checked = s;
      }
      if (invariant) {
        stop_reason = "invariant subspace after " + std::to_string(s) + " steps";
        break;
      }
      if (cap > 0 && seconds_since(t_iter) > cap) {
        stop_reason = "cap: time";
        break;
      }
    }
    if (stop_reason.empty()) stop_reason = cols_by_memory ? "cap: memory" : "cap: steps";
    for (int k : pending) {
      double worst = NAN;
      theta.clear();
      converged(static_cast<int>(s), k, largest, tol, alpha, beta, theta, worst);
      done.push_back({k, stop_reason, s, seconds_since(t_iter), worst, theta});
    }
    const double total_s = seconds_since(t_start);
    for (int k : ks)
      for (const Done &d : done)
        if (d.k == k) {
          std::string th = "[";
          char buf[64];
          for (std::size_t i = 0; i < d.theta.size(); ++i) {
            std::snprintf(buf, sizeof buf, "%s%.15g", i ? "," : "", d.theta[i]);
            th += buf;
          }
          th += "]";
          std::snprintf(buf, sizeof buf, std::isfinite(d.worst) ? "%.3e" : "null", d.worst);
          std::printf("{\"bench\":\"floor\",\"solver\":\"floor\",\"case\":\"%s\",\"n\":%lld,\"nnz\":%lld,\"k\":%d,\"which\":\"%s\",\"tol\":%g,"
                      "\"status\":\"%s\",\"steps\":%ld,\"matvec_ms\":%.6f,\"floor_s\":%.6f,\"est_rel_res\":%s,\"ritz\":%s,"
                      "\"iter_s\":%.3f,\"total_s\":%.3f,\"basis_cols\":%ld,\"asum\":%.17g,\"backend\":\"%s\"}\n",
                      name.c_str(), static_cast<long long>(n), static_cast<long long>(nnz), k,
                      largest ? "largest" : "smallest", tol, d.status.c_str(), d.steps, matvec_ms, d.steps * matvec_ms / 1e3, buf,
                      th.c_str(), d.time_s, total_s, cols, asum, backend.c_str());
        }
    std::fflush(stdout);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "krylov_floor: %s\n", e.what());
    return 1;
  }
}
