// Reduce*, ArgMax and ArgMin. The axes are an attribute until ReduceSum-13
// and the other reductions' opset 18, an optional input from then on, when
// noop_with_empty_axes also appears. Axes known at import time (an attribute
// or a constant input) give the plain reduction ops; axes computed at run
// time (a graph input, as in the backend tests) give the dyn.* variants.
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

// The reduction's axes as the node gives them.
struct ReduceAxes {
  bool at_run_time = false;
  std::vector<int64_t> values;  // when known at import time; empty: none given
  Expr tensor;                  // when computed at run time
};

ReduceAxes axes_of(ConvertContext& ctx, bool axes_input) {
  ReduceAxes axes;
  if (!axes_input) {
    axes.values = ctx.attr_ints("axes");
    return axes;
  }
  if (!ctx.has_input(1)) return axes;
  if (ctx.input_constant(1)) {
    axes.values = ctx.constant_ints(1, "axes");
    return axes;
  }
  // A run-time tensor whose length is statically 0 is as good as no axes.
  const TensorTypeNode& type = ctx.input_tensor(1);
  if (type.shape->size() == 1 && (*type.shape)[0] == Dim(0)) return axes;
  axes.at_run_time = true;
  axes.tensor = ctx.input(1);
  return axes;
}

// What a reduction does when noop_with_empty_axes holds and no axes are
// given: the data unchanged, except ReduceSumSquare, which still squares.
using NoopFn = Expr (*)(ConvertContext&, const Expr&);

Expr pass_through(ConvertContext&, const Expr& data) { return data; }
Expr square(ConvertContext& ctx, const Expr& data) { return ctx.op("multiply", {data, data}); }

// The reduction `op` over the node's axes; keepdims defaults to 1 in ONNX.
Expr reduce(ConvertContext& ctx, const char* op, bool axes_input, NoopFn noop = pass_through) {
  const Expr& data = ctx.input(0);
  ReduceAxes axes = axes_of(ctx, axes_input);
  bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  bool noop_with_empty_axes = axes_input && ctx.attr_int("noop_with_empty_axes", 0) != 0;
  if (axes.at_run_time) {
    const TensorTypeNode& type = ctx.input_tensor(1);
    if (noop_with_empty_axes && !(type.shape->size() == 1 && (*type.shape)[0].is_int()))
      ctx.fail("noop_with_empty_axes needs the number of axes known at import time; input 1 ('",
               ctx.node().input(1), "') is ", type_to_string(ctx.input_type(1)));
    return ctx.op(std::string("dyn.") + op, {data, axes.tensor}, {{"keepdims", keepdims}});
  }
  if (axes.values.empty() && noop_with_empty_axes) return noop(ctx, data);
  // An empty axis list reduces every axis, as ONNX does by default.
  return ctx.op(op, {data}, {{"axis", axes.values}, {"keepdims", keepdims}});
}

// Registers op_type converting to `op`: axes from the attribute before
// `axes_input_since`, from the input from then on.
void add_reduction(ConverterTable& table, const std::string& op_type, const char* op,
                   int axes_input_since, NoopFn noop = pass_through) {
  table.add(op_type, 1, [op, noop](ConvertContext& ctx) -> std::vector<Expr> {
    return {reduce(ctx, op, false, noop)};
  });
  table.add(op_type, axes_input_since, [op, noop](ConvertContext& ctx) -> std::vector<Expr> {
    return {reduce(ctx, op, true, noop)};
  });
}

// ReduceLogSum: log(sum(x)), keeping the sum's axes handling.
void add_log_sum(ConverterTable& table) {
  auto convert = [](bool axes_input) {
    return [axes_input](ConvertContext& ctx) -> std::vector<Expr> {
      Expr sum = reduce(ctx, "sum", axes_input);
      if (sum.get() == ctx.input(0).get()) return {sum};  // noop_with_empty_axes
      return {ctx.op("log", {sum})};
    };
  };
  table.add("ReduceLogSum", 1, convert(false));
  table.add("ReduceLogSum", 18, convert(true));
}

// ArgMax and ArgMin: one axis (default 0), keepdims (default 1), and from
// opset 12 select_last_index, which older models simply never set.
ConverterFn arg_reduce(const char* op) {
  return [op](ConvertContext& ctx) -> std::vector<Expr> {
    return {ctx.op(op, {ctx.input(0)},
                   {{"axis", std::vector<int64_t>{ctx.attr_int("axis", 0)}},
                    {"keepdims", ctx.attr_int("keepdims", 1) != 0},
                    {"select_last_index", ctx.attr_int("select_last_index", 0) != 0}})};
  };
}

}  // namespace

void register_reduce_converters(ConverterTable& table) {
  add_reduction(table, "ReduceSum", "sum", 13);
  add_reduction(table, "ReduceMean", "mean", 18);
  add_reduction(table, "ReduceMax", "max", 18);
  add_reduction(table, "ReduceMin", "min", 18);
  add_reduction(table, "ReduceProd", "prod", 18);
  add_reduction(table, "ReduceL1", "l1_norm", 18);
  add_reduction(table, "ReduceL2", "l2_norm", 18);
  add_reduction(table, "ReduceLogSumExp", "logsumexp", 18);
  add_reduction(table, "ReduceSumSquare", "sum_square", 18, square);
  add_log_sum(table);
  table.add("ArgMax", 1, arg_reduce("argmax"));
  table.add("ArgMin", 1, arg_reduce("argmin"));
}

}  // namespace anvil::frontend::onnx_import
