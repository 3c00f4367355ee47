// Symbolic dims are kept canonical: every expression is rewritten as a
// polynomial over atoms (size variables, and floordiv/floormod/min/max terms
// that are not polynomial), with terms in a fixed order. Equality of Dims is
// then structural equality of canonical forms.
#include "anvil/ir/dim.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "anvil/support/error.h"

namespace anvil::ir {

// Builds raw nodes, bypassing simplification; only canonical forms come out of here.
struct DimBuilder {
  static Dim leaf(DimKind kind, int64_t value, std::string name) {
    auto node = new DimNode();
    node->kind = kind;
    node->value = value;
    node->name = std::move(name);
    return Dim(Ref<const DimNode>(node));
  }
  static Dim binary(DimKind kind, const Dim& a, const Dim& b) {
    auto node = new DimNode();
    node->kind = kind;
    node->a = a;
    node->b = b;
    return Dim(Ref<const DimNode>(node));
  }
};

namespace {

const Dim& any_dim() {
  static const Dim value = DimBuilder::leaf(DimKind::Any, 0, "");
  return value;
}

bool is_compound(DimKind k) { return k != DimKind::Int && k != DimKind::Var && k != DimKind::Any; }

// ---- canonical polynomials

// A product of atoms, kept sorted by their text.
using Monomial = std::vector<std::string>;

struct Poly {
  std::map<Monomial, int64_t> terms;  // coefficient per non-constant monomial
  int64_t constant = 0;
};

// Atoms by their text, so a monomial can be turned back into Dims.
using AtomTable = std::map<std::string, Dim>;

void add_into(Poly& acc, const Poly& p, int64_t scale) {
  acc.constant += p.constant * scale;
  for (const auto& [m, c] : p.terms) {
    int64_t& slot = acc.terms[m];
    slot += c * scale;
    if (slot == 0) acc.terms.erase(m);
  }
}

Poly multiply(const Poly& x, const Poly& y) {
  Poly result;
  result.constant = x.constant * y.constant;
  auto add_term = [&](Monomial m, int64_t c) {
    if (c == 0) return;
    if (m.empty()) {
      result.constant += c;
      return;
    }
    std::sort(m.begin(), m.end());
    int64_t& slot = result.terms[m];
    slot += c;
    if (slot == 0) result.terms.erase(m);
  };
  for (const auto& [mx, cx] : x.terms) {
    add_term(mx, cx * y.constant);
    for (const auto& [my, cy] : y.terms) {
      Monomial m = mx;
      m.insert(m.end(), my.begin(), my.end());
      add_term(m, cx * cy);
    }
  }
  for (const auto& [my, cy] : y.terms) add_term(my, cy * x.constant);
  return result;
}

Poly to_poly(const Dim& d, AtomTable& atoms) {
  Poly p;
  switch (d.kind()) {
    case DimKind::Int:
      p.constant = d.int_value();
      return p;
    case DimKind::Add: {
      p = to_poly(d.lhs(), atoms);
      add_into(p, to_poly(d.rhs(), atoms), 1);
      return p;
    }
    case DimKind::Mul:
      return multiply(to_poly(d.lhs(), atoms), to_poly(d.rhs(), atoms));
    default: {
      std::string key = d.to_string();
      atoms.emplace(key, d);
      p.terms[{key}] = 1;
      return p;
    }
  }
}

// Terms print highest degree first, then by atom text; the constant last.
Dim from_poly(const Poly& p, const AtomTable& atoms) {
  std::vector<std::pair<Monomial, int64_t>> terms(p.terms.begin(), p.terms.end());
  std::stable_sort(terms.begin(), terms.end(),
                   [](const auto& x, const auto& y) { return x.first.size() > y.first.size(); });
  std::optional<Dim> result;
  for (const auto& [m, c] : terms) {
    Dim term = atoms.at(m[0]);
    for (size_t i = 1; i < m.size(); ++i)
      term = DimBuilder::binary(DimKind::Mul, term, atoms.at(m[i]));
    if (c != 1)
      term = DimBuilder::binary(DimKind::Mul, term, DimBuilder::leaf(DimKind::Int, c, ""));
    result = result ? DimBuilder::binary(DimKind::Add, *result, term) : term;
  }
  if (!result) return DimBuilder::leaf(DimKind::Int, p.constant, "");
  if (p.constant != 0)
    result =
        DimBuilder::binary(DimKind::Add, *result, DimBuilder::leaf(DimKind::Int, p.constant, ""));
  return *result;
}

bool any_involved(const Dim& a, const Dim& b) { return a.is_any() || b.is_any(); }

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// All coefficients and the constant divisible by c.
bool divisible(const Poly& p, int64_t c) {
  if (p.constant % c != 0) return false;
  for (const auto& [m, coeff] : p.terms)
    if (coeff % c != 0) return false;
  return true;
}

// q with a = b * q when b is a single term (a coefficient times size variables and atoms) that
// divides every term of a: floordiv(n * b * 384, n * 64) is b * 6. Wherever b is not 0, the
// floor of a / b is then exactly q (and a division by 0 has no value to keep).
std::optional<Dim> exact_quotient(const Dim& a, const Dim& b) {
  AtomTable atoms;
  Poly pa = to_poly(a, atoms), pb = to_poly(b, atoms);
  if (pb.constant != 0 || pb.terms.size() != 1 || pa.constant != 0) return std::nullopt;
  const auto& [divisor, scale] = *pb.terms.begin();
  Poly q;
  for (const auto& [m, coeff] : pa.terms) {
    if (coeff % scale != 0 || !std::includes(m.begin(), m.end(), divisor.begin(), divisor.end()))
      return std::nullopt;
    Monomial rest;
    std::set_difference(m.begin(), m.end(), divisor.begin(), divisor.end(),
                        std::back_inserter(rest));
    if (rest.empty())
      q.constant += coeff / scale;
    else
      q.terms[rest] += coeff / scale;
  }
  return from_poly(q, atoms);
}

Dim linear_op(const Dim& a, const Dim& b, int64_t b_scale, bool multiply_op) {
  if (any_involved(a, b)) return any_dim();
  AtomTable atoms;
  Poly pa = to_poly(a, atoms), pb = to_poly(b, atoms);
  if (multiply_op) return from_poly(multiply(pa, pb), atoms);
  add_into(pa, pb, b_scale);
  return from_poly(pa, atoms);
}

// Orders the operands of a commutative atom (min, max, broadcast) canonically.
Dim commutative_atom(DimKind kind, const Dim& a, const Dim& b) {
  return a.to_string() <= b.to_string() ? DimBuilder::binary(kind, a, b)
                                        : DimBuilder::binary(kind, b, a);
}

void collect_vars(const Dim& d, std::set<std::string>& out) {
  if (d.is_var()) out.insert(d.var_name());
  if (is_compound(d.kind())) {
    collect_vars(d.lhs(), out);
    collect_vars(d.rhs(), out);
  }
}

int precedence(DimKind k) {
  if (k == DimKind::Add) return 1;
  if (k == DimKind::Mul) return 2;
  return 3;
}

}  // namespace

Dim::Dim(int64_t value) : Dim(DimBuilder::leaf(DimKind::Int, value, "")) {}

Dim Dim::var(std::string name) {
  ANVIL_ICHECK(!name.empty(), "size variable needs a name");
  return DimBuilder::leaf(DimKind::Var, 0, std::move(name));
}

Dim Dim::any() { return any_dim(); }

DimKind Dim::kind() const { return node_->kind; }

int64_t Dim::int_value() const {
  ANVIL_ICHECK(is_int(), "dim ", to_string(), " is not an integer");
  return node_->value;
}

std::optional<int64_t> Dim::as_int() const {
  if (is_int()) return node_->value;
  return std::nullopt;
}

const std::string& Dim::var_name() const {
  ANVIL_ICHECK(is_var(), "dim ", to_string(), " is not a variable");
  return node_->name;
}

const Dim& Dim::lhs() const {
  ANVIL_ICHECK(is_compound(kind()));
  return node_->a;
}

const Dim& Dim::rhs() const {
  ANVIL_ICHECK(is_compound(kind()));
  return node_->b;
}

std::vector<std::string> Dim::free_vars() const {
  std::set<std::string> vars;
  collect_vars(*this, vars);
  return {vars.begin(), vars.end()};
}

std::string Dim::to_string() const {
  switch (kind()) {
    case DimKind::Int:
      return std::to_string(node_->value);
    case DimKind::Var:
      return node_->name;
    case DimKind::Any:
      return "?";
    case DimKind::Add: {
      std::string left = lhs().to_string();
      if (rhs().is_int() && rhs().int_value() < 0)
        return left + " - " + std::to_string(-rhs().int_value());
      return left + " + " + rhs().to_string();
    }
    case DimKind::Mul: {
      auto wrap = [](const Dim& d) {
        return precedence(d.kind()) < precedence(DimKind::Mul) ? "(" + d.to_string() + ")"
                                                               : d.to_string();
      };
      return wrap(lhs()) + " * " + wrap(rhs());
    }
    case DimKind::FloorDiv:
      return "floordiv(" + lhs().to_string() + ", " + rhs().to_string() + ")";
    case DimKind::FloorMod:
      return "floormod(" + lhs().to_string() + ", " + rhs().to_string() + ")";
    case DimKind::Min:
      return "min(" + lhs().to_string() + ", " + rhs().to_string() + ")";
    case DimKind::Max:
      return "max(" + lhs().to_string() + ", " + rhs().to_string() + ")";
    case DimKind::Broadcast:
      return "broadcast(" + lhs().to_string() + ", " + rhs().to_string() + ")";
  }
  return "<bad dim>";
}

size_t Dim::hash() const {
  size_t h = std::hash<int>()(int(kind()));
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  switch (kind()) {
    case DimKind::Int:
      mix(std::hash<int64_t>()(node_->value));
      break;
    case DimKind::Var:
      mix(std::hash<std::string>()(node_->name));
      break;
    case DimKind::Any:
      break;
    default:
      mix(lhs().hash());
      mix(rhs().hash());
  }
  return h;
}

bool operator==(const Dim& a, const Dim& b) {
  if (a.node_ == b.node_) return true;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case DimKind::Int:
      return a.node_->value == b.node_->value;
    case DimKind::Var:
      return a.node_->name == b.node_->name;
    case DimKind::Any:
      return true;
    default:
      return a.lhs() == b.lhs() && a.rhs() == b.rhs();
  }
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_int() && b.is_int()) return a.int_value() + b.int_value();
  return linear_op(a, b, 1, false);
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_int() && b.is_int()) return a.int_value() - b.int_value();
  return linear_op(a, b, -1, false);
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_int() && b.is_int()) return a.int_value() * b.int_value();
  return linear_op(a, b, 1, true);
}

Dim floordiv(const Dim& a, const Dim& b) {
  if (b.is_int() && b.int_value() == 0)
    throw_error("division by zero in dimension ", a.to_string(), " / 0");
  if (a.is_int() && b.is_int()) return floor_div_int(a.int_value(), b.int_value());
  if (any_involved(a, b)) return any_dim();
  if (a == b) return 1;
  if (auto c = b.as_int()) {
    if (*c == 1) return a;
    AtomTable atoms;
    Poly p = to_poly(a, atoms);
    if (divisible(p, *c)) {
      Poly q;
      q.constant = p.constant / *c;
      for (const auto& [m, coeff] : p.terms) q.terms[m] = coeff / *c;
      return from_poly(q, atoms);
    }
  }
  if (std::optional<Dim> q = exact_quotient(a, b)) return *q;
  return DimBuilder::binary(DimKind::FloorDiv, a, b);
}

Dim floormod(const Dim& a, const Dim& b) {
  if (b.is_int() && b.int_value() == 0)
    throw_error("modulo by zero in dimension ", a.to_string(), " % 0");
  if (a.is_int() && b.is_int()) {
    int64_t x = a.int_value(), y = b.int_value();
    return x - floor_div_int(x, y) * y;
  }
  if (any_involved(a, b)) return any_dim();
  if (a == b) return 0;
  if (auto c = b.as_int()) {
    if (*c == 1) return 0;
    AtomTable atoms;
    if (divisible(to_poly(a, atoms), *c)) return 0;
  }
  if (exact_quotient(a, b)) return 0;
  return DimBuilder::binary(DimKind::FloorMod, a, b);
}

Dim min(const Dim& a, const Dim& b) {
  if (a.is_int() && b.is_int()) return std::min(a.int_value(), b.int_value());
  if (any_involved(a, b)) return any_dim();
  if (a == b) return a;
  return commutative_atom(DimKind::Min, a, b);
}

Dim max(const Dim& a, const Dim& b) {
  if (a.is_int() && b.is_int()) return std::max(a.int_value(), b.int_value());
  if (any_involved(a, b)) return any_dim();
  if (a == b) return a;
  return commutative_atom(DimKind::Max, a, b);
}

namespace {

// The operands of a nest of broadcasts.
void broadcast_operands(const Dim& d, std::vector<Dim>& out) {
  if (d.kind() == DimKind::Broadcast) {
    broadcast_operands(d.lhs(), out);
    broadcast_operands(d.rhs(), out);
  } else if (std::find(out.begin(), out.end(), d) == out.end()) {
    out.push_back(d);
  }
}

// Whether every operand of `part` is one of `whole`'s.
bool broadcast_covers(const Dim& whole, const Dim& part) {
  std::vector<Dim> whole_ops, part_ops;
  broadcast_operands(whole, whole_ops);
  broadcast_operands(part, part_ops);
  for (const Dim& d : part_ops)
    if (std::find(whole_ops.begin(), whole_ops.end(), d) == whole_ops.end()) return false;
  return true;
}

}  // namespace

Dim broadcast(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_int() && a.int_value() == 1) return b;
  if (b.is_int() && b.int_value() == 1) return a;
  if (a.is_int() && b.is_int()) return -1;
  if (any_involved(a, b)) return any_dim();
  // Broadcasting is associative, commutative and idempotent, so a broadcast with operands the
  // other side already has adds nothing. Without this, each residual add of a decoder layer
  // would nest the previous layer's size expression again, growing it exponentially.
  if (a.kind() == DimKind::Broadcast && broadcast_covers(a, b)) return a;
  if (b.kind() == DimKind::Broadcast && broadcast_covers(b, a)) return b;
  return commutative_atom(DimKind::Broadcast, a, b);
}

Dim dims_product(const std::vector<Dim>& dims) {
  Dim result = 1;
  for (const Dim& d : dims) result = result * d;
  return result;
}

std::string dims_to_string(const std::vector<Dim>& dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + dims[i].to_string();
  return text + ")";
}

std::vector<Dim> to_dims(const std::vector<int64_t>& values) {
  return {values.begin(), values.end()};
}

std::optional<std::vector<int64_t>> to_ints(const std::vector<Dim>& dims) {
  std::vector<int64_t> result;
  result.reserve(dims.size());
  for (const Dim& d : dims) {
    if (!d.is_int()) return std::nullopt;
    result.push_back(d.int_value());
  }
  return result;
}

Dim substitute(const Dim& dim, const std::vector<std::pair<std::string, Dim>>& bindings) {
  switch (dim.kind()) {
    case DimKind::Int:
    case DimKind::Any:
      return dim;
    case DimKind::Var:
      for (const auto& [name, value] : bindings)
        if (name == dim.var_name()) return value;
      return dim;
    default: {
      Dim a = substitute(dim.lhs(), bindings), b = substitute(dim.rhs(), bindings);
      switch (dim.kind()) {
        case DimKind::Add:
          return a + b;
        case DimKind::Mul:
          return a * b;
        case DimKind::FloorDiv:
          return floordiv(a, b);
        case DimKind::FloorMod:
          return floormod(a, b);
        case DimKind::Min:
          return min(a, b);
        case DimKind::Broadcast:
          return broadcast(a, b);
        default:
          return max(a, b);
      }
    }
  }
}

}  // namespace anvil::ir
