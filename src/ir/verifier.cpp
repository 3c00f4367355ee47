// Well-formedness of graph IR modules: variables bound once and used in
// scope, dataflow variables kept inside their blocks, global functions that
// exist, and (after InferType) a type on every expression. The walk keeps an
// explicit task stack, as graph bodies are too deep for recursion.
#include "anvil/ir/verifier.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/text_util.h"

namespace anvil::ir {
namespace {

// Untyped expressions reported per function before the rest are summed up.
constexpr int kMaxTypeReports = 5;

std::string var_text(const VarNode* v) { return "%" + text::name_text(v->name); }

std::string describe(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::Var:
      return "variable " + var_text(static_cast<const VarNode*>(e));
    case ExprKind::Call: {
      const auto* call = static_cast<const CallNode*>(e);
      if (const OpNode* op = call->op()) return "call of " + op->name;
      if (const auto* g = as<GlobalVarNode>(call->callee)) return "call of @" + g->name;
      return "call";
    }
    case ExprKind::Constant:
      return "constant";
    case ExprKind::Tuple:
      return "tuple";
    case ExprKind::TupleGetItem:
      return str_cat("tuple item .", static_cast<const TupleGetItemNode*>(e)->index);
    case ExprKind::Function:
      return "function";
    case ExprKind::If:
      return "if";
    case ExprKind::While:
      return "while";
    case ExprKind::Let:
      return "let of " + var_text(static_cast<const LetNode*>(e)->var.get());
    case ExprKind::SeqExpr:
      return "binding blocks";
    default:
      return expr_kind_name(e->kind);
  }
}

class FunctionChecker {
 public:
  FunctionChecker(const IRModule& mod, const std::string& name, const VerifyOptions& options,
                  std::vector<std::string>& problems)
      : mod_(mod), where_("@" + name), options_(options), problems_(problems) {}

  void run(const FunctionNode& fn) {
    Expr root(&fn);
    collect_definitions(root);
    tasks_.push_back({Task::Visit, root.get()});
    while (!tasks_.empty()) {
      Task task = tasks_.back();
      tasks_.pop_back();
      switch (task.kind) {
        case Task::Visit:
          visit(task.node);
          break;
        case Task::Define:
          define(task.node, frames_.back());
          break;
        case Task::DefineOuter:
          define(task.node, frames_[frames_.size() - 2]);
          break;
        case Task::Open:
          frames_.push_back(int(active_.size()));
          active_.push_back(true);
          break;
        case Task::Close:
          active_[size_t(frames_.back())] = false;
          frames_.pop_back();
          break;
      }
    }
    if (untyped_ > kMaxTypeReports)
      report(str_cat(where_, ": ", untyped_ - kMaxTypeReports, " more expressions have no type"));
  }

 private:
  struct Task {
    enum Kind { Visit, Define, DefineOuter, Open, Close } kind;
    const ExprNode* node;
  };

  void report(std::string message) { problems_.push_back(std::move(message)); }

  // Where each variable is bound, found before the walk so that a use out of
  // scope can say whether the variable exists elsewhere.
  void collect_definitions(const Expr& root) {
    std::unordered_map<const VarNode*, int> count;
    std::vector<const VarNode*> order;
    auto bind = [&](const Var& v, bool in_dataflow_block) {
      if (count[v.get()]++ == 0) order.push_back(v.get());
      if (v->is_dataflow && !in_dataflow_block)
        report(where_ + ": dataflow variable " + var_text(v.get()) +
               " is bound outside a dataflow block");
    };
    std::unordered_set<const ExprNode*> seen{root.get()};
    std::unordered_set<std::string> reported_globals;
    std::vector<const ExprNode*> stack{root.get()};
    while (!stack.empty()) {
      const ExprNode* node = stack.back();
      stack.pop_back();
      if (const auto* fn = as<FunctionNode>(Expr(node))) {
        for (const Var& p : fn->params) bind(p, false);
      } else if (const auto* let = as<LetNode>(Expr(node))) {
        bind(let->var, false);
      } else if (const auto* seq = as<SeqExprNode>(Expr(node))) {
        for (const BindingBlock& block : seq->blocks)
          for (const Binding& b : block.bindings) bind(b.var, block.is_dataflow);
      } else if (const auto* g = as<GlobalVarNode>(Expr(node))) {
        if (!mod_.contains(g->name) && reported_globals.insert(g->name).second)
          report(where_ + " refers to @" + g->name + ", which the module does not define");
      }
      // Children go on the stack last-first, so problems are reported in text order.
      std::vector<const ExprNode*> children;
      text::for_each_child(node, [&](const Expr& c) {
        if (seen.insert(c.get()).second) children.push_back(c.get());
      });
      stack.insert(stack.end(), children.rbegin(), children.rend());
    }
    for (const VarNode* v : order) {
      defined_.insert(v);
      if (count[v] > 1)
        report(str_cat(where_, ": variable ", var_text(v), " is bound ", count[v], " times"));
    }
  }

  void define(const ExprNode* var, int frame) {
    frame_of_[static_cast<const VarNode*>(var)] = frame;
  }

  bool in_scope(const VarNode* v) const {
    auto it = frame_of_.find(v);
    return it != frame_of_.end() && active_[size_t(it->second)];
  }

  void check_type(const ExprNode* e) {
    if (!options_.require_types || e->checked_type) return;
    switch (e->kind) {
      case ExprKind::Op:
      case ExprKind::ExternFunc:
      case ExprKind::GlobalVar:  // may name a PrimFunc, which has no graph type
      case ExprKind::PrimFunc:
        return;
      default:
        break;
    }
    if (++untyped_ <= kMaxTypeReports)
      report(where_ + ": " + describe(e) + " has no type (run InferType)");
  }

  void use(const VarNode* v) {
    if (in_scope(v) || !reported_vars_.insert(v).second) return;
    if (!defined_.count(v))
      report(where_ + ": variable " + var_text(v) + " is free (bound nowhere in the function)");
    else if (v->is_dataflow)
      report(where_ + ": dataflow variable " + var_text(v) + " is used outside its dataflow block");
    else
      report(where_ + ": variable " + var_text(v) + " is used outside its scope");
  }

  // Queues tasks so that they run in the order given.
  void schedule(std::initializer_list<Task> tasks) { schedule(std::vector<Task>(tasks)); }
  void schedule(const std::vector<Task>& tasks) {
    tasks_.insert(tasks_.end(), tasks.rbegin(), tasks.rend());
  }

  void visit(const ExprNode* e) {
    if (e->kind == ExprKind::Var) {
      use(static_cast<const VarNode*>(e));  // its type is checked where it is bound
      return;
    }
    // A node checked in a scope that is still open needs no second look: every
    // variable it saw is still visible.
    int frame = frames_.empty() ? -1 : frames_.back();
    auto it = visited_in_.find(e);
    if (it != visited_in_.end() && (it->second < 0 || active_[size_t(it->second)])) return;
    bool first_time = it == visited_in_.end();
    visited_in_[e] = frame;
    if (first_time) check_type(e);

    std::vector<Task> next;
    auto visit_child = [&](const Expr& c) { next.push_back({Task::Visit, c.get()}); };
    switch (e->kind) {
      case ExprKind::Function: {
        const auto* fn = static_cast<const FunctionNode*>(e);
        next.push_back({Task::Open, nullptr});
        for (const Var& p : fn->params) {
          next.push_back({Task::Define, p.get()});
          if (first_time) check_type(p.get());
        }
        visit_child(fn->body);
        next.push_back({Task::Close, nullptr});
        break;
      }
      case ExprKind::Let: {
        const auto* let = static_cast<const LetNode*>(e);
        // The variable is visible in its own value, for recursive functions.
        schedule({{Task::Open, nullptr},
                  {Task::Define, let->var.get()},
                  {Task::Visit, let->value.get()},
                  {Task::Visit, let->body.get()},
                  {Task::Close, nullptr}});
        if (first_time) check_type(let->var.get());
        return;
      }
      case ExprKind::If: {
        const auto* n = static_cast<const IfNode*>(e);
        schedule({{Task::Visit, n->cond.get()},
                  {Task::Open, nullptr},
                  {Task::Visit, n->then_branch.get()},
                  {Task::Close, nullptr},
                  {Task::Open, nullptr},
                  {Task::Visit, n->else_branch.get()},
                  {Task::Close, nullptr}});
        return;
      }
      case ExprKind::While: {
        // The initial values see the enclosing scope; the vars, cond and body one of their own.
        const auto* loop = static_cast<const WhileNode*>(e);
        for (const Expr& value : loop->init) visit_child(value);
        next.push_back({Task::Open, nullptr});
        for (const Var& var : loop->vars) {
          next.push_back({Task::Define, var.get()});
          if (first_time) check_type(var.get());
        }
        visit_child(loop->cond);
        visit_child(loop->body);
        next.push_back({Task::Close, nullptr});
        break;
      }
      case ExprKind::SeqExpr: {
        const auto* seq = static_cast<const SeqExprNode*>(e);
        next.push_back({Task::Open, nullptr});
        for (const BindingBlock& block : seq->blocks) {
          // Dataflow variables live in a scope of their own that ends with the block.
          if (block.is_dataflow) next.push_back({Task::Open, nullptr});
          for (const Binding& b : block.bindings) {
            visit_child(b.value);
            bool outer = block.is_dataflow && !b.var->is_dataflow;
            next.push_back({outer ? Task::DefineOuter : Task::Define, b.var.get()});
            if (first_time) check_type(b.var.get());
          }
          if (block.is_dataflow) next.push_back({Task::Close, nullptr});
        }
        visit_child(seq->body);
        next.push_back({Task::Close, nullptr});
        break;
      }
      default:
        text::for_each_child(e, visit_child);
    }
    schedule(next);
  }

  const IRModule& mod_;
  std::string where_;
  const VerifyOptions& options_;
  std::vector<std::string>& problems_;
  std::vector<Task> tasks_;
  std::vector<int> frames_;   // ids of the open scopes, innermost last
  std::vector<bool> active_;  // by scope id: still open
  std::unordered_map<const VarNode*, int> frame_of_;
  std::unordered_map<const ExprNode*, int> visited_in_;
  std::unordered_set<const VarNode*> defined_;
  std::unordered_set<const VarNode*> reported_vars_;
  int untyped_ = 0;
};

}  // namespace

std::vector<std::string> verify(const IRModule& mod, const VerifyOptions& options) {
  std::vector<std::string> problems;
  for (const auto& [name, func] : mod.functions()) {
    if (func->kind != ExprKind::Function) continue;  // PrimFuncs have the tensor IR's verifier
    FunctionChecker(mod, name, options, problems).run(static_cast<const FunctionNode&>(*func));
  }
  return problems;
}

void check_well_formed(const IRModule& mod, const VerifyOptions& options) {
  std::vector<std::string> problems = verify(mod, options);
  if (problems.empty()) return;
  std::string text;
  for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
  ANVIL_ICHECK(false, "ill-formed IR: ", text);
}

}  // namespace anvil::ir
