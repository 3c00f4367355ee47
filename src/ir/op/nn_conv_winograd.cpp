// nn.contrib_conv2d_winograd_NCHWc: a stride-1, 3x3 convolution (dilated or not) in the blocked
// layout NCHW{b}c computed with Winograd's minimal filtering F(4x4, 3x3) (docs/winograd.md).
// A dilated one is d_h x d_w undilated convolutions, one per class of outputs (oh % d_h,
// ow % d_w), each over the inputs of its class. The
// weight is already transformed: shape (6, 6, O / ob, I, ob), kernel_layout "HWOI{ob}o", where
// H and W index the 6 x 6 points of the transformed tile, U[h][w][o / ob][i][o % ob] =
// (G g[o][i] G^T)[h][w]. The WinogradConv2D pass builds it from a constant OIHW weight.
#include <string>

#include "anvil/ir/attrs/nn.h"
#include "ir/op/families.h"
#include "ir/op/nn_util.h"

namespace anvil::ir {
namespace {

constexpr int64_t kTilePoints = 6;  // F(4x4, 3x3): 4 outputs + 3 taps - 1

// The block of the trailing sub-axis of `layout`, when it is "<primal><digits><sub>".
std::optional<int64_t> trailing_block(const std::string& layout, const std::string& primal,
                                      char sub) {
  if (layout.size() <= primal.size() + 1 || layout.compare(0, primal.size(), primal) != 0 ||
      layout.back() != sub)
    return std::nullopt;
  std::string digits = layout.substr(primal.size(), layout.size() - primal.size() - 1);
  if (digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int64_t block = std::stoll(digits);
  if (block < 1) return std::nullopt;
  return block;
}

Type conv2d_winograd_relation(const RelationArgs& args) {
  const auto& a = args.attrs_as<Conv2DAttrs>();
  const std::string out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  std::optional<int64_t> in_block = trailing_block(a.data_layout, "NCHW", 'c');
  std::optional<int64_t> out_block = trailing_block(out_layout, "NCHW", 'c');
  if (!in_block || !out_block)
    throw_error("attribute 'data_layout' = \"", a.data_layout, "\" / 'out_layout' = \"", out_layout,
                "\" must have the form NCHW<b>c");
  if (trailing_block(a.kernel_layout, "HWOI", 'o') != out_block)
    throw_error("attribute 'kernel_layout' = \"", a.kernel_layout, "\" must be \"HWOI", *out_block,
                "o\" (the transformed weight, blocked like the output)");
  for (int64_t s : nn::spatial_attr(a.strides, 2, "strides", 1))
    if (s != 1) throw_error("attribute 'strides' = ", nn::ints_text(a.strides), " must be 1");
  const std::vector<int64_t> dilation = nn::spatial_attr(a.dilation, 2, "dilation", 1);
  for (int64_t d : dilation)
    if (d < 1) throw_error("attribute 'dilation' = ", nn::ints_text(a.dilation), " must be >= 1");
  if (a.groups != 1) throw_error("attribute 'groups' = ", a.groups, " must be 1");
  if (!a.kernel_size.empty() &&
      nn::spatial_attr(a.kernel_size, 2, "kernel_size", 1) != std::vector<int64_t>{3, 3})
    throw_error("attribute 'kernel_size' = ", nn::ints_text(a.kernel_size), " must be [3, 3]");
  std::vector<int64_t> pad = nn::expand_padding(a.padding, 2);
  DataType dtype = nn::product_dtype(args, 0, 1, a.out_dtype);

  std::vector<Dim> data = nn::shape_or_any(args, 0, 5);
  std::vector<Dim> weight = nn::shape_or_any(args, 1, 5);
  if (data.size() != 5 || nn::provably_different(data[4], *in_block))
    throw_error(args.arg_name(0), " must be (N, C / ", *in_block, ", H, W, ", *in_block,
                ") for data_layout \"", a.data_layout, "\": ", nn::inputs_text(args));
  if (weight.size() != 5 || nn::provably_different(weight[0], kTilePoints) ||
      nn::provably_different(weight[1], kTilePoints) ||
      nn::provably_different(weight[4], *out_block))
    throw_error(args.arg_name(1), " must be the transformed weight (6, 6, O / ", *out_block,
                ", I, ", *out_block, "): ", nn::inputs_text(args));
  Dim in_channels = data[1] * *in_block;
  if (nn::provably_different(weight[3], in_channels))
    throw_error(args.arg_name(1), " has ", weight[3].to_string(), " input channels but ",
                args.arg_name(0), " has ", in_channels.to_string(), ": ", nn::inputs_text(args));
  Dim out_channels = weight[2] * *out_block;
  if (a.channels && nn::provably_different(out_channels, *a.channels))
    throw_error("attribute 'channels' = ", *a.channels, " but ", args.arg_name(1), " gives ",
                out_channels.to_string(), " output channels: ", nn::inputs_text(args));
  std::vector<Dim> out = {data[0], weight[2]};
  for (int i = 0; i < 2; ++i)
    out.push_back(nn::window_output(data[2 + i], Dim(3), 1, dilation[size_t(i)], pad[i], pad[2 + i],
                                    false, "kernel", "HW"[i]));
  out.push_back(Dim(*out_block));
  return TensorTypeNode::make(out, dtype);
}

}  // namespace

void register_nn_conv_winograd_ops(OpTable& table) {
  table.add("nn.contrib_conv2d_winograd_NCHWc")
      .describe(
          "3x3 stride-1 convolution (any dilation) by Winograd F(4x4, 3x3) in blocked layouts: "
          "data NCHW[x]c, "
          "weight transformed to (6, 6, O/ob, I, ob) (kernel_layout HWOI[ob]o), output "
          "out_layout (default: data_layout)")
      .inputs({"data", "weight"})
      .attrs<Conv2DAttrs>()
      .type_relation(conv2d_winograd_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
}

}  // namespace anvil::ir
