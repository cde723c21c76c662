/*
   Public setters and getters of EPSCUDALANCZOS. Each forwards to the composed "_C" function attached by
   EPSCreate_CUDALanczos (PetscTryMethod), so calling it on another EPS type is a no-op, as in SLEPc.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include "core/polynomial_filter.hpp"
#include <slepc/private/epsimpl.h>

#include <string>

// As SLEPc's own setters (EPSLanczosSetReorthog): a value outside the enum is refused, naming the valid
// ones. Accepted, it would index the name tables of -eps_view and EPSSetFromOptions out of bounds.
// `names` is the PETSc enum table: the names, then the type name, the prefix and a null.
static PetscErrorCode CheckEnumValue(EPS eps, int value, const char *const *names, const char *what)
{
  int count = 0;

  PetscFunctionBegin;
  while (names[count]) ++count;
  count -= 2; // the type name and the prefix
  if (value >= 0 && value < count) PetscFunctionReturn(0);
  std::string valid;
  for (int i = 0; i < count; ++i) valid += std::string(i ? ", " : "") + names[i];
  SETERRQ(PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE, "Invalid %s %d: the values are 0..%d (%s)", what, value, count - 1, valid.c_str());
}

/*@
   EPSCUDALanczosSetVariant - Sets the Lanczos variant.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the new value

   Options Database Key:
.  -eps_cudalanczos_variant <thick-restart,thesis> - Sets the Lanczos variant

   Notes:
   thick-restart (default) is thick-restart Lanczos with locking and reorthogonalization (EPSCUDALanczosSetReorthog()): any nev and any
   supported which. thesis is the algorithm of the thesis the project starts from: one eigenpair, no restart,
   no reorthogonalization; it stops when the explicit relative residual ||Ax-lambda x||/||lambda x|| is below tol,
   and ncv is the most Lanczos steps it may take.

   Level: intermediate

.seealso: EPSCUDALanczosGetVariant(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosSetVariant(EPS eps, EPSCUDALanczosVariant value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(eps, value, 2);
  PetscCall(CheckEnumValue(eps, (int)value, EPSCUDALanczosVariants, "variant"));
  PetscTryMethod(eps, "EPSCUDALanczosSetVariant_C", (EPS, EPSCUDALanczosVariant), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetVariant - Gets the Lanczos variant.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetVariant()
@*/
PetscErrorCode EPSCUDALanczosGetVariant(EPS eps, EPSCUDALanczosVariant *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetVariant_C", (EPS, EPSCUDALanczosVariant *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetReorthog - Sets the reorthogonalization of the Lanczos vectors.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the new value

   Options Database Key:
.  -eps_cudalanczos_reorthog <full,partial,none> - Sets the reorthogonalization of the Lanczos vectors

   Notes:
   full orthogonalizes each new vector against the whole basis by classical Gram-Schmidt, repeated
   once when the norm drops by more than 1/sqrt(2) (the DGKS criterion). partial orthogonalizes each new
   vector against the vectors kept at the last restart and its two predecessors only, estimates the loss of
   orthogonality against the rest by Simon's omega recurrence, and makes a step full where the estimate
   reaches eps^(3/4): the basis stays semi-orthogonal, which keeps the Ritz values as accurate as full's, and
   the returned vectors are orthonormalized once at the end. Where a wanted eigenvalue is too small against
   ||A|| for a semi-orthogonal basis at the requested tol, the solve gives way to full (-eps_view says so).
   none keeps the three-term recurrence only; orthogonality is then lost as eigenvalues converge, and ghost
   copies may appear. Block steps (EPSCUDALanczosSetBlockSize()) take full or partial: partial then passes
   over the last two blocks and the kept vectors, and over the rest where Simon's recurrence in blocks asks.

   Left to the solver, the choice is partial for single-vector steps with STSHIFT on a sparse (non-dense)
   matrix, and full otherwise: block steps take partial only when asked (it took 0.85-1.05 of full's time
   on sparse matrices); other STs' products are solves and their steps few; a dense matrix's product reads
   n^2 entries, against which a full pass over the basis costs little; an interval's (EPS_ALL) filtered
   step costs the filter's degree in products, and full needs fewer of them. On a GPU partial
   took 0.81-0.96 of full's time on sparse Laplacians and a power-law graph, with the same products
   (docs/tuning.md).
   EPSCUDALanczosGetReorthog() returns the choice in effect (after EPSSetUp()). The thesis variant
   (EPSCUDALanczosSetVariant()) never reorthogonalizes.

   Level: intermediate

.seealso: EPSCUDALanczosGetReorthog(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosSetReorthog(EPS eps, EPSCUDALanczosReorthog value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(eps, value, 2);
  PetscCall(CheckEnumValue(eps, (int)value, EPSCUDALanczosReorthogs, "reorthogonalization"));
  PetscTryMethod(eps, "EPSCUDALanczosSetReorthog_C", (EPS, EPSCUDALanczosReorthog), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetReorthog - Gets the reorthogonalization of the Lanczos vectors.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetReorthog()
@*/
PetscErrorCode EPSCUDALanczosGetReorthog(EPS eps, EPSCUDALanczosReorthog *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetReorthog_C", (EPS, EPSCUDALanczosReorthog *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetBackend - Sets where the Lanczos vectors live.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the new value

   Options Database Key:
.  -eps_cudalanczos_backend <auto,host,cuda> - Sets where the Lanczos vectors live

   Notes:
   auto (default) uses the GPU when one is present and CUDA support was compiled in, else the host. host is the
   reference backend: any Mat type and any ST, through STApply. cuda is an error when no GPU is usable.

   Level: intermediate

.seealso: EPSCUDALanczosGetBackend(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosSetBackend(EPS eps, EPSCUDALanczosBackend value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(eps, value, 2);
  PetscCall(CheckEnumValue(eps, (int)value, EPSCUDALanczosBackends, "backend"));
  PetscTryMethod(eps, "EPSCUDALanczosSetBackend_C", (EPS, EPSCUDALanczosBackend), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetBackend - Gets where the Lanczos vectors live.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetBackend()
@*/
PetscErrorCode EPSCUDALanczosGetBackend(EPS eps, EPSCUDALanczosBackend *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetBackend_C", (EPS, EPSCUDALanczosBackend *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetKernels - Sets the GPU kernels.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the new value

   Options Database Key:
.  -eps_cudalanczos_kernels <default,custom,vendor> - Sets the GPU kernels

   Notes:
   custom selects the thesis kernels (tiled shared-memory dense gemv, CSR SpMV, warp-shuffle reductions),
   vendor cuBLAS and cuSPARSE; default picks per matrix type whichever measured faster (docs/tuning.md).

   Level: intermediate

.seealso: EPSCUDALanczosGetKernels(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosSetKernels(EPS eps, EPSCUDALanczosKernels value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(eps, value, 2);
  PetscCall(CheckEnumValue(eps, (int)value, EPSCUDALanczosKernelsTypes, "kernels"));
  PetscTryMethod(eps, "EPSCUDALanczosSetKernels_C", (EPS, EPSCUDALanczosKernels), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetKernels - Gets the GPU kernels.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetKernels()
@*/
PetscErrorCode EPSCUDALanczosGetKernels(EPS eps, EPSCUDALanczosKernels *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetKernels_C", (EPS, EPSCUDALanczosKernels *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetDevice - Sets the CUDA device.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the new value

   Options Database Key:
.  -eps_cudalanczos_device <n> - Sets the CUDA device

   Notes:
   A negative value (default) picks the node-local MPI rank modulo the number of devices.

   Level: intermediate

.seealso: EPSCUDALanczosGetDevice(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosSetDevice(EPS eps, PetscInt value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveInt(eps, value, 2);
  PetscTryMethod(eps, "EPSCUDALanczosSetDevice_C", (EPS, PetscInt), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetDevice - Gets the CUDA device.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetDevice()
@*/
PetscErrorCode EPSCUDALanczosGetDevice(EPS eps, PetscInt *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetDevice_C", (EPS, PetscInt *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetCheckSymmetry - Sets whether to probe the operator for symmetry before solving.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the new value

   Options Database Key:
.  -eps_cudalanczos_check_symmetry <bool> - Sets whether to probe the operator for symmetry before solving

   Notes:
   The probe compares y'Ax with x'Ay for random x, y (two products); a difference above rounding level
   relative to ||A|| is an error, since Lanczos on a nonsymmetric matrix returns meaningless values.
   On one process with the matrix on the device, the two products are taken there. -eps_view says that the
   probe passed and where its products ran. Off by default.

   Level: intermediate

.seealso: EPSCUDALanczosGetCheckSymmetry(), EPSCUDALANCZOS
@*/
PetscErrorCode EPSCUDALanczosSetCheckSymmetry(EPS eps, PetscBool value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveBool(eps, value, 2);
  PetscTryMethod(eps, "EPSCUDALanczosSetCheckSymmetry_C", (EPS, PetscBool), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetCheckSymmetry - Gets whether to probe the operator for symmetry before solving.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetCheckSymmetry()
@*/
PetscErrorCode EPSCUDALanczosGetCheckSymmetry(EPS eps, PetscBool *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetCheckSymmetry_C", (EPS, PetscBool *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetVerify - Sets whether, once nev eigenpairs have converged, the solver searches the
   complement of the converged vectors for missed copies of multiple eigenvalues.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - PETSC_TRUE (default) to search

   Options Database Key:
.  -eps_cudalanczos_verify <bool> - Sets the verification

   Notes:
   A Krylov space grown from one start vector holds one direction of each eigenspace, so plain
   (thick-restart) Lanczos sees a multiple eigenvalue once, unless rounding errors bring the other copies in.
   The verification continues from a fresh random vector orthogonal to the converged ones until the best
   remaining Ritz value has converged and is not wanted. For the largest or smallest eigenvalues (or the
   largest in magnitude) with STSHIFT, the first cycle of that search may end it early with a
   probabilistic certificate (Kuczynski-Wozniakowski bound, chance of a missed copy below 1e-8): then it
   costs about one short cycle; otherwise it costs the convergence of one more eigenvalue. With it on,
   a cycle also ends as soon as the last wanted pairs converge. -eps_view reports how many rounds ended
   on the certificate. Turn it off when the spectrum is known to be simple and speed matters.

   Level: intermediate

.seealso: EPSCUDALanczosGetVerify()
@*/
PetscErrorCode EPSCUDALanczosSetVerify(EPS eps, PetscBool value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveBool(eps, value, 2);
  PetscTryMethod(eps, "EPSCUDALanczosSetVerify_C", (EPS, PetscBool), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetVerify - Gets whether the multiplicity verification is on.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the current value

   Level: intermediate

.seealso: EPSCUDALanczosSetVerify()
@*/
PetscErrorCode EPSCUDALanczosGetVerify(EPS eps, PetscBool *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetVerify_C", (EPS, PetscBool *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetNcvMax - Sets the largest basis the thick-restart variant may grow to when
   convergence is slow.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the most basis columns, or PETSC_DEFAULT (or PETSC_DECIDE)

   Options Database Key:
.  -eps_cudalanczos_ncv_max <int> - Sets the limit

   Notes:
   The basis starts at ncv columns (EPSSetDimensions()). After two cycles in a row that converged no
   eigenpair and whose rate puts the tolerance more than ten such cycles away, it grows by half, up to
   this limit. A longer cycle keeps more of the Krylov space across each restart: on clustered spectra
   (Laplacians, graphs with many similar eigenvalues) it can cut the operator applications severalfold,
   while spectra that converge pair by pair never grow. With PETSC_DEFAULT the limit is
   max(2 ncv, ncv + 32) when ncv was left to the solver and the ST is STSHIFT, and ncv (no growth)
   when the user gave ncv or mpd or another ST; on the GPU it is further kept to half of the device memory free at the solve. A value at or
   below ncv fixes the basis at ncv. The memory for the limit is allocated at the start of the solve.
   -eps_view reports the basis size the last solve ended with.

   Level: advanced

.seealso: EPSCUDALanczosGetNcvMax(), EPSSetDimensions()
@*/
PetscErrorCode EPSCUDALanczosSetNcvMax(EPS eps, PetscInt value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveInt(eps, value, 2);
  PetscTryMethod(eps, "EPSCUDALanczosSetNcvMax_C", (EPS, PetscInt), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetNcvMax - Gets the largest basis the thick-restart variant may grow to.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the value set (PETSC_DEFAULT unless set)

   Level: advanced

.seealso: EPSCUDALanczosSetNcvMax()
@*/
PetscErrorCode EPSCUDALanczosGetNcvMax(EPS eps, PetscInt *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetNcvMax_C", (EPS, PetscInt *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetFilterDegree - Sets the degree of the polynomial filter with which the solver
   computes every eigenvalue in an interval (EPS_ALL with EPSSetInterval()).

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - the degree, or 0 to let the solver choose it

   Options Database Key:
.  -eps_cudalanczos_filter_degree <int> - Sets the degree

   Notes:
   With EPS_ALL the solver runs thick-restart Lanczos on p(A), a Chebyshev series of a delta at a point
   of the interval [a, b] damped by Lanczos' sigma factors, balanced so that p(a) = p(b) and normalized
   to 1 at its peak: the eigenvalues in [a, b] are those with p(lambda) >= p(a). Every application of
   p(A) takes `degree` products with A and no orthogonalization, so a higher degree trades products for
   Lanczos steps. With 0 the degree is the smallest for which p(a) = p(b) <= 0.8, which grows as the
   interval narrows against the spectrum. -eps_view shows the degree, p(a), the spectrum's bounds and the products. The ST must
   be STSHIFT with shift 0; SLEPc's STFILTER is refused (its parameters would be ignored).

   Level: advanced

.seealso: EPSCUDALanczosGetFilterDegree(), EPSSetInterval(), EPSSetWhichEigenpairs()
@*/
PetscErrorCode EPSCUDALanczosSetFilterDegree(EPS eps, PetscInt value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveInt(eps, value, 2);
  PetscCheck(value >= 0 && value <= cudalanczos::kMaxFilterDegree, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
             "The filter degree must lie in [0, %d] (0: chosen by the solver); %" PetscInt_FMT " given", cudalanczos::kMaxFilterDegree, value);
  PetscTryMethod(eps, "EPSCUDALanczosSetFilterDegree_C", (EPS, PetscInt), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetFilterDegree - Gets the degree of the polynomial filter of an interval (0: chosen
   by the solver).

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the degree set

   Level: advanced

.seealso: EPSCUDALanczosSetFilterDegree()
@*/
PetscErrorCode EPSCUDALanczosGetFilterDegree(EPS eps, PetscInt *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetFilterDegree_C", (EPS, PetscInt *), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetRestart - Sets the fraction of the unconverged Ritz vectors that the thick-restart
   variant keeps at each restart.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  keep  - the fraction, in [0.1, 0.9], or PETSC_DEFAULT

   Options Database Key:
.  -eps_cudalanczos_restart <real> - Sets the fraction

   Notes:
   The same parameter as EPSKrylovSchurSetRestart(): at a restart the newly converged Ritz vectors are
   kept with this fraction of the others, at least one, and never fewer than the wanted eigenpairs not
   yet converged. Keeping more converges in fewer operator applications, but each Lanczos step of the
   next cycle orthogonalizes its vector against every kept one. Where an application of the operator
   costs a few passes over a vector (a sparse matrix on a GPU) that orthogonalization is most of a step,
   and keeping fewer is faster; on clusters of nearly equal eigenvalues too few can stall.

   With PETSC_DEFAULT the solver chooses: a third with partial reorthogonalization (see
   EPSCUDALanczosSetReorthog()), rising to a half for the rest of a solve after four restarts without
   progress of the leading unconverged pair; a half otherwise. EPSCUDALanczosGetRestart() gives the
   fraction in effect after EPSSetUp(); -eps_view shows it, and says when a solve raised it. A fraction
   set here is kept as given.

   Level: advanced

.seealso: EPSCUDALanczosGetRestart(), EPSKrylovSchurSetRestart()
@*/
PetscErrorCode EPSCUDALanczosSetRestart(EPS eps, PetscReal keep)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveReal(eps, keep, 2);
  PetscTryMethod(eps, "EPSCUDALanczosSetRestart_C", (EPS, PetscReal), (eps, keep));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetRestart - Gets the fraction of the unconverged Ritz vectors kept at each restart.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  keep - the fraction in effect: the one set, or, after EPSSetUp(), the solver's choice (0.5 before)

   Level: advanced

.seealso: EPSCUDALanczosSetRestart()
@*/
PetscErrorCode EPSCUDALanczosGetRestart(EPS eps, PetscReal *keep)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(keep, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetRestart_C", (EPS, PetscReal *), (eps, keep));
  PetscFunctionReturn(0);
}

/*@C
   EPSCUDALanczosGetBackendInUse - Gets the name of the backend the last EPSSolve() ran on ("host", "cuda"),
   or "none" before the first solve.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  name - the backend's name (owned by the EPS; do not free)

   Level: intermediate

.seealso: EPSCUDALanczosSetBackend()
@*/
PetscErrorCode EPSCUDALanczosGetBackendInUse(EPS eps, const char **name)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(name, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetBackendInUse_C", (EPS, const char **), (eps, name));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosSetBlockSize - Sets how many vectors each Lanczos step of the thick-restart variant
   applies the operator to at once.

   Logically Collective on eps

   Input Parameters:
+  eps   - the eigenproblem solver context
-  value - vectors per step, at least 1, or PETSC_DEFAULT (the default) to let the solver choose

   Options Database Key:
.  -eps_cudalanczos_block_size <int> - Sets the block size

   Notes:
   With a block size b > 1 each step multiplies the operator by b orthonormal vectors in one pass
   (a matrix-matrix product on the GPU) and orthogonalizes the b results against the basis together
   (block classical Gram-Schmidt, twice, and SVQB). A pass over a large matrix or basis costs about as
   much for b vectors as for one, so when several eigenpairs are wanted this takes fewer passes than
   single-vector steps, and a block Krylov space holds up to b copies of a multiple eigenvalue.
   The basis then needs ncv >= nev + b; when ncv is left to the solver it is at least nev + 16b: a
   restarted block space is only as deep as its blocks per cycle, and with few of them it needs several
   times the operator applications of single-vector steps.
   Block steps need the thick-restart variant and full or partial reorthogonalization; the basis does not grow
   (EPSCUDALanczosSetNcvMax()). A problem too small for ncv + b columns is solved with single-vector
   steps, which -eps_view reports.

   Left to the solver, on GPUs with STSHIFT, ncv left to the solver and the reorthogonalization left to it or
   full, the block size is 8 from nev = 500 for a standard problem in real arithmetic (not an interval or the
   threshold test), on any number of ranks: there each step passes over hundreds of locked vectors, which a block
   reads once for its 8 vectors, and 1000 pairs of a sparse matrix of 10^6 rows took less than a third of the
   single-vector steps' time on one GPU.
   For a dense (MATSEQDENSE or MATSEQDENSECUDA) matrix of at least 8192 rows on one GPU it is 4 from nev = 10 and 2 below: block 4 solved
   dense matrices of 12288 and 32768 rows at nev = 10 and 50 1.5-1.8 times faster than single-vector steps, and
   block 2 a dense matrix of 12288 rows at nev = 1 nearly 3 times faster (its block space makes the multiplicity
   verification unnecessary). For a sparse (MATSEQAIJ or MATSEQAIJCUSPARSE) matrix of at least 100000 rows on one
   GPU, real, standard, at nev <= 10 and with the reorthogonalization left to the solver or partial, it is 2 with
   partial reorthogonalization: a new EPS on sparse matrices of 10^6 rows took 0.54-0.86 of the single-vector time
   on four of five matrices, and up to 1.8 times it on a 3-D Laplacian, whose clustered largest values have
   copies (EPSCUDALanczosSetBlockSize(eps, 1) there). 1 otherwise (docs/tuning.md).
   -eps_view says when the solver chose it. EPSCUDALanczosGetBlockSize() returns the block size in effect (after
   EPSSetUp()).

   For an interval (EPS_ALL) the block size is that of the filtered solves: p(A), the interval's polynomial
   filter, is applied to b vectors at once, and on a GPU with a sparse matrix of short rows each of its
   products reads the matrix once for all b. Left to the solver it is 2 there: on a sparse matrix of 10^6
   rows that took 0.77-0.82 of the single-vector time, with fewer applications of the filter (the block
   certifies the multiplicity verification); blocks of 4 and 8 took longer. The threshold test
   (EPSSetThreshold()) takes single-vector steps and refuses a block size above 1.

   Level: intermediate

.seealso: EPSCUDALanczosGetBlockSize(), EPSSetDimensions()
@*/
PetscErrorCode EPSCUDALanczosSetBlockSize(EPS eps, PetscInt value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscValidLogicalCollectiveInt(eps, value, 2);
  if (value == PETSC_DECIDE) value = PETSC_DEFAULT;
  PetscCheck(value >= 1 || value == PETSC_DEFAULT, PetscObjectComm((PetscObject)eps), PETSC_ERR_ARG_OUTOFRANGE,
             "The block size must be at least 1, or PETSC_DEFAULT for the solver's choice (got %" PetscInt_FMT ")", value);
  PetscTryMethod(eps, "EPSCUDALanczosSetBlockSize_C", (EPS, PetscInt), (eps, value));
  PetscFunctionReturn(0);
}

/*@
   EPSCUDALanczosGetBlockSize - Gets how many vectors each Lanczos step applies the operator to.

   Not Collective

   Input Parameter:
.  eps - the eigenproblem solver context

   Output Parameter:
.  value - the block size in effect: the one set, or after EPSSetUp() the solver's choice (1 before)

   Level: intermediate

.seealso: EPSCUDALanczosSetBlockSize()
@*/
PetscErrorCode EPSCUDALanczosGetBlockSize(EPS eps, PetscInt *value)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(eps, EPS_CLASSID, 1);
  PetscAssertPointer(value, 2);
  PetscUseMethod(eps, "EPSCUDALanczosGetBlockSize_C", (EPS, PetscInt *), (eps, value));
  PetscFunctionReturn(0);
}
