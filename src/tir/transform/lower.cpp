// The lowering pipeline: the one place where the order of the tensor-IR
// passes is written down (transform.h explains each pass).
#include "anvil/tir/transform.h"
#include "anvil/tir/verifier.h"

namespace anvil::tir::transform {

PrimFunc lower(const PrimFunc& func, const LowerOptions& options) {
  using Pass = PrimFunc (*)(const PrimFunc&);
  struct Step {
    const char* name;
    Pass pass;
  };
  // Buffers are compacted while blocks still say what each loop means; the
  // simplifier runs once to clean up flattened indices before vectorizing
  // and once after unrolling has substituted constants.
  static const Step kSteps[] = {
      {"legalize_minifloats", legalize_minifloats},
      {"compact_buffer_allocation", compact_buffer_allocation},
      {"convert_blocks_to_loops", convert_blocks_to_loops},
      {"partition_loops", partition_loops},
      {"flatten_buffers", flatten_buffers},
      {"simplify", simplify},
      {"vectorize_loops", vectorize_loops},
      {"unroll_loops", unroll_loops},
      {"simplify", simplify},
      {"storage_rewrite", storage_rewrite},
      {"lower_intrinsics", lower_intrinsics},
      {"make_packed_api", make_packed_api},
  };
  PrimFunc current = func;
  for (const Step& step : kSteps) {
    if (!options.packed_api && step.pass == make_packed_api) continue;
    current = step.pass(current);
    if (options.dump) options.dump(step.name, current);
  }
  verify(current, IrForm::Lowered);
  return current;
}

}  // namespace anvil::tir::transform
