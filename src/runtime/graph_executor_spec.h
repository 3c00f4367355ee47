// The parsed and validated form of graph JSON (TVM's graph executor schema), shared by the
// graph executor and the package loader. docs/artifact-format.md describes the schema.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/data_type.h"

namespace anvil::detail {

// Output `index` of node `node`: one node entry.
struct GraphEntryRef {
  int node = 0;
  int index = 0;
};

// Built-in kernels that need no function from the library.
inline constexpr std::string_view kGraphCopyFunc = "__copy";
inline constexpr std::string_view kGraphNopFunc = "__nop";

// One element of "nodes": a graph input ("null") or a kernel call ("tvm_op").
struct GraphNode {
  bool is_input = false;
  std::string name;
  std::string func_name;  // tvm_op only
  std::string fused_ops;  // optional attrs "fused_ops" (the ops in the kernel), "flops",
  int64_t flops = 0;      // "schedule" (the schedule strategy that compiled it) and
  std::string schedule;   // "schedule_refused" (the optional steps its schedule refused)
  std::string schedule_refused;
  std::vector<GraphEntryRef> inputs;
  int num_outputs = 1;
};

// One node entry (node output) with its attrs.
struct GraphEntry {
  std::vector<int64_t> shape;
  DataType dtype;
  int storage_id = 0;
  int64_t nbytes = 0;
  // anvil's optional attr "arena_offset": the entry's byte offset in the activation arena, or
  // -1 when it lives in its storage slot (always, for graphs without the attr).
  int64_t arena_offset = -1;
};

// A graph whose every reference has been checked: node inputs refer to earlier nodes and to
// outputs they have, arg_nodes are distinct inputs, heads and storage ids are in range.
struct GraphSpec {
  std::vector<GraphNode> nodes;
  std::vector<int> arg_nodes;
  std::vector<int> node_row_ptr;  // nodes.size() + 1 entries
  std::vector<GraphEntryRef> heads;
  std::vector<GraphEntry> entries;
  int num_storage = 0;  // 1 + the largest storage id
  // The bytes the arena needs: the highest byte an entry in it reaches (0 without one).
  int64_t arena_bytes = 0;
  // The optional graph attr "largest_live_set_bytes" (["size_t", N]); -1 when absent.
  int64_t largest_live_set = -1;

  int entry_id(GraphEntryRef ref) const { return node_row_ptr[size_t(ref.node)] + ref.index; }
};

// Parses graph JSON. Anything malformed throws Error "<what>: <problem>" naming the field,
// node or entry, e.g. "graph JSON: node 3 ('add'): input 1 refers to node 9, but the graph
// has 5 nodes".
GraphSpec parse_graph_json(std::string_view json, const std::string& what);

// "node 3 ('add')", with the name made printable, for messages.
std::string describe_node(const GraphSpec& spec, int node);

}  // namespace anvil::detail
