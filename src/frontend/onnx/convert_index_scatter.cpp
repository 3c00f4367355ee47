// Converters that place elements: Scatter (deprecated), ScatterElements,
// ScatterND, TensorScatter and Col2Im.
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

// TensorScatter: the update (B, ..., S, ...) written into the cache (B, ..., M, ...) along
// `axis` from each batch row's write index on (wrapping modulo M when circular): a
// scatter_elements whose indices are write_indices[b] + s.
std::vector<Expr> convert_tensor_scatter(ConvertContext& ctx) {
  std::optional<std::vector<int64_t>> cache = static_dims(ctx, 0), update = static_dims(ctx, 1);
  if (!cache || !update || cache->size() != update->size() || cache->empty())
    ctx.fail("past_cache and update must have static dims of the same rank");
  const int64_t rank = int64_t(cache->size());
  int64_t axis = ctx.attr_int("axis", -2);
  if (axis < -rank || axis >= rank) ctx.fail("axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  if (axis == 0) ctx.fail("axis must not be the batch axis");
  const std::string mode = ctx.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    ctx.fail("attribute 'mode' = \"", mode, "\" is not linear or circular");
  for (int64_t i = 0; i < rank; ++i)
    if (i == axis ? (*update)[i] > (*cache)[i] : (*update)[i] != (*cache)[i])
      ctx.fail("the update's dim ", i, " (", (*update)[i], ") does not fit the cache's (",
               (*cache)[i], ")");
  std::vector<int64_t> along(rank, 1), per_batch(rank, 1), steps((*update)[axis]);
  along[axis] = (*update)[axis];
  per_batch[0] = -1;
  for (int64_t s = 0; s < (*update)[axis]; ++s) steps[s] = s;
  Expr index = ctx.op("reshape", {int64_vector(ctx, steps)}, {{"newshape", along}});
  if (ctx.has_input(2)) {
    Expr start = ctx.op("reshape", {as_int64(ctx, ctx.input(2))}, {{"newshape", per_batch}});
    index = ctx.op("add", {index, start});
  }
  if (mode == "circular") index = ctx.op("floor_mod", {index, int64_scalar(ctx, (*cache)[axis])});
  index = ctx.op("broadcast_to", {index}, {{"shape", *update}});
  return {ctx.op("scatter_elements", {ctx.input(0), index, ctx.input(1)},
                 {{"axis", axis}, {"reduction", std::string("update")}})};
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
  table.add("TensorScatter", 24, convert_tensor_scatter);
  table.add("Col2Im", 18, convert_col2im);
}

}  // namespace anvil::frontend::onnx_import::tensor
