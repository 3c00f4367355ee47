// The printer of the tensor IR text, split over printer_expr.cpp
// (expressions, names, numbers), printer_stmt.cpp (statements, loops,
// blocks) and printer.cpp (functions and the public entry points).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir::text {

// Python's binding strengths, loosest first; an operand printed at a lower
// strength than its context needs gets parentheses.
enum Precedence : int {
  kPrecOr = 1,
  kPrecAnd,
  kPrecNot,
  kPrecCompare,
  kPrecAdd,
  kPrecMul,
  kPrecUnary,
  kPrecAtom,
};

// The dtype an intrinsic call gets when written as T.name(args), or nullopt when
// the name alone does not say (then the text spells T.call_intrin("dtype", ...)).
std::optional<DataType> natural_intrinsic_dtype(std::string_view name,
                                                const std::vector<PrimExpr>& args);

// Shortest decimal text that reads back to exactly value ("0", "1.5", "1e-05").
std::string format_double(double value);

class TirPrinter {
 public:
  // In function mode, buffers that no statement defines are declared with
  // T.Buffer(...) before the first statement that uses them.
  explicit TirPrinter(bool function_mode) : function_mode_(function_mode) {}

  std::string function(const PrimFunc& func, const std::string& name);
  void stmt(const Stmt& s, int indent);
  std::string expr(const PrimExpr& e) { return expr_at(e, 0); }
  const std::string& output() const { return out_; }

 private:
  // ---- printer_expr.cpp
  std::string expr_at(const PrimExpr& e, int min_prec);
  std::string expr_prec(const PrimExpr& e, int& prec);
  std::string binary(const PrimExprNode* node, int& prec);
  std::string call(const CallNode* call);
  std::string reduce(const ReduceNode* node);
  std::string immediate(const PrimExpr& e, int& prec);
  std::string dtype_ref(DataType dtype) const { return "T." + dtype.to_string(); }

  // Names are unique across the whole text; a Var or Buffer keeps its first name.
  std::string fresh_name(const std::string& hint);
  std::string define_var(const VarNode* var);
  std::string var_name(const VarNode* var);
  std::string define_buffer(const BufferNode* buffer);
  std::string buffer_name(const BufferNode* buffer);

  // ---- printer_stmt.cpp
  void line(int indent, const std::string& text);
  void body(const Stmt& s, int indent);
  void seq_item(const Stmt& s, int indent, bool last);
  void for_loop(const ForNode* loop, int indent);
  void block_realize(const BlockRealizeNode* realize, const BlockNode* block, int indent);
  void block_axes(const BlockRealizeNode* realize, const BlockNode* block, int indent);
  std::string range_stop(const Range& range);
  std::string dom_text(const Range& range);
  std::string region_text(const BufferRegion& region);
  std::string annotations_text(const Annotations& annotations);
  // "(shape), "dtype"[, data=..., strides=..., elem_offset=..., scope=..., align=...]".
  std::string buffer_args(const BufferNode* buffer, bool with_data);
  void declare_views(const Stmt& s, int indent);
  void declare_views_in(const PrimExpr& e, int indent);
  void declare_view(const BufferNode* buffer, int indent);

  bool function_mode_;
  std::string out_;
  std::unordered_map<const VarNode*, std::string> var_names_;
  std::unordered_map<const BufferNode*, std::string> buffer_names_;
  std::unordered_set<std::string> used_names_;
  std::unordered_set<const VarNode*> defined_vars_;
  std::vector<const VarNode*> free_vars_;  // used before any definition, in order
  std::unordered_set<const BufferNode*> declared_buffers_;
  std::vector<const ForNode*> open_loops_;
};

}  // namespace anvil::tir::text
