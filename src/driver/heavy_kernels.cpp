#include <nlohmann/json.hpp>
#include <sstream>

#include "anvil/driver/build.h"
#include "anvil/ir/op.h"

namespace anvil::driver {
namespace {

bool is_heavy_op(const std::string& name) {
  const ir::OpDef* op = ir::OpTable::global().find(name);
  if (!op) return false;
  if (op->pattern == ir::OpPattern::CommReduce || op->pattern == ir::OpPattern::OutEWiseFusable)
    return true;
  // Normalizations are opaque to fusion but reduce over their groups.
  const std::string suffix = "_norm";
  return name == "nn.lrn" ||
         (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0);
}

}  // namespace

std::vector<std::string> heavy_generic_kernels(const std::string& graph_json) {
  std::vector<std::string> found;
  const nlohmann::json graph = nlohmann::json::parse(graph_json, nullptr, false);
  if (graph.is_discarded() || !graph.contains("nodes")) return found;
  for (const nlohmann::json& node : graph["nodes"]) {
    const nlohmann::json* attrs = node.contains("attrs") ? &node["attrs"] : nullptr;
    if (!attrs || !attrs->contains("fused_ops") || !attrs->contains("schedule")) continue;
    const std::string schedule = (*attrs)["schedule"].get<std::string>();
    if (schedule.rfind("generic", 0) != 0) continue;
    const std::string ops = (*attrs)["fused_ops"].get<std::string>();
    std::stringstream list(ops);
    bool heavy = false;
    for (std::string op; std::getline(list, op, ',');) {
      op.erase(0, op.find_first_not_of(' '));
      heavy |= is_heavy_op(op);
    }
    if (heavy) found.push_back(node["name"].get<std::string>() + " (" + ops + "): " + schedule);
  }
  return found;
}

}  // namespace anvil::driver
