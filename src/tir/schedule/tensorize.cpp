// tensorize: a loop nest that computes what a registered micro-kernel
// describes is replaced by the kernel's implementation.
//
// Matching works on buffer accesses rather than on bindings: every access of
// the nest's block must equal the description's access plus an offset that
// does not vary inside the tensorized loops (affine indices compared as
// linear forms). The offsets, expressed in fresh outer iteration variables,
// give the regions the implementation works on; the implementation's
// symbolic strides, elem_offset and data pointer are bound to the real
// buffer's. The result is one block (TVM's blockized "<block>_o") whose
// iteration variables carry the outer part of the original bindings, so the
// loops left outside keep their spatial/reduction meaning.
#include <map>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/schedule.h"
#include "tir/schedule/schedule_util.h"

namespace anvil::tir {

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::map<std::string, TensorIntrin>& registry() {
  static std::map<std::string, TensorIntrin> intrinsics;
  return intrinsics;
}

// ---------------------------------------------------------------- linear forms

// constant + sum(coefficient * atom); anything that is not +, - or a
// multiplication by a constant is an atom.
struct Linear {
  int64_t constant = 0;
  std::vector<std::pair<PrimExpr, int64_t>> terms;

  void add_atom(const PrimExpr& atom, int64_t coeff) {
    for (auto& [a, c] : terms)
      if (sched::same_expr(a, atom)) {
        c += coeff;
        return;
      }
    terms.emplace_back(atom, coeff);
  }
  void add(const Linear& other, int64_t scale) {
    constant += other.constant * scale;
    for (const auto& [a, c] : other.terms) add_atom(a, c * scale);
  }
  bool is_zero() const {
    if (constant != 0) return false;
    for (const auto& t : terms)
      if (t.second != 0) return false;
    return true;
  }
  bool uses_any(const std::unordered_set<const VarNode*>& vars) const {
    for (const auto& [a, c] : terms)
      if (c != 0 && uses_var(a, [&](const VarNode* v) { return vars.count(v) > 0; })) return true;
    return false;
  }
  PrimExpr to_expr(DataType t) const {
    PrimExpr out = make_int(0, t);
    for (const auto& [a, c] : terms) {
      if (c > 0) out = out + a * make_int(c, t);
      if (c < 0) out = out - a * make_int(-c, t);
    }
    return out + make_int(constant, t);
  }
};

Linear linear_of(const PrimExpr& e) {
  Linear out;
  if (auto v = as_const_int(e); v && e.dtype().lanes == 1) {
    out.constant = *v;
  } else if (const auto* add = as<AddNode>(e)) {
    out = linear_of(add->a);
    out.add(linear_of(add->b), 1);
  } else if (const auto* sub = as<SubNode>(e)) {
    out = linear_of(sub->a);
    out.add(linear_of(sub->b), -1);
  } else if (const auto* mul = as<MulNode>(e); mul && as_const_int(mul->b)) {
    out.add(linear_of(mul->a), *as_const_int(mul->b));
  } else if (mul && as_const_int(mul->a)) {
    out.add(linear_of(mul->b), *as_const_int(mul->a));
  } else {
    out.add_atom(e, 1);
  }
  return out;
}

Linear difference(const PrimExpr& a, const PrimExpr& b) {
  Linear out = linear_of(a);
  out.add(linear_of(b), -1);
  return out;
}

// ---------------------------------------------------------------- nests

// Loops over one block.
struct LoopNest {
  std::vector<For> loops;
  BlockRealize realize;
};

// The body of a function without the root block of scheduled form.
Stmt strip_root(const Stmt& body) {
  const auto* realize = as<BlockRealizeNode>(body);
  if (realize && realize->block->iter_vars.empty() && realize->block->name == "root")
    return realize->block->body;
  return body;
}

std::optional<LoopNest> as_loop_nest(Stmt s) {
  LoopNest nest;
  while (const auto* loop = as<ForNode>(s)) {
    nest.loops.emplace_back(loop);
    s = loop->body;
  }
  const auto* realize = as<BlockRealizeNode>(s);
  if (!realize || nest.loops.empty()) return std::nullopt;
  nest.realize = BlockRealize(realize);
  return nest;
}

// "3 loops over block 'C'" or "2 loops over a SeqStmt".
std::string describe_nest(Stmt s) {
  int loops = 0;
  while (const auto* loop = as<ForNode>(s)) {
    ++loops;
    s = loop->body;
  }
  std::string what = as<BlockRealizeNode>(s)
                         ? "block '" + as<BlockRealizeNode>(s)->block->name + "'"
                         : std::string("a ") + stmt_kind_name(s->kind);
  return std::to_string(loops) + (loops == 1 ? " loop over " : " loops over ") + what;
}

// The buffers of a function's parameters, in order.
std::vector<Buffer> param_buffers(const PrimFunc& func) {
  std::vector<Buffer> out;
  for (const Var& p : func->params) out.push_back(func->buffer_of(p));
  return out;
}

// ---------------------------------------------------------------- matching

// What a parameter buffer of the description is bound to.
struct BufferBinding {
  Buffer desc;
  Buffer actual;
  std::vector<Linear> offsets;  // per dimension, in the outer iteration variables
  bool read = false, written = false;
};

class NestMatcher {
 public:
  NestMatcher(const std::string& intrin, const LoopNest& desc, const LoopNest& actual)
      : intrin_(intrin), block_name_(actual.realize->block->name) {
    // Description loop i <-> actual loop i, counted from their minimums.
    for (size_t k = 0; k < desc.loops.size(); ++k) {
      const For &d = desc.loops[k], &a = actual.loops[k];
      desc_expand_[d->loop_var.get()] = a->loop_var - a->min + d->min;
      inner_vars_.insert(a->loop_var.get());
      inner_to_min_[a->loop_var.get()] = a->min;
    }
    const Block& db = desc.realize->block;
    for (size_t i = 0; i < db.get()->iter_vars.size(); ++i)
      desc_expand_[db->iter_vars[i].var.get()] =
          substitute(desc.realize->iter_values[i], desc_expand_);
    const Block& ab = actual.realize->block;
    for (size_t i = 0; i < ab->iter_vars.size(); ++i)
      actual_expand_[ab->iter_vars[i].var.get()] = actual.realize->iter_values[i];
  }

  // Actual iteration variable -> its value in the outer iteration variables.
  VarMap& actual_outer() { return actual_outer_; }
  std::vector<BufferBinding>& bindings() { return bindings_; }

  void match_stmt(const Stmt& d, const Stmt& a) {
    if (d->kind != a->kind)
      fail("the description has ", stmt_kind_name(d->kind), " where the block has ",
           stmt_kind_name(a->kind));
    switch (d->kind) {
      case StmtKind::BufferStore: {
        const auto *x = as<BufferStoreNode>(d), *y = as<BufferStoreNode>(a);
        match_expr(x->value, y->value);
        match_access(x->buffer, x->indices, y->buffer, y->indices, /*write=*/true);
        return;
      }
      case StmtKind::SeqStmt: {
        const auto *x = as<SeqStmtNode>(d), *y = as<SeqStmtNode>(a);
        if (x->seq.size() != y->seq.size())
          fail("the description has ", x->seq.size(), " statements in sequence, the block ",
               y->seq.size());
        for (size_t i = 0; i < x->seq.size(); ++i) match_stmt(x->seq[i], y->seq[i]);
        return;
      }
      case StmtKind::Evaluate:
        match_expr(as<EvaluateNode>(d)->value, as<EvaluateNode>(a)->value);
        return;
      case StmtKind::IfThenElse: {
        const auto *x = as<IfThenElseNode>(d), *y = as<IfThenElseNode>(a);
        match_expr(x->condition, y->condition);
        match_stmt(x->then_case, y->then_case);
        if (bool(x->else_case) != bool(y->else_case)) fail("an else branch is missing on one side");
        if (x->else_case) match_stmt(x->else_case, y->else_case);
        return;
      }
      default:
        fail("the description's body has ", stmt_kind_name(d->kind),
             ", which tensorize does not match");
    }
  }

  void match_expr(const PrimExpr& d, const PrimExpr& a) {
    if (d->kind != a->kind)
      fail("the description has ", expr_kind_name(d->kind), " where the block has ",
           expr_kind_name(a->kind));
    if (d.dtype() != a.dtype())
      fail("the description computes ", d.dtype().to_string(), " where the block computes ",
           a.dtype().to_string());
    switch (d->kind) {
      case ExprKind::IntImm:
        if (as<IntImmNode>(d)->value != as<IntImmNode>(a)->value)
          fail("the constants ", as<IntImmNode>(d)->value, " and ", as<IntImmNode>(a)->value,
               " differ");
        return;
      case ExprKind::FloatImm:
        if (as<FloatImmNode>(d)->value != as<FloatImmNode>(a)->value)
          fail("the constants ", as<FloatImmNode>(d)->value, " and ", as<FloatImmNode>(a)->value,
               " differ");
        return;
      case ExprKind::StringImm:
        if (as<StringImmNode>(d)->value != as<StringImmNode>(a)->value) fail("the strings differ");
        return;
      case ExprKind::Var:
        if (!difference(substitute(d, desc_expand_), substitute(a, actual_expand_)).is_zero())
          fail("variable '", as<VarNode>(d)->name, "' of the description and '",
               as<VarNode>(a)->name, "' of the block take different values");
        return;
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                 \
  case ExprKind::Name: {                                       \
    const auto *x = as<Name##Node>(d), *y = as<Name##Node>(a); \
    match_expr(x->a, y->a);                                    \
    match_expr(x->b, y->b);                                    \
    return;                                                    \
  }
#include "anvil/tir/node_kinds.def"
      case ExprKind::Not:
        match_expr(as<NotNode>(d)->a, as<NotNode>(a)->a);
        return;
      case ExprKind::Select: {
        const auto *x = as<SelectNode>(d), *y = as<SelectNode>(a);
        match_expr(x->condition, y->condition);
        match_expr(x->true_value, y->true_value);
        match_expr(x->false_value, y->false_value);
        return;
      }
      case ExprKind::Cast:
        match_expr(as<CastNode>(d)->value, as<CastNode>(a)->value);
        return;
      case ExprKind::Call: {
        const auto *x = as<CallNode>(d), *y = as<CallNode>(a);
        if (x->op != y->op || x->call_kind != y->call_kind || x->args.size() != y->args.size())
          fail("the description calls '", x->op, "' where the block calls '", y->op, "'");
        for (size_t i = 0; i < x->args.size(); ++i) match_expr(x->args[i], y->args[i]);
        return;
      }
      case ExprKind::BufferLoad: {
        const auto *x = as<BufferLoadNode>(d), *y = as<BufferLoadNode>(a);
        match_access(x->buffer, x->indices, y->buffer, y->indices, /*write=*/false);
        return;
      }
      default:
        fail("the description's body has ", expr_kind_name(d->kind),
             ", which tensorize does not match");
    }
  }

  template <typename... Args>
  [[noreturn]] void fail(const Args&... why) const {
    throw_error("tensorize: block '", block_name_, "' does not match intrinsic '", intrin_,
                "': ", why...);
  }

 private:
  BufferBinding& bind(const Buffer& d, const Buffer& a) {
    for (BufferBinding& b : bindings_) {
      if (b.desc.get() == d.get()) {
        if (b.actual.get() != a.get())
          fail("the description's buffer '", d->name, "' stands for both '", b.actual->name,
               "' and '", a->name, "'");
        return b;
      }
      if (b.actual.get() == a.get())
        fail("buffer '", a->name, "' plays both '", b.desc->name, "' and '", d->name,
             "' of the description");
    }
    if (d->dtype != a->dtype)
      fail("buffer '", a->name, "' holds ", a->dtype.to_string(), " where the description's '",
           d->name, "' holds ", d->dtype.to_string());
    if (d->ndim() != a->ndim())
      fail("buffer '", a->name, "' has ", a->ndim(), " dimensions where the description's '",
           d->name, "' has ", d->ndim());
    bindings_.push_back(BufferBinding{d, a, {}, false, false});
    return bindings_.back();
  }

  void match_access(const Buffer& d, const std::vector<PrimExpr>& d_idx, const Buffer& a,
                    const std::vector<PrimExpr>& a_idx, bool write) {
    BufferBinding& binding = bind(d, a);
    (write ? binding.written : binding.read) = true;
    std::vector<Linear> offsets;
    for (size_t dim = 0; dim < d_idx.size(); ++dim) {
      PrimExpr desc_index = substitute(d_idx[dim], desc_expand_);
      PrimExpr actual_index = substitute(a_idx[dim], actual_expand_);
      if (difference(actual_index, desc_index).uses_any(inner_vars_))
        fail("index ", dim, " of buffer '", a->name,
             "' does not move with the description's index ", dim, " of '", d->name,
             "' inside the tensorized loops");
      offsets.push_back(
          difference(substitute(a_idx[dim], actual_outer_), substitute(desc_index, inner_to_min_)));
    }
    if (binding.offsets.empty()) {
      binding.offsets = std::move(offsets);
      return;
    }
    for (size_t dim = 0; dim < offsets.size(); ++dim) {
      Linear delta = offsets[dim];
      delta.add(binding.offsets[dim], -1);
      if (!delta.is_zero())
        fail("buffer '", a->name, "' is accessed at two different offsets in dimension ", dim);
    }
  }

  std::string intrin_, block_name_;
  VarMap desc_expand_, actual_expand_, actual_outer_, inner_to_min_;
  std::unordered_set<const VarNode*> inner_vars_;
  std::vector<BufferBinding> bindings_;
};

// ---------------------------------------------------------------- binding the implementation

// The implementation's body for one use: its parameter buffers become the
// matched regions of the real buffers, and every variable it defines is
// fresh so that two uses never share a loop variable.
class ImplementationBinder : public Mutator {
 public:
  struct Target {
    Buffer actual;
    std::vector<PrimExpr> offsets;
  };

  ImplementationBinder(std::map<const BufferNode*, Target> targets, VarMap vars,
                       sched::NameSupply& names)
      : targets_(std::move(targets)), vars_(std::move(vars)), names_(names) {}

  PrimExpr mutate_Var(const VarNode* node, const PrimExpr& self) override {
    auto it = vars_.find(node);
    return it == vars_.end() ? self : it->second;
  }

  PrimExpr mutate_BufferLoad(const BufferLoadNode* node, const PrimExpr& self) override {
    auto it = targets_.find(node->buffer.get());
    if (it == targets_.end()) return Mutator::mutate_BufferLoad(node, self);
    return load(it->second.actual, shifted(it->second, node->indices));
  }

  Stmt mutate_BufferStore(const BufferStoreNode* node, const Stmt& self) override {
    auto it = targets_.find(node->buffer.get());
    if (it == targets_.end()) return Mutator::mutate_BufferStore(node, self);
    return store(it->second.actual, mutate(node->value), shifted(it->second, node->indices));
  }

  Stmt mutate_For(const ForNode* node, const Stmt&) override {
    Var fresh = renamed(node->loop_var);
    return ForNode::make(fresh, mutate(node->min), mutate(node->extent), node->for_kind,
                         mutate(node->body), node->annotations);
  }

  Stmt mutate_LetStmt(const LetStmtNode* node, const Stmt&) override {
    PrimExpr value = mutate(node->value);
    Var fresh = renamed(node->var);
    return LetStmtNode::make(fresh, value, mutate(node->body));
  }

  Stmt mutate_Block(const BlockNode* node, const Stmt&) override {
    std::vector<IterVar> iter_vars;
    for (const IterVar& iv : node->iter_vars) {
      Range dom{mutate(iv.dom.min), mutate(iv.dom.extent)};
      iter_vars.push_back(IterVar{renamed(iv.var), dom, iv.kind});
    }
    auto regions = [&](const std::vector<BufferRegion>& in) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : in) {
        auto it = targets_.find(r.buffer.get());
        BufferRegion region{it == targets_.end() ? r.buffer : it->second.actual, {}};
        for (size_t d = 0; d < r.region.size(); ++d) {
          PrimExpr min = mutate(r.region[d].min);
          if (it != targets_.end()) min = it->second.offsets[d] + min;
          region.region.push_back(Range{min, mutate(r.region[d].extent)});
        }
        out.push_back(region);
      }
      return out;
    };
    return BlockNode::make(std::move(iter_vars), regions(node->reads), regions(node->writes),
                           names_.fresh_block_name(node->name), mutate(node->body),
                           mutate(node->init), node->alloc_buffers, node->annotations);
  }

 private:
  Var renamed(const Var& v) {
    Var fresh = VarNode::make(names_.fresh_var_name(v->name), v->dtype);
    vars_[v.get()] = fresh;
    return fresh;
  }

  std::vector<PrimExpr> shifted(const Target& t, const std::vector<PrimExpr>& indices) {
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < indices.size(); ++d) out.push_back(t.offsets[d] + mutate(indices[d]));
    return out;
  }

  std::map<const BufferNode*, Target> targets_;
  VarMap vars_;
  sched::NameSupply& names_;
};

// A stride or offset for a message: the number, the variable, or "an expression".
std::string print_int(const PrimExpr& e) {
  if (auto v = as_const_int(e)) return std::to_string(*v);
  if (const auto* var = as<VarNode>(e)) return var->name;
  return "an expression";
}

// Checks an intrinsic buffer's constant strides and offset against the real
// region (which starts at offsets and spans extents) and binds its symbolic
// data pointer, strides, offset and shape (into vars).
void bind_layout(const std::string& intrin, const char* side, const Buffer& declared,
                 const Buffer& actual, const std::vector<PrimExpr>& offsets,
                 const std::vector<PrimExpr>& extents, VarMap& vars) {
  std::vector<PrimExpr> actual_strides = actual->effective_strides();
  std::vector<PrimExpr> declared_strides = declared->effective_strides();
  PrimExpr start = actual->elem_offset;
  for (size_t d = 0; d < offsets.size(); ++d) start = start + offsets[d] * actual_strides[d];
  vars[declared->data.get()] = actual->data;
  for (size_t d = 0; d < declared_strides.size(); ++d) {
    if (const auto* v = as<VarNode>(declared_strides[d])) {
      vars[v] = actual_strides[d];
    } else if (!sched::prove_equal(declared_strides[d], actual_strides[d])) {
      throw_error("tensorize: intrinsic '", intrin, "' ", side, " needs buffer '", declared->name,
                  "' to have stride ", print_int(declared_strides[d]), " in dimension ", d,
                  ", but '", actual->name, "' has stride ", print_int(actual_strides[d]),
                  " (declare symbolic strides to accept any)");
    }
  }
  if (const auto* v = as<VarNode>(declared->elem_offset)) {
    vars[v] = start;
  } else if (!sched::prove_equal(declared->elem_offset, start)) {
    throw_error("tensorize: intrinsic '", intrin, "' ", side, " needs buffer '", declared->name,
                "' to start at element ", print_int(declared->elem_offset), " but the region of '",
                actual->name, "' starts elsewhere (declare a symbolic elem_offset to accept any)");
  }
  for (size_t d = 0; d < declared->shape.size(); ++d)
    if (const auto* v = as<VarNode>(declared->shape[d])) vars[v] = extents[d];
}

}  // namespace

void register_tensor_intrin(const std::string& name, TensorIntrin intrin) {
  if (name.empty()) throw_error("register_tensor_intrin: the name is empty");
  const PrimFunc& desc = intrin.description;
  const PrimFunc& impl = intrin.implementation;
  if (!desc || !impl)
    throw_error("register_tensor_intrin: intrinsic '", name,
                "' needs both a description and an implementation");
  if (desc->params.size() != impl->params.size())
    throw_error("register_tensor_intrin: the description of '", name, "' has ", desc->params.size(),
                " parameters but its implementation has ", impl->params.size());
  std::vector<Buffer> desc_buffers = param_buffers(desc), impl_buffers = param_buffers(impl);
  for (size_t p = 0; p < desc_buffers.size(); ++p) {
    const Buffer &d = desc_buffers[p], &i = impl_buffers[p];
    if (!d || !i)
      throw_error("register_tensor_intrin: parameter ", p, " of '", name, "' is not a buffer");
    if (d->dtype != i->dtype || d->ndim() != i->ndim())
      throw_error("register_tensor_intrin: parameter ", p, " of '", name, "' is ",
                  d->dtype.to_string(), " of rank ", d->ndim(), " in the description but ",
                  i->dtype.to_string(), " of rank ", i->ndim(), " in the implementation");
    for (size_t k = 0; k < d->shape.size(); ++k) {
      auto extent = as_const_int(d->shape[k]);
      if (!extent)
        throw_error("register_tensor_intrin: buffer '", d->name, "' of the description of '", name,
                    "' has a non-constant shape");
      if (auto other = as_const_int(i->shape[k]); other && *other != *extent)
        throw_error("register_tensor_intrin: buffer '", d->name, "' of '", name, "' has extent ",
                    *extent, " in dimension ", k, " in the description but ", *other,
                    " in the implementation");
    }
  }
  Stmt desc_body = strip_root(desc->body);
  std::optional<LoopNest> nest = as_loop_nest(desc_body);
  if (!nest)
    throw_error("register_tensor_intrin: the description of '", name,
                "' must be loops over one block, not ", describe_nest(desc_body));
  const Block& block = nest->realize->block;
  if (block->init)
    throw_error("register_tensor_intrin: the block of the description of '", name,
                "' has an init; describe the update only");
  for (const Buffer& d : desc_buffers) {
    bool accessed = false;
    pre_order_visit(
        block->body,
        [&](const PrimExpr& e) {
          if (const auto* l = as<BufferLoadNode>(e))
            accessed = accessed || l->buffer.get() == d.get();
        },
        [&](const Stmt& s) {
          if (const auto* st = as<BufferStoreNode>(s))
            accessed = accessed || st->buffer.get() == d.get();
        });
    if (!accessed)
      throw_error("register_tensor_intrin: the description of '", name,
                  "' never accesses its buffer '", d->name, "'");
  }
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry()[name] = std::move(intrin);
}

void Schedule::tensorize(const LoopRV& loop_rv, const std::string& intrin_name) {
  sched::LoopLocation where = sched::find_loop(func_, loop_rv.var, "tensorize");
  TensorIntrin intrin;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto it = registry().find(intrin_name);
    if (it == registry().end())
      throw_error("tensorize: no tensor intrinsic named '", intrin_name, "' is registered");
    intrin = it->second;
  }
  const std::string& loop_name = loop_rv.var->name;
  Stmt desc_body = strip_root(intrin.description->body);
  LoopNest desc = *as_loop_nest(desc_body);
  std::optional<LoopNest> actual = as_loop_nest(where.loop);
  if (!actual || actual->loops.size() != desc.loops.size())
    throw_error("tensorize: the nest under loop '", loop_name, "' (", describe_nest(where.loop),
                ") does not have the shape of intrinsic '", intrin_name, "' (",
                describe_nest(desc_body), ")");
  const Block& block = actual->realize->block;
  if (block->init && !intrin.from_identity)
    throw_error("tensorize: block '", block->name,
                "' has an init; separate it with decompose_reduction first");
  for (size_t k = 0; k < desc.loops.size(); ++k) {
    const For &d = desc.loops[k], &a = actual->loops[k];
    if (!sched::prove_equal(d->extent, a->extent))
      throw_error("tensorize: loop '", a->loop_var->name, "' has extent ", print_int(a->extent),
                  " where intrinsic '", intrin_name, "' has loop '", d->loop_var->name,
                  "' of extent ", print_int(d->extent));
  }
  std::vector<For> all_loops = where.outer_loops;
  all_loops.insert(all_loops.end(), actual->loops.begin(), actual->loops.end());
  if (!is_one(sched::simplify_predicate(actual->realize->predicate, sched::ranges_of(all_loops))))
    throw_error("tensorize: block '", block->name, "' under loop '", loop_name,
                "' has a predicate (a split that does not divide); intrinsic '", intrin_name,
                "' covers whole tiles only");

  // Each iteration variable's value with the tensorized loops at their start
  // becomes an iteration variable of the new block (a constant needs none).
  sched::NameSupply names(func_);
  NestMatcher matcher(intrin_name, desc, *actual);
  VarMap inner_to_min;
  for (const For& l : actual->loops) inner_to_min[l->loop_var.get()] = l->min;
  std::vector<IterVar> outer_iter_vars;
  std::vector<PrimExpr> outer_values;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    PrimExpr outer =
        sched::simplify_expr(substitute(actual->realize->iter_values[i], inner_to_min));
    if (as_const_int(outer)) {
      matcher.actual_outer()[iv.var.get()] = outer;
      continue;
    }
    if (block->init && iv.kind == IterKind::Reduce)
      throw_error("tensorize: block '", block->name, "' keeps its init, but its reduction over '",
                  iv.var->name, "' runs partly outside the loops of intrinsic '", intrin_name,
                  "', which start from the identity");
    Var fresh = VarNode::make(names.fresh_var_name(iv.var->name + "_o"), iv.var->dtype);
    matcher.actual_outer()[iv.var.get()] = fresh;
    outer_iter_vars.push_back(IterVar{fresh, iv.dom, iv.kind});
    outer_values.push_back(outer);
  }
  matcher.match_stmt(desc.realize->block->body, block->body);

  // Bind the implementation's buffers to the matched regions.
  std::vector<Buffer> desc_buffers = param_buffers(intrin.description);
  std::vector<Buffer> impl_buffers = param_buffers(intrin.implementation);
  std::map<const BufferNode*, ImplementationBinder::Target> targets;
  VarMap impl_vars, desc_vars;
  std::vector<BufferRegion> reads, writes;
  for (size_t p = 0; p < desc_buffers.size(); ++p) {
    const BufferBinding* binding = nullptr;
    for (const BufferBinding& b : matcher.bindings())
      if (b.desc.get() == desc_buffers[p].get()) binding = &b;
    ANVIL_ICHECK(binding, "tensorize: buffer '", desc_buffers[p]->name, "' of intrinsic '",
                 intrin_name, "' was not matched");
    std::vector<PrimExpr> offsets;
    for (const Linear& l : binding->offsets) offsets.push_back(l.to_expr(kIndexType));
    const std::vector<PrimExpr>& extents = desc_buffers[p]->shape;
    bind_layout(intrin_name, "description", desc_buffers[p], binding->actual, offsets, extents,
                desc_vars);
    bind_layout(intrin_name, "implementation", impl_buffers[p], binding->actual, offsets, extents,
                impl_vars);
    targets[impl_buffers[p].get()] = ImplementationBinder::Target{binding->actual, offsets};
    BufferRegion region{binding->actual, {}};
    for (size_t d = 0; d < offsets.size(); ++d)
      region.region.push_back(Range{offsets[d], extents[d]});
    if (binding->read) reads.push_back(region);
    if (binding->written) writes.push_back(region);
  }
  std::string wrapper_name = names.fresh_block_name(block->name + "_o");
  Stmt body = ImplementationBinder(std::move(targets), std::move(impl_vars), names)
                  .mutate(strip_root(intrin.implementation->body));
  Block wrapper = BlockNode::make(std::move(outer_iter_vars), std::move(reads), std::move(writes),
                                  wrapper_name, body);
  Stmt realize = BlockRealizeNode::make(std::move(outer_values), const_true(), wrapper);
  func_ = sched::replace_stmt(func_, where.loop, realize);
}

}  // namespace anvil::tir
