// compute_inline and reverse_compute_inline: fold a spatial block into its
// consumers, or a spatial consumer into its single producer, so the
// intermediate buffer between them disappears.
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/region_analysis.h"

namespace anvil::tir {

using namespace dataflow;

namespace {

// Only spatial iteration and no init: every point is written once, by a pure
// function of the other buffers, which is what makes moving it legal.
void check_complete_spatial(const Block& block, const char* primitive, const char* role) {
  if (block->init) throw_error(primitive, ": ", role, "block '", block->name, "' is a reduction");
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::Reduce)
      throw_error(primitive, ": ", role, "block '", block->name, "' is a reduction");
    if (iv.kind == IterKind::Opaque)
      throw_error(primitive, ": ", role, "block '", block->name,
                  "' has an opaque iteration variable '", iv.var->name, "'");
  }
}

const BufferStoreNode* single_store(const Block& block, const char* primitive) {
  const auto* st = as<BufferStoreNode>(block->body);
  if (!st)
    throw_error(primitive, ": the body of block '", block->name, "' is not a single buffer store");
  return st;
}

bool is_iter_var(const Block& block, const VarNode* var) {
  for (const IterVar& iv : block->iter_vars)
    if (iv.var.get() == var) return true;
  return false;
}

// The iteration variables indices consist of, one per position, or an empty
// list when an index is not a distinct iteration variable of block.
std::vector<const VarNode*> distinct_iter_vars(const Block& block,
                                               const std::vector<PrimExpr>& indices) {
  std::vector<const VarNode*> vars;
  std::unordered_set<const VarNode*> seen;
  for (const PrimExpr& index : indices) {
    const auto* v = as<VarNode>(index);
    if (!v || !is_iter_var(block, v) || !seen.insert(v).second) return {};
    vars.push_back(v);
  }
  return vars;
}

// Replaces every load of buffer by value with index_vars bound to the load's
// indices; blocks whose body changed get their reads recomputed.
class LoadInliner : public Mutator {
 public:
  LoadInliner(const Buffer& buffer, std::vector<const VarNode*> index_vars, PrimExpr value)
      : buffer_(buffer), index_vars_(std::move(index_vars)), value_(std::move(value)) {}

  PrimExpr mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) override {
    PrimExpr loaded = Mutator::mutate_BufferLoad(node, self);
    const auto* load = as<BufferLoadNode>(loaded);
    if (!load || load->buffer.get() != buffer_.get()) return loaded;
    VarMap bindings;
    for (size_t k = 0; k < index_vars_.size(); ++k) bindings[index_vars_[k]] = load->indices[k];
    return substitute(value_, bindings);
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt& self) override {
    Stmt result = Mutator::mutate_Block(node, self);
    if (result.get() == self.get()) return result;
    Block block(static_cast<const BlockNode*>(result.get()));
    // A reduction's read of its own output is listed only if it was before.
    std::vector<BufferRegion> reads;
    for (BufferRegion& r : detect_reads(block))
      if (block_reads(Block(node), r.buffer) || !block_writes(block, r.buffer))
        reads.push_back(std::move(r));
    return BlockNode::make(block->iter_vars, std::move(reads), block->writes, block->name,
                           block->body, block->init, block->alloc_buffers, block->annotations);
  }

 private:
  Buffer buffer_;
  std::vector<const VarNode*> index_vars_;
  PrimExpr value_;
};

// Replaces every load of buffer by value (already in the right variables).
class LoadReplacer : public Mutator {
 public:
  LoadReplacer(const Buffer& buffer, PrimExpr value) : buffer_(buffer), value_(std::move(value)) {}
  PrimExpr mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) override {
    if (node->buffer.get() == buffer_.get()) return value_;
    return Mutator::mutate_BufferLoad(node, self);
  }

 private:
  Buffer buffer_;
  PrimExpr value_;
};

// Every load of buffer in e.
std::vector<const BufferLoadNode*> loads_of(const PrimExpr& e, const Buffer& buffer) {
  std::vector<const BufferLoadNode*> loads;
  pre_order_visit(e, [&](const PrimExpr& x) {
    if (const auto* load = as<BufferLoadNode>(x); load && load->buffer.get() == buffer.get())
      loads.push_back(load);
  });
  return loads;
}

bool block_loads(const Block& block, const Buffer& buffer) {
  bool found = false;
  auto on_expr = [&](const PrimExpr& x) {
    if (const auto* load = as<BufferLoadNode>(x); load && load->buffer.get() == buffer.get())
      found = true;
  };
  pre_order_visit(block->body, on_expr, nullptr);
  if (block->init) pre_order_visit(block->init, on_expr, nullptr);
  return found;
}

bool same_domain(const IterVar& iv, const PrimExpr& extent, IndexSimplifier& simplifier) {
  auto lo = simplifier.const_difference(iv.dom.min, make_int(0));
  auto ext = simplifier.const_difference(iv.dom.extent, extent);
  return lo && *lo == 0 && ext && *ext == 0;
}

}  // namespace

void Schedule::compute_inline(const BlockRV& block_rv) {
  constexpr const char* kPrimitive = "compute_inline";
  BlockSite site = find_block(func_, block_rv.name, kPrimitive);
  const Block& block = site.realize->block;
  check_complete_spatial(block, kPrimitive, "");
  const BufferStoreNode* st = single_store(block, kPrimitive);
  const Buffer& buffer = st->buffer;
  if (is_param_buffer(func_, buffer))
    throw_error(kPrimitive, ": block '", block->name, "' writes output buffer '", buffer->name,
                "'");
  std::vector<const VarNode*> index_vars = distinct_iter_vars(block, st->indices);
  if (index_vars.empty() && !st->indices.empty())
    throw_error(kPrimitive, ": block '", block->name, "' stores to '", buffer->name,
                "' at indices that are not distinct iteration variables");
  std::unordered_set<const VarNode*> indexed(index_vars.begin(), index_vars.end());
  if (uses_var(st->value,
               [&](const VarNode* v) { return is_iter_var(block, v) && !indexed.count(v); }))
    throw_error(kPrimitive, ": block '", block->name,
                "' uses an iteration variable that does not index its output");
  if (!loads_of(st->value, buffer).empty())
    throw_error(kPrimitive, ": block '", block->name, "' reads the buffer '", buffer->name,
                "' it writes");
  for (const BlockSite& other : child_blocks(site.scope)) {
    if (other.realize.get() != site.realize.get() && block_writes(other.realize->block, buffer))
      throw_error(kPrimitive, ": buffer '", buffer->name, "' of block '", block->name,
                  "' is also written by block '", other.realize->block->name, "'");
  }

  Stmt body = replace_stmts(site.scope->body, {{site.realize.get(), nullptr}});
  if (!body) body = seq_stmt({});
  body = LoadInliner(buffer, index_vars, st->value).mutate(body);
  func_ = replace_scope(func_, site.scope, with_body(site.scope, body));
  func_ = drop_unused_allocation(func_, buffer);
}

void Schedule::reverse_compute_inline(const BlockRV& block_rv) {
  constexpr const char* kPrimitive = "reverse_compute_inline";
  BlockSite site = find_block(func_, block_rv.name, kPrimitive);
  const Block& consumer = site.realize->block;
  check_complete_spatial(consumer, kPrimitive, "");
  const BufferStoreNode* consumer_store = single_store(consumer, kPrimitive);
  if (!is_one(site.realize->predicate))
    throw_error(kPrimitive, ": block '", consumer->name, "' has a predicate");

  // The one buffer read by the consumer that a block of the scope produces.
  std::vector<BlockSite> blocks = child_blocks(site.scope);
  Buffer produced;
  for (const BufferRegion& read : detect_reads(consumer)) {
    bool has_producer = false;
    for (const BlockSite& other : blocks)
      if (other.realize.get() != site.realize.get() &&
          block_writes(other.realize->block, read.buffer))
        has_producer = true;
    if (!has_producer) continue;
    if (produced)
      throw_error(kPrimitive, ": block '", consumer->name, "' reads '", produced->name, "' and '",
                  read.buffer->name, "', both produced in its scope");
    produced = read.buffer;
  }
  if (!produced) throw_error(kPrimitive, ": block '", consumer->name, "' has no producer block");
  if (is_param_buffer(func_, produced))
    throw_error(kPrimitive, ": buffer '", produced->name, "' is an output of the function");

  std::optional<BlockSite> producer_site;
  for (const BlockSite& other : blocks) {
    if (other.realize.get() == site.realize.get()) continue;
    const Block& b = other.realize->block;
    if (block_writes(b, produced)) {
      if (producer_site)
        throw_error(kPrimitive, ": buffer '", produced->name,
                    "' is written by more than one block");
      producer_site = other;
    } else if (block_reads(b, produced) || block_loads(b, produced)) {
      throw_error(kPrimitive, ": buffer '", produced->name, "' is also read by block '", b->name,
                  "'");
    }
  }
  const Block& producer = producer_site->realize->block;
  check_complete_spatial(producer, kPrimitive, "producer ");
  const BufferStoreNode* producer_store = single_store(producer, kPrimitive);
  if (producer_store->buffer.get() != produced.get())
    throw_error(kPrimitive, ": producer block '", producer->name, "' does not store to '",
                produced->name, "'");

  // Every load of the produced buffer must use the same distinct iteration
  // variables, covering all of the consumer's: then each consumer point
  // corresponds to exactly one producer point.
  std::vector<const BufferLoadNode*> loads = loads_of(consumer_store->value, produced);
  std::vector<const VarNode*> index_vars = distinct_iter_vars(consumer, loads.front()->indices);
  bool injective = index_vars.size() == consumer->iter_vars.size();
  for (const BufferLoadNode* load : loads)
    if (distinct_iter_vars(consumer, load->indices) != index_vars) injective = false;
  if (!injective)
    throw_error(kPrimitive, ": block '", consumer->name, "' does not read '", produced->name,
                "' at distinct iteration variables covering its iteration space");
  IndexSimplifier simplifier;
  for (size_t k = 0; k < index_vars.size(); ++k) {
    const PrimExpr& extent = produced->shape[k];
    bool covered = false;
    for (const IterVar& iv : consumer->iter_vars)
      if (iv.var.get() == index_vars[k]) covered = same_domain(iv, extent, simplifier);
    const auto* producer_var = as<VarNode>(producer_store->indices[k]);
    bool producer_covers = false;
    for (const IterVar& iv : producer->iter_vars)
      if (producer_var && iv.var.get() == producer_var)
        producer_covers = same_domain(iv, extent, simplifier);
    if (!covered || !producer_covers)
      throw_error(kPrimitive, ": blocks '", producer->name, "' and '", consumer->name,
                  "' do not both cover all of '", produced->name, "'");
  }

  VarMap to_producer;
  for (size_t k = 0; k < index_vars.size(); ++k)
    to_producer[index_vars[k]] = producer_store->indices[k];
  PrimExpr value = LoadReplacer(produced, producer_store->value)
                       .mutate(substitute(consumer_store->value, to_producer));
  std::vector<PrimExpr> indices;
  for (const PrimExpr& index : consumer_store->indices)
    indices.push_back(substitute(index, to_producer));
  Block fused = with_body(producer, store(consumer_store->buffer, value, std::move(indices)));
  fused = BlockNode::make(fused->iter_vars, detect_reads(fused), detect_writes(fused), fused->name,
                          fused->body, fused->init, fused->alloc_buffers, fused->annotations);
  const BlockRealize& producer_realize = producer_site->realize;
  Stmt fused_realize =
      BlockRealizeNode::make(producer_realize->iter_values, producer_realize->predicate, fused);
  func_ = func_->with_body(replace_stmts(
      func_->body, {{site.realize.get(), nullptr}, {producer_realize.get(), fused_realize}}));
  func_ = drop_unused_allocation(func_, produced);
}

}  // namespace anvil::tir
