// Cast, CastLike and Clip.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>

#include "anvil/support/minifloat.h"
#include "frontend/onnx/convert_math.h"

namespace anvil::frontend::onnx_import::math {

using namespace ir;

namespace {

// TensorProto.DataType names by number, up to INT2 (26) of onnx 1.20.
constexpr const char* kOnnxTypeNames[] = {
    "UNDEFINED",      "FLOAT",    "UINT8",        "INT8",           "UINT16",
    "INT16",          "INT32",    "INT64",        "STRING",         "BOOL",
    "FLOAT16",        "DOUBLE",   "UINT32",       "UINT64",         "COMPLEX64",
    "COMPLEX128",     "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
    "FLOAT8E5M2FNUZ", "UINT4",    "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0",
    "UINT2",          "INT2"};
constexpr int kNumOnnxTypes = int(std::size(kOnnxTypeNames));

std::string onnx_type_name(int64_t type) {
  if (type >= 0 && type < kNumOnnxTypes) return kOnnxTypeNames[type];
  return "type " + std::to_string(type);
}

// The dtype a Cast targets; fails naming the node for ONNX types anvil's
// tensors cannot hold (strings, complex).
DataType cast_target(const ConvertContext& ctx, int64_t onnx_type) {
  std::string name = onnx_type_name(onnx_type);
  if (onnx_type == 8) ctx.fail("cannot cast to STRING: string tensors are not supported");
  try {
    return onnx_dtype(int32_t(onnx_type), "the target type " + name);
  } catch (const Error& e) {
    ctx.fail("cannot cast: ", e.what());
  }
}

// A scalar of a float8 type holding `code` as is: infinity or NaN, which a value stored through
// Tensor::set_from_double (saturating) would not give.
Expr code_constant(ConvertContext& ctx, uint32_t code, DataType dtype) {
  Tensor t = Tensor::empty({}, dtype);
  *static_cast<uint8_t*>(t.data()) = uint8_t(code);
  return ctx.constant(std::move(t));
}

// The cast op saturates, as Cast's default saturate=1 does. With saturate=0 a value that rounds
// past the largest finite one (infinity included) becomes infinity for E5M2 and NaN for the
// formats without infinities: the where below, on the value before rounding.
Expr unsaturated(ConvertContext& ctx, const Expr& x, DataType from, const Expr& saturated,
                 DataType to) {
  MiniFloatFormat f = to.minifloat_format();
  if (f.specials == MiniFloatFormat::Specials::None) return saturated;
  DataType wide = from == DataType::float64() ? from : DataType::float32();
  Expr value = from == wide ? x : ctx.op("cast", {x}, {{"dtype", wide}});
  MiniFloatOverflow overflow = minifloat_overflow(f);
  Expr over = ctx.op(overflow.inclusive ? "greater_equal" : "greater",
                     {ctx.op("abs", {value}), scalar(ctx, overflow.threshold, wide)});
  Expr special;
  if (f.specials == MiniFloatFormat::Specials::Ieee) {
    const uint32_t infinity = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
    const uint32_t sign_bit = 1u << (f.exponent_bits + f.mantissa_bits);
    special = ctx.op(
        "where", {ctx.op("less", {value, scalar(ctx, 0, wide)}),
                  code_constant(ctx, infinity | sign_bit, to), code_constant(ctx, infinity, to)});
  } else {
    special = code_constant(ctx, f.nan_code(), to);
  }
  return ctx.op("where", {over, special, saturated});
}

// The cast op rounds into E8M0 upwards (Cast's default round_mode). For "down" and "nearest"
// the float32 value is first moved to the power of two it should become, which rounding up
// keeps: |x| with its mantissa cleared, doubled for "nearest" when the mantissa is at least
// one half (for a float32 subnormal, more than one half: then 2^-126; when saturating, not
// past 2^127; infinity and NaN stay as they are).
Expr e8m0_rounded_input(ConvertContext& ctx, Expr x, DataType from, const std::string& mode,
                        bool saturate) {
  if (mode == "up") return x;
  if (mode != "down" && mode != "nearest")
    ctx.fail("attribute 'round_mode' = '", mode, "' must be up, down or nearest");
  const DataType f32 = DataType::float32(), i32 = DataType::int32();
  if (from != f32) x = ctx.op("cast", {x}, {{"dtype", f32}});
  Expr bits = ctx.op("reinterpret", {ctx.op("abs", {x})}, {{"dtype", i32}});
  auto masked = [&](int64_t mask) { return ctx.op("bitwise_and", {bits, scalar(ctx, mask, i32)}); };
  Expr field_bits = masked(0x7F800000);
  Expr floor = ctx.op("reinterpret", {field_bits}, {{"dtype", f32}});
  if (mode == "down") return floor;
  Expr zero = scalar(ctx, 0, i32);
  Expr half = ctx.op("not_equal", {masked(0x400000), zero});
  Expr subnormal = ctx.op("equal", {field_bits, zero});
  Expr more_than_half = ctx.op("not_equal", {masked(0x3FFFFF), zero});
  Expr finite = ctx.op("not_equal", {field_bits, scalar(ctx, 0x7F800000, i32)});
  Expr round_up = ctx.op(
      "logical_and", {ctx.op("logical_and", {half, finite}),
                      ctx.op("logical_or", {ctx.op("logical_not", {subnormal}), more_than_half})});
  Expr raised = ctx.op("where", {subnormal, scalar(ctx, std::ldexp(1.0, -126), f32),
                                 ctx.op("multiply", {floor, scalar(ctx, 2, f32)})});
  if (saturate) raised = ctx.op("minimum", {raised, scalar(ctx, std::ldexp(1.0, 127), f32)});
  return ctx.op("where", {round_up, raised, floor});
}

Expr cast_to(ConvertContext& ctx, DataType to, bool saturate = true,
             const std::string& round_mode = "up") {
  Expr x = ctx.input(0);
  DataType from = input_dtype(ctx, 0);
  if (from == to) return x;
  if (to == DataType::float8_e8m0fnu()) {
    x = e8m0_rounded_input(ctx, x, from, round_mode, saturate);
    from = round_mode == "up" ? from : DataType::float32();
  }
  Expr y = ctx.op("cast", {x}, {{"dtype", to}});
  if (!saturate && to.is_minifloat()) y = unsaturated(ctx, x, from, y, to);
  return y;
}

// BitCast: the bits of each element read as `to`, a type of the same width.
std::vector<Expr> convert_bitcast(ConvertContext& ctx) {
  DataType to = cast_target(ctx, ctx.required_int("to"));
  DataType from = input_dtype(ctx, 0);
  if (from.bytes() != to.bytes())
    ctx.fail("cannot bit-cast ", from.to_string(), " to ", to.to_string(), ": the widths differ");
  if (from == to) return {ctx.input(0)};
  return {ctx.op("reinterpret", {ctx.input(0)}, {{"dtype", to}})};
}

// Cast-1 names the target type as a string ("FLOAT").
std::vector<Expr> convert_cast_v1(ConvertContext& ctx) {
  std::string name = ctx.attr_string("to", "");
  for (int type = 1; type < kNumOnnxTypes; ++type)
    if (name == kOnnxTypeNames[type]) return {cast_to(ctx, cast_target(ctx, type))};
  ctx.fail("attribute 'to' = \"", name, "\" is not an ONNX tensor type");
}

// Cast-6 on: an enum number. Cast-19's 'saturate' only concerns float8 targets.
std::vector<Expr> convert_cast(ConvertContext& ctx) {
  if (!ctx.has_attr("to")) ctx.fail("attribute 'to' is required but missing");
  return {cast_to(ctx, cast_target(ctx, ctx.attr_int("to", 0)), ctx.attr_int("saturate", 1) != 0,
                  ctx.attr_string("round_mode", "up"))};
}

std::vector<Expr> convert_cast_like(ConvertContext& ctx) {
  return {cast_to(ctx, input_dtype(ctx, 1), ctx.attr_int("saturate", 1) != 0,
                  ctx.attr_string("round_mode", "up"))};
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// clip(x, a_min, a_max) when the bounds are ordered; otherwise ONNX's rule
// (every value becomes max) through maximum then minimum.
Expr clip_static(ConvertContext& ctx, const Expr& x, double lo, double hi) {
  if (lo <= hi) return ctx.op("clip", {x}, {{"a_min", lo}, {"a_max", hi}});
  DataType dtype = input_dtype(ctx, 0);
  Expr raised = ctx.op("maximum", {x, scalar(ctx, lo, dtype)});
  return ctx.op("minimum", {raised, scalar(ctx, hi, dtype)});
}

// Clip-1 and Clip-6: bounds are float attributes; an absent one is open.
std::vector<Expr> convert_clip_v1(ConvertContext& ctx) {
  double lo = ctx.has_attr("min") ? ctx.attr_float("min", 0) : -kInf;
  double hi = ctx.has_attr("max") ? ctx.attr_float("max", 0) : kInf;
  return {clip_static(ctx, ctx.input(0), lo, hi)};
}

// A bound input's value when it is a constant exactly representable as a
// double (the clip op's attribute type), else nullopt.
std::optional<double> static_bound(const ConvertContext& ctx, size_t i) {
  std::optional<Tensor> value = ctx.input_constant(i);
  if (!value) return std::nullopt;
  if (value->numel() != 1) ctx.fail("input ", i, " must hold one value, got ", value->numel());
  DataType dtype = value->dtype();
  if (dtype == DataType::int64() || dtype == DataType::uint64()) {
    // Beyond 2^53 a double no longer holds every integer.
    int64_t bits = 0;
    std::memcpy(&bits, static_cast<const char*>(value->data()) + value->byte_offset_of(0),
                sizeof(bits));
    bool exact = dtype == DataType::int64() ? std::abs(double(bits)) <= 0x1p53
                                            : uint64_t(bits) <= (uint64_t(1) << 53);
    if (!exact) return std::nullopt;
  }
  return value->get_as_double(0);
}

// Clip-11 on: bounds are optional inputs. Constant bounds become the clip
// op's attributes; bounds known only at run time become maximum/minimum.
std::vector<Expr> convert_clip(ConvertContext& ctx) {
  Expr x = ctx.input(0);
  bool has_lo = ctx.has_input(1), has_hi = ctx.has_input(2);
  std::optional<double> lo = has_lo ? static_bound(ctx, 1) : std::optional<double>(-kInf);
  std::optional<double> hi = has_hi ? static_bound(ctx, 2) : std::optional<double>(kInf);
  if (lo && hi) return {clip_static(ctx, x, *lo, *hi)};
  // A one-element bound of shape [1] would otherwise broadcast a scalar x to [1].
  auto bound = [&](size_t i) {
    Expr b = ctx.input(i);
    if (ctx.input_tensor(i).ndim() != 0)
      b = ctx.op("reshape", {b}, {{"newshape", std::vector<int64_t>{}}});
    return b;
  };
  if (has_lo) x = ctx.op("maximum", {x, bound(1)});
  if (has_hi) x = ctx.op("minimum", {x, bound(2)});
  return {x};
}

}  // namespace

void register_cast_converters(ConverterTable& table) {
  table.add("Cast", 1, convert_cast_v1);
  table.add("Cast", 6, convert_cast);
  table.add("CastLike", 15, convert_cast_like);
  table.add("BitCast", 26, convert_bitcast);
  table.add("Clip", 1, convert_clip_v1);
  table.add("Clip", 11, convert_clip);
}

}  // namespace anvil::frontend::onnx_import::math
