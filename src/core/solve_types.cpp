// The names of the enums of solve_types.hpp, as -eps_view and error messages print them.
#include "core/solve_types.hpp"

namespace cudalanczos {

const char *to_string(Variant v)
{
  return v == Variant::Thesis ? "thesis" : "thick-restart";
}

const char *to_string(Reorthogonalization r)
{
  switch (r) {
  case Reorthogonalization::Full: return "full";
  case Reorthogonalization::Partial: return "partial";
  case Reorthogonalization::None: return "none";
  }
  return "?";
}

const char *to_string(Reason r)
{
  switch (r) {
  case Reason::Converged: return "converged";
  case Reason::MaxIterations: return "maximum iterations";
  case Reason::Breakdown: return "breakdown";
  case Reason::UserStop: return "stopped by user";
  case Reason::ResidualCheck: return "true residual check";
  }
  return "?";
}

} // namespace cudalanczos
