#include "anvil/tir/intrinsics.h"

namespace anvil::tir {

const std::vector<IntrinsicInfo>& all_intrinsics() {
  using C = IntrinsicClass;
  static const std::vector<IntrinsicInfo> table = {
      // One float argument.
      {"exp", 1, C::FloatMath, true},
      {"exp2", 1, C::FloatMath, true},
      {"log", 1, C::FloatMath, true},
      {"log2", 1, C::FloatMath, true},
      {"log10", 1, C::FloatMath, true},
      {"sqrt", 1, C::FloatMath, true},
      {"rsqrt", 1, C::FloatMath, true},
      {"tanh", 1, C::FloatMath, true},
      {"sigmoid", 1, C::FloatMath, true},
      {"erf", 1, C::FloatMath, true},
      {"sin", 1, C::FloatMath, true},
      {"cos", 1, C::FloatMath, true},
      {"tan", 1, C::FloatMath, true},
      {"asin", 1, C::FloatMath, true},
      {"acos", 1, C::FloatMath, true},
      {"atan", 1, C::FloatMath, true},
      {"sinh", 1, C::FloatMath, true},
      {"cosh", 1, C::FloatMath, true},
      {"asinh", 1, C::FloatMath, true},
      {"acosh", 1, C::FloatMath, true},
      {"atanh", 1, C::FloatMath, true},
      {"fabs", 1, C::FloatMath, true},
      {"floor", 1, C::FloatMath, true},
      {"ceil", 1, C::FloatMath, true},
      {"round", 1, C::FloatMath, true},  // to nearest, ties to even
      {"trunc", 1, C::FloatMath, true},
      // Two or three float arguments.
      {"pow", 2, C::FloatMath, true},
      {"atan2", 2, C::FloatMath, true},
      {"fmod", 2, C::FloatMath, true},
      {"copysign", 2, C::FloatMath, true},
      {"fma", 3, C::FloatMath, true},
      // mul_unfused(a, b): a * b rounded to the type on its own, never contracted with an add
      // into a fused multiply-add (requantization that must round as integer runtimes do).
      {"mul_unfused", 2, C::FloatMath, true},
      // Tests on floats.
      {"isnan", 1, C::FloatTest, true},
      {"isinf", 1, C::FloatTest, true},
      {"isfinite", 1, C::FloatTest, true},
      // address_of(buffer[i, ...]): a handle to that element (for micro-kernel calls).
      {"address_of", 1, C::Builtin, true},
      // likely(cond): cond, with a hint that it is usually true.
      {"likely", 1, C::Builtin, true},
      // reinterpret(x): x's bits as the call's dtype (same total width).
      {"reinterpret", 1, C::Builtin, true},
      // round_to_int32(x: a float vector): x rounded to the nearest integer, ties to even, as
      // int32; x must lie within int32's range (a requantization clamps it first). One
      // vcvtps2dq {rn-sae} for 16 float32 lanes on AVX-512, a round and a conversion elsewhere.
      {"round_to_int32", 1, C::Builtin, true},
      // if_then_else(cond, a, b): like select, but evaluates only the side taken.
      {"if_then_else", 3, C::Builtin, true},
      // u8i8_dot4_accumulate(acc: int32xN, a: uint8x4, b: int8x4N): lane l of the result is
      // acc[l] + sum over k < 4 of a[k] * b[4l + k], the products exact (u8 x s8) and the sum
      // wrapping in int32. One AVX-512 VNNI vpdpbusd for N = 16 (of a broadcast), plain
      // widening arithmetic where the target has no VNNI; never saturating.
      {"u8i8_dot4_accumulate", 3, C::Builtin, true},
      // bf16_dot2_accumulate(acc: float32xN, a: bfloat16x2, b: bfloat16x2N): lane l of the
      // result is acc[l] + a[1] * b[2l + 1] + a[0] * b[2l], the products exact in float32 and
      // each addition rounded once (in that order). One AVX-512 BF16 vdpbf16ps for N = 16 (of
      // a broadcast pair), two fused multiply-adds on the widened values elsewhere; the
      // instruction flushes denormals, the fallback keeps them.
      {"bf16_dot2_accumulate", 3, C::Builtin, true},
      // AMX tiles (x86 amx-tile): eight tile registers, each `rows` rows of `colsb` bytes (at
      // most 16 x 64). The tile number, rows and colsb are constants; the code generator
      // configures each function's tiles (ldtilecfg) from the shapes its calls give, and asks
      // the runtime for the tile state (AnvilBackendRequestAMX) on entry. The stride is in bytes.
      //   amx_tile_load(tile, rows, colsb, address_of(...), stride): the rows at address,
      //     address + stride, ...
      //   amx_tile_store(tile, rows, colsb, address_of(...), stride)
      //   amx_tile_zero(tile, rows, colsb)
      //   amx_dpbf16ps(c, a, b): c[m][n] += sum over k of a[m][2k] * b[k][2n] + a[m][2k + 1] *
      //     b[k][2n + 1], a and b bfloat16 pairs and c float32 (tdpbf16ps; b's rows hold pairs
      //     of its columns, the layout of the packed bf16 weights).
      //   amx_dpbusd(c, a, b): the same over quads, a uint8, b int8 and c int32 (tdpbusd).
      {"amx_tile_load", 5, C::Builtin, false},
      {"amx_tile_store", 5, C::Builtin, false},
      {"amx_tile_zero", 3, C::Builtin, false},
      {"amx_dpbf16ps", 3, C::Builtin, false},
      {"amx_dpbusd", 3, C::Builtin, false},
      // prefetch(address_of(...)): a read hint; no effect on results.
      {"prefetch", 1, C::Builtin, false},
      // The packed calling convention (tir::transform::make_packed_api), read by both code
      // generators: arguments of an AnvilValue array and fields of a DLTensor.
      {"anvil.arg_int64", 2, C::Builtin, true},             // (args, i) -> int64
      {"anvil.arg_float64", 2, C::Builtin, true},           // (args, i) -> float64
      {"anvil.arg_handle", 2, C::Builtin, true},            // (args, i) -> handle
      {"anvil.arg_type_code", 2, C::Builtin, true},         // (type_codes, i) -> int32
      {"anvil.dltensor_data", 1, C::Builtin, true},         // (t) -> handle
      {"anvil.dltensor_byte_offset", 1, C::Builtin, true},  // (t) -> int64
      {"anvil.dltensor_ndim", 1, C::Builtin, true},         // (t) -> int32
      {"anvil.dltensor_shape", 2, C::Builtin, true},        // (t, d) -> int64
      {"anvil.dltensor_has_strides", 1, C::Builtin, true},  // (t) -> bool
      {"anvil.dltensor_stride", 2, C::Builtin, true},       // (t, d) -> int64
      {"anvil.dltensor_dtype_code", 1, C::Builtin, true},   // (t) -> int32
      {"anvil.dltensor_dtype_bits", 1, C::Builtin, true},   // (t) -> int32
      {"anvil.dltensor_dtype_lanes", 1, C::Builtin, true},  // (t) -> int32
      {"anvil.dltensor_device_type", 1, C::Builtin, true},  // (t) -> int32
      {"anvil.handle_add_bytes", 2, C::Builtin, true},      // (h, int64 n) -> handle
      {"anvil.is_null", 1, C::Builtin, true},               // (h) -> bool
  };
  return table;
}

const IntrinsicInfo* find_intrinsic(std::string_view name) {
  for (const IntrinsicInfo& info : all_intrinsics())
    if (info.name == name) return &info;
  return nullptr;
}

}  // namespace anvil::tir
