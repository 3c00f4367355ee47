// Converters that give a tensor a new shape: Reshape, Transpose, Squeeze,
// Unsqueeze, Expand and Tile. Shape arguments that are constants (after
// folding) give the static ops; values known only at run time give dyn.* ops.
#include "frontend/onnx/convert_tensor.h"

#include <algorithm>

#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

void register_tensor_converters(ConverterTable& table) {
  tensor::register_reshape_converters(table);
  tensor::register_slice_converters(table);
  tensor::register_shape_converters(table);
  tensor::register_index_converters(table);
  tensor::register_scatter_converters(table);
}

namespace tensor {

Expr int64_vector(ConvertContext& ctx, const std::vector<int64_t>& values) {
  Tensor t = Tensor::empty({int64_t(values.size())}, DataType::int64());
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  return ctx.constant(t);
}

Expr int64_scalar(ConvertContext& ctx, int64_t value) {
  Tensor t = Tensor::empty({}, DataType::int64());
  *t.data_as<int64_t>() = value;
  return ctx.constant(t);
}

Expr tuple_item(ConvertContext& ctx, const Expr& tuple, int i) {
  if (const auto* folded = as<TupleNode>(tuple)) return folded->fields.at(size_t(i));
  return ctx.typed(TupleGetItemNode::make(tuple, i));
}

Expr as_int64(ConvertContext& ctx, const Expr& value) {
  if (!value->checked_type) ctx.typed(value);
  const auto* t = as<TensorTypeNode>(value->checked_type);
  if (t && t->dtype == DataType::int64()) return value;
  return ctx.op("cast", {value}, {{"dtype", DataType::int64()}});
}

std::optional<std::vector<int64_t>> static_dims(const ConvertContext& ctx, size_t i) {
  return ctx.input_tensor(i).static_shape();
}

std::vector<int64_t> known_dims(const ConvertContext& ctx, size_t i, const char* what) {
  std::optional<std::vector<int64_t>> dims = static_dims(ctx, i);
  if (!dims) ctx.fail(what, " (input ", i, ") must have static dims");
  return *dims;
}

DataType float_input(const ConvertContext& ctx, size_t i) {
  DataType t = ctx.input_tensor(i).dtype;
  if (!t.is_float()) ctx.fail("input ", i, " must be a float tensor, got ", t.to_string());
  return t;
}

int64_t static_length(const ConvertContext& ctx, size_t i, const char* what) {
  const TensorTypeNode& t = ctx.input_tensor(i);
  if (t.shape->size() != 1)
    ctx.fail(what, " (input ", i, ") must be 1-D, got ", type_to_string(ctx.input_type(i)));
  std::optional<int64_t> length = (*t.shape)[0].as_int();
  if (!length)
    ctx.fail(what, " (input ", i, ") must have a static length, got ",
             type_to_string(ctx.input_type(i)));
  return *length;
}

namespace {

// ---------------------------------------------------------------- Reshape

Expr reshape_static(ConvertContext& ctx, const std::vector<int64_t>& shape, bool allowzero) {
  for (int64_t d : shape)
    if (d < -1) ctx.fail("shape ", shape_to_string(shape), " has an entry below -1");
  return ctx.op("reshape", {ctx.input(0)}, {{"newshape", shape}, {"allowzero", allowzero}});
}

std::vector<Expr> convert_reshape_v1(ConvertContext& ctx) {
  return {reshape_static(ctx, ctx.attr_ints("shape"), false)};
}

// Reshape-5 takes the shape as an input; Reshape-14 adds allowzero.
std::vector<Expr> convert_reshape(ConvertContext& ctx) {
  bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  if (ctx.input_constant(1)) return {reshape_static(ctx, ctx.constant_ints(1, "shape"), allowzero)};
  return {ctx.op("dyn.reshape", {ctx.input(0), as_int64(ctx, ctx.input(1))},
                 {{"allowzero", allowzero}})};
}

std::vector<Expr> convert_transpose(ConvertContext& ctx) {
  return {ctx.op("transpose", {ctx.input(0)}, {{"axes", ctx.attr_ints("perm")}})};
}

// ---------------------------------------------------------------- Squeeze, Unsqueeze

// Squeeze without axes removes every unit dim. Which dims those are is
// decided here from the type, so that the result's type and value agree:
// symbolic dims are taken not to be 1 (as TVM does). With the rank unknown,
// the decision is left to run time.
Expr squeeze_unit_dims(ConvertContext& ctx) {
  const auto* t = as<TensorTypeNode>(ctx.input_type(0));
  if (!t || !t->shape) return ctx.op("dyn.squeeze", {ctx.input(0), int64_vector(ctx, {})});
  std::vector<int64_t> axes;
  for (size_t i = 0; i < t->shape->size(); ++i)
    if ((*t->shape)[i].as_int() == 1) axes.push_back(int64_t(i));
  // An empty axis list would mean "every unit dim" to the op.
  if (axes.empty()) return ctx.input(0);
  return ctx.op("squeeze", {ctx.input(0)}, {{"axis", axes}});
}

std::vector<Expr> convert_squeeze_v1(ConvertContext& ctx) {
  if (!ctx.has_attr("axes")) return {squeeze_unit_dims(ctx)};
  return {ctx.op("squeeze", {ctx.input(0)}, {{"axis", ctx.attr_ints("axes")}})};
}

// Squeeze-13: optional axes input.
std::vector<Expr> convert_squeeze(ConvertContext& ctx) {
  if (!ctx.has_input(1)) return {squeeze_unit_dims(ctx)};
  if (ctx.input_constant(1))
    return {ctx.op("squeeze", {ctx.input(0)}, {{"axis", ctx.constant_ints(1, "axes")}})};
  return {ctx.op("dyn.squeeze", {ctx.input(0), as_int64(ctx, ctx.input(1))})};
}

// ONNX's axes are positions in the output; inserting unit dims in ascending
// order of position puts each where it belongs.
Expr unsqueeze_static(ConvertContext& ctx, std::vector<int64_t> axes) {
  int64_t out_rank = int64_t(ctx.input_tensor(0).shape->size() + axes.size());
  for (int64_t& a : axes) {
    if (a < -out_rank || a >= out_rank)
      ctx.fail("axis ", a, " is out of range for an output of rank ", out_rank);
    if (a < 0) a += out_rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    ctx.fail("axes ", shape_to_string(axes), " name an axis twice");
  Expr x = ctx.input(0);
  for (int64_t a : axes) x = ctx.op("expand_dims", {x}, {{"axis", a}});
  return x;
}

std::vector<Expr> convert_unsqueeze_v1(ConvertContext& ctx) {
  return {unsqueeze_static(ctx, ctx.attr_ints("axes"))};
}

// Unsqueeze-13: axes input.
std::vector<Expr> convert_unsqueeze(ConvertContext& ctx) {
  if (ctx.input_constant(1)) return {unsqueeze_static(ctx, ctx.constant_ints(1, "axes"))};
  return {ctx.op("dyn.expand_dims", {ctx.input(0), as_int64(ctx, ctx.input(1))})};
}

// ---------------------------------------------------------------- Expand, Tile

// Expand broadcasts both ways: a 1 in the shape keeps the input's dim. With
// the result known statically it is a plain broadcast_to; otherwise the
// target is max(shape, input's shape) aligned from the right, at run time.
std::vector<Expr> convert_expand(ConvertContext& ctx) {
  Expr data = ctx.input(0);
  const TensorTypeNode& in = ctx.input_tensor(0);
  if (ctx.input_constant(1)) {
    std::vector<int64_t> shape = ctx.constant_ints(1, "shape");
    size_t rank = std::max(shape.size(), in.shape->size());
    std::vector<int64_t> out;
    bool known = true;
    for (size_t i = 0; i < rank; ++i) {
      int64_t s = i < rank - shape.size() ? 1 : shape[i - (rank - shape.size())];
      Dim d = i < rank - in.shape->size() ? Dim(1) : (*in.shape)[i - (rank - in.shape->size())];
      std::optional<int64_t> dv = d.as_int();
      if (s != 1 && dv && *dv != 1 && *dv != s)
        ctx.fail("cannot expand ", type_to_string(ctx.input_type(0)), " to shape ",
                 shape_to_string(shape));
      if (s == 1 && !dv) known = false;
      out.push_back(s == 1 && dv ? *dv : s);
    }
    if (known) return {ctx.op("broadcast_to", {data}, {{"shape", out}})};
  }
  int64_t length = static_length(ctx, 1, "shape");
  int64_t rank = int64_t(in.shape->size());
  Expr target = as_int64(ctx, ctx.input(1));
  Expr current = ctx.op("shape_of", {data});
  auto pad_front = [&](const Expr& v, int64_t count) {
    if (count <= 0) return v;
    Expr ones = int64_vector(ctx, std::vector<int64_t>(size_t(count), 1));
    return ctx.op("concatenate", {ctx.typed(TupleNode::make({ones, v}))});
  };
  target = pad_front(target, rank - length);
  current = pad_front(current, length - rank);
  target = ctx.op("maximum", {target, current});
  return {ctx.op("dyn.broadcast_to", {data, target})};
}

std::vector<Expr> convert_tile(ConvertContext& ctx) {
  if (ctx.input_constant(1))
    return {ctx.op("tile", {ctx.input(0)}, {{"reps", ctx.constant_ints(1, "repeats")}})};
  return {ctx.op("dyn.tile", {ctx.input(0), as_int64(ctx, ctx.input(1))})};
}

}  // namespace

void register_reshape_converters(ConverterTable& table) {
  table.add("Reshape", 1, convert_reshape_v1);
  table.add("Reshape", 5, convert_reshape);
  table.add("Transpose", 1, convert_transpose);
  table.add("Squeeze", 1, convert_squeeze_v1);
  table.add("Squeeze", 13, convert_squeeze);
  table.add("Unsqueeze", 1, convert_unsqueeze_v1);
  table.add("Unsqueeze", 13, convert_unsqueeze);
  table.add("Expand", 8, convert_expand);
  table.add("Tile", 6, convert_tile);
}

}  // namespace tensor
}  // namespace anvil::frontend::onnx_import
