// storage_rewrite: fewer and cheaper allocations.
//
// Works region by region: the function body is a region, and so is the body
// of every parallel loop (each task of a parallel loop needs storage of its
// own, so nothing inside one ever moves out of it). In each region:
//  1. every Allocate of constant size ("local" or "global" scope) moves to the
//     top of the region. This takes allocations out of serial loops, so they
//     happen once instead of once per iteration; a fresh allocation's contents
//     are undefined, so seeing the previous iteration's values changes nothing.
//  2. on the way up, at every sequence of statements, the allocations coming
//     out of its elements are packed: a buffer is live from the first element
//     that mentions it to the last, and buffers of one dtype and scope whose
//     live ranges do not intersect share one allocation of the largest size
//     among them. Packing happens at every level, so buffers of two loop
//     nests that follow each other share even when both nests sit in one
//     outer loop.
// Sharing is limited to buffers accessed one-dimensionally (the lowered form),
// so that one merged declaration can serve every access.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {
namespace {

// The number of elements of a buffer with a constant shape.
std::optional<int64_t> constant_size(const Buffer& buffer) {
  int64_t size = 1;
  for (const PrimExpr& d : buffer->shape) {
    std::optional<int64_t> v = as_const_int(d);
    if (!v || *v < 0) return std::nullopt;
    size *= *v;
  }
  return size;
}

bool movable(const Buffer& buffer) {
  return (buffer->scope == "local" || buffer->scope == "global") && constant_size(buffer);
}

// Data vars accessed in stmt other than through one index of a 1-D buffer of
// the allocated dtype; such buffers keep their own allocation.
std::unordered_set<const VarNode*> irregular_accesses(
    const Stmt& stmt, const std::unordered_map<const VarNode*, DataType>& dtypes) {
  std::unordered_set<const VarNode*> out;
  auto note = [&](const Buffer& buffer, size_t num_indices) {
    auto it = dtypes.find(buffer->data.get());
    if (it == dtypes.end()) return;
    if (num_indices != 1 || buffer->ndim() != 1 || it->second != buffer->dtype)
      out.insert(buffer->data.get());
  };
  pre_order_visit(
      stmt,
      [&](const PrimExpr& e) {
        if (const auto* load = as<BufferLoadNode>(e)) note(load->buffer, load->indices.size());
      },
      [&](const Stmt& s) {
        if (const auto* st = as<BufferStoreNode>(s)) note(st->buffer, st->indices.size());
      });
  return out;
}

// Replaces the buffers (and data vars) of merged allocations by the shared one.
class BufferRemapper : public Mutator {
 public:
  explicit BufferRemapper(std::unordered_map<const VarNode*, Buffer> map) : map_(std::move(map)) {}

  Buffer mutate_buffer(const Buffer& buffer) override {
    auto it = map_.find(buffer->data.get());
    return it == map_.end() ? buffer : it->second;
  }
  PrimExpr mutate_Var(const VarNode* node, const PrimExpr& self) override {
    auto it = map_.find(node);
    return it == map_.end() ? self : PrimExpr(it->second->data);
  }

 private:
  std::unordered_map<const VarNode*, Buffer> map_;
};

// A buffer to allocate and the elements [first, last] of the sequence being
// packed in which it is live.
struct LiveBuffer {
  Buffer buffer;
  int first = 0, last = 0;
};

// Packs buffers into shared allocations and rewrites statements' accesses;
// returns the allocations in order of first appearance.
std::vector<Buffer> pack(const std::vector<LiveBuffer>& buffers, std::vector<Stmt>& statements) {
  std::unordered_map<const VarNode*, DataType> dtypes;
  for (const LiveBuffer& b : buffers) dtypes[b.buffer->data.get()] = b.buffer->dtype;
  std::unordered_set<const VarNode*> irregular;
  for (const Stmt& s : statements) {
    std::unordered_set<const VarNode*> found = irregular_accesses(s, dtypes);
    irregular.insert(found.begin(), found.end());
  }

  // Greedy interval packing in order of first use: a buffer joins the
  // compatible group that became free the longest ago.
  struct Group {
    std::vector<Buffer> members;
    int64_t size = 0;
    int last = 0;
    bool open = true;  // others may still join
  };
  std::vector<LiveBuffer> order = buffers;
  std::stable_sort(order.begin(), order.end(),
                   [](const LiveBuffer& a, const LiveBuffer& b) { return a.first < b.first; });
  std::vector<Group> groups;
  for (const LiveBuffer& b : order) {
    bool shareable = !irregular.count(b.buffer->data.get()) && b.buffer->ndim() == 1;
    int target = -1;
    for (int g = 0; shareable && g < int(groups.size()); ++g) {
      const Buffer& head = groups[g].members.front();
      bool fits = groups[g].open && head->dtype == b.buffer->dtype &&
                  head->scope == b.buffer->scope && groups[g].last < b.first;
      if (fits && (target < 0 || groups[g].last < groups[target].last)) target = g;
    }
    if (target < 0) {
      target = int(groups.size());
      groups.push_back({});
      groups.back().open = shareable;
    }
    Group& group = groups[target];
    group.members.push_back(b.buffer);
    group.size = std::max(group.size, *constant_size(b.buffer));
    group.last = b.last;
  }

  std::unordered_map<const VarNode*, Buffer> remap;
  std::vector<Buffer> allocations;
  for (const Group& g : groups) {
    if (g.members.size() == 1) {
      allocations.push_back(g.members.front());
      continue;
    }
    const Buffer& head = g.members.front();
    int alignment = 0;
    for (const Buffer& m : g.members) alignment = std::max(alignment, m->data_alignment);
    Buffer shared = BufferNode::make_full(head->data, head->dtype, {make_int(g.size)}, {},
                                          make_int(0), head->name, head->scope, alignment);
    for (const Buffer& m : g.members) remap[m->data.get()] = shared;
    allocations.push_back(shared);
  }
  if (!remap.empty()) {
    BufferRemapper remapper(std::move(remap));
    for (Stmt& s : statements) s = remapper.mutate(s);
  }
  // Keep the original order of allocation for readability.
  std::unordered_map<const VarNode*, size_t> position;
  for (size_t k = 0; k < buffers.size(); ++k) position.emplace(buffers[k].buffer->data.get(), k);
  std::stable_sort(allocations.begin(), allocations.end(), [&](const Buffer& a, const Buffer& b) {
    return position[a->data.get()] < position[b->data.get()];
  });
  return allocations;
}

// Removes movable Allocates and carries their buffers up to the top of the
// region, packing them at every sequence on the way.
class StorageRewriter : public Mutator {
 public:
  Stmt rewrite_region(const Stmt& region) {
    pending_.emplace_back();
    Stmt body = mutate(region);
    std::vector<Buffer> allocations = std::move(pending_.back());
    pending_.pop_back();
    // Unrolling can copy one Allocate several times; one allocation serves all copies.
    std::unordered_set<const VarNode*> seen;
    std::vector<Buffer> unique;
    for (const Buffer& b : allocations)
      if (seen.insert(b->data.get()).second) unique.push_back(b);
    if (already_in_place(region, unique, body)) return region;
    for (size_t k = unique.size(); k-- > 0;) body = AllocateNode::make(unique[k], body);
    return body;
  }

  Stmt mutate_Allocate(const AllocateNode* node, const Stmt& self) override {
    if (!movable(node->buffer)) return Mutator::mutate_Allocate(node, self);
    pending_.back().push_back(node->buffer);
    return mutate(node->body);
  }

  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    if (node->for_kind != ForKind::Parallel) return Mutator::mutate_For(node, self);
    Stmt body = rewrite_region(node->body);
    if (body.get() == node->body.get()) return self;
    return ForNode::make(node->loop_var, node->min, node->extent, node->for_kind, body,
                         node->annotations);
  }

  Stmt mutate_SeqStmt(const SeqStmtNode* node, const Stmt& self) override {
    std::vector<Stmt> statements;
    std::vector<LiveBuffer> live;
    std::unordered_map<const VarNode*, size_t> index_of;
    bool changed = false;
    for (int k = 0; k < int(node->seq.size()); ++k) {
      pending_.emplace_back();
      statements.push_back(mutate(node->seq[k]));
      changed = changed || statements.back().get() != node->seq[k].get();
      for (const Buffer& b : pending_.back()) {
        auto [it, fresh] = index_of.emplace(b->data.get(), live.size());
        if (fresh)
          live.push_back({b, k, k});
        else
          live[it->second].last = k;
      }
      pending_.pop_back();
    }
    if (live.empty()) return changed ? seq_stmt(std::move(statements)) : self;
    std::vector<Buffer> allocations = pack(live, statements);
    pending_.back().insert(pending_.back().end(), allocations.begin(), allocations.end());
    return seq_stmt(std::move(statements));
  }

 private:
  // True when region already is Allocates of exactly these buffers around body.
  static bool already_in_place(const Stmt& region, const std::vector<Buffer>& allocations,
                               const Stmt& body) {
    Stmt s = region;
    for (const Buffer& b : allocations) {
      const auto* alloc = as<AllocateNode>(s);
      if (!alloc || alloc->buffer.get() != b.get()) return false;
      s = alloc->body;
    }
    return s.get() == body.get();
  }

  // Per open region or sequence element: the buffers found so far.
  std::vector<std::vector<Buffer>> pending_;
};

}  // namespace

PrimFunc storage_rewrite(const PrimFunc& func) {
  StorageRewriter rewriter;
  Stmt body = rewriter.rewrite_region(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
