// Pad, DepthToSpace and SpaceToDepth.
#include <cstring>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

// The constant fill of Pad as a scalar of the data's dtype: the value
// attribute before opset 11, the optional constant_value input after.
Expr pad_value(ConvertContext& ctx, DataType dtype) {
  if (ctx.opset() < 11 || !ctx.has_input(2)) {
    return scalar_constant(ctx, ctx.opset() < 11 ? ctx.attr_float("value", 0.0) : 0.0, dtype);
  }
  if (std::optional<Tensor> value = ctx.input_constant(2)) {
    if (value->numel() != 1) ctx.fail("constant_value must hold one value, has ", value->numel());
    // Copied bytewise so that 64-bit integers keep every bit.
    Tensor scalar = Tensor::empty({}, value->dtype());
    Tensor compact = value->is_contiguous() ? *value : value->copy();
    std::memcpy(scalar.data(), compact.data(), size_t(value->dtype().bytes()));
    return ctx.constant(scalar);
  }
  if (ctx.input_tensor(2).shape->empty()) return ctx.input(2);
  return ctx.op("reshape", {ctx.input(2)}, {{"newshape", std::vector<int64_t>{}}});
}

// Static padding (nn.pad) when the amounts are known, non-negative and within
// what nn.pad's modes allow; otherwise dyn.nn.pad, which also crops, wraps
// and reflects more than once.
std::vector<Expr> convert_pad(ConvertContext& ctx) {
  const TensorTypeNode& data = ctx.input_tensor(0);
  const size_t rank = data.shape->size();
  std::string mode = ctx.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    ctx.fail("attribute 'mode' = \"", mode, "\" is not one of constant, reflect, edge, wrap");
  Expr value = pad_value(ctx, data.dtype);

  std::optional<std::vector<int64_t>> pads, axes;
  Expr pads_expr, axes_expr;
  if (ctx.opset() < 11) {
    pads = ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads");
  } else {
    pads_expr = ctx.input(1);
    if (ctx.input_constant(1)) pads = ctx.constant_ints(1, "pads");
  }
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    axes_expr = ctx.input(3);
    if (ctx.input_constant(3)) axes = ctx.constant_ints(3, "axes");
  } else {
    axes.emplace();
    for (size_t k = 0; k < rank; ++k) axes->push_back(int64_t(k));
  }

  if (pads && axes) {
    if (pads->size() != 2 * axes->size())
      ctx.fail("'pads' has ", pads->size(), " values for ", axes->size(),
               " axes (it needs every begin, then every end)");
    std::vector<int64_t> pad_width(2 * rank, 0);
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + int64_t(rank) : (*axes)[i];
      if (axis < 0 || axis >= int64_t(rank)) ctx.fail("axis ", (*axes)[i], " is out of range");
      pad_width[2 * size_t(axis)] = (*pads)[i];
      pad_width[2 * size_t(axis) + 1] = (*pads)[axes->size() + i];
    }
    bool fits_static = mode != "wrap";
    for (size_t k = 0; k < rank; ++k) {
      int64_t before = pad_width[2 * k], after = pad_width[2 * k + 1];
      std::optional<int64_t> size = (*data.shape)[k].as_int();
      fits_static &= before >= 0 && after >= 0;
      if (mode == "reflect") fits_static &= size && std::max(before, after) < *size;
      if (mode == "edge") fits_static &= size && (*size > 0 || before + after == 0);
    }
    if (fits_static)
      return {
          ctx.op("nn.pad", {ctx.input(0), value}, {{"pad_width", pad_width}, {"pad_mode", mode}})};
  }
  if (!pads_expr) pads_expr = ints_constant(ctx, *pads);
  if (!axes_expr) axes_expr = ints_constant(ctx, *axes);
  return {ctx.op("dyn.nn.pad", {ctx.input(0), pads_expr, value, axes_expr}, {{"pad_mode", mode}})};
}

std::vector<Expr> convert_depth_to_space(ConvertContext& ctx) {
  return {ctx.op(
      "nn.depth_to_space", {ctx.input(0)},
      {{"block_size", ctx.required_int("blocksize")}, {"mode", ctx.attr_string("mode", "DCR")}})};
}

// SpaceToDepth; mode CRD (opset 28) orders the output channels channel-major (c, then the
// offsets in the block) instead of DCR's offset-major.
std::vector<Expr> convert_space_to_depth(ConvertContext& ctx) {
  const int64_t block = ctx.required_int("blocksize");
  const std::string mode = ctx.attr_string("mode", "DCR");
  if (mode == "DCR") return {ctx.op("nn.space_to_depth", {ctx.input(0)}, {{"block_size", block}})};
  if (mode != "CRD") ctx.fail("attribute 'mode' = \"", mode, "\" is not DCR or CRD");
  std::optional<std::vector<int64_t>> dims = tensor::static_dims(ctx, 0);
  if (!dims || dims->size() != 4) ctx.fail("mode CRD needs a 4-D input with static dims");
  const int64_t c = (*dims)[1], h = (*dims)[2], w = (*dims)[3];
  if (block <= 0 || h % block != 0 || w % block != 0)
    ctx.fail("blocksize ", block, " does not divide the spatial dims ", h, " x ", w);
  Expr split =
      ctx.op("reshape", {ctx.input(0)},
             {{"newshape", std::vector<int64_t>{0, c, h / block, block, w / block, block}}});
  Expr moved = ctx.op("transpose", {split}, {{"axes", std::vector<int64_t>{0, 1, 3, 5, 2, 4}}});
  return {ctx.op("reshape", {moved},
                 {{"newshape", std::vector<int64_t>{0, c * block * block, h / block, w / block}}})};
}

}  // namespace

void register_image_converters(ConverterTable& table) {
  table.add("Pad", 1, convert_pad);
  table.add("DepthToSpace", 1, convert_depth_to_space);
  table.add("SpaceToDepth", 1, convert_space_to_depth);
}

}  // namespace anvil::frontend::onnx_import
