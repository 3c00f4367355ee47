// make_packed_api: the entry chain of checks and bindings, their order and
// their messages, written out by hand from docs/kernel-abi.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/transform.h"

namespace anvil::tir {
namespace {

using transform::make_packed_api;

// The entry chain as lines: "let <var>" or "assert <message>", then "body".
std::vector<std::string> entry_lines(const Stmt& body, Stmt* rest = nullptr) {
  std::vector<std::string> lines;
  Stmt s = body;
  while (true) {
    if (const auto* let = as<LetStmtNode>(s)) {
      lines.push_back("let " + let->var->name);
      s = let->body;
    } else if (const auto* check = as<AssertStmtNode>(s)) {
      lines.push_back("assert " + check->message);
      s = check->body;
    } else {
      break;
    }
  }
  lines.push_back("body");
  if (rest) *rest = s;
  return lines;
}

// The value bound to the LetStmt of var in the chain.
PrimExpr let_value(const Stmt& body, const std::string& var) {
  for (Stmt s = body; s;) {
    if (const auto* let = as<LetStmtNode>(s)) {
      if (let->var->name == var) return let->value;
      s = let->body;
    } else if (const auto* check = as<AssertStmtNode>(s)) {
      s = check->body;
    } else {
      break;
    }
  }
  return nullptr;
}

// The condition of the assert with message.
PrimExpr assert_condition(const Stmt& body, const std::string& message) {
  for (Stmt s = body; s;) {
    if (const auto* let = as<LetStmtNode>(s)) {
      s = let->body;
    } else if (const auto* check = as<AssertStmtNode>(s)) {
      if (check->message == message) return check->condition;
      s = check->body;
    } else {
      break;
    }
  }
  return nullptr;
}

const CallNode* as_call(const PrimExpr& e, const std::string& op) {
  const auto* call = as<CallNode>(e);
  return call && call->op == op ? call : nullptr;
}

// C[i] = A[i * n + j] * alpha for a symbolic (m, n) A: the shape of a
// typical lowered kernel.
struct MatrixFunc {
  Var m = VarNode::make("m");
  Var n = VarNode::make("n");
  Var a_handle = VarNode::make("A", DataType::handle());
  Var c_handle = VarNode::make("C", DataType::handle());
  Var alpha = VarNode::make("alpha", DataType::float32());
  Buffer a = BufferNode::make("A", DataType::float32(), {m, n});
  Buffer c = BufferNode::make("C", DataType::float32(), {m});
  Stmt body;
  PrimFunc func;

  MatrixFunc() {
    Var i = VarNode::make("i");
    body = for_loop(i, 0, m, store(c, load(a, {i * n}) * alpha, {i}));
    ir::DictAttrs attrs = ir::DictAttrs{}.with("global_symbol", std::string("scale_rows"));
    func = PrimFuncNode::make({a_handle, c_handle, alpha}, {{a_handle, a}, {c_handle, c}}, body,
                              attrs);
  }
};

TEST(MakePackedApi, SignatureAndAttributes) {
  MatrixFunc f;
  PrimFunc packed = make_packed_api(f.func);
  ASSERT_EQ(packed->params.size(), 5u);
  const char* names[] = {"args", "arg_type_codes", "num_args", "ret_value", "ret_type_code"};
  for (int k = 0; k < 5; ++k) EXPECT_EQ(packed->params[k]->name, names[k]);
  EXPECT_EQ(packed->params[0]->dtype, DataType::handle());
  EXPECT_EQ(packed->params[1]->dtype, DataType::handle());
  EXPECT_EQ(packed->params[2]->dtype, DataType::int32());
  EXPECT_EQ(packed->params[3]->dtype, DataType::handle());
  EXPECT_EQ(packed->params[4]->dtype, DataType::handle());
  EXPECT_TRUE(packed->buffer_map.empty());
  EXPECT_EQ(packed->global_symbol(), "scale_rows");
  const ir::AttrValue* conv = packed->func_attrs.find("calling_conv");
  ASSERT_TRUE(conv);
  EXPECT_EQ(std::get<std::string>(*conv), "packed");
  // Idempotent: a packed function is left alone.
  EXPECT_EQ(make_packed_api(packed).get(), packed.get());
}

TEST(MakePackedApi, EntryChainOrderAndMessages) {
  MatrixFunc f;
  PrimFunc packed = make_packed_api(f.func);
  Stmt rest;
  std::vector<std::string> lines = entry_lines(packed->body, &rest);
  std::vector<std::string> expected = {
      "assert scale_rows: expected 3 arguments",
      // Phase 1: type codes and values, in parameter order.
      "assert scale_rows: argument 'A' must be a tensor",
      "let A",
      "assert scale_rows: argument 'C' must be a tensor",
      "let C",
      "assert scale_rows: argument 'alpha' must be a float",
      "let alpha",
      // Phase 2: headers and bare shape variables.
      "assert scale_rows: argument 'A' must not be null",
      "assert scale_rows: argument 'A' must have rank 2",
      "assert scale_rows: argument 'A' must be float32",
      "assert scale_rows: argument 'A' must be a CPU tensor",
      "let m",
      "let n",
      "assert scale_rows: argument 'C' must not be null",
      "assert scale_rows: argument 'C' must have rank 1",
      "assert scale_rows: argument 'C' must be float32",
      "assert scale_rows: argument 'C' must be a CPU tensor",
      // Phase 3: remaining extents, strides, data pointers.
      "assert scale_rows: argument 'A' must be compact (row-major strides)",
      "let A",
      "assert scale_rows: argument 'C' dim 0 must be m (= A dim 0)",
      "assert scale_rows: argument 'C' must be compact (row-major strides)",
      "let C",
      "body",
  };
  EXPECT_EQ(lines, expected);
  // The original body follows the chain untouched.
  EXPECT_EQ(rest.get(), f.body.get());
}

TEST(MakePackedApi, BindingsReadTheRightFields) {
  MatrixFunc f;
  PrimFunc packed = make_packed_api(f.func);
  const Var& args = packed->params[0];

  // alpha = float32(anvil.arg_float64(args, 2))
  PrimExpr alpha = let_value(packed->body, "alpha");
  ASSERT_TRUE(alpha);
  EXPECT_EQ(alpha.dtype(), DataType::float32());
  const auto* alpha_cast = as<CastNode>(alpha);
  ASSERT_TRUE(alpha_cast);
  const CallNode* read = as_call(alpha_cast->value, "anvil.arg_float64");
  ASSERT_TRUE(read);
  EXPECT_EQ(read->args[0].get(), args.get());
  EXPECT_TRUE(is_const_int(read->args[1], 2));

  // n = anvil.dltensor_shape(A, 1), with A the original handle parameter.
  PrimExpr n = let_value(packed->body, "n");
  const CallNode* shape = as_call(n, "anvil.dltensor_shape");
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->args[0].get(), f.a_handle.get());
  EXPECT_TRUE(is_const_int(shape->args[1], 1));

  // The data var of A (named "A", bound after A's checks) is data + byte_offset.
  bool found_data = false;
  for (Stmt s = packed->body;;) {
    if (const auto* let = as<LetStmtNode>(s)) {
      if (let->var.get() == f.a->data.get()) {
        const CallNode* add = as_call(let->value, "anvil.handle_add_bytes");
        ASSERT_TRUE(add);
        EXPECT_TRUE(as_call(add->args[0], "anvil.dltensor_data"));
        EXPECT_TRUE(as_call(add->args[1], "anvil.dltensor_byte_offset"));
        found_data = true;
      }
      s = let->body;
    } else if (const auto* check = as<AssertStmtNode>(s)) {
      s = check->body;
    } else {
      break;
    }
  }
  EXPECT_TRUE(found_data);

  // The type check of argument 1 reads arg_type_codes[1] and compares with kAnvilDLTensor.
  PrimExpr cond = assert_condition(packed->body, "scale_rows: argument 'C' must be a tensor");
  const auto* code_eq = as<EQNode>(cond);
  ASSERT_TRUE(code_eq);
  const CallNode* code = as_call(code_eq->a, "anvil.arg_type_code");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->args[0].get(), packed->params[1].get());
  EXPECT_TRUE(is_const_int(code->args[1], 1));
  EXPECT_TRUE(is_const_int(code_eq->b, 3));
}

TEST(MakePackedApi, StridesAreReadOnlyWhenPresent) {
  MatrixFunc f;
  PrimFunc packed = make_packed_api(f.func);
  PrimExpr cond = assert_condition(packed->body,
                                   "scale_rows: argument 'A' must be compact (row-major strides)");
  ASSERT_TRUE(cond);
  // Every read of anvil.dltensor_stride sits in the taken side of an if_then_else.
  int guarded = 0, total = 0;
  pre_order_visit(cond, [&](const PrimExpr& e) {
    if (const CallNode* ite = as_call(e, "if_then_else")) {
      EXPECT_TRUE(as_call(ite->args[0], "anvil.dltensor_has_strides"));
      if (as_call(ite->args[1], "anvil.dltensor_stride")) ++guarded;
    }
    if (as_call(e, "anvil.dltensor_stride")) ++total;
  });
  EXPECT_EQ(guarded, 2);
  EXPECT_EQ(total, 2);
}

TEST(MakePackedApi, ConstantShapesAndExpressionsAreChecked) {
  Var n = VarNode::make("n");
  Var x_handle = VarNode::make("X", DataType::handle());
  Var y_handle = VarNode::make("Y", DataType::handle());
  Var w_handle = VarNode::make("W", DataType::handle());
  Buffer x = BufferNode::make("X", DataType::int8(), {make_int(4), n});
  Buffer y = BufferNode::make("Y", DataType::int8(), {n * 2, make_int(1)});
  Buffer w = BufferNode::make("W", DataType::boolean(), {n});
  Stmt body = evaluate(0);
  PrimFunc func = PrimFuncNode::make({x_handle, y_handle, w_handle},
                                     {{x_handle, x}, {y_handle, y}, {w_handle, w}}, body);
  PrimFunc packed = make_packed_api(func);
  std::vector<std::string> lines = entry_lines(packed->body);
  auto has = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  // No global symbol: messages use "main".
  EXPECT_TRUE(has("assert main: expected 3 arguments"));
  EXPECT_TRUE(has("assert main: argument 'X' dim 0 must be 4"));
  EXPECT_TRUE(has("assert main: argument 'Y' dim 0 must be n * 2 (n = X dim 1)"));
  EXPECT_TRUE(has("assert main: argument 'Y' dim 1 must be 1"));
  EXPECT_TRUE(has("assert main: argument 'W' dim 0 must be n (= X dim 1)"));
  EXPECT_TRUE(has("assert main: argument 'W' must be bool"));
  EXPECT_TRUE(has("assert main: argument 'X' must be int8"));
  // n is bound exactly once, from X.
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "let n"), 1);

  // bool accepts DLPack's 8-bit bool (code 6) as well as uint1.
  PrimExpr cond = assert_condition(packed->body, "main: argument 'W' must be bool");
  bool accepts_dlpack_bool = false;
  pre_order_visit(cond, [&](const PrimExpr& e) {
    if (const auto* c = as<EQNode>(e); c && is_const_int(c->b, 6)) accepts_dlpack_bool = true;
  });
  EXPECT_TRUE(accepts_dlpack_bool);
}

TEST(MakePackedApi, ScalarParametersAreConverted) {
  Var k = VarNode::make("k", DataType::int32());
  Var flag = VarNode::make("flag", DataType::boolean());
  PrimFunc func = PrimFuncNode::make({k, flag}, {}, evaluate(0));
  PrimFunc packed = make_packed_api(func);
  std::vector<std::string> expected = {"assert main: expected 2 arguments",
                                       "assert main: argument 'k' must be an integer",
                                       "let k",
                                       "assert main: argument 'flag' must be an integer",
                                       "let flag",
                                       "body"};
  EXPECT_EQ(entry_lines(packed->body), expected);
  PrimExpr k_value = let_value(packed->body, "k");
  const auto* k_cast = as<CastNode>(k_value);
  ASSERT_TRUE(k_cast);
  EXPECT_EQ(k_cast->dtype, DataType::int32());
  EXPECT_TRUE(as_call(k_cast->value, "anvil.arg_int64"));
  EXPECT_TRUE(as<NENode>(let_value(packed->body, "flag")));
}

TEST(MakePackedApi, ExplicitStridesAndOffsets) {
  Var s0 = VarNode::make("s0");
  Var off = VarNode::make("off");
  Var a_handle = VarNode::make("A", DataType::handle());
  Var b_handle = VarNode::make("B", DataType::handle());
  Buffer a =
      BufferNode::make_full(VarNode::make("A", DataType::handle()), DataType::float32(),
                            {make_int(3), make_int(8)}, {s0, make_int(1)}, off, "A", "global", 64);
  Buffer b = BufferNode::make_full(VarNode::make("B", DataType::handle()), DataType::float32(),
                                   {make_int(8)}, {make_int(2)}, make_int(16), "B", "global", 64);
  PrimFunc func =
      PrimFuncNode::make({a_handle, b_handle}, {{a_handle, a}, {b_handle, b}}, evaluate(0));
  PrimFunc packed = make_packed_api(func);
  std::vector<std::string> lines = entry_lines(packed->body);
  auto has = [&](const std::string& line) {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  };
  EXPECT_TRUE(has("let s0"));
  EXPECT_TRUE(has("let off"));
  EXPECT_TRUE(has("assert main: argument 'A' stride 1 must be 1"));
  EXPECT_TRUE(has("assert main: argument 'A' byte offset must be a multiple of 4"));
  EXPECT_TRUE(has("assert main: argument 'B' stride 0 must be 2"));
  EXPECT_TRUE(has("assert main: argument 'B' element offset must be 16"));
  EXPECT_FALSE(has("assert main: argument 'A' must be compact (row-major strides)"));
  // With a declared offset the body adds it, so data is the raw pointer.
  EXPECT_TRUE(as_call(let_value(packed->body, "A"), "anvil.arg_handle"));
  bool raw_data = false;
  for (Stmt s = packed->body;;) {
    if (const auto* let = as<LetStmtNode>(s)) {
      if (let->var.get() == a->data.get())
        raw_data = as_call(let->value, "anvil.dltensor_data") != nullptr;
      s = let->body;
    } else if (const auto* check = as<AssertStmtNode>(s)) {
      s = check->body;
    } else {
      break;
    }
  }
  EXPECT_TRUE(raw_data);
}

TEST(MakePackedApi, UnsolvableShapeVariableIsAUserError) {
  Var n = VarNode::make("n");
  Var a_handle = VarNode::make("A", DataType::handle());
  Buffer a = BufferNode::make("A", DataType::float32(), {n * 2});
  PrimFunc func = PrimFuncNode::make({a_handle}, {{a_handle, a}}, evaluate(0),
                                     ir::DictAttrs{}.with("global_symbol", std::string("f")));
  try {
    make_packed_api(func);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "make_packed_api: f: variable 'n' in dim 0 of argument 'A' is not defined: it "
                 "must appear alone as some argument's dimension");
  }
}

TEST(MakePackedApi, PrintedGolden) {
  Var a_handle = VarNode::make("A", DataType::handle());
  Var n = VarNode::make("n");
  Buffer a = BufferNode::make("A", DataType::float32(), {n});
  Var j = VarNode::make("j");
  PrimFunc func = PrimFuncNode::make(
      {a_handle}, {{a_handle, a}}, for_loop(j, 0, n, store(a, load(a, {j}) * 2, {j})),
      ir::DictAttrs{}.with("global_symbol", std::string("double_it")));
  const char* expected =
      "@T.prim_func\n"
      "def double_it(args: T.handle, arg_type_codes: T.handle, num_args: T.int32, ret_value: "
      "T.handle, ret_type_code: T.handle):\n"
      "    T.func_attr({\"global_symbol\": \"double_it\", \"calling_conv\": \"packed\"})\n"
      "    assert num_args == T.int32(1), \"double_it: expected 1 argument\"\n"
      "    assert T.call_intrin(\"int32\", \"anvil.arg_type_code\", arg_type_codes, 0) == "
      "T.int32(3), \"double_it: argument 'A' must be a tensor\"\n"
      "    A: T.handle = T.call_intrin(\"handle\", \"anvil.arg_handle\", args, 0)\n"
      "    assert not T.call_intrin(\"bool\", \"anvil.is_null\", A), \"double_it: argument 'A' "
      "must not be null\"\n"
      "    assert T.call_intrin(\"int32\", \"anvil.dltensor_ndim\", A) == T.int32(1), "
      "\"double_it: argument 'A' must have rank 1\"\n"
      "    assert T.call_intrin(\"int32\", \"anvil.dltensor_dtype_code\", A) == T.int32(2) and "
      "T.call_intrin(\"int32\", \"anvil.dltensor_dtype_bits\", A) == T.int32(32) and "
      "T.call_intrin(\"int32\", \"anvil.dltensor_dtype_lanes\", A) == T.int32(1), \"double_it: "
      "argument 'A' must be float32\"\n"
      "    assert T.call_intrin(\"int32\", \"anvil.dltensor_device_type\", A) == T.int32(1), "
      "\"double_it: argument 'A' must be a CPU tensor\"\n"
      "    n: T.int64 = T.call_intrin(\"int64\", \"anvil.dltensor_shape\", A, 0)\n"
      "    assert T.if_then_else(T.call_intrin(\"bool\", \"anvil.dltensor_has_strides\", A), "
      "T.call_intrin(\"int64\", \"anvil.dltensor_stride\", A, 0), 1) == 1, \"double_it: argument "
      "'A' must be compact (row-major strides)\"\n"
      "    A_1: T.handle = T.call_intrin(\"handle\", \"anvil.handle_add_bytes\", "
      "T.call_intrin(\"handle\", \"anvil.dltensor_data\", A), T.call_intrin(\"int64\", "
      "\"anvil.dltensor_byte_offset\", A))\n"
      "    for j in range(n):\n"
      "        A_2 = T.Buffer((n,), \"float32\", data=A_1)\n"
      "        A_2[j] = A_2[j] * T.float32(2)\n";
  EXPECT_EQ(print(make_packed_api(func)), expected);
}

}  // namespace
}  // namespace anvil::tir
