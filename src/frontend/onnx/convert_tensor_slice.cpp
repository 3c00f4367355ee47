// Converters that join, split and slice: Concat, Split, Slice,
// ReverseSequence, Trilu and Einsum.
#include <algorithm>
#include <numeric>

#include "frontend/onnx/convert_tensor.h"

namespace anvil::frontend::onnx_import::tensor {

using namespace ir;

namespace {

std::vector<Expr> convert_concat(ConvertContext& ctx) {
  std::vector<Expr> parts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) parts.push_back(ctx.input(i));
  // Concat-1 defaults the axis to 1; from Concat-4 on it is required.
  int64_t axis = ctx.opset() < 4 ? ctx.attr_int("axis", 1) : ctx.required_int("axis");
  return {ctx.op("concatenate", {ctx.typed(TupleNode::make(parts))}, {{"axis", axis}})};
}

// ---------------------------------------------------------------- Split

std::vector<Expr> tuple_items(ConvertContext& ctx, const Expr& tuple, int count) {
  std::vector<Expr> items;
  for (int i = 0; i < count; ++i) items.push_back(tuple_item(ctx, tuple, i));
  return items;
}

// Part sizes known at import time become split points.
std::vector<Expr> split_sizes(ConvertContext& ctx, int64_t axis, const std::vector<int64_t>& sizes,
                              int outputs) {
  if (int64_t(sizes.size()) != outputs)
    ctx.fail("split ", shape_to_string(sizes), " gives ", sizes.size(), " parts for ", outputs,
             " outputs");
  const TensorTypeNode& data = ctx.input_tensor(0);
  int64_t rank = int64_t(data.shape->size());
  if (axis < -rank || axis >= rank) ctx.fail("axis ", axis, " is out of range for rank ", rank);
  std::optional<int64_t> whole = (*data.shape)[size_t(axis < 0 ? axis + rank : axis)].as_int();
  int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
  for (int64_t s : sizes)
    if (s < 0) ctx.fail("split ", shape_to_string(sizes), " has a negative size");
  if (whole && total != *whole)
    ctx.fail("split ", shape_to_string(sizes), " adds up to ", total, ", not the size ", *whole,
             " of axis ", axis);
  std::vector<int64_t> points;
  int64_t at = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) points.push_back(at += sizes[i]);
  Expr parts = ctx.op("split", {ctx.input(0)}, {{"indices", points}, {"axis", axis}});
  return tuple_items(ctx, parts, outputs);
}

// Sizes known only at run time: each part is a dyn.strided_slice between
// running sums of the sizes.
std::vector<Expr> split_runtime(ConvertContext& ctx, int64_t axis, int outputs) {
  Expr sizes = as_int64(ctx, ctx.input(1));
  Expr ends = ctx.op("cumsum", {sizes}, {{"axis", int64_t(0)}});
  Expr begins = ctx.op("cumsum", {sizes}, {{"axis", int64_t(0)}, {"exclusive", true}});
  std::vector<Expr> parts;
  for (int64_t i = 0; i < outputs; ++i) {
    auto pick = [&](const Expr& v) {
      return ctx.op("strided_slice", {v},
                    {{"begin", std::vector<int64_t>{i}}, {"end", std::vector<int64_t>{i + 1}}});
    };
    parts.push_back(
        ctx.op("dyn.strided_slice", {ctx.input(0), pick(begins), pick(ends), int64_vector(ctx, {1}),
                                     int64_vector(ctx, {axis})}));
  }
  return parts;
}

// Equal parts; from Split-18 on, a size the count does not divide gives
// parts of ceil(size / count) with a smaller last one.
std::vector<Expr> split_equal(ConvertContext& ctx, int64_t axis, int outputs) {
  const TensorTypeNode& data = ctx.input_tensor(0);
  int64_t rank = int64_t(data.shape->size());
  if (axis < -rank || axis >= rank) ctx.fail("axis ", axis, " is out of range for rank ", rank);
  std::optional<int64_t> whole = (*data.shape)[size_t(axis < 0 ? axis + rank : axis)].as_int();
  if (whole && *whole % outputs != 0 && ctx.opset() >= 18) {
    int64_t chunk = (*whole + outputs - 1) / outputs;
    std::vector<int64_t> sizes;
    for (int i = 0; i < outputs; ++i)
      sizes.push_back(std::clamp(*whole - i * chunk, int64_t(0), chunk));
    return split_sizes(ctx, axis, sizes, outputs);
  }
  Expr parts = ctx.op("split", {ctx.input(0)}, {{"sections", int64_t(outputs)}, {"axis", axis}});
  return tuple_items(ctx, parts, outputs);
}

// Sizes from input 1, constant or known only at run time.
std::vector<Expr> split_by_input(ConvertContext& ctx, int64_t axis, int outputs) {
  if (ctx.input_constant(1)) return split_sizes(ctx, axis, ctx.constant_ints(1, "split"), outputs);
  return split_runtime(ctx, axis, outputs);
}

// Split-1: sizes as an attribute or as a second input.
std::vector<Expr> convert_split_v1(ConvertContext& ctx) {
  int outputs = ctx.node().output_size();
  int64_t axis = ctx.attr_int("axis", 0);
  if (ctx.has_attr("split")) return split_sizes(ctx, axis, ctx.attr_ints("split"), outputs);
  if (ctx.has_input(1)) return split_by_input(ctx, axis, outputs);
  return split_equal(ctx, axis, outputs);
}

// Split-2 and Split-11: sizes as an attribute only.
std::vector<Expr> convert_split_v2(ConvertContext& ctx) {
  int outputs = ctx.node().output_size();
  int64_t axis = ctx.attr_int("axis", 0);
  if (ctx.has_attr("split")) return split_sizes(ctx, axis, ctx.attr_ints("split"), outputs);
  return split_equal(ctx, axis, outputs);
}

// Split-13: sizes as an optional input. Split-18 adds num_outputs (and
// uneven parts, see split_equal).
std::vector<Expr> convert_split(ConvertContext& ctx) {
  int outputs = ctx.node().output_size();
  int64_t axis = ctx.attr_int("axis", 0);
  if (ctx.has_input(1)) return split_by_input(ctx, axis, outputs);
  if (ctx.has_attr("num_outputs") && ctx.attr_int("num_outputs", 0) != outputs)
    ctx.fail("attribute 'num_outputs' = ", ctx.attr_int("num_outputs", 0), " but the node has ",
             outputs, " outputs");
  return split_equal(ctx, axis, outputs);
}

// ---------------------------------------------------------------- Slice

std::vector<Expr> convert_slice_v1(ConvertContext& ctx) {
  return {ctx.op("strided_slice", {ctx.input(0)},
                 {{"begin", ctx.attr_ints("starts")},
                  {"end", ctx.attr_ints("ends")},
                  {"axes", ctx.attr_ints("axes")}})};
}

// Slice-10: starts, ends, axes and steps are inputs; the last two optional.
std::vector<Expr> convert_slice(ConvertContext& ctx) {
  bool all_constant = ctx.input_constant(1) && ctx.input_constant(2) &&
                      (!ctx.has_input(3) || ctx.input_constant(3)) &&
                      (!ctx.has_input(4) || ctx.input_constant(4));
  if (all_constant) {
    std::vector<int64_t> begin = ctx.constant_ints(1, "starts");
    std::vector<int64_t> axes;
    if (ctx.has_input(3))
      axes = ctx.constant_ints(3, "axes");
    else
      for (size_t i = 0; i < begin.size(); ++i) axes.push_back(int64_t(i));
    std::vector<int64_t> strides =
        ctx.has_input(4) ? ctx.constant_ints(4, "steps") : std::vector<int64_t>(begin.size(), 1);
    return {ctx.op("strided_slice", {ctx.input(0)},
                   {{"begin", begin},
                    {"end", ctx.constant_ints(2, "ends")},
                    {"strides", strides},
                    {"axes", axes}})};
  }
  int64_t count = static_length(ctx, 1, "starts");
  std::vector<int64_t> default_axes(static_cast<size_t>(count));
  std::iota(default_axes.begin(), default_axes.end(), int64_t(0));
  Expr axes = ctx.has_input(3) ? as_int64(ctx, ctx.input(3)) : int64_vector(ctx, default_axes);
  Expr steps = ctx.has_input(4) ? as_int64(ctx, ctx.input(4))
                                : int64_vector(ctx, std::vector<int64_t>(size_t(count), 1));
  return {ctx.op("dyn.strided_slice", {ctx.input(0), as_int64(ctx, ctx.input(1)),
                                       as_int64(ctx, ctx.input(2)), steps, axes})};
}

// ---------------------------------------------------------------- others

std::vector<Expr> convert_reverse_sequence(ConvertContext& ctx) {
  return {ctx.op(
      "reverse_sequence", {ctx.input(0), ctx.input(1)},
      {{"seq_axis", ctx.attr_int("time_axis", 0)}, {"batch_axis", ctx.attr_int("batch_axis", 1)}})};
}

std::vector<Expr> convert_trilu(ConvertContext& ctx) {
  Expr k = ctx.has_input(1) ? ctx.input(1) : int64_scalar(ctx, 0);
  return {ctx.op("trilu", {ctx.input(0), k}, {{"upper", ctx.attr_int("upper", 1) != 0}})};
}

std::vector<Expr> convert_einsum(ConvertContext& ctx) {
  std::vector<Expr> operands;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) operands.push_back(ctx.input(i));
  return {ctx.op("einsum", {ctx.typed(TupleNode::make(operands))},
                 {{"equation", ctx.attr_string("equation", "")}})};
}

}  // namespace

void register_slice_converters(ConverterTable& table) {
  table.add("Concat", 1, convert_concat);
  table.add("Split", 1, convert_split_v1);
  table.add("Split", 2, convert_split_v2);
  table.add("Split", 13, convert_split);
  table.add("Split", 18, convert_split);
  table.add("Slice", 1, convert_slice_v1);
  table.add("Slice", 10, convert_slice);
  table.add("ReverseSequence", 10, convert_reverse_sequence);
  table.add("Trilu", 14, convert_trilu);
  table.add("Einsum", 12, convert_einsum);
}

}  // namespace anvil::frontend::onnx_import::tensor
