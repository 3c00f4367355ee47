// Static forms for dyn calls whose shape operands are symbolic. Attributes hold integers only,
// so a symbolic dim reaches a static op's type in one of two ways: through the entries of a
// reshape that copy or infer an input dim (0, -3, -1), or from the type of a tensor in scope
// with the wanted shape (full_like, reshape_like), typically the very tensor whose shape_of the
// operand was computed from. Every form is typed and its dims compared with the dims the
// operand evaluates to; any doubt leaves the call dynamic.
#include "transform/dynamic_to_static_symbolic.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/op.h"
#include "transform/pass_util.h"

namespace anvil::transform::detail {
namespace {

using ir::Dim;
using ir::Expr;

// "To the end" of an axis, whatever its size.
constexpr int64_t kToTheEnd = std::numeric_limits<int64_t>::max();

// The tensors whose shapes a call's shape operands read (the data of shape_of and
// ndarray_size), then the call's own first argument: those are in scope where the call is, and
// their types carry the dims the operands were computed from.
std::vector<Expr> like_candidates(const ir::CallNode& call, const std::vector<size_t>& operands) {
  std::vector<Expr> found;
  std::unordered_set<const ir::ExprNode*> seen;
  auto add = [&](const Expr& e) {
    if (ir::as<ir::TensorTypeNode>(e->checked_type) &&
        std::none_of(found.begin(), found.end(), [&](const Expr& f) { return f == e; }))
      found.push_back(e);
  };
  std::vector<Expr> stack;
  for (size_t i : operands)
    if (i < call.args.size()) stack.push_back(call.args[i]);
  while (!stack.empty()) {
    Expr e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e.get()).second) continue;
    if (const auto* c = ir::as<ir::CallNode>(e)) {
      const ir::OpNode* op = c->op();
      if (!op) continue;
      if ((op->name == "shape_of" || op->name == "ndarray_size") && !c->args.empty()) {
        add(c->args[0]);
        continue;
      }
      // Shape computations are small integer tensors; a value computed from data (an argmax)
      // is no shape the evaluator follows, and the network behind it is not walked.
      const auto* type = ir::as<ir::TensorTypeNode>(c->checked_type);
      std::optional<std::vector<int64_t>> shape = type ? type->static_shape() : std::nullopt;
      if (!shape || type->dtype.is_float() || shape->size() > 1) continue;
      for (const Expr& arg : c->args) stack.push_back(arg);
    } else if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      for (const Expr& field : tuple->fields) stack.push_back(field);
    } else if (const auto* item = ir::as<ir::TupleGetItemNode>(e)) {
      stack.push_back(item->tuple);
    }
  }
  if (!call.args.empty() && operands.front() != 0) add(call.args[0]);
  return found;
}

// A tensor of shape `dims`: the value's shape_source, or a candidate whose dims are certain to
// equal them. Null when there is none.
Expr tensor_shaped_like(const SymbolicValue& value, const std::vector<Expr>& candidates) {
  if (value.shape_source && value.shape.size() == 1) {
    std::optional<std::vector<Dim>> dims = ir::shape_dims(value.shape_source);
    if (dims && dims->size() == value.elements.size()) return value.shape_source;
  }
  for (const Expr& c : candidates) {
    std::optional<std::vector<Dim>> dims = ir::shape_dims(c);
    if (!dims || dims->size() != value.elements.size()) continue;
    bool same = true;
    for (size_t i = 0; i < dims->size() && same; ++i)
      same = known_equal((*dims)[i], value.elements[i]);
    if (same) return c;
  }
  return nullptr;
}

// The dims of e once typed, or nullopt when the static op rejects its operands.
std::optional<std::vector<Dim>> typed_dims(const Expr& e) {
  try {
    ir::infer_expr_type(e, /*reuse_cached_types=*/true);
  } catch (const Error&) {
    return std::nullopt;
  }
  return ir::shape_dims(e);
}

// True when the typed dims are `wanted`, where an Any in `wanted` accepts any dim (a -1 entry,
// which the element count decides as the dyn op's value would have).
bool dims_match(const std::optional<std::vector<Dim>>& got, const std::vector<Dim>& wanted) {
  if (!got || got->size() != wanted.size()) return false;
  for (size_t i = 0; i < wanted.size(); ++i)
    if (!involves_any(wanted[i]) && !known_equal((*got)[i], wanted[i])) return false;
  return true;
}

// A 1-D operand of a dyn op, or null.
const SymbolicValue* vector_operand(SymbolicShapeEvaluator& values, const Expr& e) {
  const SymbolicValue* v = values.evaluate(e);
  return v && v->shape.size() == 1 ? v : nullptr;
}

bool is_positive(const Dim& d) { return lower_bound(d).value_or(0) >= 1; }
bool is_non_negative(const Dim& d) { return lower_bound(d).value_or(-1) >= 0; }

// The entries of a static reshape giving `target` from `in`, lining up with the input dims as
// the reshape relation does: a known size, 0 (copy the input dim), -3 (the product of the next
// two), and at most one -1. Nullopt when the target needs more than one -1.
std::optional<std::vector<int64_t>> reshape_entries(const std::vector<Dim>& in,
                                                    const std::vector<Dim>& target) {
  std::vector<int64_t> entries;
  size_t src = 0;
  bool inferred = false;
  for (const Dim& t : target) {
    if (std::optional<int64_t> v = t.as_int(); v && *v > 0) {
      entries.push_back(*v);
      ++src;
    } else if (src < in.size() && known_equal(t, in[src])) {
      entries.push_back(0);
      ++src;
    } else if (src + 1 < in.size() && known_equal(t, in[src] * in[src + 1])) {
      entries.push_back(-3);
      src += 2;
    } else if (!inferred) {
      entries.push_back(-1);
      inferred = true;
      ++src;
    } else {
      return std::nullopt;
    }
  }
  return entries;
}

// reshape_like whose dims are the data's first dims, a run of a candidate's dims, then the
// data's last dims (x.view(y.size()[:-1] + (n,)) flattened and restored around a dense layer).
Expr reshape_like_form(const Expr& data, const std::vector<Dim>& in, const std::vector<Dim>& target,
                       const std::vector<Expr>& candidates) {
  auto equal_runs = [](const std::vector<Dim>& x, size_t at_x, const std::vector<Dim>& y,
                       size_t at_y, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (!known_equal(x[at_x + i], y[at_y + i])) return false;
    return true;
  };
  for (const Expr& candidate : candidates) {
    std::optional<std::vector<Dim>> like = ir::shape_dims(candidate);
    if (!like) continue;
    // Longer runs first: the plainest form takes a candidate's whole shape.
    for (size_t n = std::min(like->size(), target.size()); n >= 1; --n) {
      for (size_t rhs = 0; rhs + n <= like->size(); ++rhs) {
        for (size_t lhs = 0; lhs + n <= target.size() && lhs <= in.size(); ++lhs) {
          size_t tail = target.size() - lhs - n;
          if (tail > in.size() - lhs || !equal_runs(target, 0, in, 0, lhs) ||
              !equal_runs(target, lhs, *like, rhs, n) ||
              !equal_runs(target, lhs + n, in, in.size() - tail, tail))
            continue;
          std::vector<std::pair<std::string, ir::AttrValue>> attrs = {{"lhs_begin", int64_t(lhs)},
                                                                      {"rhs_begin", int64_t(rhs)}};
          if (in.size() - tail != in.size())
            attrs.emplace_back("lhs_end", int64_t(in.size() - tail));
          if (rhs + n != like->size()) attrs.emplace_back("rhs_end", int64_t(rhs + n));
          Expr result = ir::call_op("reshape_like", {data, candidate},
                                    ir::make_op_attrs("reshape_like", attrs));
          if (dims_match(typed_dims(result), target)) return result;
        }
      }
    }
  }
  return nullptr;
}

// dyn.reshape: the dims the kernel would compute from the operand, then a reshape whose entries
// give them, or reshape_like tensors in scope with those dims.
Expr convert_reshape(const ir::CallNode& call, SymbolicShapeEvaluator& values) {
  const Expr& data = call.args[0];
  const SymbolicValue* shape = vector_operand(values, call.args[1]);
  std::optional<std::vector<Dim>> in = ir::shape_dims(data);
  if (!shape || !in) return nullptr;
  const bool allowzero = attrs_or_default<ir::ReshapeAttrs>(call).allowzero;
  std::vector<Dim> target;
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < shape->elements.size(); ++i) {
    const Dim& e = shape->elements[i];
    if (std::optional<int64_t> v = e.as_int()) {
      if (*v == -1 && !infer_at) {
        infer_at = i;
        target.push_back(Dim::any());
      } else if (*v == 0 && !allowzero && i < in->size()) {
        target.push_back((*in)[i]);
      } else if (*v > 0) {
        target.push_back(*v);
      } else {
        return nullptr;  // a literal 0 dim, or a bad entry the kernel reports
      }
    } else if (involves_any(e) || is_positive(e)) {
      // A symbolic entry must not be 0 or -1 at run time, which would copy or infer a dim.
      target.push_back(e);
    } else {
      return nullptr;
    }
  }
  if (infer_at) {
    Dim known = 1;
    for (size_t i = 0; i < target.size(); ++i)
      if (i != *infer_at) known = known * target[i];
    target[*infer_at] = involves_any(known) ? Dim::any() : floordiv(ir::dims_product(*in), known);
  }
  if (std::optional<std::vector<int64_t>> entries = reshape_entries(*in, target)) {
    Expr result =
        ir::call_op("reshape", {data}, ir::make_op_attrs("reshape", {{"newshape", *entries}}));
    if (dims_match(typed_dims(result), target)) return result;
  }
  // The operand is the whole shape of its source (Any dims included) when no entry was copied
  // or inferred.
  const bool verbatim = !infer_at && std::none_of(shape->elements.begin(), shape->elements.end(),
                                                  [](const Dim& e) { return e.as_int() == 0; });
  if (verbatim && shape->shape_source && ir::shape_dims(shape->shape_source)) {
    Expr result = ir::call_op("reshape_like", {data, shape->shape_source});
    if (typed_dims(result) == ir::shape_dims(shape->shape_source)) return result;
  }
  return reshape_like_form(data, *in, target, like_candidates(call, {1}));
}

// dyn.full (ONNX ConstantOfShape): full_like a tensor of that shape, cast to the fill's dtype
// first when it differs (the cast's values are never read).
Expr convert_full(const ir::CallNode& call, SymbolicShapeEvaluator& values) {
  const SymbolicValue* shape = vector_operand(values, call.args[1]);
  std::optional<DataType> fill_dtype = ir::tensor_dtype(call.args[0]);
  if (!shape || !fill_dtype) return nullptr;
  Expr like = tensor_shaped_like(*shape, like_candidates(call, {1}));
  if (!like) return nullptr;
  DataType dtype = attrs_or_default<ir::InitOpAttrs>(call).dtype.value_or(*fill_dtype);
  if (ir::tensor_dtype(like) != dtype)
    like = ir::call_op("cast", {like}, ir::make_op_attrs("cast", {{"dtype", dtype}}));
  Expr result = ir::call_op("full_like", {like, call.args[0]});
  if (!typed_dims(result)) return nullptr;
  return result;
}

// dyn.broadcast_to: every output dim either is the input's (certainly equal) or stretches a
// unit dim to a known size, which repeat does along that axis; missing leading dims are unit
// dims added by expand_dims first. A unit dim stretched to a symbolic size takes it from a
// tensor in scope with the target shape: where(true, x, x) broadcasts x to the condition's
// shape for every dtype (an all-true condition shaped like that tensor; the cast is not read).
Expr convert_broadcast_to(const ir::CallNode& call, SymbolicShapeEvaluator& values) {
  const Expr& data = call.args[0];
  const SymbolicValue* shape = vector_operand(values, call.args[1]);
  std::optional<std::vector<Dim>> in = ir::shape_dims(data);
  if (!shape || !in || shape->elements.size() < in->size()) return nullptr;
  if (shape->shape_source == data) return data;
  const std::vector<Dim>& target = shape->elements;
  const size_t offset = target.size() - in->size();
  std::vector<std::pair<int64_t, int64_t>> repeats;  // (axis, times)
  bool repeatable = true;
  for (size_t j = 0; j < target.size(); ++j) {
    Dim from = j < offset ? Dim(1) : (*in)[j - offset];
    if (known_equal(target[j], from)) continue;
    std::optional<int64_t> times = target[j].as_int();
    if (from.as_int() != 1 || !times || *times < 0) {
      repeatable = false;
      break;
    }
    repeats.emplace_back(int64_t(j), *times);
  }
  if (repeatable) {
    Expr result = data;
    if (offset > 0)
      result = ir::call_op("expand_dims", {result},
                           ir::make_op_attrs("expand_dims", {{"axis", int64_t(0)},
                                                             {"num_newaxis", int64_t(offset)}}));
    for (const auto& [axis, times] : repeats)
      result = ir::call_op("repeat", {result},
                           ir::make_op_attrs("repeat", {{"repeats", times}, {"axis", axis}}));
    if (dims_match(typed_dims(result), target)) return result;
  }
  Expr like = tensor_shaped_like(*shape, like_candidates(call, {1}));
  if (!like) return nullptr;
  if (ir::tensor_dtype(like) != DataType::boolean())
    like = ir::call_op("cast", {like}, ir::make_op_attrs("cast", {{"dtype", DataType::boolean()}}));
  Expr result = ir::call_op("where", {ir::call_op("ones_like", {like}), data, data});
  if (!dims_match(typed_dims(result), target)) return nullptr;
  return result;
}

// A slice bound known only as a dim expression, as a static bound with the same effect on an
// axis of size `dim`: any bound at or past the end clamps to it, and dim - k (never negative)
// is what the negative index -k means.
std::optional<int64_t> static_bound(const Dim& bound, const Dim& dim) {
  if (std::optional<int64_t> v = bound.as_int()) return *v;
  if (involves_any(bound) || involves_any(dim)) return std::nullopt;
  std::optional<int64_t> past_end = (bound - dim).as_int();
  if (!past_end) return std::nullopt;
  if (*past_end >= 0) return kToTheEnd;
  if (is_non_negative(bound)) return *past_end;
  return std::nullopt;
}

// 0, 1, ..., length - 1 (dtype) counted along an axis of a tensor in scope of that length: the
// exclusive running sum of ones over one line of it (element 0 taken along each other axis).
// Null when no candidate of the call's operands has such an axis.
Expr counting_line(const ir::CallNode& call, const std::vector<size_t>& operands, const Dim& length,
                   DataType dtype) {
  for (const Expr& candidate : like_candidates(call, operands)) {
    std::optional<std::vector<Dim>> dims = ir::shape_dims(candidate);
    if (!dims) continue;
    auto axis = std::find_if(dims->begin(), dims->end(),
                             [&](const Dim& d) { return known_equal(d, length); });
    if (axis == dims->end()) continue;
    // Taking element 0 of the other axes needs them non-empty.
    std::vector<int64_t> others;
    bool non_empty = true;
    for (size_t k = 0; k < dims->size(); ++k) {
      if (k == size_t(axis - dims->begin())) continue;
      others.push_back(int64_t(k));
      non_empty = non_empty && is_positive((*dims)[k]);
    }
    if (!non_empty) continue;
    Expr line = candidate;
    for (auto k = others.rbegin(); k != others.rend(); ++k)
      line = ir::call_op("take", {line, ir::scalar_constant(0, DataType::int64())},
                         ir::make_op_attrs("take", {{"axis", *k}}));
    if (ir::tensor_dtype(candidate) != dtype)
      line = ir::call_op("cast", {line}, ir::make_op_attrs("cast", {{"dtype", dtype}}));
    Expr counted =
        ir::call_op("cumsum", {ir::call_op("ones_like", {line})},
                    ir::make_op_attrs("cumsum", {{"axis", int64_t(0)}, {"exclusive", true}}));
    if (dims_match(typed_dims(counted), {length})) return counted;
  }
  return nullptr;
}

// The constant 0, step, 2 * step, ... (count values of dtype).
Expr arange_constant(int64_t count, int64_t step, DataType dtype) {
  Tensor values = Tensor::empty({count}, dtype);
  for (int64_t i = 0; i < count; ++i) values.set_from_double(i, double(i * step));
  return ir::ConstantNode::make(values);
}

// dyn.strided_slice with bounds relative to the sliced dims (slicing to the end of an axis,
// or dropping its last k elements).
Expr convert_strided_slice(const ir::CallNode& call, SymbolicShapeEvaluator& values,
                           bool count_indices) {
  const Expr& data = call.args[0];
  std::optional<std::vector<Dim>> dims = ir::shape_dims(data);
  const SymbolicValue* begin = vector_operand(values, call.args[1]);
  const SymbolicValue* end = vector_operand(values, call.args[2]);
  const SymbolicValue* strides = vector_operand(values, call.args[3]);
  const SymbolicValue* axes = vector_operand(values, call.args[4]);
  if (!dims || !begin || !end || !strides || !axes) return nullptr;
  std::optional<std::vector<int64_t>> stride_values = strides->static_values(),
                                      axis_values = axes->static_values();
  if (!stride_values || !axis_values || begin->elements.size() != axis_values->size() ||
      end->elements.size() != axis_values->size())
    return nullptr;
  std::vector<int64_t> static_begin, static_end, static_strides, static_axes;
  // Axes whose bounds are not static are gathered: a symbolic start with the end a static
  // distance past it (a decode step's row of the causal mask, rows [past, past + 1)) takes a
  // constant count of indices plus the start read at run time; a static start with a symbolic
  // end (a prefill's mask cut to the sequence, [0, seq)) counts its indices along a tensor of
  // that length in scope. "clip" keeps an index past the end inside the data (where the slice
  // would come out shorter, and the model's next op would refuse it).
  std::vector<std::pair<int64_t, Expr>> gathered;  // (axis, indices)
  for (size_t i = 0; i < axis_values->size(); ++i) {
    std::optional<int64_t> axis = normalize_axis((*axis_values)[i], int64_t(dims->size()));
    if (!axis) return nullptr;
    const Dim& dim = (*dims)[size_t(*axis)];
    std::optional<int64_t> b = static_bound(begin->elements[i], dim),
                           e = static_bound(end->elements[i], dim);
    if (b && e) {
      static_begin.push_back(*b);
      static_end.push_back(*e);
      static_strides.push_back((*stride_values)[i]);
      static_axes.push_back(*axis);
      continue;
    }
    const Dim &first = begin->elements[i], &last = end->elements[i];
    if ((*stride_values)[i] != 1 || involves_any(first) || involves_any(last) ||
        !is_non_negative(first))
      return nullptr;
    Expr indices;
    if (std::optional<int64_t> count = (last - first).as_int()) {
      if (*count < 0) return nullptr;
      Expr start =
          ir::call_op("take", {call.args[1], ir::scalar_constant(double(i), DataType::int64())},
                      ir::make_op_attrs("take", {{"axis", int64_t(0)}}));
      if (ir::tensor_dtype(call.args[1]) != DataType::int64())
        start =
            ir::call_op("cast", {start}, ir::make_op_attrs("cast", {{"dtype", DataType::int64()}}));
      indices = ir::call_op("add", {arange_constant(*count, 1, DataType::int64()), start});
    } else if (std::optional<int64_t> start = first.as_int();
               start && count_indices && dims->size() >= 2 &&
               !std::any_of(dims->begin(), dims->end(), involves_any)) {
      // Only where the dynamic slice would make the other dims unknown too (its relation
      // makes every dim ?): a 1-D slice loses nothing by staying dynamic. Data of unknown dims
      // waits for a later round, where a conversion before it may have typed them and
      // pin_unit_dims may apply.
      const Dim length = last - *start;
      if (!is_non_negative(length)) return nullptr;
      indices = counting_line(call, {2}, length, DataType::int64());
      if (!indices) return nullptr;
      if (*start != 0)
        indices =
            ir::call_op("add", {indices, ir::scalar_constant(double(*start), DataType::int64())});
    } else {
      return nullptr;
    }
    gathered.emplace_back(*axis, indices);
  }
  Expr result = data;
  if (!static_axes.empty())
    result = ir::call_op("strided_slice", {data},
                         ir::make_op_attrs("strided_slice", {{"begin", static_begin},
                                                             {"end", static_end},
                                                             {"strides", static_strides},
                                                             {"axes", static_axes}}));
  for (const auto& [axis, indices] : gathered)
    result =
        ir::call_op("take", {result, indices},
                    ir::make_op_attrs("take", {{"axis", axis}, {"mode", std::string("clip")}}));
  if (!typed_dims(result)) return nullptr;
  return result;
}

// dyn.strided_slice of one axis of data whose other dims are all 1 (a row of a causal mask
// sliced to the sequence's length) as a slice of the flattened data reshaped back: the type
// then keeps those dims 1 instead of unknown, so that broadcasting against them stays static.
Expr pin_unit_dims(const ir::CallNode& call, SymbolicShapeEvaluator& values) {
  std::optional<std::vector<Dim>> dims = ir::shape_dims(call.args[0]);
  const SymbolicValue* axes = vector_operand(values, call.args[4]);
  if (!dims || dims->size() < 2 || !axes) return nullptr;
  std::optional<std::vector<int64_t>> axis_values = axes->static_values();
  if (!axis_values || axis_values->size() != 1) return nullptr;
  std::optional<int64_t> axis = normalize_axis((*axis_values)[0], int64_t(dims->size()));
  if (!axis) return nullptr;
  std::vector<int64_t> newshape(dims->size(), 1);
  newshape[size_t(*axis)] = -1;
  for (size_t d = 0; d < dims->size(); ++d)
    if (d != size_t(*axis) && (*dims)[d].as_int() != std::optional<int64_t>(1)) return nullptr;
  Expr flat = ir::call_op("reshape", {call.args[0]},
                          ir::make_op_attrs("reshape", {{"newshape", std::vector<int64_t>{-1}}}));
  Tensor first_axis =
      Tensor::zeros({1}, ir::tensor_dtype(call.args[4]).value_or(DataType::int64()));
  Expr sliced = ir::call_op("dyn.strided_slice", {flat, call.args[1], call.args[2], call.args[3],
                                                  ir::ConstantNode::make(first_axis)});
  return ir::call_op("reshape", {sliced}, ir::make_op_attrs("reshape", {{"newshape", newshape}}));
}

// range(start, limit, delta) with symbolic bounds. A symbolic start with the limit a static
// distance past it has a static length. With a static start and a symbolic limit no static op
// takes the length, so the indices are counted along a tensor of that length in scope
// (counting_line), then times delta, plus start.
Expr convert_range(const ir::CallNode& call, SymbolicShapeEvaluator& values) {
  const SymbolicValue *start = values.evaluate(call.args[0]),
                      *limit = values.evaluate(call.args[1]),
                      *delta = values.evaluate(call.args[2]);
  std::optional<DataType> dtype = ir::tensor_dtype(call.args[0]);
  if (!start || !limit || !delta || !dtype || !dtype->is_int()) return nullptr;
  if (start->elements.size() != 1 || limit->elements.size() != 1 || delta->elements.size() != 1)
    return nullptr;
  std::optional<int64_t> first = start->elements[0].as_int(), step = delta->elements[0].as_int();
  const Dim& stop = limit->elements[0];
  // A symbolic start with the limit a static distance past it (the positions of a decode step,
  // arange(past, past + tokens)): the length is static, the indices a constant plus start.
  if (!first && step && *step >= 1 && !involves_any(start->elements[0]) && !involves_any(stop)) {
    if (std::optional<int64_t> span = (stop - start->elements[0]).as_int()) {
      const int64_t count = *span > 0 ? (*span + *step - 1) / *step : 0;
      return ir::call_op("add", {arange_constant(count, *step, *dtype), call.args[0]});
    }
  }
  if (!first || !step || *step < 1 || involves_any(stop)) return nullptr;
  Dim length = floordiv(stop - *first + (*step - 1), *step);
  // A length that may be negative would need a max with 0, which no axis has.
  if (!is_non_negative(length)) return nullptr;
  Expr result = counting_line(call, {0, 1, 2}, length, *dtype);
  if (!result) return nullptr;
  if (*step != 1)
    result = ir::call_op("multiply", {result, ir::scalar_constant(double(*step), *dtype)});
  if (*first != 0)
    result = ir::call_op("add", {result, ir::scalar_constant(double(*first), *dtype)});
  if (dims_match(typed_dims(result), {length})) return result;
  return nullptr;
}

}  // namespace

Expr symbolic_static_form(const ir::CallNode& call, SymbolicShapeEvaluator& values) {
  const ir::OpNode* op = call.op();
  if (!op) return nullptr;
  const std::string& name = op->name;
  if (name == "dyn.reshape") return convert_reshape(call, values);
  if (name == "dyn.full") return convert_full(call, values);
  if (name == "dyn.broadcast_to") return convert_broadcast_to(call, values);
  if (name == "dyn.strided_slice") {
    // Counting indices costs a running sum quadratic in the count: a slice that can keep its
    // unit dims instead (a decode step's mask row) does that first.
    if (Expr result = convert_strided_slice(call, values, false)) return result;
    if (Expr result = pin_unit_dims(call, values)) return result;
    return convert_strided_slice(call, values, true);
  }
  if (name == "range") return convert_range(call, values);
  return nullptr;
}

}  // namespace anvil::transform::detail
