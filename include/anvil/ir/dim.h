// Symbolic dimensions: the integers (or expressions over named size variables
// such as n, batch, n + 1) that tensor shapes are made of.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/support/ref.h"

namespace anvil::ir {

// The kinds of dimension expression. Any is an unknown dimension (ONNX's
// unnamed dynamic dim, TVM's Any); Var is a named size variable.
// Broadcast is numpy's broadcast of two dims: the other where one is 1, either where they are
// equal, and -1 (no size) otherwise.
enum class DimKind : uint8_t { Int, Var, Any, Add, Mul, FloorDiv, FloorMod, Min, Max, Broadcast };

struct DimNode;

// A dimension expression, always kept in a canonical simplified form, so two
// Dims are equal exactly when their canonical forms are (2 * n == n + n).
// Size variables are identified by name.
class Dim {
 public:
  Dim(int64_t value);                      // NOLINT: a plain integer is the common case
  Dim(int value) : Dim(int64_t(value)) {}  // NOLINT
  static Dim var(std::string name);
  static Dim any();

  DimKind kind() const;
  bool is_int() const { return kind() == DimKind::Int; }
  bool is_var() const { return kind() == DimKind::Var; }
  bool is_any() const { return kind() == DimKind::Any; }
  // True when no Var or Any occurs inside.
  bool is_static() const { return is_int(); }
  // The value of an Int; an internal error otherwise.
  int64_t int_value() const;
  std::optional<int64_t> as_int() const;
  // The name of a Var.
  const std::string& var_name() const;
  // Operands of a compound expression (Add, Mul, FloorDiv, FloorMod, Min, Max, Broadcast).
  const Dim& lhs() const;
  const Dim& rhs() const;
  // Names of the size variables occurring in this expression, sorted, unique.
  std::vector<std::string> free_vars() const;
  // Text form: "4", "n", "?", "n * 2 + 1", "floordiv(n, 2)".
  std::string to_string() const;
  size_t hash() const;
  const DimNode* node() const { return node_.get(); }

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  friend Dim floordiv(const Dim& a, const Dim& b);
  friend Dim floormod(const Dim& a, const Dim& b);
  friend Dim min(const Dim& a, const Dim& b);
  friend Dim max(const Dim& a, const Dim& b);
  friend Dim broadcast(const Dim& a, const Dim& b);
  friend bool operator==(const Dim& a, const Dim& b);
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

 private:
  Dim() = default;  // null; only the operands of leaf nodes are null
  explicit Dim(Ref<const DimNode> node) : node_(std::move(node)) {}
  friend struct DimBuilder;
  friend struct DimNode;
  Ref<const DimNode> node_;
};

// The node behind a Dim. Only canonical forms are ever built.
struct DimNode : RefCounted {
  DimKind kind = DimKind::Int;
  int64_t value = 0;  // Int
  std::string name;   // Var
  Dim a, b;           // operands of compound kinds; null for leaves
};

// Product of dims, simplified.
Dim dims_product(const std::vector<Dim>& dims);

// "(1, 3, n, n)".
std::string dims_to_string(const std::vector<Dim>& dims);

// Dims from integers.
std::vector<Dim> to_dims(const std::vector<int64_t>& values);

// Integers from dims, or nullopt when any dim is symbolic.
std::optional<std::vector<int64_t>> to_ints(const std::vector<Dim>& dims);

// Replaces size variables by the dims in the map (by name), re-simplifying.
Dim substitute(const Dim& dim, const std::vector<std::pair<std::string, Dim>>& bindings);

}  // namespace anvil::ir
