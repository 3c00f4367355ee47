// The static forms of the dyn.* ops. Each conversion reads the constant operands as the op's
// reference kernel does and builds the static op the ONNX importer would have built had those
// operands been constants at import time; values the static op cannot express (ONNX TopK's
// k = 0, resizing the batch axis, ...) leave the call dynamic.
#include "transform/dynamic_to_static_ops.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "anvil/ir/attrs.h"
#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/op.h"
#include "anvil/ir/static_resize.h"
#include "transform/pass_util.h"

namespace anvil::transform::detail {
namespace {

using ir::AttrValue;
using ir::Expr;
using AttrList = std::vector<std::pair<std::string, AttrValue>>;

// The integer elements of a constant in row-major order, or nullopt when e is not a constant
// of an integer (or bool) dtype.
std::optional<std::vector<int64_t>> constant_ints(const Expr& e) {
  const Tensor* t = ir::constant_data(e);
  if (!t) return std::nullopt;
  DataType dtype = t->dtype();
  if (!dtype.is_int() && !dtype.is_uint() && !dtype.is_bool()) return std::nullopt;
  std::vector<int64_t> values(size_t(t->numel()));
  // int64 is read directly: sentinels such as INT64_MAX (ONNX's "to the end") do not survive
  // a trip through double.
  const bool wide = dtype == DataType::int64() && t->is_contiguous();
  for (int64_t i = 0; i < t->numel(); ++i)
    values[size_t(i)] = wide ? t->data_as<int64_t>()[i] : int64_t(t->get_as_double(i));
  return values;
}

// The single integer of a constant holding one element, or nullopt.
std::optional<int64_t> constant_int(const Expr& e) {
  std::optional<std::vector<int64_t>> values = constant_ints(e);
  if (!values || values->size() != 1) return std::nullopt;
  return (*values)[0];
}

// The elements of a numeric constant widened to double, or nullopt.
std::optional<std::vector<double>> constant_doubles(const Expr& e) {
  const Tensor* t = ir::constant_data(e);
  if (!t) return std::nullopt;
  return ir::tensor_values(*t);
}

// The static dims of an expression's type (nullopt for a symbolic one), or nullopt when the
// rank is unknown.
std::optional<std::vector<std::optional<int64_t>>> known_dims(const Expr& e) {
  const auto* type = e ? ir::as<ir::TensorTypeNode>(e->checked_type) : nullptr;
  if (!type || !type->has_shape()) return std::nullopt;
  std::vector<std::optional<int64_t>> dims;
  for (const ir::Dim& d : *type->shape) dims.push_back(d.as_int());
  return dims;
}

// The dyn call's attrs (its op's defaults when it carries none) with some fields replaced: for
// the ops whose static form shares the attrs struct.
ir::Attrs derived_attrs(const ir::CallNode& call, const AttrList& fields) {
  const ir::AttrsNode* base = call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
  ANVIL_ICHECK(base, call.op()->name, " has no attrs to derive from");
  Ref<ir::AttrsNode> attrs = base->clone();
  for (const auto& [name, value] : fields) attrs->set_field(name, value);
  return attrs;
}

// The op name without its "dyn." prefix.
std::string static_name(const ir::CallNode& call) { return call.op()->name.substr(4); }

// dyn.X(data, v) -> X(data) with v as the attr `field` of the shared attrs struct.
Expr with_int_vector(const ir::CallNode& call, const char* field) {
  std::optional<std::vector<int64_t>> values = constant_ints(call.args[1]);
  if (!values) return nullptr;
  return ir::call_op(static_name(call), {call.args[0]}, derived_attrs(call, {{field, *values}}));
}

// dyn.X(data, v) -> X(data) with v as the attr `field` of X's own attrs struct.
Expr with_op_attr(const ir::CallNode& call, const char* field) {
  std::optional<std::vector<int64_t>> values = constant_ints(call.args[1]);
  if (!values) return nullptr;
  std::string name = static_name(call);
  return ir::call_op(name, {call.args[0]}, ir::make_op_attrs(name, {{field, *values}}));
}

Expr convert_full(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> shape = constant_ints(call.args[1]);
  if (!shape || std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d < 0; }))
    return nullptr;
  return ir::call_op("full", {call.args[0]}, derived_attrs(call, {{"shape", *shape}}));
}

// Squeezing no listed axes removes the unit dims, which the static op needs named.
Expr convert_squeeze(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> axes = constant_ints(call.args[1]);
  if (!axes) return nullptr;
  if (axes->empty()) {
    std::optional<std::vector<int64_t>> shape = ir::static_shape(call.args[0]);
    if (!shape) return nullptr;
    for (size_t i = 0; i < shape->size(); ++i)
      if ((*shape)[i] == 1) axes->push_back(int64_t(i));
    if (axes->empty()) return call.args[0];
  }
  return ir::call_op("squeeze", {call.args[0]}, ir::make_op_attrs("squeeze", {{"axis", *axes}}));
}

// The axes are positions in the output (ONNX Unsqueeze): inserting one unit dim at each, in
// ascending order, puts every one where it belongs.
Expr convert_expand_dims(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> axes = constant_ints(call.args[1]);
  std::optional<std::vector<std::optional<int64_t>>> dims = known_dims(call.args[0]);
  if (!axes || !dims) return nullptr;
  int64_t out_rank = int64_t(dims->size() + axes->size());
  for (int64_t& a : *axes) {
    std::optional<int64_t> axis = normalize_axis(a, out_rank);
    if (!axis) return nullptr;
    a = *axis;
  }
  std::sort(axes->begin(), axes->end());
  if (std::adjacent_find(axes->begin(), axes->end()) != axes->end()) return nullptr;
  Expr x = call.args[0];
  for (int64_t a : *axes)
    x = ir::call_op("expand_dims", {x}, ir::make_op_attrs("expand_dims", {{"axis", a}}));
  return x;
}

Expr convert_strided_slice(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> begin = constant_ints(call.args[1]),
                                      end = constant_ints(call.args[2]),
                                      strides = constant_ints(call.args[3]),
                                      axes = constant_ints(call.args[4]);
  if (!begin || !end || !strides || !axes) return nullptr;
  return ir::call_op(
      "strided_slice", {call.args[0]},
      ir::make_op_attrs(
          "strided_slice",
          {{"begin", *begin}, {"end", *end}, {"strides", *strides}, {"axes", *axes}}));
}

// pads holds the listed axes' befores, then their afters. nn.pad takes neither cropping
// (negative amounts) nor wrap, and reflect/edge need the padded dims' sizes known.
Expr convert_pad(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> pads = constant_ints(call.args[1]),
                                      axes = constant_ints(call.args[3]);
  std::optional<std::vector<std::optional<int64_t>>> dims = known_dims(call.args[0]);
  if (!pads || !axes || !dims || pads->size() != 2 * axes->size()) return nullptr;
  const std::string& mode = call.attrs_as<ir::DynPadAttrs>().pad_mode;
  int64_t rank = int64_t(dims->size());
  std::vector<int64_t> pad_width(size_t(2 * rank), 0);
  for (size_t i = 0; i < axes->size(); ++i) {
    std::optional<int64_t> axis = normalize_axis((*axes)[i], rank);
    if (!axis) return nullptr;
    pad_width[size_t(2 * *axis)] = (*pads)[i];
    pad_width[size_t(2 * *axis + 1)] = (*pads)[axes->size() + i];
  }
  for (size_t k = 0; k < dims->size(); ++k) {
    int64_t before = pad_width[2 * k], after = pad_width[2 * k + 1];
    std::optional<int64_t> size = (*dims)[k];
    if (before < 0 || after < 0) return nullptr;
    if (mode == "reflect" && !(size && std::max(before, after) < *size)) return nullptr;
    if ((mode == "edge" || mode == "wrap") && !(size && (*size > 0 || before + after == 0)))
      return nullptr;
  }
  return ir::call_op(
      "nn.pad", {call.args[0], call.args[2]},
      ir::make_op_attrs("nn.pad", {{"pad_width", pad_width}, {"pad_mode", std::string(mode)}}));
}

// image.resize{1,2,3}d resizes the spatial axes of an (N, C, spatial...) tensor; a request that
// changes N or C stays dynamic. Aspect-ratio policies become sizes with coordinate_scales.
Expr convert_resize(const ir::CallNode& call) {
  const auto& a = call.attrs_as<ir::DynResizeAttrs>();
  std::optional<std::vector<std::optional<int64_t>>> dims = known_dims(call.args[0]);
  std::optional<std::vector<double>> target = constant_doubles(call.args[2]);
  std::optional<std::vector<double>> roi = constant_doubles(call.args[1]);
  if (!dims || !target || !roi) return nullptr;
  std::optional<ir::StaticResize> s =
      ir::static_resize({.dims = *dims,
                         .target = *target,
                         .sizes = a.target == "sizes",
                         .axes = a.axes,
                         .roi = *roi,
                         .keep_aspect_ratio_policy = a.keep_aspect_ratio_policy});
  if (!s) return nullptr;
  std::string name = "image.resize" + std::to_string(dims->size() - 2) + "d";
  AttrList attrs = {{"method", a.method},
                    {"coordinate_transformation_mode", a.coordinate_transformation_mode},
                    {"rounding_method", a.rounding_method},
                    {"cubic_alpha", a.cubic_alpha},
                    {"cubic_exclude", a.cubic_exclude},
                    {"extrapolation_value", a.extrapolation_value},
                    {"antialias", a.antialias}};
  if (a.target == "sizes")
    attrs.emplace_back("size", s->size);
  else
    attrs.emplace_back("scales", s->scales);
  if (!s->coordinate_scales.empty()) attrs.emplace_back("coordinate_scales", s->coordinate_scales);
  if (!s->roi.empty()) attrs.emplace_back("roi", s->roi);
  return ir::call_op(name, {call.args[0]}, ir::make_op_attrs(name, attrs));
}

Expr convert_one_hot(const ir::CallNode& call) {
  std::optional<int64_t> depth = constant_int(call.args[3]);
  if (!depth || *depth < 1) return nullptr;
  return ir::call_op("one_hot", {call.args[0], call.args[1], call.args[2]},
                     derived_attrs(call, {{"depth", *depth}}));
}

// ONNX TopK's k = 0 selects nothing, where the attribute's k < 1 means the whole axis.
Expr convert_topk(const ir::CallNode& call) {
  std::optional<int64_t> k = constant_int(call.args[1]);
  if (!k || *k < 1) return nullptr;
  return ir::call_op("topk", {call.args[0]}, derived_attrs(call, {{"k", *k}}));
}

Expr convert_scan(const ir::CallNode& call) {
  std::optional<int64_t> axis = constant_int(call.args[1]);
  if (!axis) return nullptr;
  return ir::call_op(static_name(call), {call.args[0]}, derived_attrs(call, {{"axis", *axis}}));
}

Expr convert_col2im(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> image = constant_ints(call.args[1]),
                                      block = constant_ints(call.args[2]);
  if (!image || !block) return nullptr;
  return ir::call_op("col2im", {call.args[0]},
                     derived_attrs(call, {{"image_shape", *image}, {"block_shape", *block}}));
}

// output_shape is the whole shape; the static op takes only the spatial part, so the batch
// and channel dims must be the data's.
Expr convert_max_unpool(const ir::CallNode& call) {
  std::optional<std::vector<int64_t>> shape = constant_ints(call.args[2]);
  std::optional<std::vector<std::optional<int64_t>>> dims = known_dims(call.args[0]);
  if (!shape || !dims || shape->size() != dims->size() || shape->size() < 3) return nullptr;
  for (size_t k = 0; k < 2; ++k)
    if ((*dims)[k] != (*shape)[k]) return nullptr;
  std::vector<int64_t> spatial(shape->begin() + 2, shape->end());
  return ir::call_op(static_name(call), {call.args[0], call.args[1]},
                     derived_attrs(call, {{"output_size", spatial}}));
}

// ONNX Range with constant bounds is arange, whose values the attributes give in double: exact
// for the integers of shapes and indices (kept well inside 2^53).
Expr convert_range(const ir::CallNode& call) {
  std::optional<std::vector<double>> start = constant_doubles(call.args[0]),
                                     limit = constant_doubles(call.args[1]),
                                     delta = constant_doubles(call.args[2]);
  std::optional<DataType> dtype = ir::tensor_dtype(call.args[0]);
  if (!start || !limit || !delta || !dtype || start->size() != 1 || limit->size() != 1 ||
      delta->size() != 1)
    return nullptr;
  constexpr double kExactLimit = double(int64_t(1) << 31);
  for (double v : {(*start)[0], (*limit)[0], (*delta)[0]})
    if (!std::isfinite(v) || std::fabs(v) > kExactLimit) return nullptr;
  if ((*delta)[0] == 0) return nullptr;
  return ir::call_op("arange", {},
                     ir::make_op_attrs("arange", {{"start", (*start)[0]},
                                                  {"stop", (*limit)[0]},
                                                  {"step", (*delta)[0]},
                                                  {"dtype", *dtype}}));
}

// How each dyn op is converted, and which of its operands must be constants for that.
struct Conversion {
  std::vector<size_t> shape_operands;
  std::function<Expr(const ir::CallNode&)> convert;
};

const std::map<std::string, Conversion, std::less<>>& conversions() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, Conversion, std::less<>>{
        {"dyn.reshape", {{1}, [](const auto& c) { return with_int_vector(c, "newshape"); }}},
        {"dyn.broadcast_to", {{1}, [](const auto& c) { return with_op_attr(c, "shape"); }}},
        {"dyn.tile", {{1}, [](const auto& c) { return with_op_attr(c, "reps"); }}},
        {"dyn.squeeze", {{1}, convert_squeeze}},
        {"dyn.expand_dims", {{1}, convert_expand_dims}},
        {"dyn.full", {{1}, convert_full}},
        {"dyn.strided_slice", {{1, 2, 3, 4}, convert_strided_slice}},
        {"dyn.nn.pad", {{1, 3}, convert_pad}},
        {"dyn.image.resize", {{1, 2}, convert_resize}},
        {"dyn.one_hot", {{3}, convert_one_hot}},
        {"dyn.topk", {{1}, convert_topk}},
        {"dyn.cumsum", {{1}, convert_scan}},
        {"dyn.cumprod", {{1}, convert_scan}},
        {"dyn.col2im", {{1, 2}, convert_col2im}},
        {"range", {{0, 1, 2}, convert_range}},
    };
    for (const char* reduce : {"sum", "mean", "prod", "max", "min", "all", "any", "logsumexp",
                               "l1_norm", "l2_norm", "sum_square"})
      t->emplace(std::string("dyn.") + reduce,
                 Conversion{{1}, [](const auto& c) { return with_int_vector(c, "axis"); }});
    for (int n = 1; n <= 3; ++n)
      t->emplace("dyn.nn.max_unpool" + std::to_string(n) + "d",
                 Conversion{{2}, convert_max_unpool});
    return t;
  }();
  return *table;
}

}  // namespace

std::vector<size_t> dyn_shape_operands(std::string_view op_name) {
  auto it = conversions().find(op_name);
  return it == conversions().end() ? std::vector<size_t>{} : it->second.shape_operands;
}

Expr static_form(const ir::CallNode& call) {
  const ir::OpNode* op = call.op();
  if (!op) return nullptr;
  auto it = conversions().find(op->name);
  if (it == conversions().end()) return nullptr;
  for (size_t i : it->second.shape_operands)
    if (i >= call.args.size() || !ir::constant_data(call.args[i])) return nullptr;
  return it->second.convert(call);
}

}  // namespace anvil::transform::detail
