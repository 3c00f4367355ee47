// The transform family: ops that move or reinterpret elements without
// computing new values. This file holds the shape-changing ops (reshape,
// transpose, squeeze, ...); slicing and joining ops are in transform_slice.cpp,
// layout_transform and einsum in transform_layout.cpp.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

// A dim of a newshape entry that refers to input dims (0, -2, -3, -4) needs
// the input's dims; this is the message when they run out.
[[noreturn]] void newshape_past_input(const std::vector<int64_t>& newshape, size_t entry,
                                      const TensorTypeNode& data) {
  throw_error("attribute 'newshape' = ", newshape, ": entry ", entry, " (", newshape[entry],
              ") refers to an input dim past the last of ", describe(data));
}

// Output dims of a reshape of an input of unknown rank: only entries that do
// not copy input dims can be honoured.
Type reshape_unknown_rank(const ReshapeAttrs& attrs, DataType dtype) {
  std::vector<Dim> out;
  bool inferred = false;
  for (size_t i = 0; i < attrs.newshape.size(); ++i) {
    int64_t v = attrs.newshape[i];
    if (v > 0 || (v == 0 && attrs.allowzero)) {
      out.push_back(v);
    } else if (v == -1 && !inferred) {
      inferred = true;
      out.push_back(Dim::any());
    } else {
      throw_error("attribute 'newshape' = ", attrs.newshape, ": entry ", i, " (", v,
                  ") needs the input's dims, but its rank is unknown");
    }
  }
  return TensorTypeNode::make(std::move(out), dtype);
}

Type reshape_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ReshapeAttrs>();
  const TensorTypeNode& data = tensor_any_rank(args, 0);
  if (!data.shape) return reshape_unknown_rank(attrs, data.dtype);
  const std::vector<int64_t>& newshape = attrs.newshape;
  const std::vector<Dim>& in = *data.shape;

  std::vector<Dim> out;
  std::optional<size_t> infer_at;
  size_t src = 0;  // the input dim the next entry lines up with
  for (size_t i = 0; i < newshape.size(); ++i) {
    int64_t v = newshape[i];
    if (v > 0 || (v == 0 && attrs.allowzero)) {
      out.push_back(v);
      ++src;
    } else if (v == 0) {
      if (src >= in.size()) newshape_past_input(newshape, i, data);
      out.push_back(in[src++]);
    } else if (v == -1) {
      if (infer_at)
        throw_error("attribute 'newshape' = ", newshape, " has more than one -1 to infer");
      infer_at = out.size();
      out.push_back(1);  // replaced below
      ++src;
    } else if (v == -2) {
      while (src < in.size()) out.push_back(in[src++]);
    } else if (v == -3) {
      if (src + 1 >= in.size()) newshape_past_input(newshape, i, data);
      out.push_back(in[src] * in[src + 1]);
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= newshape.size())
        throw_error("attribute 'newshape' = ", newshape, ": -4 at entry ", i,
                    " must be followed by the two sizes to split into");
      if (src >= in.size()) newshape_past_input(newshape, i, data);
      int64_t a = newshape[i + 1], b = newshape[i + 2];
      if (a == 0 || b == 0 || a < -1 || b < -1 || (a == -1 && b == -1))
        throw_error("attribute 'newshape' = ", newshape, ": the sizes after -4 at entry ", i,
                    " must be positive, one of them may be -1");
      const Dim& whole = in[src++];
      Dim da = a == -1 ? floordiv(whole, b) : Dim(a);
      Dim db = b == -1 ? floordiv(whole, a) : Dim(b);
      if (provably_different(da * db, whole))
        throw_error("attribute 'newshape' = ", newshape, ": input dim ", src - 1, " (",
                    whole.to_string(), ") of ", describe(data), " cannot be split into (", a, ", ",
                    b, ")");
      out.push_back(da);
      out.push_back(db);
      i += 2;
    } else {
      throw_error("attribute 'newshape' = ", newshape, ": entry ", i, " (", v,
                  ") is not a size, 0, -1, -2, -3 or -4");
    }
  }

  Dim total = dims_product(in);
  if (infer_at) {
    Dim known = 1;
    for (size_t j = 0; j < out.size(); ++j)
      if (j != *infer_at) known = known * out[j];
    if (known.as_int() == 0)
      throw_error("attribute 'newshape' = ", newshape,
                  " has a zero size, so its -1 cannot be inferred from ", describe(data));
    if (auto rem = floormod(total, known).as_int(); rem && *rem != 0)
      throw_error("attribute 'newshape' = ", newshape, " cannot hold the ", total.to_string(),
                  " elements of ", describe(data), ": ", total.to_string(), " is not divisible by ",
                  known.to_string());
    out[*infer_at] = floordiv(total, known);
  } else if (Dim count = dims_product(out); provably_different(count, total)) {
    throw_error("attribute 'newshape' = ", newshape, " has ", count.to_string(),
                " elements but the input ", describe(data), " has ", total.to_string());
  }
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// The half-open range [begin, end) of a reshape_like attribute pair over rank dims.
std::pair<size_t, size_t> reshape_like_range(int64_t begin, std::optional<int64_t> end, size_t rank,
                                             const char* side, const TensorTypeNode& t) {
  int64_t n = int64_t(rank), b = begin < 0 ? begin + n : begin, e = end.value_or(n);
  if (e < 0) e += n;
  if (b < 0 || e > n || b > e)
    throw_error("attributes '", side, "_begin' = ", begin, ", '", side,
                "_end' = ", end ? std::to_string(*end) : std::string("None"),
                " are not a range of the dims of ", describe(t));
  return {size_t(b), size_t(e)};
}

// reshape_like: the dims come from shape_like's type, so they may be symbolic where a
// reshape's entries cannot name them (DynamicToStatic reshapes to dims of a tensor in scope).
Type reshape_like_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ReshapeLikeAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& like = args.tensor(1);
  const std::vector<Dim>& in = *data.shape;
  const std::vector<Dim>& from = *like.shape;
  auto [lb, le] = reshape_like_range(attrs.lhs_begin, attrs.lhs_end, in.size(), "lhs", data);
  auto [rb, re] = reshape_like_range(attrs.rhs_begin, attrs.rhs_end, from.size(), "rhs", like);
  std::vector<Dim> out(in.begin(), in.begin() + std::ptrdiff_t(lb));
  out.insert(out.end(), from.begin() + std::ptrdiff_t(rb), from.begin() + std::ptrdiff_t(re));
  out.insert(out.end(), in.begin() + std::ptrdiff_t(le), in.end());
  Dim count = dims_product(in), out_count = dims_product(out);
  if (provably_different(count, out_count))
    throw_error("cannot reshape ", describe(data), " (", count.to_string(), " elements) to ",
                dims_to_string(out), " (", out_count.to_string(), " elements) after ",
                describe(like));
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type transpose_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<TransposeAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  int64_t rank = int64_t(in.size());
  if (attrs.axes.empty()) return TensorTypeNode::make({in.rbegin(), in.rend()}, data.dtype);
  if (int64_t(attrs.axes.size()) != rank)
    throw_error("attribute 'axes' = ", attrs.axes, " must list each of the ", rank, " axes of ",
                describe(data));
  std::vector<bool> seen(in.size(), false);
  std::vector<Dim> out;
  for (int64_t axis : attrs.axes) {
    int64_t a = normalize_axis(axis, rank, "axes");
    if (seen[a])
      throw_error("attribute 'axes' = ", attrs.axes, " names axis ", a, " twice for ",
                  describe(data));
    seen[a] = true;
    out.push_back(in[a]);
  }
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type squeeze_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<SqueezeAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  int64_t rank = int64_t(in.size());
  std::vector<bool> drop(in.size(), false);
  if (attrs.axis.empty()) {
    // Symbolic dims are kept: they are not known to be 1.
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i].as_int() == 1;
  }
  for (int64_t axis : attrs.axis) {
    int64_t a = normalize_axis(axis, rank, "axis");
    if (drop[a])
      throw_error("attribute 'axis' = ", attrs.axis, " names axis ", a, " twice for ",
                  describe(data));
    if (in[a].is_int() && in[a].int_value() != 1)
      throw_error("attribute 'axis' = ", attrs.axis, ": axis ", a, " of ", describe(data),
                  " has size ", in[a].to_string(), ", not 1");
    drop[a] = true;
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type expand_dims_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ExpandDimsAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  std::vector<Dim> out = *data.shape;
  int64_t rank = int64_t(out.size());
  if (attrs.axis < -rank - 1 || attrs.axis > rank)
    throw_error("attribute 'axis' = ", attrs.axis, " is out of range for ", describe(data),
                " (expected ", -rank - 1, " to ", rank, ")");
  if (attrs.num_newaxis < 0)
    throw_error("attribute 'num_newaxis' = ", attrs.num_newaxis, " must be >= 0");
  int64_t pos = attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis;
  out.insert(out.begin() + pos, size_t(attrs.num_newaxis), Dim(1));
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type broadcast_to_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<BroadcastToAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  const std::vector<int64_t>& shape = attrs.shape;
  for (int64_t d : shape)
    if (d < 0) throw_error("attribute 'shape' = ", shape, " has a negative dim");
  if (in.size() > shape.size())
    throw_error("cannot broadcast ", describe(data), " to attribute 'shape' = ", shape,
                ": the input has more dims");
  size_t offset = shape.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) {
    auto d = in[i].as_int();
    if (d && *d != 1 && *d != shape[offset + i])
      throw_error("cannot broadcast ", describe(data), " to attribute 'shape' = ", shape,
                  ": input dim ", i, " is ", *d, ", expected 1 or ", shape[offset + i]);
  }
  return TensorTypeNode::make(to_dims(shape), data.dtype);
}

Type flatten_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<FlattenAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  int64_t rank = int64_t(in.size());
  // Unlike most axes, axis == rank is valid here: everything goes to the outer dim.
  if (attrs.axis < -rank || attrs.axis > rank)
    throw_error("attribute 'axis' = ", attrs.axis, " is out of range for ", describe(data),
                " (expected ", -rank, " to ", rank, ")");
  int64_t axis = attrs.axis < 0 ? attrs.axis + rank : attrs.axis;
  Dim outer = dims_product({in.begin(), in.begin() + axis});
  Dim inner = dims_product({in.begin() + axis, in.end()});
  return TensorTypeNode::make({outer, inner}, data.dtype);
}

Type tile_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<TileAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  std::vector<Dim> in = *data.shape;
  std::vector<int64_t> reps = attrs.reps;
  for (int64_t r : reps)
    if (r < 0) throw_error("attribute 'reps' = ", attrs.reps, " has a negative count");
  // numpy: the shorter of the two is padded with leading 1s.
  if (reps.size() < in.size()) reps.insert(reps.begin(), in.size() - reps.size(), 1);
  if (in.size() < reps.size()) in.insert(in.begin(), reps.size() - in.size(), Dim(1));
  std::vector<Dim> out;
  for (size_t i = 0; i < in.size(); ++i) out.push_back(in[i] * reps[i]);
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type repeat_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<RepeatAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  std::vector<Dim> out = *data.shape;
  int64_t axis = normalize_axis(attrs.axis, int64_t(out.size()), "axis");
  if (attrs.repeats < 0) throw_error("attribute 'repeats' = ", attrs.repeats, " must be >= 0");
  out[axis] = out[axis] * attrs.repeats;
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type reverse_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  normalize_axis(args.attrs_as<ReverseAttrs>().axis, int64_t(data.shape->size()), "axis");
  return args.inputs[0];
}

Type cast_relation(const RelationArgs& args) {
  return with_dtype(tensor_any_rank(args, 0), args.attrs_as<CastAttrs>().dtype);
}

Type reinterpret_relation(const RelationArgs& args) {
  const TensorTypeNode& data = tensor_any_rank(args, 0);
  DataType to = args.attrs_as<CastAttrs>().dtype;
  if (data.dtype.bytes() != to.bytes() || to.lanes != 1)
    throw_error("cannot reinterpret ", data.dtype.to_string(), " as ", to.to_string(),
                ": the widths differ");
  return with_dtype(data, to);
}

// The length of a 1-D integer shape argument, or nullopt when it is symbolic.
std::optional<int64_t> shape_argument_length(const RelationArgs& args, size_t i) {
  const TensorTypeNode& shape = args.tensor(i);
  expect_dtype_class(args, i, DtypeClass::Integer);
  expect_rank(shape, 1, args.arg_name(i));
  return (*shape.shape)[0].as_int();
}

// dyn.reshape: the target shape is a tensor known only at run time, so only
// the rank (its length) is known.
Type dynamic_shape_relation(const RelationArgs& args) {
  DataType dtype = tensor_any_rank(args, 0).dtype;
  std::optional<int64_t> rank = shape_argument_length(args, 1);
  if (!rank) return TensorTypeNode::make_unknown_rank(dtype);
  return TensorTypeNode::make(std::vector<Dim>(size_t(*rank), Dim::any()), dtype);
}

// dyn.broadcast_to: the target shape is known only at run time, but where
// the input's (right-aligned) dim is static and not 1, a valid target must
// equal it.
Type dyn_broadcast_to_relation(const RelationArgs& args) {
  const TensorTypeNode& data = tensor_any_rank(args, 0);
  std::optional<int64_t> rank = shape_argument_length(args, 1);
  if (!rank) return TensorTypeNode::make_unknown_rank(data.dtype);
  std::vector<Dim> out(size_t(*rank), Dim::any());
  if (!data.shape) return TensorTypeNode::make(std::move(out), data.dtype);
  const std::vector<Dim>& in = *data.shape;
  if (in.size() > out.size())
    throw_error("cannot broadcast ", describe(data), " to ", *rank, " dims (", args.arg_name(1),
                "): the input has more dims");
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (auto d = in[i].as_int(); d && *d != 1) out[offset + i] = *d;
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// dyn.squeeze, dyn.expand_dims, dyn.tile: the axes (or repeats) are a tensor
// known only at run time, so the output's rank follows from its length but
// no dim is known.
Type dims_unknown(DataType dtype, std::optional<int64_t> rank) {
  if (!rank) return TensorTypeNode::make_unknown_rank(dtype);
  return TensorTypeNode::make(std::vector<Dim>(size_t(*rank), Dim::any()), dtype);
}

Type dyn_squeeze_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  std::optional<int64_t> count = index_vector_length(args, 1);
  int64_t rank = int64_t(data.shape->size());
  if (count && *count > rank)
    throw_error(args.arg_name(1), " lists ", *count, " axes but ", describe(data), " has ", rank);
  // No axes at all squeezes every unit dim, which only the values tell.
  if (!count || *count == 0) return TensorTypeNode::make_unknown_rank(data.dtype);
  return dims_unknown(data.dtype, rank - *count);
}

Type dyn_expand_dims_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  std::optional<int64_t> count = index_vector_length(args, 1);
  if (!count) return TensorTypeNode::make_unknown_rank(data.dtype);
  return dims_unknown(data.dtype, int64_t(data.shape->size()) + *count);
}

Type dyn_tile_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  std::optional<int64_t> count = index_vector_length(args, 1);
  if (!count) return TensorTypeNode::make_unknown_rank(data.dtype);
  return dims_unknown(data.dtype, std::max(int64_t(data.shape->size()), *count));
}

}  // namespace

void register_transform_shape_ops(OpTable& table) {
  table.add("reshape")
      .describe("Gives the data a new shape with the same element count.")
      .inputs({"data"})
      .attrs<ReshapeAttrs>()
      .type_relation(reshape_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("dyn.reshape")
      .describe("reshape to a shape given as a 1-D tensor at run time.")
      .inputs({"data", "newshape"})
      .attrs<ReshapeAttrs>()
      .type_relation(dynamic_shape_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("reshape_like")
      .describe("Gives the data dims of shape_like's type (its values are not read).")
      .inputs({"data", "shape_like"})
      .attrs<ReshapeLikeAttrs>()
      .type_relation(reshape_like_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("transpose")
      .describe("Permutes the dims; no axes reverses them.")
      .inputs({"data"})
      .attrs<TransposeAttrs>()
      .type_relation(transpose_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("squeeze")
      .describe("Removes dims of size 1.")
      .inputs({"data"})
      .attrs<SqueezeAttrs>()
      .type_relation(squeeze_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("expand_dims")
      .describe("Inserts dims of size 1.")
      .inputs({"data"})
      .attrs<ExpandDimsAttrs>()
      .type_relation(expand_dims_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("broadcast_to")
      .describe("Broadcasts the data to a given shape, numpy style.")
      .inputs({"data"})
      .attrs<BroadcastToAttrs>()
      .type_relation(broadcast_to_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("dyn.broadcast_to")
      .describe("broadcast_to a shape given as a 1-D tensor at run time.")
      .inputs({"data", "shape"})
      .type_relation(dyn_broadcast_to_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("flatten")
      .describe("Flattens to 2-D: the dims before axis, and the dims from axis (ONNX Flatten).")
      .inputs({"data"})
      .attrs<FlattenAttrs>()
      .type_relation(flatten_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("tile")
      .describe("Repeats the whole tensor reps[i] times along each dim (numpy tile).")
      .inputs({"data"})
      .attrs<TileAttrs>()
      .type_relation(tile_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("repeat")
      .describe("Repeats each element along an axis.")
      .inputs({"data"})
      .attrs<RepeatAttrs>()
      .type_relation(repeat_relation)
      .fusion_pattern(OpPattern::Broadcast);
  table.add("reverse")
      .describe("Reverses the order of elements along an axis.")
      .inputs({"data"})
      .attrs<ReverseAttrs>()
      .type_relation(reverse_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("dyn.squeeze")
      .describe("squeeze of the unit dims listed in a 1-D tensor at run time.")
      .inputs({"data", "axes"})
      .type_relation(dyn_squeeze_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.expand_dims")
      .describe(
          "Inserts unit dims at the output positions listed in a 1-D tensor at run time (ONNX "
          "Unsqueeze).")
      .inputs({"data", "axes"})
      .type_relation(dyn_expand_dims_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.tile")
      .describe("tile with the repeats given as a 1-D tensor at run time.")
      .inputs({"data", "reps"})
      .type_relation(dyn_tile_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("reinterpret")
      .describe("The elements' bits read as another dtype of the same width (ONNX BitCast).")
      .inputs({"data"})
      .attrs<CastAttrs>()
      .type_relation(reinterpret_relation)
      .fusion_pattern(OpPattern::ElemWise);
  table.add("cast")
      .describe("Converts the elements to another dtype.")
      .inputs({"data"})
      .attrs<CastAttrs>()
      .type_relation(cast_relation)
      .fusion_pattern(OpPattern::ElemWise);
}

void register_transform_ops(OpTable& table) {
  register_transform_shape_ops(table);
  register_transform_slice_ops(table);
  register_transform_layout_ops(table);
}

}  // namespace anvil::ir
