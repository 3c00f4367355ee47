// EliminateCommonSubexpr: two calls of the same op with equal attrs on the same arguments
// compute the same value, so every user can share the first. Working bottom-up, arguments
// are merged before the calls that use them, so whole equal subgraphs collapse.
#include <cstring>
#include <unordered_map>

#include "anvil/ir/structural_equal.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

size_t combine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

bool same_constant(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape_vector() != b.shape_vector()) return false;
  if (!a.is_contiguous() || !b.is_contiguous()) return false;
  return std::memcmp(a.data(), b.data(), size_t(a.nbytes())) == 0;
}

// Constants of every size are compared by content: a weight repacked once per use by
// AlterOpLayout (a recurrent layer's R, once per unrolled step) must be stored once. Hashing
// reads each constant once, eight bytes at a time, so the pass stays linear in the model size.
size_t constant_hash(const Tensor& t) {
  uint64_t h = uint64_t(t.nbytes()) * 0x9e3779b97f4a7c15ULL;
  const auto* bytes = static_cast<const unsigned char*>(t.data());
  const size_t n = size_t(t.nbytes()), words = n / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, bytes + 8 * i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  for (size_t i = 8 * words; i < n; ++i) h = combine(size_t(h), bytes[i]);
  return size_t(h);
}

// Effective attrs of a call: a call without attrs has the op's defaults.
const ir::AttrsNode* effective_attrs(const ir::CallNode& call) {
  if (call.attrs) return call.attrs.get();
  const ir::OpNode* op = call.op();
  return op && op->def->default_attrs ? op->def->default_attrs.get() : nullptr;
}

bool same_attrs(const ir::CallNode& a, const ir::CallNode& b) {
  const ir::AttrsNode* x = effective_attrs(a);
  const ir::AttrsNode* y = effective_attrs(b);
  if (!x || !y) return x == y;
  return ir::attrs_equal(x, y);
}

bool same_call(const ir::CallNode& a, const ir::CallNode& b) {
  if (a.callee != b.callee || a.args != b.args || !same_attrs(a, b)) return false;
  if (a.type_args.size() != b.type_args.size()) return false;
  for (size_t i = 0; i < a.type_args.size(); ++i)
    if (!ir::types_equal(a.type_args[i], b.type_args[i])) return false;
  return true;
}

size_t call_hash(const ir::CallNode& call) {
  size_t h = std::hash<const void*>()(call.callee.get());
  for (const Expr& arg : call.args) h = combine(h, std::hash<const void*>()(arg.get()));
  if (const ir::AttrsNode* attrs = effective_attrs(call)) h = combine(h, ir::attrs_hash(attrs));
  return h;
}

class CommonSubexprEliminator : public detail::TypedMutator {
 public:
  Expr mutate_Constant(const ir::ConstantNode* node, const Expr& self) override {
    if (!node->data.is_contiguous()) return self;
    auto& bucket = constants_[constant_hash(node->data)];
    for (const Expr& seen : bucket)
      if (same_constant(ir::as<ir::ConstantNode>(seen)->data, node->data)) return seen;
    bucket.push_back(self);
    return self;
  }

  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    Expr rewritten = TypedMutator::mutate_Call(node, self);
    const auto* call = ir::as<ir::CallNode>(rewritten);
    if (!mergeable(*call)) return rewritten;
    auto& bucket = calls_[call_hash(*call)];
    for (const Expr& seen : bucket)
      if (same_call(*ir::as<ir::CallNode>(seen), *call)) return seen;
    bucket.push_back(rewritten);
    return rewritten;
  }

  Expr mutate_TupleGetItem(const ir::TupleGetItemNode* node, const Expr& self) override {
    Expr rewritten = TypedMutator::mutate_TupleGetItem(node, self);
    const auto* item = ir::as<ir::TupleGetItemNode>(rewritten);
    auto& bucket =
        items_[combine(std::hash<const void*>()(item->tuple.get()), size_t(item->index))];
    for (const Expr& seen : bucket) {
      const auto* other = ir::as<ir::TupleGetItemNode>(seen);
      if (other->tuple == item->tuple && other->index == item->index) return seen;
    }
    bucket.push_back(rewritten);
    return rewritten;
  }

  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    return TypedMutator::mutate_Function(node, self);
  }

 private:
  // Only op calls without side effects or randomness: calls of functions and of compiled or
  // runtime code may do anything.
  static bool mergeable(const ir::CallNode& call) {
    const ir::OpNode* op = call.op();
    if (!op) return false;
    const std::string& name = op->name;
    return name != "call_tir" && name != "call_dps_packed" && name != "nn.dropout" &&
           name.find("random") == std::string::npos;
  }

  std::unordered_map<size_t, std::vector<Expr>> calls_, constants_, items_;
};

}  // namespace

ir::IRModule eliminate_common_subexpr(const ir::IRModule& mod) {
  return detail::mutate_graph_functions(mod, [] { return CommonSubexprEliminator(); });
}

}  // namespace anvil::transform
