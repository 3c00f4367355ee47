// Blocks and buffers of the tensor IR text: `with T.block(...)` and its
// header statements (T.axis.*, T.where, T.reads/T.writes, T.block_attr,
// T.alloc_buffer, T.init), buffer declarations, slices, and the read/write
// regions inferred when a block leaves them out.
#include <unordered_map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/structural_equal.h"
#include "tir/text_parser.h"

namespace anvil::tir::text {

TirParser::BlockFrame& TirParser::current_block(const Token& at, const char* what, bool header) {
  BlockFrame& frame = *blocks_.back();
  if (header && frame.is_root) fail(at, str_cat(what, " is allowed only inside a block"));
  if (header && frame.suite_level != suite_level_)
    fail(at, str_cat(what, " must be directly inside its block, not in a nested statement"));
  return frame;
}

Range TirParser::range_from(Term start, Term stop, const Token& at) {
  unify(start, stop, at, "a range");
  PrimExpr a = start.expr, b = stop.expr;
  if (start.untyped) a = adapt(start, kIndexType, at, "a range start");
  if (stop.untyped) b = adapt(stop, kIndexType, at, "a range end");
  if (!(a.dtype().is_int() || a.dtype().is_uint()) || a.dtype().lanes != 1)
    fail(start.at, "a range is over scalar integers, got " + a.dtype().to_string());
  // The text writes [min, min + extent); recover the extent as written.
  if (const auto* imm = as<IntImmNode>(a); imm && imm->value == 0) return {a, b};
  const auto* lo = as<IntImmNode>(a);
  const auto* hi = as<IntImmNode>(b);
  if (lo && hi)
    return {a, IntImmNode::make(a.dtype(), int64_t(uint64_t(hi->value) - uint64_t(lo->value)))};
  if (const auto* add = as<AddNode>(b); add && structural_equal(add->a, a)) return {a, add->b};
  return {a, SubNode::make(b, a)};
}

// ---------------------------------------------------------------- buffers

Buffer TirParser::buffer_from(const std::string& name, const CallArgs& args, size_t first,
                              const std::string& function) {
  const std::vector<Term>& ps = args.positional;
  if (ps.size() < first + 1 || ps.size() > first + 2)
    fail(args.at, str_cat(function, " takes ", first + 1, " or ", first + 2,
                          " positional arguments, got ", ps.size()));
  std::vector<PrimExpr> shape = need_shape(ps[first], "a buffer shape");
  DataType dtype = ps.size() > first + 1 ? parse_dtype(ps[first + 1], "the buffer's dtype")
                                         : DataType::float32();
  Var data;
  std::vector<PrimExpr> strides;
  PrimExpr elem_offset = make_int(0);
  std::string scope = "global";
  int64_t align = 64;
  for (const auto& [key, value] : args.keywords) {
    if (key == "data") {
      const auto* var = value.kind == Term::Kind::Expr ? as<VarNode>(value.expr) : nullptr;
      if (!var || !var->dtype.is_handle())
        fail(value.at, "data= takes a handle variable (a parameter, a let or X.data)");
      data = Var(var);
    } else if (key == "strides") {
      strides = need_shape(value, "buffer strides");
      if (strides.size() != shape.size())
        fail(value.at, str_cat("buffer '", name, "' has ", shape.size(), " dimensions but ",
                               strides.size(), " strides"));
    } else if (key == "elem_offset") {
      elem_offset = need_index(value, "elem_offset");
    } else if (key == "scope") {
      scope = need_string(value, "scope");
    } else if (key == "align") {
      align = need_int(value, "align");
      if (align <= 0 || align > (int64_t(1) << 30)) fail(value.at, "align must be positive");
    } else {
      fail(value.at, "unknown argument '" + key + "' of " + function);
    }
  }
  if (!data) data = VarNode::make(name, DataType::handle());
  return BufferNode::make_full(data, dtype, shape, strides, elem_offset, name, scope, int(align));
}

void TirParser::buffer_assignment(const Token& target, const std::string& function,
                                  std::vector<Item>& items) {
  Token at = lex_.next();
  lex_.next();
  lex_.next();
  std::string qualified = "T." + function;
  CallArgs args = call_args(at);
  if (function == "match_buffer") {
    if (suite_level_ != 0) fail(at, "T.match_buffer is allowed only at function level");
    const Term& param = args.positional.empty() ? Term{} : args.positional[0];
    const auto* var = param.kind == Term::Kind::Expr ? as<VarNode>(param.expr) : nullptr;
    bool is_param = false;
    for (const Var& p : params_) is_param = is_param || p.get() == var;
    if (!is_param || !var->dtype.is_handle())
      fail(args.at, "T.match_buffer's first argument must be a handle parameter");
    for (const auto& [p, b] : buffer_map_)
      if (p.get() == var) fail(param.at, "parameter '" + var->name + "' is matched twice");
    Buffer buffer = buffer_from(target.text, args, 1, qualified);
    buffer_map_.emplace_back(Var(var), buffer);
    bind(target.text, {nullptr, buffer});
  } else if (function == "alloc_buffer") {
    Buffer buffer = buffer_from(target.text, args, 0, qualified);
    current_block(at, "T.alloc_buffer", false).alloc_buffers.push_back(buffer);
    bind(target.text, {nullptr, buffer});
  } else if (function == "decl_buffer") {
    Item item{Item::Kind::Allocate};
    item.buffer = buffer_from(target.text, args, 0, qualified);
    bind(target.text, {nullptr, item.buffer});
    items.push_back(std::move(item));
  } else {
    // A view of existing memory is visible in the rest of the function.
    bind(target.text, {nullptr, buffer_from(target.text, args, 0, qualified)}, true);
  }
  expect_newline();
}

// ---------------------------------------------------------------- blocks

Stmt TirParser::block_statement(const Token& at) {
  Token call_at = lex_.next();
  lex_.next();
  lex_.next();
  CallArgs args = call_args(call_at);
  check_arity(args, 1, 1, "T.block");
  std::string name = need_string(args.positional[0], "the block name");
  bool realize = true;
  for (const auto& [key, value] : args.keywords) {
    if (key != "no_realize") fail(value.at, "unknown argument '" + key + "' of T.block");
    realize = !need_bool(value, "no_realize");
  }
  if (!block_names_.insert(name).second)
    fail(args.positional[0].at, "two blocks are named '" + name + "'");
  expect_op(":");
  BlockFrame frame;
  frame.realize = realize;
  frame.suite_level = suite_level_ + 1;
  blocks_.push_back(&frame);
  Stmt body = suite();
  blocks_.pop_back();
  if (!frame.reads || !frame.writes) infer_regions(frame, body);
  Block block = BlockNode::make(frame.iter_vars, *frame.reads, *frame.writes, name, body,
                                frame.init, frame.alloc_buffers, frame.annotations);
  if (!realize) return block;
  (void)at;
  return BlockRealizeNode::make(frame.iter_values, frame.predicate ? frame.predicate : const_true(),
                                block);
}

void TirParser::axis_statement(const std::vector<Token>& targets) {
  Token at = lex_.next();
  lex_.next();
  lex_.next();
  lex_.next();
  Token kind_token = lex_.next();
  IterKind kind = IterKind::Spatial;
  if (kind_token.text == "reduce")
    kind = IterKind::Reduce;
  else if (kind_token.text == "opaque")
    kind = IterKind::Opaque;
  else if (kind_token.text != "spatial")
    fail(kind_token, "unknown T.axis." + kind_token.text + " (spatial, reduce, opaque or remap)");
  std::string qualified = "T.axis." + kind_token.text;
  BlockFrame& frame = current_block(at, qualified.c_str(), true);
  CallArgs args = call_args(at);
  no_keywords(args, qualified);
  size_t arity = frame.realize ? 2 : 1;
  check_arity(args, arity, arity, qualified);
  const Term& dom_term = args.positional[0];
  Range dom;
  if (dom_term.kind == Term::Kind::Tuple) {
    if (dom_term.items.size() != 2) fail(dom_term.at, "an axis domain is an extent or (min, end)");
    dom = range_from(dom_term.items[0], dom_term.items[1], dom_term.at);
  } else {
    PrimExpr extent = need_index(dom_term, "the axis extent");
    dom = {make_int(0, extent.dtype()), extent};
  }
  Var var = VarNode::make(targets[0].text, dom.extent.dtype());
  if (frame.realize) {
    PrimExpr value = adapt(args.positional[1], var->dtype, args.positional[1].at,
                           "the value bound to '" + targets[0].text + "'");
    frame.iter_values.push_back(value);
  }
  frame.iter_vars.push_back({var, dom, kind});
  bind(targets[0].text, {var, nullptr});
  expect_newline();
}

void TirParser::remap_statement(const std::vector<Token>& targets) {
  Token at = lex_.next();
  for (int i = 0; i < 4; ++i) lex_.next();
  BlockFrame& frame = current_block(at, "T.axis.remap", true);
  if (!frame.realize) fail(at, "T.axis.remap binds values; a no_realize block has none");
  CallArgs args = call_args(at);
  no_keywords(args, "T.axis.remap");
  check_arity(args, 2, 2, "T.axis.remap");
  std::string kinds = need_string(args.positional[0], "the kinds of T.axis.remap (\"SSR\")");
  const Term& list = args.positional[1];
  if (list.kind != Term::Kind::List && list.kind != Term::Kind::Tuple)
    fail(list.at, "T.axis.remap takes a list of loop variables");
  if (kinds.size() != targets.size() || list.items.size() != targets.size())
    fail(at, str_cat("T.axis.remap binds ", targets.size(), " names to ", kinds.size(),
                     " kinds and ", list.items.size(), " loop variables"));
  std::vector<Var> vars;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (kinds[i] != 'S' && kinds[i] != 'R')
      fail(args.positional[0].at, "T.axis.remap kinds are 'S' (spatial) or 'R' (reduce)");
    const Term& item = list.items[i];
    const auto* loop_var = item.kind == Term::Kind::Expr ? as<VarNode>(item.expr) : nullptr;
    const Range* loop_range = nullptr;
    for (auto it = loops_.rbegin(); it != loops_.rend() && loop_var; ++it)
      if (it->first == loop_var) {
        loop_range = &it->second;
        break;
      }
    if (!loop_range) fail(item.at, "T.axis.remap takes variables of enclosing loops");
    Var var = VarNode::make(targets[i].text, loop_var->dtype);
    frame.iter_vars.push_back(
        {var, *loop_range, kinds[i] == 'S' ? IterKind::Spatial : IterKind::Reduce});
    frame.iter_values.push_back(item.expr);
    vars.push_back(var);
  }
  for (size_t i = 0; i < targets.size(); ++i) bind(targets[i].text, {vars[i], nullptr});
  expect_newline();
}

std::vector<BufferRegion> TirParser::regions(const Token& at) {
  expect_op("(");
  enter(at);
  std::vector<BufferRegion> out;
  while (!lex_.peek().is_op(")")) {
    Token name = expect_ident("a buffer region such as X[i, 0:n]");
    const Symbol* symbol = lookup(name.text);
    if (!symbol) fail(name, "undefined name '" + name.text + "'");
    if (!symbol->buffer) fail(name, "'" + name.text + "' is not a buffer");
    Buffer buffer = symbol->buffer;
    BufferRegion region{buffer, {}};
    for (auto& [start, stop] : subscripts(true)) {
      if (stop) {
        region.region.push_back(range_from(start, *stop, start.at));
      } else {
        PrimExpr point = need_index(start, "a region index");
        region.region.push_back({point, make_int(1, point.dtype())});
      }
    }
    if (region.region.size() != buffer->shape.size())
      fail(name, str_cat("buffer '", buffer->name, "' has ", buffer->shape.size(),
                         " dimensions but the region has ", region.region.size()));
    out.push_back(std::move(region));
    if (!accept_op(",")) break;
  }
  expect_op(")", "')'");
  leave();
  return out;
}

void TirParser::block_header_call(const Token& at, const std::string& name) {
  lex_.next();
  lex_.next();
  lex_.next();
  std::string qualified = "T." + name;
  BlockFrame& frame = current_block(at, qualified.c_str(), true);
  if (name == "reads" || name == "writes") {
    auto& slot = name == "reads" ? frame.reads : frame.writes;
    if (slot) fail(at, "a block has one " + qualified);
    slot = regions(at);
    return expect_newline();
  }
  CallArgs args = call_args(at);
  no_keywords(args, qualified);
  check_arity(args, 1, 1, qualified);
  if (name == "where") {
    if (!frame.realize) fail(at, "a no_realize block has no T.where");
    if (frame.predicate) fail(at, "a block has one T.where");
    PrimExpr cond = need_expr(args.positional[0], "the block predicate");
    if (cond.dtype() != DataType::boolean())
      fail(args.positional[0].at, "T.where needs a bool, got " + cond.dtype().to_string());
    frame.predicate = cond;
  } else {
    for (const auto& [key, value] : need_annotations(args.positional[0]))
      frame.annotations[key] = value;
  }
  expect_newline();
}

// Reads: every buffer loaded, whole. Writes: the single point stored when
// every store to a buffer uses the same indices of outer variables, else the
// whole buffer. Buffers allocated inside the block are left out.
void TirParser::infer_regions(BlockFrame& frame, const Stmt& body) {
  std::unordered_set<const BufferNode*> inner;
  for (const Buffer& b : frame.alloc_buffers) inner.insert(b.get());
  std::unordered_set<const VarNode*> inner_vars;
  std::vector<Buffer> loaded, stored;
  std::unordered_map<const BufferNode*, std::vector<std::vector<PrimExpr>>> stores;
  auto on_expr = [&](const PrimExpr& e) {
    if (const auto* load = as<BufferLoadNode>(e)) {
      bool seen = false;
      for (const Buffer& b : loaded) seen = seen || b.get() == load->buffer.get();
      if (!seen) loaded.push_back(load->buffer);
    } else if (const auto* let = as<LetNode>(e)) {
      inner_vars.insert(let->var.get());
    }
  };
  auto on_stmt = [&](const Stmt& s) {
    if (const auto* alloc = as<AllocateNode>(s)) inner.insert(alloc->buffer.get());
    if (const auto* loop = as<ForNode>(s)) inner_vars.insert(loop->loop_var.get());
    if (const auto* let = as<LetStmtNode>(s)) inner_vars.insert(let->var.get());
    if (const auto* block = as<BlockNode>(s)) {
      for (const Buffer& b : block->alloc_buffers) inner.insert(b.get());
      for (const IterVar& iv : block->iter_vars) inner_vars.insert(iv.var.get());
    }
    if (const auto* store = as<BufferStoreNode>(s)) {
      if (!stores.count(store->buffer.get())) stored.push_back(store->buffer);
      stores[store->buffer.get()].push_back(store->indices);
    }
  };
  pre_order_visit(body, on_expr, on_stmt);
  if (frame.init) pre_order_visit(frame.init, on_expr, on_stmt);
  if (!frame.reads) {
    frame.reads.emplace();
    for (const Buffer& b : loaded)
      if (!inner.count(b.get())) frame.reads->push_back(BufferRegion::full(b));
  }
  if (!frame.writes) {
    frame.writes.emplace();
    for (const Buffer& b : stored) {
      if (inner.count(b.get())) continue;
      const auto& all = stores[b.get()];
      bool single_point = true;
      for (const auto& indices : all) {
        for (size_t i = 0; i < indices.size() && single_point; ++i) {
          single_point =
              indices[i].dtype().lanes == 1 && structural_equal(indices[i], all[0][i]) &&
              !uses_var(indices[i], [&](const VarNode* v) { return inner_vars.count(v) > 0; });
        }
      }
      if (!single_point) {
        frame.writes->push_back(BufferRegion::full(b));
        continue;
      }
      BufferRegion region{b, {}};
      for (const PrimExpr& index : all[0])
        region.region.push_back({index, make_int(1, index.dtype())});
      frame.writes->push_back(std::move(region));
    }
  }
}

}  // namespace anvil::tir::text
