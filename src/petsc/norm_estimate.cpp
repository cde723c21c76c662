/*
   Where a solve's ||A|| estimate comes from when it is not measured anew. The driver scales the operator
   into [2^-256, 2^256] (Settings::norm_estimate) and needs the norm within far less than a factor of
   sqrt(n); measuring it costs a product, or a solve where the ST applies one. So an estimate is kept:
   composed on an assembled matrix (PETSc's cached-norm mechanism, valid while the Mat's state is
   unchanged), or, for an ST that solves, with the EPS (ctx->cache.st_norm). Every rank takes the same
   path: measuring is a product and a reduction, and a Mat's state is kept per process.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <slepc/private/epsimpl.h>

#include <algorithm>
#include <cstring>

namespace {

// Composed data on a Mat: the ||A|| estimate a solve measured, registered on first use.
PetscInt EPS_CUDALanczos_NormId = -1;

PetscErrorCode NormId(void)
{
  PetscFunctionBegin;
  if (EPS_CUDALanczos_NormId < 0) PetscCall(PetscObjectComposedDataRegister(&EPS_CUDALanczos_NormId));
  PetscFunctionReturn(0);
}

// The estimate composed on the matrix by an earlier solve (this EPS's or another's). Only where the
// backend applies the assembled matrix itself (STSHIFT with no B: A, or A - sigma I with sigma = 0 where
// the ST applies it; C under the congruence); a factor of sqrt(n) either way would not change the scaling.
PetscErrorCode MatNormLookUp(EPS eps, PetscBool congruence, cudalanczos::Settings *s, EPSCUDALanczosNormCache *nc)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscScalar      sigma;

  PetscFunctionBegin;
  PetscCall(STGetShift(eps->st, &sigma));
  if (!(s->translation_map && s->exact_operator && (PetscAbsScalar(sigma) == 0 || s->shift != 0))) PetscFunctionReturn(0);
  PetscReal nrm = 0;
  if (congruence) nc->mat = ctx->cache.congruent;
  else PetscCall(STGetMatrix(eps->st, 0, &nc->mat));
  PetscCall(NormId());
  // The macro reads the Mat's arrays at the id: only where they reach it (they grow when data is set).
  if (((PetscObject)nc->mat)->real_idmax > EPS_CUDALanczos_NormId)
    PetscCall(PetscObjectComposedDataGetReal((PetscObject)nc->mat, EPS_CUDALanczos_NormId, nrm, nc->mat_reused));
  if (!(nrm > 0)) nc->mat_reused = PETSC_FALSE;
  // a rank whose state moved alone must not leave the others waiting in the measurement's reduction
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &nc->mat_reused, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (nc->mat_reused) s->norm_estimate = (double)nrm;
  PetscFunctionReturn(0);
}

// Where the ST applies the operator with a solve (a B, STSINVERT, STCAYLEY) on assembled matrices: the
// estimate of an earlier solve of this EPS, taken while the ST's type, shift and matrices are the same.
// With the same seed the measurement would repeat that value bit for bit (a direct solve), or to the
// KSP's tolerance.
PetscErrorCode STNormLookUp(EPS eps, PetscBool congruence, PetscBool st_assembled, cudalanczos::Settings *s, EPSCUDALanczosNormCache *nc)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;
  PetscInt         nmat;
  PetscScalar      sigma;
  const char      *type;

  PetscFunctionBegin;
  nc->st_key = !s->translation_map && st_assembled && !congruence;
  if (!nc->st_key) PetscFunctionReturn(0);
  PetscCall(STGetNumMatrices(eps->st, &nmat));
  for (PetscInt i = 0; i < PetscMin(nmat, 2); ++i) {
    Mat M;
    PetscCall(STGetMatrix(eps->st, i, &M));
    PetscCall(EPSCUDALanczosObjectKey((PetscObject)M, nc->st_of + 2 * i));
  }
  PetscCall(STGetShift(eps->st, &sigma));
  const double parts[2] = {(double)PetscRealPart(sigma), (double)PetscImaginaryPart(sigma)};
  std::memcpy(&nc->st_of[4], parts, sizeof parts);
  PetscCall(PetscObjectGetType((PetscObject)eps->st, &type));
  nc->st_reused = ctx->cache.st_norm > 0 && std::equal(nc->st_of, nc->st_of + 6, ctx->cache.st_norm_of) && ctx->cache.st_norm_type == type
                    ? PETSC_TRUE
                    : PETSC_FALSE;
  // every rank alike: a rank whose matrix state moved alone would otherwise measure (a collective) alone
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &nc->st_reused, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)eps)));
  if (nc->st_reused) s->norm_estimate = ctx->cache.st_norm;
  else PetscCallCXX((ctx->cache.st_norm = 0, ctx->cache.st_norm_type = type));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode EPSCUDALanczosNormLookUp(EPS eps, PetscBool congruence, PetscBool st_assembled, cudalanczos::Settings *s, EPSCUDALanczosNormCache *nc)
{
  PetscFunctionBegin;
  PetscCall(MatNormLookUp(eps, congruence, s, nc));
  PetscCall(STNormLookUp(eps, congruence, st_assembled, s, nc));
  PetscFunctionReturn(0);
}

PetscErrorCode EPSCUDALanczosNormKeep(EPS eps, const EPSCUDALanczosNormCache &nc, double estimate)
{
  EPS_CUDALANCZOS *ctx = (EPS_CUDALANCZOS *)eps->data;

  PetscFunctionBegin;
  if (nc.st_key && !nc.st_reused && estimate > 0) {
    ctx->cache.st_norm = estimate;
    std::copy(nc.st_of, nc.st_of + 6, ctx->cache.st_norm_of);
  }
  if (nc.mat && !nc.mat_reused && estimate > 0)
    PetscCall(PetscObjectComposedDataSetReal((PetscObject)nc.mat, EPS_CUDALanczos_NormId, (PetscReal)estimate));
  PetscFunctionReturn(0);
}
