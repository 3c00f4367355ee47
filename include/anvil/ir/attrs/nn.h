// Attributes of the convolution, dense, pooling and image operators. Names and
// defaults follow TVM's Relay, so printed calls read like Relay text and TVM
// users find the fields they know.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/ir/attrs.h"

namespace anvil::ir {

namespace nn_detail {
// Default layouts of an op over N spatial axes (N = 1, 2 or 3).
constexpr const char* data_layout(int n) { return n == 1 ? "NCW" : n == 2 ? "NCHW" : "NCDHW"; }
constexpr const char* kernel_layout(int n) { return n == 1 ? "OIW" : n == 2 ? "OIHW" : "OIDHW"; }
constexpr const char* transpose_kernel_layout(int n) {
  return n == 1 ? "IOW" : n == 2 ? "IOHW" : "IODHW";
}
}  // namespace nn_detail

// ---------------------------------------------------------------- convolution

// nn.conv1d / nn.conv2d / nn.conv3d, and nn.contrib_conv2d_NCHWc (with blocked
// layouts such as data_layout "NCHW16c", kernel_layout "OIHW16i16o"). padding
// holds every axis' before-padding, then every after-padding (top, left,
// bottom, right in 2-D); one value or N values are accepted as shorthands.
template <int N>
struct ConvAttrs : AttrsBase<ConvAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.Conv1DAttrs"
                                          : N == 2 ? "nn.Conv2DAttrs"
                                                   : "nn.Conv3DAttrs";
  std::vector<int64_t> strides = std::vector<int64_t>(N, 1);
  std::vector<int64_t> padding = std::vector<int64_t>(2 * N, 0);
  std::vector<int64_t> dilation = std::vector<int64_t>(N, 1);
  int64_t groups = 1;
  std::optional<int64_t> channels;   // output channels; unset: from the weight
  std::vector<int64_t> kernel_size;  // empty: from the weight
  std::string data_layout = nn_detail::data_layout(N);
  std::string kernel_layout = nn_detail::kernel_layout(N);
  std::string out_layout;             // empty: same as data_layout
  std::optional<DataType> out_dtype;  // unset: the dtype of data

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("strides", strides);
    v("padding", padding);
    v("dilation", dilation);
    v("groups", groups);
    v("channels", channels);
    v("kernel_size", kernel_size);
    v("data_layout", data_layout);
    v("kernel_layout", kernel_layout);
    v("out_layout", out_layout);
    v("out_dtype", out_dtype);
  }
};
using Conv1DAttrs = ConvAttrs<1>;
using Conv2DAttrs = ConvAttrs<2>;
using Conv3DAttrs = ConvAttrs<3>;

// nn.conv1d_transpose / nn.conv2d_transpose / nn.conv3d_transpose. The weight
// is (in channels, out channels / groups, kernel...) as in TVM's IOHW;
// output_padding adds N values at the end of each spatial axis.
template <int N>
struct ConvTransposeAttrs : AttrsBase<ConvTransposeAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.Conv1DTransposeAttrs"
                                          : N == 2 ? "nn.Conv2DTransposeAttrs"
                                                   : "nn.Conv3DTransposeAttrs";
  std::optional<int64_t> channels;   // output channels; unset: from the weight
  std::vector<int64_t> kernel_size;  // empty: from the weight
  std::vector<int64_t> strides = std::vector<int64_t>(N, 1);
  std::vector<int64_t> output_padding = std::vector<int64_t>(N, 0);
  std::vector<int64_t> padding = std::vector<int64_t>(2 * N, 0);
  std::vector<int64_t> dilation = std::vector<int64_t>(N, 1);
  int64_t groups = 1;
  std::string data_layout = nn_detail::data_layout(N);
  std::string kernel_layout = nn_detail::transpose_kernel_layout(N);
  std::string out_layout;             // empty: same as data_layout
  std::optional<DataType> out_dtype;  // unset: the dtype of data

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("channels", channels);
    v("kernel_size", kernel_size);
    v("strides", strides);
    v("output_padding", output_padding);
    v("padding", padding);
    v("dilation", dilation);
    v("groups", groups);
    v("data_layout", data_layout);
    v("kernel_layout", kernel_layout);
    v("out_layout", out_layout);
    v("out_dtype", out_dtype);
  }
};
using Conv1DTransposeAttrs = ConvTransposeAttrs<1>;
using Conv2DTransposeAttrs = ConvTransposeAttrs<2>;
using Conv3DTransposeAttrs = ConvTransposeAttrs<3>;

// nn.deformable_conv2d (TVM's) and nn.modulated_deformable_conv2d (ONNX
// DeformConv with a mask): each kernel tap samples data bilinearly (zero
// outside) at its position plus a learned offset. offset is (N,
// deformable_groups * kh * kw * 2, out_h, out_w), a (dy, dx) pair per tap; the
// modulated form multiplies each sample by mask (N, deformable_groups * kh *
// kw, out_h, out_w). Layouts are NCHW data and OIHW weights.
struct DeformableConv2DAttrs : AttrsBase<DeformableConv2DAttrs> {
  static constexpr const char* kTypeKey = "nn.DeformableConv2DAttrs";
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> padding = {0, 0, 0, 0};
  std::vector<int64_t> dilation = {1, 1};
  int64_t deformable_groups = 1;
  int64_t groups = 1;
  std::optional<int64_t> channels;    // output channels; unset: from the weight
  std::vector<int64_t> kernel_size;   // empty: from the weight
  std::optional<DataType> out_dtype;  // unset: the dtype of data

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("strides", strides);
    v("padding", padding);
    v("dilation", dilation);
    v("deformable_groups", deformable_groups);
    v("groups", groups);
    v("channels", channels);
    v("kernel_size", kernel_size);
    v("out_dtype", out_dtype);
  }
};

// ---------------------------------------------------------------- dense and matmul

// nn.dense: data (..., K) times weight (N, K) transposed.
struct DenseAttrs : AttrsBase<DenseAttrs> {
  static constexpr const char* kTypeKey = "nn.DenseAttrs";
  std::optional<int64_t> units;       // N; unset: from the weight
  std::optional<DataType> out_dtype;  // unset: the dtype of data

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("units", units);
    v("out_dtype", out_dtype);
  }
};

// nn.matmul: tensor_a (..., M, K) times a 2-D tensor_b (K, N), each optionally transposed.
struct MatmulAttrs : AttrsBase<MatmulAttrs> {
  static constexpr const char* kTypeKey = "nn.MatmulAttrs";
  std::optional<int64_t> units;       // N; unset: from tensor_b
  std::optional<DataType> out_dtype;  // unset: the dtype of tensor_a
  bool transpose_a = false;
  bool transpose_b = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("units", units);
    v("out_dtype", out_dtype);
    v("transpose_a", transpose_a);
    v("transpose_b", transpose_b);
  }
};

// nn.batch_matmul: x (B, M, K) times y (B, N, K) by default (TVM's NT form).
struct BatchMatmulAttrs : AttrsBase<BatchMatmulAttrs> {
  static constexpr const char* kTypeKey = "nn.BatchMatmulAttrs";
  std::optional<DataType> out_dtype;  // unset: the dtype of x
  bool transpose_a = false;
  bool transpose_b = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("out_dtype", out_dtype);
    v("transpose_a", transpose_a);
    v("transpose_b", transpose_b);
  }
};

// matmul: numpy's matmul (ONNX MatMul), with broadcast batch dims and 1-D operands.
struct NumpyMatmulAttrs : AttrsBase<NumpyMatmulAttrs> {
  static constexpr const char* kTypeKey = "NumpyMatmulAttrs";
  std::optional<DataType> out_dtype;  // unset: the dtype of a (set for int8 x int8 -> int32)

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("out_dtype", out_dtype);
  }
};

// nn.bias_add: adds a 1-D bias along one axis of data.
struct BiasAddAttrs : AttrsBase<BiasAddAttrs> {
  static constexpr const char* kTypeKey = "nn.BiasAddAttrs";
  int64_t axis = 1;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("axis", axis);
  }
};

// ---------------------------------------------------------------- pooling

// nn.max_pool1d/2d/3d. padding as in ConvAttrs. With ceil_mode the output
// rounds up, but a window never starts in the after-padding.
template <int N>
struct MaxPoolAttrs : AttrsBase<MaxPoolAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.MaxPool1DAttrs"
                                          : N == 2 ? "nn.MaxPool2DAttrs"
                                                   : "nn.MaxPool3DAttrs";
  std::vector<int64_t> pool_size = std::vector<int64_t>(N, 1);
  std::vector<int64_t> strides = std::vector<int64_t>(N, 1);
  std::vector<int64_t> dilation = std::vector<int64_t>(N, 1);
  std::vector<int64_t> padding = std::vector<int64_t>(2 * N, 0);
  std::string layout = nn_detail::data_layout(N);
  std::string out_layout;  // empty: same as layout
  bool ceil_mode = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("pool_size", pool_size);
    v("strides", strides);
    v("dilation", dilation);
    v("padding", padding);
    v("layout", layout);
    v("out_layout", out_layout);
    v("ceil_mode", ceil_mode);
  }
};
using MaxPool1DAttrs = MaxPoolAttrs<1>;
using MaxPool2DAttrs = MaxPoolAttrs<2>;
using MaxPool3DAttrs = MaxPoolAttrs<3>;

// nn.avg_pool1d/2d/3d; count_include_pad divides by the taps inside the input and its padding
// (a ceil_mode overhang past the padding is not counted).
template <int N>
struct AvgPoolAttrs : AttrsBase<AvgPoolAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.AvgPool1DAttrs"
                                          : N == 2 ? "nn.AvgPool2DAttrs"
                                                   : "nn.AvgPool3DAttrs";
  std::vector<int64_t> pool_size = std::vector<int64_t>(N, 1);
  std::vector<int64_t> strides = std::vector<int64_t>(N, 1);
  std::vector<int64_t> dilation = std::vector<int64_t>(N, 1);
  std::vector<int64_t> padding = std::vector<int64_t>(2 * N, 0);
  std::string layout = nn_detail::data_layout(N);
  std::string out_layout;  // empty: same as layout
  bool ceil_mode = false;
  bool count_include_pad = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("pool_size", pool_size);
    v("strides", strides);
    v("dilation", dilation);
    v("padding", padding);
    v("layout", layout);
    v("out_layout", out_layout);
    v("ceil_mode", ceil_mode);
    v("count_include_pad", count_include_pad);
  }
};
using AvgPool1DAttrs = AvgPoolAttrs<1>;
using AvgPool2DAttrs = AvgPoolAttrs<2>;
using AvgPool3DAttrs = AvgPoolAttrs<3>;

// nn.lp_pool1d/2d/3d (ONNX LpPool): (sum over the window of |x|^p_value)^(1/p_value).
template <int N>
struct LPPoolAttrs : AttrsBase<LPPoolAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.LPPool1DAttrs"
                                          : N == 2 ? "nn.LPPool2DAttrs"
                                                   : "nn.LPPool3DAttrs";
  double p_value = 2.0;
  std::vector<int64_t> pool_size = std::vector<int64_t>(N, 1);
  std::vector<int64_t> strides = std::vector<int64_t>(N, 1);
  std::vector<int64_t> dilation = std::vector<int64_t>(N, 1);
  std::vector<int64_t> padding = std::vector<int64_t>(2 * N, 0);
  std::string layout = nn_detail::data_layout(N);
  std::string out_layout;  // empty: same as layout
  bool ceil_mode = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("p_value", p_value);
    v("pool_size", pool_size);
    v("strides", strides);
    v("dilation", dilation);
    v("padding", padding);
    v("layout", layout);
    v("out_layout", out_layout);
    v("ceil_mode", ceil_mode);
  }
};
using LPPool1DAttrs = LPPoolAttrs<1>;
using LPPool2DAttrs = LPPoolAttrs<2>;
using LPPool3DAttrs = LPPoolAttrs<3>;

// nn.global_max_pool2d / nn.global_avg_pool2d: the spatial axes shrink to 1.
struct GlobalPool2DAttrs : AttrsBase<GlobalPool2DAttrs> {
  static constexpr const char* kTypeKey = "nn.GlobalPool2DAttrs";
  std::string layout = "NCHW";
  std::string out_layout;  // empty: same as layout

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("layout", layout);
    v("out_layout", out_layout);
  }
};

// nn.adaptive_{max,avg}_pool1d/2d/3d. output_size: N values, one value for
// every spatial axis, or empty to keep the input's spatial size.
template <int N>
struct AdaptivePoolAttrs : AttrsBase<AdaptivePoolAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.AdaptivePool1DAttrs"
                                          : N == 2 ? "nn.AdaptivePool2DAttrs"
                                                   : "nn.AdaptivePool3DAttrs";
  std::vector<int64_t> output_size;
  std::string layout = nn_detail::data_layout(N);
  std::string out_layout;  // empty: same as layout

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("output_size", output_size);
    v("layout", layout);
    v("out_layout", out_layout);
  }
};
using AdaptivePool1DAttrs = AdaptivePoolAttrs<1>;
using AdaptivePool2DAttrs = AdaptivePoolAttrs<2>;
using AdaptivePool3DAttrs = AdaptivePoolAttrs<3>;

// nn.max_unpool1d/2d/3d (ONNX MaxUnpool): data scattered into zeros at
// indices, the flat indices that max pooling with argmax gives, into a tensor
// of the size the window implies, (in - 1) * stride + pool_size - padding
// before and after. A larger output_size places that at the start and fills
// the rest with zeros (dyn.nn.max_unpool*d take it at run time). Layout NCW,
// NCHW or NCDHW.
template <int N>
struct MaxUnpoolAttrs : AttrsBase<MaxUnpoolAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "nn.MaxUnpool1DAttrs"
                                          : N == 2 ? "nn.MaxUnpool2DAttrs"
                                                   : "nn.MaxUnpool3DAttrs";
  std::vector<int64_t> pool_size = std::vector<int64_t>(N, 1);
  std::vector<int64_t> strides = std::vector<int64_t>(N, 1);
  std::vector<int64_t> padding = std::vector<int64_t>(2 * N, 0);
  std::vector<int64_t> output_size;  // N spatial sizes; empty: the implied size

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("pool_size", pool_size);
    v("strides", strides);
    v("padding", padding);
    v("output_size", output_size);
  }
};
using MaxUnpool1DAttrs = MaxUnpoolAttrs<1>;
using MaxUnpool2DAttrs = MaxUnpoolAttrs<2>;
using MaxUnpool3DAttrs = MaxUnpoolAttrs<3>;

// ---------------------------------------------------------------- padding and image

// nn.pad: pad_width is [before_0, after_0, before_1, after_1, ...], two
// non-negative values per axis; pad_mode is "constant", "reflect", "edge" or
// "wrap" (repeats the axis, as numpy's np.pad).
// The constant fill value is the op's second input (a scalar), as in TVM.
struct PadAttrs : AttrsBase<PadAttrs> {
  static constexpr const char* kTypeKey = "nn.PadAttrs";
  std::vector<int64_t> pad_width;
  std::string pad_mode = "constant";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("pad_width", pad_width);
    v("pad_mode", pad_mode);
  }
};

// image.resize1d/2d/3d. Exactly one of size (the output's spatial size) and
// scales (output = floor(input * scale), as ONNX Resize) is given; with size,
// coordinate_scales (one per axis, optional) replaces size / input in the
// coordinate transformation (ONNX keep_aspect_ratio_policy, which rounds
// input * scale to the size). roi holds every axis' start then every end, for
// tf_crop_and_resize. method: nearest_neighbor, linear or cubic;
// coordinate_transformation_mode: half_pixel, half_pixel_symmetric,
// align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn or
// tf_crop_and_resize; rounding_method (nearest only): "", round, floor, ceil,
// round_prefer_floor or round_prefer_ceil. antialias widens linear and cubic
// filters by 1 / scale when downsampling.
template <int N>
struct ResizeAttrs : AttrsBase<ResizeAttrs<N>> {
  static constexpr const char* kTypeKey = N == 1   ? "image.Resize1DAttrs"
                                          : N == 2 ? "image.Resize2DAttrs"
                                                   : "image.Resize3DAttrs";
  std::vector<int64_t> size;
  std::vector<double> scales;
  std::vector<double> roi;
  std::string layout = nn_detail::data_layout(N);
  std::string method = "linear";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string rounding_method;
  double cubic_alpha = -0.5;
  int64_t cubic_exclude = 0;  // 1: cubic weights outside the input are dropped and renormalized
  double extrapolation_value = 0.0;
  std::optional<DataType> out_dtype;  // unset: the dtype of data
  bool antialias = false;
  std::vector<double> coordinate_scales;  // empty: size / input

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("size", size);
    v("scales", scales);
    v("roi", roi);
    v("layout", layout);
    v("method", method);
    v("coordinate_transformation_mode", coordinate_transformation_mode);
    v("rounding_method", rounding_method);
    v("cubic_alpha", cubic_alpha);
    v("cubic_exclude", cubic_exclude);
    v("extrapolation_value", extrapolation_value);
    v("out_dtype", out_dtype);
    v("antialias", antialias);
    v("coordinate_scales", coordinate_scales);
  }
};
using Resize1DAttrs = ResizeAttrs<1>;
using Resize2DAttrs = ResizeAttrs<2>;
using Resize3DAttrs = ResizeAttrs<3>;

// ---------------------------------------------------------------- padding and resize at run time

// dyn.nn.pad: padding amounts known only at run time (ONNX Pad with a
// computed `pads` input). pad_mode is "constant", "reflect", "edge" or "wrap";
// reflect and wrap repeat as often as the amount needs (numpy's np.pad).
struct DynPadAttrs : AttrsBase<DynPadAttrs> {
  static constexpr const char* kTypeKey = "dyn.nn.PadAttrs";
  std::string pad_mode = "constant";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("pad_mode", pad_mode);
  }
};

// dyn.image.resize: ONNX Resize over any axes of a tensor of any rank, with
// scales or sizes known only at run time. `target` says what the op's
// `target` input holds: "scales" (one float per resized axis; output =
// floor(input * scale)) or "sizes" (one output size per resized axis, adjusted
// by keep_aspect_ratio_policy: stretch, not_larger or not_smaller). axes lists
// the resized axes (empty: all). The fields shared with ResizeAttrs mean the
// same; coordinate_transformation_mode also takes half_pixel_symmetric, and
// antialias widens linear and cubic filters when downsampling.
struct DynResizeAttrs : AttrsBase<DynResizeAttrs> {
  static constexpr const char* kTypeKey = "dyn.image.ResizeAttrs";
  std::string target = "scales";
  std::vector<int64_t> axes;
  std::string keep_aspect_ratio_policy = "stretch";
  std::string method = "linear";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string rounding_method;
  double cubic_alpha = -0.75;
  int64_t cubic_exclude = 0;
  double extrapolation_value = 0.0;
  bool antialias = false;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("target", target);
    v("axes", axes);
    v("keep_aspect_ratio_policy", keep_aspect_ratio_policy);
    v("method", method);
    v("coordinate_transformation_mode", coordinate_transformation_mode);
    v("rounding_method", rounding_method);
    v("cubic_alpha", cubic_alpha);
    v("cubic_exclude", cubic_exclude);
    v("extrapolation_value", extrapolation_value);
    v("antialias", antialias);
  }
};

// image.grid_sample (as TVM's): samples data (NCHW or NCDHW) at the points of
// grid, (N, 2, out_h, out_w) holding x then y (or (N, 3, out_d, out_h, out_w)
// holding x, y, z), each from -1 to 1 across the input. method: nearest
// (halves round to even), bilinear (linear in every axis) or bicubic (Keys,
// a = -0.75); padding_mode: zeros, border or reflection; align_corners puts
// -1 and 1 on the centres of the corner elements rather than their outer edges.
struct GridSampleAttrs : AttrsBase<GridSampleAttrs> {
  static constexpr const char* kTypeKey = "image.GridSampleAttrs";
  std::string method = "bilinear";
  std::string layout = "NCHW";
  std::string padding_mode = "zeros";
  bool align_corners = true;

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("method", method);
    v("layout", layout);
    v("padding_mode", padding_mode);
    v("align_corners", align_corners);
  }
};

// nn.depth_to_space / nn.space_to_depth. mode (depth_to_space only): "DCR"
// reads channels as (block, block, C'), "CRD" as (C', block, block).
struct SubPixelAttrs : AttrsBase<SubPixelAttrs> {
  static constexpr const char* kTypeKey = "nn.SubPixelAttrs";
  int64_t block_size = 1;
  std::string layout = "NCHW";
  std::string mode = "DCR";

  template <typename Visit>
  void visit_fields(Visit&& v) {
    v("block_size", block_size);
    v("layout", layout);
    v("mode", mode);
  }
};

}  // namespace anvil::ir
