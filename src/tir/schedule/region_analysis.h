// Dataflow facts the block-moving primitives (compute_inline, compute_at,
// cache_read, ...) need: where a block sits, which blocks of a scope produce
// or consume a buffer, and which part of a buffer a block touches while some
// loops run freely, expressed in the loop variables that stay fixed.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "anvil/tir/arith.h"
#include "anvil/tir/tir.h"

namespace anvil::tir::dataflow {

// A block in a function: its realize, the loops between its scope block and
// it (outermost first) and that scope block (the nearest enclosing block).
struct BlockSite {
  BlockRealize realize;
  std::vector<For> loops;
  Block scope;
  // The statement of the scope block's body sequence that contains the block.
  Stmt top_level;
};

// A loop in a function: the loop, the loops around it (outermost first, the
// loop itself excluded) and the nearest enclosing block.
struct LoopSite {
  For loop;
  std::vector<For> outer_loops;
  Block scope;
};

// The block named name, or an Error "<primitive>: no block named 'name'".
BlockSite find_block(const PrimFunc& func, const std::string& name, const char* primitive);
// The loop whose variable is var, or an Error naming it.
LoopSite find_loop(const PrimFunc& func, const Var& var, const char* primitive);

// The blocks directly inside scope (not inside a nested block), in program order.
std::vector<BlockSite> child_blocks(const Block& scope);
// The statements of a block body at its top level (a one-element list unless a SeqStmt).
std::vector<Stmt> top_level_statements(const Stmt& body);

// True when stmt (or anything below it) is the realize of block.
bool contains_block(const Stmt& stmt, const BlockRealize& realize);

// True when the block's declared regions mention buffer.
bool block_writes(const Block& block, const Buffer& buffer);
bool block_reads(const Block& block, const Buffer& buffer);

// True when buffer is a parameter of func (an input or output tensor).
bool is_param_buffer(const PrimFunc& func, const Buffer& buffer);
// True when buffer is loaded, stored or named in a region anywhere below stmt.
bool uses_buffer(const Stmt& stmt, const Buffer& buffer);

// Rewrites root replacing statements by identity; a null replacement removes
// the statement, and a loop, sequence or branch left empty goes with it.
Stmt replace_stmts(const Stmt& root, const std::unordered_map<const StmtNode*, Stmt>& replacements);

// The body of func with the scope block replaced by new_scope (same name).
PrimFunc replace_scope(const PrimFunc& func, const Block& old_scope, const Block& new_scope);
// block with a new body (other fields kept).
Block with_body(const Block& block, Stmt body);
// func with the scope block's body replaced by the statements given (in order) and buffer
// allocated in it: a primitive that adds a block and its buffer (cache_read, rfactor).
PrimFunc replace_scope_body(const PrimFunc& func, const Block& scope, std::vector<Stmt> body,
                            const Buffer& buffer);
// func with buffer removed from the alloc_buffers of the block allocating it
// when nothing in that block uses it any more.
PrimFunc drop_unused_allocation(const PrimFunc& func, const Buffer& buffer);

// The reads and writes of block recomputed from its body and init: one region
// per buffer in order of first access, the hull of every access to it, with
// loops inside the block relaxed. Buffers the block allocates are left out.
std::vector<BufferRegion> detect_reads(const Block& block);
std::vector<BufferRegion> detect_writes(const Block& block);

// Inclusive bounds of an integer expression; a null side is unbounded.
struct Interval {
  PrimExpr min, max;
  bool bounded() const { return min && max; }
};

// Ranges of the variables allowed to vary, by identity.
using RelaxMap = std::unordered_map<const VarNode*, Range>;

// The values e takes while each var of relaxed ranges over its Range; other
// variables stay as they are (the bounds are expressions of them).
Interval eval_interval(const PrimExpr& e, const RelaxMap& relaxed);

// Index arithmetic with loop ranges known, for clean bounds.
class IndexSimplifier {
 public:
  IndexSimplifier() = default;
  // var ranges over range (a loop).
  void bind(const Var& var, const Range& range);
  PrimExpr simplify(const PrimExpr& e);
  bool can_prove(const PrimExpr& cond);
  // b - a when it simplifies to a constant.
  std::optional<int64_t> const_difference(const PrimExpr& a, const PrimExpr& b);
  // The largest value of e under the bindings, if finite.
  std::optional<int64_t> const_upper_bound(const PrimExpr& e);

 private:
  Analyzer analyzer_;
};

// The hull of two regions of one buffer, dimension by dimension; a dimension
// whose hull is not expressible becomes the whole dimension of buffer.
std::vector<Range> region_hull(const Buffer& buffer, const std::vector<Range>& a,
                               const std::vector<Range>& b, IndexSimplifier& simplifier);

// The region of access (in terms of realize's iteration variables) with the
// iteration variables replaced by their values and the loop variables of
// relaxed ranging freely; a dimension that cannot be bounded is the whole
// dimension of the buffer.
std::vector<Range> relax_region(const BufferRegion& access, const BlockRealize& realize,
                                const RelaxMap& relaxed, IndexSimplifier& simplifier);

// A name not used by any block or buffer of func: base, else base_1, base_2, ...
std::string unique_name(const PrimFunc& func, const std::string& base);

// Names of every loop variable and block iteration variable of func.
std::unordered_set<std::string> variable_names(const PrimFunc& func);
// base, else base_1, base_2, ... whichever is not in taken; the result is added to taken.
std::string fresh_name(std::unordered_set<std::string>& taken, const std::string& base);

// Position of every block realize of scope in program order (pre-order), by node.
std::unordered_map<const StmtNode*, int> block_order(const Block& scope);

}  // namespace anvil::tir::dataflow
