// ToMixedPrecision: the products that carry a network's multiply-adds (nn.conv2d, nn.dense,
// nn.matmul) take bfloat16 operands and keep float32 results; everything else, the
// numerically sensitive softmax, norms and reductions among it, stays float32, and so do the
// additions of biases and residuals after each product (docs/precision.md). Constant weights are
// rounded here, at compile time, so that the layout pass packs bfloat16 weights; the data gets a
// cast, which fuses into the kernel that produces it.
//
// A product is taken only where the target's bfloat16 kernels take it: float32 operands, a
// constant weight, an even number of input channels (the dot-product step sums channel pairs);
// for a convolution one group, NCHW / OIHW and static channels and image size (the batch may be
// a size variable); a matmul without transposes. The rest stays float32 whole.
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/support/half.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

const ir::TensorTypeNode* float32_tensor(const ir::Expr& e) {
  const auto* t = ir::as<ir::TensorTypeNode>(e->checked_type);
  return t && t->dtype == DataType::float32() && t->shape ? t : nullptr;
}

bool float32_result(const std::optional<DataType>& out_dtype) {
  return !out_dtype || *out_dtype == DataType::float32();
}

// The input channels of the product's weight when the call can run in bfloat16; nullopt
// otherwise.
std::optional<int64_t> reduced_channels(const ir::CallNode& call) {
  if (call.args.size() != 2) return std::nullopt;
  const ir::TensorTypeNode* data = float32_tensor(call.args[0]);
  const Tensor* weight = ir::constant_data(call.args[1]);
  if (!data || !weight || weight->dtype() != DataType::float32()) return std::nullopt;
  const std::vector<int64_t> w = weight->shape_vector();
  const std::string& op = call.op()->name;
  if (op == "nn.conv2d") {
    const auto& a = detail::attrs_or_default<ir::Conv2DAttrs>(call);
    if (a.data_layout != "NCHW" || a.kernel_layout != "OIHW" ||
        !(a.out_layout.empty() || a.out_layout == "NCHW") || a.groups != 1 ||
        !float32_result(a.out_dtype) || w.size() != 4 || data->shape->size() != 4)
      return std::nullopt;
    for (size_t i = 1; i < 4; ++i)
      if (!(*data->shape)[i].is_static()) return std::nullopt;
    return w[1];
  }
  if (w.size() != 2 || data->shape->empty() || !data->shape->back().is_static())
    return std::nullopt;
  if (op == "nn.dense") {
    if (!float32_result(detail::attrs_or_default<ir::DenseAttrs>(call).out_dtype))
      return std::nullopt;
    return w[1];
  }
  const auto& a = detail::attrs_or_default<ir::MatmulAttrs>(call);
  if (a.transpose_a || a.transpose_b || !float32_result(a.out_dtype)) return std::nullopt;
  return w[0];
}

Tensor to_bfloat16(const Tensor& t) {
  const Tensor compact = t.is_contiguous() ? t : t.copy();
  Tensor out = Tensor::empty(compact.shape_vector(), DataType::bfloat16());
  const auto* src = static_cast<const float*>(compact.data());
  auto* dst = static_cast<uint16_t*>(out.data());
  for (int64_t i = 0; i < compact.numel(); ++i) dst[i] = float_to_bfloat16(src[i]);
  return out;
}

class MixedPrecision : public detail::TypedMutator {
 public:
  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    ir::Expr rewritten = detail::TypedMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(rewritten);
    const ir::OpNode* op = call ? call->op() : nullptr;
    if (!op || (op->name != "nn.conv2d" && op->name != "nn.dense" && op->name != "nn.matmul"))
      return rewritten;
    std::optional<int64_t> channels = reduced_channels(*call);
    if (!channels || *channels % 2 != 0) return rewritten;
    // One cast per value, however many products read it.
    ir::Expr& data = casts_[call->args[0].get()];
    if (!data)
      data = ir::call_op("cast", {call->args[0]},
                         ir::make_op_attrs("cast", {{"dtype", DataType::bfloat16()}}));
    ir::Expr weight = ir::ConstantNode::make(to_bfloat16(*ir::constant_data(call->args[1])));
    Ref<ir::AttrsNode> attrs = call->attrs ? call->attrs->clone() : op->def->default_attrs->clone();
    attrs->set_field("out_dtype", DataType::float32());
    return ir::call_op(op->name, {data, weight}, ir::Attrs(attrs));
  }

 private:
  std::unordered_map<const ir::ExprNode*, ir::Expr> casts_;
};

bool is_bf16_cast(const ir::CallNode& call) {
  const auto* a = dynamic_cast<const ir::CastAttrs*>(call.attrs.get());
  return call.op() && call.op()->name == "cast" && a && a->dtype == DataType::bfloat16();
}

// A float32 value that a product reads in bfloat16 and an elementwise op reads too (a residual
// block's output: the next block's convolution and its residual addition) is stored once, in
// bfloat16: the elementwise reader takes the bfloat16 value widened, so that the rounding
// fuses into the value's producer and no kernel of its own re-reads the float32 tensor to
// round it. The widening is exact; the reader sees the value the products see.
class StoreOnceInBf16 : public detail::TypedMutator {
 public:
  explicit StoreOnceInBf16(const ir::Expr& fn) {
    ir::post_order_visit(fn, [&](const ir::Expr& e) {
      const auto* call = ir::as<ir::CallNode>(e);
      if (call && is_bf16_cast(*call) && float32_tensor(call->args[0]))
        rounded_[call->args[0].get()] = e;
    });
  }

  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    ir::Expr rewritten = detail::TypedMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(rewritten);
    const ir::OpNode* op = call ? call->op() : nullptr;
    static const std::set<std::string> elementwise = {"add",     "subtract", "multiply",
                                                      "maximum", "minimum",  "nn.relu"};
    if (!op || !elementwise.count(op->name)) return rewritten;
    std::vector<ir::Expr> args = call->args;
    bool changed = false;
    for (size_t i = 0; i < args.size(); ++i) {
      auto it = rounded_.find(node->args[i].get());
      if (it == rounded_.end()) continue;
      args[i] = ir::call_op("cast", {mutate(it->second)},
                            ir::make_op_attrs("cast", {{"dtype", DataType::float32()}}));
      changed = true;
    }
    if (!changed) return rewritten;
    return ir::call_op(op->name, args, call->attrs);
  }

 private:
  std::unordered_map<const ir::ExprNode*, ir::Expr> rounded_;
};

}  // namespace

ir::IRModule to_mixed_precision(const ir::IRModule& mod) {
  ir::IRModule mixed = detail::mutate_graph_functions(mod, [] { return MixedPrecision(); });
  return detail::mutate_graph_functions(mixed,
                                        [](const ir::Expr& fn) { return StoreOnceInBf16(fn); });
}

}  // namespace anvil::transform
