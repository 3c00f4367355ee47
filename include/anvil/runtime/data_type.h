// Element types of tensors, laid out like DLPack's DLDataType.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace anvil {

struct MiniFloatFormat;

// An element type: a DLPack type code, a bit width and a vector lane count.
// bool follows TVM's convention (unsigned, 1 bit, stored in one byte), so
// params files exchange with TVM unchanged. Types narrower than a byte (bool,
// int4, uint4, int2, uint2, float4_e2m1fn) take a whole byte per element in
// memory: integers sign- or zero-extended, float4 as its code in the low bits.
// ONNX's packing of them (two or four to a byte) is undone when a model is read.
struct DataType {
  // Handle is an opaque pointer; it appears only in the tensor IR (buffer data
  // pointers), never as a tensor's element type.
  enum Code : uint8_t {
    Int = kDLInt,
    UInt = kDLUInt,
    Float = kDLFloat,
    Handle = kDLOpaqueHandle,
    BFloat = kDLBfloat,
    // The float8 and float4 formats (minifloat.h), numbered as DLPack 1.1 numbers them.
    Float8E4M3FN = 10,
    Float8E4M3FNUZ = 11,
    Float8E5M2 = 12,
    Float8E5M2FNUZ = 13,
    Float8E8M0FNU = 14,
    Float4E2M1FN = 17
  };

  uint8_t code = Float;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(uint8_t code_, uint8_t bits_, uint16_t lanes_ = 1)
      : code(code_), bits(bits_), lanes(lanes_) {}

  static constexpr DataType float16() { return {Float, 16}; }
  static constexpr DataType float32() { return {Float, 32}; }
  static constexpr DataType float64() { return {Float, 64}; }
  static constexpr DataType bfloat16() { return {BFloat, 16}; }
  static constexpr DataType int8() { return {Int, 8}; }
  static constexpr DataType int16() { return {Int, 16}; }
  static constexpr DataType int32() { return {Int, 32}; }
  static constexpr DataType int64() { return {Int, 64}; }
  static constexpr DataType uint8() { return {UInt, 8}; }
  static constexpr DataType uint16() { return {UInt, 16}; }
  static constexpr DataType uint32() { return {UInt, 32}; }
  static constexpr DataType uint64() { return {UInt, 64}; }
  static constexpr DataType boolean() { return {UInt, 1}; }
  static constexpr DataType handle() { return {Handle, 64}; }
  static constexpr DataType int4() { return {Int, 4}; }
  static constexpr DataType uint4() { return {UInt, 4}; }
  static constexpr DataType int2() { return {Int, 2}; }
  static constexpr DataType uint2() { return {UInt, 2}; }
  static constexpr DataType float8_e4m3fn() { return {Float8E4M3FN, 8}; }
  static constexpr DataType float8_e4m3fnuz() { return {Float8E4M3FNUZ, 8}; }
  static constexpr DataType float8_e5m2() { return {Float8E5M2, 8}; }
  static constexpr DataType float8_e5m2fnuz() { return {Float8E5M2FNUZ, 8}; }
  static constexpr DataType float8_e8m0fnu() { return {Float8E8M0FNU, 8}; }
  static constexpr DataType float4_e2m1fn() { return {Float4E2M1FN, 4}; }

  // Parses "float32", "int8", "int4", "bool", "bfloat16", "float8_e4m3fn", "float32x16",
  // "handle"; throws Error otherwise.
  static DataType parse(std::string_view text);
  // The inverse of parse.
  std::string to_string() const;

  // Bytes one element occupies in memory (types narrower than a byte take a whole one).
  constexpr int64_t bytes() const { return (int64_t(bits < 8 ? 8 : bits) * lanes + 7) / 8; }
  constexpr bool is_float() const { return code == Float; }
  constexpr bool is_bfloat() const { return code == BFloat; }
  constexpr bool is_int() const { return code == Int; }
  constexpr bool is_uint() const { return code == UInt && bits != 1; }
  constexpr bool is_bool() const { return code == UInt && bits == 1; }
  constexpr bool is_handle() const { return code == Handle; }
  // float8 and float4: stored as codes, converted through float32 for arithmetic.
  constexpr bool is_minifloat() const {
    return (code >= Float8E4M3FN && code <= Float8E8M0FNU) || code == Float4E2M1FN;
  }
  // An integer type narrower than a byte (int4, uint2...).
  constexpr bool is_sub_byte_int() const {
    return (code == Int || code == UInt) && bits > 1 && bits < 8;
  }
  // The format of a minifloat type (include anvil/support/minifloat.h to use it).
  MiniFloatFormat minifloat_format() const;
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr DataType with_lanes(uint16_t n) const { return {code, bits, n}; }
  constexpr DataType element_of() const { return with_lanes(1); }

  DLDataType to_dlpack() const { return DLDataType{code, bits, lanes}; }
  // Accepts DLPack's newer bool code (6) as well as TVM's uint1.
  static DataType from_dlpack(DLDataType t);

  constexpr bool operator==(const DataType&) const = default;
};

// An integer value wrapped into a narrower integer type the way it is stored in its byte:
// the low `bits` bits, sign-extended for int4/int2, zero-extended for uint4/uint2.
constexpr int64_t wrap_to_bits(int64_t value, DataType t) {
  if (!t.is_sub_byte_int()) return value;
  const uint64_t mask = (uint64_t(1) << t.bits) - 1, low = uint64_t(value) & mask;
  if (t.code == DataType::Int && (low >> (t.bits - 1)) != 0) return int64_t(low | ~mask);
  return int64_t(low);
}

}  // namespace anvil
