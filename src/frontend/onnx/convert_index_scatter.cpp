// Converters that place elements: Scatter (deprecated), ScatterElements,
// ScatterND and Col2Im.
#include "frontend/onnx/convert_tensor.h"

namespace anvil::frontend::onnx_import::tensor {

using namespace ir;

namespace {

// ONNX's reduction names; "none" is the IR's "update".
std::string reduction(ConvertContext& ctx) {
  std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return "update";
  if (r == "add" || r == "mul" || r == "min" || r == "max") return r;
  ctx.fail("attribute 'reduction' = \"", r, "\" is not none, add, mul, min or max");
}

// Scatter-9 and ScatterElements-11 replace; ScatterElements-16 adds add and
// mul, ScatterElements-18 min and max.
std::vector<Expr> convert_scatter_elements(ConvertContext& ctx) {
  return {ctx.op("scatter_elements", {ctx.input(0), ctx.input(1), ctx.input(2)},
                 {{"axis", ctx.attr_int("axis", 0)}, {"reduction", reduction(ctx)}})};
}

// ONNX keeps each index tuple on the last axis of indices, the IR on the
// first; the updates' layout (index dims, then data's trailing dims) agrees.
std::vector<Expr> convert_scatter_nd(ConvertContext& ctx) {
  int64_t rank = int64_t(ctx.input_tensor(1).shape->size());
  if (rank < 1) ctx.fail("indices must have rank >= 1");
  std::vector<int64_t> perm{rank - 1};
  for (int64_t i = 0; i + 1 < rank; ++i) perm.push_back(i);
  Expr indices = ctx.op("transpose", {ctx.input(1)}, {{"axes", perm}});
  return {ctx.op("scatter_nd", {ctx.input(0), indices, ctx.input(2)}, {{"mode", reduction(ctx)}})};
}

// Col2Im: static shapes give col2im, run-time ones dyn.col2im.
std::vector<Expr> convert_col2im(ConvertContext& ctx) {
  std::vector<std::pair<std::string, AttrValue>> attrs{{"dilations", ctx.attr_ints("dilations")},
                                                       {"pads", ctx.attr_ints("pads")},
                                                       {"strides", ctx.attr_ints("strides")}};
  if (ctx.input_constant(1) && ctx.input_constant(2)) {
    attrs.push_back({"image_shape", ctx.constant_ints(1, "image_shape")});
    attrs.push_back({"block_shape", ctx.constant_ints(2, "block_shape")});
    return {ctx.op("col2im", {ctx.input(0)}, attrs)};
  }
  return {ctx.op("dyn.col2im",
                 {ctx.input(0), as_int64(ctx, ctx.input(1)), as_int64(ctx, ctx.input(2))}, attrs)};
}

}  // namespace

void register_scatter_converters(ConverterTable& table) {
  table.add("Scatter", 9, convert_scatter_elements);
  table.add("ScatterElements", 11, convert_scatter_elements);
  table.add("ScatterND", 11, convert_scatter_nd);
  table.add("Col2Im", 18, convert_col2im);
}

}  // namespace anvil::frontend::onnx_import::tensor
