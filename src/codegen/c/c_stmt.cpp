// Statements of the C back end, the outlining of parallel loops, and the two kinds of function
// (packed calling convention, plain C parameters).
#include <algorithm>
#include <optional>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "c_function.h"

namespace anvil::codegen::c_backend {

using namespace tir;

namespace {

// Allocations up to this size with a constant extent live on the C stack; larger or symbolic
// ones come from the runtime's workspace allocator (thread-pool stacks are not unbounded).
constexpr int64_t kMaxStackAllocationBytes = 16 * 1024;

// Variables a statement reads, in first-use order, and the ones it binds itself.
class VarUses : public Visitor {
 public:
  std::vector<const VarNode*> order;
  std::unordered_set<const VarNode*> used, bound;

  void visit_Var(const VarNode* var) override { use(var); }
  void visit_buffer(const Buffer& buffer) override { use(buffer->data.get()); }
  void visit_Let(const LetNode* let) override {
    bound.insert(let->var.get());
    Visitor::visit_Let(let);
  }
  void visit_LetStmt(const LetStmtNode* let) override {
    bound.insert(let->var.get());
    Visitor::visit_LetStmt(let);
  }
  void visit_For(const ForNode* loop) override {
    bound.insert(loop->loop_var.get());
    Visitor::visit_For(loop);
  }
  void visit_Allocate(const AllocateNode* allocate) override {
    // Its data pointer is bound here; only the size is read.
    bound.insert(allocate->buffer->data.get());
    for (const PrimExpr& dim : allocate->buffer->shape) visit(dim);
    visit(allocate->body);
  }

  // Read but bound elsewhere.
  std::vector<const VarNode*> free_vars() const {
    std::vector<const VarNode*> out;
    for (const VarNode* v : order)
      if (!bound.count(v)) out.push_back(v);
    return out;
  }

 private:
  void use(const VarNode* var) {
    if (used.insert(var).second) order.push_back(var);
  }
};

// text without its outer parentheses when they enclose all of it: `if ((a == b))` draws a
// warning from clang (-Wparentheses-equality).
std::string strip_parens(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return text;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')') --depth;
    if (depth == 0) return text;  // the first parenthesis closes before the end
  }
  return text.substr(1, text.size() - 2);
}

std::optional<int64_t> constant_elements(const Buffer& buffer) {
  int64_t n = 1;
  for (const PrimExpr& dim : buffer->shape) {
    auto d = as_const_int(dim);
    if (!d) return std::nullopt;
    n *= *d;
  }
  return n;
}

}  // namespace

FunctionEmitter::FunctionEmitter(FileContext& file, const PrimFunc& func)
    : file_(file), func_(func), func_name_(func->global_symbol()), names_(file.names) {
  VarUses uses;
  uses.visit(func->body);
  used_vars_ = std::move(uses.used);
}

// ---------------------------------------------------------------- scopes and output

std::string FunctionEmitter::bind(const VarNode* var, Binding binding) {
  if (!binding.inlined && binding.name.empty()) binding.name = names_.fresh(var->name);
  bindings_[var].push_back(binding);
  return binding.name;
}

void FunctionEmitter::unbind(const VarNode* var) {
  auto it = bindings_.find(var);
  ANVIL_ICHECK(it != bindings_.end() && !it->second.empty(), "C back end: unbinding ", var->name);
  it->second.pop_back();
  if (it->second.empty()) bindings_.erase(it);
}

void FunctionEmitter::unbind_all(Hoisted& hoisted) {
  for (auto it = hoisted.vars.rbegin(); it != hoisted.vars.rend(); ++it) unbind(*it);
  for (const LetNode* let : hoisted.lets) hoisted_lets_.erase(hoisted_lets_.find(let));
  hoisted.vars.clear();
  hoisted.lets.clear();
}

const FunctionEmitter::Binding& FunctionEmitter::lookup(const VarNode* var) const {
  auto it = bindings_.find(var);
  if (it == bindings_.end())
    throw_error("C back end: function '", func_name_, "' reads variable '", var->name,
                "' where it is not defined");
  return it->second.back();
}

void FunctionEmitter::line(const std::string& text) {
  out_.append(size_t(indent_) * 2, ' ');
  out_ += text;
  out_ += '\n';
}

void FunctionEmitter::open_block(const std::string& head) {
  line(head.empty() ? "{" : head + " {");
  ++indent_;
}

void FunctionEmitter::close_block(const std::string& tail) {
  --indent_;
  line(tail);
}

void FunctionEmitter::emit_fail_return() {
  for (auto it = live_workspaces_.rbegin(); it != live_workspaces_.rend(); ++it)
    line("(void)AnvilBackendFreeWorkspace(" + *it + ");");
  line("return -1;");
}

void FunctionEmitter::declare_var(const Var& var, const PrimExpr& value) {
  DataType t = var->dtype;
  if (t.lanes == 1) {
    std::string text = print(value);
    std::string name = bind(var.get(), {});
    line(t.is_handle() ? "void* const " + name + " = " + text + ";"
                       : "const " + value_type(t) + " " + name + " = " + text + ";");
    if (!used_vars_.count(var.get())) line("(void)" + name + ";");
    return;
  }
  std::string text = print(value, "lane");
  std::string name = names_.fresh(var->name);
  line(str_cat(value_type(t), " ", name, "[", int(t.lanes), "];"));
  open_block(str_cat("for (int32_t lane = 0; lane < ", int(t.lanes), "; ++lane)"));
  line(name + "[lane] = " + text + ";");
  close_block();
  bind(var.get(), Binding{name, true, nullptr});
}

// ---------------------------------------------------------------- statements

void FunctionEmitter::emit_stmt(const Stmt& stmt) {
  switch (stmt->kind) {
    case StmtKind::LetStmt:
      return emit_let_stmt(as<LetStmtNode>(stmt));
    case StmtKind::AssertStmt:
      return emit_assert(as<AssertStmtNode>(stmt));
    case StmtKind::BufferStore:
      return emit_store(as<BufferStoreNode>(stmt));
    case StmtKind::Allocate:
      return emit_allocate(as<AllocateNode>(stmt));
    case StmtKind::For:
      return emit_for(as<ForNode>(stmt));
    case StmtKind::IfThenElse:
      return emit_if(as<IfThenElseNode>(stmt));
    case StmtKind::SeqStmt:
      for (const Stmt& s : as<SeqStmtNode>(stmt)->seq) emit_stmt(s);
      return;
    case StmtKind::Evaluate:
      return emit_evaluate(as<EvaluateNode>(stmt));
    case StmtKind::Block:
    case StmtKind::BlockRealize:
      throw_error("C back end: function '", func_name_,
                  "' is not lowered: it still holds blocks (run tir::transform::lower first)");
  }
}

void FunctionEmitter::emit_let_stmt(const LetStmtNode* let) {
  Hoisted bound;
  hoist_lets(let->value, bound);
  declare_var(let->var, let->value);
  emit_stmt(let->body);
  unbind(let->var.get());
  unbind_all(bound);
}

void FunctionEmitter::emit_assert(const AssertStmtNode* assert_stmt) {
  Hoisted bound;
  hoist_lets(assert_stmt->condition, bound);
  open_block("if (!" + print(assert_stmt->condition) + ")");
  line("AnvilSetLastError(" + string_literal(assert_stmt->message) + ");");
  emit_fail_return();
  close_block();
  unbind_all(bound);
  emit_stmt(assert_stmt->body);
}

void FunctionEmitter::emit_store(const BufferStoreNode* store) {
  if (store->indices.size() != 1)
    throw_error("C back end: function '", func_name_, "' is not flattened: buffer '",
                store->buffer->name, "' is written with ", store->indices.size(), " indices");
  Hoisted bound;
  hoist_lets(store->value, bound);
  hoist_lets(store->indices[0], bound);
  DataType t = store->value.dtype();
  if (t.lanes == 1) {
    line(element_lvalue(store->buffer, print(store->indices[0])) + " = " +
         to_storage(t, print(store->value)) + ";");
    unbind_all(bound);
    return;
  }
  std::string lanes = str_cat(int(t.lanes));
  std::string loop_head = "for (int32_t lane = 0; lane < " + lanes + "; ++lane)";
  std::string target = element_lvalue(store->buffer, print(store->indices[0], "lane"));
  bool reads_memory = false;
  pre_order_visit(store->value, [&](const PrimExpr& e) {
    reads_memory = reads_memory || e.kind() == ExprKind::BufferLoad;
  });
  if (!reads_memory) {
    open_block(loop_head);
    line(target + " = " + to_storage(t, print(store->value, "lane")) + ";");
    close_block();
  } else {
    // A vector store writes all lanes after reading all of them; staging keeps that order when
    // the lanes read what other lanes write.
    std::string staged = names_.fresh("vec");
    open_block("");
    line(value_type(t) + " " + staged + "[" + lanes + "];");
    open_block(loop_head);
    line(staged + "[lane] = " + print(store->value, "lane") + ";");
    close_block();
    open_block(loop_head);
    line(target + " = " + to_storage(t, staged + "[lane]") + ";");
    close_block();
    close_block();
  }
  unbind_all(bound);
}

void FunctionEmitter::emit_allocate(const AllocateNode* allocate) {
  const Buffer& buffer = allocate->buffer;
  int64_t element_bytes = buffer->dtype.is_bool() ? 1 : buffer->dtype.bytes();
  int alignment = std::max(64, buffer->data_alignment);
  std::optional<int64_t> elements = constant_elements(buffer);
  open_block("");
  if (elements && *elements * element_bytes <= kMaxStackAllocationBytes) {
    std::string storage = names_.fresh(buffer->name + "_storage");
    line(str_cat("ANVIL_ALIGNED(", alignment, ") ", storage_type(buffer->dtype), " ", storage, "[",
                 std::max<int64_t>(*elements, 1), "];"));
    std::string name = bind(buffer->data.get(), {});
    line("void* const " + name + " = " + storage + ";");
    if (!used_vars_.count(buffer->data.get())) line("(void)" + name + ";");
    emit_stmt(allocate->body);
    unbind(buffer->data.get());
    close_block();
    return;
  }
  Hoisted bound;
  std::string bytes = str_cat("UINT64_C(", element_bytes, ")");
  for (const PrimExpr& dim : buffer->shape) {
    hoist_lets(dim, bound);
    bytes += " * (uint64_t)" + print(dim);
  }
  std::string name = bind(buffer->data.get(), {});
  line(str_cat("void* const ", name, " = AnvilBackendAllocWorkspace(", bytes, ", UINT64_C(",
               alignment, "));"));
  open_block("if (" + name + " == NULL)");
  emit_fail_return();
  close_block();
  live_workspaces_.push_back(name);
  emit_stmt(allocate->body);
  live_workspaces_.pop_back();
  open_block("if (AnvilBackendFreeWorkspace(" + name + ") != 0)");
  emit_fail_return();
  close_block();
  unbind(buffer->data.get());
  unbind_all(bound);
  close_block();
}

void FunctionEmitter::emit_for(const ForNode* loop) {
  if (loop->for_kind == ForKind::Parallel) return emit_parallel_for(loop);
  Hoisted bound;
  hoist_lets(loop->min, bound);
  hoist_lets(loop->extent, bound);
  std::string type = value_type(loop->loop_var->dtype);
  std::string min = print(loop->min);
  std::string extent = print(loop->extent);
  std::string var = bind(loop->loop_var.get(), {});
  auto const_min = as_const_int(loop->min);
  auto const_extent = as_const_int(loop->extent);
  if (const_min && const_extent) {
    std::string end = int_literal(loop->loop_var->dtype, *const_min + *const_extent);
    open_block(
        str_cat("for (", type, " ", var, " = ", min, "; ", var, " < ", end, "; ++", var, ")"));
  } else {
    // min and extent are evaluated once, before the first iteration.
    std::string end = names_.fresh(var + "_end");
    std::string end_value = is_zero(loop->min) ? extent : var + " + " + extent;
    open_block(str_cat("for (", type, " ", var, " = ", min, ", ", end, " = ", end_value, "; ", var,
                       " < ", end, "; ++", var, ")"));
  }
  emit_stmt(loop->body);
  close_block();
  unbind(loop->loop_var.get());
  unbind_all(bound);
}

void FunctionEmitter::emit_parallel_for(const ForNode* loop) {
  Hoisted bound;
  hoist_lets(loop->min, bound);
  hoist_lets(loop->extent, bound);
  std::string type = value_type(loop->loop_var->dtype);
  std::string min = print(loop->min);
  std::string extent = print(loop->extent);

  VarUses uses;
  uses.visit(loop->body);
  std::vector<const VarNode*> captured;
  for (const VarNode* v : uses.free_vars())
    if (v != loop->loop_var.get()) captured.push_back(v);

  // The closure: every variable the body reads from outside, then the loop's range.
  // The outlined function and its closure type are file-level names.
  std::string lambda = file_.names.fresh(str_cat(func_name_, "_parallel_", parallel_count_++));
  std::string closure_type = file_.names.fresh(lambda + "_closure");
  names_.reserve(lambda);
  names_.reserve(closure_type);
  std::string min_field = names_.fresh(loop->loop_var->name + "_min");
  std::string extent_field = names_.fresh(loop->loop_var->name + "_extent");
  std::string env_ptr = names_.fresh("env");
  std::string closure_def = "typedef struct {\n";
  std::vector<std::string> unpack;  // the lambda's copies of the captured variables
  for (const VarNode* v : captured) {
    const Binding& b = lookup(v);
    ANVIL_ICHECK(!b.inlined, "C back end: captured variable '", v->name, "' has no storage");
    if (b.is_array) {
      std::string t = value_type(v->dtype);
      closure_def += "  " + t + "* " + b.name + ";\n";
      unpack.push_back(t + "* const " + b.name + " = " + env_ptr + "->" + b.name + ";");
    } else if (v->dtype.is_handle()) {
      closure_def += "  void* " + b.name + ";\n";
      unpack.push_back("void* const " + b.name + " = " + env_ptr + "->" + b.name + ";");
    } else {
      std::string t = value_type(v->dtype);
      closure_def += "  " + t + " " + b.name + ";\n";
      unpack.push_back("const " + t + " " + b.name + " = " + env_ptr + "->" + b.name + ";");
    }
  }
  closure_def += str_cat("  ", type, " ", min_field, ";\n  ", type, " ", extent_field, ";\n} ",
                         closure_type, ";\n");

  // The lambda runs the task's contiguous share of the iterations; it is a C function of its
  // own, so it gets its own text, indentation and workspace blocks.
  std::string saved_out = std::move(out_);
  int saved_indent = indent_;
  std::vector<std::string> saved_workspaces = std::move(live_workspaces_);
  out_.clear();
  indent_ = 0;
  live_workspaces_.clear();
  std::string task = names_.fresh("task_id");
  std::string num_tasks = names_.fresh("num_tasks");
  std::string closure_arg = names_.fresh("closure");
  std::string chunk = names_.fresh("chunk");
  std::string begin = names_.fresh("begin");
  std::string end = names_.fresh("end");
  open_block(str_cat("static int32_t ", lambda, "(int32_t ", task, ", int32_t ", num_tasks,
                     ", void* ", closure_arg, ")"));
  line("const " + closure_type + "* " + env_ptr + " = (const " + closure_type + "*)" + closure_arg +
       ";");
  for (const std::string& u : unpack) line(u);
  std::string field_min = env_ptr + "->" + min_field;
  std::string field_extent = env_ptr + "->" + extent_field;
  line(str_cat("const ", type, " ", chunk, " = (", type, ")((", field_extent, " + ", num_tasks,
               " - 1) / ", num_tasks, ");"));
  line(str_cat("const ", type, " ", begin, " = (", type, ")(", field_min, " + ", task, " * ", chunk,
               ");"));
  line(str_cat(type, " ", end, " = (", type, ")(", begin, " + ", chunk, ");"));
  open_block(str_cat("if (", end, " > ", field_min, " + ", field_extent, ")"));
  line(str_cat(end, " = (", type, ")(", field_min, " + ", field_extent, ");"));
  close_block();
  std::string var = bind(loop->loop_var.get(), {});
  open_block(
      str_cat("for (", type, " ", var, " = ", begin, "; ", var, " < ", end, "; ++", var, ")"));
  emit_stmt(loop->body);
  close_block();
  unbind(loop->loop_var.get());
  line("return 0;");
  close_block();
  file_.outlined.push_back(closure_def + "\n" + out_);
  out_ = std::move(saved_out);
  indent_ = saved_indent;
  live_workspaces_ = std::move(saved_workspaces);

  // The launch: fill the closure, run the tasks, pass a failure on.
  std::string env = names_.fresh(lambda + "_env");
  open_block("");
  line(closure_type + " " + env + ";");
  for (const VarNode* v : captured) {
    const std::string& name = lookup(v).name;
    line(env + "." + name + " = " + name + ";");
  }
  line(env + "." + min_field + " = " + min + ";");
  line(env + "." + extent_field + " = " + extent + ";");
  open_block("if (AnvilParallelLaunch(" + lambda + ", &" + env + ", 0) != 0)");
  emit_fail_return();
  close_block();
  close_block();
  unbind_all(bound);
}

void FunctionEmitter::emit_if(const IfThenElseNode* branch) {
  Hoisted bound;
  hoist_lets(branch->condition, bound);
  open_block("if (" + strip_parens(print(branch->condition)) + ")");
  emit_stmt(branch->then_case);
  if (branch->else_case) {
    close_block("} else {");
    ++indent_;
    emit_stmt(branch->else_case);
  }
  close_block();
  unbind_all(bound);
}

void FunctionEmitter::emit_evaluate(const EvaluateNode* evaluate) {
  const PrimExpr& value = evaluate->value;
  if (as<IntImmNode>(value)) return;  // a no-op (an empty sequence)
  Hoisted bound;
  hoist_lets(value, bound);
  if (value.dtype().lanes > 1) {
    open_block(str_cat("for (int32_t lane = 0; lane < ", int(value.dtype().lanes), "; ++lane)"));
    line("(void)" + print(value, "lane") + ";");
    close_block();
  } else {
    line("(void)" + print(value) + ";");
  }
  unbind_all(bound);
}

// ---------------------------------------------------------------- functions

void FunctionEmitter::emit_body_and_return(const Stmt& body) {
  emit_stmt(body);
  line("return 0;");
  close_block();
}

std::string FunctionEmitter::emit_packed(const std::string& c_name) {
  const auto& params = func_->params;
  static const DataType kParamTypes[] = {DataType::handle(), DataType::handle(), DataType::int32(),
                                         DataType::handle(), DataType::handle()};
  bool ok = params.size() == 5;
  for (size_t i = 0; ok && i < 5; ++i) ok = params[i]->dtype == kParamTypes[i];
  if (!ok)
    throw_error("C back end: packed function '", func_name_,
                "' must take (args: handle, arg_type_codes: handle, num_args: int32, "
                "ret_value: handle, ret_type_code: handle)");
  static const char* const kCTypes[] = {"const AnvilValue* ", "const int32_t* ", "int32_t ",
                                        "AnvilValue* ", "int32_t* "};
  std::string signature = "ANVIL_EXPORT int32_t " + c_name + "(";
  std::vector<std::string> names;
  for (size_t i = 0; i < 5; ++i) {
    names.push_back(bind(params[i].get(), {}));
    signature += (i ? ", " : "") + std::string(kCTypes[i]) + names.back();
  }
  out_.clear();
  indent_ = 0;
  open_block(signature + ")");
  for (size_t i = 0; i < 5; ++i)
    if (!used_vars_.count(params[i].get())) line("(void)" + names[i] + ";");
  emit_body_and_return(func_->body);
  return out_;
}

std::string FunctionEmitter::emit_plain(const std::string& c_name) {
  std::string signature = "ANVIL_EXPORT int32_t " + c_name + "(";
  std::vector<std::string> names;
  for (const Var& p : func_->params) {
    names.push_back(bind(p.get(), {}));
    signature += (names.size() > 1 ? ", " : "") + value_type(p->dtype) + " " + names.back();
  }
  if (names.empty()) signature += "void";
  out_.clear();
  indent_ = 0;
  open_block(signature + ")");
  for (size_t i = 0; i < names.size(); ++i)
    if (!used_vars_.count(func_->params[i].get())) line("(void)" + names[i] + ";");
  // A buffer's data pointer is its parameter.
  for (const auto& [param, buffer] : func_->buffer_map) {
    if (buffer->data.get() == param.get() || !used_vars_.count(buffer->data.get())) continue;
    std::string data = bind(buffer->data.get(), {});
    line("void* const " + data + " = " + lookup(param.get()).name + ";");
  }
  emit_body_and_return(func_->body);
  return out_;
}

// The prototype emit_plain gives func under c_name.
std::string plain_prototype(const PrimFunc& func, const std::string& c_name) {
  std::string out = "ANVIL_EXPORT int32_t " + c_name + "(";
  for (size_t i = 0; i < func->params.size(); ++i)
    out += (i ? ", " : "") + value_type(func->params[i]->dtype);
  return out + (func->params.empty() ? "void);" : ");");
}

}  // namespace anvil::codegen::c_backend
