// Converters that pick, order and count elements: Gather, GatherElements,
// GatherND, Compress, OneHot, TopK, NonZero, CumSum and Unique.
#include <optional>

#include "frontend/onnx/convert_tensor.h"

namespace anvil::frontend::onnx_import::tensor {

using namespace ir;

namespace {

bool is_integer_type(const TensorTypeNode& t) { return t.dtype.is_int() || t.dtype.is_uint(); }

// Gather of constant positions from shape_of(x) where x's dims at those positions are static:
// a constant, though other dims are known only at run time (exporters write Shape -> Gather ->
// Equal for "is this dim 1?", which then folds, and an If on it takes one branch).
std::optional<Expr> static_dims_of_shape(ConvertContext& ctx) {
  const auto* call = as<CallNode>(ctx.input(0));
  if (!call || !call->op() || call->op()->name != "shape_of" || ctx.attr_int("axis", 0) != 0)
    return std::nullopt;
  std::optional<Tensor> positions = ctx.input_constant(1);
  const auto* shape_type = as<TensorTypeNode>(ctx.typed(ctx.input(0))->checked_type);
  const auto* data = as<TensorTypeNode>(call->args[0]->checked_type);
  if (!positions || !shape_type || !data || !data->shape) return std::nullopt;
  const int64_t rank = int64_t(data->shape->size());
  Tensor dims = Tensor::empty(positions->shape_vector(), shape_type->dtype);
  for (int64_t i = 0; i < positions->numel(); ++i) {
    int64_t at = int64_t(positions->get_as_double(i));
    if (at < 0) at += rank;
    if (at < 0 || at >= rank) return std::nullopt;
    std::optional<int64_t> dim = (*data->shape)[size_t(at)].as_int();
    if (!dim) return std::nullopt;
    dims.set_from_double(i, double(*dim));
  }
  return ctx.constant(dims);
}

// ONNX indices lie in [-n, n); "wrap" maps exactly those onto [0, n).
std::vector<Expr> convert_gather(ConvertContext& ctx) {
  if (std::optional<Expr> dims = static_dims_of_shape(ctx)) return {*dims};
  return {ctx.op("take", {ctx.input(0), ctx.input(1)},
                 {{"axis", ctx.attr_int("axis", 0)}, {"mode", std::string("wrap")}})};
}

std::vector<Expr> convert_gather_elements(ConvertContext& ctx) {
  return {ctx.op("gather", {ctx.input(0), ctx.input(1)}, {{"axis", ctx.attr_int("axis", 0)}})};
}

// ONNX keeps each index tuple on the last axis of indices, the IR on the first.
Expr tuples_first(ConvertContext& ctx, size_t input) {
  int64_t rank = int64_t(ctx.input_tensor(input).shape->size());
  if (rank < 1) ctx.fail("indices must have rank >= 1");
  std::vector<int64_t> perm{rank - 1};
  for (int64_t i = 0; i + 1 < rank; ++i) perm.push_back(i);
  return ctx.op("transpose", {ctx.input(input)}, {{"axes", perm}});
}

// GatherND-11; GatherND-12 adds batch_dims.
std::vector<Expr> convert_gather_nd(ConvertContext& ctx) {
  return {ctx.op("gather_nd", {ctx.input(0), tuples_first(ctx, 1)},
                 {{"batch_dims", ctx.attr_int("batch_dims", 0)}})};
}

// Compress keeps the slices along axis (of the flattened input without one)
// where the condition holds: a take of the condition's non-zero positions.
std::vector<Expr> convert_compress(ConvertContext& ctx) {
  Expr positions = ctx.op("nonzero", {ctx.input(1)});
  positions = ctx.op("reshape", {positions}, {{"newshape", std::vector<int64_t>{-1}}});
  std::vector<std::pair<std::string, AttrValue>> attrs{{"mode", std::string("fast")}};
  if (ctx.has_attr("axis")) attrs.push_back({"axis", ctx.attr_int("axis", 0)});
  return {ctx.op("take", {ctx.input(0), positions}, attrs)};
}

// OneHot: values holds (off, on); depth may be any numeric scalar, indices
// any numeric tensor, both truncated to integers.
std::vector<Expr> convert_one_hot(ConvertContext& ctx) {
  Expr indices = ctx.input(0);
  if (!is_integer_type(ctx.input_tensor(0))) indices = as_int64(ctx, indices);
  auto pick = [&](int64_t i) {
    return ctx.op("take", {ctx.input(2), int64_scalar(ctx, i)},
                  {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
  };
  Expr off = pick(0), on = pick(1);
  int64_t axis = ctx.attr_int("axis", -1);
  if (std::optional<Tensor> depth = ctx.input_constant(1)) {
    if (depth->numel() != 1) ctx.fail("depth must hold one value");
    return {ctx.op("one_hot", {indices, on, off},
                   {{"depth", int64_t(depth->get_as_double(0))}, {"axis", axis}})};
  }
  return {ctx.op("dyn.one_hot", {indices, on, off, as_int64(ctx, ctx.input(1))}, {{"axis", axis}})};
}

// TopK-1 takes k as an attribute, TopK-10 as an input; TopK-11 adds largest
// (and sorted, which is always honoured: the result comes sorted).
std::vector<Expr> topk(ConvertContext& ctx, std::optional<int64_t> k) {
  std::vector<std::pair<std::string, AttrValue>> attrs{
      {"axis", ctx.attr_int("axis", -1)}, {"is_ascend", ctx.attr_int("largest", 1) == 0}};
  Expr result;
  // The attribute's k < 1 means the whole axis; ONNX's k = 0 selects nothing.
  if (k && *k >= 1) {
    attrs.push_back({"k", *k});
    result = ctx.op("topk", {ctx.input(0)}, attrs);
  } else {
    Expr k_value = k ? int64_scalar(ctx, *k) : as_int64(ctx, ctx.input(1));
    result = ctx.op("dyn.topk", {ctx.input(0), k_value}, attrs);
  }
  return {tuple_item(ctx, result, 0), tuple_item(ctx, result, 1)};
}

std::vector<Expr> convert_topk_v1(ConvertContext& ctx) { return topk(ctx, ctx.required_int("k")); }

std::vector<Expr> convert_topk(ConvertContext& ctx) {
  if (ctx.input_constant(1)) {
    std::vector<int64_t> k = ctx.constant_ints(1, "k");
    if (k.size() != 1) ctx.fail("k must hold one value");
    return topk(ctx, k[0]);
  }
  return topk(ctx, std::nullopt);
}

std::vector<Expr> convert_nonzero(ConvertContext& ctx) {
  return {ctx.op("nonzero", {ctx.input(0)})};
}

// CumSum, CumProd: the axis is a scalar input.
ConverterFn convert_scan(std::string op) {
  return [op](ConvertContext& ctx) -> std::vector<Expr> {
    bool exclusive = ctx.attr_int("exclusive", 0) != 0;
    bool reverse = ctx.attr_int("reverse", 0) != 0;
    if (ctx.input_constant(1)) {
      std::vector<int64_t> axis = ctx.constant_ints(1, "axis");
      if (axis.size() != 1) ctx.fail("axis must hold one value");
      return {ctx.op(op, {ctx.input(0)},
                     {{"axis", axis[0]}, {"exclusive", exclusive}, {"reverse", reverse}})};
    }
    return {ctx.op("dyn." + op, {ctx.input(0), ctx.input(1)},
                   {{"exclusive", exclusive}, {"reverse", reverse}})};
  };
}

std::vector<Expr> convert_unique(ConvertContext& ctx) {
  std::vector<std::pair<std::string, AttrValue>> attrs{{"sorted", ctx.attr_int("sorted", 1) != 0}};
  if (ctx.has_attr("axis")) attrs.push_back({"axis", ctx.attr_int("axis", 0)});
  Expr result = ctx.op("unique", {ctx.input(0)}, attrs);
  std::vector<Expr> outputs;
  for (int i = 0; i < 4; ++i) outputs.push_back(tuple_item(ctx, result, i));
  return outputs;
}

}  // namespace

void register_index_converters(ConverterTable& table) {
  table.add("Gather", 1, convert_gather);
  table.add("GatherElements", 11, convert_gather_elements);
  table.add("GatherND", 11, convert_gather_nd);
  table.add("Compress", 9, convert_compress);
  table.add("OneHot", 9, convert_one_hot);
  table.add("TopK", 1, convert_topk_v1);
  table.add("TopK", 10, convert_topk);
  table.add("NonZero", 9, convert_nonzero);
  table.add("CumSum", 11, convert_scan("cumsum"));
  table.add("CumProd", 26, convert_scan("cumprod"));
  table.add("Unique", 11, convert_unique);
}

}  // namespace anvil::frontend::onnx_import::tensor
