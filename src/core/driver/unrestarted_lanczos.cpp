// The thesis variant (Variant::Thesis, option value `thesis`; driver.hpp): Lanczos without restart on a
// growing basis for the largest eigenpair. Algorithm 2 (tridiagonalization, the three-term recurrence,
// no reorthogonalization), Algorithm 3 (implicit QR with Wilkinson shift on T_k, accumulating Z) after
// every step, and Algorithm 4 (x = Q z, err = ||A x - theta x|| / ||theta x||). The explicit residual
// costs a second operator application, so it is computed only once the Lanczos estimate |beta_k z_k|
// says the pair may have converged; the stop decision is always the explicit one.
#include "core/driver/driver.hpp"

#include "core/symmetric_eigen.hpp"

#include <cmath>

namespace cudalanczos::detail {

namespace {

// Algorithm 3 on T_k = tridiag(beta, alpha, beta): its eigenvalues d and eigenvectors Z (k x k).
struct TridiagonalEigen {
  std::vector<double> d, Z;
};

TridiagonalEigen tridiagonal_eigen(const std::vector<double> &alpha, const std::vector<double> &beta)
{
  const int k = static_cast<int>(alpha.size());
  TridiagonalEigen t{alpha, std::vector<double>(static_cast<std::size_t>(k) * k, 0.0)};
  std::vector<double> e(beta.begin(), beta.end() - 1);
  for (int i = 0; i < k; ++i) t.Z[i + static_cast<std::size_t>(i) * k] = 1.0;
  tridiagonal_qr(k, t.d.data(), e.data(), t.Z.data(), k);
  return t;
}

} // namespace

Result Driver::unrestarted_lanczos()
{
  const int m = s_.ncv;
  const int X = m + 1; // work column: the Ritz vector x
  std::vector<double> alpha, beta;
  Result r;
  double beta_prev = 0;
  for (int j = 0; j < m; ++j) {
    double a = 0, b = 0;
    bool exhausted = false;
    step(j, beta_prev, s_.reorthogonalization == Reorthogonalization::Full, a, b, exhausted);
    alpha.push_back(a);
    beta.push_back(b);
    beta_prev = b;
    r.its = j + 1;

    const int k = j + 1;
    const TridiagonalEigen t = tridiagonal_eigen(alpha, beta);
    const int best = order_by_which(s_, c_, t.d)[0];
    const double theta = t.d[best];
    const double *z = t.Z.data() + static_cast<std::size_t>(best) * k;
    const double shown = theta - s_.shift; // as reported

    double err = c_.error(shown, std::abs(b * z[k - 1]));
    const auto last = [&] { return err < s_.tol || b == 0 || j == m - 1 || r.its >= s_.max_it; };
    if (last()) {
      double xx = 0;
      err = explicit_residual_error(k, z, theta, xx);
      if (last()) {
        if (c_.monitor) c_.monitor(r.its, err < s_.tol ? 1 : 0, &shown, &err, 1);
        b_.copy_column(X, 0);
        b_.scale(0, 1.0 / std::sqrt(xx));
        r.eigenvalues = {shown};
        r.errors = {err};
        r.nconv = err < s_.tol ? 1 : 0;
        r.reason = r.nconv ? Reason::Converged : b == 0 ? Reason::Breakdown : Reason::MaxIterations;
        return r;
      }
    }
    if (c_.monitor) c_.monitor(r.its, 0, &shown, &err, 1);
    if (c_.stop && c_.stop(r.its, 0)) {
      r.reason = Reason::UserStop;
      return r;
    }
  }
  return r; // not reached: the last step always returns above
}

// Algorithm 4: x = V_k z into the work column m+1 and A x into m+2; returns the error of
// ||A x - theta x|| / ||x|| (Callbacks::error) and sets xx = ||x||^2.
double Driver::explicit_residual_error(int k, const double *z, double theta, double &xx)
{
  const int X = s_.ncv + 1, AX = s_.ncv + 2; // work columns
  const std::vector<Scalar> zs(z, z + k);    // T's eigenvector is real; combine takes Scalars
  b_.combine(0, k, zs.data(), X);
  b_.apply_operator(X, AX);
  ++matvecs_;
  xx = squared_norm(b_, X);
  const Scalar theta_s = theta;
  const double rr = b_.subtract(X, 1, &theta_s, AX);
  reductions_ += 2;
  return c_.error(theta - s_.shift, std::sqrt(rr / xx));
}

} // namespace cudalanczos::detail
