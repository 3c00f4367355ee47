// Activation functions. All keep their input's type and fuse as elementwise
// ops, except prelu, whose per-channel slope broadcasts along one axis.
#include "anvil/ir/attrs/nn_activation.h"

#include "ir/op/dtype_check.h"
#include "ir/op/families.h"

namespace anvil::ir {

namespace {

using relation::DtypeClass;

// The input's own type, once its dtype is known to be in the class.
TypeRelation same_type_relation(DtypeClass input) {
  return [input](const RelationArgs& args) -> Type {
    relation::expect_dtype_class(args, 0, input);
    return args.inputs[0];
  };
}

Type prelu_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<PReluAttrs>();
  relation::expect_dtype_class(args, 0, DtypeClass::Float);
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& alpha = args.tensor(1);
  int64_t axis = relation::normalize_axis(attrs.axis, data.ndim());
  const Dim& channels = (*data.shape)[axis];
  if (alpha.dtype != data.dtype)
    throw_error(args.arg_name(1), " must have the dtype of data, got ", relation::describe(alpha),
                " for data ", relation::describe(data));
  relation::expect_rank(alpha, 1, args.arg_name(1));
  relation::expect_dim_equal((*alpha.shape)[0], channels,
                             str_cat(args.arg_name(1), " length (one slope per channel of axis ",
                                     axis, " of data ", relation::describe(data), ")"));
  return args.inputs[0];
}

Type gelu_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<GeluAttrs>();
  if (attrs.approximate != "none" && attrs.approximate != "tanh")
    throw_error("attribute 'approximate' = \"", attrs.approximate,
                "\" must be \"none\" or \"tanh\"");
  relation::expect_dtype_class(args, 0, DtypeClass::Float);
  return args.inputs[0];
}

Type softplus_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<SoftplusAttrs>();
  // The result is divided by beta.
  if (attrs.beta == 0.0) throw_error("attribute 'beta' = 0 must be non-zero");
  relation::expect_dtype_class(args, 0, DtypeClass::Float);
  return args.inputs[0];
}

}  // namespace

void register_nn_activation_ops(OpTable& table) {
  table.add("nn.relu")
      .describe("max(x, 0)")
      .inputs({"data"})
      .type_relation(same_type_relation(DtypeClass::Numeric))
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.leaky_relu")
      .describe("x > 0 ? x : alpha * x")
      .inputs({"data"})
      .attrs<LeakyReluAttrs>()
      .type_relation(same_type_relation(DtypeClass::Float))
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.prelu")
      .describe("x > 0 ? x : alpha[c] * x, one slope per channel c of axis")
      .inputs({"data", "alpha"})
      .attrs<PReluAttrs>()
      .type_relation(prelu_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("nn.elu")
      .describe("x > 0 ? x : alpha * (exp(x) - 1)")
      .inputs({"data"})
      .attrs<EluAttrs>()
      .type_relation(same_type_relation(DtypeClass::Float))
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.selu")
      .describe("gamma * (x > 0 ? x : alpha * (exp(x) - 1))")
      .inputs({"data"})
      .attrs<SeluAttrs>()
      .type_relation(same_type_relation(DtypeClass::Float))
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.gelu")
      .describe("x * Phi(x), exactly with erf or approximated with tanh")
      .inputs({"data"})
      .attrs<GeluAttrs>()
      .type_relation(gelu_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.softplus")
      .describe("log(1 + exp(beta * x)) / beta; x where beta * x > threshold")
      .inputs({"data"})
      .attrs<SoftplusAttrs>()
      .type_relation(softplus_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.hard_sigmoid")
      .describe("max(0, min(1, alpha * x + beta))")
      .inputs({"data"})
      .attrs<HardSigmoidAttrs>()
      .type_relation(same_type_relation(DtypeClass::Float))
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.hard_swish")
      .describe("x * max(0, min(1, x / 6 + 1 / 2))")
      .inputs({"data"})
      .type_relation(same_type_relation(DtypeClass::Float))
      .fusion_pattern(OpPattern::ElemWise);
  table.add("nn.mish")
      .describe("x * tanh(softplus(x))")
      .inputs({"data"})
      .type_relation(same_type_relation(DtypeClass::Float))
      .fusion_pattern(OpPattern::ElemWise);
}

}  // namespace anvil::ir
