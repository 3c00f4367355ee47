// AlterOpLayout for x86: convolutions move to the blocked NCHW[x]c layout with their weights
// re-packed at compile time, and the elementwise ops around them follow, so that the layout
// changes are paid once at the edges of a run of convolutions rather than around each one.
// Dense layers and matmuls with constant 2-D weights become nn.contrib_dense_pack against the
// weight packed in blocks of output columns, (N / b, K, b), so that one column tile of the x86
// schedule reads one contiguous panel (a row of the plain (K, N) weight is N floats apart from
// the next, which for N = 768 or 3072 maps a whole panel onto a few cache sets). A width that
// takes no full vector falls back to a matmul against the transposed weight.
//
// Every rewritten call remembers its blocked form; a consumer that works in the blocked layout
// takes that form directly, any other consumer gets (one shared) layout_transform back to
// NCHW. A back transform nobody uses simply drops out of the graph.
#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using detail::constant_data;
using detail::op_call;
using detail::static_shape;
using detail::transform_layout;

// The blocked form of a 4-D NCHW tensor: a 5-D NCHW{block}c expression. A convolution whose
// output channels take no full vector block (SqueezeNet's 1000 classes = 125 x 8) computes
// zero-weight channels up to the next multiple of the vector: its blocked value then holds more
// channels than the tensor it stands for, and the extra ones are sliced off on the way back to
// NCHW.
struct BlockedValue {
  ir::Expr expr;
  int64_t block = 0;
  std::vector<ir::Dim> shape;   // the NCHW shape it stands for; the batch may be symbolic
  int64_t stored_channels = 0;  // channels of expr: shape[1], or more when padded

  int64_t channels() const { return shape[1].int_value(); }
  bool padded() const { return stored_channels > channels(); }
};

// The shape of a 4-D NCHW value whose channels and spatial dims are static (the batch may be
// a size variable: one package then serves every batch); nullopt otherwise.
std::optional<std::vector<ir::Dim>> nchw_dims(const ir::Expr& e) {
  std::optional<std::vector<ir::Dim>> dims = detail::shape_dims(e);
  if (!dims || dims->size() != 4) return std::nullopt;
  for (size_t i = 1; i < 4; ++i)
    if (!(*dims)[i].is_static()) return std::nullopt;
  if ((*dims)[0].is_any()) return std::nullopt;
  return dims;
}

std::string blocked_layout(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

// The largest power of two up to lanes that divides channels.
int64_t channel_block(int64_t channels, int vector_lanes) {
  for (int64_t b = vector_lanes; b > 1; b /= 2)
    if (channels % b == 0) return b;
  return 1;
}

bool is_float32(const ir::Expr& e) {
  std::optional<DataType> dtype = detail::tensor_dtype(e);
  return dtype && *dtype == DataType::float32();
}

// OIHW -> OIHW{ib}i{ob}o: w'[oo, io, h, w, ii, oi] = w[oo * ob + oi, io * ib + ii, h, w], with
// zero weights for the output channels from O up to stored_out (a multiple of ob, >= O).
Tensor pack_conv_weight(const Tensor& weight, int64_t ib, int64_t ob, int64_t stored_out) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t out = s[0], in = s[1], taps = s[2] * s[3];
  Tensor packed = Tensor::zeros({stored_out / ob, in / ib, s[2], s[3], ib, ob}, weight.dtype());
  const float* src = static_cast<const float*>(weight.data());
  float* dst = static_cast<float*>(packed.data());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t t = 0; t < taps; ++t) {
        int64_t to = ((((o / ob) * (in / ib) + i / ib) * taps + t) * ib + i % ib) * ob + o % ob;
        dst[to] = src[(o * in + i) * taps + t];
      }
  return packed;
}

// The (K, N) matrix `weight` (or, with `rows_are_columns`, the (N, K) weight of nn.dense) in
// blocks of b output columns: packed[n / b, k, n % b] = element (k, n).
Tensor pack_columns(const Tensor& weight, bool rows_are_columns, int64_t block) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t k_size = rows_are_columns ? s[1] : s[0], n_size = rows_are_columns ? s[0] : s[1];
  Tensor packed = Tensor::empty({n_size / block, k_size, block}, weight.dtype());
  const float* src = static_cast<const float*>(weight.data());
  float* dst = static_cast<float*>(packed.data());
  for (int64_t k = 0; k < k_size; ++k)
    for (int64_t n = 0; n < n_size; ++n)
      dst[(n / block) * k_size * block + k * block + n % block] =
          rows_are_columns ? src[n * k_size + k] : src[k * n_size + n];
  return packed;
}

// The C values of a per-channel constant, zeros after them up to stored_channels, as a tensor
// of the given blocked shape. Element c of the channel axis goes to (c / block, ..., c % block):
// with unit axes in between, that is the same row-major order, so the values keep their order.
Tensor padded_channel_values(const Tensor& c, int64_t stored_channels,
                             const std::vector<int64_t>& blocked_shape) {
  std::vector<double> values = detail::tensor_values(c);
  values.resize(size_t(stored_channels), 0.0);
  return detail::make_tensor(values, blocked_shape, c.dtype());
}

// A per-channel constant of shape (C, 1, 1) or (1, C, 1, 1) laid out for a blocked tensor of
// C channels stored as S >= C (zero-padded): (S/b, 1, 1, b) or (1, S/b, 1, 1, b). Constants
// that broadcast over every axis (all dims 1, rank <= 4) stay as they are. nullopt for anything
// else.
std::optional<ir::Expr> relayout_channel_constant(const Tensor& c, int64_t channels,
                                                  int64_t stored_channels, int64_t block) {
  std::vector<int64_t> s = c.shape_vector();
  bool all_ones = true;
  for (int64_t d : s) all_ones &= d == 1;
  if (all_ones && s.size() <= 4) return ir::ConstantNode::make(c);
  std::vector<int64_t> blocked;
  if (s == std::vector<int64_t>{channels, 1, 1})
    blocked = {stored_channels / block, 1, 1, block};
  else if (s == std::vector<int64_t>{1, channels, 1, 1})
    blocked = {1, stored_channels / block, 1, 1, block};
  else
    return std::nullopt;
  return ir::ConstantNode::make(padded_channel_values(c, stored_channels, blocked));
}

class LayoutAlterer : public detail::TypedMutator {
 public:
  explicit LayoutAlterer(int vector_lanes) : lanes_(vector_lanes) {}

  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    const ir::OpNode* op = node->op();
    if (op) {
      std::optional<BlockedValue> blocked;
      if (op->name == "nn.conv2d")
        blocked = rewrite_conv(*node, self);
      else if (op->def->pattern == ir::OpPattern::ElemWise && node->args.size() == 1)
        blocked = rewrite_unary(*node, self);
      else if (kBinaryOps.count(op->name))
        blocked = rewrite_binary(*node, self);
      else if (kPoolOps.count(op->name))
        blocked = rewrite_pool(*node, self);
      else if (op->name == "nn.bias_add")
        blocked = rewrite_bias_add(*node);
      else if (op->name == "concatenate")
        blocked = rewrite_concatenate(*node, self);
      else if (op->name == "strided_slice")
        blocked = rewrite_spatial_slice(*node, self);
      if (blocked) {
        blocked_[self.get()] = *blocked;
        return as_nchw(*blocked);
      }
      if (op->name == "nn.dense" || op->name == "nn.matmul")
        if (std::optional<ir::Expr> product = rewrite_dense(*node)) return *product;
    }
    return detail::TypedMutator::mutate_Call(node, self);
  }

 private:
  inline static const std::unordered_set<std::string> kBinaryOps = {
      "add", "subtract", "multiply", "divide", "maximum", "minimum"};

  // Pools whose computes read any layout, the blocked ones included.
  inline static const std::unordered_set<std::string> kPoolOps = {
      "nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d"};

  // The blocked form of the (original) expression e, if its rewrite has one.
  const BlockedValue* blocked_form(const ir::Expr& e) {
    mutate(e);
    auto it = blocked_.find(e.get());
    return it == blocked_.end() ? nullptr : &it->second;
  }

  // A blocked value back in NCHW, its padding channels sliced off.
  static ir::Expr as_nchw(const BlockedValue& b) {
    ir::Expr nchw = transform_layout(b.expr, blocked_layout(b.block), "NCHW");
    if (!b.padded()) return nchw;
    return detail::slice_axes(nchw, {0}, {b.channels()}, {1});
  }

  // e in NCHW{block}c with exactly its own channels: its blocked form re-blocked if need be,
  // else a forward transform (a padded form goes through NCHW, where its padding is sliced
  // off). A transform is built once per value and block, and shared by every consumer.
  ir::Expr as_blocked(const ir::Expr& e, int64_t block) {
    const BlockedValue* b = blocked_form(e);
    if (b && b->block == block && !b->padded()) return b->expr;
    auto [it, inserted] = transforms_.try_emplace({e.get(), block});
    if (inserted) {
      if (b && !b->padded())
        it->second = transform_layout(b->expr, blocked_layout(b->block), blocked_layout(block));
      else
        it->second = transform_layout(b ? as_nchw(*b) : mutate(e), "NCHW", blocked_layout(block));
    }
    return it->second;
  }

  // The output channels a convolution computes for `channels` in blocks of `block`: rounded
  // up to a whole vector when the block is less than one and the extra channels cost at most a
  // sixteenth more work (each FMA then fills a whole vector instead of half or a quarter).
  int64_t stored_output_channels(int64_t channels, int64_t block) const {
    if (block >= lanes_) return channels;
    const int64_t rounded = (channels + lanes_ - 1) / lanes_ * lanes_;
    return (rounded - channels) * 16 <= channels ? rounded : channels;
  }

  std::optional<BlockedValue> rewrite_conv(const ir::CallNode& call, const ir::Expr& self) {
    const auto& a = detail::attrs_or_default<ir::Conv2DAttrs>(call);
    if (a.data_layout != "NCHW" || a.kernel_layout != "OIHW" ||
        !(a.out_layout.empty() || a.out_layout == "NCHW"))
      return std::nullopt;
    if (a.out_dtype && *a.out_dtype != DataType::float32()) return std::nullopt;
    const ir::Expr& data = call.args[0];
    ir::Expr weight = mutate(call.args[1]);
    const Tensor* w = constant_data(weight);
    std::optional<std::vector<ir::Dim>> in_shape = nchw_dims(data);
    std::optional<std::vector<ir::Dim>> out_shape = nchw_dims(self);
    if (!w || w->ndim() != 4 || w->dtype() != DataType::float32() || !is_float32(data) ||
        !in_shape || !out_shape || a.groups < 1)
      return std::nullopt;
    const int64_t in_channels = (*in_shape)[1].int_value();
    const int64_t out_channels = (*out_shape)[1].int_value();
    std::vector<int64_t> ws = w->shape_vector();
    std::optional<GroupedBlocks> grouped;
    int64_t ib = channel_block(in_channels, lanes_), ob = 0, kernel_ib = ib, stored = out_channels;
    Tensor kernel = *w;
    int64_t groups = a.groups;
    if (a.groups > 1 && a.groups == in_channels && ws[0] == a.groups) {
      // Depthwise (one input channel per group, one output channel per input channel) keeps
      // one block for data and output.
      ob = ib;
      kernel_ib = 1;
    } else if (a.groups > 1) {
      grouped = grouped_blocks(in_channels / a.groups, out_channels / a.groups, a.groups, ib);
      if (!grouped) return std::nullopt;
      ib = kernel_ib = grouped->block;
      ob = grouped->out_block;
      groups = a.groups / grouped->merged;
      if (grouped->merged > 1) kernel = block_diagonal_weight(*w, grouped->merged, a.groups);
    } else {
      ob = channel_block(out_channels, lanes_);
      stored = stored_output_channels(out_channels, ob);
      if (stored != out_channels) ob = lanes_;
    }

    auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
    attrs->strides = a.strides;
    attrs->padding = a.padding;
    attrs->dilation = a.dilation;
    attrs->groups = groups;
    attrs->channels = stored;
    attrs->kernel_size = {ws[2], ws[3]};
    attrs->data_layout = blocked_layout(ib);
    attrs->kernel_layout = "OIHW" + std::to_string(kernel_ib) + "i" + std::to_string(ob) + "o";
    attrs->out_layout = blocked_layout(ob);
    attrs->out_dtype = a.out_dtype;
    ir::Expr packed = ir::ConstantNode::make(pack_conv_weight(kernel, kernel_ib, ob, stored));
    ir::Expr conv =
        ir::call_op("nn.contrib_conv2d_NCHWc", {as_blocked(data, ib), packed}, ir::Attrs(attrs));
    return BlockedValue{conv, ob, *out_shape, stored};
  }

  // The blocks of a grouped convolution (not depthwise) with in_per_group / out_per_group
  // channels per group, whose data would be blocked by `data_block` on its own. Each channel
  // block then lies inside one group, so the blocked compute indexes a group's input blocks
  // directly. Groups narrower than the block are merged, `merged` at a time, into one group of
  // a whole block whose weight is block diagonal: the zeros cost merged-fold multiply-adds, but
  // the data keeps the block of the convolutions around it (no re-blocking copies) and each
  // multiply-add fills a whole vector.
  struct GroupedBlocks {
    int64_t block = 0;      // data and kernel input block
    int64_t out_block = 0;  // output block
    int64_t merged = 1;     // groups merged into one
  };
  std::optional<GroupedBlocks> grouped_blocks(int64_t in_per_group, int64_t out_per_group,
                                              int64_t groups, int64_t data_block) const {
    if (in_per_group % data_block == 0 && out_per_group % data_block == 0)
      return GroupedBlocks{data_block, data_block, 1};
    if (data_block % in_per_group == 0) {
      const int64_t merged = data_block / in_per_group;
      const int64_t out_block = channel_block(merged * out_per_group, lanes_);
      if (groups % merged == 0 && out_block >= 4)
        return GroupedBlocks{data_block, out_block, merged};
    }
    // Wide groups whose width is no multiple of the data block (24 channels against 16) take
    // the largest block that divides both sides of a group.
    const int64_t block = channel_block(std::gcd(in_per_group, out_per_group), lanes_);
    if (block >= 4) return GroupedBlocks{block, block, 1};
    return std::nullopt;
  }

  // The OIHW weight of a convolution in `groups` groups as that of groups / merged groups:
  // output channel o of group g reads, in its merged group of merged * I channels, its own
  // I channels at offset (g % merged) * I and zeros elsewhere.
  static Tensor block_diagonal_weight(const Tensor& weight, int64_t merged, int64_t groups) {
    std::vector<int64_t> s = weight.shape_vector();
    const int64_t out = s[0], in = s[1], taps = s[2] * s[3], out_per_group = out / groups;
    Tensor wide = Tensor::zeros({out, in * merged, s[2], s[3]}, weight.dtype());
    const float* src = static_cast<const float*>(weight.data());
    float* dst = static_cast<float*>(wide.data());
    for (int64_t o = 0; o < out; ++o) {
      const int64_t offset = (o / out_per_group) % merged * in;
      for (int64_t i = 0; i < in; ++i)
        for (int64_t t = 0; t < taps; ++t)
          dst[(o * in * merged + offset + i) * taps + t] = src[(o * in + i) * taps + t];
    }
    return wide;
  }

  std::optional<BlockedValue> rewrite_unary(const ir::CallNode& call, const ir::Expr& self) {
    const BlockedValue* in = blocked_form(call.args[0]);
    if (!in || detail::shape_dims(self) != in->shape) return std::nullopt;
    return BlockedValue{ir::CallNode::make(call.callee, {in->expr}, call.attrs), in->block,
                        in->shape, in->stored_channels};
  }

  std::optional<BlockedValue> rewrite_binary(const ir::CallNode& call, const ir::Expr& self) {
    const ir::Expr &lhs = call.args[0], &rhs = call.args[1];
    const BlockedValue* lb = blocked_form(lhs);
    const BlockedValue* rb = blocked_form(rhs);
    std::optional<std::vector<ir::Dim>> out = nchw_dims(self);
    if (!out) return std::nullopt;
    // A blocked side that already has the output's shape decides the layout.
    const BlockedValue* chosen = lb && lb->shape == *out   ? lb
                                 : rb && rb->shape == *out ? rb
                                                           : nullptr;
    if (!chosen) return std::nullopt;
    const BlockedValue main = *chosen;
    const bool main_is_lhs = chosen == lb;
    const ir::Expr& other = main_is_lhs ? rhs : lhs;
    ir::Expr other_blocked;
    if (const Tensor* c = constant_data(mutate(other))) {
      std::optional<ir::Expr> relaid =
          relayout_channel_constant(*c, main.channels(), main.stored_channels, main.block);
      if (!relaid) return std::nullopt;
      other_blocked = *relaid;
    } else if (detail::shape_dims(other) == main.shape) {
      // A padded side pairs only with the same padding.
      const BlockedValue* o = main_is_lhs ? rb : lb;
      if (main.padded() &&
          !(o && o->block == main.block && o->stored_channels == main.stored_channels))
        return std::nullopt;
      other_blocked = main.padded() ? o->expr : as_blocked(other, main.block);
    } else {
      return std::nullopt;
    }
    std::vector<ir::Expr> args = main_is_lhs ? std::vector<ir::Expr>{main.expr, other_blocked}
                                             : std::vector<ir::Expr>{other_blocked, main.expr};
    return BlockedValue{ir::CallNode::make(call.callee, args, call.attrs), main.block, main.shape,
                        main.stored_channels};
  }

  // bias_add along the channels (as the ONNX importer writes a convolution's bias) becomes an
  // add of the bias laid out as (C/b, 1, 1, b), which is the bias' own row-major order.
  std::optional<BlockedValue> rewrite_bias_add(const ir::CallNode& call) {
    const BlockedValue* in = blocked_form(call.args[0]);
    const int64_t axis = detail::attrs_or_default<ir::BiasAddAttrs>(call).axis;
    if (!in || (axis != 1 && axis != -3)) return std::nullopt;
    const int64_t channels = in->channels();
    if (static_shape(call.args[1]) != std::vector<int64_t>{channels}) return std::nullopt;
    std::vector<int64_t> blocked_shape = {in->stored_channels / in->block, 1, 1, in->block};
    ir::Expr bias = mutate(call.args[1]);
    if (const Tensor* c = constant_data(bias))
      bias = ir::ConstantNode::make(padded_channel_values(*c, in->stored_channels, blocked_shape));
    else if (!in->padded())
      bias = ir::call_op("reshape", {bias},
                         ir::make_op_attrs("reshape", {{"newshape", blocked_shape}}));
    else
      return std::nullopt;
    return BlockedValue{ir::call_op("add", {in->expr, bias}), in->block, in->shape,
                        in->stored_channels};
  }

  std::optional<BlockedValue> rewrite_pool(const ir::CallNode& call, const ir::Expr& self) {
    const BlockedValue* in = blocked_form(call.args[0]);
    std::optional<std::vector<ir::Dim>> out = nchw_dims(self);
    if (!in || !out) return std::nullopt;
    const ir::AttrsNode* attrs =
        call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
    const std::string layout = ir::call_string_attr(call, "layout");
    const std::string out_layout = ir::call_string_attr(call, "out_layout");
    if (layout != "NCHW" || !(out_layout.empty() || out_layout == "NCHW")) return std::nullopt;
    Ref<ir::AttrsNode> blocked = attrs->clone();
    blocked->set_field("layout", blocked_layout(in->block));
    blocked->set_field("out_layout", std::string());
    return BlockedValue{ir::CallNode::make(call.callee, {in->expr}, ir::Attrs(blocked)), in->block,
                        *out, in->stored_channels};
  }

  // strided_slice of a blocked value along H and W only (the crops of SplitDilatedConv): the
  // same slice of the blocked tensor, whose H and W keep their axes.
  std::optional<BlockedValue> rewrite_spatial_slice(const ir::CallNode& call,
                                                    const ir::Expr& self) {
    const BlockedValue* in = blocked_form(call.args[0]);
    std::optional<std::vector<ir::Dim>> out = nchw_dims(self);
    const auto& a = detail::attrs_or_default<ir::StridedSliceAttrs>(call);
    if (!in || !out || a.axes.empty() || a.slice_mode != "end") return std::nullopt;
    for (int64_t axis : a.axes)
      if (axis != 2 && axis != 3) return std::nullopt;  // -1 would be the block in NCHWc
    return BlockedValue{ir::CallNode::make(call.callee, {in->expr}, call.attrs), in->block, *out,
                        in->stored_channels};
  }

  // concatenate of 4-D NCHW tensors, at least one of them blocked: the same concatenate of the
  // blocked tensors, so that a fire module's (SqueezeNet's) two branches join without leaving
  // the blocked layout. Along the channels the parts join on the chunk axis, which needs every
  // part's channel count to be a multiple of the block; the block is the smallest one of the
  // parts, halved until it divides them all (larger blocks are re-blocked, NCHW parts blocked).
  // When that leaves no block of more than one channel where the parts had more, the parts
  // rather go back to NCHW.
  std::optional<BlockedValue> rewrite_concatenate(const ir::CallNode& call, const ir::Expr& self) {
    const auto* tuple = ir::as<ir::TupleNode>(call.args[0]);
    std::optional<std::vector<ir::Dim>> out = nchw_dims(self);
    if (!tuple || tuple->fields.empty() || !out || !is_float32(self)) return std::nullopt;
    std::optional<int64_t> axis =
        detail::normalize_axis(detail::attrs_or_default<ir::ConcatenateAttrs>(call).axis, 4);
    if (!axis) return std::nullopt;
    int64_t smallest = 0;
    std::vector<int64_t> channels;
    for (const ir::Expr& part : tuple->fields) {
      std::optional<std::vector<ir::Dim>> shape = nchw_dims(part);
      if (!shape || !is_float32(part)) return std::nullopt;
      channels.push_back((*shape)[1].int_value());
      if (const BlockedValue* b = blocked_form(part))
        smallest = smallest ? std::min(smallest, b->block) : b->block;
    }
    if (smallest == 0) return std::nullopt;  // nothing blocked: nothing to keep
    int64_t block = smallest;
    for (int64_t c : channels)
      while (c % block != 0) block /= 2;
    if (block == 1 && smallest > 1) return std::nullopt;
    std::vector<ir::Expr> parts;
    for (const ir::Expr& part : tuple->fields) parts.push_back(as_blocked(part, block));
    auto attrs = ir::make_attrs<ir::ConcatenateAttrs>();
    attrs->axis = *axis;  // N, C (the chunk axis), H and W keep their places in NCHW{b}c
    ir::Expr joined = ir::call_op("concatenate", {ir::TupleNode::make(parts)}, ir::Attrs(attrs));
    return BlockedValue{joined, block, *out, (*out)[1].int_value()};
  }

  // The output-column block of a packed weight (the column tile of the x86 schedule): up to
  // four whole vectors, or up to eight half vectors; 0 when N takes neither.
  int64_t column_block(int64_t columns) const {
    // Half vectors when no full one divides N (1000 classes = 125 x 8): the weight of a
    // classifier is read once per run, and packed it is read as one stream per column tile
    // instead of 40 floats out of every 4000-byte row.
    for (int64_t lanes = lanes_, most = 4; lanes >= 4 && lanes >= lanes_ / 2;
         lanes /= 2, most *= 2) {
      if (columns % lanes != 0) continue;
      int64_t vectors = 1;
      for (int64_t v = most; v > 1; --v)
        if ((columns / lanes) % v == 0) {
          vectors = v;
          break;
        }
      return vectors * lanes;
    }
    return 0;
  }

  // nn.dense(x, W (N, K)) or nn.matmul(x, B (K, N)) with a constant float32 weight.
  std::optional<ir::Expr> rewrite_dense(const ir::CallNode& call) {
    ir::Expr weight = mutate(call.args[1]);
    const Tensor* w = constant_data(weight);
    if (!w || w->ndim() != 2 || w->dtype() != DataType::float32() || !is_float32(call.args[0]))
      return std::nullopt;
    const bool is_dense = call.op()->name == "nn.dense";
    auto attrs = ir::make_attrs<ir::DenseAttrs>();
    if (is_dense) {
      const auto& a = detail::attrs_or_default<ir::DenseAttrs>(call);
      attrs->units = a.units;
      attrs->out_dtype = a.out_dtype;
    } else {
      const auto& a = detail::attrs_or_default<ir::MatmulAttrs>(call);
      if (a.transpose_a || a.transpose_b) return std::nullopt;
      attrs->units = a.units;
      attrs->out_dtype = a.out_dtype;
    }
    const int64_t columns = w->shape()[is_dense ? 0 : 1];
    if (int64_t block = column_block(columns)) {
      ir::Expr packed = ir::ConstantNode::make(pack_columns(*w, is_dense, block));
      return ir::call_op("nn.contrib_dense_pack", {mutate(call.args[0]), packed}, ir::Attrs(attrs));
    }
    if (!is_dense) return std::nullopt;
    auto matmul_attrs = ir::make_attrs<ir::MatmulAttrs>();
    matmul_attrs->units = attrs->units;
    matmul_attrs->out_dtype = attrs->out_dtype;
    // One block of all N columns is the (K, N) transpose.
    const int64_t depth = w->shape()[1];
    ir::Expr transposed =
        ir::ConstantNode::make(pack_columns(*w, true, columns).view({depth, columns}));
    return ir::call_op("nn.matmul", {mutate(call.args[0]), transposed}, ir::Attrs(matmul_attrs));
  }

  struct ValueAndBlockHash {
    size_t operator()(const std::pair<const ir::ExprNode*, int64_t>& key) const {
      return std::hash<const void*>()(key.first) * 31 + std::hash<int64_t>()(key.second);
    }
  };

  int lanes_;
  std::unordered_map<const ir::ExprNode*, BlockedValue> blocked_;
  // The forward (or re-blocking) transforms built so far, by original value and block.
  std::unordered_map<std::pair<const ir::ExprNode*, int64_t>, ir::Expr, ValueAndBlockHash>
      transforms_;
};

}  // namespace

ir::IRModule alter_op_layout(const ir::IRModule& mod, int vector_lanes) {
  if (vector_lanes < 1)
    throw_error("alter_op_layout: vector_lanes must be positive, got ", vector_lanes);
  ir::IRModule typed = ir::infer_type(mod);
  if (!typed.contains("main")) return typed;
  LayoutAlterer alterer(vector_lanes);
  ir::Expr main = alterer.mutate(ir::Expr(typed.get_function("main")));
  const auto* fn = ir::as<ir::FunctionNode>(main);
  ANVIL_ICHECK(fn, "alter_op_layout turned @main into a ", ir::expr_kind_name(main->kind));
  typed.add("main", ir::BaseFunc(fn));
  return ir::infer_type(typed);
}

}  // namespace anvil::transform
