// Building PrimFuncs by hand in the tensor-IR tests.
#pragma once

#include <utility>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir::testing {

// A PrimFunc whose parameters are handles bound to the given buffers, in order.
inline PrimFunc func_of(std::vector<Buffer> params, Stmt body) {
  std::vector<Var> vars;
  std::vector<std::pair<Var, Buffer>> map;
  for (const Buffer& b : params) {
    vars.push_back(VarNode::make(b->name, DataType::handle()));
    map.emplace_back(vars.back(), b);
  }
  return PrimFuncNode::make(vars, map, body);
}

}  // namespace anvil::tir::testing
