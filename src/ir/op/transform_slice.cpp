// The transform family's joining and slicing ops: concatenate, split,
// strided_slice, reverse_sequence and trilu.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>

#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

Type concatenate_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ConcatenateAttrs>();
  std::vector<const TensorTypeNode*> fields = tuple_of_tensors(args, 0);
  if (fields.empty()) throw_error(args.arg_name(0), " must hold at least one tensor, got ()");
  const TensorTypeNode& first = *fields[0];
  int64_t rank = int64_t(first.shape->size());
  if (rank == 0) throw_error(args.arg_name(0), " field 0 is a scalar, which has no axis to join");
  int64_t axis = normalize_axis(attrs.axis, rank, "axis");
  std::vector<Dim> out = *first.shape;
  for (size_t f = 1; f < fields.size(); ++f) {
    const TensorTypeNode& t = *fields[f];
    if (t.dtype != first.dtype)
      throw_error(args.arg_name(0), " field ", f, " has dtype ", t.dtype.to_string(),
                  " but field 0 has ", first.dtype.to_string());
    if (int64_t(t.shape->size()) != rank)
      throw_error(args.arg_name(0), " field ", f, " ", describe(t), " has rank ", t.shape->size(),
                  " but field 0 ", describe(first), " has rank ", rank);
    for (int64_t d = 0; d < rank; ++d) {
      const Dim& dim = (*t.shape)[d];
      if (d == axis) {
        out[d] = out[d] + dim;
      } else if (provably_different(dim, out[d])) {
        throw_error(args.arg_name(0), " field ", f, " ", describe(t), " differs from field 0 ",
                    describe(first), " in dim ", d, ", which is not the joined axis ", axis);
      } else {
        out[d] = more_known(out[d], dim);
      }
    }
  }
  return TensorTypeNode::make(std::move(out), first.dtype);
}

Type split_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<SplitAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  int64_t axis = normalize_axis(attrs.axis, int64_t(in.size()), "axis");
  const Dim& whole = in[axis];
  std::vector<Type> parts;
  auto add_part = [&](const Dim& size) {
    std::vector<Dim> shape = in;
    shape[axis] = size;
    parts.push_back(TensorTypeNode::make(std::move(shape), data.dtype));
  };
  if (attrs.sections) {
    int64_t sections = *attrs.sections;
    if (!attrs.indices.empty())
      throw_error("attributes 'sections' and 'indices' are both set; give one of them");
    if (sections <= 0) throw_error("attribute 'sections' = ", sections, " must be positive");
    if (auto rem = floormod(whole, sections).as_int(); rem && *rem != 0)
      throw_error("attribute 'sections' = ", sections, " does not divide axis ", axis, " (",
                  whole.to_string(), ") of ", describe(data));
    for (int64_t i = 0; i < sections; ++i) add_part(floordiv(whole, sections));
  } else {
    int64_t previous = 0;
    for (int64_t index : attrs.indices) {
      if (index < previous)
        throw_error("attribute 'indices' = ", attrs.indices, " must be non-negative and ascending");
      if (auto size = whole.as_int(); size && index > *size)
        throw_error("attribute 'indices' = ", attrs.indices, " points past axis ", axis, " (",
                    *size, ") of ", describe(data));
      add_part(index - previous);
      previous = index;
    }
    add_part(whole - previous);
  }
  return TupleTypeNode::make(std::move(parts));
}

// ---------------------------------------------------------------- strided_slice

// ONNX exporters write "to the end" as INT_MAX or INT64_MAX (and INT_MIN or
// INT64_MIN for the reverse direction); anything this large means the end.
constexpr int64_t kUnbounded = std::numeric_limits<int32_t>::max();

// Length of x[begin:end:stride] along a static dim (numpy clamping).
int64_t static_slice_length(int64_t begin, int64_t end, int64_t stride, int64_t dim) {
  auto normalize = [dim](int64_t i, int64_t lo, int64_t hi) {
    if (i < 0) i = i <= -dim ? -dim - 1 : i;  // keep the sum below from overflowing
    if (i < 0) i += dim;
    return std::clamp(i, lo, hi);
  };
  if (stride > 0) {
    int64_t b = normalize(begin, 0, dim), e = normalize(end, 0, dim);
    return e > b ? (e - b - 1) / stride + 1 : 0;
  }
  int64_t b = normalize(begin, -1, dim - 1), e = normalize(end, -1, dim - 1);
  return b > e ? (b - e - 1) / -stride + 1 : 0;
}

// The same for a symbolic dim: clamping becomes min/max expressions. The
// common forms (from the start, to the end) get the short expression.
Dim symbolic_slice_length(int64_t begin, int64_t end, int64_t stride, const Dim& dim) {
  Dim span = 0;  // elements between the clamped bounds
  if (stride > 0) {
    bool from_start = begin == 0 || begin <= -kUnbounded, to_end = end >= kUnbounded;
    if (to_end) {
      span = from_start ? dim : begin > 0 ? max(dim - begin, Dim(0)) : min(Dim(-begin), dim);
    } else if (from_start) {
      span = end >= 0 ? min(Dim(end), dim) : max(dim + end, Dim(0));
    } else {
      Dim b = begin > 0 ? min(Dim(begin), dim) : max(dim + begin, Dim(0));
      Dim e = end >= 0 ? min(Dim(end), dim) : max(dim + end, Dim(0));
      span = max(e - b, Dim(0));
    }
    // A step past any real dim takes at most the first element.
    return stride >= kUnbounded ? min(span, Dim(1)) : floordiv(span + (stride - 1), stride);
  }
  // Walking backwards: begin -1 or past the end starts at the last element,
  // and an end below -dim runs past the first.
  bool from_last = begin == -1 || begin >= kUnbounded, past_first = end <= -kUnbounded;
  if (past_first) {
    span = from_last ? dim : begin >= 0 ? min(Dim(begin + 1), dim) : max(dim + (begin + 1), Dim(0));
  } else if (from_last) {
    span = end >= 0 ? max(dim - (end + 1), Dim(0)) : min(Dim(-end - 1), dim);
  } else {
    Dim b = begin >= 0 ? min(Dim(begin), dim - 1) : max(dim + begin, Dim(-1));
    Dim e = end >= 0 ? min(Dim(end), dim - 1) : max(dim + end, Dim(-1));
    span = max(b - e, Dim(0));
  }
  return stride <= -kUnbounded ? min(span, Dim(1)) : floordiv(span + (-stride - 1), -stride);
}

Type strided_slice_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<StridedSliceAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  int64_t rank = int64_t(in.size());
  size_t count = attrs.begin.size();
  expect_one_of(attrs.slice_mode, {"end", "size"}, "slice_mode");
  if (attrs.end.size() != count)
    throw_error("attributes 'begin' = ", attrs.begin, " and 'end' = ", attrs.end,
                " must have the same length");
  if (attrs.strides.size() > count)
    throw_error("attribute 'strides' = ", attrs.strides, " is longer than 'begin' = ", attrs.begin);
  if (!attrs.axes.empty() && attrs.axes.size() != count)
    throw_error("attribute 'axes' = ", attrs.axes,
                " must have the length of 'begin' = ", attrs.begin);
  if (attrs.axes.empty() && int64_t(count) > rank)
    throw_error("attribute 'begin' = ", attrs.begin, " has more entries than ", describe(data),
                " has dims");

  std::vector<Dim> out = in;
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = attrs.axes.empty() ? int64_t(i) : normalize_axis(attrs.axes[i], rank, "axes");
    if (seen[axis]) throw_error("attribute 'axes' = ", attrs.axes, " names axis ", axis, " twice");
    seen[axis] = true;
    const Dim& dim = in[axis];
    int64_t begin = attrs.begin[i], end = attrs.end[i];
    if (attrs.slice_mode == "size") {
      if (end < -1)
        throw_error("attribute 'end' = ", attrs.end, ": size ", end, " must be >= 0 or -1");
      Dim start = begin >= 0 ? Dim(begin) : dim + begin;
      out[axis] = end == -1 ? dim - start : Dim(end);
      if (auto length = out[axis].as_int(); length && *length < 0)
        throw_error("attribute 'begin' = ", attrs.begin, " starts past the end of axis ", axis,
                    " of ", describe(data));
      continue;
    }
    int64_t stride = i < attrs.strides.size() ? attrs.strides[i] : 1;
    if (stride == 0) throw_error("attribute 'strides' = ", attrs.strides, " has a zero stride");
    // No dim is that large, and the step can then be negated safely.
    stride = std::max(stride, -std::numeric_limits<int64_t>::max());
    if (auto d = dim.as_int())
      out[axis] = static_slice_length(begin, end, stride, *d);
    else
      out[axis] = symbolic_slice_length(begin, end, stride, dim);
  }
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// dyn.strided_slice: begin, end, strides and axes are 1-D tensors of equal
// length known only at run time; the rank stays, no sliced dim is known, and
// since the axes are values too, none is known to be untouched.
Type dyn_strided_slice_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  std::optional<int64_t> count = index_vector_length(args, 1);
  for (size_t i = 2; i < 5; ++i) {
    std::optional<int64_t> length = index_vector_length(args, i);
    if (count && length && *length != *count)
      throw_error(args.arg_name(i), " has ", *length, " entries but ", args.arg_name(1), " has ",
                  *count);
  }
  int64_t rank = int64_t(data.shape->size());
  if (count && *count > rank)
    throw_error(args.arg_name(1), " has ", *count, " entries but ", describe(data), " has ", rank,
                " dims");
  return TensorTypeNode::make(std::vector<Dim>(data.shape->size(), Dim::any()), data.dtype);
}

// ---------------------------------------------------------------- others

Type reverse_sequence_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ReverseSequenceAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& lengths = args.tensor(1);
  int64_t rank = int64_t(data.shape->size());
  if (rank < 2) throw_error(args.arg_name(0), " must have rank >= 2, got ", describe(data));
  int64_t seq_axis = normalize_axis(attrs.seq_axis, rank, "seq_axis");
  int64_t batch_axis = normalize_axis(attrs.batch_axis, rank, "batch_axis");
  if (seq_axis == batch_axis)
    throw_error("attributes 'seq_axis' = ", attrs.seq_axis,
                " and 'batch_axis' = ", attrs.batch_axis, " name the same axis");
  expect_dtype_class(args, 1, DtypeClass::Integer);
  expect_rank(lengths, 1, args.arg_name(1));
  expect_dim_equal(
      (*lengths.shape)[0], (*data.shape)[batch_axis],
      "the length of " + args.arg_name(1) + " (the batch size of " + describe(data) + ")");
  return args.inputs[0];
}

Type trilu_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  if (data.shape->size() < 2)
    throw_error(args.arg_name(0), " must have rank >= 2, got ", describe(data));
  const TensorTypeNode& k = args.tensor(1);
  expect_dtype_class(args, 1, DtypeClass::Integer);
  bool single = k.shape->empty() || (k.shape->size() == 1 && (*k.shape)[0].as_int() == 1);
  if (!single) throw_error(args.arg_name(1), " must be a scalar, got ", describe(k));
  return args.inputs[0];
}

}  // namespace

void register_transform_slice_ops(OpTable& table) {
  table.add("concatenate")
      .describe("Joins a tuple of tensors along an axis.")
      .inputs({"data"})
      .attrs<ConcatenateAttrs>()
      .type_relation(concatenate_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("split")
      .describe("Splits a tensor along an axis into a tuple of tensors.")
      .inputs({"data"})
      .attrs<SplitAttrs>()
      .type_relation(split_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("strided_slice")
      .describe("Slices with begin, end and strides per axis (numpy/ONNX clamping).")
      .inputs({"data"})
      .attrs<StridedSliceAttrs>()
      .type_relation(strided_slice_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("dyn.strided_slice")
      .describe("strided_slice with begin, end, strides and axes given as 1-D tensors at run time.")
      .inputs({"data", "begin", "end", "strides", "axes"})
      .type_relation(dyn_strided_slice_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("reverse_sequence")
      .describe("Reverses the first seq_lengths[b] elements along seq_axis, per batch entry.")
      .inputs({"data", "seq_lengths"})
      .attrs<ReverseSequenceAttrs>()
      .type_relation(reverse_sequence_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("trilu")
      .describe("Keeps the upper or lower triangle of the last two dims, offset by diagonal k.")
      .inputs({"data", "k"})
      .attrs<TriluAttrs>()
      .type_relation(trilu_relation)
      .fusion_pattern(OpPattern::Injective);
}

}  // namespace anvil::ir
