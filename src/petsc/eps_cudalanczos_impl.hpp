// Private state of EPSCUDALANCZOS shared by the files of src/petsc.
#pragma once

#include <slepccudalanczos.h>

#include "core/backend.hpp"
#include "core/interval_solve.hpp"
#include "core/lanczos_driver.hpp"

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace cudalanczos::cuda {
class DeviceOperator; // cuda/cuda_backend.hpp: an operator on the device (defined where CUDA is)
}
/// A device operator as the PETSc layer holds it: complete only in the files that build or apply one.
using DeviceOperatorPtr = std::shared_ptr<const cudalanczos::cuda::DeviceOperator>;

// PETSc 3.22 made PetscOptionItems a pointer type: SetFromOptions takes (EPS, PetscOptionItems) there,
// (EPS, PetscOptionItems *) before.
#if PETSC_VERSION_GE(3, 22, 0)
using CUDALanczosOptionItems = PetscOptionItems;
#else
using CUDALanczosOptionItems = PetscOptionItems *;
#endif

// Names that changed between PETSc 3.18 (Debian) and current releases, spelled the current way.
#if !PETSC_VERSION_GE(3, 20, 0)
#define PetscAssertPointer(h, arg) PetscValidPointer(h, arg)
#endif
#if PETSC_VERSION_GE(3, 24, 0)
#define CUDALANCZOS_MPI_BOOL MPI_C_BOOL
#else
#define CUDALANCZOS_MPI_BOOL MPIU_BOOL
#endif

// What SLEPc stores in eps->ncv, mpd, max_it and tol while the user leaves them to the solver:
// PETSC_DEFAULT up to 3.21, PETSC_DETERMINE since 3.22 (where PETSC_DEFAULT became PETSC_CURRENT,
// "keep the value").
#if SLEPC_VERSION_GE(3, 22, 0)
inline constexpr PetscInt kEPSUnset = PETSC_DETERMINE;
#else
inline constexpr PetscInt kEPSUnset = PETSC_DEFAULT;
#endif

extern PetscLogEvent EPS_CUDALanczos_Setup, EPS_CUDALanczos_Upload, EPS_CUDALanczos_Iterate, EPS_CUDALanczos_Vectors;
// Inside a solve's first upload: waiting for the device context, the host passes over the matrix, the
// copies, the vendor library's analysis (cuda/upload.hpp's phases).
extern PetscLogEvent EPS_CUDALanczos_Context, EPS_CUDALanczos_Prepare, EPS_CUDALanczos_Transfer, EPS_CUDALanczos_Analysis;

// The backend's vectors are PETSc's: Scalar (core/scalar.hpp, chosen by CMake from PETSC_USE_COMPLEX)
// must be PetscScalar, so that BV columns, Vecs placed over the basis and the MPI reductions (Scalars
// summed as kDoublesPerScalar doubles each) see the same bytes.
static_assert(std::is_same<PetscScalar, cudalanczos::Scalar>::value,
              "cudalanczos was configured for another PetscScalar (real vs complex) than this PETSc's: reconfigure with CMake");
static_assert(sizeof(PetscScalar) == cudalanczos::kDoublesPerScalar * sizeof(double), "PetscScalar is not made of doubles");

/// y = op(x) on the host through STApply, on Vecs placed over the backend's local arrays; MatMult with
/// `mat` instead where it is set (a generalized problem solved as the standard one of mat: congruence).
struct STOperator {
  ST  st;
  Vec x, y;
  Mat mat = nullptr;
  void operator()(const PetscScalar *xa, PetscScalar *ya) const;
};

/// y = B x on the host (the inner-product matrix of a generalized problem), on Vecs placed over the arrays.
struct BProduct {
  Mat B;
  Vec x, y;
  void operator()(const PetscScalar *xa, PetscScalar *ya) const;
};

/// What the user set (-eps_cudalanczos_*, the EPSCUDALanczosSet* functions); set-up never changes it.
struct EPSCUDALanczosOptions {
  EPSCUDALanczosVariant  variant        = EPS_CUDALANCZOS_THICK_RESTART;
  EPSCUDALanczosReorthog reorthog       = EPS_CUDALANCZOS_REORTHOG_FULL; // meaningful when reorthog_set
  PetscBool              reorthog_set   = PETSC_FALSE; // the user chose it; otherwise the solver does at set-up
  EPSCUDALanczosBackend  backend        = EPS_CUDALANCZOS_BACKEND_AUTO;
  EPSCUDALanczosKernels  kernels        = EPS_CUDALANCZOS_KERNELS_DEFAULT;
  PetscInt               device         = -1; // < 0: node-local rank modulo the device count
  PetscBool              check_symmetry = PETSC_FALSE;
  PetscBool              verify         = PETSC_TRUE; // search the complement for missed multiple eigenvalues
  PetscInt               ncv_max        = PETSC_DEFAULT; // most columns the basis may grow to (EPSCUDALanczosSetNcvMax)
  PetscInt               filter_degree  = 0; // EPS_ALL's polynomial filter (EPSCUDALanczosSetFilterDegree); 0: chosen
  PetscInt               block_size     = PETSC_DEFAULT; // vectors per Lanczos step (EPSCUDALanczosSetBlockSize); default: chosen
  PetscReal              restart        = PETSC_DEFAULT; // fraction of Ritz vectors kept (EPSCUDALanczosSetRestart); default: chosen
};

/// What set-up decided from the options and the problem, and why (-eps_view reports the reasons).
struct EPSCUDALanczosPlan {
  // the ncv this EPS chose itself (0: the user's), and the largest basis allowed from it
  PetscInt ncv_chosen = 0, mpd_chosen = 0, ncv_limit = 0;
  // an interval's or the threshold test's solve grows eps->ncv to the pairs it found (0: not grown), from
  // what set-up left; the next set-up starts from that again (GrowSolution, eps_cudalanczos_interval.cpp)
  PetscInt ncv_grown = 0, ncv_before_growth = 0;
  // the block size in effect (the option, or the solver's choice), whether the solver chose it, and
  // whether for many pairs (EPSCUDALanczosManyPairsBlocks) or for a sparse matrix (partial reorthogonalization)
  PetscInt  block_eff  = 1;
  PetscBool block_auto = PETSC_FALSE, block_many = PETSC_FALSE, block_sparse = PETSC_FALSE;
  // an interval's filtered solves' block size: the option, or the solver's (EPSCUDALanczosCheckInterval)
  PetscInt interval_block = 1;
  // the restart fraction in effect (the option, or the solver's choice)
  PetscReal restart_eff = 0.5;
  // the reorthogonalization in effect (the option, or the solver's choice; see EPSCUDALanczosSetReorthog)
  EPSCUDALanczosReorthog reorthog_eff   = EPS_CUDALANCZOS_REORTHOG_FULL;
  PetscBool              reorthog_dense = PETSC_FALSE; // the solver chose full reorthogonalization for a dense matrix
  // EPS_GHEP with STSHIFT, a diagonal B and no deflation space: solved as the standard problem of
  // C = B^-1/2 A B^-1/2 (EPSCUDALanczosCongruence)
  PetscBool congruence    = PETSC_FALSE;
  PetscBool bv_matrix_set = PETSC_FALSE; // set-up gave eps->V the inner-product matrix B (EPS_GHEP)
};

/// What is kept between solves because making it costs: each entry says whose lifetime owns it (the
/// Mat's, through a composed copy; this EPS's, until EPSReset or a changed key; the process's pool).
struct EPSCUDALanczosCaches {
  // the operator on the device for this EPS's solves: the Mat's device copy (composed on the Mat, see
  // mat_device_copy.cpp) or a CUDA MatShell's operator; null on the host or through STApply
  DeviceOperatorPtr device_op;
  // the CUDA backend of the last solve, reused while its operator and layout are the same: its stream,
  // cuBLAS handle and pinned buffers cost milliseconds to create, more than a small solve; EPSReset hands
  // it to the process's pool (EPSCUDALanczosReturnBackend)
  std::shared_ptr<cudalanczos::Backend> backend;
  DeviceOperatorPtr                     backend_op; // the device operator it was built with
  PetscInt                              backend_key[4] = {-1, -1, -1, -1}; // nloc, n, rstart, kernels
  // the CUDA device of this EPS's solves: set when a solve makes or takes its CUDA backend (before any
  // device work of that solve), the pool's key when EPSReset returns the backend
  int device = -1;
  // C = B^-1/2 A B^-1/2 and B^-1/2's diagonal (set-up's congruence), kept while A and B are unchanged
  // (their ids and object states), across EPSReset, for re-solves
  Mat        congruent       = nullptr;
  Vec        b_isqrt         = nullptr;
  PetscInt64 congruent_of[4] = {-1, -1, -1, -1}; // A's id and state, B's id and state
  PetscInt64 ipmat_checked_of[2] = {-1, -1}; // the inner-product matrix whose diagonal was found positive: id, state
  // The norm estimate of an operator that is not an assembled matrix of ours (STApply: a solve, B^-1 A,
  // (A - sigma B)^-1 B, ...), kept with the EPS for its re-solves: measuring it is a solve. Valid while the
  // ST's type, its shift and its matrices (ids and object states) are those it was measured with. (An
  // assembled matrix's estimate is composed on the Mat instead, norm_estimate.cpp.)
  double      st_norm = 0;
  PetscInt64  st_norm_of[6] = {-1, -1, -1, -1, -1, -1}; // each ST matrix's id and state, the shift's two parts' bits
  std::string st_norm_type;
};

/// The last solve, for -eps_view and the getters: the driver's Result kept whole, and what the PETSc
/// layer adds to it (where the operator, the vectors and B's products ran, which caches it took).
struct EPSCUDALanczosLastSolve {
  cudalanczos::Result result;
  PetscBool   solved = PETSC_FALSE;
  std::string backend_name = "none", device_desc, operator_desc;
  std::string vectors_desc;       // where it read its start/deflation vectors and wrote the eigenvectors
  PetscInt    converged = 0;      // pairs it converged: more than eps->nconv where the BV's columns cut the rest
  std::size_t uploaded_bytes = 0; // bytes of the matrix copied to the device by the last solve
  std::size_t split_bytes    = 0; // bytes of a uniform pattern split off a device Mat's arrays by the last solve
  PetscBool   generalized = PETSC_FALSE; // it ran in a B-inner product (EPS_GHEP, or the BV's matrix)
  long        b_products  = 0;           // and took this many products with B
  std::string b_desc;                    // where they ran
  PetscBool   congruence_used = PETSC_FALSE; // it took set-up's congruence
  PetscBool   norm_reused     = PETSC_FALSE; // its norm estimate came from the Mat (composed by an earlier solve)
  PetscBool   st_norm_reused  = PETSC_FALSE; // its norm estimate came from Caches::st_norm
  int         purified_solves = 0;   // returned vectors purified by STApply after the driver
  int         purified_relation = 0; // returned vectors the driver purified from the Lanczos relation (Result::purified counts all it converged)
  std::string symmetry_desc;       // the symmetry probe passed, and where its products ran (empty: no probe)
  PetscBool   interval = PETSC_FALSE; // it computed every eigenvalue in an interval (EPS_ALL)
  cudalanczos::IntervalResult interval_result; // then what that solve found (its `result` is left empty: see `result`)
};

struct EPS_CUDALANCZOS {
  EPSCUDALanczosOptions   opt;
  EPSCUDALanczosPlan      plan;
  EPSCUDALanczosCaches    cache;
  EPSCUDALanczosLastSolve last;
};

// The EPS operations (EPSCreate_CUDALanczos's ops table), one file per phase family.
PetscErrorCode EPSSetUp_CUDALanczos(EPS eps);     // eps_cudalanczos_setup.cpp
PetscErrorCode EPSSetUpSort_CUDALanczos(EPS eps); // eps_cudalanczos_setup.cpp
PetscErrorCode EPSSolve_CUDALanczos(EPS eps);     // eps_cudalanczos_solve.cpp
PetscErrorCode EPSView_CUDALanczos(EPS eps, PetscViewer viewer); // eps_cudalanczos_view.cpp

/// The driver's `which` for eps->which; an error for the values EPSCUDALANCZOS does not support.
PetscErrorCode EPSCUDALanczosWhich(EPS eps, cudalanczos::Which *which);

/// key[0..1] = the object's id and state: what the caches are kept with (an object changed since, or
/// another object, does not match).
PetscErrorCode EPSCUDALanczosObjectKey(PetscObject obj, PetscInt64 key[2]); // generalized.cpp

/// Where a solve's ||A|| estimate came from, and where it goes when measured (norm_estimate.cpp).
struct EPSCUDALanczosNormCache {
  Mat        mat        = nullptr;      // the assembled matrix it is composed on (null: the operator is not one)
  PetscBool  mat_reused = PETSC_FALSE;  // taken from the Mat
  bool       st_key     = false;        // the ST's operator, kept in ctx->cache.st_norm under st_of
  PetscInt64 st_of[6]   = {-1, -1, -1, -1, -1, -1};
  PetscBool  st_reused  = PETSC_FALSE;  // taken from ctx->cache.st_norm
};
/// Sets s->norm_estimate where an earlier solve's estimate is still valid for this operator; `congruence`:
/// the solve's matrix is ctx->cache.congruent; `st_assembled`: the ST applies assembled matrices. Collective.
PetscErrorCode EPSCUDALanczosNormLookUp(EPS eps, PetscBool congruence, PetscBool st_assembled, cudalanczos::Settings *s, EPSCUDALanczosNormCache *nc);
/// Keeps the estimate the solve measured (Result::norm_estimate) where NormLookUp found none. Not collective.
PetscErrorCode EPSCUDALanczosNormKeep(EPS eps, const EPSCUDALanczosNormCache &nc, double estimate);

/// The check of CheckDiagonal in generalized.cpp (B's diagonal real and not negative) for the solve's
/// inner-product matrix, once per B object and state. Collective.
PetscErrorCode EPSCUDALanczosCheckInnerProductMatrix(EPS eps, Mat B);
/// Whether B is diagonal: an AIJ Mat (host or CUDA) with one stored entry per row, on the diagonal. Collective.
PetscErrorCode EPSCUDALanczosIsDiagonal(Mat B, PetscBool *diagonal);
/// ctx->cache.congruent = B^-1/2 A B^-1/2 and ctx->cache.b_isqrt = diag(B)^-1/2 for a diagonal B, kept while A and B are
/// unchanged; a non-positive diagonal entry of B is an error. Collective.
PetscErrorCode EPSCUDALanczosCongruence(EPS eps, Mat A, Mat B);
/// Whether this solve runs on the GPU (backend auto with a device present, or cuda: then an error
/// when there is none or CUDA support was not compiled in).
PetscErrorCode EPSCUDALanczosUseCUDA(EPS eps, PetscBool *use);
/// The smallest dense matrix for which set-up chooses block steps (EPSCUDALanczosChooseBlockSize in
/// eps_cudalanczos_setup.cpp): below it a pass over the matrix is too cheap for a block to save much.
inline constexpr PetscInt kAutoBlockRows = 8192;
#define CUDALANCZOS_AUTO_BLOCK_ROWS_TEXT "8192"
/// The smallest sparse (AIJ) matrix for which set-up chooses blocks of 2 below kAutoBlockSparseNev, and
/// that nev bound (EPSCUDALanczosChooseBlockSize; docs/tuning.md#petsc-automatic-block-size): smaller
/// matrices' steps are latency-bound, where a block step's extra waits cost more than its passes save.
inline constexpr PetscInt kAutoBlockSparseRows = 100000;
#define CUDALANCZOS_AUTO_BLOCK_SPARSE_ROWS_TEXT "100000"
inline constexpr PetscInt kAutoBlockSparseNev = 10;
#define CUDALANCZOS_AUTO_BLOCK_SPARSE_NEV_TEXT "10"
/// SLEPc's many pairs: from this nev its default dimensions are ncv = nev + 500 and mpd = 500, so that
/// a cycle holds at most mpd columns past the locked ones (ChooseNcv in eps_cudalanczos_setup.cpp).
inline constexpr PetscInt kManyPairsNev = 500;
#define CUDALANCZOS_MANY_PAIRS_NEV_TEXT "500"
/// The block size set-up chooses for many pairs (EPSCUDALanczosChooseBlockSize).
inline constexpr PetscInt kManyPairsBlock = 8;
#define CUDALANCZOS_MANY_PAIRS_BLOCK_TEXT "8"
/// Whether set-up may choose block steps for nev pairs by the many-pairs rule. Real scalars only: the
/// block steps' complex projected problem is solved on the host.
inline bool EPSCUDALanczosManyPairsBlocks(PetscInt nev)
{
  return !PetscDefined(USE_COMPLEX) && nev >= kManyPairsNev;
}
/// eigr, eigi, errest and perm (EPS's arrays of the values a solve returns) for n values, zeroed, perm the
/// identity (what EPSSolve's sort starts from), in place of the ones there.
PetscErrorCode EPSCUDALanczosValueArrays(EPS eps, PetscInt n);
/// The most columns this EPS's BV can hold: PETSC_MAX_INT / (the largest local rows) with 32-bit PetscInt,
/// whose count of a rank's nloc x cols entries must not wrap. Collective.
PetscErrorCode EPSCUDALanczosMaxBVColumns(EPS eps, PetscInt *most);
/// Starts, once per process and unless -cudalanczos_warm_up_at_load is false, the CUDA driver and the
/// default device's context on a helper thread (cuda::warm_up_at_load), `when` said under -info: at load
/// when the options select the type, else at the first EPSCreate_CUDALanczos. Not collective.
PetscErrorCode EPSCUDALanczosStartWarmUp(const char *when);
/// Set-up: when the solve will run on a GPU, starts its device's context and the upload staging on a
/// helper thread (cuda::warm_up), so that the solve finds them made or in the making. Collective.
PetscErrorCode EPSCUDALanczosWarmUp(EPS eps);
/// The CUDA backend with the uploaded matrix (cached in the EPS) or the STApply fallback; *driver_shift:
/// STSHIFT's shift where the backend applies the uploaded A rather than A - sigma I, which the driver then
/// applies itself, else untouched.
PetscErrorCode EPSCUDALanczosCreateCUDABackend(EPS eps, cudalanczos::Reducer reduce, PetscInt rstart, const STOperator &hostop,
                                               std::shared_ptr<cudalanczos::Backend> &backend, double *driver_shift);
/// Keeps s->ncv_max (the basis growth limit) to half of the device memory free for the basis when the
/// solve runs on the GPU (`on_device`), the same on every rank; never below s->ncv. Collective.
PetscErrorCode EPSCUDALanczosLimitBasis(EPS eps, PetscBool on_device, cudalanczos::Settings *s);
/// Refuses, with the sizes named, a basis of `columns` columns that the device memory free for it cannot
/// hold when the solve runs on the GPU (`on_device`); the same decision on every rank. Collective.
PetscErrorCode EPSCUDALanczosCheckBasisFits(EPS eps, PetscBool on_device, int columns);
/// The most basis columns an interval solve may hold (IntervalSettings::max_columns): what fits in 80 % of
/// the device memory free when the solve runs on the GPU (`on_device`), the same on every rank; 0 (no
/// limit) on the host. Collective.
PetscErrorCode EPSCUDALanczosDeviceColumns(EPS eps, PetscBool on_device, int *columns);
/// Whether the EPS stops by the threshold test (EPSSetThreshold; SLEPc >= 3.26, else false).
bool EPSCUDALanczosThresholdTest(EPS eps);
/// The threshold test's checks at EPSSetUp, after the congruence is chosen (eps_cudalanczos_interval.cpp). Collective.
PetscErrorCode EPSCUDALanczosCheckThreshold(EPS eps);
/// The threshold test: every eigenpair beyond eps->thres, in chunks of nev (solve_to_threshold), the
/// solution arrays grown to hold them. Collective.
PetscErrorCode EPSCUDALanczosSolveThreshold(EPS eps, cudalanczos::Backend &solver, const cudalanczos::Settings &s,
                                            const cudalanczos::Callbacks &cb, PetscBool on_device, cudalanczos::Result *r);
/// EPS_ALL: the interval's checks at EPSSetUp, after the congruence is chosen (eps_cudalanczos_interval.cpp). Collective.
PetscErrorCode EPSCUDALanczosCheckInterval(EPS eps);
/// EPS_ALL: every eigenpair in [eps->inta, eps->intb] on `solver` (IntervalSettings from the EPS and the
/// options), the EPS's solution arrays grown to hold them; `r` gets the pairs, ctx->last the rest. Collective.
PetscErrorCode EPSCUDALanczosSolveInterval(EPS eps, cudalanczos::Backend &solver, const cudalanczos::Settings &s,
                                           const cudalanczos::Callbacks &cb, PetscBool on_device, cudalanczos::Result *r);
/// EPSReset: the EPS's CUDA backend goes to the process's pool (one-process backends) for the next EPS
/// of the same shape, without its operator. Not collective.
PetscErrorCode EPSCUDALanczosReturnBackend(EPS eps);
/// PetscFinalize: frees the pooled backend.
void EPSCUDALanczosReleaseBackendPool() noexcept;
/// A's device copy (mat_device_copy.cpp) when it is current for these kernels and this device on every
/// rank, else null (a stale copy is dropped first, so that the new upload does not sit beside it). Collective.
PetscErrorCode MatCUDALanczosGetDeviceCopy(Mat A, int kernels, int device, DeviceOperatorPtr *op);
/// Composes `op` on A as its device copy, made from A's present state; `bytes` is the device memory it
/// holds. `in_place`: an operator on A's own device data (a CUDA PETSc's device Mat), whose bytes are its
/// scratch only; it is not counted as a copy. Not collective.
PetscErrorCode MatCUDALanczosSetDeviceCopy(Mat A, int kernels, int device, DeviceOperatorPtr op, std::size_t bytes, PetscBool in_place);
/// Drops A's device copy when A changed since it was made (EPSReset: a changed Mat solved no more). Not collective.
PetscErrorCode MatCUDALanczosDropStaleDeviceCopy(Mat A);
/// The device copies composed on Mats of this process that are alive and their device bytes, and the
/// operators on device Mats' own arrays (in place) and the device bytes of their scratch.
void MatCUDALanczosDeviceCopies(std::size_t *count, std::size_t *bytes, std::size_t *in_place_count, std::size_t *in_place_bytes);
/// Randomized symmetry probe |y'Ax - x'Ay| against rounding level; an error when the operator is not symmetric.
/// With `ip` (the BV's inner-product matrix of a standard problem) the probe is on ip A: A self-adjoint in ip's inner product.
/// `device_op` (a cuda::DeviceOperator of A itself, on one process; may be null): A's products are taken
/// there when the probe's Vecs are host Vecs. Collective.
PetscErrorCode EPSCUDALanczosCheckSymmetry(EPS eps, Mat ip, const DeviceOperatorPtr &device_op);
/// A MATMPIAIJ / MATMPIDENSE (any number of ranks) as a row-distributed device operator on `device`,
/// ghosts exchanged every product (cuda_distributed.cpp); *op stays null for other types or layouts.
/// `in_place` (a CUDA PETSc's MATMPIAIJCUSPARSE / MATMPIDENSECUDA whose data is on `device`): the blocks
/// are the Mat's own device arrays, nothing uploaded. Collective on A.
PetscErrorCode EPSCUDALanczosUploadDistributed(EPS eps, Mat A, int device, PetscBool in_place, DeviceOperatorPtr *op);

#if defined(CUDALANCZOS_HAVE_CUDA)
#include "cuda/cuda_backend.hpp"

/// The GPU kernels the user chose (-eps_cudalanczos_kernels) as the CUDA layer's flavor.
cudalanczos::cuda::KernelFlavor EPSCUDALanczosKernelFlavor(EPSCUDALanczosKernels k);
/// Makes ctx->cache.device_op the operator of A on `device`: A's current device copy, a CUDA MatShell's
/// operator, a CUDA PETSc's device Mat in place, or a new upload composed on A; null when A cannot live on
/// the device. Collective.
PetscErrorCode EPSCUDALanczosUploadOperator(EPS eps, Mat A, int device);

/// Copies a MATSEQDENSE (honouring its leading dimension) or MATSEQAIJ matrix (isdense says which) to
/// `device` with the given kernels: the one upload path of the solver and of MatCreateCUDALanczos.
PetscErrorCode MatCUDALanczosUpload(Mat A, PetscBool isdense, cudalanczos::cuda::KernelFlavor flavor, int device,
                                    std::shared_ptr<const cudalanczos::cuda::DeviceOperator> *op);
/// A host CSR matrix (PETSc's row pointers and column indices, rows x cols) as the device kernels' view with
/// 32-bit indices: PETSc's arrays themselves with 32-bit PetscInt; with 64-bit PetscInt, copies narrowed
/// into `storage` (an error naming the sizes where they do not fit).
struct EPSCUDALanczosHostCsr {
  cudalanczos::cuda::CsrView view;
  std::vector<int>           storage;
};
PetscErrorCode EPSCUDALanczosHostCsrView(PetscInt rows, PetscInt cols, const PetscInt *ia, const PetscInt *ja, const PetscScalar *a,
                                         EPSCUDALanczosHostCsr *csr);
/// A CUDA PETSc's device CSR arrays as they are (PetscInt indices): a cuda::CsrView with 32-bit PetscInt,
/// a cuda::WideCsrView (narrowed on the device by make_*_operator_on_device) with 64-bit.
using EPSCUDALanczosDeviceCsrView = cudalanczos::cuda::BasicCsrView<PetscInt>;
/// B of a generalized problem as an operator on `device` for the B-inner products (cuda::apply_to_columns):
/// B's device copy when current (composed on B, like A's), a CUDA PETSc's MATSEQAIJCUSPARSE or
/// MATSEQDENSECUDA on that device used in place, or an upload of a MATSEQAIJ / MATSEQDENSE composed on B
/// (`uploaded`: its bytes; 0 otherwise); on several processes the row-distributed operator of a MATMPIAIJ /
/// MATMPIDENSE (uploaded) or of their CUDA types (in place), whose products exchange ghosts and so are
/// collective. Null for other types, or a B on another device: B's products then go through the host.
/// Collective.
PetscErrorCode EPSCUDALanczosDeviceB(EPS eps, Mat B, int device, DeviceOperatorPtr *op, std::size_t *uploaded);
/// Device memory held by the process's pooled backend (EPSCUDALanczosReturnBackend): its basis and scratch.
std::size_t EPSCUDALanczosPooledBackendBytes() noexcept;
#endif

// Ordering with PETSc's own stream (a CUDA PETSc, 3.20 or later: PetscDeviceContextGetStreamHandle).
//
// The solver runs on its backend's stream, not on PETSc's, and the two are ordered by events where data
// crosses between them: the Mat's device arrays PETSc wrote (before a new operator on them is set up, and
// before every solve's first product), and the Vec device arrays of the BV that the solver reads (initial
// and deflation vectors) or writes (the eigenvectors). Why not one stream: the backend and its stream
// outlive an EPS (the backend pool hands them to the next EPS, whose device context may be another one),
// and PETSc's default stream may be the legacy default stream, which would serialize the solver with
// every other stream on the device. Events cost a few microseconds and wait for PETSc's work only, on the
// device: no host wait and no device-wide synchronization. PETSc's later work on its current context is
// queued after our writes (its stream waits for them); a program that moves to another device context
// must order that itself, as for any foreign stream (PetscDeviceContextGetStreamHandle's manual page).
#if defined(CUDALANCZOS_HAVE_CUDA) && defined(PETSC_HAVE_CUDA) && PETSC_VERSION_GE(3, 20, 0)
#define CUDALANCZOS_PETSC_STREAMS 1
/// The cudaStream_t of PETSc's current device context.
PetscErrorCode EPSCUDALanczosPETScStream(void **stream);
#endif
#if defined(CUDALANCZOS_HAVE_CUDA) && defined(PETSC_HAVE_CUDA)
/// The work queued on `consumer` (a cudaStream_t; null: the legacy default stream) on `device` from now
/// on waits for the work PETSc queued on its stream so far: an event (before 3.20: PETSc's context is
/// synchronized instead).
PetscErrorCode EPSCUDALanczosOrderAfterPETSc(void *consumer, int device);
#endif

#if defined(CUDALANCZOS_PETSC_STREAMS)
/// Whether the returned vectors' BV gets `columns` VECCUDA columns on the solve's GPU although the Mat makes
/// host vectors: a standard problem without deflation vectors solved by the CUDA backend on PETSc's own
/// device, where these columns and a basis of ncv take at most half of its free memory. Collective.
PetscErrorCode EPSCUDALanczosReturnOnDevice(EPS eps, PetscInt columns, PetscBool *use);
#endif

/// The BV's columns to and from a solve's backend (bv_columns.cpp): device to device where a column is in
/// device memory on the backend's `device` and the backend takes it (`on_device`: a CUDA backend), ordered
/// with PETSc's stream; through the host otherwise.
class EPSCUDALanczosColumns {
public:
  /// Takes a device column and PETSc's stream; returns false where the backend cannot.
  using ToDevice = std::function<bool(const PetscScalar *x, void *stream)>;
  using ToHost   = std::function<void(const PetscScalar *x)>;

  EPSCUDALanczosColumns(EPS eps, bool on_device, int device);
  /// Column `col` of V (negative: a constraint) into the backend.
  PetscErrorCode Read(PetscInt col, const ToDevice &to_device, const ToHost &to_host);
  /// Column j of `solver`'s basis into column j of V.
  PetscErrorCode Write(cudalanczos::Backend &solver, PetscInt j);
  /// Whether any column went device to device.
  bool device_to_device() const { return device_to_device_; }

private:
#if defined(CUDALANCZOS_PETSC_STREAMS)
  bool           OnOurDevice(PetscMemType mtype, const void *x) const;
  PetscErrorCode TakeStream();
  PetscErrorCode ReadDevice(Vec v, const ToDevice &to_device, bool *done);
  PetscErrorCode WriteDevice(cudalanczos::Backend &solver, PetscInt j, Vec v, bool *done);
#endif
  EPS   eps_;
  bool  on_device_;
  int   device_;
  void *stream_            = nullptr; // PETSc's stream, taken when the first device column is met
  bool  have_stream_       = false;
  bool  device_to_device_  = false;
};
