// The recursive-descent parser of the graph IR text format, split over
// parser.cpp (module, functions, scopes, blocks), parser_expr.cpp
// (expressions, calls, attributes, constants) and parser_type.cpp (types and
// dimension expressions).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/ir/op.h"
#include "ir/lexer.h"

namespace anvil::ir::text {

class TextParser {
 public:
  // allow_free_vars: an unknown "%x: Type" declares a free variable (parse_expr).
  TextParser(std::string_view text, const std::string& source_name, bool allow_free_vars);

  // The whole text as a module (parse_module).
  IRModule module();
  // The whole text as one body: steps, lets, blocks, then a result (parse_expr).
  Expr standalone_expr();
  // The whole text as one type (parse_type).
  Type standalone_type();

 private:
  // ---- parser.cpp
  Function global_def(std::string& name);
  void prim_func(IRModule& mod);
  Function function_rest();
  Expr body();
  Expr braced_body();
  BindingBlock block();
  std::unordered_set<std::string> scan_outputs();
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }
  void bind(const std::string& name, Expr value) { scopes_.back()[name] = std::move(value); }
  Expr lookup(const std::string& name) const;
  void load_metadata(size_t marker);

  // ---- parser_expr.cpp
  Expr expr();
  Expr primary();
  Expr local_ref();
  Expr call(Expr callee);
  Expr argument_tuple();
  Expr paren_or_tuple();
  Expr if_expr();
  Expr while_expr();
  Expr scalar_literal();
  Expr const_literal();
  Expr meta_ref();
  AttrValue attr_literal();
  void set_op_attr(const OpDef& def, AttrsNode* attrs, const Token& key, const AttrValue& value,
                   const Token& value_token);

  // ---- parser_type.cpp
  Type type();
  Type tensor_type();
  DataType dtype();
  // A parsed dim and a bound on the magnitudes of its coefficients.
  struct BoundedDim {
    Dim dim;
    double bound;
  };
  // Coefficients stay below this, far from int64 overflow.
  static constexpr double kMaxDimMagnitude = 4611686018427387904.0;  // 2^62
  BoundedDim checked(BoundedDim a, BoundedDim b, double bound, const Token& at,
                     const std::function<Dim(const Dim&, const Dim&)>& op);
  BoundedDim dim_sum();
  BoundedDim dim_product();
  BoundedDim dim_unary();
  BoundedDim dim_atom();
  int64_t integer(const Token& token, bool negative);

  // ---- tokens
  const Token& peek(size_t k = 0) { return lex_.peek(k); }
  Token next() { return lex_.next(); }
  Token expect(TokenKind kind, std::string_view what = {});
  Token expect_ident(std::string_view word);
  bool accept(TokenKind kind);
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    lex_.fail(at, message);
  }
  [[noreturn]] void fail_expected(const Token& got, std::string_view what) const {
    lex_.fail_expected(got, what);
  }
  // Guards against stack exhaustion on deeply nested input.
  struct DepthGuard {
    TextParser& parser;
    explicit DepthGuard(TextParser& p, const Token& at);
    ~DepthGuard() { --parser.depth_; }
  };

  Lexer lex_;
  bool allow_free_vars_;
  std::vector<std::unordered_map<std::string, Expr>> scopes_;
  // Constants of the metadata section, decoded on first use or at the end.
  std::optional<std::vector<Constant>> metadata_;
  size_t metadata_marker_;  // offset of "#[metadata]", or the text's size
  // Global functions named in bodies, checked against the module at the end.
  std::vector<Token> global_refs_;
  int depth_ = 0;
};

}  // namespace anvil::ir::text
