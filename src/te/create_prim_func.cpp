// te::create_prim_func: a tensor-expression DAG becomes a PrimFunc in
// scheduled form (docs in te.h): a root block holding the intermediates, and
// per compute one loop nest (spatial loops, then reduction loops) around a
// block named after the tensor.
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>

#include "anvil/support/error.h"
#include "anvil/te/te.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/structural_equal.h"

namespace anvil::te {

namespace {

using tir::Buffer;
using tir::BufferRegion;
using tir::Range;
using tir::Stmt;

// True when an index is plain arithmetic (no loads, calls or lets), so that a
// point region [index, index + 1) describes the access.
bool is_plain_index(const PrimExpr& index) {
  bool plain = true;
  tir::pre_order_visit(index, [&](const PrimExpr& e) {
    switch (e.kind()) {
      case tir::ExprKind::BufferLoad:
      case tir::ExprKind::Call:
      case tir::ExprKind::Let:
      case tir::ExprKind::Reduce:
        plain = false;
        break;
      default:
        break;
    }
  });
  return plain;
}

// The read regions of a block body: one per buffer other than `self`, in order
// of first access; a point when every access uses the same plain indices, the
// whole buffer otherwise.
std::vector<BufferRegion> read_regions(const std::vector<PrimExpr>& exprs, const Buffer& self) {
  // A variable bound by a let inside the body has no meaning in the block's signature, so an
  // index that uses one cannot name a point region.
  std::unordered_set<const tir::VarNode*> let_vars;
  for (const PrimExpr& expr : exprs)
    tir::pre_order_visit(expr, [&](const PrimExpr& e) {
      if (const auto* let = tir::as<tir::LetNode>(e)) let_vars.insert(let->var.get());
    });
  auto uses_let_var = [&](const PrimExpr& index) {
    return !let_vars.empty() &&
           tir::uses_var(index, [&](const tir::VarNode* v) { return let_vars.count(v) > 0; });
  };
  struct Access {
    Buffer buffer;
    std::vector<PrimExpr> indices;
    bool point = true;
  };
  std::vector<Access> accesses;
  for (const PrimExpr& expr : exprs) {
    if (!expr) continue;
    tir::pre_order_visit(expr, [&](const PrimExpr& e) {
      const auto* load = tir::as<tir::BufferLoadNode>(e);
      if (!load || load->buffer.get() == self.get()) return;
      bool plain = true;
      for (const PrimExpr& i : load->indices)
        plain = plain && is_plain_index(i) && !uses_let_var(i);
      for (Access& a : accesses) {
        if (a.buffer.get() != load->buffer.get()) continue;
        for (size_t d = 0; d < a.indices.size() && a.point; ++d)
          a.point = tir::structural_equal(a.indices[d], load->indices[d]);
        a.point = a.point && plain;
        return;
      }
      accesses.push_back({load->buffer, load->indices, plain});
    });
  }
  std::vector<BufferRegion> regions;
  for (const Access& a : accesses) {
    if (!a.point) {
      regions.push_back(BufferRegion::full(a.buffer));
      continue;
    }
    BufferRegion region{a.buffer, {}};
    for (const PrimExpr& i : a.indices) region.region.push_back(Range{i, tir::make_int(1)});
    regions.push_back(std::move(region));
  }
  return regions;
}

// Hands out names not used before in one scope: "x", then "x_1", "x_2", ...
class UniqueNames {
 public:
  explicit UniqueNames(std::set<std::string> reserved = {}) : used_(std::move(reserved)) {}
  std::string take(const std::string& base) {
    std::string name = base;
    for (int n = 1; used_.count(name); ++n) name = base + "_" + std::to_string(n);
    used_.insert(name);
    return name;
  }

 private:
  std::set<std::string> used_;
};

// One compute as a loop nest around its block.
Stmt make_loop_nest(const TensorNode& tensor, const std::string& block_name) {
  const auto* reduce = tir::as<tir::ReduceNode>(tensor.body);
  UniqueNames loop_names;
  std::vector<tir::Var> loop_vars;
  std::vector<PrimExpr> loop_extents;
  std::vector<IterVar> block_vars;
  std::vector<PrimExpr> iter_values;
  tir::VarMap axis_to_block_var;

  auto add_axis = [&](const IterVar& axis, tir::IterKind kind) {
    tir::Var loop = tir::VarNode::make(loop_names.take(axis.var->name));
    tir::Var block_var = tir::VarNode::make("v" + loop->name);
    loop_vars.push_back(loop);
    loop_extents.push_back(axis.dom.extent);
    block_vars.push_back(IterVar{block_var, axis.dom, kind});
    iter_values.push_back(loop + axis.dom.min);
    axis_to_block_var[axis.var.get()] = block_var;
  };
  for (const IterVar& axis : tensor.axis) add_axis(axis, tir::IterKind::Spatial);
  PrimExpr step_exists;  // over block vars: false on the steps added to empty reductions
  if (reduce) {
    std::unordered_set<const tir::VarNode*> axis_vars;
    for (const IterVar& axis : tensor.axis) axis_vars.insert(axis.var.get());
    for (const IterVar& axis : reduce->axis) {
      auto is_axis = [&](const tir::VarNode* v) { return axis_vars.count(v) > 0; };
      if (tir::uses_var(axis.dom.min, is_axis) || tir::uses_var(axis.dom.extent, is_axis))
        throw_error("compute '", tensor.name, "': the range of reduce axis '", axis.var->name,
                    "' depends on another axis");
      if (axis_to_block_var.count(axis.var.get()))
        throw_error("compute '", tensor.name, "' reduces over axis '", axis.var->name, "' twice");
      // A reduction with no steps must still write its identity, and the init runs at the
      // first step: an extent that may be 0 runs at least one step, which is skipped.
      std::optional<int64_t> extent = tir::as_const_int(axis.dom.extent);
      if (extent && *extent >= 1) {
        add_axis(axis, tir::IterKind::Reduce);
      } else {
        PrimExpr at_least_one =
            tir::max(axis.dom.extent, tir::make_int(1, axis.dom.extent.dtype()));
        add_axis(IterVar{axis.var, Range{axis.dom.min, at_least_one}, axis.kind},
                 tir::IterKind::Reduce);
        const tir::Var& v = block_vars.back().var;
        step_exists = step_exists
                          ? tir::logical_and(step_exists, v < axis.dom.min + axis.dom.extent)
                          : v < axis.dom.min + axis.dom.extent;
      }
      axis_vars.insert(axis.var.get());
    }
  }

  std::vector<PrimExpr> out_index;
  for (size_t d = 0; d < tensor.axis.size(); ++d) out_index.push_back(block_vars[d].var);
  const Buffer& out = tensor.buffer;

  Stmt body, init;
  std::vector<PrimExpr> read_exprs;
  if (reduce) {
    PrimExpr source = tir::substitute(reduce->source, axis_to_block_var);
    PrimExpr condition =
        reduce->condition ? tir::substitute(reduce->condition, axis_to_block_var) : nullptr;
    body = tir::store(out, tir::reduce_combine(reduce->combiner, tir::load(out, out_index), source),
                      out_index);
    if (condition && !tir::is_one(condition)) body = tir::IfThenElseNode::make(condition, body);
    if (step_exists) body = tir::IfThenElseNode::make(step_exists, body);
    init = tir::store(out, tir::reduce_identity(reduce->combiner, tensor.dtype), out_index);
    read_exprs = {source, condition};
  } else {
    PrimExpr value = tir::substitute(tensor.body, axis_to_block_var);
    body = tir::store(out, value, out_index);
    read_exprs = {value};
  }

  BufferRegion write{out, {}};
  for (const PrimExpr& i : out_index) write.region.push_back(Range{i, tir::make_int(1)});
  tir::Block block = tir::BlockNode::make(block_vars, read_regions(read_exprs, out), {write},
                                          block_name, body, init);
  Stmt nest = tir::BlockRealizeNode::make(iter_values, tir::const_true(), block);
  for (size_t l = loop_vars.size(); l-- > 0;)
    nest = tir::for_loop(loop_vars[l], tir::make_int(0), loop_extents[l], nest);
  return nest;
}

}  // namespace

tir::PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name) {
  std::unordered_set<const TensorNode*> in_args;
  for (const Tensor& t : args) {
    if (!t) throw_error("create_prim_func '", name, "': an argument is a null tensor");
    if (!in_args.insert(t.get()).second)
      throw_error("create_prim_func '", name, "': tensor '", t.name(), "' is passed twice");
  }

  // Computes in dependency order (inputs first), found from the arguments.
  std::vector<Tensor> computes;
  std::unordered_set<const TensorNode*> visited;
  std::function<void(const Tensor&, const Tensor&)> visit = [&](const Tensor& t,
                                                                const Tensor& reader) {
    if (!visited.insert(t.get()).second) return;
    if (t->is_placeholder) {
      if (!in_args.count(t.get()))
        throw_error("create_prim_func '", name, "': placeholder '", t.name(), "' read by '",
                    reader ? reader.name() : t.name(), "' is not an argument");
      return;
    }
    for (const Tensor& input : t->inputs) visit(input, t);
    computes.push_back(t);
  };
  for (const Tensor& t : args) visit(t, Tensor());

  std::vector<tir::Var> params;
  std::vector<std::pair<tir::Var, Buffer>> buffer_map;
  for (const Tensor& t : args) {
    params.push_back(tir::VarNode::make(t.name(), DataType::handle()));
    buffer_map.emplace_back(params.back(), t->buffer);
  }

  std::vector<Buffer> intermediates;
  std::vector<Stmt> nests;
  UniqueNames block_names({"root"});
  for (const Tensor& t : computes) {
    if (!in_args.count(t.get())) intermediates.push_back(t->buffer);
    nests.push_back(make_loop_nest(*t, block_names.take(t.name())));
  }
  tir::Block root = tir::BlockNode::make({}, {}, {}, "root", tir::seq_stmt(std::move(nests)),
                                         nullptr, std::move(intermediates));
  Stmt body = tir::BlockRealizeNode::make({}, tir::const_true(), root);
  ir::DictAttrs attrs = ir::DictAttrs{}.with("global_symbol", name).with("tir.noalias", int64_t(1));
  return tir::PrimFuncNode::make(std::move(params), std::move(buffer_map), body, std::move(attrs));
}

}  // namespace anvil::te
