// Pieces of the C back end shared by its files: C spellings of types and
// literals, the file-wide table of identifiers, and the inline helper
// functions a generated file defines only when its code uses them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/data_type.h"

namespace anvil::codegen::c_backend {

// The C type a scalar value of dtype (its element type) has in generated code. float16 and
// bfloat16 values are carried as float (rounded to their format after every operation) so that
// arithmetic needs no software emulation.
std::string value_type(DataType dtype);
// The C type of one element of dtype in memory: float16/bfloat16 are their bits (uint16_t), bool
// is one byte (uint8_t).
std::string storage_type(DataType dtype);
// A short suffix naming dtype's value type in helper names: "i64", "u8", "f32", "f64", "b".
std::string type_suffix(DataType dtype);
// True for float16 and bfloat16, whose values need rounding after arithmetic.
bool is_half_like(DataType dtype);

// C literal for an integer immediate of dtype (INT64_C(5), (int8_t)-3, true, ...).
std::string int_literal(DataType dtype, int64_t value);
// C literal for a floating-point immediate of dtype (1.5f, 0.1, INFINITY, ...), for half-like
// dtypes the value rounded to that format, written as a float.
std::string float_literal(DataType dtype, double value);
// A C string literal holding text (escaping quotes, backslashes, '?' and non-printables).
std::string string_literal(std::string_view text);

// Functions the generated file's headers declare (<math.h>, <string.h>).
std::set<std::string> c_library_functions();

// Identifiers of one generated file: every name handed out is unique in the file and is neither
// a C keyword nor a name the file's headers or helpers declare.
class NameTable {
 public:
  NameTable();
  // A fresh identifier resembling hint.
  std::string fresh(std::string_view hint);
  // Marks name as taken without handing it out (e.g. extern functions the code calls).
  void reserve(const std::string& name) { taken_.insert(name); }
  bool is_taken(const std::string& name) const { return taken_.count(name) > 0; }

 private:
  std::set<std::string> taken_;
};

// The inline helper functions a file needs, defined once each, in dependency order.
class HelperSet {
 public:
  // The name of the helper computing op for values of dtype, recording that the file needs it.
  // ops: "floordiv", "floormod" (signed integers and floats), "min", "max" (any number),
  // "round" (float -> float rounded to dtype, a half-like type), "to_bits" (float -> uint16_t
  // bits of a half-like dtype), "from_bits" (the reverse).
  std::string use(std::string_view op, DataType dtype);
  // The helper reinterpreting the bits of a `from` value as a `to` value (equal widths).
  std::string use_reinterpret(DataType from, DataType to);
  // The definitions of every helper used, as C source.
  std::string definitions() const;

 private:
  // name -> definition, and the order names were first needed (dependencies first).
  std::map<std::string, std::string> definitions_;
  std::vector<std::string> order_;
  void add(const std::string& name, std::string definition);
};

}  // namespace anvil::codegen::c_backend
