// Operator attributes: a typed struct per operator family, reflected field by
// field so the printer, parser, structural equality and hashing handle every
// attrs struct without knowing it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/support/ref.h"

namespace anvil::ir {

// A field value in generic form. monostate is "None" (an unset optional).
using AttrValue = std::variant<std::monostate, int64_t, double, bool, std::string, DataType,
                               std::vector<int64_t>, std::vector<double>, std::vector<std::string>>;

// "None", "3", "2e-05f", "True", "\"NCHW\"", "[1, 2]".
std::string attr_value_to_string(const AttrValue& value);

// The field types an attrs struct may use, and their conversion to and from
// AttrValue. from_attr_value throws Error naming the field on a kind mismatch.
namespace attr_detail {
AttrValue to_value(int64_t v);
AttrValue to_value(double v);
AttrValue to_value(bool v);
AttrValue to_value(const std::string& v);
AttrValue to_value(DataType v);
AttrValue to_value(const std::vector<int64_t>& v);
AttrValue to_value(const std::vector<double>& v);
AttrValue to_value(const std::vector<std::string>& v);
AttrValue to_value(const std::optional<int64_t>& v);
AttrValue to_value(const std::optional<double>& v);
AttrValue to_value(const std::optional<DataType>& v);
void from_value(const AttrValue& value, std::string_view field, int64_t& out);
void from_value(const AttrValue& value, std::string_view field, double& out);
void from_value(const AttrValue& value, std::string_view field, bool& out);
void from_value(const AttrValue& value, std::string_view field, std::string& out);
void from_value(const AttrValue& value, std::string_view field, DataType& out);
void from_value(const AttrValue& value, std::string_view field, std::vector<int64_t>& out);
void from_value(const AttrValue& value, std::string_view field, std::vector<double>& out);
void from_value(const AttrValue& value, std::string_view field, std::vector<std::string>& out);
void from_value(const AttrValue& value, std::string_view field, std::optional<int64_t>& out);
void from_value(const AttrValue& value, std::string_view field, std::optional<double>& out);
void from_value(const AttrValue& value, std::string_view field, std::optional<DataType>& out);
}  // namespace attr_detail

// One named field in generic form.
struct AttrField {
  const char* name;
  AttrValue value;
};

// Base of every attrs struct. Fields are plain public members; the struct is
// filled in right after creation and never changed once a Call holds it.
struct AttrsNode : RefCounted {
  // A unique name of the struct, e.g. "nn.Conv2DAttrs".
  virtual const char* type_key() const = 0;
  // The fields in declaration order.
  virtual std::vector<AttrField> fields() const = 0;
  // Sets one field by name; throws Error on an unknown name or a wrong kind of value.
  virtual void set_field(std::string_view name, const AttrValue& value) = 0;
  // A fresh struct of the same type holding the defaults.
  virtual Ref<AttrsNode> make_default() const = 0;
  // A fresh struct of the same type holding the same values.
  virtual Ref<AttrsNode> clone() const = 0;
};

using Attrs = Ref<const AttrsNode>;

// Implements the reflection of AttrsNode for Derived, which declares
//   static constexpr const char* kTypeKey = "...";
//   template <typename Visit> void visit_fields(Visit&& v) { v("strides", strides); ... }
template <typename Derived>
struct AttrsBase : AttrsNode {
  const char* type_key() const override { return Derived::kTypeKey; }

  std::vector<AttrField> fields() const override {
    std::vector<AttrField> result;
    // visit_fields only reads here; it is non-const so one definition serves both uses.
    const_cast<Derived&>(static_cast<const Derived&>(*this))
        .visit_fields([&](const char* name, auto& field) {
          result.push_back({name, attr_detail::to_value(field)});
        });
    return result;
  }

  void set_field(std::string_view name, const AttrValue& value) override {
    bool found = false;
    static_cast<Derived&>(*this).visit_fields([&](const char* field_name, auto& field) {
      if (name == field_name) {
        attr_detail::from_value(value, name, field);
        found = true;
      }
    });
    if (!found) unknown_field(name);
  }

  Ref<AttrsNode> make_default() const override { return make_ref<Derived>(); }
  Ref<AttrsNode> clone() const override {
    return make_ref<Derived>(static_cast<const Derived&>(*this));
  }

 protected:
  AttrsBase() = default;
  AttrsBase(const AttrsBase&) : AttrsNode() {}

 private:
  [[noreturn]] void unknown_field(std::string_view name) const;
};

namespace attr_detail {
[[noreturn]] void throw_unknown_field(const char* type_key, std::string_view name);
}

template <typename Derived>
void AttrsBase<Derived>::unknown_field(std::string_view name) const {
  attr_detail::throw_unknown_field(Derived::kTypeKey, name);
}

// Fields equal to the struct's defaults are left out when printing.
std::vector<AttrField> non_default_fields(const AttrsNode& attrs);

// Structural equality and hash of two attrs (same type, equal fields).
bool attrs_equal(const AttrsNode* a, const AttrsNode* b);
size_t attrs_hash(const AttrsNode* a);

// Free-form attributes of a function (e.g. Primitive=1, global_symbol="main").
struct DictAttrs {
  std::vector<std::pair<std::string, AttrValue>> entries;

  const AttrValue* find(std::string_view key) const;
  // Returns a copy with key set to value (replacing an earlier value).
  DictAttrs with(std::string key, AttrValue value) const;
  bool empty() const { return entries.empty(); }
  bool operator==(const DictAttrs&) const = default;
};

}  // namespace anvil::ir
