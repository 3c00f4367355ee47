// Symbolic evaluation of shape computations. Integers are computed by the reference kernels
// themselves (so truncating division, wrap-around and ONNX's index rules are the kernels'),
// ops that only move elements run their kernel on element ids, and the arithmetic on symbolic
// elements is Dim arithmetic, used only where it is certain to agree with the kernel: a
// division needs a divisor known to be positive, a comparison a difference of known sign.
// Where it is not, the element becomes Any, and whatever reads it stays dynamic.
#include "transform/symbolic_shape_values.h"

#include <algorithm>
#include <string_view>

#include "anvil/ir/attrs/transform.h"
#include "anvil/ir/builder.h"
#include "anvil/reference/reference.h"
#include "transform/pass_util.h"

namespace anvil::transform::detail {
namespace {

using ir::Dim;
using ir::Expr;

// Shape values are short vectors; anything larger is data, not a shape.
constexpr int64_t kMaxElements = 1024;

bool is_integer_like(DataType dtype) {
  return dtype.is_int() || dtype.is_uint() || dtype.is_bool();
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

// A tensor of dtype holding the integers, written exactly (INT64_MAX does not survive double).
Tensor integer_tensor(const std::vector<int64_t>& values, const std::vector<int64_t>& shape,
                      DataType dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::int64())
      t.data_as<int64_t>()[i] = values[i];
    else
      t.set_from_double(int64_t(i), double(values[i]));
  }
  return t;
}

std::vector<int64_t> integer_values(const Tensor& t) {
  std::vector<int64_t> values(size_t(t.numel()));
  const bool wide = t.dtype() == DataType::int64() && t.is_contiguous();
  for (int64_t i = 0; i < t.numel(); ++i)
    values[size_t(i)] = wide ? t.data_as<int64_t>()[i] : int64_t(t.get_as_double(i));
  return values;
}

SymbolicValue from_tensor(const Tensor& t) {
  SymbolicValue v;
  v.shape = t.shape_vector();
  v.dtype = t.dtype();
  for (int64_t x : integer_values(t)) v.elements.emplace_back(x);
  return v;
}

const ir::AttrsNode* call_attrs(const ir::CallNode& call) {
  return call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
}

// The op's reference kernel on the inputs, or nullopt when there is none or it rejects them.
std::optional<std::vector<Tensor>> run_kernel(const ir::CallNode& call,
                                              const std::vector<Tensor>& inputs,
                                              const ir::Type& out_type) {
  const reference::ReferenceKernel* kernel = reference::find_kernel(call.op()->name);
  if (!kernel) return std::nullopt;
  try {
    return (*kernel)(reference::KernelArgs{inputs, call_attrs(call), out_type});
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The output type of call with its dtype replaced (element ids are int64 whatever the data).
ir::Type retyped(const ir::CallNode& call, DataType dtype) {
  const auto* type = ir::as<ir::TensorTypeNode>(call.checked_type);
  if (type && type->shape) return ir::TensorTypeNode::make(*type->shape, dtype);
  return ir::TensorTypeNode::make_unknown_rank(dtype);
}

// A binary op of the elementwise family applied to two integers by its reference kernel.
std::optional<int64_t> static_binary(const ir::CallNode& call, int64_t x, int64_t y,
                                     DataType in_dtype, DataType out_dtype) {
  std::vector<Tensor> inputs = {integer_tensor({x}, {}, in_dtype),
                                integer_tensor({y}, {}, in_dtype)};
  auto out = run_kernel(call, inputs, ir::TensorTypeNode::make_scalar(out_dtype));
  if (!out || out->size() != 1) return std::nullopt;
  return integer_values((*out)[0])[0];
}

bool positive(const Dim& d) { return lower_bound(d).value_or(0) >= 1; }
bool non_negative(const Dim& d) { return lower_bound(d).value_or(-1) >= 0; }

// The truth of a comparison of a and b, when the sign of their difference is certain.
std::optional<bool> compare(std::string_view op, const Dim& a, const Dim& b) {
  const bool a_less = positive(b - a), a_greater = positive(a - b);
  const bool a_at_least = non_negative(a - b), a_at_most = non_negative(b - a);
  if (op == "equal" || op == "not_equal") {
    std::optional<bool> eq;
    if (a == b) eq = true;
    if (a_less || a_greater) eq = false;
    if (!eq) return std::nullopt;
    return op == "equal" ? *eq : !*eq;
  }
  if (op == "less")
    return a_less ? std::optional(true) : a_at_least ? std::optional(false) : std::nullopt;
  if (op == "less_equal")
    return a_at_most ? std::optional(true) : a_greater ? std::optional(false) : std::nullopt;
  if (op == "greater")
    return a_greater ? std::optional(true) : a_at_most ? std::optional(false) : std::nullopt;
  if (op == "greater_equal")
    return a_at_least ? std::optional(true) : a_less ? std::optional(false) : std::nullopt;
  return std::nullopt;
}

// op(a, b) for elements of which at least one is symbolic, or Any when not certain.
Dim symbolic_binary(std::string_view op, const Dim& a, const Dim& b) {
  if (op == "add") return a + b;
  if (op == "subtract") return a - b;
  if (op == "multiply") return a * b;
  // The kernels divide by 0 to 0; Dim division by a positive divisor is floor division, which
  // truncation equals for a non-negative dividend.
  if (op == "floor_divide" && positive(b)) return floordiv(a, b);
  if (op == "divide" && positive(b) && non_negative(a)) return floordiv(a, b);
  if (op == "floor_mod" && positive(b)) return floormod(a, b);
  if (op == "mod" && positive(b) && non_negative(a)) return floormod(a, b);
  if (op == "maximum") {
    if (non_negative(a - b)) return a;
    if (non_negative(b - a)) return b;
    return max(a, b);
  }
  if (op == "minimum") {
    if (non_negative(a - b)) return b;
    if (non_negative(b - a)) return a;
    return min(a, b);
  }
  if (std::optional<bool> truth = compare(op, a, b)) return Dim(int64_t(*truth));
  return Dim::any();
}

bool is_binary_op(std::string_view op) {
  static constexpr std::string_view kOps[] = {"add",          "subtract", "multiply",     "divide",
                                              "floor_divide", "mod",      "floor_mod",    "maximum",
                                              "minimum",      "equal",    "not_equal",    "less",
                                              "less_equal",   "greater",  "greater_equal"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

bool is_comparison(std::string_view op) {
  return op == "equal" || op == "not_equal" || op == "less" || op == "less_equal" ||
         op == "greater" || op == "greater_equal";
}

// Numpy broadcasting of small shapes; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_shapes(
    const std::vector<const std::vector<int64_t>*>& shapes) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  std::vector<int64_t> out(rank, 1);
  for (const auto* s : shapes) {
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t d = (*s)[i];
      int64_t& o = out[rank - s->size() + i];
      if (d == o || d == 1) continue;
      if (o != 1) return std::nullopt;
      o = d;
    }
  }
  return out;
}

// The flat index into a tensor of shape `in` read by output element `flat` of shape `out`.
size_t broadcast_source(int64_t flat, const std::vector<int64_t>& out,
                        const std::vector<int64_t>& in) {
  int64_t index = 0, stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    int64_t coord = flat % out[k];
    flat /= out[k];
    size_t j = k + in.size() - out.size();
    if (k + in.size() < out.size()) continue;
    if (in[j] != 1) index += coord * stride;
    stride *= in[j];
  }
  return size_t(index);
}

// The positions of the operands whose elements a data-moving op moves; the others (indices,
// begin/end, axes) must be known integers.
std::optional<std::vector<size_t>> moved_operands(std::string_view op) {
  static constexpr std::string_view kUnary[] = {
      "take",        "gather",          "gather_nd",        "strided_slice",     "reshape",
      "squeeze",     "expand_dims",     "transpose",        "reverse",           "broadcast_to",
      "tile",        "repeat",          "flatten",          "dyn.strided_slice", "dyn.reshape",
      "dyn.squeeze", "dyn.expand_dims", "dyn.broadcast_to", "dyn.tile"};
  if (op == "concatenate") return std::vector<size_t>{0};
  if (std::find(std::begin(kUnary), std::end(kUnary), op) != std::end(kUnary))
    return std::vector<size_t>{0};
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<int64_t>> SymbolicValue::static_values() const {
  return ir::to_ints(elements);
}

bool involves_any(const Dim& d) {
  switch (d.kind()) {
    case ir::DimKind::Any:
      return true;
    case ir::DimKind::Int:
    case ir::DimKind::Var:
      return false;
    default:
      return involves_any(d.lhs()) || involves_any(d.rhs());
  }
}

bool known_equal(const Dim& a, const Dim& b) {
  return !involves_any(a) && !involves_any(b) && a == b;
}

std::optional<int64_t> lower_bound(const Dim& d) {
  switch (d.kind()) {
    case ir::DimKind::Int:
      return d.int_value();
    case ir::DimKind::Var:
      return 1;
    case ir::DimKind::Any:
      return std::nullopt;
    case ir::DimKind::Add: {
      auto a = lower_bound(d.lhs()), b = lower_bound(d.rhs());
      if (!a || !b) return std::nullopt;
      return *a + *b;
    }
    case ir::DimKind::Mul: {
      // The bound of a product needs both factors non-negative (no upper bounds are known).
      auto a = lower_bound(d.lhs()), b = lower_bound(d.rhs());
      if (!a || !b || *a < 0 || *b < 0) return std::nullopt;
      return *a * *b;
    }
    case ir::DimKind::FloorDiv: {
      auto a = lower_bound(d.lhs());
      auto c = d.rhs().as_int();
      if (!a || !c || *c <= 0) return std::nullopt;
      return *a >= 0 ? *a / *c : -((-*a + *c - 1) / *c);
    }
    case ir::DimKind::FloorMod: {
      auto c = d.rhs().as_int();
      if (!c || *c <= 0) return std::nullopt;
      return 0;
    }
    case ir::DimKind::Min:
    case ir::DimKind::Broadcast: {
      // A broadcast that has a size is one of its operands.
      auto a = lower_bound(d.lhs()), b = lower_bound(d.rhs());
      if (!a || !b) return std::nullopt;
      return std::min(*a, *b);
    }
    case ir::DimKind::Max: {
      auto a = lower_bound(d.lhs()), b = lower_bound(d.rhs());
      if (!a) return b;
      if (!b) return a;
      return std::max(*a, *b);
    }
  }
  return std::nullopt;
}

const SymbolicValue* SymbolicShapeEvaluator::evaluate(const Expr& e) {
  if (!e) return nullptr;
  auto it = memo_.find(e.get());
  if (it == memo_.end()) {
    std::optional<SymbolicValue> value = compute(e);
    keep_alive_.push_back(e);
    it = memo_.emplace(e.get(), std::move(value)).first;
  }
  return it->second ? &*it->second : nullptr;
}

std::optional<SymbolicValue> SymbolicShapeEvaluator::compute(const Expr& e) {
  if (const Tensor* data = ir::constant_data(e)) {
    if (!is_integer_like(data->dtype()) || data->numel() > kMaxElements) return std::nullopt;
    return from_tensor(*data);
  }
  const auto* call = ir::as<ir::CallNode>(e);
  if (!call || !call->op()) return std::nullopt;
  // Only small integer tensors are shape values; checking the type first keeps the evaluation
  // from walking back through the data-carrying layers of the network.
  const auto* type = ir::as<ir::TensorTypeNode>(call->checked_type);
  std::optional<std::vector<int64_t>> shape = type ? type->static_shape() : std::nullopt;
  if (!shape || !is_integer_like(type->dtype) || element_count(*shape) > kMaxElements)
    return std::nullopt;
  std::optional<SymbolicValue> value = compute_call(*call);
  if (value && element_count(value->shape) > kMaxElements) return std::nullopt;
  return value;
}

std::optional<SymbolicValue> SymbolicShapeEvaluator::compute_call(const ir::CallNode& call) {
  const std::string& op = call.op()->name;
  // Random draws differ from run to run, and compiled calls have no kernel to consult.
  if (op.find("random") != std::string::npos || op == "call_tir" || op == "call_dps_packed")
    return std::nullopt;
  if (op == "shape_of" || op == "ndarray_size") {
    std::optional<std::vector<Dim>> dims = ir::shape_dims(call.args[0]);
    if (!dims) return std::nullopt;
    SymbolicValue v;
    if (op == "shape_of") {
      v.dtype = call.attrs_as<ir::ShapeOfAttrs>().dtype;
      v.shape = {int64_t(dims->size())};
      v.elements = *dims;
      v.shape_source = call.args[0];
    } else {
      v.dtype = call.attrs_as<ir::NdarraySizeAttrs>().dtype;
      v.elements = {ir::dims_product(*dims)};
    }
    return v;
  }

  // Every operand known: an integer computation whose value the kernel gives exactly.
  std::vector<const SymbolicValue*> args;
  for (const Expr& arg : call.args) args.push_back(evaluate(arg));
  const bool all_static = std::all_of(
      args.begin(), args.end(), [](const SymbolicValue* v) { return v && v->static_values(); });
  if (all_static && !args.empty() && ir::as<ir::TensorTypeNode>(call.checked_type)) {
    std::vector<Tensor> inputs;
    for (const SymbolicValue* v : args)
      inputs.push_back(integer_tensor(*v->static_values(), v->shape, v->dtype));
    auto out = run_kernel(call, inputs, call.checked_type);
    if (!out || out->size() != 1 || !is_integer_like((*out)[0].dtype()) ||
        (*out)[0].numel() > kMaxElements)
      return std::nullopt;
    return from_tensor((*out)[0]);
  }

  if (op == "cast") {
    const SymbolicValue* in = args[0];
    DataType to = call.attrs_as<ir::CastAttrs>().dtype;
    if (!in || !is_integer_like(to)) return std::nullopt;
    SymbolicValue v = *in;
    v.dtype = to;
    if (to.is_bool() || to.bits < 32) v.shape_source = nullptr;
    for (Dim& d : v.elements) {
      if (std::optional<int64_t> x = d.as_int()) {
        Tensor t = integer_tensor({*x}, {}, in->dtype);
        auto out = run_kernel(call, {t}, ir::TensorTypeNode::make_scalar(to));
        d = out ? Dim(integer_values((*out)[0])[0]) : Dim::any();
      } else if (to.is_bool()) {
        d = positive(d) ? Dim(1) : Dim::any();
      } else if (to.bits < 32 || (to.is_uint() && !non_negative(d))) {
        // Sizes fit 32 bits; narrower types might wrap them.
        d = Dim::any();
      }
    }
    return v;
  }

  if (is_binary_op(op)) {
    const SymbolicValue *a = args[0], *b = args[1];
    if (!a || !b) return std::nullopt;
    auto shape = broadcast_shapes({&a->shape, &b->shape});
    if (!shape) return std::nullopt;
    SymbolicValue v;
    v.shape = *shape;
    v.dtype = is_comparison(op) ? DataType::boolean() : a->dtype;
    for (int64_t i = 0; i < element_count(*shape); ++i) {
      const Dim& x = a->elements[broadcast_source(i, *shape, a->shape)];
      const Dim& y = b->elements[broadcast_source(i, *shape, b->shape)];
      if (involves_any(x) || involves_any(y)) {
        v.elements.push_back(Dim::any());
      } else if (x.is_int() && y.is_int()) {
        auto r = static_binary(call, x.int_value(), y.int_value(), a->dtype, v.dtype);
        v.elements.push_back(r ? Dim(*r) : Dim::any());
      } else {
        v.elements.push_back(symbolic_binary(op, x, y));
      }
    }
    return v;
  }

  if (op == "negative" && args[0]) {
    SymbolicValue v = *args[0];
    v.shape_source = nullptr;
    for (Dim& d : v.elements) d = Dim(0) - d;
    return v;
  }

  if (op == "where") {
    const SymbolicValue *c = args[0], *x = args[1], *y = args[2];
    if (!c || !x || !y) return std::nullopt;
    auto shape = broadcast_shapes({&c->shape, &x->shape, &y->shape});
    if (!shape) return std::nullopt;
    SymbolicValue v;
    v.shape = *shape;
    v.dtype = x->dtype;
    for (int64_t i = 0; i < element_count(*shape); ++i) {
      const Dim& pick = c->elements[broadcast_source(i, *shape, c->shape)];
      const Dim& xi = x->elements[broadcast_source(i, *shape, x->shape)];
      const Dim& yi = y->elements[broadcast_source(i, *shape, y->shape)];
      if (std::optional<int64_t> truth = pick.as_int())
        v.elements.push_back(*truth != 0 ? xi : yi);
      else
        v.elements.push_back(known_equal(xi, yi) ? xi : Dim::any());
    }
    return v;
  }

  return move_elements(call);
}

// A data-moving op runs its kernel on int64 tensors of element ids; the ids it returns say
// which input element lands where. The ids of every moved operand are distinct.
std::optional<SymbolicValue> SymbolicShapeEvaluator::move_elements(const ir::CallNode& call) {
  std::optional<std::vector<size_t>> moved = moved_operands(call.op()->name);
  if (!moved || !ir::as<ir::TensorTypeNode>(call.checked_type)) return std::nullopt;
  std::vector<Dim> pool;
  std::optional<DataType> dtype;
  std::vector<Tensor> inputs;
  auto add_moved = [&](const Expr& e) {
    const SymbolicValue* v = evaluate(e);
    if (!v || (dtype && *dtype != v->dtype)) return false;
    dtype = v->dtype;
    std::vector<int64_t> ids;
    for (const Dim& d : v->elements) {
      ids.push_back(int64_t(pool.size()));
      pool.push_back(d);
    }
    inputs.push_back(integer_tensor(ids, v->shape, DataType::int64()));
    return true;
  };
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Expr& arg = call.args[i];
    if (std::find(moved->begin(), moved->end(), i) != moved->end()) {
      if (const auto* tuple = ir::as<ir::TupleNode>(arg)) {
        for (const Expr& field : tuple->fields)
          if (!add_moved(field)) return std::nullopt;
      } else if (!add_moved(arg)) {
        return std::nullopt;
      }
      continue;
    }
    const SymbolicValue* v = evaluate(arg);
    std::optional<std::vector<int64_t>> values = v ? v->static_values() : std::nullopt;
    if (!values) return std::nullopt;
    inputs.push_back(integer_tensor(*values, v->shape, v->dtype));
  }
  if (!dtype) return std::nullopt;
  auto out = run_kernel(call, inputs, retyped(call, DataType::int64()));
  if (!out || out->size() != 1 || (*out)[0].dtype() != DataType::int64()) return std::nullopt;
  SymbolicValue v;
  v.shape = (*out)[0].shape_vector();
  v.dtype = *dtype;
  for (int64_t id : integer_values((*out)[0])) {
    if (id < 0 || size_t(id) >= pool.size()) return std::nullopt;  // a fill value, not an element
    v.elements.push_back(pool[size_t(id)]);
  }
  return v;
}

}  // namespace anvil::transform::detail
