// Computes of the elementwise unary ops (math functions, sign tests, logic), cast and clip,
// and the family's entry point. Each mirrors its reference kernel in src/reference/: floats
// keep NaN where the reference does, integers wrap around, bool is a one-byte uint1.
#include "anvil/ir/attrs/elemwise.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "anvil/topi/topi.h"
#include "topi/families.h"
#include "topi/topi_util.h"

namespace anvil::topi {

// Defined in elemwise_binary.cpp and elemwise_activation.cpp.
void register_binary_computes();
void register_activation_computes();

PrimExpr cast_value(DataType to, PrimExpr x) {
  DataType from = x.dtype();
  if (from.element_of() == to.element_of()) return x;
  // float8 and float4 values convert exactly to float32 first.
  if (from.is_minifloat() && !to.is_minifloat())
    return cast_value(to, tir::cast(DataType::float32().with_lanes(from.lanes), x));
  // Into int4/uint4/int2/uint2: saturated into int32, then wrapped to the low bits.
  if (to.is_sub_byte_int() && !from.is_sub_byte_int() && !from.is_int() && !from.is_uint())
    return tir::cast(to.with_lanes(from.lanes), cast_value(DataType::int32(), x));
  bool to_integer = to.is_int() || to.is_uint();
  if (!is_float_like(from) || !to_integer) return tir::cast(to.with_lanes(from.lanes), x);
  // A float outside the integer range has no defined conversion in LLVM; the reference
  // saturates. Both sides of a select are computed, but the unsafe conversion is never the
  // one chosen.
  int value_bits = to.is_int() ? to.bits - 1 : to.bits;
  double past_max = std::ldexp(1.0, value_bits);
  double lowest = double(lowest_value(to));
  DataType result = to.with_lanes(from.lanes);
  PrimExpr converted = tir::cast(result, x);
  PrimExpr saturated =
      tir::select(x <= tir::make_const(from, lowest), int_const(result, lowest_value(to)),
                  tir::select(x >= tir::make_const(from, past_max),
                              int_const(result, highest_value(to)), converted));
  return tir::select(is_nan(x), int_const(result, 0), saturated);
}

namespace {

using UnaryFn = std::function<PrimExpr(PrimExpr)>;

// Registers op as out = f(x) elementwise.
void register_unary(const std::string& op, UnaryFn f) {
  register_compute(op, [op, f](const ComputeArgs& args) {
    return std::vector<te::Tensor>{map_elements(args.inputs[0], op, f)};
  });
}

void register_float_math() {
  // Ops whose meaning is the intrinsic of the same name.
  for (const char* name : {"exp",  "log",   "sqrt",  "rsqrt", "sigmoid", "tanh", "erf",  "floor",
                           "ceil", "round", "trunc", "sin",   "cos",     "tan",  "asin", "acos",
                           "atan", "sinh",  "cosh",  "asinh", "acosh",   "atanh"}) {
    std::string intrinsic = name;
    register_unary(name,
                   [intrinsic](PrimExpr x) { return tir::call_intrin(x.dtype(), intrinsic, {x}); });
  }
  register_unary("reciprocal", [](PrimExpr x) { return tir::make_const(x.dtype(), 1.0) / x; });
  for (const char* name : {"isnan", "isinf", "isfinite"}) {
    std::string intrinsic = name;
    register_unary(name, [intrinsic](PrimExpr x) {
      return tir::call_intrin(DataType::boolean().with_lanes(x.dtype().lanes), intrinsic, {x});
    });
  }
}

void register_numeric_unary() {
  register_unary("abs", [](PrimExpr x) -> PrimExpr {
    if (is_float_like(x.dtype())) return tir::call_intrin(x.dtype(), "fabs", {x});
    if (x.dtype().is_uint()) return x;
    return tir::select(x < 0, 0 - x, x);
  });
  // 0 - x would turn -0.0 into +0.0.
  register_unary("negative", [](PrimExpr x) -> PrimExpr {
    if (is_float_like(x.dtype())) return tir::make_const(x.dtype(), -1.0) * x;
    return 0 - x;
  });
  // Floats keep NaN and the sign of zero, as the reference's sign_of does.
  register_unary("sign", [](PrimExpr x) -> PrimExpr {
    DataType t = x.dtype();
    PrimExpr one = tir::make_const(t, 1);
    if (t.is_uint()) return tir::select(x > 0, one, tir::make_const(t, 0));
    PrimExpr minus_one = tir::make_const(t, -1);
    PrimExpr otherwise = is_float_like(t) ? x : tir::make_const(t, 0);
    return tir::select(x > 0, one, tir::select(x < 0, minus_one, otherwise));
  });
}

void register_logic_unary() {
  register_unary("logical_not", [](PrimExpr x) { return tir::logical_not(x); });
  // The complement is -1 - x in two's complement (and max - x unsigned, the same bits).
  register_unary("bitwise_not", [](PrimExpr x) -> PrimExpr {
    DataType t = x.dtype();
    if (t.is_bool()) return tir::logical_not(x);
    return int_const(t, t.is_uint() ? highest_value(t) : -1) - x;
  });
  register_unary("copy", [](PrimExpr x) { return x; });
}

void register_cast_and_clip() {
  register_compute("cast", [](const ComputeArgs& args) {
    DataType to = args.out_dtype();
    return std::vector<te::Tensor>{
        map_elements(args.inputs[0], "cast", [to](PrimExpr x) { return cast_value(to, x); })};
  });
  // Bools are bytes of 0 or 1, so to or from a bool the bits are the value: a cast.
  register_compute("reinterpret", [](const ComputeArgs& args) {
    DataType to = args.out_dtype();
    bool through_value = to.is_bool() || args.inputs[0].dtype().is_bool();
    return std::vector<te::Tensor>{map_elements(args.inputs[0], "reinterpret", [=](PrimExpr x) {
      return through_value ? cast_value(to, x) : tir::call_intrin(to, "reinterpret", {x});
    })};
  });
  register_compute("clip", [](const ComputeArgs& args) {
    const auto& attrs = args.attrs_as<ir::ClipAttrs>();
    DataType t = args.inputs[0].dtype();
    if (is_float_like(t)) {
      // Comparisons with NaN are false, so NaN passes through as in the reference.
      PrimExpr lo = tir::make_const(t, attrs.a_min), hi = tir::make_const(t, attrs.a_max);
      return std::vector<te::Tensor>{map_elements(args.inputs[0], "clip", [lo, hi](PrimExpr x) {
        PrimExpr above = tir::select(x < lo, lo, x);
        return tir::select(above > hi, hi, above);
      })};
    }
    // An integer v satisfies a_min <= v exactly when ceil(a_min) <= v; bounds beyond the
    // dtype's range clamp to it.
    auto bound = [t](double v) -> int64_t {
      double lowest = double(lowest_value(t));
      double past_max = std::ldexp(1.0, t.is_int() ? t.bits - 1 : t.bits);
      if (v <= lowest) return lowest_value(t);
      if (v >= past_max) return highest_value(t);
      return t.is_uint() && t.bits == 64 ? int64_t(uint64_t(v)) : int64_t(v);
    };
    PrimExpr lo = int_const(t, bound(std::ceil(attrs.a_min)));
    PrimExpr hi = int_const(t, bound(std::floor(attrs.a_max)));
    return std::vector<te::Tensor>{map_elements(
        args.inputs[0], "clip", [lo, hi](PrimExpr x) { return tir::min(tir::max(x, lo), hi); })};
  });
}

}  // namespace

void register_elemwise_computes() {
  register_float_math();
  register_numeric_unary();
  register_logic_unary();
  register_cast_and_clip();
  register_binary_computes();
  register_activation_computes();
}

}  // namespace anvil::topi
