// Pooling: MaxPool (with its optional Indices output), MaxUnpool, AveragePool,
// LpPool and the global pools, over 1 to 3 spatial axes.
#include "frontend/onnx/convert_nn.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

using AttrList = std::vector<std::pair<std::string, AttrValue>>;

std::string pool_op(const char* kind, size_t n) {
  return std::string("nn.") + kind + "_pool" + std::to_string(n) + "d";
}

// The window attributes every windowed pool shares.
AttrList window_attrs(const ConvertContext& ctx, size_t n) {
  if (!ctx.has_attr("kernel_shape")) ctx.fail("attribute 'kernel_shape' is required but missing");
  std::vector<int64_t> kernel = spatial_ints(ctx, "kernel_shape", n, 1);
  std::vector<int64_t> strides = spatial_ints(ctx, "strides", n, 1);
  std::vector<int64_t> dilations = spatial_ints(ctx, "dilations", n, 1);
  return {{"pool_size", kernel},
          {"strides", strides},
          {"dilation", dilations},
          {"padding", window_padding(ctx, kernel, strides, dilations)},
          {"ceil_mode", ctx.attr_int("ceil_mode", 0) != 0}};
}

// Turns row-major flat indices into the input into column-major ones over the
// spatial axes (storage_order = 1); the (N, C) plane offset stays row-major.
Expr column_major_indices(ConvertContext& ctx, Expr indices) {
  std::vector<int64_t> dims = static_spatial_dims(ctx, 0, "MaxPool with storage_order = 1");
  int64_t plane_size = 1;
  for (int64_t d : dims) plane_size *= d;
  auto constant = [&](int64_t v) { return scalar_constant(ctx, double(v), DataType::int64()); };
  Expr offset = ctx.op("floor_mod", {indices, constant(plane_size)});
  Expr result = ctx.op("subtract", {indices, offset});
  int64_t row_stride = plane_size, column_stride = 1;
  for (int64_t d : dims) {
    row_stride /= d;
    Expr coordinate =
        ctx.op("floor_mod", {ctx.op("floor_divide", {offset, constant(row_stride)}), constant(d)});
    result = ctx.op("add", {result, ctx.op("multiply", {coordinate, constant(column_stride)})});
    column_stride *= d;
  }
  return result;
}

std::vector<Expr> convert_max_pool(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  AttrList attrs = window_attrs(ctx, n);
  if (!ctx.output_requested(1)) return {ctx.op(pool_op("max", n), {ctx.input(0)}, attrs)};
  Expr both = ctx.op(pool_op("max", n) + "_with_argmax", {ctx.input(0)}, attrs);
  Expr values = ctx.typed(TupleGetItemNode::make(both, 0));
  Expr indices = ctx.typed(TupleGetItemNode::make(both, 1));
  if (ctx.attr_int("storage_order", 0) == 1 && n > 1) indices = column_major_indices(ctx, indices);
  return {values, indices};
}

std::vector<Expr> convert_average_pool(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  AttrList attrs = window_attrs(ctx, n);
  attrs.emplace_back("count_include_pad", ctx.attr_int("count_include_pad", 0) != 0);
  return {ctx.op(pool_op("avg", n), {ctx.input(0)}, attrs)};
}

// LpPool-1 stores p as a float, later versions as an int.
double p_value(const ConvertContext& ctx) {
  for (const onnx::AttributeProto& a : ctx.node().attribute())
    if (a.name() == "p")
      return a.type() == onnx::AttributeProto::FLOAT ? double(a.f()) : double(a.i());
  return 2.0;
}

std::vector<Expr> convert_lp_pool(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  AttrList attrs = window_attrs(ctx, n);
  attrs.emplace_back("p_value", p_value(ctx));
  return {ctx.op(pool_op("lp", n), {ctx.input(0)}, attrs)};
}

// Global pools: the 2-D ops where they exist, else adaptive pooling to size 1.
std::vector<Expr> convert_global(ConvertContext& ctx, const char* kind) {
  size_t n = spatial_rank(ctx, 0);
  if (n == 2) return {ctx.op(std::string("nn.global_") + kind + "_pool2d", {ctx.input(0)})};
  return {ctx.op(std::string("nn.adaptive_") + kind + "_pool" + std::to_string(n) + "d",
                 {ctx.input(0)}, {{"output_size", std::vector<int64_t>(n, 1)}})};
}

std::vector<Expr> convert_global_lp_pool(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  std::vector<int64_t> dims = static_spatial_dims(ctx, 0, "GlobalLpPool");
  return {
      ctx.op(pool_op("lp", n), {ctx.input(0)}, {{"pool_size", dims}, {"p_value", p_value(ctx)}})};
}

// MaxUnpool: the output size is output_shape when given (a run-time one needs
// dyn.nn.max_unpool*d), else what the pooling window implies.
std::vector<Expr> convert_max_unpool(ConvertContext& ctx) {
  size_t n = spatial_rank(ctx, 0);
  if (!ctx.has_attr("kernel_shape")) ctx.fail("attribute 'kernel_shape' is required but missing");
  AttrList attrs = {{"pool_size", spatial_ints(ctx, "kernel_shape", n, 1)},
                    {"strides", spatial_ints(ctx, "strides", n, 1)},
                    {"padding", ctx.attr_ints("pads", std::vector<int64_t>(2 * n, 0))}};
  if (ctx.has_input(2)) {
    if (!ctx.input_constant(2))
      return {ctx.op("dyn.nn.max_unpool" + std::to_string(n) + "d",
                     {ctx.input(0), ctx.input(1), ctx.input(2)}, attrs)};
    std::vector<int64_t> shape = ctx.constant_ints(2, "output_shape");
    if (shape.size() != n + 2)
      ctx.fail("output_shape has ", shape.size(), " dims, expected ", n + 2);
    attrs.emplace_back("output_size", std::vector<int64_t>(shape.begin() + 2, shape.end()));
  }
  return {ctx.op("nn.max_unpool" + std::to_string(n) + "d", {ctx.input(0), ctx.input(1)}, attrs)};
}

}  // namespace

void register_pool_converters(ConverterTable& table) {
  table.add("MaxPool", 1, convert_max_pool);
  table.add("AveragePool", 1, convert_average_pool);
  table.add("LpPool", 1, convert_lp_pool);
  table.add("MaxUnpool", 9, convert_max_unpool);
  table.add("GlobalMaxPool", 1, [](ConvertContext& ctx) { return convert_global(ctx, "max"); });
  table.add("GlobalAveragePool", 1, [](ConvertContext& ctx) { return convert_global(ctx, "avg"); });
  table.add("GlobalLpPool", 1, convert_global_lp_pool);
}

}  // namespace anvil::frontend::onnx_import
