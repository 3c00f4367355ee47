// Functions and statements of the tensor IR text: the decorator and
// signature, T.func_attr, size-variable declarations, loops, if/else, the
// scoping statements (lets, asserts, T.decl_buffer) and buffer stores; plus
// the public parse entry points.
#include "anvil/tir/parser.h"

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/verifier.h"
#include "tir/text_parser.h"

namespace anvil::tir {

namespace text {

namespace {

constexpr int kMaxNesting = 128;

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::Ident:
      return "'" + t.text + "'";
    case TokenKind::Int:
    case TokenKind::Float:
      return "number " + t.text;
    case TokenKind::String:
      return "a string";
    case TokenKind::Op:
      return "'" + t.text + "'";
    case TokenKind::Newline:
      return "end of line";
    case TokenKind::Indent:
      return "an indented block";
    case TokenKind::Dedent:
      return "the end of the indented block";
    case TokenKind::End:
      return "end of input";
  }
  return "?";
}

bool contains_block(const Stmt& s) {
  bool found = false;
  pre_order_visit(s, nullptr, [&](const Stmt& x) {
    if (x->kind == StmtKind::Block || x->kind == StmtKind::BlockRealize) found = true;
  });
  return found;
}

Stmt seq_of(std::vector<Stmt> stmts) {
  if (stmts.empty()) return EvaluateNode::make(make_int(0));
  if (stmts.size() == 1) return stmts[0];
  return SeqStmtNode::make(std::move(stmts));
}

}  // namespace

// ---------------------------------------------------------------- token helpers

void TirParser::enter(const Token& at) {
  if (++depth_ > kMaxNesting) fail(at, str_cat("nesting deeper than ", kMaxNesting, " levels"));
}

void TirParser::fail_expected(const char* what) {
  const Token& t = lex_.peek();
  fail(t, str_cat("expected ", what, ", got ", describe(t)));
}

Token TirParser::expect_op(std::string_view op, const char* what) {
  if (!lex_.peek().is_op(op)) {
    std::string quoted = "'" + std::string(op) + "'";
    fail_expected(what ? what : quoted.c_str());
  }
  return lex_.next();
}

Token TirParser::expect_ident(const char* what) {
  const Token& t = lex_.peek();
  if (!t.is(TokenKind::Ident) || is_reserved_name(t.text)) fail_expected(what);
  return lex_.next();
}

void TirParser::expect_keyword(std::string_view word) {
  if (!lex_.peek().is_ident(word)) {
    std::string quoted = "'" + std::string(word) + "'";
    fail_expected(quoted.c_str());
  }
  lex_.next();
}

void TirParser::expect_newline() {
  if (!lex_.peek().is(TokenKind::Newline)) fail_expected("end of line");
  lex_.next();
}

bool TirParser::accept_op(std::string_view op) {
  if (!lex_.peek().is_op(op)) return false;
  lex_.next();
  return true;
}

std::string TirParser::peek_t_name(size_t k) {
  if (!lex_.peek(k).is_ident("T") || !lex_.peek(k + 1).is_op(".") ||
      !lex_.peek(k + 2).is(TokenKind::Ident))
    return "";
  std::string name = lex_.peek(k + 2).text;
  if (name == "axis" && lex_.peek(k + 3).is_op(".") && lex_.peek(k + 4).is(TokenKind::Ident))
    return "axis." + lex_.peek(k + 4).text;
  return name;
}

void TirParser::bind(const std::string& name, Symbol symbol, bool function_scope) {
  (function_scope ? scopes_.front() : scopes_.back())[name] = std::move(symbol);
}

const TirParser::Symbol* TirParser::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(name); found != it->end()) return &found->second;
  return nullptr;
}

// ---------------------------------------------------------------- functions

bool TirParser::at_end() {
  while (true) {
    const Token& t = lex_.peek();
    if (t.is(TokenKind::Newline)) {
      lex_.next();
    } else if (t.is_ident("from") || t.is_ident("import")) {
      while (!lex_.peek().is(TokenKind::Newline) && !lex_.peek().is(TokenKind::End)) lex_.next();
    } else {
      return t.is(TokenKind::End);
    }
  }
}

size_t TirParser::position() { return lex_.next_offset(); }

void TirParser::function_options(bool& is_private, bool& implicit_root) {
  while (!lex_.peek().is_op(")")) {
    Token key = expect_ident("an option of T.prim_func (private=, implicit_root=)");
    expect_op("=");
    const Token& value = lex_.peek();
    if (!value.is_ident("True") && !value.is_ident("False")) fail_expected("True or False");
    bool flag = lex_.next().text == "True";
    if (key.text == "private")
      is_private = flag;
    else if (key.text == "implicit_root")
      implicit_root = flag;
    else
      fail(key, "unknown option '" + key.text + "' of T.prim_func");
    if (!accept_op(",")) break;
  }
  expect_op(")");
}

PrimFunc TirParser::function() {
  scopes_.assign(1, {});
  loops_.clear();
  blocks_.clear();
  block_names_.clear();
  params_.clear();
  buffer_map_.clear();
  attrs_ = {};
  depth_ = 0;
  suite_level_ = 0;

  expect_op("@", "'@T.prim_func'");
  expect_keyword("T");
  expect_op(".");
  expect_keyword("prim_func");
  bool is_private = false, implicit_root = true;
  if (accept_op("(")) function_options(is_private, implicit_root);
  expect_newline();
  Token def = lex_.peek();
  expect_keyword("def");
  Token name = expect_ident("a function name");
  expect_op("(");
  while (!lex_.peek().is_op(")")) {
    Token param = expect_ident("a parameter name");
    expect_op(":");
    expect_keyword("T");
    expect_op(".");
    Token type = expect_ident("a parameter type (T.handle, T.int64, ...)");
    std::optional<DataType> dtype = dtype_named(type.text);
    if (!dtype) fail(type, "unknown parameter type T." + type.text);
    for (const Var& p : params_)
      if (p->name == param.text) fail(param, "parameter '" + param.text + "' is declared twice");
    Var var = VarNode::make(param.text, *dtype);
    params_.push_back(var);
    bind(param.text, {var, nullptr});
    if (!accept_op(",")) break;
  }
  expect_op(")");
  if (accept_op("->")) {
    if (lex_.peek().is_ident("None")) {
      lex_.next();
    } else {
      expect_keyword("T");
      expect_op(".");
      expect_ident("a return type");
    }
  }
  expect_op(":");
  expect_newline();
  if (!lex_.peek().is(TokenKind::Indent)) fail_expected("the indented body of the function");
  lex_.next();

  BlockFrame root;
  root.is_root = true;
  blocks_.push_back(&root);
  std::vector<Item> items;
  statements(items);
  if (!lex_.peek().is(TokenKind::Dedent)) fail_expected("the end of the function");
  lex_.next();
  blocks_.pop_back();
  Stmt body = fold(items);

  if (!implicit_root && !root.alloc_buffers.empty())
    fail(def, "T.alloc_buffer at function level needs the implicit root block");
  bool wrap = implicit_root && (!root.alloc_buffers.empty() ||
                                (contains_block(body) && !as<BlockRealizeNode>(body)));
  if (wrap) {
    if (block_names_.count("root"))
      fail(def, "a block is named 'root', the name of the function's implicit root block");
    Block block = BlockNode::make({}, {}, {}, "root", body, nullptr, root.alloc_buffers);
    body = BlockRealizeNode::make({}, const_true(), block);
  }
  if (!is_private && !attrs_.find("global_symbol"))
    attrs_.entries.insert(attrs_.entries.begin(), {"global_symbol", name.text});
  PrimFunc func = PrimFuncNode::make(params_, buffer_map_, body, attrs_);
  std::string violation = find_ir_violation(func, IrForm::Scheduled);
  if (!violation.empty()) fail(def, violation);
  return func;
}

void TirParser::func_attr(const Token& at) {
  if (suite_level_ != 0) fail(at, "T.func_attr is allowed only at function level");
  CallArgs args = call_args(at);
  check_arity(args, 1, 1, "T.func_attr");
  no_keywords(args, "T.func_attr");
  const Term& dict = args.positional[0];
  if (dict.kind != Term::Kind::Dict) fail(dict.at, "T.func_attr takes a dict {\"key\": value}");
  for (size_t i = 0; i < dict.keys.size(); ++i)
    attrs_ = attrs_.with(dict.keys[i], need_attr(dict.items[i]));
}

// ---------------------------------------------------------------- statements

Stmt TirParser::fold(std::vector<Item>& items) {
  std::vector<Stmt> tail;
  for (size_t i = items.size(); i-- > 0;) {
    Item& item = items[i];
    if (item.kind == Item::Kind::Plain) {
      tail.insert(tail.begin(), item.stmt);
      continue;
    }
    Stmt body = seq_of(std::move(tail));
    Stmt wrapped;
    switch (item.kind) {
      case Item::Kind::Let:
        wrapped = LetStmtNode::make(item.var, item.value, body);
        break;
      case Item::Kind::Assert:
        wrapped = AssertStmtNode::make(item.value, item.message, body);
        break;
      case Item::Kind::Allocate:
        wrapped = AllocateNode::make(item.buffer, body);
        break;
      case Item::Kind::Plain:
        break;
    }
    tail = {wrapped};
  }
  return seq_of(std::move(tail));
}

Stmt TirParser::suite() {
  Token at = lex_.peek();
  expect_newline();
  if (!lex_.peek().is(TokenKind::Indent)) fail_expected("an indented block");
  lex_.next();
  enter(at);
  ++suite_level_;
  scopes_.emplace_back();
  std::vector<Item> items;
  statements(items);
  if (!lex_.peek().is(TokenKind::Dedent)) fail_expected("the end of the indented block");
  lex_.next();
  scopes_.pop_back();
  --suite_level_;
  leave();
  return fold(items);
}

void TirParser::statements(std::vector<Item>& items) {
  while (true) {
    const Token& t = lex_.peek();
    if (t.is(TokenKind::Dedent) || t.is(TokenKind::End)) return;
    statement(items);
  }
}

void TirParser::statement(std::vector<Item>& items) {
  const Token& t = lex_.peek();
  if (t.is(TokenKind::Indent)) fail(t, "unexpected indentation");
  if (t.is(TokenKind::Ident)) {
    const std::string& word = t.text;
    if (word == "for") {
      items.push_back(Item(Item::Kind::Plain, for_statement()));
      return;
    }
    if (word == "if") {
      items.push_back(Item(Item::Kind::Plain, if_statement()));
      return;
    }
    if (word == "with") return with_statement(items);
    if (word == "pass") {
      lex_.next();
      return expect_newline();
    }
    if (word == "else" || word == "elif") fail(t, "'" + word + "' without a matching 'if'");
    if (word == "assert") {
      Token at = lex_.next();
      Term condition = expr();
      PrimExpr cond = need_expr(condition, "the assert condition");
      if (cond.dtype() != DataType::boolean())
        fail(condition.at, "assert condition must be a bool, got " + cond.dtype().to_string());
      expect_op(",");
      if (!lex_.peek().is(TokenKind::String)) fail_expected("the assert message (a string)");
      Item item{Item::Kind::Assert};
      item.value = cond;
      item.message = lex_.next().text;
      items.push_back(std::move(item));
      return expect_newline();
    }
    if (word == "T" && lex_.peek(1).is_op(".")) return t_statement(items);
    const Token& after = lex_.peek(1);
    if (!is_reserved_name(word) && (after.is_op("=") || after.is_op(",") || after.is_op(":")))
      return assignment(items);
  }
  // An expression: a buffer store when '=' follows, else evaluated for its effect.
  Term lhs = expr();
  if (lex_.peek().is_op("=")) {
    Token eq = lex_.next();
    const auto* load = as<BufferLoadNode>(lhs.expr);
    if (lhs.kind != Term::Kind::Expr || !load || lhs.untyped)
      fail(lhs.at, "only a buffer element (X[i, j]) can be assigned to here");
    Term rhs = expr();
    PrimExpr value = adapt(rhs, load->dtype, eq, "the stored value");
    items.push_back(
        Item(Item::Kind::Plain, BufferStoreNode::make(load->buffer, value, load->indices)));
    return expect_newline();
  }
  items.push_back(Item(Item::Kind::Plain, EvaluateNode::make(need_expr(lhs, "a statement"))));
  expect_newline();
}

void TirParser::t_statement(std::vector<Item>& items) {
  Token at = lex_.peek();
  std::string name = peek_t_name(0);
  if (name == "func_attr" || name == "evaluate") {
    lex_.next();
    lex_.next();
    lex_.next();
    if (name == "func_attr") {
      func_attr(at);
    } else {
      CallArgs args = call_args(at);
      check_arity(args, 1, 1, "T.evaluate");
      no_keywords(args, "T.evaluate");
      PrimExpr value = need_expr(args.positional[0], "T.evaluate's value");
      items.push_back(Item(Item::Kind::Plain, EvaluateNode::make(value)));
    }
    return expect_newline();
  }
  if (name == "reads" || name == "writes" || name == "where" || name == "block_attr")
    return block_header_call(at, name);
  if (name == "init") fail(at, "T.init() opens a block: write 'with T.init():'");
  if (name.starts_with("axis."))
    fail(at, "T." + name + " declares an iteration variable: write 'vi = T." + name + "(...)'");
  if (name == "match_buffer" || name == "alloc_buffer" || name == "decl_buffer" || name == "Buffer")
    fail(at, "T." + name + "(...) must be assigned to a name: 'X = T." + name + "(...)'");
  // Anything else is an expression statement (T.call_extern(...), ...).
  Term value = expr();
  if (lex_.peek().is_op("=")) fail(lex_.peek(), "only a buffer element can be assigned to");
  items.push_back(Item(Item::Kind::Plain, EvaluateNode::make(need_expr(value, "a statement"))));
  expect_newline();
}

void TirParser::declare_vars(const std::vector<Token>& targets) {
  for (size_t i = 0; i < targets.size(); ++i) {
    if (i > 0) expect_op(",", "',' and one T.<dtype>() per declared name");
    expect_keyword("T");
    expect_op(".");
    Token type = expect_ident("a type (T.int64())");
    std::optional<DataType> dtype = dtype_named(type.text);
    if (!dtype) fail(type, "unknown type T." + type.text);
    expect_op("(");
    expect_op(")", "')' (a declaration takes no arguments)");
    bind(targets[i].text, {VarNode::make(targets[i].text, *dtype), nullptr});
  }
  expect_newline();
}

void TirParser::assignment(std::vector<Item>& items) {
  std::vector<Token> targets{lex_.next()};
  if (accept_op(":")) {
    expect_keyword("T");
    expect_op(".");
    Token type = expect_ident("a type (T.int64, T.float32, ...)");
    std::optional<DataType> dtype = dtype_named(type.text);
    if (!dtype) fail(type, "unknown type T." + type.text);
    Token eq = expect_op("=");
    Term value_term = expr();
    Item item{Item::Kind::Let};
    item.value = adapt(value_term, *dtype, eq, "the value of '" + targets[0].text + "'");
    item.var = VarNode::make(targets[0].text, *dtype);
    bind(targets[0].text, {item.var, nullptr});
    items.push_back(std::move(item));
    return expect_newline();
  }
  while (accept_op(",")) targets.push_back(expect_ident("a name"));
  Token eq = expect_op("=");
  std::string fn = peek_t_name(0);
  if (fn == "axis.remap") return remap_statement(targets);
  if (fn.starts_with("axis.")) {
    if (targets.size() != 1) fail(eq, "T." + fn + " declares one variable");
    return axis_statement(targets);
  }
  if (fn == "match_buffer" || fn == "alloc_buffer" || fn == "decl_buffer" || fn == "Buffer") {
    if (targets.size() != 1) fail(eq, "T." + fn + " declares one buffer");
    return buffer_assignment(targets[0], fn, items);
  }
  if (!fn.empty() && dtype_named(fn) && lex_.peek(3).is_op("(") && lex_.peek(4).is_op(")"))
    return declare_vars(targets);
  if (targets.size() != 1) fail(eq, "cannot assign one value to several names");
  Term value_term = expr();
  Item item{Item::Kind::Let};
  item.value = need_expr(value_term, "the bound value");
  item.var = VarNode::make(targets[0].text, item.value.dtype());
  bind(targets[0].text, {item.var, nullptr});
  items.push_back(std::move(item));
  expect_newline();
}

void TirParser::with_statement(std::vector<Item>& items) {
  Token at = lex_.next();
  std::string name = peek_t_name(0);
  if (name == "block") {
    items.push_back(Item(Item::Kind::Plain, block_statement(at)));
    return;
  }
  if (name != "init" && name != "LetStmt" && name != "Assert" && name != "decl_buffer")
    fail_expected("T.block, T.init, T.LetStmt, T.Assert or T.decl_buffer after 'with'");
  Token call_at = lex_.next();
  lex_.next();
  lex_.next();
  CallArgs args = call_args(call_at);
  if (name != "decl_buffer") no_keywords(args, "T." + name);
  if (name == "init") {
    check_arity(args, 0, 0, "T.init");
    BlockFrame& frame = current_block(at, "T.init", true);
    if (frame.init) fail(at, "a block has one T.init()");
    expect_op(":");
    frame.init = suite();
    return;
  }
  if (name == "Assert") {
    check_arity(args, 2, 2, "T.Assert");
    PrimExpr cond = need_expr(args.positional[0], "the assert condition");
    if (cond.dtype() != DataType::boolean())
      fail(args.positional[0].at,
           "assert condition must be a bool, got " + cond.dtype().to_string());
    std::string message = need_string(args.positional[1], "the assert message");
    expect_op(":");
    Stmt body = suite();
    items.push_back(Item(Item::Kind::Plain, AssertStmtNode::make(cond, message, body)));
    return;
  }
  expect_keyword("as");
  Token target = expect_ident("a name after 'as'");
  expect_op(":");
  scopes_.emplace_back();
  Stmt stmt;
  if (name == "LetStmt") {
    check_arity(args, 1, 1, "T.LetStmt");
    PrimExpr value = need_expr(args.positional[0], "the bound value");
    Var var = VarNode::make(target.text, value.dtype());
    bind(target.text, {var, nullptr});
    stmt = LetStmtNode::make(var, value, suite());
  } else {
    Buffer buffer = buffer_from(target.text, args, 0, "T.decl_buffer");
    bind(target.text, {nullptr, buffer});
    stmt = AllocateNode::make(buffer, suite());
  }
  scopes_.pop_back();
  items.push_back(Item(Item::Kind::Plain, stmt));
}

Stmt TirParser::for_statement() {
  Token at = lex_.next();
  std::vector<Token> targets{expect_ident("a loop variable")};
  while (accept_op(",")) targets.push_back(expect_ident("a loop variable"));
  expect_keyword("in");
  Token iter = lex_.peek();
  std::string fn;
  if (iter.is_ident("range")) {
    lex_.next();
    fn = "range";
  } else {
    fn = peek_t_name(0);
    if (fn != "grid" && fn != "serial" && fn != "parallel" && fn != "vectorized" && fn != "unroll")
      fail_expected("range(...), T.grid(...) or T.serial/T.parallel/T.vectorized/T.unroll(...)");
    lex_.next();
    lex_.next();
    lex_.next();
  }
  CallArgs args = call_args(iter);
  std::vector<Range> ranges;
  Annotations annotations;
  ForKind kind = ForKind::Serial;
  if (fn == "grid") {
    no_keywords(args, "T.grid");
    if (args.positional.size() != targets.size())
      fail(iter, str_cat("T.grid has ", args.positional.size(), " extents for ", targets.size(),
                         " loop variables"));
    for (const Term& t : args.positional) {
      PrimExpr extent = need_index(t, "a loop extent");
      ranges.push_back({make_int(0, extent.dtype()), extent});
    }
  } else {
    if (targets.size() != 1) fail(at, fn + " gives one loop variable; use T.grid for several");
    if (fn == "parallel") kind = ForKind::Parallel;
    if (fn == "vectorized") kind = ForKind::Vectorized;
    if (fn == "unroll") kind = ForKind::Unrolled;
    for (const auto& [key, value] : args.keywords) {
      if (key != "annotations" || fn == "range")
        fail(value.at, "unknown argument '" + key + "' of " + fn);
      annotations = need_annotations(value);
    }
    check_arity(args, 1, 2, fn);
    if (args.positional.size() == 1) {
      PrimExpr extent = need_index(args.positional[0], "a loop extent");
      ranges.push_back({make_int(0, extent.dtype()), extent});
    } else {
      ranges.push_back(range_from(args.positional[0], args.positional[1], iter));
    }
  }
  expect_op(":");
  scopes_.emplace_back();
  std::vector<Var> vars;
  for (size_t i = 0; i < targets.size(); ++i) {
    Var var = VarNode::make(targets[i].text, ranges[i].extent.dtype());
    vars.push_back(var);
    bind(targets[i].text, {var, nullptr});
    loops_.push_back({var.get(), ranges[i]});
  }
  Stmt body = suite();
  loops_.resize(loops_.size() - targets.size());
  scopes_.pop_back();
  for (size_t i = vars.size(); i-- > 0;)
    body = ForNode::make(vars[i], ranges[i].min, ranges[i].extent, kind, body,
                         i + 1 == vars.size() ? annotations : Annotations{});
  return body;
}

Stmt TirParser::if_statement() {
  Token at = lex_.next();
  enter(at);
  Term condition = expr();
  PrimExpr cond = need_expr(condition, "the if condition");
  if (cond.dtype() != DataType::boolean())
    fail(condition.at, "if condition must be a bool, got " + cond.dtype().to_string());
  expect_op(":");
  Stmt then_case = suite();
  Stmt else_case;
  if (lex_.peek().is_ident("else")) {
    lex_.next();
    expect_op(":");
    else_case = suite();
  } else if (lex_.peek().is_ident("elif")) {
    else_case = if_statement();
  }
  leave();
  return IfThenElseNode::make(cond, then_case, else_case);
}

}  // namespace text

// ---------------------------------------------------------------- entry points

std::vector<PrimFunc> parse_prim_funcs(std::string_view text, const std::string& source_name) {
  text::TirParser parser(text, 0, source_name);
  std::vector<PrimFunc> funcs;
  while (!parser.at_end()) funcs.push_back(parser.function());
  return funcs;
}

PrimFunc parse_prim_func(std::string_view text, const std::string& source_name) {
  text::TirParser parser(text, 0, source_name);
  if (parser.at_end()) {
    text::Lexer lex(text, text.size(), source_name);
    lex.fail(lex.peek(), "expected '@T.prim_func', got end of input");
  }
  PrimFunc func = parser.function();
  if (!parser.at_end()) {
    text::Lexer lex(text, parser.position(), source_name);
    lex.fail(lex.peek(), "unexpected text after the function");
  }
  return func;
}

}  // namespace anvil::tir
