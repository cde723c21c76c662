// Bit-for-bit fingerprints of every kernel launcher of cuda/kernels.cuh: each on fixed inputs (odd sizes,
// offsets, gates, windows), one FNV-1a hash of its output per line. Two builds of the kernels that must
// compute the same bits (a refactor, a moved loop) print the same lines; tests/gpu/kernel_fingerprints.sh
// builds this file against two source trees and compares them on the GPU host. Accuracy against the host
// reference is tests/cuda's job; this checks sameness, which a tolerance cannot.
#include "cuda/kernels.cuh"
#include "core/random.hpp"
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include <string>
#include <cstdint>
#include <complex>

using namespace cudalanczos;
namespace K = cudalanczos::cuda::kernels;

static void ck(cudaError_t e, int line) { if (e != cudaSuccess) { std::printf("CUDA error %s at %d\n", cudaGetErrorString(e), line); std::exit(1); } }
#define CK(x) ck((x), __LINE__)

static std::uint64_t fnv(const void *p, std::size_t n, std::uint64_t h = 1469598103934665603ull) {
  const unsigned char *c = static_cast<const unsigned char *>(p);
  for (std::size_t i = 0; i < n; ++i) { h ^= c[i]; h *= 1099511628211ull; }
  return h;
}
static Scalar val(std::uint64_t seed, std::int64_t i) {
  double re = random_entry(seed, i);
  double parts[2] = {re, random_entry(seed ^ 0x9e3779b97f4a7c15ull, i)};
  Scalar s; std::memcpy(&s, parts, sizeof s); return s;
}
template <class T> struct Dev {
  T *p = nullptr; std::size_t n = 0;
  explicit Dev(std::size_t n_) : n(n_) { CK(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T) + 64)); CK(cudaMemset(p, 0, std::max<std::size_t>(1,n) * sizeof(T) + 64)); }
  ~Dev() { cudaFree(p); }
  void up(const std::vector<T> &h) { CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> down(std::size_t m) const { std::vector<T> h(m); CK(cudaMemcpy(h.data(), p, m * sizeof(T), cudaMemcpyDeviceToHost)); return h; }
};
static std::vector<Scalar> randv(std::size_t n, std::uint64_t seed) { std::vector<Scalar> v(n); for (std::size_t i = 0; i < n; ++i) v[i] = val(seed, i); return v; }
static void report(const std::string &name, const void *p, std::size_t bytes) { std::printf("%-60s %016llx\n", name.c_str(), (unsigned long long)fnv(p, bytes)); }
template <class T> static void report(const std::string &name, const std::vector<T> &v) { report(name, v.data(), v.size() * sizeof(T)); }

static void gemv_cases(cudaStream_t s) {
  struct C { index_t rows, cols, lda; } cs[] = {{1000, 700, 1000}, {1000, 700, 1001}, {320, 3000, 320}, {37, 5000, 40}, {5000, 20, 5000}, {4096, 4096, 4096}, {1, 9000, 1}, {777, 1, 778}, {20000, 300, 20002}};
  for (auto c : cs) for (int rg : {0, 1, 2, 4}) for (int off : {0, 1}) {
    if (off && c.lda < c.rows + 1) continue;
    Dev<Scalar> A(c.lda * c.cols + 2), x(c.cols + 2), y(c.rows);
    A.up(randv(c.lda * c.cols + 2, 11)); x.up(randv(c.cols + 2, 12));
    std::size_t wb = K::dense_gemv_workspace_bytes(c.rows, c.cols);
    Dev<char> ws(wb);
    K::GemvTuning t; t.row_groups = rg;
    K::dense_gemv(c.rows, c.cols, A.p + off, c.lda, x.p, y.p, ws.p, wb, s, t);
    K::dense_gemv(c.rows, c.cols, A.p + off, c.lda, x.p, y.p, ws.p, wb, s, t); // workspace left zeroed
    CK(cudaStreamSynchronize(s));
    report("gemv " + std::to_string(c.rows) + "x" + std::to_string(c.cols) + " lda " + std::to_string(c.lda) + " rg " + std::to_string(rg) + " off " + std::to_string(off), y.down(c.rows));
  }
}

struct Csr { index_t rows, cols; std::vector<int> rowptr, colind; std::vector<Scalar> values; };
static Csr make_csr(index_t rows, index_t cols, int mean, bool hubs, bool square_nodiag) {
  Csr A{rows, cols, {0}, {}, {}};
  std::uint64_t st = 12345;
  auto rnd = [&]() { st = st * 6364136223846793005ull + 1442695040888963407ull; return st >> 33; };
  for (index_t r = 0; r < rows; ++r) {
    int len = static_cast<int>(rnd() % (2 * mean + 1));
    if (hubs && r % 97 == 0) len = 400 + static_cast<int>(rnd() % 200);
    for (int e = 0; e < len; ++e) {
      int c = static_cast<int>(rnd() % cols);
      if (square_nodiag && c == r) continue;
      A.colind.push_back(c); A.values.push_back(val(77, (std::int64_t)A.values.size()));
    }
    A.rowptr.push_back(static_cast<int>(A.colind.size()));
  }
  return A;
}

static void sparse_cases(cudaStream_t s) {
  for (int mean : {2, 5, 16}) for (bool hubs : {false, true}) {
    const index_t n = 6000;
    Csr A = make_csr(n, n, mean, hubs, true);
    index_t nnz = (index_t)A.colind.size();
    Dev<int> rp(n + 1), ci(nnz); rp.up(A.rowptr); ci.up(A.colind);
    Dev<Scalar> vals(nnz), x(n), y(n), dvec(n); vals.up(A.values); x.up(randv(n, 21)); dvec.up(randv(n, 22));
    Dev<int> lg(1);
    K::longest_row(n, rp.p, lg.p, s); CK(cudaStreamSynchronize(s));
    int longest = lg.down(1)[0];
    std::string tag = "mean " + std::to_string(mean) + (hubs ? " hubs" : "");
    std::printf("longest %s %d lanes %d\n", tag.c_str(), longest, K::pattern_lanes(n, nnz, longest));
    for (int lanes : {0, 1, 2, 4, 8, 16, 32}) {
      K::csr_spmv(n, nnz, rp.p, ci.p, vals.p, x.p, y.p, s, lanes); CK(cudaStreamSynchronize(s));
      report("csr_spmv " + tag + " lanes " + std::to_string(lanes), y.down(n));
      for (bool dv : {false, true}) {
        K::pattern_spmv(n, nnz, rp.p, ci.p, val(5, 1), val(5, 2), dv ? dvec.p : nullptr, x.p, y.p, s, lanes); CK(cudaStreamSynchronize(s));
        report("pattern_spmv " + tag + " lanes " + std::to_string(lanes) + " dvec " + std::to_string(dv), y.down(n));
      }
    }
    for (int b : {1, 2, 3, 4, 5, 7, 8, 11, 16}) for (int lanes : {0, 1, 8}) {
      index_t ldx = n + 3, ldy = n + 5;
      Dev<Scalar> X(ldx * b), Y(ldy * b), inter(n * b);
      X.up(randv(ldx * b, 31));
      K::csr_spmm(n, n, nnz, rp.p, ci.p, vals.p, b, X.p, ldx, Y.p, ldy, inter.p, s, lanes); CK(cudaStreamSynchronize(s));
      report("csr_spmm " + tag + " b " + std::to_string(b) + " lanes " + std::to_string(lanes), Y.down(ldy * b));
      K::pattern_spmm(n, nnz, rp.p, ci.p, val(5, 1), val(5, 2), dvec.p, b, X.p, ldx, Y.p, ldy, inter.p, s, lanes); CK(cudaStreamSynchronize(s));
      report("pattern_spmm " + tag + " b " + std::to_string(b) + " lanes " + std::to_string(lanes), Y.down(ldy * b));
      K::pattern_spmm(n, nnz, rp.p, ci.p, val(5, 1), val(5, 2), nullptr, b, X.p, ldx, Y.p, ldy, inter.p, s, lanes); CK(cudaStreamSynchronize(s));
      report("pattern_spmm nodvec " + tag + " b " + std::to_string(b) + " lanes " + std::to_string(lanes), Y.down(ldy * b));
    }
  }
  // rectangular csr_spmm
  Csr B = make_csr(3000, 5000, 7, false, false);
  index_t nnz = (index_t)B.colind.size();
  Dev<int> rp(B.rowptr.size()), ci(nnz); rp.up(B.rowptr); ci.up(B.colind);
  Dev<Scalar> vals(nnz); vals.up(B.values);
  for (int b : {3, 9}) {
    Dev<Scalar> X(5000 * b), Y(3000 * b), inter(5000 * b); X.up(randv(5000 * b, 41));
    K::csr_spmm(3000, 5000, nnz, rp.p, ci.p, vals.p, b, X.p, 5000, Y.p, 3000, inter.p, s, 0); CK(cudaStreamSynchronize(s));
    report("csr_spmm rect b " + std::to_string(b), Y.down(3000 * b));
  }
}

static void reduction_cases(cudaStream_t s) {
  const int kmax = 45;
  Dev<double> ws(K::reduction_workspace_doubles(kmax + 2));
  for (index_t n : {1, 2, 7, 1001, 4096, 100001, 2000000}) for (int k : {0, 1, 2, 3, 8, 9, 17, 40}) for (int mis : {0, 1}) {
    index_t ldv = (n + 31) / 32 * 32 + mis; // odd ldv: scalar loads (real)
    const int cols = k + 3;
    Dev<Scalar> V(ldv * cols + 4), w(n + 4), out(k + 1), coef(k + 2), g(3), w2(n + 4);
    Dev<double> nrm(4);
    V.up(randv(ldv * cols + 4, 51)); auto wh = randv(n + 4, 52); w.up(wh); coef.up(randv(k + 2, 53)); g.up(randv(3, 54));
    std::string tag = "n " + std::to_string(n) + " k " + std::to_string(k) + " mis " + std::to_string(mis);
    const Scalar *Vp = V.p + (mis ? 0 : 0);
    Scalar *wp = w.p + mis; // misaligned w (real build: scalar path)
    K::multi_dot(n, k, Vp, ldv, wp, out.p, ws.p, s); CK(cudaStreamSynchronize(s));
    report("multi_dot " + tag, out.down(k + 1));
    for (int kl : {1, 2}) for (int lo : {0, k - kl, k, k + 1}) {
      if (lo < 0 || (lo < k && lo + kl > k) || lo + kl > cols) continue;
      w.up(wh);
      K::window_multi_dot(n, k, Vp, ldv, lo, kl, g.p, wp, out.p, ws.p, s); CK(cudaStreamSynchronize(s));
      report("window_multi_dot " + tag + " lo " + std::to_string(lo) + " kl " + std::to_string(kl), out.down(k + 1));
      K::window_subtract_norm2(n, k, Vp, ldv, lo, kl, g.p, coef.p, wp, nrm.p, ws.p, s); CK(cudaStreamSynchronize(s));
      auto r = w.down(n + 4); report("window_subtract w " + tag + " lo " + std::to_string(lo) + " kl " + std::to_string(kl), r);
      report("window_subtract nrm " + tag + " lo " + std::to_string(lo) + " kl " + std::to_string(kl), nrm.down(1));
    }
    w.up(wh);
    K::subtract_norm2(n, k, Vp, ldv, coef.p, wp, nrm.p, ws.p, s); CK(cudaStreamSynchronize(s));
    report("subtract_norm2 w " + tag, w.down(n + 4)); report("subtract_norm2 nrm " + tag, nrm.down(1));
    // gates: lhs < factor * rhs ?
    std::vector<double> gv = {1.0, 2.0}; Dev<double> gd(2); gd.up(gv);
    for (double f : {0.4, 0.6}) {
      w.up(wh); Dev<Scalar> o2(k + 1); Dev<double> n2(1);
      K::Gate gate{gd.p, gd.p + 1, f};
      K::multi_dot(n, k, Vp, ldv, wp, o2.p, ws.p, s, gate);
      K::subtract_norm2(n, k, Vp, ldv, coef.p, wp, n2.p, ws.p, s, gate); CK(cudaStreamSynchronize(s));
      report("gated " + std::to_string(f) + " " + tag, o2.down(k + 1)); report("gated w " + std::to_string(f) + " " + tag, w.down(n + 4)); report("gated n " + std::to_string(f) + " " + tag, n2.down(1));
    }
    w.up(wh); Dev<Scalar> y(n + 4);
    K::combine(n, k, Vp, ldv, coef.p, y.p + mis, s); CK(cudaStreamSynchronize(s));
    report("combine " + tag, y.down(n + 4));
    K::scale(n, 1.0 / 3.0, wp, s); CK(cudaStreamSynchronize(s)); report("scale " + tag, w.down(n + 4));
    K::set_random(n, 99, 17, wp, s); CK(cudaStreamSynchronize(s)); report("set_random " + tag, w.down(n + 4));
  }
}

static void step_cases(cudaStream_t s) {
  for (index_t n : {0, 1, 1000, 300000}) for (int j : {0, 1, 5}) for (int kl : {1, 2}) for (int k : {0, j - 1, j + 1}) {
    if (k < 0 || k > j + 1) continue;
    Dev<Scalar> g(3), h1(j + 3), h2(j + 3), w(n + 1);
    auto gh = randv(3, 61); gh[kl] = Scalar(4.0); g.up(gh);
    auto h1h = randv(j + 3, 62); h1h[k] = Scalar(2.0); h1.up(h1h); h2.up(randv(j + 3, 63)); w.up(randv(n + 1, 64));
    for (double a1 : {1e-3, 1.5}) for (double a2 : {1e-30, 0.5}) {
      std::vector<double> after = {0, a1, a2}, prev = {0, 0, 0, 3.0, 0};
      Dev<double> ad(3), pd(5), rec(5); ad.up(after); pd.up(prev);
      Dev<Scalar> ww(n + 1); ww.up(w.down(n + 1));
      K::finish_lanczos_step(n, j, k, kl, g.p, h1.p, h2.p, ad.p, 0.5, reinterpret_cast<const K::DeviceStepRecord *>(pd.p),
                             reinterpret_cast<K::DeviceStepRecord *>(rec.p), ww.p, s); CK(cudaStreamSynchronize(s));
      std::string tag = "n " + std::to_string(n) + " j " + std::to_string(j) + " k " + std::to_string(k) + " kl " + std::to_string(kl) + " a " + std::to_string(a1) + "/" + std::to_string(a2);
      report("finish rec " + tag, rec.down(5)); report("finish w " + tag, ww.down(n + 1));
    }
  }
}

static void rotate_cases(cudaStream_t s) {
  for (index_t n : {1, 33, 1000, 100003}) for (int k : {1, 3, 4, 9, 25, 48}) for (int m : {1, 5, 8, 12, 24, 32}) {
    if (m > k) continue;
    int ldqt = (m + K::kRotateOutputs - 1) / K::kRotateOutputs * K::kRotateOutputs;
    for (int extra : {0, K::kRotateOutputs}) {
      index_t ldv = n + 7;
      Dev<Scalar> V(ldv * k), Qt(k * (ldqt + extra));
      V.up(randv(ldv * k, 71));
      auto q = randv(k * (ldqt + extra), 72);
      for (int p = 0; p < k; ++p) for (int c = m; c < ldqt + extra; ++c) q[p * (ldqt + extra) + c] = Scalar(0);
      Qt.up(q);
      K::rotate(n, k, m, V.p, ldv, Qt.p, ldqt + extra, s); CK(cudaStreamSynchronize(s));
      report("rotate n " + std::to_string(n) + " k " + std::to_string(k) + " m " + std::to_string(m) + " ldqt " + std::to_string(ldqt + extra), V.down(ldv * k));
    }
  }
}

int main() {
  cudaStream_t s; CK(cudaStreamCreate(&s));
  std::printf("complex %d\n", (int)kComplexScalars);
  gemv_cases(s); sparse_cases(s); reduction_cases(s); step_cases(s); rotate_cases(s);
  std::printf("end\n");
  return 0;
}
