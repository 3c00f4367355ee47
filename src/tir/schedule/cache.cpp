// cache_read and cache_write: stage a buffer through a copy in another
// storage scope. With compute_at the copy shrinks to a packed panel (reads)
// or a register tile written back after the computation (writes).
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/region_analysis.h"

namespace anvil::tir {

using namespace dataflow;

namespace {

// Swaps one buffer for another everywhere it is referenced.
class BufferSwapper : public Mutator {
 public:
  BufferSwapper(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}
  Buffer mutate_buffer(const Buffer& buffer) override {
    return buffer.get() == from_.get() ? to_ : buffer;
  }

 private:
  Buffer from_, to_;
};

// A block named name copying all of source into target, under one loop per dimension.
Stmt copy_nest(const PrimFunc& func, const std::string& name, const Buffer& source,
               const Buffer& target) {
  std::unordered_set<std::string> names = variable_names(func);
  std::vector<IterVar> iter_vars;
  std::vector<Var> loop_vars;
  std::vector<PrimExpr> indices, values;
  std::vector<Range> point;
  for (int d = 0; d < source->ndim(); ++d) {
    IterVar iv{VarNode::make(fresh_name(names, "v" + std::to_string(d))),
               Range{make_int(0), source->shape[d]}, IterKind::Spatial};
    loop_vars.push_back(VarNode::make(fresh_name(names, "ax" + std::to_string(d))));
    iter_vars.push_back(iv);
    indices.push_back(iv.var);
    values.push_back(loop_vars.back());
    point.push_back({iv.var, make_int(1)});
  }
  Block block = BlockNode::make(iter_vars, {{source, point}}, {{target, point}}, name,
                                store(target, load(source, indices), indices));
  Stmt nest = BlockRealizeNode::make(std::move(values), const_true(), block);
  for (int d = source->ndim(); d-- > 0;)
    nest = for_loop(loop_vars[d], make_int(0), source->shape[d], nest);
  return nest;
}

int top_level_index(const std::vector<Stmt>& statements, const Stmt& top) {
  for (size_t i = 0; i < statements.size(); ++i)
    if (statements[i].get() == top.get()) return int(i);
  ANVIL_ICHECK(false, "a block's top-level statement is missing from its scope");
  return -1;
}

// func with block (at site) replaced by new_block, nest inserted into the
// scope's top-level sequence before position `insert_at`, and buffer
// allocated in the scope.
PrimFunc rebuild_scope(const PrimFunc& func, const BlockSite& site, const Block& new_block,
                       const Stmt& nest, int insert_at, const Buffer& buffer) {
  Stmt new_realize =
      BlockRealizeNode::make(site.realize->iter_values, site.realize->predicate, new_block);
  std::vector<Stmt> statements;
  std::vector<Stmt> old = top_level_statements(site.scope->body);
  for (size_t i = 0; i <= old.size(); ++i) {
    if (int(i) == insert_at) statements.push_back(nest);
    if (i < old.size())
      statements.push_back(replace_stmts(old[i], {{site.realize.get(), new_realize}}));
  }
  return replace_scope_body(func, site.scope, std::move(statements), buffer);
}

}  // namespace

BlockRV Schedule::cache_read(const BlockRV& block_rv, int read_index, const std::string& scope) {
  constexpr const char* kPrimitive = "cache_read";
  BlockSite site = find_block(func_, block_rv.name, kPrimitive);
  const Block& block = site.realize->block;
  if (read_index < 0 || read_index >= int(block->reads.size()))
    throw_error(kPrimitive, ": block '", block->name, "' has no read ", read_index, " (it reads ",
                block->reads.size(), " buffers)");
  const Buffer& buffer = block->reads[read_index].buffer;
  if (block_writes(block, buffer))
    throw_error(kPrimitive, ": block '", block->name, "' also writes buffer '", buffer->name, "'");

  std::vector<Stmt> top = top_level_statements(site.scope->body);
  int insert_at = 0;
  for (const BlockSite& other : child_blocks(site.scope)) {
    if (!block_writes(other.realize->block, buffer)) continue;
    if (other.top_level.get() == site.top_level.get())
      throw_error(kPrimitive, ": producer block '", other.realize->block->name, "' and block '",
                  block->name, "' share a loop nest");
    insert_at = std::max(insert_at, top_level_index(top, other.top_level) + 1);
  }

  std::string name = unique_name(func_, buffer->name + "_" + scope);
  Buffer cached = BufferNode::make(name, buffer->dtype, buffer->shape, scope);
  Stmt rewritten = BufferSwapper(buffer, cached).mutate(Stmt(block));
  func_ = rebuild_scope(func_, site, Block(static_cast<const BlockNode*>(rewritten.get())),
                        copy_nest(func_, name, buffer, cached), insert_at, cached);
  return BlockRV{name};
}

BlockRV Schedule::cache_write(const BlockRV& block_rv, int write_index, const std::string& scope) {
  constexpr const char* kPrimitive = "cache_write";
  BlockSite site = find_block(func_, block_rv.name, kPrimitive);
  const Block& block = site.realize->block;
  if (write_index < 0 || write_index >= int(block->writes.size()))
    throw_error(kPrimitive, ": block '", block->name, "' has no write ", write_index,
                " (it writes ", block->writes.size(), " buffers)");
  const Buffer& buffer = block->writes[write_index].buffer;
  for (const BlockSite& other : child_blocks(site.scope)) {
    if (other.realize.get() == site.realize.get()) continue;
    const Block& b = other.realize->block;
    if (block_writes(b, buffer))
      throw_error(kPrimitive, ": buffer '", buffer->name, "' is also written by block '", b->name,
                  "'");
    if (other.top_level.get() == site.top_level.get() && block_reads(b, buffer))
      throw_error(kPrimitive, ": consumer block '", b->name, "' and block '", block->name,
                  "' share a loop nest");
  }

  std::string name = unique_name(func_, buffer->name + "_" + scope);
  Buffer cached = BufferNode::make(name, buffer->dtype, buffer->shape, scope);
  Stmt rewritten = BufferSwapper(buffer, cached).mutate(Stmt(block));
  std::vector<Stmt> top = top_level_statements(site.scope->body);
  int insert_at = top_level_index(top, site.top_level) + 1;
  func_ = rebuild_scope(func_, site, Block(static_cast<const BlockNode*>(rewritten.get())),
                        copy_nest(func_, name, cached, buffer), insert_at, cached);
  return BlockRV{name};
}

}  // namespace anvil::tir
