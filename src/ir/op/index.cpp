// The index family: ops that pick, place or order elements by index (take,
// gather, scatter, col2im, one_hot, topk, sort, nonzero, unique) and running
// scans (cumsum).
#include <algorithm>

#include "anvil/runtime/builtins.h"
#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

// Throws Error unless argument i is an integer tensor of known rank.
const TensorTypeNode& index_tensor(const RelationArgs& args, size_t i) {
  const TensorTypeNode& t = args.tensor(i);
  expect_dtype_class(args, i, DtypeClass::Integer);
  return t;
}

// Throws Error when two shapes that must match provably differ.
void expect_same_shape(const RelationArgs& args, size_t a, size_t b) {
  const TensorTypeNode& ta = args.tensor(a);
  const TensorTypeNode& tb = args.tensor(b);
  bool same = ta.shape->size() == tb.shape->size();
  for (size_t i = 0; same && i < ta.shape->size(); ++i)
    same = !provably_different((*ta.shape)[i], (*tb.shape)[i]);
  if (!same)
    throw_error(args.arg_name(b), " ", describe(tb), " must have the shape of ", args.arg_name(a),
                " ", describe(ta));
}

// ---------------------------------------------------------------- take, gather

Type take_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<TakeAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& indices = index_tensor(args, 1);
  expect_one_of(attrs.mode, {"clip", "wrap", "fast"}, "mode");
  const std::vector<Dim>& in = *data.shape;
  const std::vector<Dim>& idx = *indices.shape;
  if (!attrs.axis) return TensorTypeNode::make(idx, data.dtype);  // into the flattened data

  int64_t rank = int64_t(in.size());
  if (rank == 0) throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  int64_t axis = normalize_axis(*attrs.axis, rank, "axis");
  int64_t batch_dims =
      attrs.batch_dims < 0 ? attrs.batch_dims + int64_t(idx.size()) : attrs.batch_dims;
  if (batch_dims < 0 || batch_dims > int64_t(idx.size()) || batch_dims > axis)
    throw_error("attribute 'batch_dims' = ", attrs.batch_dims, " must lie in 0 to min(axis ", axis,
                ", rank of ", describe(indices), ")");
  for (int64_t b = 0; b < batch_dims; ++b)
    if (provably_different(in[b], idx[b]))
      throw_error("batch dim ", b, " of ", args.arg_name(1), " ", describe(indices), " must match ",
                  args.arg_name(0), " ", describe(data),
                  " (attribute 'batch_dims' = ", attrs.batch_dims, ")");
  std::vector<Dim> out(in.begin(), in.begin() + axis);
  out.insert(out.end(), idx.begin() + batch_dims, idx.end());
  out.insert(out.end(), in.begin() + axis + 1, in.end());
  return TensorTypeNode::make(std::move(out), data.dtype);
}

Type gather_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<GatherAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& indices = index_tensor(args, 1);
  int64_t rank = int64_t(data.shape->size());
  if (rank == 0) throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  normalize_axis(attrs.axis, rank, "axis");
  expect_rank(indices, rank, args.arg_name(1) + " (the rank of " + describe(data) + ")");
  return TensorTypeNode::make(*indices.shape, data.dtype);
}

// The number of index components M of a TVM-layout index tensor (M, Y...).
int64_t index_tuple_size(const RelationArgs& args, const TensorTypeNode& indices,
                         std::optional<int64_t> index_rank) {
  if (indices.shape->empty())
    throw_error(args.arg_name(1), " must have rank >= 1, got ", describe(indices));
  const Dim& first = (*indices.shape)[0];
  if (auto m = first.as_int()) {
    if (index_rank && *index_rank != *m)
      throw_error("attribute 'index_rank' = ", *index_rank, " disagrees with the first dim of ",
                  args.arg_name(1), " ", describe(indices));
    return *m;
  }
  if (!index_rank)
    throw_error("the first dim of ", args.arg_name(1), " ", describe(indices),
                " is symbolic; attribute 'index_rank' must give it");
  return *index_rank;
}

Type gather_nd_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<GatherNDAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& indices = index_tensor(args, 1);
  const std::vector<Dim>& in = *data.shape;
  const std::vector<Dim>& idx = *indices.shape;
  int64_t m = index_tuple_size(args, indices, attrs.index_rank);
  if (attrs.batch_dims < 0 || attrs.batch_dims >= int64_t(idx.size()))
    throw_error("attribute 'batch_dims' = ", attrs.batch_dims, " must lie in 0 to ",
                int64_t(idx.size()) - 1, " for ", args.arg_name(1), " ", describe(indices));
  if (m < 0 || attrs.batch_dims + m > int64_t(in.size()))
    throw_error(args.arg_name(1), " ", describe(indices), " indexes ", m, " dims after ",
                attrs.batch_dims, " batch dims, more than ", describe(data), " has");
  for (int64_t b = 0; b < attrs.batch_dims; ++b)
    if (provably_different(in[b], idx[b + 1]))
      throw_error("batch dim ", b, " of ", args.arg_name(1), " ", describe(indices), " must match ",
                  args.arg_name(0), " ", describe(data));
  std::vector<Dim> out(idx.begin() + 1, idx.end());
  out.insert(out.end(), in.begin() + attrs.batch_dims + m, in.end());
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// ---------------------------------------------------------------- scatter

Type scatter_elements_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ScatterElementsAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  index_tensor(args, 1);
  const TensorTypeNode& updates = args.tensor(2);
  expect_one_of(attrs.reduction, {"update", "add", "mul", "mean", "min", "max"}, "reduction");
  int64_t rank = int64_t(data.shape->size());
  if (rank == 0) throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  normalize_axis(attrs.axis, rank, "axis");
  expect_rank(args.tensor(1), rank, args.arg_name(1) + " (the rank of " + describe(data) + ")");
  expect_same_shape(args, 1, 2);
  if (updates.dtype != data.dtype)
    throw_error(args.arg_name(2), " has dtype ", updates.dtype.to_string(), " but ",
                args.arg_name(0), " has ", data.dtype.to_string());
  return args.inputs[0];
}

Type scatter_nd_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ScatterNDAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& indices = index_tensor(args, 1);
  const TensorTypeNode& updates = args.tensor(2);
  expect_one_of(attrs.mode, {"update", "add", "mul", "min", "max"}, "mode");
  if (updates.dtype != data.dtype)
    throw_error(args.arg_name(2), " has dtype ", updates.dtype.to_string(), " but ",
                args.arg_name(0), " has ", data.dtype.to_string());
  const std::vector<Dim>& in = *data.shape;
  const std::vector<Dim>& idx = *indices.shape;
  const std::vector<Dim>& upd = *updates.shape;
  int64_t m = index_tuple_size(args, indices, std::nullopt);
  if (m > int64_t(in.size()))
    throw_error(args.arg_name(1), " ", describe(indices), " indexes ", m, " dims but ",
                describe(data), " has ", in.size());
  // updates are (Y..., data dims from M), Y being the index dims after the first.
  std::vector<Dim> expected(idx.begin() + 1, idx.end());
  expected.insert(expected.end(), in.begin() + m, in.end());
  bool same = expected.size() == upd.size();
  for (size_t i = 0; same && i < upd.size(); ++i) same = !provably_different(upd[i], expected[i]);
  if (!same)
    throw_error(args.arg_name(2), " ", describe(updates), " must have shape ",
                dims_to_string(expected), " for ", args.arg_name(1), " ", describe(indices),
                " and ", args.arg_name(0), " ", describe(data));
  return args.inputs[0];
}

// ---------------------------------------------------------------- col2im

// Checks the dilations, pads and strides of `rank` spatial dims.
void check_col2im_attrs(const Col2ImAttrs& attrs, size_t rank) {
  auto check = [&](const std::vector<int64_t>& v, size_t per_axis, const char* name, int64_t min) {
    if (!v.empty() && v.size() != per_axis * rank)
      throw_error("attribute '", name, "' = ", v, " must have ", per_axis * rank, " entries for ",
                  rank, " spatial dims");
    for (int64_t x : v)
      if (x < min) throw_error("attribute '", name, "' = ", v, " has an entry below ", min);
  };
  check(attrs.dilations, 1, "dilations", 1);
  check(attrs.strides, 1, "strides", 1);
  check(attrs.pads, 2, "pads", 0);
}

const TensorTypeNode& col2im_data(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  expect_rank(data, 3, args.arg_name(0) + " (batch, channels * block size, blocks)");
  return data;
}

Type col2im_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<Col2ImAttrs>();
  const TensorTypeNode& data = col2im_data(args);
  size_t rank = attrs.image_shape.size();
  if (rank == 0 || attrs.block_shape.size() != rank)
    throw_error("attributes 'image_shape' = ", attrs.image_shape,
                " and 'block_shape' = ", attrs.block_shape,
                " must be non-empty and of equal length");
  check_col2im_attrs(attrs, rank);
  int64_t block = 1, blocks = 1;
  for (size_t i = 0; i < rank; ++i) {
    int64_t dilation = attrs.dilations.empty() ? 1 : attrs.dilations[i];
    int64_t stride = attrs.strides.empty() ? 1 : attrs.strides[i];
    int64_t pad = attrs.pads.empty() ? 0 : attrs.pads[i] + attrs.pads[i + rank];
    if (attrs.block_shape[i] < 1)
      throw_error("attribute 'block_shape' = ", attrs.block_shape, " must be positive");
    int64_t span = dilation * (attrs.block_shape[i] - 1) + 1;
    if (attrs.image_shape[i] + pad < span)
      throw_error("attribute 'block_shape' = ", attrs.block_shape,
                  " does not fit 'image_shape' = ", attrs.image_shape);
    block *= attrs.block_shape[i];
    blocks *= (attrs.image_shape[i] + pad - span) / stride + 1;
  }
  const std::vector<Dim>& in = *data.shape;
  if (auto rem = floormod(in[1], block).as_int(); rem && *rem != 0)
    throw_error("dim 1 of ", describe(data), " is not a multiple of the block size ", block);
  if (provably_different(in[2], blocks))
    throw_error("dim 2 of ", describe(data), " must be the number of blocks, ", blocks);
  std::vector<Dim> out{in[0], floordiv(in[1], block)};
  for (int64_t d : attrs.image_shape) out.push_back(d);
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// dyn.col2im: the image and block shapes are 1-D tensors known at run time.
Type dyn_col2im_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<Col2ImAttrs>();
  const TensorTypeNode& data = col2im_data(args);
  std::optional<int64_t> rank = index_vector_length(args, 1);
  std::optional<int64_t> block_rank = index_vector_length(args, 2);
  if (rank && block_rank && *rank != *block_rank)
    throw_error(args.arg_name(1), " has ", *rank, " entries but ", args.arg_name(2), " has ",
                *block_rank);
  if (!rank) return TensorTypeNode::make_unknown_rank(data.dtype);
  check_col2im_attrs(attrs, size_t(*rank));
  std::vector<Dim> out{(*data.shape)[0]};
  out.insert(out.end(), size_t(*rank + 1), Dim::any());
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// ---------------------------------------------------------------- one_hot

Type one_hot_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<OneHotAttrs>();
  const TensorTypeNode& indices = index_tensor(args, 0);
  const TensorTypeNode& on = expect_scalar(args, 1);
  const TensorTypeNode& off = expect_scalar(args, 2);
  if (on.dtype != off.dtype)
    throw_error(args.arg_name(2), " has dtype ", off.dtype.to_string(), " but ", args.arg_name(1),
                " has ", on.dtype.to_string());
  if (attrs.depth < 1) throw_error("attribute 'depth' = ", attrs.depth, " must be >= 1");
  std::vector<Dim> out = *indices.shape;
  int64_t rank = int64_t(out.size());
  if (attrs.axis < -rank - 1 || attrs.axis > rank)
    throw_error("attribute 'axis' = ", attrs.axis, " is out of range for ", describe(indices),
                " (expected ", -rank - 1, " to ", rank, ")");
  int64_t pos = attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis;
  out.insert(out.begin() + pos, Dim(attrs.depth));
  return TensorTypeNode::make(std::move(out), attrs.dtype.value_or(on.dtype));
}

// dyn.one_hot: depth is a scalar tensor known only at run time.
Type dyn_one_hot_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<OneHotAttrs>();
  const TensorTypeNode& indices = index_tensor(args, 0);
  const TensorTypeNode& on = expect_scalar(args, 1);
  const TensorTypeNode& off = expect_scalar(args, 2);
  expect_index_scalar(args, 3);
  if (on.dtype != off.dtype)
    throw_error(args.arg_name(2), " has dtype ", off.dtype.to_string(), " but ", args.arg_name(1),
                " has ", on.dtype.to_string());
  std::vector<Dim> out = *indices.shape;
  int64_t rank = int64_t(out.size());
  if (attrs.axis < -rank - 1 || attrs.axis > rank)
    throw_error("attribute 'axis' = ", attrs.axis, " is out of range for ", describe(indices),
                " (expected ", -rank - 1, " to ", rank, ")");
  int64_t pos = attrs.axis < 0 ? attrs.axis + rank + 1 : attrs.axis;
  out.insert(out.begin() + pos, Dim::any());
  return TensorTypeNode::make(std::move(out), attrs.dtype.value_or(on.dtype));
}

// ---------------------------------------------------------------- sorting

// topk and dyn.topk; `k` is the selected length along the axis.
Type topk_result(const RelationArgs& args, const Dim& k) {
  const auto& attrs = args.attrs_as<TopKAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  expect_one_of(attrs.ret_type, {"both", "values", "indices"}, "ret_type");
  if (!dtype_in_class(attrs.dtype, DtypeClass::Integer))
    throw_error("attribute 'dtype' = ", attrs.dtype.to_string(), " must be an integer type");
  std::vector<Dim> shape = *data.shape;
  if (shape.empty()) throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  int64_t axis = normalize_axis(attrs.axis, int64_t(shape.size()), "axis");
  shape[axis] = k.is_int() && k.int_value() < 1 ? shape[axis] : k;
  Type values = TensorTypeNode::make(shape, data.dtype);
  Type indices = TensorTypeNode::make(shape, attrs.dtype);
  if (attrs.ret_type == "values") return values;
  if (attrs.ret_type == "indices") return indices;
  return TupleTypeNode::make({values, indices});
}

Type topk_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<TopKAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  if (!data.shape->empty() && attrs.k >= 1) {
    int64_t axis = normalize_axis(attrs.axis, int64_t(data.shape->size()), "axis");
    if (auto size = (*data.shape)[axis].as_int(); size && attrs.k > *size)
      throw_error("attribute 'k' = ", attrs.k, " is larger than axis ", axis, " of ",
                  describe(data));
  }
  return topk_result(args, attrs.k);
}

Type dyn_topk_relation(const RelationArgs& args) {
  const TensorTypeNode& k = index_tensor(args, 1);
  if (!(k.shape->empty() || (k.shape->size() == 1 && (*k.shape)[0].as_int() == 1)))
    throw_error(args.arg_name(1), " must be a scalar, got ", describe(k));
  return topk_result(args, Dim::any());
}

Type sort_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  if (data.shape->empty())
    throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  normalize_axis(args.attrs_as<SortAttrs>().axis, int64_t(data.shape->size()), "axis");
  return args.inputs[0];
}

Type argsort_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ArgsortAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  if (data.shape->empty())
    throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  normalize_axis(attrs.axis, int64_t(data.shape->size()), "axis");
  if (!dtype_in_class(attrs.dtype, DtypeClass::Integer))
    throw_error("attribute 'dtype' = ", attrs.dtype.to_string(), " must be an integer type");
  return TensorTypeNode::make(*data.shape, attrs.dtype);
}

// ONNX NonZero's layout: one row per input dim, one column per non-zero element.
Type nonzero_relation(const RelationArgs& args) {
  const TensorTypeNode& data = tensor_any_rank(args, 0);
  Dim rank = data.shape ? Dim(int64_t(data.shape->size())) : Dim::any();
  return TensorTypeNode::make({rank, Dim::any()}, DataType::int64());
}

// ---------------------------------------------------------------- scans

Type scan_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ScanopAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  DataType dtype = attrs.dtype.value_or(data.dtype);
  if (!attrs.axis) return TensorTypeNode::make({dims_product(*data.shape)}, dtype);
  if (data.shape->empty())
    throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  normalize_axis(*attrs.axis, int64_t(data.shape->size()), "axis");
  return TensorTypeNode::make(*data.shape, dtype);
}

// dyn.cumsum, dyn.cumprod: the axis is a scalar tensor known only at run time; the shape
// is kept (there is no flattening form).
Type dyn_scan_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<ScanopAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  expect_index_scalar(args, 1);
  if (data.shape->empty())
    throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
  return TensorTypeNode::make(*data.shape, attrs.dtype.value_or(data.dtype));
}

// ---------------------------------------------------------------- unique

// (values, indices, inverse_indices, counts); how many distinct values there
// are is known only at run time.
Type unique_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<UniqueAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  std::vector<Dim> values{Dim::any()};
  Dim scanned = dims_product(in);
  if (attrs.axis) {
    if (in.empty()) throw_error(args.arg_name(0), " must have rank >= 1, got ", describe(data));
    int64_t axis = normalize_axis(*attrs.axis, int64_t(in.size()), "axis");
    values = in;
    values[axis] = Dim::any();
    scanned = in[axis];
  }
  DataType i64 = DataType::int64();
  return TupleTypeNode::make(
      {TensorTypeNode::make(std::move(values), data.dtype), TensorTypeNode::make({Dim::any()}, i64),
       TensorTypeNode::make({scanned}, i64), TensorTypeNode::make({Dim::any()}, i64)});
}

// The constant operands of the ordering ops' runtime function (builtins::ordered): k (topk's
// attribute; dyn.topk passes its own operand), then (axis, ascending, outputs, index bits,
// whole axis).
Tensor int64_vector(const std::vector<int64_t>& values) {
  Tensor t = Tensor::empty({int64_t(values.size())}, DataType::int64());
  for (size_t i = 0; i < values.size(); ++i) static_cast<int64_t*>(t.data())[i] = values[i];
  return t;
}

Tensor int64_scalar(int64_t value) {
  Tensor t = Tensor::empty({}, DataType::int64());
  *static_cast<int64_t*>(t.data()) = value;
  return t;
}

std::vector<Tensor> topk_operands(const CallNode& call, bool with_k) {
  static const TopKAttrs defaults;
  const auto& a = call.attrs ? static_cast<const TopKAttrs&>(*call.attrs) : defaults;
  const int64_t outputs = a.ret_type == "values" ? 1 : a.ret_type == "indices" ? 2 : 3;
  // A k below 1 takes the whole axis (TVM's topk).
  Tensor options =
      int64_vector({a.axis, a.is_ascend ? 1 : 0, outputs, a.dtype.bits, with_k && a.k < 1 ? 1 : 0});
  if (!with_k) return {options};
  return {int64_scalar(std::max<int64_t>(a.k, 0)), options};
}

// sort and argsort: every element of the line.
std::vector<Tensor> sort_operands(int64_t axis, bool ascending, int64_t outputs, int bits) {
  return {int64_scalar(0), int64_vector({axis, ascending ? 1 : 0, outputs, bits, 1})};
}
}  // namespace

void register_index_ops(OpTable& table) {
  table.add("take")
      .describe("Picks elements of data along an axis (or of the flattened data) by indices.")
      .inputs({"data", "indices"})
      .attrs<TakeAttrs>()
      .type_relation(take_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("gather")
      .describe("Picks one element per index along an axis (ONNX GatherElements).")
      .inputs({"data", "indices"})
      .attrs<GatherAttrs>()
      .type_relation(gather_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("gather_nd")
      .describe("Picks slices of data by index tuples laid out on indices' first axis.")
      .inputs({"data", "indices"})
      .attrs<GatherNDAttrs>()
      .type_relation(gather_nd_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("scatter_elements")
      .describe("Writes or reduces updates into a copy of data at per-element indices.")
      .inputs({"data", "indices", "updates"})
      .attrs<ScatterElementsAttrs>()
      .type_relation(scatter_elements_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("scatter_nd")
      .describe("Writes or reduces slices of updates into a copy of data at index tuples.")
      .inputs({"data", "indices", "updates"})
      .attrs<ScatterNDAttrs>()
      .type_relation(scatter_nd_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("col2im")
      .describe("Sums sliding blocks back into images (ONNX Col2Im, PyTorch fold).")
      .inputs({"data"})
      .attrs<Col2ImAttrs>()
      .type_relation(col2im_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.col2im")
      .describe("col2im with the image and block shapes given as 1-D tensors at run time.")
      .inputs({"data", "image_shape", "block_shape"})
      .attrs<Col2ImAttrs>()
      .type_relation(dyn_col2im_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("one_hot")
      .describe("Expands indices into one-hot vectors along a new axis.")
      .inputs({"indices", "on_value", "off_value"})
      .attrs<OneHotAttrs>()
      .type_relation(one_hot_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("dyn.one_hot")
      .describe("one_hot with depth given as a scalar tensor at run time.")
      .inputs({"indices", "on_value", "off_value", "depth"})
      .attrs<OneHotAttrs>()
      .type_relation(dyn_one_hot_relation)
      .fusion_pattern(OpPattern::Opaque);
  // The VM runs the ordering ops with the runtime library's partial sort (builtins::ordered);
  // their computes, which the graph executor runs, count ranks in O(n^2).
  const std::string ordered = builtins::kOrdered;
  table.add("topk")
      .describe("The k largest (or smallest) elements along an axis, and their indices.")
      .inputs({"data"})
      .attrs<TopKAttrs>()
      .type_relation(topk_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", ordered)
      .set_extra("runtime_function_operands",
                 RuntimeFunctionOperands([](const CallNode& c) { return topk_operands(c, true); }));
  table.add("dyn.topk")
      .describe("topk with k given as a scalar tensor at run time.")
      .inputs({"data", "k"})
      .attrs<TopKAttrs>()
      .type_relation(dyn_topk_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", ordered)
      .set_extra("runtime_function_operands", RuntimeFunctionOperands([](const CallNode& c) {
                   return topk_operands(c, false);
                 }));
  table.add("sort")
      .describe("Sorts along an axis.")
      .inputs({"data"})
      .attrs<SortAttrs>()
      .type_relation(sort_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", ordered)
      .set_extra("runtime_function_operands", RuntimeFunctionOperands([](const CallNode& c) {
                   static const SortAttrs defaults;
                   const auto& a = c.attrs ? static_cast<const SortAttrs&>(*c.attrs) : defaults;
                   return sort_operands(a.axis, a.is_ascend, 1, 64);
                 }));
  table.add("argsort")
      .describe("The indices that sort data along an axis.")
      .inputs({"data"})
      .attrs<ArgsortAttrs>()
      .type_relation(argsort_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", ordered)
      .set_extra("runtime_function_operands", RuntimeFunctionOperands([](const CallNode& c) {
                   static const ArgsortAttrs defaults;
                   const auto& a = c.attrs ? static_cast<const ArgsortAttrs&>(*c.attrs) : defaults;
                   return sort_operands(a.axis, a.is_ascend, 2, a.dtype.bits);
                 }));
  table.add("nonzero")
      .describe("The coordinates of the non-zero elements, one row per dim (ONNX NonZero).")
      .inputs({"data"})
      .type_relation(nonzero_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("cumsum")
      .describe("Running sum along an axis (of the flattened data without one).")
      .inputs({"data"})
      .attrs<ScanopAttrs>()
      .type_relation(scan_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("cumprod")
      .describe("Running product along an axis (of the flattened data without one).")
      .inputs({"data"})
      .attrs<ScanopAttrs>()
      .type_relation(scan_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.cumsum")
      .describe("cumsum along an axis given as a scalar tensor at run time.")
      .inputs({"data", "axis"})
      .attrs<ScanopAttrs>()
      .type_relation(dyn_scan_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.cumprod")
      .describe("cumprod along an axis given as a scalar tensor at run time.")
      .inputs({"data", "axis"})
      .attrs<ScanopAttrs>()
      .type_relation(dyn_scan_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("unique")
      .describe(
          "The distinct elements (or slices along an axis), with first-occurrence indices, "
          "inverse indices and counts (ONNX Unique).")
      .inputs({"data"})
      .attrs<UniqueAttrs>()
      .type_relation(unique_relation)
      .fusion_pattern(OpPattern::Opaque);
}

}  // namespace anvil::ir
