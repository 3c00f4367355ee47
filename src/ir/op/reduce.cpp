// Reductions over a set of axes (sum, mean, max, argmax, norms, variance...).
// The axes come from the attrs as in TVM: an empty list reduces every axis,
// exclude reduces the axes not listed, keepdims leaves reduced axes as 1.
// The dyn.* variants take the axes as a tensor computed at run time.
#include "anvil/ir/attrs/reduce.h"

#include <optional>
#include <string>
#include <vector>

#include "ir/op/dtype_check.h"
#include "ir/op/families.h"

namespace anvil::ir {

namespace {

using relation::DtypeClass;

// Which axes of the data are reduced; throws Error on an axis out of range
// or listed twice.
template <typename AttrsT>
std::vector<bool> reduced_axes(const AttrsT& attrs, const TensorTypeNode& data) {
  int64_t rank = data.ndim();
  if (attrs.axis.empty()) return std::vector<bool>(size_t(rank), true);
  std::vector<bool> listed(size_t(rank), false);
  for (int64_t axis : attrs.axis) {
    int64_t normalized = relation::normalize_axis(axis, rank);
    if (listed[size_t(normalized)])
      throw_error("attribute 'axis' = ", attrs.axis, " names axis ", normalized, " twice for data ",
                  relation::describe(data));
    listed[size_t(normalized)] = true;
  }
  if (attrs.exclude) listed.flip();
  return listed;
}

template <typename AttrsT>
std::vector<Dim> reduced_shape(const AttrsT& attrs, const TensorTypeNode& data) {
  std::vector<bool> reduced = reduced_axes(attrs, data);
  std::vector<Dim> shape;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (!reduced[i])
      shape.push_back((*data.shape)[i]);
    else if (attrs.keepdims)
      shape.push_back(1);
  }
  return shape;
}

// A reduction of data whose result has the data's dtype, or out_dtype when given.
template <typename AttrsT>
TypeRelation reduce_relation(DtypeClass input, std::optional<DataType> out_dtype = std::nullopt) {
  return [input, out_dtype](const RelationArgs& args) -> Type {
    relation::expect_dtype_class(args, 0, input);
    const TensorTypeNode& data = args.tensor(0);
    return TensorTypeNode::make(reduced_shape(args.attrs_as<AttrsT>(), data),
                                out_dtype.value_or(data.dtype));
  };
}

// variance and std take (data, mean), the mean broadcastable to the data
// (TVM passes it reduced with keepdims).
Type variance_relation(const RelationArgs& args) {
  relation::expect_dtype_class(args, 0, DtypeClass::Float);
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& mean = args.tensor(1);
  if (mean.dtype != data.dtype)
    throw_error(args.arg_name(1), " must have the dtype of data, got ", relation::describe(mean),
                " for data ", relation::describe(data));
  const std::vector<Dim>& d = *data.shape;
  const std::vector<Dim>& m = *mean.shape;
  bool fits = m.size() <= d.size();
  for (size_t i = 0; fits && i < m.size(); ++i) {
    const Dim& md = m[m.size() - 1 - i];
    const Dim& dd = d[d.size() - 1 - i];
    // Only provable mismatches fail: a symbolic dim may turn out equal or 1.
    fits = !(md.is_int() && dd.is_int() && md.int_value() != 1 && md != dd);
  }
  if (!fits)
    throw_error(args.arg_name(1), " ", relation::describe(mean), " does not broadcast to data ",
                relation::describe(data));
  return TensorTypeNode::make(reduced_shape(args.attrs_as<VarianceAttrs>(), data), data.dtype);
}

// dyn.<reduction>: the axes are a 1-D integer tensor known only at run time
// (ONNX's Reduce* since opset 13/18 take them as an input). A kept dim is
// either the data's dim or 1, so only dims already 1 stay known; without
// keepdims the rank follows from the number of axes. No axes reduce all.
TypeRelation dynamic_reduce_relation(DtypeClass input) {
  return [input](const RelationArgs& args) -> Type {
    relation::expect_dtype_class(args, 0, input);
    const TensorTypeNode& data = args.tensor(0);
    const TensorTypeNode& axes = args.tensor(1);
    relation::expect_dtype_class(args, 1, DtypeClass::Integer);
    relation::expect_rank(axes, 1, args.arg_name(1));
    const auto& attrs = args.attrs_as<ReduceAttrs>();
    if (!attrs.axis.empty() || attrs.exclude)
      throw_error("attributes 'axis' and 'exclude' must be unset: the axes come from ",
                  args.arg_name(1));
    int64_t rank = data.ndim();
    std::optional<int64_t> count = (*axes.shape)[0].as_int();
    if (count && *count > rank)
      throw_error(args.arg_name(1), " ", relation::describe(axes), " lists more axes than data ",
                  relation::describe(data), " has");
    if (attrs.keepdims) {
      std::vector<Dim> shape;
      for (const Dim& d : *data.shape) shape.push_back(d == Dim(1) ? d : Dim::any());
      return TensorTypeNode::make(std::move(shape), data.dtype);
    }
    if (!count) return TensorTypeNode::make_unknown_rank(data.dtype);
    int64_t kept = *count == 0 ? 0 : rank - *count;
    return TensorTypeNode::make(std::vector<Dim>(size_t(kept), Dim::any()), data.dtype);
  };
}

struct ReduceOpSpec {
  const char* name;
  const char* description;
  DtypeClass input;
};

constexpr ReduceOpSpec kReduceOps[] = {
    {"sum", "sum over the axes", DtypeClass::Numeric},
    {"mean", "arithmetic mean over the axes", DtypeClass::Numeric},
    {"prod", "product over the axes", DtypeClass::Numeric},
    {"max", "largest element over the axes", DtypeClass::Any},
    {"min", "smallest element over the axes", DtypeClass::Any},
    {"all", "logical and over the axes", DtypeClass::Bool},
    {"any", "logical or over the axes", DtypeClass::Bool},
    {"logsumexp", "log(sum(exp(x))) over the axes, computed stably", DtypeClass::Float},
    {"l1_norm", "sum(abs(x)) over the axes", DtypeClass::Numeric},
    {"l2_norm", "sqrt(sum(x * x)) over the axes", DtypeClass::Float},
    {"sum_square", "sum(x * x) over the axes", DtypeClass::Numeric},
};

}  // namespace

void register_reduce_ops(OpTable& table) {
  for (const ReduceOpSpec& spec : kReduceOps) {
    table.add(spec.name)
        .describe(spec.description)
        .inputs({"data"})
        .attrs<ReduceAttrs>()
        .type_relation(reduce_relation<ReduceAttrs>(spec.input))
        .fusion_pattern(OpPattern::CommReduce);
    table.add(std::string("dyn.") + spec.name)
        .describe(std::string(spec.description) + ", the axes given as a 1-D tensor at run time")
        .inputs({"data", "axes"})
        .attrs<ReduceAttrs>()
        .type_relation(dynamic_reduce_relation(spec.input))
        // Its output dims are known only at run time: a shape function runs before it, so
        // it is fused with nothing.
        .fusion_pattern(OpPattern::Opaque);
  }
  // int64 indices as ONNX's ArgMax/ArgMin produce (TVM uses int32): the
  // importer then needs no cast, and large axes cannot overflow.
  table.add("argmax")
      .describe("index of the largest element over the axes (int64)")
      .inputs({"data"})
      .attrs<ArgReduceAttrs>()
      .type_relation(reduce_relation<ArgReduceAttrs>(DtypeClass::Numeric, DataType::int64()))
      .fusion_pattern(OpPattern::CommReduce);
  table.add("argmin")
      .describe("index of the smallest element over the axes (int64)")
      .inputs({"data"})
      .attrs<ArgReduceAttrs>()
      .type_relation(reduce_relation<ArgReduceAttrs>(DtypeClass::Numeric, DataType::int64()))
      .fusion_pattern(OpPattern::CommReduce);
  table.add("variance")
      .describe("mean of (data - mean)^2 over the axes; divides by N - 1 when unbiased")
      .inputs({"data", "mean"})
      .attrs<VarianceAttrs>()
      .type_relation(variance_relation)
      .fusion_pattern(OpPattern::CommReduce);
  table.add("std")
      .describe("square root of variance(data, mean) over the axes")
      .inputs({"data", "mean"})
      .attrs<VarianceAttrs>()
      .type_relation(variance_relation)
      .fusion_pattern(OpPattern::CommReduce);
}

}  // namespace anvil::ir
