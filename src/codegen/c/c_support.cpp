#include "c_support.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "anvil/support/error.h"
#include "anvil/support/half.h"

namespace anvil::codegen::c_backend {

// ---------------------------------------------------------------- types

bool is_half_like(DataType dtype) {
  return dtype.bits == 16 && (dtype.is_float() || dtype.is_bfloat());
}

std::string value_type(DataType dtype) {
  if (dtype.is_handle()) return "void*";
  if (dtype.is_bool()) return "bool";
  if (is_half_like(dtype)) return "float";
  if (dtype.is_float() && dtype.bits == 32) return "float";
  if (dtype.is_float() && dtype.bits == 64) return "double";
  if ((dtype.is_int() || dtype.is_uint()) &&
      (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64))
    return str_cat(dtype.is_int() ? "int" : "uint", int(dtype.bits), "_t");
  throw_error("C back end: unsupported data type ", dtype.element_of().to_string());
}

std::string storage_type(DataType dtype) {
  if (dtype.is_bool()) return "uint8_t";
  if (is_half_like(dtype)) return "uint16_t";
  return value_type(dtype);
}

std::string type_suffix(DataType dtype) {
  if (dtype.is_bool()) return "b";
  if (dtype.is_handle()) return "p";
  if (is_half_like(dtype)) return dtype.is_bfloat() ? "bf16" : "f16";
  const char* prefix = dtype.is_float() ? "f" : dtype.is_int() ? "i" : "u";
  return str_cat(prefix, int(dtype.bits));
}

// ---------------------------------------------------------------- literals

std::string int_literal(DataType dtype, int64_t value) {
  if (dtype.is_bool()) return value ? "true" : "false";
  if (dtype.is_uint()) {
    uint64_t u = uint64_t(value);
    if (dtype.bits == 64) return str_cat("UINT64_C(", u, ")");
    if (dtype.bits == 32) return str_cat("UINT32_C(", u, ")");
    return str_cat("((", value_type(dtype), ")", u, "u)");
  }
  // The most negative value has no literal of its own (the minus applies to a positive literal).
  if (dtype.bits == 64) {
    if (value == INT64_MIN) return "(-INT64_C(9223372036854775807) - 1)";
    return value < 0 ? str_cat("(INT64_C(", value, "))") : str_cat("INT64_C(", value, ")");
  }
  if (dtype.bits == 32) {
    if (value == INT32_MIN) return "(-INT32_C(2147483647) - 1)";
    return value < 0 ? str_cat("(", value, ")") : str_cat(value);
  }
  return str_cat("((", value_type(dtype), ")", value, ")");
}

std::string float_literal(DataType dtype, double value) {
  bool as_float = dtype.bits <= 32;
  if (is_half_like(dtype)) {
    value = dtype.is_bfloat() ? bfloat16_to_float(float_to_bfloat16(float(value)))
                              : half_to_float(float_to_half(float(value)));
  }
  if (std::isnan(value)) return as_float ? "((float)NAN)" : "((double)NAN)";
  if (std::isinf(value)) {
    const char* sign = value < 0 ? "-" : "";
    return as_float ? str_cat("(", sign, "(float)INFINITY)")
                    : str_cat("(", sign, "(double)INFINITY)");
  }
  char text[64];
  if (as_float)
    std::snprintf(text, sizeof text, "%.9g", double(float(value)));
  else
    std::snprintf(text, sizeof text, "%.17g", value);
  std::string literal = text;
  // "1" would be an integer literal (and "1f" is no literal at all).
  if (literal.find_first_of(".e") == std::string::npos) literal += ".0";
  if (as_float) literal += "f";
  return literal[0] == '-' ? str_cat("(", literal, ")") : literal;
}

std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '?':  // "??x" would be a trigraph under -std=c99
        out += "\\?";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          // Three octal digits always, so a following digit is not taken into the escape.
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\%03o", unsigned(c));
          out += esc;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// ---------------------------------------------------------------- names

namespace {

// Names a generated file must not declare: C keywords, what its headers declare, what its
// own prelude declares.
const char* const kReservedNames[] = {
    // C99/C11 keywords.
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
    "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex",
    "_Generic", "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local",
    // <stdbool.h>, <stddef.h>, <stdint.h>, <string.h>.
    "bool", "true", "false", "NULL", "size_t", "ptrdiff_t", "offsetof", "wchar_t", "max_align_t",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
    "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", "memcpy", "memset", "memmove", "memcmp",
    "strlen", "errno", "main", "malloc", "calloc", "realloc", "free", "abort", "exit", "abs",
    "labs", "printf", "fprintf", "puts",
    // <math.h> (double, float and long double versions are added below) and its macros.
    "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "isnan", "isinf", "isfinite", "isnormal", "signbit",
    "fpclassify", "float_t", "double_t", "math_errhandling",
    // The generated prelude.
    "lane", "AnvilValue", "AnvilTypeCode", "AnvilPackedCFunc", "AnvilFunctionEntry",
    "AnvilParallelLambda", "AnvilSetLastError", "AnvilGetLastError", "AnvilParallelLaunch",
    "AnvilBackendAllocWorkspace", "AnvilBackendFreeWorkspace", "ANVIL_EXPORT", "ANVIL_ALIGNED",
    "anvil_library_abi_version", "anvil_library_functions", "anvil_library_num_functions"};

const char* const kMathFunctions[] = {
    "acos",      "acosh",     "asin",       "asinh", "atan",      "atan2",  "atanh",   "cbrt",
    "ceil",      "copysign",  "cos",        "cosh",  "erf",       "erfc",   "exp",     "exp2",
    "expm1",     "fabs",      "fdim",       "floor", "fma",       "fmax",   "fmin",    "fmod",
    "frexp",     "hypot",     "ilogb",      "ldexp", "lgamma",    "llrint", "llround", "log",
    "log10",     "log1p",     "log2",       "logb",  "lrint",     "lround", "modf",    "nan",
    "nearbyint", "nextafter", "nexttoward", "pow",   "remainder", "remquo", "rint",    "round",
    "scalbln",   "scalbn",    "sin",        "sinh",  "sqrt",      "tan",    "tanh",    "tgamma",
    "trunc"};

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::set<std::string> c_library_functions() {
  std::set<std::string> names = {"memcpy", "memset", "memmove", "memcmp", "strlen"};
  for (const char* name : kMathFunctions) {
    names.insert(name);
    names.insert(str_cat(name, "f"));
    names.insert(str_cat(name, "l"));
  }
  return names;
}

NameTable::NameTable() {
  for (const char* name : kReservedNames) taken_.insert(name);
  for (const char* name : kMathFunctions) {
    taken_.insert(name);
    taken_.insert(str_cat(name, "f"));
    taken_.insert(str_cat(name, "l"));
  }
}

std::string NameTable::fresh(std::string_view hint) {
  std::string base;
  for (char c : hint) base += is_identifier_char(c) ? c : '_';
  // Leading underscores and digits are not ours to use; the anvil/Anvil/DL prefixes belong to
  // the prelude and dlpack.
  if (base.empty() || base[0] == '_' || (base[0] >= '0' && base[0] <= '9') ||
      starts_with(base, "anvil_") || starts_with(base, "Anvil") || starts_with(base, "ANVIL") ||
      starts_with(base, "DL") || starts_with(base, "kDL"))
    base = "v_" + base;
  std::string name = base;
  for (int suffix = 1; taken_.count(name); ++suffix) name = str_cat(base, "_", suffix);
  taken_.insert(name);
  return name;
}

// ---------------------------------------------------------------- helpers

void HelperSet::add(const std::string& name, std::string definition) {
  if (definitions_.count(name)) return;
  definitions_[name] = std::move(definition);
  order_.push_back(name);
}

std::string HelperSet::use(std::string_view op, DataType dtype) {
  dtype = dtype.element_of();
  std::string t = value_type(dtype);
  std::string suffix = type_suffix(dtype);
  std::string name = str_cat("anvil_", op, "_", suffix);
  if (op == "min" || op == "max") {
    // A comparison and a choice, NaN operands giving the second operand (as LLVM's select).
    add(name, str_cat("static inline ", t, " ", name, "(", t, " a, ", t, " b) { return a ",
                      op == "min" ? "<" : ">", " b ? a : b; }\n"));
    return name;
  }
  if (op == "floordiv" || op == "floormod") {
    bool div = op == "floordiv";
    if (dtype.is_float() || dtype.is_bfloat()) {
      std::string floor_fn = dtype.bits == 64 ? "floor" : "floorf";
      add(name,
          str_cat("static inline ", t, " ", name, "(", t, " a, ", t, " b) { return ",
                  div ? str_cat(floor_fn, "(a / b)") : str_cat("a - ", floor_fn, "(a / b) * b"),
                  "; }\n"));
      return name;
    }
    ANVIL_ICHECK(dtype.is_int(), "C back end: ", op, " helper for ", dtype.to_string());
    // C's / and % truncate; step the quotient down (and the remainder over) when the remainder
    // is non-zero and its sign differs from the divisor's.
    add(name,
        str_cat("static inline ", t, " ", name, "(", t, " a, ", t, " b) {\n  ", t, " q = (", t,
                ")(a / b);\n  ", t, " r = (", t,
                ")(a % b);\n  if (r != 0 && ((r < 0) != (b < 0))) {\n    q = (", t,
                ")(q - 1);\n    r = (", t, ")(r + b);\n  }\n  return ", div ? "q" : "r", ";\n}\n"));
    return name;
  }
  ANVIL_ICHECK(is_half_like(dtype), "C back end: helper ", op, " for ", dtype.to_string());
  bool bf16 = dtype.is_bfloat();
  std::string to_bits = str_cat("anvil_to_bits_", suffix);
  std::string from_bits = str_cat("anvil_from_bits_", suffix);
  if (bf16) {
    add(from_bits, str_cat("static inline float ", from_bits,
                           "(uint16_t b) {\n  uint32_t bits = (uint32_t)b << 16;\n  float f;\n"
                           "  memcpy(&f, &bits, sizeof f);\n  return f;\n}\n"));
    // Round to nearest even on the dropped 16 bits; a NaN stays a (quiet) NaN.
    add(to_bits, str_cat("static inline uint16_t ", to_bits,
                         "(float f) {\n  uint32_t bits;\n  memcpy(&bits, &f, sizeof bits);\n"
                         "  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> "
                         "16) | 0x40u);\n  return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & "
                         "1u)) >> 16);\n}\n"));
  } else {
    add(from_bits, str_cat("static inline float ", from_bits,
                           "(uint16_t h) {\n"
                           "  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;\n"
                           "  uint32_t exponent = ((uint32_t)h >> 10) & 0x1fu;\n"
                           "  uint32_t mantissa = (uint32_t)h & 0x3ffu;\n"
                           "  uint32_t bits;\n"
                           "  float f;\n"
                           "  if (exponent == 0) {\n"
                           "    /* zero or subnormal: mantissa units of 2^-24, exact in float */\n"
                           "    f = (float)mantissa * 5.9604644775390625e-8f;\n"
                           "    return sign ? -f : f;\n"
                           "  }\n"
                           "  if (exponent == 0x1fu)\n"
                           "    bits = sign | 0x7f800000u | (mantissa << 13);\n"
                           "  else\n"
                           "    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);\n"
                           "  memcpy(&f, &bits, sizeof f);\n"
                           "  return f;\n"
                           "}\n"));
    add(to_bits,
        str_cat("static inline uint16_t ", to_bits,
                "(float f) {\n"
                "  uint32_t bits;\n"
                "  uint32_t magnitude;\n"
                "  uint16_t sign;\n"
                "  memcpy(&bits, &f, sizeof bits);\n"
                "  sign = (uint16_t)((bits >> 16) & 0x8000u);\n"
                "  magnitude = bits & 0x7fffffffu;\n"
                "  if (magnitude > 0x7f800000u) return (uint16_t)(sign | 0x7e00u); /* NaN */\n"
                "  /* 65520 and above (infinity included) round to infinity */\n"
                "  if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);\n"
                "  if (magnitude < 0x38800000u) {\n"
                "    /* below 2^-14: a subnormal, counted in units of 2^-24, ties to even */\n"
                "    float units = nearbyintf(fabsf(f) * 16777216.0f);\n"
                "    return (uint16_t)(sign | (uint16_t)units);\n"
                "  }\n"
                "  /* rebias the exponent, then round the 13 dropped bits to nearest even */\n"
                "  magnitude = magnitude - 0x38000000u;\n"
                "  magnitude = magnitude + 0xfffu + ((magnitude >> 13) & 1u);\n"
                "  return (uint16_t)(sign | (uint16_t)(magnitude >> 13));\n"
                "}\n"));
  }
  if (op == "to_bits") return to_bits;
  if (op == "from_bits") return from_bits;
  ANVIL_ICHECK(op == "round", "C back end: unknown helper ", op);
  add(name, str_cat("static inline float ", name, "(float x) { return ", from_bits, "(", to_bits,
                    "(x)); }\n"));
  return name;
}

std::string HelperSet::use_reinterpret(DataType from, DataType to) {
  from = from.element_of();
  to = to.element_of();
  std::string name = str_cat("anvil_reinterpret_", type_suffix(from), "_", type_suffix(to));
  // Half-like values travel as float; their bits are what gets reinterpreted.
  std::string from_bits = is_half_like(from) ? use("to_bits", from) : "";
  std::string to_bits = is_half_like(to) ? use("from_bits", to) : "";
  std::string in_type = is_half_like(from) ? "uint16_t" : value_type(from);
  std::string out_type = is_half_like(to) ? "uint16_t" : value_type(to);
  std::string body =
      str_cat("  ", in_type, " in = ", from_bits.empty() ? "x" : str_cat(from_bits, "(x)"), ";\n  ",
              out_type, " out;\n  memcpy(&out, &in, sizeof out);\n  return ",
              to_bits.empty() ? "out" : str_cat(to_bits, "(out)"), ";\n");
  add(name, str_cat("static inline ", value_type(to), " ", name, "(", value_type(from), " x) {\n",
                    body, "}\n"));
  return name;
}

std::string HelperSet::definitions() const {
  std::string out;
  for (const std::string& name : order_) out += definitions_.at(name);
  return out;
}

}  // namespace anvil::codegen::c_backend
