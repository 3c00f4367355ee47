// Generic handling of attrs: conversion between typed fields and AttrValue,
// printing of values, and structural comparison.
#include "anvil/ir/attrs.h"

#include <cmath>
#include <cstdio>
#include <functional>

#include "anvil/support/error.h"

namespace anvil::ir {
namespace {

const char* value_kind_name(const AttrValue& v) {
  static const char* names[] = {"None",  "int",      "float",      "bool",       "string",
                                "dtype", "int list", "float list", "string list"};
  return names[v.index()];
}

[[noreturn]] void kind_mismatch(const AttrValue& value, std::string_view field, const char* want) {
  throw_error("attribute '", field, "' expects ", want, ", got ", value_kind_name(value), " ",
              attr_value_to_string(value));
}

std::string float_to_string(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  // The shortest form that reads back to the same double.
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

}  // namespace

namespace {

struct ValuePrinter {
  std::string operator()(std::monostate) const { return "None"; }
  std::string operator()(int64_t v) const { return std::to_string(v); }
  std::string operator()(double v) const { return float_to_string(v) + "f"; }
  std::string operator()(bool v) const { return v ? "True" : "False"; }
  std::string operator()(const std::string& v) const {
    std::string out = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  std::string operator()(DataType v) const { return "\"" + v.to_string() + "\""; }
  template <typename T>
  std::string operator()(const std::vector<T>& items) const {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + (*this)(items[i]);
    return out + "]";
  }
};

}  // namespace

std::string attr_value_to_string(const AttrValue& value) {
  return std::visit(ValuePrinter{}, value);
}

namespace attr_detail {

AttrValue to_value(int64_t v) { return v; }
AttrValue to_value(double v) { return v; }
AttrValue to_value(bool v) { return v; }
AttrValue to_value(const std::string& v) { return v; }
AttrValue to_value(DataType v) { return v; }
AttrValue to_value(const std::vector<int64_t>& v) { return v; }
AttrValue to_value(const std::vector<double>& v) { return v; }
AttrValue to_value(const std::vector<std::string>& v) { return v; }
AttrValue to_value(const std::optional<int64_t>& v) { return v ? AttrValue(*v) : AttrValue(); }
AttrValue to_value(const std::optional<double>& v) { return v ? AttrValue(*v) : AttrValue(); }
AttrValue to_value(const std::optional<DataType>& v) { return v ? AttrValue(*v) : AttrValue(); }

void from_value(const AttrValue& value, std::string_view field, int64_t& out) {
  if (auto* i = std::get_if<int64_t>(&value)) {
    out = *i;
  } else if (auto* b = std::get_if<bool>(&value)) {
    out = *b;
  } else {
    kind_mismatch(value, field, "an int");
  }
}

void from_value(const AttrValue& value, std::string_view field, double& out) {
  if (auto* d = std::get_if<double>(&value)) {
    out = *d;
  } else if (auto* i = std::get_if<int64_t>(&value)) {
    out = double(*i);
  } else {
    kind_mismatch(value, field, "a float");
  }
}

void from_value(const AttrValue& value, std::string_view field, bool& out) {
  if (auto* b = std::get_if<bool>(&value)) {
    out = *b;
  } else if (auto* i = std::get_if<int64_t>(&value); i && (*i == 0 || *i == 1)) {
    out = *i != 0;
  } else {
    kind_mismatch(value, field, "a bool");
  }
}

void from_value(const AttrValue& value, std::string_view field, std::string& out) {
  if (auto* s = std::get_if<std::string>(&value)) {
    out = *s;
  } else if (auto* t = std::get_if<DataType>(&value)) {
    out = t->to_string();
  } else {
    kind_mismatch(value, field, "a string");
  }
}

void from_value(const AttrValue& value, std::string_view field, DataType& out) {
  if (auto* t = std::get_if<DataType>(&value)) {
    out = *t;
  } else if (auto* s = std::get_if<std::string>(&value)) {
    out = DataType::parse(*s);
  } else {
    kind_mismatch(value, field, "a dtype");
  }
}

void from_value(const AttrValue& value, std::string_view field, std::vector<int64_t>& out) {
  if (auto* v = std::get_if<std::vector<int64_t>>(&value)) {
    out = *v;
  } else if (auto* i = std::get_if<int64_t>(&value)) {
    out = {*i};
  } else if (std::holds_alternative<std::vector<double>>(value) &&
             std::get<std::vector<double>>(value).empty()) {
    out.clear();
  } else if (std::holds_alternative<std::vector<std::string>>(value) &&
             std::get<std::vector<std::string>>(value).empty()) {
    out.clear();
  } else {
    kind_mismatch(value, field, "a list of ints");
  }
}

void from_value(const AttrValue& value, std::string_view field, std::vector<double>& out) {
  if (auto* v = std::get_if<std::vector<double>>(&value)) {
    out = *v;
  } else if (auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    out.assign(ints->begin(), ints->end());
  } else if (std::holds_alternative<std::vector<std::string>>(value) &&
             std::get<std::vector<std::string>>(value).empty()) {
    out.clear();
  } else {
    kind_mismatch(value, field, "a list of floats");
  }
}

void from_value(const AttrValue& value, std::string_view field, std::vector<std::string>& out) {
  if (auto* v = std::get_if<std::vector<std::string>>(&value)) {
    out = *v;
  } else if ((std::holds_alternative<std::vector<int64_t>>(value) &&
              std::get<std::vector<int64_t>>(value).empty()) ||
             (std::holds_alternative<std::vector<double>>(value) &&
              std::get<std::vector<double>>(value).empty())) {
    out.clear();
  } else {
    kind_mismatch(value, field, "a list of strings");
  }
}

void from_value(const AttrValue& value, std::string_view field, std::optional<int64_t>& out) {
  if (std::holds_alternative<std::monostate>(value)) {
    out.reset();
  } else {
    int64_t v = 0;
    from_value(value, field, v);
    out = v;
  }
}

void from_value(const AttrValue& value, std::string_view field, std::optional<double>& out) {
  if (std::holds_alternative<std::monostate>(value)) {
    out.reset();
  } else {
    double v = 0;
    from_value(value, field, v);
    out = v;
  }
}

void from_value(const AttrValue& value, std::string_view field, std::optional<DataType>& out) {
  if (std::holds_alternative<std::monostate>(value)) {
    out.reset();
  } else {
    DataType v;
    from_value(value, field, v);
    out = v;
  }
}

void throw_unknown_field(const char* type_key, std::string_view name) {
  throw_error(type_key, " has no attribute '", name, "'");
}

}  // namespace attr_detail

namespace {

// Bitwise float comparison so that NaN attributes still compare equal to themselves.
bool values_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return *x == y || (std::isnan(*x) && std::isnan(y));
  }
  return a == b;
}

size_t value_hash(const AttrValue& v) {
  return std::hash<std::string>()(attr_value_to_string(v)) ^ v.index();
}

}  // namespace

std::vector<AttrField> non_default_fields(const AttrsNode& attrs) {
  std::vector<AttrField> all = attrs.fields();
  std::vector<AttrField> defaults = attrs.make_default()->fields();
  std::vector<AttrField> result;
  for (size_t i = 0; i < all.size(); ++i)
    if (!values_equal(all[i].value, defaults[i].value)) result.push_back(all[i]);
  return result;
}

bool attrs_equal(const AttrsNode* a, const AttrsNode* b) {
  if (a == b) return true;
  if (!a || !b) {
    // A missing attrs equals a struct holding only defaults.
    const AttrsNode* present = a ? a : b;
    return non_default_fields(*present).empty();
  }
  if (std::string_view(a->type_key()) != b->type_key()) return false;
  std::vector<AttrField> fa = a->fields(), fb = b->fields();
  for (size_t i = 0; i < fa.size(); ++i)
    if (!values_equal(fa[i].value, fb[i].value)) return false;
  return true;
}

size_t attrs_hash(const AttrsNode* a) {
  if (!a) return 0;
  size_t h = 0;
  for (const AttrField& f : non_default_fields(*a))
    h = h * 31 + std::hash<std::string_view>()(f.name) + value_hash(f.value);
  return h;
}

const AttrValue* DictAttrs::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

DictAttrs DictAttrs::with(std::string key, AttrValue value) const {
  DictAttrs result = *this;
  for (auto& [k, v] : result.entries) {
    if (k == key) {
      v = std::move(value);
      return result;
    }
  }
  result.entries.emplace_back(std::move(key), std::move(value));
  return result;
}

}  // namespace anvil::ir
