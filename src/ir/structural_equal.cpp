// Structural equality and hashing of the graph IR. Bound variables match by
// where they are defined (the i-th parameter with the i-th parameter), so
// alpha-renamed functions are equal. Both walks use explicit stacks: graph
// bodies are DAGs thousands of nodes deep, too deep for recursion.
#include "anvil/ir/structural_equal.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/prim_func_hooks.h"
#include "ir/text_util.h"

namespace anvil::ir {
namespace {

size_t mix(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

size_t type_hash(const Type& t) {
  if (!t) return 0x51;
  size_t h = size_t(t->kind) + 1;
  if (const auto* tensor = as<TensorTypeNode>(t)) {
    h = mix(h, tensor->dtype.code);
    h = mix(h, tensor->dtype.bits);
    h = mix(h, tensor->dtype.lanes);
    h = mix(h, tensor->shape ? tensor->shape->size() : size_t(-1));
    if (tensor->shape)
      for (const Dim& d : *tensor->shape) h = mix(h, d.hash());
  } else if (const auto* tuple = as<TupleTypeNode>(t)) {
    for (const Type& f : tuple->fields) h = mix(h, type_hash(f));
  } else if (const auto* fn = as<FuncTypeNode>(t)) {
    for (const Type& p : fn->params) h = mix(h, type_hash(p));
    h = mix(h, type_hash(fn->ret));
  }
  return h;
}

bool optional_types_equal(const Type& a, const Type& b) {
  return (!a && !b) || (a && b && types_equal(a, b));
}

std::string type_text(const Type& t) { return t ? type_to_string(t) : "none"; }

// A compact CPU copy, so the bytes can be compared and hashed directly.
Tensor compact(const Tensor& t) { return t.is_contiguous() ? t : t.copy(); }

bool constants_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape_vector() != b.shape_vector()) return false;
  Tensor x = compact(a), y = compact(b);
  return std::memcmp(x.data(), y.data(), size_t(x.nbytes())) == 0;
}

std::string describe(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::Var:
      return "%" + static_cast<const VarNode*>(e)->name;
    case ExprKind::GlobalVar:
      return "@" + static_cast<const GlobalVarNode*>(e)->name;
    case ExprKind::Op:
      return "operator " + static_cast<const OpNode*>(e)->name;
    case ExprKind::ExternFunc:
      return quote_string(static_cast<const ExternFuncNode*>(e)->symbol);
    case ExprKind::Call: {
      const ExprNode* callee = static_cast<const CallNode*>(e)->callee.get();
      if (callee->kind == ExprKind::Op)
        return "call of " + static_cast<const OpNode*>(callee)->name;
      return "call of " + describe(callee);
    }
    case ExprKind::Constant: {
      const Tensor& t = static_cast<const ConstantNode*>(e)->data;
      return "constant " +
             type_to_string(TensorTypeNode::make(to_dims(t.shape_vector()), t.dtype()));
    }
    default:
      return expr_kind_name(e->kind);
  }
}

struct PairHash {
  size_t operator()(const std::pair<const void*, const void*>& p) const {
    return mix(std::hash<const void*>()(p.first), std::hash<const void*>()(p.second));
  }
};

class Comparer {
 public:
  explicit Comparer(bool map_free_vars) : map_free_vars_(map_free_vars) {}

  // Compares a and b; on a difference, mismatch() describes it under root_label.
  bool run(const Expr& a, const Expr& b, const std::string& root_label) {
    paths_.push_back({-1, root_label});
    stack_.push_back({a.get(), b.get(), 0});
    while (!stack_.empty()) {
      Task task = stack_.back();
      stack_.pop_back();
      if (!step(task)) return false;
    }
    return true;
  }

  const std::string& mismatch() const { return mismatch_; }

 private:
  struct Task {
    const ExprNode* a;
    const ExprNode* b;
    int path;
  };
  struct PathNode {
    int parent;
    std::string label;
  };

  int child_path(int parent, std::string label) {
    paths_.push_back({parent, std::move(label)});
    return int(paths_.size()) - 1;
  }

  void push(const Expr& a, const Expr& b, int parent, std::string label) {
    pending_.push_back({a.get(), b.get(), child_path(parent, std::move(label))});
  }

  // Moves the children queued by one step onto the stack, so they are compared in order.
  void flush() {
    stack_.insert(stack_.end(), pending_.rbegin(), pending_.rend());
    pending_.clear();
  }

  bool fail(int path, const std::string& what) {
    std::vector<const std::string*> labels;
    for (int p = path; p >= 0; p = paths_[size_t(p)].parent)
      labels.push_back(&paths_[size_t(p)].label);
    // "@main: body.args[0]: what": the root, then the way down to the difference.
    std::string text = *labels.back() + ": ";
    for (auto it = labels.rbegin() + 1; it != labels.rend(); ++it)
      text += (it == labels.rbegin() + 1 ? "" : ".") + **it;
    if (labels.size() > 1) text += ": ";
    mismatch_ = text + what;
    return false;
  }

  bool define(const VarNode* a, const VarNode* b, int path) {
    if (auto it = lhs_to_rhs_.find(a); it != lhs_to_rhs_.end()) {
      if (it->second == b) return true;
      return fail(path, "%" + a->name + " is bound in two places");
    }
    if (rhs_to_lhs_.count(b)) return fail(path, "%" + b->name + " is bound in two places");
    if (!optional_types_equal(a->annotation, b->annotation))
      return fail(path, "type of %" + a->name + ": " + type_text(a->annotation) + " vs " +
                            type_text(b->annotation));
    if (a->is_dataflow != b->is_dataflow)
      return fail(path, "%" + a->name + " is " + (a->is_dataflow ? "" : "not ") +
                            "a dataflow variable, %" + b->name +
                            (b->is_dataflow ? " is" : " is not"));
    lhs_to_rhs_.emplace(a, b);
    rhs_to_lhs_.emplace(b, a);
    return true;
  }

  bool var_use(const VarNode* a, const VarNode* b, int path) {
    if (auto it = lhs_to_rhs_.find(a); it != lhs_to_rhs_.end()) {
      if (it->second == b) return true;
      return fail(path, "%" + a->name + " vs %" + b->name + " (different variables)");
    }
    if (rhs_to_lhs_.count(b))
      return fail(path, "%" + a->name + " vs %" + b->name + " (different variables)");
    if (!map_free_vars_)
      return a == b || fail(path, "free variables %" + a->name + " and %" + b->name + " differ");
    return define(a, b, path);
  }

  bool step(const Task& task) {
    const ExprNode* a = task.a;
    const ExprNode* b = task.b;
    int path = task.path;
    if (a->kind != b->kind) return fail(path, describe(a) + " vs " + describe(b));
    if (a->kind == ExprKind::Var)
      return var_use(static_cast<const VarNode*>(a), static_cast<const VarNode*>(b), path);
    // Each pair once: shared subexpressions compare in linear time.
    if (!seen_.insert({a, b}).second) return true;
    switch (a->kind) {
      case ExprKind::GlobalVar:
      case ExprKind::Op:
      case ExprKind::ExternFunc:
        return describe(a) == describe(b) || fail(path, describe(a) + " vs " + describe(b));
      case ExprKind::Constant: {
        const Tensor& x = static_cast<const ConstantNode*>(a)->data;
        const Tensor& y = static_cast<const ConstantNode*>(b)->data;
        if (constants_equal(x, y)) return true;
        return fail(path, describe(a) + " vs " + describe(b) +
                              (describe(a) == describe(b) ? " with different values" : ""));
      }
      case ExprKind::Call:
        if (!call(static_cast<const CallNode*>(a), static_cast<const CallNode*>(b), path))
          return false;
        break;
      case ExprKind::Tuple: {
        const auto* x = static_cast<const TupleNode*>(a);
        const auto* y = static_cast<const TupleNode*>(b);
        if (x->fields.size() != y->fields.size())
          return fail(path,
                      str_cat("tuple of ", x->fields.size(), " vs ", y->fields.size(), " fields"));
        for (size_t i = 0; i < x->fields.size(); ++i)
          push(x->fields[i], y->fields[i], path, str_cat("fields[", i, "]"));
        break;
      }
      case ExprKind::TupleGetItem: {
        const auto* x = static_cast<const TupleGetItemNode*>(a);
        const auto* y = static_cast<const TupleGetItemNode*>(b);
        if (x->index != y->index)
          return fail(path, str_cat("tuple index ", x->index, " vs ", y->index));
        push(x->tuple, y->tuple, path, "tuple");
        break;
      }
      case ExprKind::Function:
        if (!function(static_cast<const FunctionNode*>(a), static_cast<const FunctionNode*>(b),
                      path))
          return false;
        break;
      case ExprKind::If: {
        const auto* x = static_cast<const IfNode*>(a);
        const auto* y = static_cast<const IfNode*>(b);
        push(x->cond, y->cond, path, "cond");
        push(x->then_branch, y->then_branch, path, "then");
        push(x->else_branch, y->else_branch, path, "else");
        break;
      }
      case ExprKind::While: {
        const auto* x = static_cast<const WhileNode*>(a);
        const auto* y = static_cast<const WhileNode*>(b);
        if (x->vars.size() != y->vars.size())
          return fail(path, str_cat("loop of ", x->vars.size(), " vs ", y->vars.size(), " vars"));
        for (size_t i = 0; i < x->vars.size(); ++i) {
          if (!define(x->vars[i].get(), y->vars[i].get(),
                      child_path(path, str_cat("vars[", i, "]"))))
            return false;
          push(x->init[i], y->init[i], path, str_cat("init[", i, "]"));
        }
        push(x->cond, y->cond, path, "cond");
        push(x->body, y->body, path, "body");
        break;
      }
      case ExprKind::Let: {
        const auto* x = static_cast<const LetNode*>(a);
        const auto* y = static_cast<const LetNode*>(b);
        if (!define(x->var.get(), y->var.get(), path)) return false;
        push(x->value, y->value, path, "let %" + x->var->name);
        push(x->body, y->body, path, "body");
        break;
      }
      case ExprKind::SeqExpr:
        if (!seq(static_cast<const SeqExprNode*>(a), static_cast<const SeqExprNode*>(b), path))
          return false;
        break;
      case ExprKind::PrimFunc: {
        const PrimFuncHooks& hooks = prim_func_hooks();
        bool equal = hooks.equal ? hooks.equal(static_cast<const BaseFuncNode&>(*a),
                                               static_cast<const BaseFuncNode&>(*b))
                                 : a == b;
        return equal || fail(path, "PrimFuncs differ");
      }
      case ExprKind::Var:
        break;
    }
    flush();
    return true;
  }

  bool call(const CallNode* x, const CallNode* y, int path) {
    std::string what = describe(x);
    if (x->args.size() != y->args.size())
      return fail(path,
                  str_cat(what, " with ", x->args.size(), " vs ", y->args.size(), " arguments"));
    if (!attrs_equal(x->attrs.get(), y->attrs.get())) {
      // Name the first differing field when both carry attrs of the same type.
      if (x->attrs && y->attrs && std::string_view(x->attrs->type_key()) == y->attrs->type_key()) {
        std::vector<AttrField> fx = x->attrs->fields(), fy = y->attrs->fields();
        for (size_t i = 0; i < fx.size() && i < fy.size(); ++i)
          if (attr_value_to_string(fx[i].value) != attr_value_to_string(fy[i].value))
            return fail(path, str_cat(what, ": attribute ", fx[i].name, ": ",
                                      attr_value_to_string(fx[i].value), " vs ",
                                      attr_value_to_string(fy[i].value)));
      }
      return fail(path, what + ": attributes differ");
    }
    if (x->type_args.size() != y->type_args.size())
      return fail(path, str_cat(what, " with ", x->type_args.size(), " vs ", y->type_args.size(),
                                " output types"));
    for (size_t i = 0; i < x->type_args.size(); ++i)
      if (!optional_types_equal(x->type_args[i], y->type_args[i]))
        return fail(path, what + ": out=" + type_text(x->type_args[i]) + " vs " +
                              type_text(y->type_args[i]));
    push(x->callee, y->callee, path, "callee");
    for (size_t i = 0; i < x->args.size(); ++i)
      push(x->args[i], y->args[i], path, str_cat("args[", i, "]"));
    return true;
  }

  bool function(const FunctionNode* x, const FunctionNode* y, int path) {
    if (x->params.size() != y->params.size())
      return fail(
          path, str_cat("function of ", x->params.size(), " vs ", y->params.size(), " parameters"));
    for (size_t i = 0; i < x->params.size(); ++i)
      if (!define(x->params[i].get(), y->params[i].get(),
                  child_path(path, str_cat("params[", i, "]"))))
        return false;
    if (!optional_types_equal(x->ret_type, y->ret_type))
      return fail(path, "return type " + type_text(x->ret_type) + " vs " + type_text(y->ret_type));
    if (!(x->func_attrs == y->func_attrs)) {
      auto text = [](const DictAttrs& d) {
        std::string out;
        for (const auto& [k, v] : d.entries)
          out += (out.empty() ? "" : ", ") + k + "=" + attr_value_to_string(v);
        return "{" + out + "}";
      };
      return fail(path,
                  "function attributes " + text(x->func_attrs) + " vs " + text(y->func_attrs));
    }
    push(x->body, y->body, path, "body");
    return true;
  }

  bool seq(const SeqExprNode* x, const SeqExprNode* y, int path) {
    if (x->blocks.size() != y->blocks.size())
      return fail(path, str_cat(x->blocks.size(), " vs ", y->blocks.size(), " binding blocks"));
    for (size_t i = 0; i < x->blocks.size(); ++i) {
      const BindingBlock& bx = x->blocks[i];
      const BindingBlock& by = y->blocks[i];
      int block_path = child_path(path, str_cat("blocks[", i, "]"));
      if (bx.is_dataflow != by.is_dataflow)
        return fail(block_path, std::string(bx.is_dataflow ? "dataflow" : "plain") + " block vs " +
                                    (by.is_dataflow ? "dataflow" : "plain") + " block");
      if (bx.bindings.size() != by.bindings.size())
        return fail(block_path,
                    str_cat(bx.bindings.size(), " vs ", by.bindings.size(), " bindings"));
      for (size_t j = 0; j < bx.bindings.size(); ++j) {
        if (!define(bx.bindings[j].var.get(), by.bindings[j].var.get(), block_path)) return false;
        push(bx.bindings[j].value, by.bindings[j].value, block_path,
             "%" + bx.bindings[j].var->name);
      }
    }
    push(x->body, y->body, path, "body");
    return true;
  }

  bool map_free_vars_;
  std::string mismatch_;
  std::vector<PathNode> paths_;
  std::vector<Task> stack_, pending_;
  std::unordered_map<const VarNode*, const VarNode*> lhs_to_rhs_, rhs_to_lhs_;
  std::unordered_set<std::pair<const void*, const void*>, PairHash> seen_;
};

// Hashes nodes bottom-up, each once. A bound variable hashes by the position
// of its definition, so the hash survives renaming as equality does.
class Hasher {
 public:
  size_t run(const Expr& root) {
    tag_definitions(root);
    std::vector<std::pair<const ExprNode*, bool>> stack{{root.get(), false}};
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      if (memo_.count(node)) continue;
      if (!expanded) {
        stack.push_back({node, true});
        text::for_each_child(node, [&](const Expr& c) {
          if (!memo_.count(c.get())) stack.push_back({c.get(), false});
        });
        continue;
      }
      memo_[node] = local_hash(node);
    }
    return memo_.at(root.get());
  }

 private:
  void tag_definitions(const Expr& root) {
    std::unordered_set<const ExprNode*> seen{root.get()};
    std::vector<const ExprNode*> stack{root.get()};
    while (!stack.empty()) {
      const ExprNode* node = stack.back();
      stack.pop_back();
      if (const auto* fn = as<FunctionNode>(Expr(node))) {
        for (size_t i = 0; i < fn->params.size(); ++i) tags_[fn->params[i].get()] = mix(0x1001, i);
      } else if (const auto* let = as<LetNode>(Expr(node))) {
        tags_[let->var.get()] = 0x1002;
      } else if (const auto* loop = as<WhileNode>(Expr(node))) {
        for (size_t i = 0; i < loop->vars.size(); ++i) tags_[loop->vars[i].get()] = mix(0x1005, i);
      } else if (const auto* seq = as<SeqExprNode>(Expr(node))) {
        for (size_t i = 0; i < seq->blocks.size(); ++i)
          for (size_t j = 0; j < seq->blocks[i].bindings.size(); ++j)
            tags_[seq->blocks[i].bindings[j].var.get()] = mix(mix(0x1003, i), j);
      }
      text::for_each_child(node, [&](const Expr& c) {
        if (seen.insert(c.get()).second) stack.push_back(c.get());
      });
    }
  }

  size_t child(const Expr& e) const { return memo_.at(e.get()); }

  size_t local_hash(const ExprNode* node) const {
    size_t h = mix(0x77, size_t(node->kind));
    switch (node->kind) {
      case ExprKind::Var: {
        const auto* v = static_cast<const VarNode*>(node);
        auto it = tags_.find(v);
        h = mix(h, it == tags_.end() ? 0x1004 : it->second);
        h = mix(h, type_hash(v->annotation));
        return mix(h, v->is_dataflow);
      }
      case ExprKind::GlobalVar:
        return mix(h, std::hash<std::string>()(static_cast<const GlobalVarNode*>(node)->name));
      case ExprKind::Op:
        return mix(h, std::hash<std::string>()(static_cast<const OpNode*>(node)->name));
      case ExprKind::ExternFunc:
        return mix(h, std::hash<std::string>()(static_cast<const ExternFuncNode*>(node)->symbol));
      case ExprKind::Constant: {
        Tensor t = compact(static_cast<const ConstantNode*>(node)->data);
        h = mix(h, t.dtype().code);
        h = mix(h, t.dtype().bits);
        for (int64_t d : t.shape()) h = mix(h, size_t(d));
        return mix(h, std::hash<std::string_view>()(std::string_view(
                          static_cast<const char*>(t.data()), size_t(t.nbytes()))));
      }
      case ExprKind::Call: {
        const auto* call = static_cast<const CallNode*>(node);
        h = mix(h, child(call->callee));
        for (const Expr& arg : call->args) h = mix(h, child(arg));
        h = mix(h, attrs_hash(call->attrs.get()));
        for (const Type& t : call->type_args) h = mix(h, type_hash(t));
        return h;
      }
      case ExprKind::Function: {
        const auto* fn = static_cast<const FunctionNode*>(node);
        for (const Var& p : fn->params) h = mix(h, child(p));
        h = mix(h, type_hash(fn->ret_type));
        for (const auto& [k, v] : fn->func_attrs.entries)
          h = mix(mix(h, std::hash<std::string>()(k)),
                  std::hash<std::string>()(attr_value_to_string(v)));
        return mix(h, child(fn->body));
      }
      case ExprKind::TupleGetItem:
        h = mix(h, size_t(static_cast<const TupleGetItemNode*>(node)->index));
        break;
      case ExprKind::SeqExpr:
        for (const BindingBlock& block : static_cast<const SeqExprNode*>(node)->blocks)
          h = mix(mix(h, block.is_dataflow), block.bindings.size());
        break;
      case ExprKind::PrimFunc: {
        const PrimFuncHooks& hooks = prim_func_hooks();
        return hooks.hash ? mix(h, hooks.hash(static_cast<const BaseFuncNode&>(*node))) : h;
      }
      default:
        break;
    }
    text::for_each_child(node, [&](const Expr& c) { h = mix(h, child(c)); });
    return h;
  }

  std::unordered_map<const VarNode*, size_t> tags_;
  std::unordered_map<const ExprNode*, size_t> memo_;
};

}  // namespace

bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars) {
  if (!a || !b) return a == b;
  return Comparer(map_free_vars).run(a, b, "expr");
}

std::optional<std::string> structural_mismatch(const IRModule& a, const IRModule& b) {
  for (const auto& [name, f] : a.functions())
    if (!b.contains(name)) return "@" + name + ": only in the first module";
  for (const auto& [name, f] : b.functions())
    if (!a.contains(name)) return "@" + name + ": only in the second module";
  for (const auto& [name, fa] : a.functions()) {
    Comparer comparer(false);
    if (!comparer.run(fa, b.find(name), "@" + name)) return comparer.mismatch();
  }
  return std::nullopt;
}

bool structural_equal(const IRModule& a, const IRModule& b) { return !structural_mismatch(a, b); }

size_t structural_hash(const Expr& e) { return e ? Hasher().run(e) : 0; }

}  // namespace anvil::ir
