// SimplifyInference: the training-time ops that are plain arithmetic at inference time are
// written out as that arithmetic. nn.batch_norm becomes a per-channel multiply and add (the
// form that fusion and FoldScaleAxis understand); nn.dropout becomes its input.
#include <cmath>

#include "anvil/ir/attrs/nn_norm.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

// The statistics and affine parameters of one batch_norm call, already rewritten.
struct BatchNormInputs {
  Expr data, gamma, beta, mean, var;
};

class InferenceSimplifier : public detail::TypedMutator {
 public:
  Expr mutate_TupleGetItem(const ir::TupleGetItemNode* node, const Expr& self) override {
    if (const ir::CallNode* bn = ir::op_call(node->tuple, "nn.batch_norm")) {
      if (Expr rewritten = rewrite_batch_norm_field(*bn, node->index)) return rewritten;
    }
    if (ir::op_call(node->tuple, "nn.dropout") && node->index == 0) {
      // Dropout is the identity at inference time.
      return mutate(ir::op_call(node->tuple, "nn.dropout")->args[0]);
    }
    return TypedMutator::mutate_TupleGetItem(node, self);
  }

  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    return TypedMutator::mutate_Function(node, self);
  }

 private:
  // Field 0 is the normalized data; fields 1 and 2 are the moving mean and variance, which
  // inference passes through unchanged. Null when the call cannot be rewritten.
  Expr rewrite_batch_norm_field(const ir::CallNode& bn, int index) {
    if (bn.args.size() != 5) return nullptr;
    if (index == 1) return mutate(bn.args[3]);
    if (index == 2) return mutate(bn.args[4]);
    if (index != 0) return nullptr;
    auto shape_type = ir::as<ir::TensorTypeNode>(bn.args[0]->checked_type);
    if (!shape_type || !shape_type->has_shape()) return nullptr;
    const auto& attrs = detail::attrs_or_default<ir::BatchNormAttrs>(bn);
    int64_t rank = shape_type->ndim();
    std::optional<int64_t> axis = detail::normalize_axis(attrs.axis, rank);
    if (!axis) return nullptr;
    BatchNormInputs in{mutate(bn.args[0]), mutate(bn.args[1]), mutate(bn.args[2]),
                       mutate(bn.args[3]), mutate(bn.args[4])};
    // Scale and shift broadcast along `axis` once they have a unit dim for every later axis.
    int64_t trailing_units = rank - *axis - 1;
    Expr scale, shift;
    if (!constant_scale_shift(in, attrs, trailing_units, scale, shift))
      graph_scale_shift(in, attrs, trailing_units, scale, shift);
    return ir::call_op("add", {ir::call_op("multiply", {in.data, scale}), shift});
  }

  // With constant statistics the scale and shift are computed here, in double precision,
  // and stored in the data's dtype with the unit dims already in place.
  static bool constant_scale_shift(const BatchNormInputs& in, const ir::BatchNormAttrs& attrs,
                                   int64_t trailing_units, Expr& scale, Expr& shift) {
    const Tensor* mean = ir::constant_data(in.mean);
    const Tensor* var = ir::constant_data(in.var);
    const Tensor* gamma = ir::constant_data(in.gamma);
    const Tensor* beta = ir::constant_data(in.beta);
    if (!mean || !var || (attrs.scale && !gamma) || (attrs.center && !beta)) return false;
    std::optional<DataType> dtype = ir::tensor_dtype(in.data);
    if (!dtype || mean->ndim() != 1) return false;
    int64_t channels = mean->numel();
    std::vector<double> m = ir::tensor_values(*mean), v = ir::tensor_values(*var);
    std::vector<double> g = attrs.scale ? ir::tensor_values(*gamma) : std::vector<double>();
    std::vector<double> b = attrs.center ? ir::tensor_values(*beta) : std::vector<double>();
    std::vector<double> scale_values(static_cast<size_t>(channels));
    std::vector<double> shift_values(static_cast<size_t>(channels));
    for (size_t c = 0; c < size_t(channels); ++c) {
      double s = 1.0 / std::sqrt(v[c] + attrs.epsilon);
      if (attrs.scale) s *= g[c];
      scale_values[c] = s;
      shift_values[c] = (attrs.center ? b[c] : 0.0) - m[c] * s;
    }
    std::vector<int64_t> shape{channels};
    shape.insert(shape.end(), size_t(trailing_units), 1);
    scale = ir::ConstantNode::make(ir::make_tensor(scale_values, shape, *dtype));
    shift = ir::ConstantNode::make(ir::make_tensor(shift_values, shape, *dtype));
    return true;
  }

  // Otherwise the same arithmetic as graph ops; FoldConstant folds whatever part is constant.
  static void graph_scale_shift(const BatchNormInputs& in, const ir::BatchNormAttrs& attrs,
                                int64_t trailing_units, Expr& scale, Expr& shift) {
    DataType dtype = ir::tensor_dtype(in.var).value_or(DataType::float32());
    Expr eps = ir::scalar_constant(attrs.epsilon, dtype);
    scale = ir::call_op("rsqrt", {ir::call_op("add", {in.var, eps})});
    if (attrs.scale) scale = ir::call_op("multiply", {scale, in.gamma});
    shift = ir::call_op("negative", {ir::call_op("multiply", {in.mean, scale})});
    if (attrs.center) shift = ir::call_op("add", {shift, in.beta});
    if (trailing_units > 0) {
      scale = expand_trailing(scale, trailing_units);
      shift = expand_trailing(shift, trailing_units);
    }
  }

  static Expr expand_trailing(const Expr& vector, int64_t count) {
    auto attrs = ir::make_attrs<ir::ExpandDimsAttrs>();
    attrs->axis = 1;
    attrs->num_newaxis = count;
    return ir::call_op("expand_dims", {vector}, attrs);
  }
};

}  // namespace

ir::IRModule simplify_inference(const ir::IRModule& mod) {
  return detail::mutate_graph_functions(mod, [] { return InferenceSimplifier(); });
}

}  // namespace anvil::transform
