// An independent reading of the memory a graph JSON's storage plan spends, for the tests of
// the planner, graph codegen, the executor's report and the command line: it reads nothing
// but the JSON and knows nothing of how the plan was made.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace anvil::testing {

struct GraphMemoryFigures {
  // Storage slots holding kernel outputs that are not graph outputs (activations), each as
  // large as its largest entry: what an executor reading only "storage_id" allocates for them.
  int64_t slot_activation_bytes = 0;
  // With the "arena_offset" attr: the highest byte an activation reaches in the arena (-1
  // without the attr).
  int64_t arena_bytes = -1;
  // The most bytes of activations alive at one node: an activation lives from its node
  // through its last reader (just its node when unread).
  int64_t largest_live_set = 0;
  // Storages of graph inputs, params and outputs.
  int64_t fixed_bytes = 0;
  // Empty when the plan is safe: no two activations alive at one node share a slot or arena
  // bytes, no slot holds an activation beside an input, param or output, and the arena holds
  // every activation, 64-byte aligned, and nothing else. Else what is wrong.
  std::string problem;
};

// The byte size of a dltype such as "float32", "int8" or "bool".
inline int64_t dltype_bytes(const std::string& dltype) {
  if (dltype == "bool") return 1;
  size_t digits = dltype.find_first_of("0123456789");
  return digits == std::string::npos ? 0 : std::stoll(dltype.substr(digits)) / 8;
}

inline GraphMemoryFigures graph_memory_figures(const nlohmann::json& graph) {
  const nlohmann::json& nodes = graph["nodes"];
  std::vector<int> row_ptr = graph["node_row_ptr"].get<std::vector<int>>();
  std::vector<int> sid = graph["attrs"]["storage_id"][1].get<std::vector<int>>();
  const nlohmann::json& shapes = graph["attrs"]["shape"][1];
  const nlohmann::json& dltypes = graph["attrs"]["dltype"][1];
  const int num_entries = row_ptr.back();
  auto entry_of = [&](const nlohmann::json& ref) {
    return row_ptr[ref[0].get<int>()] + ref[1].get<int>();
  };

  std::vector<int64_t> bytes(size_t(num_entries), 0);
  std::vector<bool> activation(size_t(num_entries), false);
  std::vector<int> born(size_t(num_entries), -1), dies(size_t(num_entries), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (int e = row_ptr[n]; e < row_ptr[n + 1]; ++e) {
      bytes[size_t(e)] = dltype_bytes(dltypes[size_t(e)].get<std::string>());
      for (int64_t d : shapes[size_t(e)].get<std::vector<int64_t>>()) bytes[size_t(e)] *= d;
      activation[size_t(e)] = nodes[n]["op"] != "null";
      born[size_t(e)] = dies[size_t(e)] = int(n);
    }
    for (const nlohmann::json& input : nodes[n]["inputs"])
      dies[size_t(entry_of(input))] = std::max(dies[size_t(entry_of(input))], int(n));
  }
  for (const nlohmann::json& head : graph["heads"]) activation[size_t(entry_of(head))] = false;

  GraphMemoryFigures figures;
  for (size_t t = 0; t < nodes.size(); ++t) {
    int64_t live = 0;
    for (int e = 0; e < num_entries; ++e)
      if (activation[size_t(e)] && born[size_t(e)] <= int(t) && int(t) <= dies[size_t(e)])
        live += bytes[size_t(e)];
    figures.largest_live_set = std::max(figures.largest_live_set, live);
  }

  std::map<int, std::vector<int>> by_storage;
  for (int e = 0; e < num_entries; ++e) by_storage[sid[size_t(e)]].push_back(e);
  for (const auto& [id, members] : by_storage) {
    int64_t size = 0;
    bool any_fixed = false;
    for (int e : members) {
      size = std::max(size, bytes[size_t(e)]);
      any_fixed |= !activation[size_t(e)];
    }
    (any_fixed ? figures.fixed_bytes : figures.slot_activation_bytes) += size;
    if (any_fixed && members.size() > 1 && figures.problem.empty())
      figures.problem = "storage " + std::to_string(id) + " holds an input, param or output " +
                        "beside another entry";
    for (size_t i = 0; i < members.size(); ++i)
      for (size_t j = i + 1; j < members.size(); ++j) {
        int a = members[i], b = members[j];
        bool disjoint = dies[size_t(a)] < born[size_t(b)] || dies[size_t(b)] < born[size_t(a)];
        if (!disjoint && figures.problem.empty())
          figures.problem = "entries " + std::to_string(a) + " and " + std::to_string(b) +
                            " share storage " + std::to_string(id) + " while both are alive";
      }
  }
  if (!graph["attrs"].contains("arena_offset")) return figures;
  std::vector<int64_t> offset = graph["attrs"]["arena_offset"][1].get<std::vector<int64_t>>();
  figures.arena_bytes = 0;
  for (int a = 0; a < num_entries; ++a) {
    int64_t at = offset[size_t(a)];
    if (!activation[size_t(a)]) {
      if (at != -1 && figures.problem.empty())
        figures.problem = "entry " + std::to_string(a) + " is no activation but in the arena";
      continue;
    }
    if ((at < 0 || at % 64 != 0) && figures.problem.empty())
      figures.problem =
          "activation " + std::to_string(a) + " at arena offset " + std::to_string(at);
    figures.arena_bytes = std::max(figures.arena_bytes, at + bytes[size_t(a)]);
    for (int b = a + 1; b < num_entries; ++b) {
      int64_t other = offset[size_t(b)];
      bool together = !(dies[size_t(a)] < born[size_t(b)] || dies[size_t(b)] < born[size_t(a)]);
      if (activation[size_t(b)] && together && at < other + bytes[size_t(b)] &&
          other < at + bytes[size_t(a)] && figures.problem.empty())
        figures.problem = "activations " + std::to_string(a) + " and " + std::to_string(b) +
                          " overlap in the arena while both are alive";
    }
  }
  return figures;
}

}  // namespace anvil::testing
