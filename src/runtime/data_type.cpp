#include "anvil/runtime/data_type.h"

#include <charconv>

#include "anvil/support/error.h"
#include "anvil/support/minifloat.h"

namespace anvil {
namespace {

bool parse_number(std::string_view text, int& out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

struct MiniFloatName {
  std::string_view name;
  uint8_t code;
  uint8_t bits;
};
constexpr MiniFloatName kMiniFloatNames[] = {
    {"float8_e4m3fn", DataType::Float8E4M3FN, 8},
    {"float8_e4m3fnuz", DataType::Float8E4M3FNUZ, 8},
    {"float8_e5m2", DataType::Float8E5M2, 8},
    {"float8_e5m2fnuz", DataType::Float8E5M2FNUZ, 8},
    {"float8_e8m0fnu", DataType::Float8E8M0FNU, 8},
    {"float4_e2m1fn", DataType::Float4E2M1FN, 4},
};

bool is_supported(DataType t) {
  if (t.is_minifloat()) return t.bits == (t.code == DataType::Float4E2M1FN ? 4 : 8);
  switch (t.code) {
    case DataType::Int:
    case DataType::UInt:
      return t.bits == 2 || t.bits == 4 || t.bits == 8 || t.bits == 16 || t.bits == 32 ||
             t.bits == 64 || (t.code == DataType::UInt && t.bits == 1);
    case DataType::Float:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case DataType::BFloat:
      return t.bits == 16;
  }
  return false;
}

}  // namespace

DataType DataType::parse(std::string_view text) {
  std::string_view base = text;
  int lanes = 1;
  if (auto x = text.find('x'); x != std::string_view::npos) {
    base = text.substr(0, x);
    if (!parse_number(text.substr(x + 1), lanes) || lanes < 1 || lanes > 65535)
      throw_error("unknown data type '", text, "'");
  }
  DataType result;
  if (text == "handle") return handle();
  const MiniFloatName* mini = nullptr;
  for (const MiniFloatName& m : kMiniFloatNames)
    if (base == m.name) mini = &m;
  if (base == "bool") {
    result = boolean();
  } else if (mini) {
    result = DataType(mini->code, mini->bits);
  } else {
    struct Prefix {
      std::string_view name;
      uint8_t code;
    };
    // "uint" must be tried before "int"; "bfloat" before "float".
    static constexpr Prefix prefixes[] = {
        {"uint", UInt}, {"int", Int}, {"bfloat", BFloat}, {"float", Float}};
    bool matched = false;
    for (const Prefix& p : prefixes) {
      if (!base.starts_with(p.name)) continue;
      int bits = 0;
      if (!parse_number(base.substr(p.name.size()), bits) || bits <= 1 || bits > 64) break;
      result = DataType(p.code, uint8_t(bits));
      matched = is_supported(result);
      break;
    }
    if (!matched) throw_error("unknown data type '", text, "'");
  }
  return result.with_lanes(uint16_t(lanes));
}

std::string DataType::to_string() const {
  std::string name;
  if (is_handle() && bits == 64 && lanes == 1) return "handle";
  if (is_bool()) {
    name = "bool";
  } else if (is_minifloat()) {
    for (const MiniFloatName& m : kMiniFloatNames)
      if (m.code == code) name = m.name;
  } else {
    switch (code) {
      case Int:
        name = "int";
        break;
      case UInt:
        name = "uint";
        break;
      case Float:
        name = "float";
        break;
      case BFloat:
        name = "bfloat";
        break;
      default:
        name = str_cat("code", int(code), "_");
        break;
    }
    name += std::to_string(bits);
  }
  if (lanes != 1) name += "x" + std::to_string(lanes);
  return name;
}

MiniFloatFormat DataType::minifloat_format() const {
  switch (code) {
    case Float8E4M3FN:
      return MiniFloatFormat::e4m3fn();
    case Float8E4M3FNUZ:
      return MiniFloatFormat::e4m3fnuz();
    case Float8E5M2:
      return MiniFloatFormat::e5m2();
    case Float8E5M2FNUZ:
      return MiniFloatFormat::e5m2fnuz();
    case Float8E8M0FNU:
      return MiniFloatFormat::e8m0();
    case Float4E2M1FN:
      return MiniFloatFormat::e2m1();
    default:
      throw_error("data type ", to_string(), " is not a float8 or float4 type");
  }
}

DataType DataType::from_dlpack(DLDataType t) {
  constexpr uint8_t kDLPackBool = 6;
  if (t.code == kDLPackBool && t.bits == 8) return boolean().with_lanes(t.lanes);
  DataType result(t.code, t.bits, t.lanes);
  if (!is_supported(result.element_of()) || t.lanes == 0)
    throw_error("unsupported DLPack data type (code ", int(t.code), ", bits ", int(t.bits),
                ", lanes ", t.lanes, ")");
  return result;
}

}  // namespace anvil
