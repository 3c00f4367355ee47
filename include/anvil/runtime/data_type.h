// Element types of tensors, laid out like DLPack's DLDataType.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace anvil {

// An element type: a DLPack type code, a bit width and a vector lane count.
// bool follows TVM's convention (unsigned, 1 bit, stored in one byte), so
// params files exchange with TVM unchanged.
struct DataType {
  // Handle is an opaque pointer; it appears only in the tensor IR (buffer data
  // pointers), never as a tensor's element type.
  enum Code : uint8_t {
    Int = kDLInt,
    UInt = kDLUInt,
    Float = kDLFloat,
    Handle = kDLOpaqueHandle,
    BFloat = kDLBfloat
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

  // Parses "float32", "int8", "bool", "bfloat16", "float32x16", "handle"; throws Error otherwise.
  static DataType parse(std::string_view text);
  // The inverse of parse.
  std::string to_string() const;

  // Bytes one element occupies in memory (bool takes a whole byte).
  constexpr int64_t bytes() const { return (int64_t(bits) * lanes + 7) / 8; }
  constexpr bool is_float() const { return code == Float; }
  constexpr bool is_bfloat() const { return code == BFloat; }
  constexpr bool is_int() const { return code == Int; }
  constexpr bool is_uint() const { return code == UInt && bits != 1; }
  constexpr bool is_bool() const { return code == UInt && bits == 1; }
  constexpr bool is_handle() const { return code == Handle; }
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr DataType with_lanes(uint16_t n) const { return {code, bits, n}; }
  constexpr DataType element_of() const { return with_lanes(1); }

  DLDataType to_dlpack() const { return DLDataType{code, bits, lanes}; }
  // Accepts DLPack's newer bool code (6) as well as TVM's uint1.
  static DataType from_dlpack(DLDataType t);

  constexpr bool operator==(const DataType&) const = default;
};

}  // namespace anvil
