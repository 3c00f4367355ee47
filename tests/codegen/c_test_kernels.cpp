#include "codegen/c_test_kernels.h"

#include <algorithm>

#include "anvil/ir/attrs.h"
#include "anvil/te/te.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"

namespace anvil::testing {

using namespace tir;

namespace {

Var int_var(const std::string& name) { return VarNode::make(name, DataType::int64()); }
Var float_var(const std::string& name) { return VarNode::make(name, DataType::float32()); }
Buffer flat(const std::string& name, DataType dtype, PrimExpr elements) {
  return BufferNode::make(name, dtype, {std::move(elements)});
}
PrimExpr intrin(DataType dtype, const std::string& op, std::vector<PrimExpr> args) {
  return call_intrin(dtype, op, std::move(args));
}
Stmt let_stmt(Var var, PrimExpr value, Stmt body) {
  return LetStmtNode::make(std::move(var), std::move(value), std::move(body));
}
Stmt assert_stmt(PrimExpr condition, std::string message, Stmt body) {
  return AssertStmtNode::make(std::move(condition), std::move(message), std::move(body));
}
Stmt loop(Var var, PrimExpr extent, Stmt body, ForKind kind = ForKind::Serial) {
  return for_loop(std::move(var), make_int(0), std::move(extent), std::move(body), kind);
}

}  // namespace

KernelParam tensor_param(Buffer flat_buffer, std::vector<PrimExpr> tensor_shape) {
  return KernelParam{std::move(flat_buffer), std::move(tensor_shape), nullptr};
}

KernelParam scalar_param(Var var) { return KernelParam{nullptr, {}, std::move(var)}; }

PrimFunc make_packed_kernel(const std::string& name, const std::vector<KernelParam>& params,
                            Stmt body) {
  Var args = VarNode::make("args", DataType::handle());
  Var type_codes = VarNode::make("arg_type_codes", DataType::handle());
  Var num_args = VarNode::make("num_args", DataType::int32());
  Var ret_value = VarNode::make("ret_value", DataType::handle());
  Var ret_type_code = VarNode::make("ret_type_code", DataType::handle());
  // A shape variable is bound by its first occurrence and checked against the later ones.
  std::vector<std::vector<bool>> binds(params.size());
  std::vector<const VarNode*> seen;
  for (size_t k = 0; k < params.size(); ++k) {
    for (const PrimExpr& dim : params[k].tensor_shape) {
      const auto* v = as<VarNode>(dim);
      bool first = v && std::find(seen.begin(), seen.end(), v) == seen.end();
      if (first) seen.push_back(v);
      binds[k].push_back(first);
    }
  }
  // Wrap from the innermost binding outwards: the last argument's bindings sit closest to body.
  Stmt s = std::move(body);
  for (size_t k = params.size(); k-- > 0;) {
    const KernelParam& p = params[k];
    PrimExpr index = make_int(int64_t(k), DataType::int32());
    PrimExpr code = intrin(DataType::int32(), "anvil.arg_type_code", {type_codes, index});
    if (p.scalar) {
      bool is_float = p.scalar->dtype.is_float();
      PrimExpr raw = is_float ? intrin(DataType::float64(), "anvil.arg_float64", {args, index})
                              : intrin(DataType::int64(), "anvil.arg_int64", {args, index});
      s = let_stmt(p.scalar, cast(p.scalar->dtype, raw), s);
      s = assert_stmt(eq(code, make_int(is_float ? 1 : 0, DataType::int32())),
                      name + ": argument " + std::to_string(k) + " must be a scalar", s);
      continue;
    }
    Var handle = VarNode::make(p.buffer->name + "_handle", DataType::handle());
    s = let_stmt(p.buffer->data, intrin(DataType::handle(), "anvil.dltensor_data", {handle}), s);
    int rank = int(p.tensor_shape.size());
    for (int d = rank; d-- > 0;) {
      PrimExpr extent = intrin(DataType::int64(), "anvil.dltensor_shape", {handle, make_int(d)});
      if (binds[k][d]) {
        s = let_stmt(Var(as<VarNode>(p.tensor_shape[d])), extent, s);
      } else if (const auto* v = as<VarNode>(p.tensor_shape[d])) {
        s = assert_stmt(eq(extent, p.tensor_shape[d]),
                        name + ": " + p.buffer->name + ".shape[" + std::to_string(d) +
                            "] must equal " + v->name,
                        s);
      } else {
        s = assert_stmt(eq(extent, p.tensor_shape[d]),
                        name + ": " + p.buffer->name + ".shape[" + std::to_string(d) +
                            "] must be " + std::to_string(*as_const_int(p.tensor_shape[d])),
                        s);
      }
    }
    s = assert_stmt(eq(intrin(DataType::int32(), "anvil.dltensor_ndim", {handle}),
                       make_int(rank, DataType::int32())),
                    name + ": " + p.buffer->name + " must have rank " + std::to_string(rank), s);
    s = assert_stmt(eq(code, make_int(3, DataType::int32())),
                    name + ": argument " + std::to_string(k) + " must be a tensor", s);
    s = let_stmt(handle, intrin(DataType::handle(), "anvil.arg_handle", {args, index}), s);
  }
  s = assert_stmt(eq(num_args, make_int(int64_t(params.size()), DataType::int32())),
                  name + ": expected " + std::to_string(params.size()) + " arguments", s);
  ir::DictAttrs attrs =
      ir::DictAttrs{}.with("global_symbol", name).with("calling_conv", std::string("packed"));
  return PrimFuncNode::make({args, type_codes, num_args, ret_value, ret_type_code}, {}, s, attrs);
}

PrimFunc add_scalar_kernel() {
  Var n = int_var("n"), i = int_var("i"), s = float_var("s");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n);
  Stmt body = loop(i, n, store(b, load(a, {i}) + s, {i}));
  return make_packed_kernel("add_scalar",
                            {tensor_param(a, {n}), tensor_param(b, {n}), scalar_param(s)}, body);
}

PrimFunc row_sum_kernel() {
  Var m = int_var("m"), n = int_var("n"), i = int_var("i"), j = int_var("j");
  Buffer a = flat("A", DataType::float32(), m * n), b = flat("B", DataType::float32(), m);
  Stmt body = loop(i, m,
                   seq_stmt({store(b, make_const(DataType::float32(), 0), {i}),
                             loop(j, n, store(b, load(b, {i}) + load(a, {i * n + j}), {i}))}));
  return make_packed_kernel("row_sum", {tensor_param(a, {m, n}), tensor_param(b, {m})}, body);
}

PrimFunc div_mod_kernel() {
  Var n = int_var("n"), i = int_var("i"), d = int_var("d");
  Buffer a = flat("A", DataType::int64(), n);
  std::vector<Buffer> out;
  for (const char* name : {"FD", "FM", "TD", "TM"}) out.push_back(flat(name, DataType::int64(), n));
  Buffer fd32 = flat("FD32", DataType::int32(), n), fm32 = flat("FM32", DataType::int32(), n);
  PrimExpr x = load(a, {i});
  PrimExpr x32 = cast(DataType::int32(), x), d32 = cast(DataType::int32(), d);
  Stmt body =
      loop(i, n,
           seq_stmt({store(out[0], floordiv(x, d), {i}), store(out[1], floormod(x, d), {i}),
                     store(out[2], truncdiv(x, d), {i}), store(out[3], truncmod(x, d), {i}),
                     store(fd32, floordiv(x32, d32), {i}), store(fm32, floormod(x32, d32), {i})}));
  std::vector<KernelParam> params = {tensor_param(a, {n})};
  for (const Buffer& b : out) params.push_back(tensor_param(b, {n}));
  params.push_back(tensor_param(fd32, {n}));
  params.push_back(tensor_param(fm32, {n}));
  params.push_back(scalar_param(d));
  return make_packed_kernel("div_mod", params, body);
}

PrimFunc vector_affine_kernel() {
  Var n = int_var("n"), i = int_var("i");
  Var doubled = VarNode::make("doubled", DataType::float32().with_lanes(4));
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n);
  PrimExpr lanes = ramp(i * 4, make_int(1), 4);
  PrimExpr value = let(doubled, load(a, {lanes}) * broadcast(make_const(DataType::float32(), 2), 4),
                       doubled + cast(DataType::float32().with_lanes(4), lanes));
  Stmt body =
      assert_stmt(eq(floormod(n, 4), make_int(0)), "vector_affine: n must be a multiple of 4",
                  loop(i, floordiv(n, 4), store(b, value, {lanes})));
  return make_packed_kernel("vector_affine", {tensor_param(a, {n}), tensor_param(b, {n})}, body);
}

PrimFunc shift_lanes_kernel() {
  Buffer a = flat("A", DataType::int32(), make_int(8));
  PrimExpr source = load(a, {ramp(make_int(0), make_int(1), 4)});
  Stmt body = store(a, source + broadcast(make_int(100, DataType::int32()), 4),
                    {ramp(make_int(1), make_int(1), 4)});
  return make_packed_kernel("shift_lanes", {tensor_param(a, {make_int(8)})}, body);
}

PrimFunc parallel_scale_kernel() {
  Var m = int_var("m"), n = int_var("n"), i = int_var("i"), j = int_var("j"), k = float_var("k");
  Buffer a = flat("A", DataType::float32(), m * n), b = flat("B", DataType::float32(), m * n);
  Stmt row =
      loop(j, n, store(b, load(a, {i * n + j}) * k + cast(DataType::float32(), i), {i * n + j}));
  Stmt body = loop(i, m, row, ForKind::Parallel);
  return make_packed_kernel(
      "parallel_scale", {tensor_param(a, {m, n}), tensor_param(b, {m, n}), scalar_param(k)}, body);
}

PrimFunc parallel_sqrt_kernel() {
  Var n = int_var("n"), i = int_var("i");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n);
  Stmt checked = assert_stmt(load(a, {i}) >= make_const(DataType::float32(), 0),
                             "parallel_sqrt: negative element",
                             store(b, intrin(DataType::float32(), "sqrt", {load(a, {i})}), {i}));
  return make_packed_kernel("parallel_sqrt", {tensor_param(a, {n}), tensor_param(b, {n})},
                            loop(i, n, checked, ForKind::Parallel));
}

PrimFunc row_softmax_kernel() {
  Var m = int_var("m"), n = int_var("n"), i = int_var("i"), j = int_var("j");
  Buffer a = flat("A", DataType::float32(), m * n), b = flat("B", DataType::float32(), m * n);
  Buffer row = BufferNode::make("row", DataType::float32(), {n}, "local");
  Buffer total = BufferNode::make("total", DataType::float32(), {make_int(1)}, "local");
  PrimExpr zero = make_int(0);
  Stmt fill =
      loop(j, n,
           seq_stmt({store(row, intrin(DataType::float32(), "exp", {load(a, {i * n + j})}), {j}),
                     store(total, load(total, {zero}) + load(row, {j}), {zero})}));
  Stmt normalize = loop(j, n, store(b, load(row, {j}) / load(total, {zero}), {i * n + j}));
  Stmt per_row =
      seq_stmt({store(total, make_const(DataType::float32(), 0), {zero}), fill, normalize});
  Stmt body = loop(i, m, AllocateNode::make(row, AllocateNode::make(total, per_row)));
  return make_packed_kernel("row_softmax", {tensor_param(a, {m, n}), tensor_param(b, {m, n})},
                            body);
}

PrimFunc half_cast_kernel() {
  Var n = int_var("n"), i = int_var("i"), j = int_var("j");
  Buffer a = flat("A", DataType::float32(), n), h = flat("H", DataType::float16(), n);
  Buffer s = flat("S", DataType::float32(), n), bf = flat("BF", DataType::bfloat16(), n);
  Stmt body =
      seq_stmt({loop(i, n,
                     seq_stmt({store(h, cast(DataType::float16(), load(a, {i})), {i}),
                               store(bf, cast(DataType::bfloat16(), load(a, {i})), {i})})),
                loop(j, n, store(s, cast(DataType::float32(), load(h, {j}) * load(h, {j})), {j}))});
  return make_packed_kernel(
      "half_cast",
      {tensor_param(a, {n}), tensor_param(h, {n}), tensor_param(s, {n}), tensor_param(bf, {n})},
      body);
}

PrimFunc checked_scale_kernel() {
  Var n = int_var("n"), i = int_var("i"), limit = int_var("limit");
  Buffer a = flat("A", DataType::float32(), n), b = flat("B", DataType::float32(), n);
  Buffer scratch = BufferNode::make("scratch", DataType::float32(), {n}, "global");
  Stmt compute = seq_stmt({loop(i, n, store(scratch, load(a, {i}) * 3, {i})),
                           loop(i, n, store(b, load(scratch, {i}), {i}))});
  Stmt body = AllocateNode::make(
      scratch, assert_stmt(n <= limit, "checked_scale: n exceeds the limit", compute));
  return make_packed_kernel(
      "checked_scale", {tensor_param(a, {n}), tensor_param(b, {n}), scalar_param(limit)}, body);
}

PrimFunc math_kernel() {
  Var n = int_var("n"), i = int_var("i");
  DataType f32 = DataType::float32();
  Buffer a = flat("A", f32, n);
  std::vector<Buffer> out;
  for (const char* name : {"E", "T", "S", "R", "F"}) out.push_back(flat(name, f32, n));
  PrimExpr x = load(a, {i});
  Stmt body = loop(i, n,
                   seq_stmt({store(out[0], intrin(f32, "exp", {x}), {i}),
                             store(out[1], intrin(f32, "tanh", {x}), {i}),
                             store(out[2], intrin(f32, "sigmoid", {x}), {i}),
                             store(out[3], intrin(f32, "round", {x}), {i}),
                             store(out[4], intrin(f32, "fma", {x, x, make_const(f32, 1)}), {i})}));
  std::vector<KernelParam> params = {tensor_param(a, {n})};
  for (const Buffer& b : out) params.push_back(tensor_param(b, {n}));
  return make_packed_kernel("math", params, body);
}

PrimFunc select_mix_kernel() {
  Var n = int_var("n"), i = int_var("i");
  DataType f32 = DataType::float32();
  Buffer a = flat("A", f32, n), b = flat("B", f32, n);
  Buffer c = flat("C", DataType::boolean(), n), d = flat("D", DataType::int8(), n);
  Var next = VarNode::make("next", f32), x = VarNode::make("x", f32);
  // The load of A[i + 1] sits in a let under the guarded branch: it must not run for the last i.
  PrimExpr guarded = intrin(f32, "if_then_else",
                            {i + 1 < n, let(next, load(a, {i + 1}), next * 1), make_const(f32, 0)});
  PrimExpr mixed = let(x, load(a, {i}), max(x, make_const(f32, 0)) * min(x, make_const(f32, 1)));
  Stmt body = loop(
      i, n,
      seq_stmt({store(b, guarded + mixed, {i}), store(c, load(a, {i}) > make_const(f32, 0), {i}),
                store(d, cast(DataType::int8(), i) * make_int(100, DataType::int8()), {i})}));
  return make_packed_kernel(
      "select_mix",
      {tensor_param(a, {n}), tensor_param(b, {n}), tensor_param(c, {n}), tensor_param(d, {n})},
      body);
}

PrimFunc nested_parallel_kernel() {
  DataType f32 = DataType::float32(), f32x4 = DataType::float32().with_lanes(4);
  Var m = int_var("m"), i = int_var("i"), j = int_var("j"), limit = float_var("limit");
  Var offsets = VarNode::make("offsets", f32x4);
  Buffer a = flat("A", f32, m * 8), b = flat("B", f32, m * 8);
  Buffer staging = BufferNode::make("staging", f32, {m}, "global");
  PrimExpr lanes = ramp(i * 8 + j * 4, make_int(1), 4);
  PrimExpr first = i * 8 + j * 4;
  Stmt half = AllocateNode::make(
      staging,
      seq_stmt(
          {store(staging, load(a, {lanes}) + offsets, {ramp(make_int(0), make_int(1), 4)}),
           assert_stmt(load(a, {first}) <= limit, "nested_parallel: element above limit",
                       store(b, load(staging, {ramp(make_int(0), make_int(1), 4)}), {lanes}))}));
  Stmt body =
      let_stmt(offsets, cast(f32x4, ramp(make_int(0), make_int(1), 4)),
               loop(i, m, loop(j, make_int(2), half, ForKind::Parallel), ForKind::Parallel));
  return make_packed_kernel(
      "nested_parallel",
      {tensor_param(a, {m, make_int(8)}), tensor_param(b, {m, make_int(8)}), scalar_param(limit)},
      body);
}

std::vector<PrimFunc> all_test_kernels() {
  return {add_scalar_kernel(),     row_sum_kernel(),     div_mod_kernel(),
          vector_affine_kernel(),  shift_lanes_kernel(), parallel_scale_kernel(),
          parallel_sqrt_kernel(),  row_softmax_kernel(), half_cast_kernel(),
          checked_scale_kernel(),  math_kernel(),        select_mix_kernel(),
          nested_parallel_kernel()};
}

PrimFunc lowered_dense_relu_kernel() {
  DataType f32 = DataType::float32();
  te::Tensor a = te::placeholder({33, 17}, f32, "A");
  te::Tensor b = te::placeholder({17, 24}, f32, "B");
  te::Tensor bias = te::placeholder({24}, f32, "bias");
  IterVar k = te::reduce_axis(make_int(17), "k");
  te::Tensor d = te::compute(
      {33, 24},
      [&](const std::vector<Var>& i) { return sum(a(i[0], k.var) * b(k.var, i[1]), {k}); }, "D");
  te::Tensor e = te::compute(
      {33, 24},
      [&](const std::vector<Var>& i) {
        return max(d(i[0], i[1]) + bias(i[1]), make_const(f32, 0));
      },
      "E");
  Schedule sch(te::create_prim_func({a, b, bias, e}, "dense_relu"));
  BlockRV dense = sch.get_block("D");
  std::vector<LoopRV> loops = sch.get_loops(dense);  // i, j, k
  std::vector<LoopRV> j_parts = sch.split(loops[1], {make_int(3), make_int(8)});
  sch.reorder({loops[0], j_parts[0], loops[2], j_parts[1]});
  sch.parallel(loops[0]);
  sch.vectorize(j_parts[1]);
  return transform::lower(sch.func());
}

PrimFunc lowered_scale_shift_kernel() {
  DataType f32 = DataType::float32();
  Var n = VarNode::make("n");
  te::Tensor x = te::placeholder({n}, f32, "X");
  te::Tensor y = te::compute(
      {n}, [&](const std::vector<Var>& i) { return x(i[0]) * make_const(f32, 0.5) - 1; }, "Y");
  Schedule sch(te::create_prim_func({x, y}, "scale_shift"));
  std::vector<LoopRV> loops = sch.get_loops(sch.get_block("Y"));
  std::vector<LoopRV> parts = sch.split(loops[0], {nullptr, make_int(4)});
  sch.unroll(parts[1]);
  return transform::lower(sch.func());
}

}  // namespace anvil::testing
