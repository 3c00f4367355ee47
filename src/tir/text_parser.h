// The recursive-descent parser of the tensor IR text, split over parser.cpp
// (functions, statements, loops, scoping statements), parser_expr.cpp
// (expressions, literals, T.* calls, operand types) and parser_block.cpp
// (blocks, axes, regions, buffers, inferred reads/writes). Every semantic
// check happens before a node is built, so bad text is an anvil::Error with a
// position and never an internal error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "anvil/ir/attrs.h"
#include "anvil/tir/tir.h"
#include "tir/text_lexer.h"

namespace anvil::tir::text {

// One parsed value: an expression, a bare buffer name, or a literal of the
// argument language (tuple, list, dict, None, T.dtype) used by T.* calls.
struct Term {
  enum class Kind : uint8_t { Expr, Buffer, Tuple, List, Dict, None, DType };
  Kind kind = Kind::Expr;
  PrimExpr expr;
  bool untyped = false;  // a plain numeric literal: adapts to the other operand's type
  Buffer buffer;
  std::vector<Term> items;        // tuple and list items, dict values
  std::vector<std::string> keys;  // dict keys
  DataType dtype;
  Token at;
};

struct CallArgs {
  Token at;
  std::vector<Term> positional;
  std::vector<std::pair<std::string, Term>> keywords;
};

// A statement that scopes the rest of its sequence (x: T.int64 = v, assert,
// A = T.decl_buffer(...)) or an ordinary statement.
struct Item {
  enum class Kind : uint8_t { Plain, Let, Assert, Allocate };
  explicit Item(Kind k, Stmt s = nullptr) : kind(k), stmt(std::move(s)) {}
  Kind kind = Kind::Plain;
  Stmt stmt;
  Var var;
  PrimExpr value;
  std::string message;
  Buffer buffer;
};

class TirParser {
 public:
  TirParser(std::string_view text, size_t start, const std::string& source_name)
      : lex_(text, start, source_name) {}

  // Skips blank lines and "from ... import ..." / "import ..." lines; true at the end.
  bool at_end();
  // One "@T.prim_func def ..." function.
  PrimFunc function();
  // The byte offset just past the last function parsed (where the next text starts).
  size_t position();
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    lex_.fail(at, message);
  }

 private:
  struct Symbol {
    Var var;
    Buffer buffer;
  };

  // What a `with T.block(...)` collects from its header statements.
  struct BlockFrame {
    int suite_level = 0;
    bool is_root = false;
    bool realize = true;
    std::vector<IterVar> iter_vars;
    std::vector<PrimExpr> iter_values;
    PrimExpr predicate;
    std::optional<std::vector<BufferRegion>> reads, writes;
    Annotations annotations;
    std::vector<Buffer> alloc_buffers;
    Stmt init;
  };

  // ---- parser.cpp
  // Nesting (brackets, operator chains, indented blocks) is bounded so that
  // hostile text cannot exhaust the stack; leave() undoes enter().
  void enter(const Token& at);
  void leave(int levels = 1) { depth_ -= levels; }
  Token expect_op(std::string_view op, const char* what = nullptr);
  Token expect_ident(const char* what);
  void expect_keyword(std::string_view word);
  void expect_newline();
  bool accept_op(std::string_view op);
  [[noreturn]] void fail_expected(const char* what);
  // "T" "." name, returning the name token.
  bool peek_t_member(size_t k, std::string_view name);
  std::string peek_t_name(size_t k);
  void bind(const std::string& name, Symbol symbol, bool function_scope = false);
  const Symbol* lookup(const std::string& name) const;

  void function_options(bool& is_private, bool& implicit_root);
  Stmt suite();
  void statements(std::vector<Item>& items);
  void statement(std::vector<Item>& items);
  void assignment(std::vector<Item>& items);
  void t_statement(std::vector<Item>& items);
  void with_statement(std::vector<Item>& items);
  Stmt for_statement();
  Stmt if_statement();
  Stmt fold(std::vector<Item>& items);
  void func_attr(const Token& at);
  void declare_vars(const std::vector<Token>& targets);

  // ---- parser_expr.cpp
  Term expr();
  Term or_expr();
  Term and_expr();
  Term not_expr();
  Term comparison();
  Term arith();
  Term term();
  Term unary();
  Term postfix();
  Term atom();
  Term int_literal(const Token& tok, bool negative);
  Term float_literal(const Token& tok, bool negative);

  // ---- parser_call.cpp
  // The T.* function after "T" (at).
  Term t_call(const Token& at);
  Term t_let(const Token& at);
  Term typed_literal(const Token& at, DataType dtype);
  Term intrinsic_call(const Token& at, const std::string& name, CallArgs& args);
  int need_lanes(const Term& t);
  CallArgs call_args(const Token& at);
  Term binary(const Token& op, const std::string& spelling, Term a, Term b);
  void unify(Term& a, Term& b, const Token& at, const std::string& what);
  PrimExpr adapt(const Term& t, DataType target, const Token& at, const std::string& what);
  PrimExpr load(const Term& buffer, const Token& at);
  std::vector<std::pair<Term, std::optional<Term>>> subscripts(bool allow_slices);
  std::optional<DataType> dtype_named(std::string_view name) const;
  DataType parse_dtype(const Term& t, const char* what);

  PrimExpr need_expr(const Term& t, const char* what);
  PrimExpr need_index(const Term& t, const char* what, DataType want = kIndexType);
  std::vector<PrimExpr> need_shape(const Term& t, const char* what);
  std::string need_string(const Term& t, const char* what);
  int64_t need_int(const Term& t, const char* what);
  bool need_bool(const Term& t, const char* what);
  ir::AttrValue need_attr(const Term& t);
  Annotations need_annotations(const Term& t);
  void check_arity(const CallArgs& args, size_t min, size_t max, const std::string& name);
  void no_keywords(const CallArgs& args, const std::string& name);

  // ---- parser_block.cpp
  Stmt block_statement(const Token& at);
  void axis_statement(const std::vector<Token>& targets);
  void remap_statement(const std::vector<Token>& targets);
  void block_header_call(const Token& at, const std::string& name);
  BlockFrame& current_block(const Token& at, const char* what, bool header);
  std::vector<BufferRegion> regions(const Token& at);
  Range range_from(Term start, Term stop, const Token& at);
  Buffer buffer_from(const std::string& name, const CallArgs& args, size_t first,
                     const std::string& function);
  void buffer_assignment(const Token& target, const std::string& function,
                         std::vector<Item>& items);
  void infer_regions(BlockFrame& frame, const Stmt& body);

  Lexer lex_;
  int depth_ = 0;
  int suite_level_ = 0;
  size_t end_offset_ = 0;
  std::vector<std::unordered_map<std::string, Symbol>> scopes_;
  std::vector<std::pair<const VarNode*, Range>> loops_;
  std::vector<BlockFrame*> blocks_;
  std::unordered_set<std::string> block_names_;
  std::vector<Var> params_;
  std::vector<std::pair<Var, Buffer>> buffer_map_;
  ir::DictAttrs attrs_;
  bool attrs_given_ = false;
};

}  // namespace anvil::tir::text
