// flatten_buffers: every multi-dimensional access becomes an access of a
// one-dimensional buffer, index = sum(index_d * stride_d) + elem_offset. Each
// original buffer gets one flattened twin sharing its data Var, so all its
// accesses (and its Allocate) agree. The buffer_map keeps the original
// buffers: the packed API binds shapes and strides from them.
#include <unordered_map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {

namespace {

// Already flat: one dimension, unit stride, no offset.
bool is_flat(const BufferNode& buffer) {
  return buffer.ndim() == 1 && (buffer.strides.empty() || is_one(buffer.strides[0])) &&
         is_zero(buffer.elem_offset);
}

// Elements the buffer spans: the shape's product when compact; with explicit
// strides, one past the farthest element.
PrimExpr flat_extent(const BufferNode& buffer) {
  PrimExpr extent = make_int(1);
  if (buffer.strides.empty()) {
    for (const PrimExpr& d : buffer.shape) extent = extent * d;
    return extent;
  }
  for (int d = 0; d < buffer.ndim(); ++d)
    extent = extent + (buffer.shape[d] - 1) * buffer.strides[d];
  return extent;
}

class Flattener : public Mutator {
 public:
  Buffer mutate_buffer(const Buffer& buffer) override { return flattened(buffer); }

  PrimExpr mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) override {
    if (is_flat(*node->buffer)) return Mutator::mutate_BufferLoad(node, self);
    bool changed = false;
    std::vector<PrimExpr> indices = mutate_all(node->indices, changed);
    return load(flattened(node->buffer), {flat_index(*node->buffer, indices)});
  }

  Stmt mutate_BufferStore(const BufferStoreNode* node, const Stmt& self) override {
    if (is_flat(*node->buffer)) return Mutator::mutate_BufferStore(node, self);
    bool changed = false;
    std::vector<PrimExpr> indices = mutate_all(node->indices, changed);
    return store(flattened(node->buffer), mutate(node->value),
                 {flat_index(*node->buffer, indices)});
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt&) override {
    ANVIL_ICHECK(false, "flatten_buffers found block '", node->name,
                 "'; run convert_blocks_to_loops first");
    return nullptr;
  }

 private:
  Buffer flattened(const Buffer& buffer) {
    if (is_flat(*buffer)) return buffer;
    auto it = flat_.find(buffer.get());
    if (it != flat_.end()) return it->second.second;
    Buffer flat =
        BufferNode::make_full(buffer->data, buffer->dtype, {flat_extent(*buffer)}, {}, make_int(0),
                              buffer->name, buffer->scope, buffer->data_alignment);
    flat_.emplace(buffer.get(), std::make_pair(buffer, flat));
    return flat;
  }

  // index in int64 lanes, keeping Ramp and Broadcast recognizable.
  static PrimExpr as_index_type(const PrimExpr& index) {
    if (index.dtype().element_of() == kIndexType) return index;
    if (const auto* r = as<RampNode>(index))
      return ramp(cast(kIndexType, r->base), cast(kIndexType, r->stride), r->lanes);
    if (const auto* b = as<BroadcastNode>(index))
      return broadcast(cast(kIndexType, b->value), b->lanes);
    return cast(kIndexType.with_lanes(index.dtype().lanes), index);
  }

  // sum(index_d * stride_d) + elem_offset. Vector indices keep their shape: a
  // Ramp in any dimension contributes its base to the scalar sum and its
  // stride (times the dimension's stride) to the result's Ramp stride, so the
  // usual vectorized innermost access stays one contiguous Ramp.
  static PrimExpr flat_index(const BufferNode& buffer, const std::vector<PrimExpr>& indices) {
    ANVIL_ICHECK(int(indices.size()) == buffer.ndim(), "buffer '", buffer.name, "' of rank ",
                 buffer.ndim(), " accessed with ", indices.size(), " indices");
    std::vector<PrimExpr> strides = buffer.effective_strides();
    PrimExpr base = cast(kIndexType, buffer.elem_offset);
    PrimExpr ramp_stride;  // null: no Ramp index seen
    int lanes = 1;
    PrimExpr other_vectors;  // vector indices that are neither Ramp nor Broadcast
    for (size_t d = 0; d < indices.size(); ++d) {
      PrimExpr index = as_index_type(indices[d]);
      PrimExpr stride = cast(kIndexType, strides[d]);
      if (index.dtype().lanes == 1) {
        base = base + index * stride;
      } else if (const auto* r = as<RampNode>(index)) {
        base = base + r->base * stride;
        ramp_stride = ramp_stride ? ramp_stride + r->stride * stride : r->stride * stride;
        lanes = r->lanes;
      } else if (const auto* b = as<BroadcastNode>(index)) {
        base = base + b->value * stride;
        lanes = b->lanes;
      } else {
        PrimExpr term = index * stride;
        other_vectors = other_vectors ? other_vectors + term : term;
        lanes = index.dtype().lanes;
      }
    }
    PrimExpr flat = base;
    if (ramp_stride) flat = ramp(base, ramp_stride, lanes);
    if (other_vectors)
      return flat.dtype().lanes == 1 ? broadcast(flat, lanes) + other_vectors
                                     : flat + other_vectors;
    if (!ramp_stride && lanes > 1) flat = broadcast(flat, lanes);
    return flat;
  }

  // Keyed by the original node; the original is kept alive with its twin.
  std::unordered_map<const BufferNode*, std::pair<Buffer, Buffer>> flat_;
};

}  // namespace

PrimFunc flatten_buffers(const PrimFunc& func) {
  Stmt body = Flattener().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
