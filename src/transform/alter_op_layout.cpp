// AlterOpLayout: a target-neutral driver of the targets' strategy records, which knows no op.
// Each op whose record is a layout anchor (on x86: convolutions to NCHW{b}c with packed
// weights, dense layers to packed column panels) is asked for its rewrite; the ops whose records
// follow (elementwise, broadcast binary, bias, pools, concatenate, spatial slices: each record
// names its rule, implemented here once) are carried into the blocked layout, so that layout
// changes are paid once at the edges of a run of convolutions rather than around each one. A
// strategy that declines says why, and the reason is reported as a remark.
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
#include "anvil/ir/builder.h"
#include "anvil/ir/dim.h"
#include "anvil/topi/strategy.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::blocked_layout;
using ir::constant_data;
using ir::is_float32;
using ir::op_call;
using ir::static_shape;
using ir::transform_layout;

// The blocked form of a 4-D NCHW tensor: a 5-D NCHW{block}c expression. A convolution whose
// output channels take no full vector block (SqueezeNet's 1000 classes = 125 x 8) computes
// zero-weight channels up to the next multiple of the vector: its blocked value then holds more
// channels than the tensor it stands for, and the extra ones are sliced off on the way back to
// NCHW.
struct BlockedValue {
  ir::Expr expr;
  int64_t block = 0;
  std::vector<ir::Dim> shape;   // the NCHW shape it stands for; only the channels are static
  int64_t stored_channels = 0;  // channels of expr: shape[1], or more when padded

  int64_t channels() const { return shape[1].int_value(); }
  bool padded() const { return stored_channels > channels(); }
};

// The shape of a 4-D NCHW value whose channels are static (the batch, height and width may be
// size variables: one package then serves every batch and image size); nullopt otherwise.
std::optional<std::vector<ir::Dim>> nchw_dims(const ir::Expr& e) {
  std::optional<std::vector<ir::Dim>> dims = ir::shape_dims(e);
  if (!dims || dims->size() != 4 || !(*dims)[1].is_static()) return std::nullopt;
  // The batch, height and width may be size variables; an unknown dim (?) may not.
  for (const ir::Dim& dim : *dims)
    if (dim.is_any()) return std::nullopt;
  return dims;
}

// The C values of a per-channel constant, zeros after them up to stored_channels, as a tensor
// of the given blocked shape. Element c of the channel axis goes to (c / block, ..., c % block):
// with unit axes in between, that is the same row-major order, so the values keep their order.
Tensor padded_channel_values(const Tensor& c, int64_t stored_channels,
                             const std::vector<int64_t>& blocked_shape) {
  std::vector<double> values = ir::tensor_values(c);
  values.resize(size_t(stored_channels), 0.0);
  return ir::make_tensor(values, blocked_shape, c.dtype());
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
  LayoutAlterer(int vector_lanes, std::vector<std::string> strategy_keys,
                std::vector<std::string>* remarks, bool amx_bf16)
      : lanes_(vector_lanes),
        amx_bf16_(amx_bf16),
        keys_(std::move(strategy_keys)),
        remarks_(remarks) {}

  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    const ir::OpNode* op = node->op();
    if (op) {
      std::vector<const topi::Strategy*> records = topi::find_strategies(op->name, keys_);
      for (const topi::Strategy* record : records)
        if (record->layout_role == topi::LayoutRole::Anchor && topi::computes_in(*record, *node))
          if (std::optional<ir::Expr> rewritten = apply(*record, *node, self)) return *rewritten;
      if (std::optional<BlockedValue> blocked = follow(follow_rule(*op, records), *node, self)) {
        blocked_[self.get()] = *blocked;
        return as_nchw(*blocked);
      }
    }
    return detail::TypedMutator::mutate_Call(node, self);
  }

 private:
  // How the op follows a blocked operand: its record's rule; an op the target has no record
  // for follows by its fusion pattern alone when that is elementwise.
  static topi::FollowRule follow_rule(const ir::OpNode& op,
                                      const std::vector<const topi::Strategy*>& records) {
    for (const topi::Strategy* record : records)
      if (record->layout_role == topi::LayoutRole::Follows) return record->follow;
    if (records.empty() && op.def->pattern == ir::OpPattern::ElemWise)
      return topi::FollowRule::Elementwise;
    return topi::FollowRule::None;
  }

  std::optional<BlockedValue> follow(topi::FollowRule rule, const ir::CallNode& call,
                                     const ir::Expr& self) {
    switch (rule) {
      case topi::FollowRule::None:
        return std::nullopt;
      case topi::FollowRule::Elementwise:
        return call.args.size() == 1 ? rewrite_unary(call, self) : std::nullopt;
      case topi::FollowRule::BroadcastBinary:
        return rewrite_binary(call, self);
      case topi::FollowRule::BiasAdd:
        return rewrite_bias_add(call);
      case topi::FollowRule::ScalarParameters:
        return rewrite_with_scalar_parameters(call, self);
      case topi::FollowRule::Pool:
        return rewrite_pool(call, self);
      case topi::FollowRule::Concatenate:
        return rewrite_concatenate(call, self);
      case topi::FollowRule::SpatialSlice:
        return rewrite_spatial_slice(call, self);
    }
    return std::nullopt;
  }

  // The call as the strategy rewrites it (its NCHW value, the blocked form remembered), or
  // nullopt with a remark saying why the strategy declined.
  std::optional<ir::Expr> apply(const topi::Strategy& strategy, const ir::CallNode& call,
                                const ir::Expr& self) {
    std::string reason = strategy.layout.check(call, self->checked_type, lanes_);
    if (reason.empty()) {
      topi::LayoutArgs args{call,
                            self->checked_type,
                            lanes_,
                            [&](size_t i) { return mutate(call.args.at(i)); },
                            [&](int64_t block) { return as_blocked(call.args.at(0), block); },
                            amx_bf16_};
      try {
        topi::LayoutRewrite rewrite = strategy.layout.rewrite(args);
        if (rewrite.out_block == 0) return rewrite.expr;
        std::optional<std::vector<ir::Dim>> shape = nchw_dims(self);
        ANVIL_ICHECK(shape, strategy.name, " blocked a value that is not 4-D NCHW");
        BlockedValue blocked{rewrite.expr, rewrite.out_block, *shape, rewrite.stored_channels};
        blocked_[self.get()] = blocked;
        return as_nchw(blocked);
      } catch (const Error& e) {
        reason = e.what();
      }
    }
    if (remarks_) {
      std::string operands;
      for (const ir::Expr& arg : call.args)
        if (std::optional<std::vector<ir::Dim>> dims = ir::shape_dims(arg))
          operands += (operands.empty() ? "" : ", ") + ir::dims_to_string(*dims);
      remarks_->push_back(call.op()->name + "(" + operands + "): " + strategy.name +
                          " declined: " + reason);
    }
    return std::nullopt;
  }

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
    return ir::slice_axes(nchw, {0}, {b.channels()}, {1});
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

  std::optional<BlockedValue> rewrite_unary(const ir::CallNode& call, const ir::Expr& self) {
    const BlockedValue* in = blocked_form(call.args[0]);
    if (!in || ir::shape_dims(self) != in->shape) return std::nullopt;
    return BlockedValue{ir::CallNode::make(call.callee, {in->expr}, call.attrs), in->block,
                        in->shape, in->stored_channels};
  }

  std::optional<BlockedValue> rewrite_with_scalar_parameters(const ir::CallNode& call,
                                                             const ir::Expr& self) {
    const BlockedValue* in = blocked_form(call.args[0]);
    if (!in || ir::shape_dims(self) != in->shape) return std::nullopt;
    std::vector<ir::Expr> args = {in->expr};
    for (size_t i = 1; i < call.args.size(); ++i) {
      std::optional<std::vector<int64_t>> shape = ir::static_shape(call.args[i]);
      if (!shape) return std::nullopt;
      for (int64_t d : *shape)
        if (d != 1) return std::nullopt;
      args.push_back(mutate(call.args[i]));
    }
    return BlockedValue{ir::CallNode::make(call.callee, args, call.attrs), in->block, in->shape,
                        in->stored_channels};
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
    } else if (ir::shape_dims(other) == main.shape) {
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

  struct ValueAndBlockHash {
    size_t operator()(const std::pair<const ir::ExprNode*, int64_t>& key) const {
      return std::hash<const void*>()(key.first) * 31 + std::hash<int64_t>()(key.second);
    }
  };

  int lanes_;
  bool amx_bf16_;
  std::vector<std::string> keys_;
  std::vector<std::string>* remarks_;
  std::unordered_map<const ir::ExprNode*, BlockedValue> blocked_;
  // The forward (or re-blocking) transforms built so far, by original value and block.
  std::unordered_map<std::pair<const ir::ExprNode*, int64_t>, ir::Expr, ValueAndBlockHash>
      transforms_;
};

}  // namespace

ir::IRModule alter_op_layout(const ir::IRModule& mod, int vector_lanes,
                             std::vector<std::string>* remarks,
                             const std::vector<std::string>& strategy_keys, bool amx_bf16) {
  if (vector_lanes < 1)
    throw_error("alter_op_layout: vector_lanes must be positive, got ", vector_lanes);
  ir::IRModule typed = ir::infer_type(mod);
  if (!typed.contains("main")) return typed;
  LayoutAlterer alterer(vector_lanes, strategy_keys, remarks, amx_bf16);
  ir::Expr main = alterer.mutate(ir::Expr(typed.get_function("main")));
  const auto* fn = ir::as<ir::FunctionNode>(main);
  ANVIL_ICHECK(fn, "alter_op_layout turned @main into a ", ir::expr_kind_name(main->kind));
  typed.add("main", ir::BaseFunc(fn));
  return ir::infer_type(typed);
}

}  // namespace anvil::transform
