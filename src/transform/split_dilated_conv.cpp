// SplitDilatedConv: a dilated convolution on a small map (the atrous heads of segmentation
// networks: dilation 12-36 on a 28 x 28 map) reads, for most outputs, mostly padding: with
// dilation 24 the off-centre taps of a 3x3 kernel touch the input only for the outermost 4 rows
// and columns. Shapes are static, so each tap's rectangle of valid outputs is known at compile
// time. The outputs are cut into bands of rows and of columns inside which every tap is either
// valid throughout or nowhere; each region (row band x column band) becomes its own
// convolution with only its valid taps, over the crop of the input it reads and with no
// padding, and the regions are joined by concatenation. The padded taps are never computed,
// and no padded copy of the input is made.
//
// Taken only where it removes at least a third of the multiply-adds: ordinary 3x3 convolutions
// with padding 1 lose only their border taps and stay whole.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/nn_geometry.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::constant_data;
using ir::static_shape;

// One band of output positions along an axis and the taps valid throughout it, [first, last].
struct Band {
  int64_t begin = 0, end = 0;
  int64_t first_tap = 0, last_tap = -1;
  int64_t taps() const { return last_tap - first_tap + 1; }
};

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The bands of one spatial axis: `input` positions, `output` positions, `kernel` taps with
// stride, dilation and leading padding `pad`. Output o reads input o * stride - pad + k *
// dilation for tap k; the outputs for which that lies inside the input form an interval per
// tap, and its ends cut the axis into bands. Empty when some band has no valid tap (its
// outputs would be constants; left to the whole convolution).
std::vector<Band> bands(int64_t input, int64_t output, int64_t kernel, int64_t stride,
                        int64_t dilation, int64_t pad) {
  std::vector<std::pair<int64_t, int64_t>> valid;  // [lo, hi) per tap
  std::set<int64_t> cuts = {0, output};
  for (int64_t k = 0; k < kernel; ++k) {
    const int64_t offset = k * dilation - pad;
    // o * stride + offset >= 0  and  o * stride + offset <= input - 1
    int64_t lo = std::max<int64_t>(0, floor_div(-offset + stride - 1, stride));
    int64_t hi = std::min<int64_t>(output, floor_div(input - 1 - offset, stride) + 1);
    if (hi < lo) hi = lo;
    valid.emplace_back(lo, hi);
    cuts.insert(lo);
    cuts.insert(hi);
  }
  std::vector<Band> result;
  std::vector<int64_t> points(cuts.begin(), cuts.end());
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    if (points[i] >= output) break;
    Band band{points[i], points[i + 1]};
    for (int64_t k = 0; k < kernel; ++k) {
      if (valid[size_t(k)].first > band.begin || valid[size_t(k)].second < band.end) continue;
      if (band.last_tap < band.first_tap) band.first_tap = k;
      band.last_tap = k;
    }
    if (band.taps() <= 0) return {};
    result.push_back(band);
  }
  return result;
}

ir::Expr concatenate(std::vector<ir::Expr> parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  auto attrs = ir::make_attrs<ir::ConcatenateAttrs>();
  attrs->axis = axis;
  return ir::call_op("concatenate", {ir::TupleNode::make(std::move(parts))}, ir::Attrs(attrs));
}

// w[:, :, kh0..kh1, kw0..kw1] of a constant OIHW weight.
Tensor weight_taps(const Tensor& w, const Band& rows, const Band& cols) {
  std::vector<int64_t> s = w.shape_vector();
  Tensor out = Tensor::empty({s[0], s[1], rows.taps(), cols.taps()}, w.dtype());
  const size_t elem = size_t(w.dtype().bytes());
  const char* src = static_cast<const char*>(w.data());
  char* dst = static_cast<char*>(out.data());
  int64_t o = 0;
  for (int64_t oi = 0; oi < s[0] * s[1]; ++oi)
    for (int64_t kh = rows.first_tap; kh <= rows.last_tap; ++kh)
      for (int64_t kw = cols.first_tap; kw <= cols.last_tap; ++kw, ++o)
        std::copy_n(src + size_t((oi * s[2] + kh) * s[3] + kw) * elem, elem,
                    dst + size_t(o) * elem);
  return out;
}

std::optional<ir::Expr> split_regions(const ir::CallNode& call, const ir::Expr& self) {
  const auto& a = detail::attrs_or_default<ir::Conv2DAttrs>(call);
  if (a.data_layout != "NCHW" || a.kernel_layout != "OIHW" ||
      !(a.out_layout.empty() || a.out_layout == "NCHW"))
    return std::nullopt;
  std::vector<int64_t> dilation = ir::nn::spatial_attr(a.dilation, 2, "dilation", 1);
  if (dilation[0] == 1 && dilation[1] == 1) return std::nullopt;
  std::vector<int64_t> strides = ir::nn::spatial_attr(a.strides, 2, "strides", 1);
  std::vector<int64_t> pad = ir::nn::expand_padding(a.padding, 2);
  std::optional<std::vector<int64_t>> in = static_shape(call.args[0]);
  std::optional<std::vector<int64_t>> ws = static_shape(call.args[1]);
  std::optional<std::vector<int64_t>> out = static_shape(self);
  if (!in || !ws || !out || in->size() != 4 || ws->size() != 4 || out->size() != 4)
    return std::nullopt;
  std::vector<Band> rows = bands((*in)[2], (*out)[2], (*ws)[2], strides[0], dilation[0], pad[0]);
  std::vector<Band> cols = bands((*in)[3], (*out)[3], (*ws)[3], strides[1], dilation[1], pad[1]);
  if (rows.empty() || cols.empty()) return std::nullopt;
  int64_t kept = 0;
  for (const Band& r : rows)
    for (const Band& c : cols) kept += (r.end - r.begin) * r.taps() * (c.end - c.begin) * c.taps();
  const int64_t whole = (*out)[2] * (*out)[3] * (*ws)[2] * (*ws)[3];
  if (kept * 3 > whole * 2) return std::nullopt;

  const Tensor* weight = constant_data(call.args[1]);
  std::vector<ir::Expr> row_parts;
  for (const Band& r : rows) {
    std::vector<ir::Expr> parts;
    for (const Band& c : cols) {
      // The input the region reads: from its first output's first valid tap to its last
      // output's last valid tap, all inside the input.
      const int64_t h0 = r.begin * strides[0] - pad[0] + r.first_tap * dilation[0];
      const int64_t h1 = (r.end - 1) * strides[0] - pad[0] + r.last_tap * dilation[0] + 1;
      const int64_t w0 = c.begin * strides[1] - pad[1] + c.first_tap * dilation[1];
      const int64_t w1 = (c.end - 1) * strides[1] - pad[1] + c.last_tap * dilation[1] + 1;
      ir::Expr data = ir::slice_axes(call.args[0], {h0, w0}, {h1, w1}, {2, 3});
      ir::Expr taps = weight ? ir::Expr(ir::ConstantNode::make(weight_taps(*weight, r, c)))
                             : ir::slice_axes(call.args[1], {r.first_tap, c.first_tap},
                                              {r.last_tap + 1, c.last_tap + 1}, {2, 3});
      Ref<ir::AttrsNode> attrs =
          call.attrs ? call.attrs->clone() : call.op()->def->default_attrs->clone();
      attrs->set_field("padding", std::vector<int64_t>{0, 0, 0, 0});
      attrs->set_field("kernel_size", std::vector<int64_t>{r.taps(), c.taps()});
      // One tap along an axis reads no second input position: no dilation there.
      attrs->set_field("dilation", std::vector<int64_t>{r.taps() == 1 ? 1 : dilation[0],
                                                        c.taps() == 1 ? 1 : dilation[1]});
      parts.push_back(ir::CallNode::make(call.callee, {data, taps}, ir::Attrs(attrs)));
    }
    row_parts.push_back(concatenate(std::move(parts), 3));
  }
  return concatenate(std::move(row_parts), 2);
}

}  // namespace

ir::IRModule split_dilated_conv(const ir::IRModule& mod) {
  return detail::rewrite_op_calls(mod, "nn.conv2d", split_regions);
}

}  // namespace anvil::transform
