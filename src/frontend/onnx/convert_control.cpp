// Constant and Identity, and the control-flow ops If, Loop and Scan.
#include <algorithm>
#include <functional>
#include <utility>

#include "frontend/onnx/convert_loop.h"
#include "frontend/onnx/converter_families.h"
#include "frontend/onnx/graph_converter.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

void register_all_converters(ConverterTable& table) {
  register_control_converters(table);
  register_math_converters(table);
  register_nn_converters(table);
  register_tensor_converters(table);
  register_reduce_converters(table);
  register_norm_converters(table);
  register_quantize_converters(table);
  register_rnn_converters(table);
  register_contrib_transformer_converters(table);
  register_attention_converters(table);
  register_linear_recurrence_converters(table);
  register_signal_converters(table);
  register_ml_converters(table);
  register_training_converters(table);
}

namespace {

std::vector<Expr> convert_constant(ConvertContext& ctx) {
  if (ctx.has_attr("value")) return {ctx.constant(ctx.attr_tensor("value"))};
  const onnx::AttributeProto* attr = nullptr;
  for (const onnx::AttributeProto& a : ctx.node().attribute()) attr = &a;
  if (!attr) ctx.fail("has no value attribute");
  auto scalar_or_list = [&](auto values, DataType dtype, bool scalar) {
    std::vector<int64_t> shape;
    if (!scalar) shape.push_back(int64_t(values.size()));
    Tensor t = Tensor::empty(shape, dtype);
    for (size_t i = 0; i < values.size(); ++i) t.set_from_double(int64_t(i), double(values[i]));
    return t;
  };
  const std::string& name = attr->name();
  if (name == "value_float")
    return {
        ctx.constant(scalar_or_list(std::vector<double>{attr->f()}, DataType::float32(), true))};
  if (name == "value_int")
    return {ctx.constant(scalar_or_list(std::vector<int64_t>{attr->i()}, DataType::int64(), true))};
  if (name == "value_floats")
    return {ctx.constant(
        scalar_or_list(std::vector<double>(attr->floats().begin(), attr->floats().end()),
                       DataType::float32(), false))};
  if (name == "value_ints") {
    std::vector<int64_t> values(attr->ints().begin(), attr->ints().end());
    Tensor t = Tensor::empty({int64_t(values.size())}, DataType::int64());
    std::copy(values.begin(), values.end(), t.data_as<int64_t>());
    return {ctx.constant(t)};
  }
  ctx.fail("attribute '", name, "' is not supported (string and sparse constants are not)");
}

std::vector<Expr> convert_identity(ConvertContext& ctx) { return {ctx.input(0)}; }

Expr bool_constant(ConvertContext& ctx, bool value) {
  Tensor t = Tensor::empty({}, DataType::boolean());
  t.set_from_double(0, value ? 1 : 0);
  return ctx.constant(t);
}

// ---------------------------------------------------------------- Optional

// The IR has no optional type: an optional that holds a tensor is that tensor, and one that is
// empty is an absent input. So OptionalHasElement is a constant (true for a tensor, false for
// no input), OptionalGetElement of a tensor is the tensor, and Optional of a tensor is the
// tensor. An empty Optional, and optional or sequence graph inputs, are refused at import.
std::vector<Expr> convert_optional_has_element(ConvertContext& ctx) {
  return {bool_constant(ctx, ctx.has_input(0))};
}

std::vector<Expr> convert_optional_get_element(ConvertContext& ctx) {
  if (!ctx.has_input(0)) ctx.fail("has no input: an empty optional holds no element");
  return {ctx.input(0)};
}

std::vector<Expr> convert_optional(ConvertContext& ctx) {
  if (!ctx.has_input(0))
    ctx.fail("makes an empty optional, which anvil's IR cannot hold (it has no optional type)");
  return {ctx.input(0)};
}

// Branch outputs of one element whose shapes differ (ONNX allows a scalar in one branch and
// [1] in the other) both take the shape of higher rank: broadcasting gives a one-element
// tensor of any rank the same meaning, and the IR If needs one type.
void agree_on_one_element(ConvertContext& ctx, Expr& then_out, Expr& else_out) {
  const auto* a = as<TensorTypeNode>(then_out->checked_type);
  const auto* b = as<TensorTypeNode>(else_out->checked_type);
  if (!a || !b || a->dtype != b->dtype) return;
  std::optional<std::vector<int64_t>> sa = a->static_shape(), sb = b->static_shape();
  auto one_element = [](const std::vector<int64_t>& shape) {
    return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d == 1; });
  };
  if (!sa || !sb || *sa == *sb || !one_element(*sa) || !one_element(*sb)) return;
  Expr& lower = sa->size() < sb->size() ? then_out : else_out;
  const std::vector<int64_t>& shape = sa->size() < sb->size() ? *sb : *sa;
  lower = ctx.op("reshape", {lower}, {{"newshape", shape}});
}

// e as a scalar: a one-element tensor of any rank reshaped to rank 0.
Expr as_scalar(ConvertContext& ctx, const Expr& e) {
  const auto* t = as<TensorTypeNode>(ctx.typed(e)->checked_type);
  if (t && t->shape && t->shape->empty()) return e;
  return ctx.op("reshape", {e}, {{"newshape", std::vector<int64_t>{}}});
}

// If with a constant condition inlines the taken branch; otherwise both
// branches become an IR If, which needs their outputs to agree in type.
std::vector<Expr> convert_if(ConvertContext& ctx) {
  const onnx::GraphProto& then_graph = ctx.attr_graph("then_branch");
  const onnx::GraphProto& else_graph = ctx.attr_graph("else_branch");
  if (std::optional<Tensor> cond = ctx.input_constant(0)) {
    bool taken = cond->numel() > 0 && cond->get_as_double(0) != 0;
    return ctx.graph().convert_subgraph(taken ? then_graph : else_graph, {});
  }
  std::vector<Expr> then_out = ctx.graph().convert_subgraph(then_graph, {});
  std::vector<Expr> else_out = ctx.graph().convert_subgraph(else_graph, {});
  if (then_out.size() != else_out.size())
    ctx.fail("branches return ", then_out.size(), " and ", else_out.size(), " outputs");
  for (size_t i = 0; i < then_out.size(); ++i) agree_on_one_element(ctx, then_out[i], else_out[i]);
  ctx.input_tensor(0);  // an Error naming the node unless the condition has a known rank
  Expr cond = as_scalar(ctx, ctx.input(0));
  auto pack = [&](const std::vector<Expr>& outs) {
    return outs.size() == 1 ? outs[0] : ctx.typed(TupleNode::make(outs));
  };
  Expr result = ctx.typed(IfNode::make(cond, pack(then_out), pack(else_out)));
  if (then_out.size() == 1) return {result};
  std::vector<Expr> outputs;
  for (size_t i = 0; i < then_out.size(); ++i)
    outputs.push_back(ctx.typed(TupleGetItemNode::make(result, int(i))));
  return outputs;
}

// ---------------------------------------------------------------- Loop

// A loop whose trip count and condition are known at import time in every iteration, and that
// runs at most kMaxUnrolledIterations times, is unrolled (the iteration number is then a
// constant in each copy, and the graph executor can run the model); any other becomes a While,
// which the VM runs as a loop.
constexpr int64_t kMaxUnrolledIterations = 64;

Expr int64_constant(ConvertContext& ctx, int64_t value) {
  Tensor t = Tensor::empty({}, DataType::int64());
  *t.data_as<int64_t>() = value;
  return ctx.constant(t);
}

// Stacks items along a new axis (negative counting from the end of the result).
Expr stack_along(ConvertContext& ctx, const std::vector<Expr>& items, int64_t axis) {
  std::vector<Expr> parts;
  for (const Expr& item : items) parts.push_back(ctx.op("expand_dims", {item}, {{"axis", axis}}));
  return ctx.op("concatenate", {ctx.typed(TupleNode::make(parts))}, {{"axis", axis}});
}

// The value of a condition known at import time, nullopt for one computed at run time.
std::optional<bool> known_condition(const Expr& cond) {
  const auto* c = as<ConstantNode>(cond);
  if (!c || c->data.numel() != 1) return std::nullopt;
  return c->data.get_as_double(0) != 0;
}

}  // namespace

std::vector<Expr> build_while(ConvertContext& ctx, const LoopBuilder& loop) {
  const size_t carried = loop.init.size() + 1;  // the count first
  std::vector<Expr> init = {int64_constant(ctx, 0)};
  init.insert(init.end(), loop.init.begin(), loop.init.end());
  std::vector<std::string> names = {"iteration"};
  names.insert(names.end(), loop.names.begin(), loop.names.end());
  for (size_t k = 0; k < loop.scans; ++k) names.push_back("scanned" + std::to_string(k));
  std::vector<Type> types;
  for (const Expr& e : init) types.push_back(ctx.typed(e)->checked_type);
  std::vector<Type> scan_types(loop.scans);  // one iteration's scan item

  for (int round = 0;; ++round) {
    if (round == 8) ctx.fail("the loop's carried types do not settle");
    std::vector<Var> vars;
    for (size_t i = 0; i < types.size(); ++i) vars.push_back(VarNode::make(names[i], types[i]));
    std::vector<Expr> step_vars(vars.begin(), vars.begin() + long(carried));
    auto [values, items] = loop.step(step_vars);
    std::vector<Expr> next = {ctx.op("add", {vars[0], int64_constant(ctx, 1)})};
    next.insert(next.end(), values.begin(), values.end());
    bool settled = types.size() == carried + loop.scans;
    for (size_t k = 0; k < loop.scans; ++k) {
      const auto* t = as<TensorTypeNode>(ctx.typed(items[k])->checked_type);
      if (!t || !t->shape) ctx.fail("scan output ", k, " has no known rank");
      scan_types[k] = items[k]->checked_type;
      if (!settled) {  // the first conversion: the accumulators' types are new
        std::vector<Dim> dims = {Dim::any()};
        dims.insert(dims.end(), t->shape->begin(), t->shape->end());
        types.push_back(TensorTypeNode::make(dims, t->dtype));
        continue;
      }
      Expr row = ctx.op("expand_dims", {items[k]}, {{"axis", int64_t(0)}});
      Expr grown = ctx.op("concatenate", {ctx.typed(TupleNode::make({vars[carried + k], row}))},
                          {{"axis", int64_t(0)}});
      if (!t->static_shape())
        grown =
            ctx.typed(IfNode::make(ctx.op("equal", {vars[0], int64_constant(ctx, 0)}), row, grown));
      next.push_back(grown);
    }
    for (size_t i = 0; settled && i < next.size(); ++i) {
      Type given = ctx.typed(next[i])->checked_type;
      Type joined = join_types(types[i], given);
      if (!joined)
        ctx.fail("loop value ", names[i], " has type ", type_to_string(types[i]),
                 " but the body gives it ", type_to_string(given));
      if (!types_equal(joined, types[i])) {
        types[i] = joined;
        settled = false;
      }
    }
    if (!settled) continue;

    for (size_t k = 0; k < loop.scans; ++k) {
      if (k < loop.scan_init.size()) {
        init.push_back(loop.scan_init[k]);
        continue;
      }
      const auto* t = as<TensorTypeNode>(scan_types[k]);
      std::vector<int64_t> shape = {0};
      for (const Dim& d : *t->shape) shape.push_back(d.as_int().value_or(0));
      init.push_back(ctx.constant(Tensor::zeros(shape, t->dtype)));
    }
    Expr cond = loop.cond(std::vector<Expr>(vars.begin(), vars.begin() + long(carried)));
    Expr node = ctx.typed(WhileNode::make(vars, init, cond, ctx.typed(TupleNode::make(next))));
    std::vector<Expr> results;
    for (size_t i = 1; i < vars.size(); ++i)
      results.push_back(ctx.typed(TupleGetItemNode::make(node, int(i))));
    return results;
  }
}

namespace {

// Loop as a While over (iteration, condition, v..., scan...): the loop runs while the iteration
// is below the trip count (when given) and the condition holds (when given).
std::vector<Expr> convert_loop_as_while(ConvertContext& ctx, size_t carried, size_t scans) {
  const onnx::GraphProto& body = ctx.attr_graph("body");
  LoopBuilder loop;
  loop.init = {ctx.has_input(1) ? as_scalar(ctx, ctx.input(1)) : bool_constant(ctx, true)};
  const auto* cond_type = as<TensorTypeNode>(ctx.typed(loop.init[0])->checked_type);
  if (!cond_type || !cond_type->dtype.is_bool()) ctx.fail("the condition must be a bool");
  loop.names = {"condition"};
  for (size_t i = 0; i < carried; ++i) {
    loop.init.push_back(ctx.input(i + 2));
    loop.names.push_back("carried" + std::to_string(i));
  }
  loop.scans = scans;
  loop.step = [&](const std::vector<Expr>& vars) {
    std::vector<Expr> outputs = ctx.graph().convert_subgraph(body, vars);
    // Without a condition input the body's condition output is ignored, as in a for loop.
    std::vector<Expr> values = {ctx.has_input(1) ? as_scalar(ctx, outputs[0]) : vars[1]};
    values.insert(values.end(), outputs.begin() + 1, outputs.begin() + 1 + long(carried));
    return std::make_pair(values,
                          std::vector<Expr>(outputs.begin() + 1 + long(carried), outputs.end()));
  };
  loop.cond = [&](const std::vector<Expr>& vars) {
    if (!ctx.has_input(0)) return vars[1];
    Expr below = ctx.op("less", {vars[0], as_scalar(ctx, ctx.input(0))});
    return ctx.has_input(1) ? ctx.op("logical_and", {below, vars[1]}) : below;
  };
  std::vector<Expr> results = build_while(ctx, loop);
  return std::vector<Expr>(results.begin() + 1, results.end());  // the condition dropped
}

// Loop(M, cond, v_initial...): the body maps (iteration, cond, v...) to
// (cond, v..., scan...); the results are the final v... and each scan output
// stacked over the iterations.
std::vector<Expr> convert_loop(ConvertContext& ctx) {
  const onnx::GraphProto& body = ctx.attr_graph("body");
  size_t carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
  if (body.input_size() != int(carried) + 2)
    ctx.fail("the body takes ", body.input_size(), " inputs but the loop carries ", carried,
             " values (the body needs 2 more: iteration number and condition)");
  if (body.output_size() < int(carried) + 1)
    ctx.fail("the body returns ", body.output_size(), " outputs, fewer than the condition and ",
             carried, " carried values");
  size_t scans = size_t(body.output_size()) - carried - 1;

  // Unrolled where the trip count and every condition are known and the count is small.
  std::optional<int64_t> trip_count;
  if (ctx.has_input(0)) {
    std::optional<Tensor> m = ctx.input_constant(0);
    if (!m || m->numel() != 1) return convert_loop_as_while(ctx, carried, scans);
    trip_count = int64_t(m->get_as_double(0));
  }
  std::optional<bool> cond = ctx.has_input(1) ? known_condition(ctx.input(1)) : true;
  if (!cond || !trip_count || *trip_count > kMaxUnrolledIterations)
    return convert_loop_as_while(ctx, carried, scans);
  std::vector<Expr> values;
  for (size_t i = 0; i < carried; ++i) values.push_back(ctx.input(i + 2));
  std::vector<std::vector<Expr>> scanned(scans);
  for (int64_t iteration = 0; *cond && iteration < *trip_count; ++iteration) {
    std::vector<Expr> inputs{int64_constant(ctx, iteration), bool_constant(ctx, *cond)};
    inputs.insert(inputs.end(), values.begin(), values.end());
    std::vector<Expr> outputs = ctx.graph().convert_subgraph(body, inputs);
    // Without a condition input the body's condition output is ignored, as in a for loop.
    if (ctx.has_input(1)) {
      cond = known_condition(outputs[0]);
      if (!cond) return convert_loop_as_while(ctx, carried, scans);  // it exits on data
    }
    for (size_t i = 0; i < carried; ++i) values[i] = outputs[1 + i];
    for (size_t k = 0; k < scans; ++k) scanned[k].push_back(outputs[1 + carried + k]);
  }
  std::vector<Expr> results = values;
  for (size_t k = 0; k < scans; ++k) {
    // No iteration ran: the While gives each scan output its empty (0, ...) shape.
    if (scanned[k].empty()) return convert_loop_as_while(ctx, carried, scans);
    results.push_back(stack_along(ctx, scanned[k], 0));
  }
  return results;
}

// ---------------------------------------------------------------- Scan

// Scan is unrolled, one copy of the body per element along the scan axis, where that length
// is static and at most kMaxUnrolledScan; otherwise it becomes a While.
constexpr int64_t kMaxUnrolledScan = 64;
struct ScanSpec {
  std::vector<int64_t> input_axes, input_reverse, output_axes, output_reverse;
};

bool is_reversed(const std::vector<int64_t>& directions, size_t i) {
  return i < directions.size() && directions[i] != 0;
}

// A scan output stacked along axis 0 (reversed if asked) moved to its output axis.
Expr place_scan_output(ConvertContext& ctx, Expr stacked, const ScanSpec& spec, size_t k) {
  if (is_reversed(spec.output_reverse, k))
    stacked = ctx.op("reverse", {stacked}, {{"axis", int64_t(0)}});
  int64_t axis = k < spec.output_axes.size() ? spec.output_axes[k] : 0;
  const auto* t = as<TensorTypeNode>(ctx.typed(stacked)->checked_type);
  const int64_t rank = t && t->shape ? int64_t(t->shape->size()) : 1;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) ctx.fail("scan output axis ", axis, " is out of range");
  if (axis == 0) return stacked;
  // Axis 0 moves to `axis`: (1, ..., axis, 0, axis + 1, ...).
  std::vector<int64_t> perm;
  for (int64_t d = 1; d < rank; ++d) perm.push_back(d);
  perm.insert(perm.begin() + axis, 0);
  return ctx.op("transpose", {stacked}, {{"axes", perm}});
}

// The scan as a While over (iteration, states..., scan outputs...) that runs `length` times
// (a run-time scalar): iteration i reads element i of each scan input (from the end where its
// direction is reversed).
std::vector<Expr> scan_as_while(ConvertContext& ctx, const std::vector<Expr>& states,
                                const std::vector<Expr>& scan_inputs,
                                const std::vector<int64_t>& axes, const Expr& length,
                                size_t num_outputs, const ScanSpec& spec) {
  const onnx::GraphProto& body = ctx.attr_graph("body");
  LoopBuilder loop;
  loop.init = states;
  for (size_t i = 0; i < states.size(); ++i) loop.names.push_back("state" + std::to_string(i));
  loop.scans = num_outputs;
  loop.step = [&](const std::vector<Expr>& vars) {
    std::vector<Expr> inputs(vars.begin() + 1, vars.end());
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      Expr index = vars[0];
      if (is_reversed(spec.input_reverse, j))
        index = ctx.op("subtract", {ctx.op("subtract", {length, int64_constant(ctx, 1)}), index});
      inputs.push_back(ctx.op("take", {scan_inputs[j], index},
                              {{"axis", axes[j]}, {"mode", std::string("fast")}}));
    }
    std::vector<Expr> outputs = ctx.graph().convert_subgraph(body, inputs);
    return std::make_pair(std::vector<Expr>(outputs.begin(), outputs.begin() + long(states.size())),
                          std::vector<Expr>(outputs.begin() + long(states.size()), outputs.end()));
  };
  loop.cond = [&](const std::vector<Expr>& vars) { return ctx.op("less", {vars[0], length}); };
  std::vector<Expr> results = build_while(ctx, loop);
  for (size_t k = 0; k < num_outputs; ++k)
    results[states.size() + k] = place_scan_output(ctx, results[states.size() + k], spec, k);
  return results;
}

// Runs the body over the scan inputs' elements; returns the final states and the scan outputs.
std::vector<Expr> unroll_scan(ConvertContext& ctx, std::vector<Expr> states,
                              const std::vector<Expr>& scan_inputs, const ScanSpec& spec) {
  const onnx::GraphProto& body = ctx.attr_graph("body");
  size_t num_states = states.size();
  if (body.input_size() != int(num_states + scan_inputs.size()) ||
      body.output_size() < int(num_states))
    ctx.fail("the body's ", body.input_size(), " inputs and ", body.output_size(),
             " outputs do not fit ", num_states, " state variables and ", scan_inputs.size(),
             " scan inputs");
  size_t num_outputs = size_t(body.output_size()) - num_states;
  std::optional<int64_t> length;
  bool symbolic = false;
  std::vector<int64_t> axes;
  for (size_t j = 0; j < scan_inputs.size(); ++j) {
    const auto* t = as<TensorTypeNode>(ctx.typed(scan_inputs[j])->checked_type);
    if (!t || !t->shape) ctx.fail("scan input ", j, " must have a known rank");
    int64_t rank = int64_t(t->shape->size());
    int64_t axis = j < spec.input_axes.size() ? spec.input_axes[j] : 0;
    if (axis < -rank || axis >= rank) ctx.fail("scan input axis ", axis, " is out of range");
    axes.push_back(axis < 0 ? axis + rank : axis);
    std::optional<int64_t> n = (*t->shape)[size_t(axes.back())].as_int();
    symbolic |= !n;
    if (n && length && *n != *length)
      ctx.fail("scan inputs differ in length: ", *length, " and ", *n);
    if (n) length = n;
  }
  if (scan_inputs.empty()) ctx.fail("has no scan inputs");
  if (symbolic) length.reset();
  // A length known only at run time (the first input's, which the others must share), more
  // elements than unrolling takes, or none (the While gives the outputs their empty shapes).
  if (!length || *length > kMaxUnrolledScan || (*length == 0 && num_outputs > 0)) {
    Expr run_length =
        length
            ? int64_constant(ctx, *length)
            : ctx.op("take", {ctx.op("shape_of", {scan_inputs[0]}), int64_constant(ctx, axes[0])},
                     {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
    return scan_as_while(ctx, states, scan_inputs, axes, run_length, num_outputs, spec);
  }
  std::vector<std::vector<Expr>> scanned(num_outputs);
  for (int64_t step = 0; step < *length; ++step) {
    std::vector<Expr> inputs = states;
    for (size_t j = 0; j < scan_inputs.size(); ++j) {
      bool reverse = j < spec.input_reverse.size() && spec.input_reverse[j] != 0;
      Expr index = int64_constant(ctx, reverse ? *length - 1 - step : step);
      inputs.push_back(ctx.op("take", {scan_inputs[j], index},
                              {{"axis", axes[j]}, {"mode", std::string("fast")}}));
    }
    std::vector<Expr> outputs = ctx.graph().convert_subgraph(body, inputs);
    for (size_t i = 0; i < num_states; ++i) states[i] = outputs[i];
    for (size_t k = 0; k < num_outputs; ++k) scanned[k].push_back(outputs[num_states + k]);
  }
  std::vector<Expr> results = states;
  for (size_t k = 0; k < num_outputs; ++k)
    results.push_back(place_scan_output(ctx, stack_along(ctx, scanned[k], 0), spec, k));
  return results;
}

// Scan-9 and later: state variables then scan inputs, no batch axis.
std::vector<Expr> convert_scan(ConvertContext& ctx) {
  int64_t num_scan = ctx.required_int("num_scan_inputs");
  if (num_scan < 1 || num_scan > int64_t(ctx.num_inputs()))
    ctx.fail("attribute 'num_scan_inputs' = ", num_scan, " does not fit ", ctx.num_inputs(),
             " inputs");
  size_t num_states = ctx.num_inputs() - size_t(num_scan);
  std::vector<Expr> states, scan_inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    (i < num_states ? states : scan_inputs).push_back(ctx.input(i));
  ScanSpec spec{ctx.attr_ints("scan_input_axes"), ctx.attr_ints("scan_input_directions"),
                ctx.attr_ints("scan_output_axes"), ctx.attr_ints("scan_output_directions")};
  return unroll_scan(ctx, states, scan_inputs, spec);
}

// Scan-8: an optional sequence_lens input first; every state and scan input
// has a batch axis 0 (the scan axis is 1), and the body sees one batch entry.
std::vector<Expr> convert_scan_v8(ConvertContext& ctx) {
  if (ctx.has_input(0)) ctx.fail("sequence_lens is not supported; only full-length scans are");
  int64_t num_scan = ctx.required_int("num_scan_inputs");
  if (num_scan < 1 || num_scan + 1 > int64_t(ctx.num_inputs()))
    ctx.fail("attribute 'num_scan_inputs' = ", num_scan, " does not fit ", ctx.num_inputs(),
             " inputs");
  size_t num_states = ctx.num_inputs() - 1 - size_t(num_scan);
  const auto* first = as<TensorTypeNode>(ctx.input_type(1));
  std::optional<int64_t> batch =
      first && first->shape && !first->shape->empty() ? (*first->shape)[0].as_int() : std::nullopt;
  if (!batch) ctx.fail("the batch size (dim 0 of input 1) must be static to unroll the scan");
  ScanSpec spec{{}, ctx.attr_ints("directions"), {}, {}};
  std::vector<std::vector<Expr>> per_batch;
  for (int64_t b = 0; b < *batch; ++b) {
    std::vector<Expr> states, scan_inputs;
    Expr index = int64_constant(ctx, b);
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
      Expr entry = ctx.op("take", {ctx.input(i), index},
                          {{"axis", int64_t(0)}, {"mode", std::string("fast")}});
      (i <= num_states ? states : scan_inputs).push_back(entry);
    }
    per_batch.push_back(unroll_scan(ctx, states, scan_inputs, spec));
  }
  std::vector<Expr> results;
  for (size_t k = 0; k < per_batch.at(0).size(); ++k) {
    std::vector<Expr> items;
    for (const auto& outputs : per_batch) items.push_back(outputs[k]);
    results.push_back(stack_along(ctx, items, 0));
  }
  return results;
}

}  // namespace

void register_control_converters(ConverterTable& table) {
  table.add("Constant", 1, convert_constant);
  table.add("Identity", 1, convert_identity);
  table.add("Optional", 15, convert_optional);
  table.add("OptionalHasElement", 15, convert_optional_has_element);
  table.add("OptionalGetElement", 15, convert_optional_get_element);
  table.add("If", 1, convert_if);
  table.add("Loop", 1, convert_loop);
  table.add("Scan", 8, convert_scan_v8);
  table.add("Scan", 9, convert_scan);
}

}  // namespace anvil::frontend::onnx_import
