// The graph IR printer. Graph bodies print as TVM's Relay text: every
// non-leaf expression gets a numbered temporary ("%3 = nn.relu(%2);") in
// post-order, so shared subexpressions print once and the text reads as a
// list of steps. Binding blocks (Relax) print their values inline, since
// they are in A-normal form already. The grammar is in docs/ir-text-format.md.
#include "anvil/ir/printer.h"

#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/prim_func_hooks.h"
#include "anvil/runtime/params.h"
#include "ir/text_util.h"

namespace anvil::ir {
namespace {

using text::constant_literal;
using text::name_text;

// Leaves print in place wherever they are used; everything else is a step.
bool is_leaf(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Var:
    case ExprKind::GlobalVar:
    case ExprKind::Op:
    case ExprKind::ExternFunc:
    case ExprKind::Constant:
      return true;
    default:
      return false;
  }
}

// The ops whose second argument is a tuple of arguments printed as "(a, b)".
bool takes_argument_tuple(const CallNode* call) {
  const OpNode* op = call->op();
  return op && text::is_destination_passing_op(op->name) && call->args.size() >= 2 &&
         call->args[1]->kind == ExprKind::Tuple;
}

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  std::string module(const IRModule& mod) {
    std::string out = std::string("#[version = \"") + text::kTextFormatVersion + "\"]\n";
    bool first = true;
    for (const auto& [name, func] : mod.functions()) {
      if (!first) out += "\n";
      first = false;
      if (func->kind == ExprKind::PrimFunc) {
        const PrimFuncHooks& hooks = prim_func_hooks();
        if (!hooks.print)
          throw_error("cannot print PrimFunc @", name,
                      ": the tensor IR's printer is not installed (set_prim_func_hooks)");
        out += "prim_func @" + name_text(name) + " " + hooks.print(*func) + "\n";
        continue;
      }
      ANVIL_ICHECK(func->kind == ExprKind::Function, "module entry @", name, " is a ",
                   expr_kind_name(func->kind));
      out += def(name, static_cast<const FunctionNode&>(*func));
    }
    return out + metadata_section();
  }

  std::string expr(const Expr& e) {
    start_function(e);
    annotate_free_vars_ = true;
    std::string body = scope_body(e, 0);
    return body + metadata_section();
  }

 private:
  struct Scope {
    std::string lines;
    int indent = 0;
    bool inline_mode = false;                 // binding values print nested, without steps
    std::vector<const ExprNode*> memo_added;  // forgotten when the scope closes
  };

  // ---------------------------------------------------------------- functions

  std::string def(const std::string& name, const FunctionNode& fn) {
    start_function(Expr(&fn));
    std::string out = "def @" + name_text(name) + "(" + params_text(fn) + ")";
    if (fn.ret_type) out += " -> " + type_to_string(fn.ret_type);
    return out + " {\n" + scope_body(fn.body, 2) + "}\n";
  }

  // Resets the per-function state: temporaries count from %0 in every def.
  void start_function(const Expr& root) {
    next_temp_ = 0;
    var_names_.clear();
    used_names_.clear();
    defined_.clear();
    memo_.clear();
    use_count_.clear();
    count_uses(root);
  }

  void count_uses(const Expr& root) {
    std::unordered_set<const ExprNode*> seen;
    std::vector<const ExprNode*> stack{root.get()};
    seen.insert(root.get());
    while (!stack.empty()) {
      const ExprNode* node = stack.back();
      stack.pop_back();
      text::for_each_child(node, [&](const Expr& child) {
        ++use_count_[child.get()];
        if (seen.insert(child.get()).second) stack.push_back(child.get());
      });
    }
  }

  std::string params_text(const FunctionNode& fn) {
    std::string out;
    for (const Var& p : fn.params) {
      if (!out.empty()) out += ", ";
      out += define_var(p.get());
      if (p->annotation) out += ": " + type_to_string(p->annotation);
    }
    for (const auto& [key, value] : fn.func_attrs.entries) {
      if (!out.empty()) out += ", ";
      out += key + "=" + attr_value_to_string(value);
    }
    return out;
  }

  // ---------------------------------------------------------------- names

  // Gives a var its printed name at its definition; names are unique per def.
  std::string define_var(const VarNode* var) {
    defined_.insert(var);
    return "%" + name_text(var_name(var));
  }

  const std::string& var_name(const VarNode* var) {
    auto it = var_names_.find(var);
    if (it != var_names_.end()) return it->second;
    // Digits alone would read as a temporary, so such names get a letter.
    std::string base = var->name.empty() ? "v" : var->name;
    if (base[0] >= '0' && base[0] <= '9') base = "v" + base;
    std::string name = base;
    for (int k = 1; used_names_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_names_.insert(name);
    return var_names_.emplace(var, name).first->second;
  }

  std::string var_ref(const VarNode* var) {
    std::string text = "%" + name_text(var_name(var));
    // print_expr: a free variable carries its type where it first appears, so the text parses.
    if (annotate_free_vars_ && !defined_.count(var) && var->annotation) {
      defined_.insert(var);
      text += ": " + type_to_string(var->annotation);
    }
    return text;
  }

  // ---------------------------------------------------------------- scopes

  Scope& scope() { return scopes_.back(); }

  void emit_line(const std::string& line) {
    scope().lines += std::string(scope().indent, ' ') + line + "\n";
  }

  // The statements and result of a body, each line indented by indent.
  std::string scope_body(const Expr& body, int indent) {
    scopes_.push_back(Scope{"", indent, false, {}});
    std::string result = tail(body);
    emit_line(result);
    Scope done = std::move(scopes_.back());
    scopes_.pop_back();
    for (const ExprNode* node : done.memo_added) memo_.erase(node);
    return done.lines;
  }

  std::string braced(const Expr& body, const std::string& head) {
    return head + "{\n" + scope_body(body, scope().indent + 2) + std::string(scope().indent, ' ') +
           "}";
  }

  // The last expression of a scope: lets and binding blocks become statements.
  // A loop, not recursion, so long let chains print in constant stack.
  std::string tail(Expr e) {
    while (true) {
      if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
      if (const auto* let = as<LetNode>(e)) {
        std::string head = "let " + define_var(let->var.get());
        if (let->var->annotation) head += ": " + type_to_string(let->var->annotation);
        emit_line(head + " = " + bound_value(let->value) + ";");
        e = let->body;
        continue;
      }
      if (const auto* seq = as<SeqExprNode>(e); seq && !seq->blocks.empty()) {
        for (const BindingBlock& block : seq->blocks) emit_block(block);
        // A nested SeqExpr keeps its braces, or its blocks would merge with these.
        if (seq->body->kind == ExprKind::SeqExpr) return node_text(seq->body);
        e = seq->body;
        continue;
      }
      if (is_leaf(e)) return ref(e);
      emit_operand_steps(e);
      return node_text(e) + type_comment(e);
    }
  }

  // The value of a let: in place when used once, else through its step.
  std::string bound_value(const Expr& value) {
    if (is_leaf(value) || memo_.count(value.get()) || use_count_[value.get()] > 1)
      return ref(value);
    emit_operand_steps(value);
    return node_text(value) + type_comment(value);
  }

  void emit_block(const BindingBlock& block) {
    emit_line(block.is_dataflow ? "dataflow {" : "bindings {");
    scope().indent += 2;
    bool saved_mode = std::exchange(scope().inline_mode, true);
    std::string outputs;
    for (const Binding& b : block.bindings) {
      std::string value = ref(b.value);  // inline mode: nested, no steps
      std::string line = define_var(b.var.get());
      if (b.var->annotation) line += ": " + type_to_string(b.var->annotation);
      line += " = " + value;
      // The annotation already says what the comment would.
      if (!b.var->annotation || !types_equal(b.var->annotation, b.value->checked_type))
        line += type_comment(b.value);
      emit_line(line + ";");
      if (block.is_dataflow && !b.var->is_dataflow)
        outputs += (outputs.empty() ? "" : ", ") + var_ref(b.var.get());
    }
    if (block.is_dataflow) emit_line("output(" + outputs + ");");
    scope().inline_mode = saved_mode;
    scope().indent -= 2;
    emit_line("}");
  }

  // ---------------------------------------------------------------- expressions

  // How e reads where it is used: a leaf, an earlier step, or a new step.
  std::string ref(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Var:
        return var_ref(as<VarNode>(e));
      case ExprKind::GlobalVar:
        return "@" + name_text(as<GlobalVarNode>(e)->name);
      case ExprKind::Op:
        return as<OpNode>(e)->name;
      case ExprKind::ExternFunc:
        return quote_string(as<ExternFuncNode>(e)->symbol);
      case ExprKind::Constant:
        return constant_ref(as<ConstantNode>(e));
      default:
        break;
    }
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    if (scope().inline_mode) return node_text(e);
    emit_operand_steps(e);
    return emit_step(e.get());
  }

  std::string emit_step(const ExprNode* node) {
    Expr e(node);
    std::string text = node_text(e);
    std::string temp = "%" + std::to_string(next_temp_++);
    emit_line(temp + " = " + text + type_comment(e) + ";");
    memo_.emplace(node, temp);
    scope().memo_added.push_back(node);
    return temp;
  }

  // The operands of a node that print in its scope (not inside its braces), as node_text reads
  // them.
  void scope_operands(const ExprNode* node, std::vector<const ExprNode*>& out) {
    out.clear();
    if (node->kind == ExprKind::Call) {
      const auto* call = static_cast<const CallNode*>(node);
      out.push_back(call->callee.get());
      for (size_t i = 0; i < call->args.size(); ++i) {
        if (i == 1 && inline_argument_tuple(call)) {
          for (const Expr& f : as<TupleNode>(call->args[1])->fields) out.push_back(f.get());
        } else {
          out.push_back(call->args[i].get());
        }
      }
    } else if (node->kind == ExprKind::Tuple) {
      for (const Expr& f : static_cast<const TupleNode*>(node)->fields) out.push_back(f.get());
    } else if (node->kind == ExprKind::TupleGetItem) {
      out.push_back(static_cast<const TupleGetItemNode*>(node)->tuple.get());
    } else if (node->kind == ExprKind::If) {
      out.push_back(static_cast<const IfNode*>(node)->cond.get());
    } else if (node->kind == ExprKind::While) {
      for (const Expr& value : static_cast<const WhileNode*>(node)->init)
        out.push_back(value.get());
    }
  }

  // Emits the steps of everything root's text refers to, in post-order. An
  // explicit stack, so a chain thousands of ops deep prints without deep recursion.
  void emit_operand_steps(const Expr& root) {
    struct Frame {
      const ExprNode* node;
      std::vector<const ExprNode*> operands;
      size_t next = 0;
    };
    std::vector<Frame> stack(1);
    stack[0].node = root.get();
    scope_operands(root.get(), stack[0].operands);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.operands.size()) {
        const ExprNode* child = top.operands[top.next++];
        if (is_leaf(Expr(child)) || memo_.count(child)) continue;
        Frame frame{child, {}, 0};
        scope_operands(child, frame.operands);
        stack.push_back(std::move(frame));
        continue;
      }
      const ExprNode* done = top.node;
      stack.pop_back();
      if (!stack.empty() && !memo_.count(done)) emit_step(done);
    }
  }

  bool inline_argument_tuple(const CallNode* call) {
    if (!takes_argument_tuple(call)) return false;
    const ExprNode* tuple = call->args[1].get();
    return !memo_.count(tuple) && use_count_[tuple] <= 1;
  }

  // The text of e's own node, with its operands as references.
  std::string node_text(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Call:
        return call_text(as<CallNode>(e));
      case ExprKind::Tuple: {
        const auto* tuple = as<TupleNode>(e);
        std::string out = "(";
        for (size_t i = 0; i < tuple->fields.size(); ++i)
          out += (i ? ", " : "") + ref(tuple->fields[i]);
        return out + (tuple->fields.size() == 1 ? ",)" : ")");
      }
      case ExprKind::TupleGetItem: {
        const auto* item = as<TupleGetItemNode>(e);
        return ref(item->tuple) + "." + std::to_string(item->index);
      }
      case ExprKind::Function: {
        const auto* fn = as<FunctionNode>(e);
        std::string head = "fn (" + params_text(*fn) + ")";
        if (fn->ret_type) head += " -> " + type_to_string(fn->ret_type);
        return braced(fn->body, head + " ");
      }
      case ExprKind::If: {
        const auto* node = as<IfNode>(e);
        std::string cond = ref(node->cond);
        std::string then_text = braced(node->then_branch, "if (" + cond + ") ");
        return then_text + braced(node->else_branch, " else ");
      }
      case ExprKind::While: {
        // while (%v: Type = init, ...) { cond } do { body }
        const auto* node = as<WhileNode>(e);
        std::string head = "while (";
        for (size_t i = 0; i < node->vars.size(); ++i) {
          const Var& var = node->vars[i];
          std::string init = ref(node->init[i]);
          head += (i ? ", " : "") + define_var(var.get());
          if (var->annotation) head += ": " + type_to_string(var->annotation);
          head += " = " + init;
        }
        std::string cond_text = braced(node->cond, head + ") ");
        return cond_text + braced(node->body, " do ");
      }
      case ExprKind::Let:
        return braced(e, "");
      case ExprKind::SeqExpr: {
        const auto* seq = as<SeqExprNode>(e);
        // "seq { x }" is a SeqExpr without blocks, which "{ x }" alone would lose.
        return seq->blocks.empty() ? braced(seq->body, "seq ") : braced(e, "");
      }
      case ExprKind::PrimFunc:
        ANVIL_ICHECK(false, "a PrimFunc prints only as a module entry (prim_func @name)");
      default:
        return ref(e);
    }
  }

  std::string call_text(const CallNode* call) {
    std::string out = ref(call->callee) + "(";
    bool argument_tuple = inline_argument_tuple(call);
    for (size_t i = 0; i < call->args.size(); ++i) {
      if (i) out += ", ";
      const Expr& arg = call->args[i];
      if (i == 1 && argument_tuple) {
        // call_tir(@f, (%a, %b), out=...): the argument list stays in the call.
        const auto* tuple = as<TupleNode>(arg);
        out += "(";
        for (size_t j = 0; j < tuple->fields.size(); ++j)
          out += (j ? ", " : "") + ref(tuple->fields[j]);
        out += ")";
      } else {
        out += ref(arg);
      }
    }
    bool first = call->args.empty();
    auto keyword = [&](const std::string& text) {
      out += (first ? "" : ", ") + text;
      first = false;
    };
    if (call->attrs)
      for (const AttrField& field : non_default_fields(*call->attrs))
        keyword(std::string(field.name) + "=" + attr_value_to_string(field.value));
    for (const Type& t : call->type_args) keyword("out=" + type_to_string(t));
    return out + ")";
  }

  std::string constant_ref(const ConstantNode* c) {
    if (std::optional<std::string> literal = constant_literal(c->data)) return *literal;
    auto [it, added] = meta_index_.emplace(c, metadata_.size());
    if (added) metadata_.push_back(c->data);
    std::string text = "meta[relay.Constant][" + std::to_string(it->second) + "]";
    if (options_.show_types)
      text +=
          " /* ty=" +
          type_to_string(TensorTypeNode::make(to_dims(c->data.shape_vector()), c->data.dtype())) +
          " */";
    return text;
  }

  std::string type_comment(const Expr& e) {
    if (!options_.show_types || !e->checked_type) return "";
    switch (e->kind) {
      case ExprKind::Call:
      case ExprKind::Tuple:
      case ExprKind::TupleGetItem:
      case ExprKind::If:
      case ExprKind::While:
        return " /* ty=" + type_to_string(e->checked_type) + " */";
      default:
        return "";
    }
  }

  std::string metadata_section() {
    if (metadata_.empty() || !options_.include_metadata) return "";
    NamedTensors tensors;
    for (size_t i = 0; i < metadata_.size(); ++i)
      tensors.emplace_back(std::to_string(i), metadata_[i].copy());
    return std::string(text::kMetadataMarker) + "\n" + text::base64_encode(save_params(tensors));
  }

  const PrintOptions& options_;
  std::vector<Scope> scopes_;
  std::unordered_map<const ExprNode*, std::string> memo_;
  std::unordered_map<const ExprNode*, int> use_count_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_set<std::string> used_names_;
  std::unordered_set<const VarNode*> defined_;
  bool annotate_free_vars_ = false;
  int next_temp_ = 0;
  std::vector<Tensor> metadata_;
  std::unordered_map<const ConstantNode*, size_t> meta_index_;
};

}  // namespace

namespace text {

bool is_destination_passing_op(std::string_view name) {
  return name == "call_tir" || name == "call_dps_packed";
}

void for_each_child(const ExprNode* node, const std::function<void(const Expr&)>& fn) {
  switch (node->kind) {
    case ExprKind::Call: {
      const auto* call = static_cast<const CallNode*>(node);
      fn(call->callee);
      for (const Expr& arg : call->args) fn(arg);
      break;
    }
    case ExprKind::Tuple:
      for (const Expr& f : static_cast<const TupleNode*>(node)->fields) fn(f);
      break;
    case ExprKind::TupleGetItem:
      fn(static_cast<const TupleGetItemNode*>(node)->tuple);
      break;
    case ExprKind::Function: {
      const auto* f = static_cast<const FunctionNode*>(node);
      for (const Var& p : f->params) fn(p);
      fn(f->body);
      break;
    }
    case ExprKind::If: {
      const auto* n = static_cast<const IfNode*>(node);
      fn(n->cond);
      fn(n->then_branch);
      fn(n->else_branch);
      break;
    }
    case ExprKind::While: {
      const auto* n = static_cast<const WhileNode*>(node);
      for (const Expr& value : n->init) fn(value);
      for (const Var& var : n->vars) fn(var);
      fn(n->cond);
      fn(n->body);
      break;
    }
    case ExprKind::Let: {
      const auto* n = static_cast<const LetNode*>(node);
      fn(n->var);
      fn(n->value);
      fn(n->body);
      break;
    }
    case ExprKind::SeqExpr: {
      const auto* n = static_cast<const SeqExprNode*>(node);
      for (const BindingBlock& block : n->blocks)
        for (const Binding& b : block.bindings) {
          fn(b.var);
          fn(b.value);
        }
      fn(n->body);
      break;
    }
    default:
      break;
  }
}

}  // namespace text

std::string print_module(const IRModule& mod, const PrintOptions& options) {
  return Printer(options).module(mod);
}

std::string print_expr(const Expr& expr, const PrintOptions& options) {
  return Printer(options).expr(expr);
}

}  // namespace anvil::ir
