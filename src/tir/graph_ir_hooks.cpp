// Connects the tensor IR's text and structural equality to the graph IR, which
// cannot depend on this layer: a module holding PrimFuncs prints them as
// "prim_func @name @T.prim_func\ndef ...", parses them back, and compares them.
#include "anvil/ir/prim_func_hooks.h"
#include "anvil/support/error.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/structural_equal.h"
#include "tir/text_parser.h"

namespace anvil::tir {

namespace {

const PrimFuncNode& as_prim_func(const ir::BaseFuncNode& func) {
  ANVIL_ICHECK(func.kind == ir::ExprKind::PrimFunc, "a PrimFunc hook got a ",
               ir::expr_kind_name(func.kind));
  return static_cast<const PrimFuncNode&>(func);
}

PrimFunc ref_of(const ir::BaseFuncNode& func) { return PrimFunc(&as_prim_func(func)); }

}  // namespace

void install_graph_ir_hooks() {
  ir::PrimFuncHooks hooks;
  hooks.print = [](const ir::BaseFuncNode& func) {
    std::string text = print(ref_of(func));
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  };
  hooks.parse = [](std::string_view text, size_t& pos,
                   const std::string& source_name) -> ir::BaseFunc {
    text::TirParser parser(text, pos, source_name);
    PrimFunc func = parser.function();
    pos = parser.position();
    return func;
  };
  hooks.equal = [](const ir::BaseFuncNode& a, const ir::BaseFuncNode& b) {
    return structural_equal(ref_of(a), ref_of(b));
  };
  hooks.hash = [](const ir::BaseFuncNode& func) { return structural_hash(ref_of(func)); };
  ir::set_prim_func_hooks(std::move(hooks));
}

}  // namespace anvil::tir
