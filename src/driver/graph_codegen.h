// Graph codegen: the lowered @main (a dataflow of kernel calls) becomes graph JSON in TVM's
// schema with a storage plan, plus the params the graph reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/runtime/graph_executor.h"
#include "driver/lower_graph.h"

namespace anvil::driver {

struct GraphCodegenResult {
  std::string graph_json;
  // Constants of the graph, named "p0", "p1", ... in order of first use, plus the bound
  // params that stayed params.
  std::vector<std::pair<std::string, Tensor>> params;
  // The bytes of the plan (memory_plan.h): the activations' arena, its largest live set, the
  // params (the constants) and the graph's inputs and outputs.
  GraphMemoryUse memory;
};

// main is a typed Function with static shapes whose body is built from: its params (graph
// inputs, in order, named by their var names), Constants (each becomes a param "p<N>"),
// call_tir(@kernel, (args), out=T) and call_dps_packed("symbol", (args), out=T) calls (a
// kernel node named after the kernel/symbol; a tuple out type gives one output per field),
// Tuple and TupleGetItem. The result (a tensor or a tuple of tensors) gives the graph heads.
// Storage (memory_plan.h): every node output gets a storage id; ids are reused once every
// reader of a value has run (never for graph inputs, params or heads), so the sizes an executor
// allocates are near the peak, not the sum. An output that is also an input, or a param that
// is also an output, is handled with a copy kernel "__copy". Two graph attrs that TVM's
// executor skips ("list_int" and "size_t" are the kinds it can skip) carry anvil's own plan:
// "arena_offset", per node entry the byte offset of an intermediate value in one arena (-1 for
// inputs, params and heads), and "largest_live_set_bytes", for the executor's memory report.
// Kernel nodes named in kernel_info also carry its "fused_ops" and "flops" attrs (strings, as
// TVM's node attrs are), which the executor's profile reports.
GraphCodegenResult codegen_graph(const ir::Function& main,
                                 const std::map<std::string, KernelInfo>& kernel_info = {});

// codegen_graph of the fused @main before lowering: each call of a primitive (fused) function
// is taken for the call_tir of its kernel that lowering would put there (a node named by
// lower::kernel_name_hint), so the nodes, entries and storage plan are those of the lowered
// graph, at the cost of no kernel.
GraphCodegenResult codegen_graph_of_groups(const ir::Function& fused_main);

}  // namespace anvil::driver
