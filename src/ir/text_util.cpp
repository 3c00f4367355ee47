#include "ir/text_util.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace anvil::ir::text {

namespace {

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

template <typename T>
std::string shortest_text(T value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::array<char, 64> buf;
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), value);
  return std::string(buf.data(), end);
}

constexpr char kBase64Chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Element i of a compact CPU tensor, in the spelling of its dtype.
std::string element_text(const Tensor& t, int64_t i) {
  DataType dt = t.dtype();
  const char* p = static_cast<const char*>(t.data()) + i * dt.bytes();
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (dt.is_bool()) return load(uint8_t()) ? "True" : "False";
  if (dt.is_int()) {
    switch (dt.bits) {
      case 8:
        return std::to_string(load(int8_t()));
      case 16:
        return std::to_string(load(int16_t()));
      case 32:
        return std::to_string(load(int32_t()));
      default:
        return std::to_string(load(int64_t()));
    }
  }
  if (dt.is_uint()) {
    switch (dt.bits) {
      case 8:
        return std::to_string(load(uint8_t()));
      case 16:
        return std::to_string(load(uint16_t()));
      case 32:
        return std::to_string(load(uint32_t()));
      default:
        return std::to_string(load(uint64_t()));
    }
  }
  if (dt == DataType::float32()) return float_text(load(float()));
  if (dt == DataType::float64()) return double_text(load(double()));
  // float16 and bfloat16 values are exact in float, so the shortest float text reads back.
  return float_text(float(t.get_as_double(i)));
}

bool has_literal_form(DataType dt) {
  if (dt.lanes != 1) return false;
  if (dt.is_bool()) return true;
  if (dt.is_int() || dt.is_uint())
    return dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
  if (dt.is_float()) return dt.bits == 16 || dt.bits == 32 || dt.bits == 64;
  return dt.is_bfloat() && dt.bits == 16;
}

}  // namespace

bool is_plain_name(std::string_view name) {
  if (name.empty() || !is_name_start(name[0])) return false;
  for (char c : name)
    if (!is_name_char(c)) return false;
  return true;
}

std::string name_text(std::string_view name) {
  return is_plain_name(name) ? std::string(name) : quote_string(name);
}

std::string float_text(float value) { return shortest_text(value); }
std::string double_text(double value) { return shortest_text(value); }

std::optional<std::string> scalar_suffix(DataType dtype) {
  if (dtype == DataType::float32()) return "f";
  if (dtype == DataType::float64()) return "f64";
  if (dtype == DataType::float16()) return "f16";
  if (dtype == DataType::int32()) return "";
  if (dtype == DataType::int64()) return "i64";
  if (dtype == DataType::int8()) return "i8";
  if (dtype == DataType::int16()) return "i16";
  if (dtype == DataType::uint8()) return "u8";
  if (dtype == DataType::uint16()) return "u16";
  if (dtype == DataType::uint32()) return "u32";
  if (dtype == DataType::uint64()) return "u64";
  return std::nullopt;
}

std::optional<DataType> dtype_of_suffix(std::string_view suffix, bool has_fraction) {
  if (suffix.empty()) return has_fraction ? DataType::float32() : DataType::int32();
  if (suffix == "f" || suffix == "f32") return DataType::float32();
  if (suffix == "f64") return DataType::float64();
  if (suffix == "f16") return DataType::float16();
  if (has_fraction) return std::nullopt;  // "1.5i64" is not a number
  if (suffix == "i32") return DataType::int32();
  if (suffix == "i64") return DataType::int64();
  if (suffix == "i8") return DataType::int8();
  if (suffix == "i16") return DataType::int16();
  if (suffix == "u8") return DataType::uint8();
  if (suffix == "u16") return DataType::uint16();
  if (suffix == "u32") return DataType::uint32();
  if (suffix == "u64") return DataType::uint64();
  return std::nullopt;
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 4 / 3 + bytes.size() / 57 + 8);
  size_t line = 0;
  auto put = [&](char c) {
    out += c;
    if (++line == 76) {
      out += '\n';
      line = 0;
    }
  };
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 |
                 uint8_t(bytes[i + 2]);
    for (int shift = 18; shift >= 0; shift -= 6) put(kBase64Chars[(v >> shift) & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    put(kBase64Chars[(v >> 18) & 63]);
    put(kBase64Chars[(v >> 12) & 63]);
    put(rest == 2 ? kBase64Chars[(v >> 6) & 63] : '=');
    put('=');
  }
  if (line != 0) out += '\n';
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int count = 0, padding = 0;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    int v = base64_value(c);
    if (v < 0 || padding > 0) return std::nullopt;  // data after padding is malformed
    acc = acc << 6 | uint32_t(v);
    if (++count == 4) {
      out += char(acc >> 16);
      out += char(acc >> 8);
      out += char(acc);
      acc = 0;
      count = 0;
    }
  }
  if (count == 1 || padding > 2) return std::nullopt;
  if (count == 2) out += char(acc >> 4);
  if (count == 3) {
    out += char(acc >> 10);
    out += char(acc >> 2);
  }
  return out;
}

std::optional<std::string> constant_literal(const Tensor& data) {
  DataType dt = data.dtype();
  if (!has_literal_form(dt) || data.numel() > kMaxInlineElements ||
      data.device().type != DeviceType::CPU)
    return std::nullopt;
  Tensor t = data.is_contiguous() ? data : data.copy();
  if (t.ndim() == 0) {
    std::string value = element_text(t, 0);
    if (dt.is_bool()) return value;
    std::optional<std::string> suffix = scalar_suffix(dt);
    bool finite = value != "inf" && value != "-inf" && value != "nan";
    if (suffix && finite) return value + *suffix;
  }
  std::string out = "const([";
  for (int64_t i = 0; i < t.numel(); ++i) out += (i ? ", " : "") + element_text(t, i);
  out += "], shape=(";
  for (int i = 0; i < t.ndim(); ++i) out += (i ? ", " : "") + std::to_string(t.shape()[i]);
  return out + "), dtype=" + dt.to_string() + ")";
}

}  // namespace anvil::ir::text

namespace anvil::ir {

std::string quote_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
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
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace anvil::ir
