// compact_buffer_allocation: moves each root-block buffer down to the
// innermost loop enclosing all its accesses and shrinks it to the region
// accessed there.
//
// Why: cache_read + compute_at leaves the copy buffer at full size in the root
// block, indexed like the original. Allocating it under the loop where it is
// consumed, with indices shifted by the region's start, turns it into a small
// contiguous tile (a packed panel of a matrix product) private to each
// iteration, and to each task when that loop sits inside a parallel loop.
//
// Soundness: moving an allocation into a loop drops values between iterations
// of that loop. Values only need to survive an iteration when a block
// accumulates into the buffer across a reduction loop, so a write from a block
// with reduction variables keeps the allocation above the first loop bound to
// one of them. Anything not understood (data pointer used directly, an index
// whose range cannot be bounded) keeps that buffer, or that dimension, as is.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "anvil/tir/arith.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {
namespace {

// Inclusive bounds of an index expression.
struct Interval {
  PrimExpr lo, hi;
};

using RelaxMap = std::unordered_map<const VarNode*, Interval>;

bool uses_relaxed(const PrimExpr& e, const RelaxMap& relax) {
  return uses_var(e, [&](const VarNode* v) { return relax.count(v) > 0; });
}

// Bounds of e when the relaxed variables range over their intervals and every
// other variable is fixed; nullopt when the form is not understood.
std::optional<Interval> bound_of(const PrimExpr& e, const RelaxMap& relax) {
  if (!uses_relaxed(e, relax)) return Interval{e, e};
  if (const auto* v = as<VarNode>(e)) return relax.at(v);
  auto both = [&](const PrimExpr& a,
                  const PrimExpr& b) -> std::optional<std::pair<Interval, Interval>> {
    auto x = bound_of(a, relax), y = bound_of(b, relax);
    if (!x || !y) return std::nullopt;
    return std::make_pair(*x, *y);
  };
  if (const auto* n = as<AddNode>(e)) {
    auto r = both(n->a, n->b);
    if (!r) return std::nullopt;
    return Interval{r->first.lo + r->second.lo, r->first.hi + r->second.hi};
  }
  if (const auto* n = as<SubNode>(e)) {
    auto r = both(n->a, n->b);
    if (!r) return std::nullopt;
    return Interval{r->first.lo - r->second.hi, r->first.hi - r->second.lo};
  }
  if (const auto* n = as<MulNode>(e)) {
    PrimExpr var_side = n->a, const_side = n->b;
    if (as_const_int(var_side)) std::swap(var_side, const_side);
    auto c = as_const_int(const_side);
    auto x = bound_of(var_side, relax);
    if (!c || !x) return std::nullopt;
    if (*c >= 0) return Interval{x->lo * const_side, x->hi * const_side};
    return Interval{x->hi * const_side, x->lo * const_side};
  }
  if (const auto* n = as<FloorDivNode>(e)) {
    auto c = as_const_int(n->b);
    auto x = bound_of(n->a, relax);
    if (!c || *c <= 0 || !x) return std::nullopt;
    return Interval{floordiv(x->lo, n->b), floordiv(x->hi, n->b)};
  }
  if (const auto* n = as<FloorModNode>(e)) {
    auto c = as_const_int(n->b);
    if (!c || *c <= 0) return std::nullopt;
    return Interval{make_int(0, e.dtype()), make_int(*c - 1, e.dtype())};
  }
  if (const auto* n = as<MinNode>(e)) {
    auto r = both(n->a, n->b);
    if (!r) return std::nullopt;
    return Interval{min(r->first.lo, r->second.lo), min(r->first.hi, r->second.hi)};
  }
  if (const auto* n = as<MaxNode>(e)) {
    auto r = both(n->a, n->b);
    if (!r) return std::nullopt;
    return Interval{max(r->first.lo, r->second.lo), max(r->first.hi, r->second.hi)};
  }
  return std::nullopt;
}

// One load or store of a buffer, with the loops around it (outermost first).
struct Access {
  std::vector<const ForNode*> loops;
  // The allocation may move at most this many loops down for this access.
  size_t movable_depth = 0;
  // The indices in terms of loop variables (block iteration variables replaced).
  std::vector<PrimExpr> indices;
};

// Collects the accesses of one buffer below the root block.
class AccessCollector : public Visitor {
 public:
  explicit AccessCollector(const BufferNode* buffer) : buffer_(buffer) {}

  std::vector<Access> accesses;
  bool understood = true;

  void visit_For(const ForNode* node) override {
    loops_.push_back(node);
    Visitor::visit_For(node);
    loops_.pop_back();
  }

  void visit_BlockRealize(const BlockRealizeNode* node) override {
    const BlockNode* block = node->block.get();
    VarMap map;
    size_t reduce_cut = loops_.size();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      PrimExpr value = node->iter_values[i];
      for (auto it = maps_.rbegin(); it != maps_.rend(); ++it) value = substitute(value, *it);
      map[block->iter_vars[i].var.get()] = value;
      if (block->iter_vars[i].kind == IterKind::Spatial) continue;
      // The first loop this reduction (or opaque) variable depends on.
      for (size_t l = 0; l < loops_.size(); ++l)
        if (uses_var(value, [&](const VarNode* v) { return v == loops_[l]->loop_var.get(); }))
          reduce_cut = std::min(reduce_cut, l);
    }
    for (const PrimExpr& v : node->iter_values) visit(v);
    visit(node->predicate);
    maps_.push_back(std::move(map));
    cuts_.push_back(reduce_cut);
    visit(block->init);
    visit(block->body);
    cuts_.pop_back();
    maps_.pop_back();
  }

  void visit_Var(const VarNode* node) override {
    if (node == buffer_->data.get()) understood = false;
  }

  void visit_BufferLoad(const BufferLoadNode* node) override {
    if (node->buffer.get() == buffer_) record(node->indices, /*is_write=*/false);
    Visitor::visit_BufferLoad(node);
  }

  void visit_BufferStore(const BufferStoreNode* node) override {
    if (node->buffer.get() == buffer_) record(node->indices, /*is_write=*/true);
    Visitor::visit_BufferStore(node);
  }

 private:
  void record(const std::vector<PrimExpr>& indices, bool is_write) {
    Access a;
    a.loops = loops_;
    a.movable_depth = loops_.size();
    if (is_write && !cuts_.empty()) a.movable_depth = std::min(a.movable_depth, cuts_.back());
    for (PrimExpr idx : indices) {
      for (auto it = maps_.rbegin(); it != maps_.rend(); ++it) idx = substitute(idx, *it);
      a.indices.push_back(idx);
    }
    accesses.push_back(std::move(a));
  }

  const BufferNode* buffer_;
  std::vector<const ForNode*> loops_;
  std::vector<VarMap> maps_;
  std::vector<size_t> cuts_;
};

// Replaces a buffer by its compacted version and places its Allocate.
class BufferRelocator : public Mutator {
 public:
  BufferRelocator(const BufferNode* old_buffer, Buffer new_buffer, std::vector<PrimExpr> offsets,
                  const ForNode* home)
      : old_(old_buffer), new_(std::move(new_buffer)), offsets_(std::move(offsets)), home_(home) {}

  PrimExpr mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) override {
    PrimExpr e = Mutator::mutate_BufferLoad(node, self);
    const auto* load = as<BufferLoadNode>(e);
    if (load->buffer.get() != old_) return e;
    return BufferLoadNode::make(new_, shifted(load->indices));
  }

  Stmt mutate_BufferStore(const BufferStoreNode* node, const Stmt& self) override {
    Stmt s = Mutator::mutate_BufferStore(node, self);
    const auto* st = as<BufferStoreNode>(s);
    if (st->buffer.get() != old_) return s;
    return BufferStoreNode::make(new_, st->value, shifted(st->indices));
  }

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    Stmt s = Mutator::mutate_For(node, self);
    if (node != home_) return s;
    const auto* loop = as<ForNode>(s);
    return ForNode::make(loop->loop_var, loop->min, loop->extent, loop->for_kind,
                         AllocateNode::make(new_, loop->body), loop->annotations);
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt& self) override {
    Stmt s = Mutator::mutate_Block(node, self);
    const auto* block = as<BlockNode>(s);
    bool touches = false;
    auto fix = [&](std::vector<BufferRegion> regions) {
      for (BufferRegion& r : regions)
        if (r.buffer.get() == old_) {
          r = BufferRegion::full(new_);
          touches = true;
        }
      return regions;
    };
    std::vector<BufferRegion> reads = fix(block->reads), writes = fix(block->writes);
    if (!touches) return s;
    return BlockNode::make(block->iter_vars, std::move(reads), std::move(writes), block->name,
                           block->body, block->init, block->alloc_buffers, block->annotations);
  }

 private:
  std::vector<PrimExpr> shifted(const std::vector<PrimExpr>& indices) const {
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < indices.size(); ++d) out.push_back(indices[d] - offsets_[d]);
    return out;
  }

  const BufferNode* old_;
  Buffer new_;
  std::vector<PrimExpr> offsets_;
  const ForNode* home_;
};

// The start and extent of the region of dimension d accessed below `depth`
// loops, over all accesses; nullopt when not provably constant-sized.
std::optional<Interval> union_region(const std::vector<Access>& accesses, size_t d, size_t depth,
                                     Analyzer& analyzer) {
  std::vector<Interval> parts;
  for (const Access& a : accesses) {
    RelaxMap relax;
    for (size_t l = depth; l < a.loops.size(); ++l) {
      const ForNode* loop = a.loops[l];
      relax[loop->loop_var.get()] = Interval{loop->min, loop->min + loop->extent - 1};
    }
    auto b = bound_of(a.indices[d], relax);
    if (!b) return std::nullopt;
    parts.push_back({analyzer.simplify(b->lo), analyzer.simplify(b->hi)});
  }
  Interval result = parts[0];
  for (const Interval& p : parts) {
    if (analyzer.can_prove(p.lo < result.lo))
      result.lo = p.lo;
    else if (!analyzer.can_prove(result.lo <= p.lo))
      return std::nullopt;
    if (analyzer.can_prove(p.hi > result.hi))
      result.hi = p.hi;
    else if (!analyzer.can_prove(result.hi >= p.hi))
      return std::nullopt;
  }
  return result;
}

Stmt compact_one(const Stmt& root_body, const Buffer& buffer, Buffer& replacement, bool& moved) {
  moved = false;
  replacement = buffer;
  AccessCollector collector(buffer.get());
  collector.visit(root_body);
  if (!collector.understood || collector.accesses.empty()) return root_body;

  // The deepest loop every access sits in, no deeper than any access allows.
  const std::vector<Access>& acc = collector.accesses;
  size_t depth = acc[0].movable_depth;
  for (const Access& a : acc) {
    depth = std::min(depth, a.movable_depth);
    for (size_t l = 0; l < depth; ++l)
      if (a.loops[l] != acc[0].loops[l]) {
        depth = l;
        break;
      }
  }
  // Vectorized and unrolled loops are rewritten as a whole later; an allocation
  // inside one would stop that, so it stays above them.
  while (depth > 0 && (acc[0].loops[depth - 1]->for_kind == ForKind::Vectorized ||
                       acc[0].loops[depth - 1]->for_kind == ForKind::Unrolled))
    --depth;

  Analyzer analyzer;
  for (size_t l = 0; l < depth; ++l) {
    const ForNode* loop = acc[0].loops[l];
    analyzer.bind(loop->loop_var, Range{loop->min, loop->extent});
  }
  std::vector<PrimExpr> shape, offsets;
  bool shrunk = false;
  for (size_t d = 0; d < buffer->shape.size(); ++d) {
    auto region = union_region(acc, d, depth, analyzer);
    std::optional<int64_t> extent;
    if (region) extent = as_const_int(analyzer.simplify(region->hi - region->lo + 1));
    auto full = as_const_int(buffer->shape[d]);
    if (extent && *extent > 0 && (!full || *extent < *full)) {
      shape.push_back(make_int(*extent));
      offsets.push_back(region->lo);
      shrunk = true;
    } else {
      shape.push_back(buffer->shape[d]);
      offsets.push_back(make_int(0, buffer->shape[d].dtype()));
    }
  }
  if (!shrunk && depth == 0) return root_body;
  if (depth > 0) {
    // A dimension kept at full size must not depend on the loops it moves below.
    for (const PrimExpr& dim : shape)
      if (!as_const_int(dim)) return root_body;
  }
  replacement = BufferNode::make(buffer->name, buffer->dtype, shape, buffer->scope);
  const ForNode* home = depth > 0 ? acc[0].loops[depth - 1] : nullptr;
  moved = home != nullptr;
  return BufferRelocator(buffer.get(), replacement, offsets, home).mutate(root_body);
}

}  // namespace

PrimFunc compact_buffer_allocation(const PrimFunc& func) {
  const auto* realize = as<BlockRealizeNode>(func->body);
  if (!realize || !realize->block->iter_vars.empty()) return func;
  const BlockNode* root = realize->block.get();
  if (root->alloc_buffers.empty()) return func;

  Stmt body = root->body;
  std::vector<Buffer> kept;
  for (const Buffer& buffer : root->alloc_buffers) {
    Buffer replacement;
    bool moved = false;
    body = compact_one(body, buffer, replacement, moved);
    if (!moved) kept.push_back(replacement);
  }
  std::vector<BufferRegion> reads = root->reads, writes = root->writes;
  Block new_root = BlockNode::make(root->iter_vars, std::move(reads), std::move(writes), root->name,
                                   body, root->init, std::move(kept), root->annotations);
  return func->with_body(BlockRealizeNode::make({}, realize->predicate, new_root));
}

}  // namespace anvil::tir::transform
