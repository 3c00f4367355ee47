// convert_blocks_to_loops: the first lowering step. A block's meaning is made
// explicit in plain statements: its iteration variables are replaced by the
// values bound in its BlockRealize, its predicate becomes an if, its init
// runs when every reduction variable is at the start of its domain (the
// first reduction step of each output point), and its alloc_buffers become
// Allocate statements around it. The root block thereby disappears.
#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {

namespace {

class BlockToLoops : public Mutator {
 public:
  Stmt mutate_BlockRealize(const BlockRealizeNode* node, const Stmt&) override {
    const BlockNode& block = *node->block;
    // Inner blocks first: their iter_values may mention this block's
    // variables, which the substitution below then replaces.
    Stmt body = mutate(block.body);
    Stmt init = mutate(block.init);

    VarMap values;
    for (size_t i = 0; i < block.iter_vars.size(); ++i)
      values[block.iter_vars[i].var.get()] = node->iter_values[i];

    if (init) {
      PrimExpr first_step = const_true();
      for (size_t i = 0; i < block.iter_vars.size(); ++i) {
        const IterVar& iv = block.iter_vars[i];
        if (iv.kind != IterKind::Reduce) continue;
        first_step =
            logical_and(first_step, eq(node->iter_values[i], substitute(iv.dom.min, values)));
      }
      Stmt guarded_init = is_one(first_step) ? init : Stmt(IfThenElseNode::make(first_step, init));
      body = seq_stmt({guarded_init, body});
    }
    body = substitute(body, values);
    for (size_t i = block.alloc_buffers.size(); i-- > 0;)
      body = AllocateNode::make(block.alloc_buffers[i], body);
    if (!is_one(node->predicate)) body = IfThenElseNode::make(node->predicate, body);
    return body;
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt&) override {
    ANVIL_ICHECK(false, "block '", node->name, "' is not under a BlockRealize");
    return nullptr;
  }
};

}  // namespace

PrimFunc convert_blocks_to_loops(const PrimFunc& func) {
  Stmt body = BlockToLoops().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
