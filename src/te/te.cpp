// Tensors of the tensor-expression language: placeholders, computes and the
// registry that maps a buffer back to the tensor it belongs to.
#include "anvil/te/te.h"

#include <mutex>
#include <unordered_map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"

namespace anvil::te {

namespace {

// Live tensors by their buffer. A compute body only holds BufferLoads, so
// this is how compute() learns which tensors it reads. Entries are removed by
// ~TensorNode, so a pointer found here always names a live tensor.
class TensorRegistry {
 public:
  static TensorRegistry& global() {
    static TensorRegistry* registry = new TensorRegistry();  // never destroyed: used by destructors
    return *registry;
  }
  void add(const TensorNode* tensor) {
    std::lock_guard lock(mutex_);
    by_buffer_[tensor->buffer.get()] = tensor;
  }
  void remove(const TensorNode* tensor) {
    std::lock_guard lock(mutex_);
    auto it = by_buffer_.find(tensor->buffer.get());
    if (it != by_buffer_.end() && it->second == tensor) by_buffer_.erase(it);
  }
  Tensor find(const tir::BufferNode* buffer) {
    std::lock_guard lock(mutex_);
    auto it = by_buffer_.find(buffer);
    return it == by_buffer_.end() ? Tensor() : Tensor(Ref<const TensorNode>(it->second));
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const tir::BufferNode*, const TensorNode*> by_buffer_;
};

Tensor register_tensor(Ref<TensorNode> node) {
  TensorRegistry::global().add(node.get());
  return Tensor(Ref<const TensorNode>(node));
}

// exprs as int64 scalars; `what` names their owner in errors ("tensor 'A'").
std::vector<PrimExpr> as_index_exprs(std::vector<PrimExpr> exprs, const std::string& what) {
  for (PrimExpr& e : exprs) {
    if (!e) throw_error(what, " has an undefined dimension or index");
    if (!(e.dtype().is_int() || e.dtype().is_uint()) || e.dtype().lanes != 1)
      throw_error(what, " has a dimension or index of type ", e.dtype().to_string(),
                  " (an integer scalar is needed)");
    e = tir::cast(tir::kIndexType, e);
  }
  return exprs;
}

std::vector<std::string> default_axis_names(size_t ndim) {
  static const char* const kShort[] = {"i", "j", "k", "l"};
  std::vector<std::string> names;
  for (size_t d = 0; d < ndim; ++d)
    names.push_back(ndim <= 4 ? std::string(kShort[d]) : "i" + std::to_string(d));
  return names;
}

// The tensors whose buffers body loads, in order of first appearance.
std::vector<Tensor> find_inputs(const PrimExpr& body, const std::string& compute_name) {
  std::vector<Tensor> inputs;
  tir::pre_order_visit(body, [&](const PrimExpr& e) {
    const auto* load = tir::as<tir::BufferLoadNode>(e);
    if (!load) return;
    for (const Tensor& t : inputs)
      if (t->buffer.get() == load->buffer.get()) return;
    Tensor t = TensorRegistry::global().find(load->buffer.get());
    if (!t)
      throw_error("compute '", compute_name, "' reads buffer '", load->buffer->name,
                  "', which belongs to no live tensor");
    inputs.push_back(t);
  });
  return inputs;
}

void check_reduce_only_at_top(const PrimExpr& body, const std::string& name) {
  PrimExpr below = body;
  if (const auto* reduce = tir::as<tir::ReduceNode>(body)) {
    for (const IterVar& iv : reduce->axis)
      if (!iv.var || !iv.dom.min || !iv.dom.extent)
        throw_error("compute '", name, "' reduces over an incomplete axis");
    tir::pre_order_visit(reduce->source, [&](const PrimExpr& e) {
      if (e->kind == tir::ExprKind::Reduce)
        throw_error("compute '", name, "' nests a reduction inside a reduction");
    });
    if (reduce->condition) {
      if (!reduce->condition.dtype().is_bool() || reduce->condition.dtype().lanes != 1)
        throw_error("compute '", name, "' has a reduction condition of type ",
                    reduce->condition.dtype().to_string());
    }
    return;
  }
  tir::pre_order_visit(body, [&](const PrimExpr& e) {
    if (e->kind == tir::ExprKind::Reduce)
      throw_error("compute '", name,
                  "' uses a reduction below the top of its body (make it a compute of its own)");
  });
}

}  // namespace

TensorNode::~TensorNode() {
  if (buffer) TensorRegistry::global().remove(this);
}

PrimExpr Tensor::at(std::vector<PrimExpr> indices) const {
  ANVIL_ICHECK(get(), "indexing a null tensor");
  if (int(indices.size()) != ndim())
    throw_error("tensor '", name(), "' has ", ndim(), " dimensions but is indexed with ",
                indices.size());
  return tir::load(get()->buffer, as_index_exprs(std::move(indices), "tensor '" + name() + "'"));
}

const std::vector<PrimExpr>& Tensor::shape() const { return get()->shape; }
DataType Tensor::dtype() const { return get()->dtype; }
const std::string& Tensor::name() const { return get()->name; }

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, std::string name) {
  if (dtype.is_handle() || dtype.lanes != 1)
    throw_error("placeholder '", name, "' has element type ", dtype.to_string());
  auto node = make_ref<TensorNode>();
  node->shape = as_index_exprs(std::move(shape), "tensor '" + name + "'");
  node->dtype = dtype;
  node->name = std::move(name);
  node->buffer = tir::BufferNode::make(node->name, dtype, node->shape);
  node->is_placeholder = true;
  return register_tensor(node);
}

Tensor compute(std::vector<PrimExpr> shape,
               std::function<PrimExpr(const std::vector<Var>& indices)> fcompute,
               std::string name) {
  std::vector<std::string> names = default_axis_names(shape.size());
  return compute(std::move(shape), std::move(fcompute), std::move(name), std::move(names));
}

Tensor compute(std::vector<PrimExpr> shape,
               std::function<PrimExpr(const std::vector<Var>& indices)> fcompute, std::string name,
               std::vector<std::string> axis_names) {
  if (axis_names.size() != shape.size())
    throw_error("compute '", name, "' has ", shape.size(), " dimensions but ", axis_names.size(),
                " axis names");
  auto node = make_ref<TensorNode>();
  node->shape = as_index_exprs(std::move(shape), "tensor '" + name + "'");
  std::vector<Var> vars;
  for (size_t d = 0; d < node->shape.size(); ++d) {
    vars.push_back(tir::VarNode::make(axis_names[d]));
    node->axis.push_back(
        IterVar{vars.back(), tir::Range{tir::make_int(0), node->shape[d]}, tir::IterKind::Spatial});
  }
  PrimExpr body = fcompute(vars);
  if (!body) throw_error("compute '", name, "' has an undefined body");
  if (body.dtype().lanes != 1 || body.dtype().is_handle())
    throw_error("compute '", name, "' has a body of type ", body.dtype().to_string());
  check_reduce_only_at_top(body, name);
  node->inputs = find_inputs(body, name);
  node->body = body;
  node->dtype = body.dtype();
  node->name = std::move(name);
  node->buffer = tir::BufferNode::make(node->name, node->dtype, node->shape);
  node->is_placeholder = false;
  return register_tensor(node);
}

IterVar reduce_axis(PrimExpr extent, std::string name) {
  return reduce_axis(tir::Range{tir::make_int(0), std::move(extent)}, std::move(name));
}

IterVar reduce_axis(tir::Range dom, std::string name) {
  if (!dom.min || !dom.extent) throw_error("reduce axis '", name, "' has an undefined range");
  std::vector<PrimExpr> bounds =
      as_index_exprs({std::move(dom.min), std::move(dom.extent)}, "reduce axis '" + name + "'");
  return IterVar{tir::VarNode::make(std::move(name)), tir::Range{bounds[0], bounds[1]},
                 tir::IterKind::Reduce};
}

}  // namespace anvil::te
