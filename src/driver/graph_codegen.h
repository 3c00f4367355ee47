// Graph codegen: the lowered @main (a dataflow of kernel calls) becomes graph JSON in TVM's
// schema with a storage plan, plus the params the graph reads.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "anvil/ir/ir.h"
#include "driver/lower_graph.h"

namespace anvil::driver {

struct GraphCodegenResult {
  std::string graph_json;
  // Constants of the graph, named "p0", "p1", ... in order of first use, plus the bound
  // params that stayed params.
  std::vector<std::pair<std::string, Tensor>> params;
};

// main is a typed Function with static shapes whose body is built from: its params (graph
// inputs, in order, named by their var names), Constants (each becomes a param "p<N>"),
// call_tir(@kernel, (args), out=T) and call_dps_packed("symbol", (args), out=T) calls (a
// kernel node named after the kernel/symbol; a tuple out type gives one output per field),
// Tuple and TupleGetItem. The result (a tensor or a tuple of tensors) gives the graph heads.
// Storage: every node output gets a storage id; ids are reused once every reader of a value
// has run (never for graph inputs, params or heads), so the sizes the executor allocates are
// the peak, not the sum. An output that is also an input, or a param that is also an output,
// is handled with a copy kernel "__copy".
// Kernel nodes named in kernel_info also carry its "fused_ops" and "flops" attrs (strings, as
// TVM's node attrs are), which the executor's profile reports.
GraphCodegenResult codegen_graph(const ir::Function& main,
                                 const std::map<std::string, KernelInfo>& kernel_info = {});

}  // namespace anvil::driver
