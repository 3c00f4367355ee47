// Pooling: max (optionally with argmax indices), average and Lp pooling over 1
// to 3 spatial axes, max unpooling, global pooling, and adaptive pooling. Layouts are read
// through nn::Layout, so NHWC and blocked NCHW16c (which AlterOpLayout
// propagates) take the NCHW path.
#include "anvil/ir/attrs/nn.h"
#include "ir/op/families.h"
#include "ir/op/nn_util.h"

namespace anvil::ir {
namespace {

// The spatial axes of an op over n of them.
constexpr const char* spatial_axes(int n) { return n == 1 ? "W" : n == 2 ? "HW" : "DHW"; }

// Input and output layouts of a pooling op, and the input in (N, C, spatial...) order.
struct PoolShapes {
  nn::Layout out_layout;
  std::vector<Dim> data;
  std::string order;
};

template <int N>
PoolShapes read_pool_input(const RelationArgs& args, const std::string& layout_text,
                           const std::string& out_layout_text) {
  std::string order = std::string("NC") + spatial_axes(N);
  nn::Layout layout = nn::Layout::parse(layout_text, "layout", order);
  nn::Layout out_layout = nn::Layout::parse(out_layout_text.empty() ? layout_text : out_layout_text,
                                            "out_layout", order);
  std::vector<Dim> data =
      layout.to_primal(nn::shape_or_any(args, 0, layout.rank()), order, args.arg_name(0), "layout");
  return {std::move(out_layout), std::move(data), std::move(order)};
}

Type make_output(const RelationArgs& args, const PoolShapes& in, const std::vector<Dim>& out) {
  return TensorTypeNode::make(in.out_layout.from_primal(out, in.order, "out_layout"),
                              nn::input_dtype(args, 0));
}

// Max, average and Lp pooling share every field but count_include_pad and p_value.
template <typename AttrsT, int N>
Type pool_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<AttrsT>();
  PoolShapes in = read_pool_input<N>(args, a.layout, a.out_layout);
  std::vector<int64_t> pool = nn::spatial_attr(a.pool_size, N, "pool_size", 1);
  std::vector<int64_t> strides = nn::spatial_attr(a.strides, N, "strides", 1);
  std::vector<int64_t> dilation = nn::spatial_attr(a.dilation, N, "dilation", 1);
  std::vector<int64_t> padding = nn::expand_padding(a.padding, N);
  // A window lying wholly in the padding would have nothing to pool.
  for (int i = 0; i < N; ++i) {
    int64_t window = (pool[i] - 1) * dilation[i] + 1;
    if (padding[i] >= window || padding[N + i] >= window)
      throw_error("attribute 'padding' = ", nn::ints_text(padding),
                  " must be smaller than the pool window on each axis (pool_size ",
                  nn::ints_text(pool), ", dilation ", nn::ints_text(dilation), ")");
  }
  std::vector<Dim> out = {in.data[0], in.data[1]};
  const char* axes = spatial_axes(N);
  for (int i = 0; i < N; ++i)
    out.push_back(nn::window_output(in.data[2 + i], pool[i], strides[i], dilation[i], padding[i],
                                    padding[N + i], a.ceil_mode, "pool window", axes[i]));
  return make_output(args, in, out);
}

template <int N>
Type lp_pool_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<LPPoolAttrs<N>>();
  if (!(a.p_value > 0)) throw_error("attribute 'p_value' must be positive, got ", a.p_value);
  return pool_relation<LPPoolAttrs<N>, N>(args);
}

// Max pooling that also returns, for each output, the row-major flat index
// into data of the element chosen (ONNX MaxPool's Indices output). The index
// counts in the canonical layout only, so that is the one layout accepted.
template <int N>
Type max_pool_argmax_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<MaxPoolAttrs<N>>();
  const std::string order = std::string("NC") + spatial_axes(N);
  if (a.layout != order || (!a.out_layout.empty() && a.out_layout != order))
    throw_error("attributes 'layout' and 'out_layout' must be ", order,
                " (the indices count in it), got \"", a.layout, "\" and \"", a.out_layout, "\"");
  Type values = pool_relation<MaxPoolAttrs<N>, N>(args);
  return TupleTypeNode::make(
      {values, TensorTypeNode::make(*as<TensorTypeNode>(values)->shape, DataType::int64())});
}

// Indices must be integers of the data's shape.
void check_unpool_indices(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& indices = args.tensor(1);
  if (!indices.dtype.is_int() && !indices.dtype.is_uint())
    throw_error(args.arg_name(1), " must hold integers, got ", relation::describe(indices));
  bool same = indices.shape->size() == data.shape->size();
  for (size_t i = 0; same && i < data.shape->size(); ++i)
    same = !nn::provably_different((*data.shape)[i], (*indices.shape)[i]);
  if (!same)
    throw_error(args.arg_name(1), " must have the shape of 'data': ", nn::inputs_text(args));
}

template <int N>
Type max_unpool_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<MaxUnpoolAttrs<N>>();
  const std::string order = std::string("NC") + spatial_axes(N);
  std::vector<Dim> data = nn::shape_or_any(args, 0, N + 2);
  if (data.size() != N + 2)
    throw_error(args.arg_name(0), " must be ", order, ", got ", nn::inputs_text(args));
  check_unpool_indices(args);
  std::vector<int64_t> pool = nn::spatial_attr(a.pool_size, N, "pool_size", 1);
  std::vector<int64_t> strides = nn::spatial_attr(a.strides, N, "strides", 1);
  std::vector<int64_t> padding = nn::expand_padding(a.padding, N);
  std::vector<Dim> out = {data[0], data[1]};
  if (!a.output_size.empty()) {
    std::vector<int64_t> size = nn::spatial_attr(a.output_size, N, "output_size", 0);
    out.insert(out.end(), size.begin(), size.end());
  } else {
    for (int i = 0; i < N; ++i)
      out.push_back((data[2 + i] - 1) * strides[i] + (pool[i] - padding[i] - padding[N + i]));
  }
  return TensorTypeNode::make(out, nn::input_dtype(args, 0));
}

// The output shape arrives at run time; only N and C are known.
template <int N>
Type dyn_max_unpool_relation(const RelationArgs& args) {
  max_unpool_relation<N>(args);
  const auto* shape = as<TensorTypeNode>(args.inputs[2]);
  if (!shape || !(shape->dtype.is_int() || shape->dtype.is_uint()) ||
      (shape->shape && shape->shape->size() != 1))
    throw_error(args.arg_name(2), " must be a 1-D tensor of integers, got ",
                type_to_string(args.inputs[2]));
  std::vector<Dim> out = *args.tensor(0).shape;
  for (size_t i = 2; i < out.size(); ++i) out[i] = Dim::any();
  return TensorTypeNode::make(out, nn::input_dtype(args, 0));
}

Type global_pool_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<GlobalPool2DAttrs>();
  PoolShapes in = read_pool_input<2>(args, a.layout, a.out_layout);
  return make_output(args, in, {in.data[0], in.data[1], 1, 1});
}

template <int N>
Type adaptive_pool_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<AdaptivePoolAttrs<N>>();
  PoolShapes in = read_pool_input<N>(args, a.layout, a.out_layout);
  std::vector<Dim> out = in.data;
  if (!a.output_size.empty()) {
    std::vector<int64_t> size = nn::spatial_attr(a.output_size, N, "output_size", 1);
    for (int i = 0; i < N; ++i) out[2 + i] = size[i];
  }
  return make_output(args, in, out);
}

template <int N>
void register_windowed(OpTable& table) {
  const std::string dims = std::to_string(N) + "d";
  const std::string axes = spatial_axes(N);
  table.add("nn.max_pool" + dims)
      .describe("max pooling over " + axes + "; ceil_mode never starts a window in the padding")
      .inputs({"data"})
      .attrs<MaxPoolAttrs<N>>()
      .type_relation(pool_relation<MaxPoolAttrs<N>, N>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.max_pool" + dims + "_with_argmax")
      .describe("max pooling over " + axes +
                " returning (values, int64 flat indices into data of the maxima)")
      .inputs({"data"})
      .attrs<MaxPoolAttrs<N>>()
      .type_relation(max_pool_argmax_relation<N>)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.max_unpool" + dims)
      .describe("scatters data into zeros at flat output indices, undoing max pooling over " + axes)
      .inputs({"data", "indices"})
      .attrs<MaxUnpoolAttrs<N>>()
      .type_relation(max_unpool_relation<N>)
      .fusion_pattern(OpPattern::Opaque);
  table.add("dyn.nn.max_unpool" + dims)
      .describe("nn.max_unpool" + dims + " with the whole output shape given at run time")
      .inputs({"data", "indices", "output_shape"})
      .attrs<MaxUnpoolAttrs<N>>()
      .type_relation(dyn_max_unpool_relation<N>)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.avg_pool" + dims)
      .describe("average pooling over " + axes +
                "; count_include_pad counts padded elements in the divisor")
      .inputs({"data"})
      .attrs<AvgPoolAttrs<N>>()
      .type_relation(pool_relation<AvgPoolAttrs<N>, N>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.lp_pool" + dims)
      .describe("Lp pooling over " + axes + ": (sum of |x|^p_value over the window)^(1/p_value)")
      .inputs({"data"})
      .attrs<LPPoolAttrs<N>>()
      .type_relation(lp_pool_relation<N>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.adaptive_max_pool" + dims)
      .describe("max pooling of " + axes + " into output_size evenly spread windows")
      .inputs({"data"})
      .attrs<AdaptivePoolAttrs<N>>()
      .type_relation(adaptive_pool_relation<N>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.adaptive_avg_pool" + dims)
      .describe("average pooling of " + axes + " into output_size evenly spread windows")
      .inputs({"data"})
      .attrs<AdaptivePoolAttrs<N>>()
      .type_relation(adaptive_pool_relation<N>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
}

}  // namespace

void register_nn_pool_ops(OpTable& table) {
  register_windowed<1>(table);
  register_windowed<2>(table);
  register_windowed<3>(table);
  table.add("nn.global_max_pool2d")
      .describe("max over all of H and W, keeping them as size 1")
      .inputs({"data"})
      .attrs<GlobalPool2DAttrs>()
      .type_relation(global_pool_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.global_avg_pool2d")
      .describe("average over all of H and W, keeping them as size 1")
      .inputs({"data"})
      .attrs<GlobalPool2DAttrs>()
      .type_relation(global_pool_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
}

}  // namespace anvil::ir
