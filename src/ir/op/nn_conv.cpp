// Convolutions: nn.conv1d/2d/3d, their transposes, the blocked
// nn.contrib_conv2d_NCHWc (and its bf16 form) that AlterOpLayout rewrites conv2d into, and the
// deformable convolutions. Shapes are read through nn::Layout into the
// canonical (N, C, spatial...) and (O, I, kernel...) orders, so NHWC with HWIO
// or OHWI and blocked layouts take the same path as NCHW.
#include "anvil/ir/attrs/nn.h"
#include "ir/op/families.h"
#include "ir/op/nn_util.h"

namespace anvil::ir {
namespace {

// The spatial axes of an op over n of them.
constexpr const char* spatial_axes(int n) { return n == 1 ? "W" : n == 2 ? "HW" : "DHW"; }

// The attributes common to a convolution and its transpose, checked.
struct ConvSetup {
  nn::Layout data_layout, kernel_layout, out_layout;
  std::vector<int64_t> strides, dilation, padding;
  std::vector<Dim> data;    // N, C, spatial...
  std::vector<Dim> weight;  // in the kernel order asked for, then kernel...
  DataType dtype;
};

template <typename AttrsT, int N>
ConvSetup setup_conv(const RelationArgs& args, const AttrsT& a, std::string_view kernel_order) {
  const std::string data_order = std::string("NC") + spatial_axes(N);
  const std::string weight_order = std::string(kernel_order) + spatial_axes(N);
  ConvSetup s{nn::Layout::parse(a.data_layout, "data_layout", data_order),
              nn::Layout::parse(a.kernel_layout, "kernel_layout", weight_order),
              nn::Layout::parse(a.out_layout.empty() ? a.data_layout : a.out_layout, "out_layout",
                                data_order),
              nn::spatial_attr(a.strides, N, "strides", 1),
              nn::spatial_attr(a.dilation, N, "dilation", 1),
              nn::expand_padding(a.padding, N),
              {},
              {},
              {}};
  if (a.groups < 1) throw_error("attribute 'groups' must be positive, got ", a.groups);
  s.dtype = nn::product_dtype(args, 0, 1, a.out_dtype);
  s.data = s.data_layout.to_primal(nn::shape_or_any(args, 0, s.data_layout.rank()), data_order,
                                   args.arg_name(0), "data_layout");
  s.weight = s.kernel_layout.to_primal(nn::shape_or_any(args, 1, s.kernel_layout.rank()),
                                       weight_order, args.arg_name(1), "kernel_layout");
  return s;
}

// Groups must split a channel count evenly; `what` names the count in the message.
void check_divides_channels(const RelationArgs& args, int64_t groups, const Dim& channels,
                            const char* what) {
  if (channels.is_int() && channels.int_value() % groups != 0)
    throw_error("attribute 'groups' = ", groups, " does not divide the ", channels.int_value(), " ",
                what, ": ", nn::inputs_text(args));
}

// The kernel's spatial dims, checked against kernel_size when that is set;
// a symbolic weight dim takes its size from kernel_size.
template <int N>
std::vector<Dim> kernel_dims(const RelationArgs& args, const std::vector<int64_t>& kernel_size,
                             const std::vector<Dim>& weight) {
  std::vector<Dim> kernel(weight.begin() + 2, weight.end());
  if (kernel_size.empty()) return kernel;
  std::vector<int64_t> sizes = nn::spatial_attr(kernel_size, N, "kernel_size", 1);
  for (int i = 0; i < N; ++i) {
    if (nn::provably_different(kernel[i], sizes[i]))
      throw_error("attribute 'kernel_size' = ", nn::ints_text(sizes), " but ", args.arg_name(1),
                  " has kernel ", dims_to_string(kernel), ": ", nn::inputs_text(args));
    if (!kernel[i].is_int()) kernel[i] = sizes[i];
  }
  return kernel;
}

// The output channel count: the weight's, checked against the channels attribute.
Dim output_channels(const RelationArgs& args, const std::optional<int64_t>& channels,
                    const Dim& from_weight) {
  if (!channels) return from_weight;
  if (*channels < 1) throw_error("attribute 'channels' must be positive, got ", *channels);
  if (nn::provably_different(from_weight, *channels))
    throw_error("attribute 'channels' = ", *channels, " but ", args.arg_name(1), " gives ",
                from_weight.to_string(), " output channels: ", nn::inputs_text(args));
  return from_weight.is_int() ? from_weight : Dim(*channels);
}

template <int N>
Type conv_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<ConvAttrs<N>>();
  ConvSetup s = setup_conv<ConvAttrs<N>, N>(args, a, "OI");
  const Dim& in_channels = s.data[1];
  const Dim& weight_in = s.weight[1];
  check_divides_channels(args, a.groups, in_channels, "channels of 'data'");
  check_divides_channels(args, a.groups, s.weight[0], "output channels of 'weight'");
  Dim per_group = floordiv(in_channels, a.groups);
  if (nn::provably_different(weight_in, per_group)) {
    std::string groups_note =
        a.groups == 1 ? "groups=1"
                      : str_cat("groups=", a.groups, ", so ", per_group.to_string(), " per group");
    throw_error(args.arg_name(1), " has ", weight_in.to_string(), " input channels but 'data' has ",
                in_channels.to_string(), " (", groups_note, "): ", nn::inputs_text(args));
  }
  std::vector<Dim> kernel = kernel_dims<N>(args, a.kernel_size, s.weight);
  std::vector<Dim> out = {s.data[0], output_channels(args, a.channels, s.weight[0])};
  const char* axes = spatial_axes(N);
  for (int i = 0; i < N; ++i)
    out.push_back(nn::window_output(s.data[2 + i], kernel[i], s.strides[i], s.dilation[i],
                                    s.padding[i], s.padding[N + i], false, "kernel", axes[i]));
  return TensorTypeNode::make(s.out_layout.from_primal(out, std::string("NC") + axes, "out_layout"),
                              s.dtype);
}

// The blocked form only differs in insisting on blocked layouts, which its
// compute (a register-tiled NCHW[x]c kernel) relies on.
Type conv2d_nchwc_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<Conv2DAttrs>();
  nn::Layout data = nn::Layout::parse(a.data_layout, "data_layout", "NCHW");
  nn::Layout kernel = nn::Layout::parse(a.kernel_layout, "kernel_layout", "OIHW");
  if (!data.block('C'))
    throw_error("attribute 'data_layout' = \"", a.data_layout,
                "\" must block the channels, as in NCHW16c");
  if (!kernel.block('I') || !kernel.block('O'))
    throw_error("attribute 'kernel_layout' = \"", a.kernel_layout,
                "\" must block both channel axes, as in OIHW16i16o");
  return conv_relation<2>(args);
}

// nn.contrib_conv2d_NCHWc_bf16: bfloat16 data (N, C/ib, H, W, ib) and a bfloat16 weight packed
// two input channels deep, (O/ob, C/ib/groups, KH, KW, ib/2, ob*2), whose channel pair (2q,
// 2q+1) of output channel j sits at [q, 2j], [q, 2j+1]; summed in float32 into (N, O/ob, OH, OW,
// ob). Made by the x86 bf16 strategy of nn.conv2d, which knows the channels and the image size:
// only the batch may be a size variable.
Type conv2d_nchwc_bf16_relation(const RelationArgs& args) {
  const TensorTypeNode& data = args.tensor(0);
  const TensorTypeNode& weight = args.tensor(1);
  if (data.dtype != DataType::bfloat16() || weight.dtype != DataType::bfloat16())
    throw_error("expects bfloat16 data and weight, got ", nn::inputs_text(args));
  std::optional<std::vector<int64_t>> w = weight.static_shape();
  if (!data.shape || data.shape->size() != 5 || !w || w->size() != 6)
    throw_error("expects 5-D data and a static 6-D weight, got ", nn::inputs_text(args));
  const std::vector<Dim>& d = *data.shape;
  for (size_t i = 1; i < 5; ++i)
    if (!d[i].is_static())
      throw_error("data dim ", i, " must be static, got ", nn::inputs_text(args));
  const auto& a = args.attrs_as<Conv2DAttrs>();
  const int64_t groups = std::max<int64_t>(1, a.groups);
  const std::vector<int64_t>& k = *w;
  if (d[1].int_value() != k[1] * groups || d[4].int_value() != k[4] * 2 || k[5] % 2 != 0 ||
      k[0] % groups != 0)
    throw_error("data blocks (", d[1].to_string(), " x ", d[4].to_string(),
                ") do not match the weight's (", k[1], " x ", k[4], " x 2) in ", groups,
                " group(s) of ", k[0], " output blocks");
  std::vector<int64_t> strides = nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = nn::spatial_attr(a.dilation, 2, "dilation", 1);
  std::vector<int64_t> pad = nn::expand_padding(a.padding, 2);
  std::vector<Dim> out = {d[0], k[0]};
  for (size_t i = 0; i < 2; ++i)
    out.push_back(nn::window_output(d[2 + i], k[2 + i], strides[i], dilation[i], pad[i], pad[2 + i],
                                    false, "kernel", "HW"[i]));
  out.push_back(k[5] / 2);
  return TensorTypeNode::make(std::move(out), DataType::float32());
}

template <int N>
Type conv_transpose_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<ConvTransposeAttrs<N>>();
  // The weight is (in channels, out channels per group, kernel...).
  ConvSetup s = setup_conv<ConvTransposeAttrs<N>, N>(args, a, "IO");
  const Dim& in_channels = s.data[1];
  check_divides_channels(args, a.groups, in_channels, "channels of 'data'");
  if (nn::provably_different(s.weight[0], in_channels))
    throw_error(args.arg_name(1), " has ", s.weight[0].to_string(),
                " input channels but 'data' has ", in_channels.to_string(), ": ",
                nn::inputs_text(args));
  std::vector<int64_t> output_padding = nn::spatial_attr(a.output_padding, N, "output_padding", 0);
  for (int i = 0; i < N; ++i)
    if (output_padding[i] >= std::max(s.strides[i], s.dilation[i]))
      throw_error("attribute 'output_padding' = ", nn::ints_text(output_padding),
                  " must be smaller than the stride or the dilation on each axis (strides ",
                  nn::ints_text(s.strides), ", dilation ", nn::ints_text(s.dilation), ")");
  std::vector<Dim> kernel = kernel_dims<N>(args, a.kernel_size, s.weight);
  std::vector<Dim> out = {s.data[0], output_channels(args, a.channels, s.weight[1] * a.groups)};
  const char* axes = spatial_axes(N);
  for (int i = 0; i < N; ++i) {
    Dim size = (s.data[2 + i] - 1) * s.strides[i] - (s.padding[i] + s.padding[N + i]) +
               (kernel[i] - 1) * s.dilation[i] + 1 + output_padding[i];
    if (size.is_int() && size.int_value() < 1)
      throw_error("output axis ", axes[i], " would have size ", size.int_value(), " (padding ",
                  nn::ints_text(s.padding),
                  " exceeds the transposed window): ", nn::inputs_text(args));
    out.push_back(size);
  }
  return TensorTypeNode::make(s.out_layout.from_primal(out, std::string("NC") + axes, "out_layout"),
                              s.dtype);
}

// Deformable convolution: the output is the plain convolution's; offset (and
// the modulated form's mask) give one value set per tap and output position.
Type deformable_conv_relation(const RelationArgs& args, bool modulated) {
  const auto& a = args.attrs_as<DeformableConv2DAttrs>();
  std::vector<int64_t> strides = nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> dilation = nn::spatial_attr(a.dilation, 2, "dilation", 1);
  std::vector<int64_t> padding = nn::expand_padding(a.padding, 2);
  if (a.groups < 1) throw_error("attribute 'groups' must be positive, got ", a.groups);
  if (a.deformable_groups < 1)
    throw_error("attribute 'deformable_groups' must be positive, got ", a.deformable_groups);
  DataType dtype = nn::product_dtype(args, 0, 2, a.out_dtype);
  std::vector<Dim> data = nn::shape_or_any(args, 0, 4), weight = nn::shape_or_any(args, 2, 4);
  std::vector<Dim> offset = nn::shape_or_any(args, 1, 4);
  if (data.size() != 4 || weight.size() != 4 || offset.size() != 4)
    throw_error("data, offset and weight must be 4-D (NCHW, NCHW, OIHW): ", nn::inputs_text(args));
  check_divides_channels(args, a.groups, data[1], "channels of 'data'");
  if (data[1].is_int() && data[1].int_value() % a.deformable_groups != 0)
    throw_error("attribute 'deformable_groups' = ", a.deformable_groups, " does not divide the ",
                data[1].int_value(), " channels of 'data': ", nn::inputs_text(args));
  if (nn::provably_different(weight[1], floordiv(data[1], a.groups)))
    throw_error(args.arg_name(2), " has ", weight[1].to_string(), " input channels but 'data' has ",
                data[1].to_string(), " (groups=", a.groups, "): ", nn::inputs_text(args));
  std::vector<Dim> kernel(weight.begin() + 2, weight.end());
  if (!a.kernel_size.empty()) {
    std::vector<int64_t> sizes = nn::spatial_attr(a.kernel_size, 2, "kernel_size", 1);
    for (int i = 0; i < 2; ++i) {
      if (nn::provably_different(kernel[i], sizes[i]))
        throw_error("attribute 'kernel_size' = ", nn::ints_text(sizes), " but ", args.arg_name(2),
                    " has kernel ", dims_to_string(kernel), ": ", nn::inputs_text(args));
      kernel[i] = sizes[i];
    }
  }
  if (a.channels && nn::provably_different(weight[0], *a.channels))
    throw_error("attribute 'channels' = ", *a.channels, " but ", args.arg_name(2), " gives ",
                weight[0].to_string(), " output channels: ", nn::inputs_text(args));
  std::vector<Dim> out = {data[0],
                          weight[0].is_int() || !a.channels ? weight[0] : Dim(*a.channels)};
  for (int i = 0; i < 2; ++i)
    out.push_back(nn::window_output(data[2 + i], kernel[i], strides[i], dilation[i], padding[i],
                                    padding[2 + i], false, "kernel", "HW"[i]));
  Dim taps = kernel[0] * kernel[1] * a.deformable_groups;
  auto expect_per_tap = [&](size_t i, const std::vector<Dim>& shape, const Dim& channels) {
    bool wrong = nn::provably_different(shape[1], channels);
    for (int k = 2; k < 4; ++k) wrong |= nn::provably_different(shape[size_t(k)], out[size_t(k)]);
    if (wrong)
      throw_error(args.arg_name(i), " must have shape (", data[0].to_string(), ", ",
                  channels.to_string(), ", ", out[2].to_string(), ", ", out[3].to_string(),
                  "), got ", dims_to_string(shape), ": ", nn::inputs_text(args));
  };
  expect_per_tap(1, offset, taps * 2);
  if (modulated) expect_per_tap(3, nn::shape_or_any(args, 3, 4), taps);
  return TensorTypeNode::make(out, dtype);
}

}  // namespace

void register_nn_conv_ops(OpTable& table) {
  table.add("nn.conv1d")
      .describe("1-D convolution over W (layouts NCW or NWC), with groups and dilation")
      .inputs({"data", "weight"})
      .attrs<Conv1DAttrs>()
      .type_relation(conv_relation<1>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.conv2d")
      .describe(
          "2-D convolution over H and W (NCHW with OIHW, NHWC with HWIO or OHWI); groups == "
          "channels is a depthwise convolution")
      .inputs({"data", "weight"})
      .attrs<Conv2DAttrs>()
      .type_relation(conv_relation<2>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.conv3d")
      .describe("3-D convolution over D, H and W (layouts NCDHW or NDHWC)")
      .inputs({"data", "weight"})
      .attrs<Conv3DAttrs>()
      .type_relation(conv_relation<3>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.conv1d_transpose")
      .describe("1-D transposed convolution; weight (in channels, out channels / groups, W)")
      .inputs({"data", "weight"})
      .attrs<Conv1DTransposeAttrs>()
      .type_relation(conv_transpose_relation<1>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.conv2d_transpose")
      .describe("2-D transposed convolution; weight (in channels, out channels / groups, H, W)")
      .inputs({"data", "weight"})
      .attrs<Conv2DTransposeAttrs>()
      .type_relation(conv_transpose_relation<2>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.conv3d_transpose")
      .describe("3-D transposed convolution; weight (in channels, out channels / groups, D, H, W)")
      .inputs({"data", "weight"})
      .attrs<Conv3DTransposeAttrs>()
      .type_relation(conv_transpose_relation<3>)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.deformable_conv2d")
      .describe("2-D convolution whose taps sample data bilinearly at learned offsets (NCHW, OIHW)")
      .inputs({"data", "offset", "weight"})
      .attrs<DeformableConv2DAttrs>()
      .type_relation([](const RelationArgs& args) { return deformable_conv_relation(args, false); })
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.modulated_deformable_conv2d")
      .describe("deformable convolution whose samples are also scaled by mask (ONNX DeformConv)")
      .inputs({"data", "offset", "weight", "mask"})
      .attrs<DeformableConv2DAttrs>()
      .type_relation([](const RelationArgs& args) { return deformable_conv_relation(args, true); })
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.contrib_conv2d_NCHWc")
      .describe(
          "2-D convolution in blocked layouts: data NCHW[x]c, weight OIHW[x]i[y]o, output "
          "out_layout (default: data_layout); the block factors come from the layout strings")
      .inputs({"data", "weight"})
      .attrs<Conv2DAttrs>()
      .type_relation(conv2d_nchwc_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.contrib_conv2d_NCHWc_bf16")
      .describe(
          "blocked 2-D convolution of bfloat16 data (NCHW{ib}c) by bfloat16 weights packed two "
          "input channels deep (OIHW{ib/2}i{ob}o2i), summed in float32 (NCHW{ob}c)")
      .inputs({"data", "weight"})
      .attrs<Conv2DAttrs>()
      .type_relation(conv2d_nchwc_bf16_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
}

}  // namespace anvil::ir
