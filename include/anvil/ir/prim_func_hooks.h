// How the graph IR's printer, parser and structural equality handle PrimFuncs.
// The graph IR cannot see the tensor IR (data flows one way), so the tensor-IR
// layer installs these hooks once at start-up; until then a module holding a
// PrimFunc fails to print or parse with a message that says so.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "anvil/ir/ir.h"

namespace anvil::ir {

struct PrimFuncHooks {
  // The text of a PrimFunc; the module printer writes "prim_func @name " before it.
  std::function<std::string(const BaseFuncNode& func)> print;
  // Parses a PrimFunc from text starting at byte offset pos (just past "prim_func @name") and
  // sets pos past its end; errors are anvil::Error "<source_name>:<line>:<col>: ...".
  std::function<BaseFunc(std::string_view text, size_t& pos, const std::string& source_name)> parse;
  // Structural equality of two PrimFuncs (identity when unset).
  std::function<bool(const BaseFuncNode& a, const BaseFuncNode& b)> equal;
  // A hash consistent with equal (a constant when unset).
  std::function<size_t(const BaseFuncNode& func)> hash;
};

// The installed hooks; members are empty until the tensor-IR layer sets them.
const PrimFuncHooks& prim_func_hooks();

// Installs the hooks (replacing earlier ones); not thread-safe, call at start-up.
void set_prim_func_hooks(PrimFuncHooks hooks);

}  // namespace anvil::ir
