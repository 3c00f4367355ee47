// Shared machinery of the schedule primitives: finding a block or a loop and
// what surrounds it, rebuilding a function with subtrees replaced, collecting
// blocks, fresh names, and simplification of block bindings. Every primitive
// file builds on these, so the API below is kept stable.
//
// Locations are plain snapshots of the (immutable) IR: after a primitive
// rewrites the function, look things up again.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir::sched {

// A block and what surrounds it.
struct BlockLocation {
  BlockRealize realize;  // the BlockRealize of the block
  Block block;           // realize->block
  // The loops between the enclosing block and this one, outermost first.
  std::vector<For> loops;
  // The BlockRealize of the enclosing block; null for the root block itself.
  BlockRealize parent;
};

// A loop and what surrounds it.
struct LoopLocation {
  For loop;
  // The loops above it up to the enclosing block, outermost first.
  std::vector<For> outer_loops;
  // The BlockRealize of the enclosing block.
  BlockRealize parent;
};

// The block called name; throws anvil::Error "<primitive>: no block named 'x'".
BlockLocation find_block(const PrimFunc& func, const std::string& name, std::string_view primitive);
// The loop over loop_var; throws anvil::Error "<primitive>: no loop 'i' in function 'f'"
// (also when loop_var is null).
LoopLocation find_loop(const PrimFunc& func, const Var& loop_var, std::string_view primitive);
// The position of loop_var among the loops above a block (outermost first); throws
// "<primitive>: no loop ..." when there is no such loop, "<primitive>: loop 'k' is not an
// ancestor of block 'b'" when it is elsewhere.
size_t loop_position(const PrimFunc& func, const std::vector<For>& loops, const Var& loop_var,
                     const std::string& block, std::string_view primitive);
// The BlockRealize of the root block (the function's body in scheduled form).
BlockRealize root_realize(const PrimFunc& func);

// Every BlockRealize below s in program order (pre-order). With nested =
// false the blocks inside the body of another block found below s are left
// out (they see the loops above s only through that block's iteration vars).
std::vector<BlockRealize> collect_block_realizes(const Stmt& s, bool nested = true);
// Every For loop below s (s included), in program order.
std::vector<For> collect_loops(const Stmt& s);

// func with every statement in replacements (keyed by node identity) swapped
// for its value. A null value removes the statement: from a sequence, and a
// loop left without a body goes too (the emptied body of a block becomes an
// empty Evaluate). Every key must be found: a stale key is an internal error.
using StmtReplacements = std::unordered_map<const StmtNode*, Stmt>;
PrimFunc replace_stmts(const PrimFunc& func, const StmtReplacements& replacements);
PrimFunc replace_stmt(const PrimFunc& func, const Stmt& target, Stmt replacement);
// The same on a statement (below which every key must be found).
Stmt replace_stmts(const Stmt& root, const StmtReplacements& replacements);

// The Block with a different body/init or iteration variables, every other field kept.
Block with_body(const Block& block, Stmt body);
Block without_init(const Block& block);
// A For with a different body / kind / annotations, every other field kept.
For with_body(const For& loop, Stmt body);
For with_kind(const For& loop, ForKind kind);
For with_annotations(const For& loop, Annotations annotations);

// Fresh names that clash with no name already in a function: block names
// (a unique base is kept as is, else base_1, base_2, ...) and variable names
// (loop variables, block iteration variables, parameters, lets).
class NameSupply {
 public:
  explicit NameSupply(const PrimFunc& func);
  std::string fresh_block_name(const std::string& base);
  std::string fresh_var_name(const std::string& base);

 private:
  static std::string fresh(std::set<std::string>& taken, const std::string& base);
  std::set<std::string> block_names_;
  std::set<std::string> var_names_;
};

// A loop variable's range.
using VarRanges = std::vector<std::pair<Var, Range>>;
VarRanges ranges_of(const std::vector<For>& loops);

// e simplified knowing the ranges of the variables in ranges.
PrimExpr simplify_expr(const PrimExpr& e, const VarRanges& ranges = {});
// A block predicate with the terms provably true under ranges dropped (the
// others keep their written form, which reads like the split that made them).
PrimExpr simplify_predicate(const PrimExpr& predicate, const VarRanges& ranges = {});
// s with the iteration values and predicates of its BlockRealizes simplified,
// knowing the ranges of outer_loops and of every loop inside s.
Stmt simplify_bindings(const Stmt& s, const std::vector<For>& outer_loops);
// True when a == b holds for every value of the variables in ranges (false when unknown).
bool prove_equal(const PrimExpr& a, const PrimExpr& b, const VarRanges& ranges = {});

// The conjuncts of a boolean expression (a && b && c -> a, b, c); true gives none.
std::vector<PrimExpr> split_conjunction(const PrimExpr& condition);
// The conjunction of conditions (true when empty).
PrimExpr conjoin(const std::vector<PrimExpr>& conditions);

// Deep equality of expressions; variables and buffers are compared by
// identity (the expressions of one function share them).
bool same_expr(const PrimExpr& a, const PrimExpr& b);

// True when e (or s) uses the variable.
bool uses(const PrimExpr& e, const Var& var);
bool uses(const Stmt& s, const Var& var);

// Loop variable names for messages: "'i', 'j'".
std::string quoted_names(const std::vector<Var>& vars);

}  // namespace anvil::tir::sched
