// parallel, vectorize, unroll and annotate: primitives that change how a loop
// runs, not its iterations.
#include "anvil/support/error.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/schedule_util.h"

namespace anvil::tir {

namespace {

const char* kind_word(IterKind kind) {
  switch (kind) {
    case IterKind::Spatial:
      return "spatial";
    case IterKind::Reduce:
      return "reduction";
    case IterKind::Opaque:
      return "opaque";
  }
  return "?";
}

// Iterations of the loop may run in any order or at once only when every
// block below uses it for spatial iteration variables: a reduction variable
// would race on its accumulator, an opaque one may carry any dependence.
void check_data_parallel(const For& loop, const char* primitive, const char* how) {
  const Var& var = loop->loop_var;
  for (const BlockRealize& realize : sched::collect_block_realizes(loop->body)) {
    const Block& block = realize->block;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      if (iv.kind == IterKind::Spatial || !sched::uses(realize->iter_values[i], var)) continue;
      throw_error(primitive, ": loop '", var->name, "' is bound to ", kind_word(iv.kind),
                  " variable '", iv.var->name, "' of block '", block->name,
                  "'; only loops over spatial variables may run ", how);
    }
    bool direct_use = sched::uses(block->body, var) || sched::uses(block->init, var);
    for (const auto* regions : {&block->reads, &block->writes})
      for (const BufferRegion& r : *regions)
        for (const Range& range : r.region)
          direct_use = direct_use || sched::uses(range.min, var) || sched::uses(range.extent, var);
    if (direct_use)
      throw_error(primitive, ": block '", block->name, "' uses loop '", var->name,
                  "' directly instead of through an iteration variable, so its dependences "
                  "are unknown");
  }
}

}  // namespace

void Schedule::parallel(const LoopRV& loop_rv) {
  For loop = sched::find_loop(func_, loop_rv.var, "parallel").loop;
  check_data_parallel(loop, "parallel", "in parallel");
  func_ = sched::replace_stmt(func_, loop, sched::with_kind(loop, ForKind::Parallel));
}

void Schedule::vectorize(const LoopRV& loop_rv) {
  For loop = sched::find_loop(func_, loop_rv.var, "vectorize").loop;
  if (!as_const_int(loop->extent))
    throw_error("vectorize: loop '", loop->loop_var->name,
                "' has no constant extent, so it cannot become vector lanes");
  check_data_parallel(loop, "vectorize", "as vector lanes");
  func_ = sched::replace_stmt(func_, loop, sched::with_kind(loop, ForKind::Vectorized));
}

void Schedule::unroll(const LoopRV& loop_rv) {
  For loop = sched::find_loop(func_, loop_rv.var, "unroll").loop;
  func_ = sched::replace_stmt(func_, loop, sched::with_kind(loop, ForKind::Unrolled));
}

void Schedule::annotate(const LoopRV& loop_rv, const std::string& key, AnnotationValue value) {
  For loop = sched::find_loop(func_, loop_rv.var, "annotate").loop;
  if (key.empty())
    throw_error("annotate: empty annotation key on loop '", loop->loop_var->name, "'");
  Annotations annotations = loop->annotations;
  annotations[key] = std::move(value);
  func_ = sched::replace_stmt(func_, loop, sched::with_annotations(loop, std::move(annotations)));
}

}  // namespace anvil::tir
