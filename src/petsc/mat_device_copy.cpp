/*
   The device copy of a Mat belongs to the Mat, as PETSc's own device copies do (the offload mask of
   aijcusparse/densecuda): it is composed on the Mat, in a PetscContainer, so that MatDestroy frees it,
   and it is current while the Mat's object state and nonzero state are those it was made from. Every
   EPS on an unchanged Mat, the same one or a new one, finds it and uploads nothing.

   A Mat holds one copy at a time. A copy made stale by a change (MatShift, MatScale, MatSetValues and
   assembly, MatZeroEntries, a new nonzero pattern: each moves the object state) is dropped by the next
   solve that sees it, before the new upload, or by EPSReset; a Mat that is never solved again keeps
   its stale copy until it is destroyed. The process counts the copies alive and their bytes (-eps_view).

   A CUDA PETSc's device Mat is not copied: the operator composed on it uses the Mat's own device arrays
   in place (cuda_operator.cpp, cuda_distributed.cpp), 0 bytes uploaded, and is not counted as a copy; its
   own scratch (a cuSPARSE buffer, a distributed operator's halo buffers) is counted apart.

   The bound: at most one operator per Mat alive, so the device memory held here is at most the sum over
   the Mats the program keeps of one copy each (the Mat's values and indices, dense ones padded to a
   leading dimension of a multiple of 16), plus the scratch of in-place operators (O(rows) each). A copy
   goes when its Mat is destroyed, or, once the Mat changed, at its next solve or EPSReset. -eps_view
   reports both totals. The same keys make it current:
   PETSc moves the object state whenever those arrays may change.
*/
#include "petsc/eps_cudalanczos_impl.hpp"

#include <petsc/private/petscimpl.h>

#include <atomic>
#include <utility>

namespace {

const char kComposedName[] = "EPSCUDALanczosDeviceCopy";

struct MatDeviceCopy {
  PetscObjectState            state = -1, nonzero_state = -1;
  int                         kernels = -1, device = -1;
  DeviceOperatorPtr           op;
  std::size_t                 bytes = 0;
  bool                        in_place = false; // on the Mat's own device data: bytes are scratch only
};

std::atomic<std::size_t> copies_alive{0}, bytes_alive{0}, in_place_alive{0}, in_place_bytes_alive{0};

void Forget(MatDeviceCopy *copy) noexcept
{
  if (!copy->op) return;
  if (copy->in_place) { // an operator on the Mat's own device data is no copy
    in_place_alive -= 1;
    in_place_bytes_alive -= copy->bytes;
  } else {
    copies_alive -= 1;
    bytes_alive -= copy->bytes;
  }
  copy->op.reset(); // the last owner frees the device memory here
  copy->bytes    = 0;
  copy->in_place = false;
}

// The container's destructor (MatDestroy, or a new container composed in its place).
#if PETSC_VERSION_GE(3, 23, 0)
PetscErrorCode DestroyCopy(void *ctxp)
{
  auto **copy = static_cast<MatDeviceCopy **>(ctxp);
  PetscFunctionBegin;
  if (*copy) Forget(*copy);
  PetscCallCXX(delete *copy);
  *copy = nullptr;
  PetscFunctionReturn(PETSC_SUCCESS);
}
#else
PetscErrorCode DestroyCopy(void *ctx)
{
  auto *copy = static_cast<MatDeviceCopy *>(ctx);
  PetscFunctionBegin;
  if (copy) Forget(copy);
  PetscCallCXX(delete copy);
  PetscFunctionReturn(0);
}
#endif

PetscErrorCode Composed(Mat A, MatDeviceCopy **copy)
{
  PetscContainer container = nullptr;

  PetscFunctionBegin;
  *copy = nullptr;
  PetscCall(PetscObjectQuery((PetscObject)A, kComposedName, (PetscObject *)&container));
  if (container) PetscCall(PetscContainerGetPointer(container, (void **)copy));
  PetscFunctionReturn(0);
}

PetscErrorCode States(Mat A, PetscObjectState *state, PetscObjectState *nonzero_state)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, state));
  PetscCall(MatGetNonzeroState(A, nonzero_state));
  PetscFunctionReturn(0);
}

} // namespace

PetscErrorCode MatCUDALanczosGetDeviceCopy(Mat A, int kernels, int device, DeviceOperatorPtr *op)
{
  MatDeviceCopy   *copy;
  PetscObjectState state, nonzero_state;
  PetscBool        current;

  PetscFunctionBegin;
  PetscCallCXX(op->reset());
  PetscCall(Composed(A, &copy));
  PetscCall(States(A, &state, &nonzero_state));
  current = copy && copy->op && copy->state == state && copy->nonzero_state == nonzero_state && copy->kernels == kernels &&
                    copy->device == device
              ? PETSC_TRUE
              : PETSC_FALSE;
  // Every rank must agree: a distributed upload is collective.
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &current, 1, CUDALANCZOS_MPI_BOOL, MPI_LAND, PetscObjectComm((PetscObject)A)));
  if (current) PetscCallCXX(*op = copy->op);
  else if (copy) Forget(copy); // before the caller uploads anew: one copy per Mat on the device at a time
  PetscFunctionReturn(0);
}

PetscErrorCode MatCUDALanczosSetDeviceCopy(Mat A, int kernels, int device, DeviceOperatorPtr op, std::size_t bytes, PetscBool in_place)
{
  MatDeviceCopy *copy;

  PetscFunctionBegin;
  PetscCall(Composed(A, &copy));
  if (!copy) {
    PetscContainer container;
    PetscCallCXX(copy = new MatDeviceCopy);
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &container));
    PetscCall(PetscContainerSetPointer(container, copy));
#if PETSC_VERSION_GE(3, 23, 0)
    PetscCall(PetscContainerSetCtxDestroy(container, DestroyCopy));
#else
    PetscCall(PetscContainerSetUserDestroy(container, DestroyCopy));
#endif
    PetscCall(PetscObjectCompose((PetscObject)A, kComposedName, (PetscObject)container));
    PetscCall(PetscContainerDestroy(&container)); // the Mat holds the only reference now
  }
  Forget(copy);
  // The states after composing: PetscObjectCompose leaves the Mat's state as it was, but read it here,
  // where the copy starts to stand for the Mat.
  PetscCall(States(A, &copy->state, &copy->nonzero_state));
  copy->kernels = kernels;
  copy->device  = device;
  copy->bytes   = bytes;
  copy->in_place = in_place ? true : false;
  PetscCallCXX(copy->op = std::move(op));
  if (copy->op && in_place) {
    in_place_alive += 1;
    in_place_bytes_alive += bytes;
  } else if (copy->op) {
    copies_alive += 1;
    bytes_alive += bytes;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MatCUDALanczosDropStaleDeviceCopy(Mat A)
{
  MatDeviceCopy   *copy;
  PetscObjectState state, nonzero_state;

  PetscFunctionBegin;
  if (!A) PetscFunctionReturn(0);
  PetscCall(Composed(A, &copy));
  if (!copy || !copy->op) PetscFunctionReturn(0);
  PetscCall(States(A, &state, &nonzero_state));
  if (copy->state != state || copy->nonzero_state != nonzero_state) Forget(copy);
  PetscFunctionReturn(0);
}

void MatCUDALanczosDeviceCopies(std::size_t *count, std::size_t *bytes, std::size_t *in_place_count, std::size_t *in_place_bytes)
{
  *count          = copies_alive.load();
  *bytes          = bytes_alive.load();
  *in_place_count = in_place_alive.load();
  *in_place_bytes = in_place_bytes_alive.load();
}
