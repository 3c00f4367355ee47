// The VM compiler's vocabulary (vm_compile.cpp): what an expression evaluates to in registers,
// dims as programs over the size variables, instructions, and the runtime function that
// evaluates a fused group on the reference kernels.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/vm_executable.h"

namespace anvil::driver::vm_compile {

using vm::Instruction;
using vm::Opcode;
using vm::RegIndex;

// What an expression evaluates to: a register, or a tuple of values.
struct RegValue {
  RegIndex reg = -1;
  std::vector<RegValue> fields;
  bool is_tuple = false;

  void flatten_into(std::vector<RegIndex>& out) const {
    if (!is_tuple) {
      out.push_back(reg);
      return;
    }
    for (const RegValue& field : fields) field.flatten_into(out);
  }
  std::vector<RegIndex> flat() const {
    std::vector<RegIndex> out;
    flatten_into(out);
    return out;
  }
};

using Env = std::unordered_map<const ir::ExprNode*, RegValue>;

// The checked type of expr, or a variable's annotation.
ir::Type type_of(const ir::Expr& expr);

// The tensor types of a type, tuples flattened.
void flatten_type(const ir::Type& type, std::vector<const ir::TensorTypeNode*>& out);

// The dims of a tensor type, -1 for each that is not a constant.
std::vector<int64_t> dims_of(const ir::TensorTypeNode& type, const std::string& what);

// A dim as a program over the function's size variables (index by name in size_vars); nullopt
// when it holds an unknown dim (?) or a variable that no input binds.
std::optional<vm::DimProgram> dim_program(const ir::Dim& dim,
                                          const std::map<std::string, int64_t>& size_vars);

// Nodes the walk descends into inside a region (If branches excluded) or everywhere.
void children_of(const ir::Expr& expr, bool enter_branches, std::vector<ir::Expr>& out);

// Whether expr is a value (not an op, a global, a runtime function's name or a function).
bool is_data(const ir::Expr& expr);

Instruction instruction(Opcode op, std::vector<RegIndex> args = {}, std::vector<RegIndex> dsts = {},
                        int32_t index = -1);

// A fused group evaluated with the reference kernels: the runtime function of groups that have
// no compute or no static types.
PackedFunc reference_group(const ir::Function& fn, const std::string& name);

}  // namespace anvil::driver::vm_compile
