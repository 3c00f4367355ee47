// Emission of one lowered PrimFunc as C: statements (c_stmt.cpp) and expressions (c_expr.cpp).
// Vector expressions are computed one lane at a time: a statement holding them becomes a small
// loop over a `lane` index, in which each vector subexpression is printed as its value at that
// lane, so the output stays portable C that any compiler may vectorize again.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "anvil/tir/tir.h"
#include "c_support.h"

namespace anvil::codegen::c_backend {

// What the file being generated shares among its functions.
struct FileContext {
  NameTable names;
  HelperSet helpers;
  // Extern functions called, by name: their prototype.
  std::map<std::string, std::string> extern_prototypes;
  // Functions declared without a prototype of ours: <math.h>'s and this file's plain functions.
  std::set<std::string> declared_functions = c_library_functions();
  // Outlined parallel bodies (closure struct and function), in definition order.
  std::vector<std::string> outlined;
};

// The parameter list of a packed function in C (AnvilPackedCFunc's).
inline constexpr const char* kPackedParameters =
    "(const AnvilValue* args, const int32_t* type_codes, int32_t num_args, AnvilValue* ret, "
    "int32_t* ret_type_code)";

// The prototype FunctionEmitter::emit_plain gives func under c_name.
std::string plain_prototype(const tir::PrimFunc& func, const std::string& c_name);

class FunctionEmitter {
 public:
  FunctionEmitter(FileContext& file, const tir::PrimFunc& func);
  // The C definition of the function under c_name (outlined parallel bodies go to the file's
  // context), for the packed calling convention or as a plain C function.
  std::string emit_packed(const std::string& c_name);
  std::string emit_plain(const std::string& c_name);

 private:
  // How a tensor-IR variable appears in C.
  struct Binding {
    std::string name;       // the C identifier
    bool is_array = false;  // a vector held as one array element per lane
    tir::PrimExpr inlined;  // set: print this expression instead (an unhoisted Let)
  };
  // The Let expressions hoisted ahead of one statement, and their variables.
  struct Hoisted {
    std::vector<const tir::VarNode*> vars;
    std::vector<const tir::LetNode*> lets;
  };

  // ---- statements (c_stmt.cpp)
  void emit_stmt(const tir::Stmt& stmt);
  void emit_let_stmt(const tir::LetStmtNode* let);
  void emit_assert(const tir::AssertStmtNode* assert_stmt);
  void emit_store(const tir::BufferStoreNode* store);
  void emit_allocate(const tir::AllocateNode* allocate);
  void emit_for(const tir::ForNode* loop);
  void emit_parallel_for(const tir::ForNode* loop);
  void emit_if(const tir::IfThenElseNode* branch);
  void emit_evaluate(const tir::EvaluateNode* evaluate);
  // Frees the live workspace blocks of the current C function and returns -1: the failure
  // path, after the last error was set.
  void emit_fail_return();
  // Declares the variable bound to value (a const scalar, or an array filled lane by lane).
  void declare_var(const tir::Var& var, const tir::PrimExpr& value);
  // Emits the body of one function: the statement, then `return 0;`.
  void emit_body_and_return(const tir::Stmt& body);

  // ---- expressions (c_expr.cpp)
  // e as a C expression; for a vector e, its value at lane `lane` (a C expression).
  std::string print(const tir::PrimExpr& e, const std::string& lane = "");
  std::string print_binary(const tir::PrimExprNode* node, const std::string& lane);
  std::string print_cast(DataType to, const tir::PrimExpr& value, const std::string& lane);
  std::string print_call(const tir::CallNode* call, const std::string& lane);
  std::string print_math(const tir::CallNode* call, const std::string& lane);
  std::string print_builtin(const tir::CallNode* call, const std::string& lane);
  std::string print_load(const tir::BufferLoadNode* load, const std::string& lane);
  std::string print_var(const tir::VarNode* var, const std::string& lane);
  // The element at index of buffer data as an lvalue of its storage type.
  std::string element_lvalue(const tir::Buffer& buffer, const std::string& index);
  // value (of dtype) converted to dtype's storage type, for a store.
  std::string to_storage(DataType dtype, const std::string& value);
  // The result of arithmetic in C rounded back to dtype (half-like, narrow integers).
  std::string fit(DataType dtype, const std::string& value);
  // Emits declarations for the Let expressions inside e that may be computed before the
  // statement holding e (not under a branch that evaluates lazily), recording them in `bound`
  // so the caller can drop them after the statement.
  void hoist_lets(const tir::PrimExpr& e, Hoisted& bound, bool lazily_evaluated = false);

  // ---- scopes
  std::string bind(const tir::VarNode* var, Binding binding);
  void unbind(const tir::VarNode* var);
  void unbind_all(Hoisted& hoisted);
  const Binding& lookup(const tir::VarNode* var) const;
  void line(const std::string& text);
  void open_block(const std::string& head);  // "head {" and indent
  void close_block(const std::string& tail = "}");

  FileContext& file_;
  tir::PrimFunc func_;
  std::string func_name_;  // the global symbol, for messages
  // Local identifiers: unique within the function and apart from the file's global names.
  NameTable names_;
  std::unordered_map<const tir::VarNode*, std::vector<Binding>> bindings_;
  // Let expressions whose variable is declared before the current statement (a multiset: one
  // node may sit in several places of a statement).
  std::unordered_multiset<const tir::LetNode*> hoisted_lets_;
  // Every variable the body reads (to silence unused ones).
  std::unordered_set<const tir::VarNode*> used_vars_;
  // The C function being written: its text, indentation and live workspace blocks.
  std::string out_;
  int indent_ = 0;
  std::vector<std::string> live_workspaces_;
  int parallel_count_ = 0;
};

}  // namespace anvil::codegen::c_backend
