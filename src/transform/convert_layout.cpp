// ConvertLayout (tvmc's --desired-layout): 2-D convolutions move to the desired data layout,
// NCHW or NHWC, with their weights in the matching kernel layout (OIHW or HWIO), and the ops
// that do not care about the layout (elementwise, broadcasting binary ops, bias_add, pooling)
// follow, so that a chain of convolutions pays for one layout change at each end instead of
// two per convolution.
//
// As in AlterOpLayout, every converted call remembers its form in the desired layout; a
// consumer that can work in that layout takes it directly, any other consumer gets one shared
// layout_transform back to the original layout, and a transform nobody reads drops out of the
// graph. Weight transforms of constant weights are folded by FoldConstant.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/support/error.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::op_call;
using ir::static_shape;
using ir::transform_layout;

// A 4-D value produced in the desired layout; `layout` is the layout its consumers expect.
struct ConvertedValue {
  ir::Expr expr;
  std::string layout;
  std::vector<int64_t> shape;  // in `layout`
};

// The kernel layout that goes with a data layout.
std::string kernel_layout_for(const std::string& data_layout) {
  return data_layout == "NHWC" ? "HWIO" : "OIHW";
}

// Where each axis of `from` sits in `to` (both permutations of the same letters).
int64_t axis_in(const std::string& from, const std::string& to, int64_t axis) {
  return int64_t(to.find(from[size_t(axis)]));
}

class LayoutConverter : public detail::TypedMutator {
 public:
  explicit LayoutConverter(std::string desired) : desired_(std::move(desired)) {}

  ir::Expr mutate_Call(const ir::CallNode* node, const ir::Expr& self) override {
    if (const ir::OpNode* op = node->op()) {
      std::optional<ConvertedValue> converted;
      if (op->name == "nn.conv2d")
        converted = rewrite_conv(*node, self);
      else if (op->def->pattern == ir::OpPattern::ElemWise && node->args.size() == 1)
        converted = rewrite_unary(*node, self);
      else if (kBinaryOps.count(op->name))
        converted = rewrite_binary(*node, self);
      else if (kPoolOps.count(op->name))
        converted = rewrite_pool(*node, self);
      else if (op->name == "nn.bias_add")
        converted = rewrite_bias_add(*node);
      if (converted) {
        converted_[self.get()] = *converted;
        return transform_layout(converted->expr, desired_, converted->layout);
      }
    }
    return detail::TypedMutator::mutate_Call(node, self);
  }

 private:
  inline static const std::unordered_set<std::string> kBinaryOps = {
      "add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
  inline static const std::unordered_set<std::string> kPoolOps = {
      "nn.max_pool2d", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d"};

  const ConvertedValue* converted_form(const ir::Expr& e) {
    mutate(e);
    auto it = converted_.find(e.get());
    return it == converted_.end() ? nullptr : &it->second;
  }

  // e (in `layout`) in the desired layout.
  ir::Expr as_desired(const ir::Expr& e, const std::string& layout) {
    if (const ConvertedValue* c = converted_form(e); c && c->layout == layout) return c->expr;
    return transform_layout(mutate(e), layout, desired_);
  }

  std::optional<ConvertedValue> rewrite_conv(const ir::CallNode& call, const ir::Expr& self) {
    const auto& a = detail::attrs_or_default<ir::Conv2DAttrs>(call);
    const std::string& layout = a.data_layout;
    if ((layout != "NCHW" && layout != "NHWC") || a.kernel_layout != kernel_layout_for(layout) ||
        !(a.out_layout.empty() || a.out_layout == layout))
      return std::nullopt;
    std::optional<std::vector<int64_t>> out_shape = static_shape(self);
    if (!out_shape || out_shape->size() != 4) return std::nullopt;
    // Already in the desired layout: nothing to change, but its consumers may follow it.
    if (layout == desired_) {
      ir::Expr same = detail::TypedMutator::mutate_Call(&call, self);
      return ConvertedValue{same, layout, *out_shape};
    }
    Ref<ir::AttrsNode> attrs =
        (call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get())->clone();
    attrs->set_field("data_layout", desired_);
    attrs->set_field("kernel_layout", kernel_layout_for(desired_));
    attrs->set_field("out_layout", std::string());
    ir::Expr weight =
        transform_layout(mutate(call.args[1]), a.kernel_layout, kernel_layout_for(desired_));
    ir::Expr conv = ir::CallNode::make(call.callee, {as_desired(call.args[0], layout), weight},
                                       ir::Attrs(attrs));
    return ConvertedValue{conv, layout, *out_shape};
  }

  std::optional<ConvertedValue> rewrite_unary(const ir::CallNode& call, const ir::Expr& self) {
    const ConvertedValue* in = converted_form(call.args[0]);
    if (!in || static_shape(self) != in->shape) return std::nullopt;
    return ConvertedValue{ir::CallNode::make(call.callee, {in->expr}, call.attrs), in->layout,
                          in->shape};
  }

  // The other operand of a binary op, broadcast against a 4-D value in `layout`: padded to
  // rank 4 with leading unit axes (numpy broadcasting) and moved to the desired layout.
  std::optional<ir::Expr> other_as_desired(const ir::Expr& other, const std::string& layout) {
    std::optional<std::vector<int64_t>> shape = static_shape(other);
    if (!shape || shape->size() > 4) return std::nullopt;
    if (const ConvertedValue* c = converted_form(other); c && c->layout == layout) return c->expr;
    ir::Expr value = mutate(other);
    if (shape->size() < 4) {
      std::vector<int64_t> padded(4 - shape->size(), 1);
      padded.insert(padded.end(), shape->begin(), shape->end());
      value = ir::call_op("reshape", {value}, ir::make_op_attrs("reshape", {{"newshape", padded}}));
    }
    return transform_layout(value, layout, desired_);
  }

  std::optional<ConvertedValue> rewrite_binary(const ir::CallNode& call, const ir::Expr& self) {
    const ConvertedValue* lhs = converted_form(call.args[0]);
    const ConvertedValue* rhs = converted_form(call.args[1]);
    std::optional<std::vector<int64_t>> out = static_shape(self);
    if (!out) return std::nullopt;
    // A converted side that already has the output's shape decides the layout.
    const ConvertedValue* chosen = lhs && lhs->shape == *out   ? lhs
                                   : rhs && rhs->shape == *out ? rhs
                                                               : nullptr;
    if (!chosen) return std::nullopt;
    const ConvertedValue main = *chosen;
    const bool main_is_lhs = chosen == lhs;
    std::optional<ir::Expr> other = other_as_desired(call.args[main_is_lhs ? 1 : 0], main.layout);
    if (!other) return std::nullopt;
    std::vector<ir::Expr> args = main_is_lhs ? std::vector<ir::Expr>{main.expr, *other}
                                             : std::vector<ir::Expr>{*other, main.expr};
    return ConvertedValue{ir::CallNode::make(call.callee, args, call.attrs), main.layout,
                          main.shape};
  }

  std::optional<ConvertedValue> rewrite_bias_add(const ir::CallNode& call) {
    const ConvertedValue* in = converted_form(call.args[0]);
    if (!in) return std::nullopt;
    std::optional<int64_t> axis =
        detail::normalize_axis(detail::attrs_or_default<ir::BiasAddAttrs>(call).axis, 4);
    if (!axis) return std::nullopt;
    return ConvertedValue{
        ir::call_op(
            "nn.bias_add", {in->expr, mutate(call.args[1])},
            ir::make_op_attrs("nn.bias_add", {{"axis", axis_in(in->layout, desired_, *axis)}})),
        in->layout, in->shape};
  }

  std::optional<ConvertedValue> rewrite_pool(const ir::CallNode& call, const ir::Expr& self) {
    const ConvertedValue* in = converted_form(call.args[0]);
    if (!in) return std::nullopt;
    const ir::AttrsNode* attrs =
        call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
    const std::string layout = ir::call_string_attr(call, "layout");
    const std::string out_layout = ir::call_string_attr(call, "out_layout");
    if (layout != in->layout || !(out_layout.empty() || out_layout == layout)) return std::nullopt;
    std::optional<std::vector<int64_t>> out = static_shape(self);
    Ref<ir::AttrsNode> converted = attrs->clone();
    converted->set_field("layout", desired_);
    converted->set_field("out_layout", std::string());
    ir::Expr pooled = ir::CallNode::make(call.callee, {in->expr}, ir::Attrs(converted));
    return ConvertedValue{pooled, in->layout, out ? *out : in->shape};
  }

  std::string desired_;
  std::unordered_map<const ir::ExprNode*, ConvertedValue> converted_;
};

}  // namespace

ir::IRModule convert_layout(const ir::IRModule& mod, const std::string& desired_layout) {
  if (desired_layout != "NCHW" && desired_layout != "NHWC")
    throw_error("convert_layout: unknown desired layout '", desired_layout,
                "' (expected NCHW or NHWC)");
  return detail::mutate_graph_functions(mod, [&] { return LayoutConverter(desired_layout); });
}

}  // namespace anvil::transform
