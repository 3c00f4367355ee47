// partition_loops: a loop whose body holds guards on its variable (the predicate a split with a
// non-dividing factor leaves, `i_0 * 6 + i_1 < 1024`) is cut in two: a main loop over the
// longest prefix of iterations where every such guard is provably true, with the guards
// removed, and the rest, which keeps them. Tiles that do not divide an extent then cost a short
// tail instead of a branch in every iteration, which also lets the vectorizer and LLVM keep a
// register tile in registers.
//
// The partial tile of a loop over a size variable's tiles runs once, for the remainder
// r = n - i * T in [1, T): where its guards compare unrolled inner loops with r, the tail is
// specialized, one guard-free copy per value of r (T - 1 copies, T at most 16), so that the last
// tile of a register-tiled row keeps its tile in registers like the full ones.
//
// Only serial and unrolled loops are cut (parallel loops are outlined into tasks and vectorized
// ones must stay whole): with constant bounds anywhere, over a size variable's tiles at the last
// full tile; the tail is a fresh copy of the body, so every variable keeps one definition. The
// guard is proven, not assumed, for the whole prefix with the analyzer, under the ranges of every
// enclosing and inner loop.
#include <functional>
#include <optional>
#include <vector>

#include "anvil/tir/arith.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"
#include "tir/transform/fresh_copy.h"

namespace anvil::tir::transform {

namespace {

// A guard (an if without else) inside a candidate loop, with the inner loops around it. Its
// condition is a conjunction: the terms that read the loop's variable are the ones to prove
// (a tile that is cut both ways guards on `row < R and column < C`); the others stay behind for
// a cut of another loop.
struct InnerLoop {
  Var var;
  Range range;
  ForKind kind;
};

struct Guard {
  const IfThenElseNode* node;
  std::vector<InnerLoop> inner_loops;
  std::vector<PrimExpr> on_var;
  std::vector<PrimExpr> others;
};

void split_conjunction(const PrimExpr& e, std::vector<PrimExpr>& terms) {
  if (const auto* both = as<AndNode>(e)) {
    split_conjunction(both->a, terms);
    split_conjunction(both->b, terms);
    return;
  }
  terms.push_back(e);
}

// The guards in body that read var, each with the loops between the candidate and it. A guard
// under a let or an allocation that its condition might read is still collected: proving it
// then fails (the let's variable is unbounded), which only means no partition.
std::vector<Guard> guards_on(const Stmt& body, const VarNode* var) {
  std::vector<Guard> guards;
  std::vector<InnerLoop> loops;
  std::function<void(const Stmt&)> visit = [&](const Stmt& s) {
    if (const auto* loop = as<ForNode>(s)) {
      loops.push_back(
          {loop->loop_var, Range::from_min_extent(loop->min, loop->extent), loop->for_kind});
      visit(loop->body);
      loops.pop_back();
      return;
    }
    if (const auto* branch = as<IfThenElseNode>(s)) {
      auto reads_var = [&](const PrimExpr& e) {
        return uses_var(e, [&](const VarNode* v) { return v == var; });
      };
      if (!branch->else_case && reads_var(branch->condition)) {
        Guard guard{branch, loops, {}, {}};
        std::vector<PrimExpr> terms;
        split_conjunction(branch->condition, terms);
        for (const PrimExpr& term : terms)
          (reads_var(term) ? guard.on_var : guard.others).push_back(term);
        guards.push_back(std::move(guard));
      }
      visit(branch->then_case);
      if (branch->else_case) visit(branch->else_case);
      return;
    }
    if (const auto* seq = as<SeqStmtNode>(s)) {
      for (const Stmt& child : seq->seq) visit(child);
      return;
    }
    if (const auto* let = as<LetStmtNode>(s)) return visit(let->body);
    if (const auto* alloc = as<AllocateNode>(s)) return visit(alloc->body);
  };
  visit(body);
  return guards;
}

PrimExpr conjunction(const std::vector<PrimExpr>& terms) {
  PrimExpr all = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) all = logical_and(all, terms[i]);
  return all;
}

// Drops the proven terms of the listed guards: a guard with no other terms becomes its body.
class GuardRemover : public Mutator {
 public:
  explicit GuardRemover(const std::vector<Guard>& guards) : guards_(guards) {}
  Stmt mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) override {
    for (const Guard& g : guards_) {
      if (g.node != node) continue;
      Stmt body = mutate(node->then_case);
      if (g.others.empty()) return body;
      return IfThenElseNode::make(conjunction(g.others), body, Stmt());
    }
    return Mutator::mutate_IfThenElse(node, self);
  }

 private:
  const std::vector<Guard>& guards_;
};

// In the copy of a partial tile for remainder k: each guard term `a < b` on the tile variable,
// known to equal `0 < r + offset` (offset over the guard's unrolled inner loops), becomes
// `0 < k + offset`; the simplifier resolves it once those loops are unrolled.
class RemainderGuards : public Mutator {
 public:
  RemainderGuards(const std::vector<Guard>& guards,
                  const std::vector<std::vector<PrimExpr>>& offsets, int64_t remainder)
      : guards_(guards), offsets_(offsets), remainder_(remainder) {}
  Stmt mutate_IfThenElse(const IfThenElseNode* node, const Stmt& self) override {
    for (size_t i = 0; i < guards_.size(); ++i) {
      const Guard& g = guards_[i];
      if (g.node != node) continue;
      std::vector<PrimExpr> terms = g.others;
      for (const PrimExpr& offset : offsets_[i]) {
        PrimExpr k = make_int(remainder_, offset.dtype());
        terms.push_back(make_int(0, offset.dtype()) < k + offset);
      }
      return IfThenElseNode::make(conjunction(terms), mutate(node->then_case), Stmt());
    }
    return Mutator::mutate_IfThenElse(node, self);
  }

 private:
  const std::vector<Guard>& guards_;
  const std::vector<std::vector<PrimExpr>>& offsets_;
  int64_t remainder_;
};

// Tiles of at most this many iterations have their partial tile specialized per remainder.
constexpr int64_t kMaxSpecializedTile = 16;

class Partitioner : public Mutator {
 public:
  Stmt mutate_For(const ForNode* node, const Stmt& self) override {
    std::optional<int64_t> min = as_const_int(node->min);
    std::optional<int64_t> extent = as_const_int(node->extent);
    const bool cuttable =
        (node->for_kind == ForKind::Serial || node->for_kind == ForKind::Unrolled) && min &&
        extent && *extent > 1;
    if (cuttable) {
      std::vector<Guard> guards = guards_on(node->body, node->loop_var.get());
      int64_t prefix = guards.empty() ? 0 : proven_prefix(node, *extent, guards);
      if (prefix == *extent) {
        // Guards that hold on every iteration go away without a cut.
        Stmt unguarded = ForNode::make(node->loop_var, node->min, node->extent, node->for_kind,
                                       GuardRemover(guards).mutate(node->body), node->annotations);
        return mutate(unguarded);
      }
      if (prefix > 0) return cut(node, guards, make_int(prefix, node->loop_var->dtype));
    }
    if (std::optional<Stmt> tiles = cut_symbolic(node)) return *tiles;
    analyzer_.bind(node->loop_var, Range::from_min_extent(node->min, node->extent));
    Stmt result = Mutator::mutate_For(node, self);
    analyzer_.unbind(node->loop_var);
    return result;
  }

 private:
  // The loop cut after its first `prefix` iterations: a main loop over them with the guards
  // removed, then the rest with its own fresh copy of the body.
  // With `tiles` (the tile size and the extent n it tiles), the tail is the one partial tile
  // and is specialized per remainder where its guards allow.
  struct Tiles {
    int64_t tile;
    PrimExpr extent;
  };
  Stmt cut(const ForNode* node, const std::vector<Guard>& guards, const PrimExpr& prefix,
           std::optional<Tiles> tiles = std::nullopt) {
    Stmt main_body = GuardRemover(guards).mutate(node->body);
    Var tail_var = VarNode::make(node->loop_var->name, node->loop_var->dtype);
    Stmt tail_body =
        detail::FreshCopy(VarMap{{node->loop_var.get(), PrimExpr(tail_var)}}).mutate(node->body);
    if (tiles) {
      PrimExpr remainder = analyzer_.simplify(
          tiles->extent - PrimExpr(tail_var) * make_int(tiles->tile, tail_var->dtype));
      if (std::optional<Stmt> specialized =
              specialize_remainder(tail_var, tiles->tile, remainder, tail_body))
        tail_body = *specialized;
    }
    Stmt main_loop = ForNode::make(node->loop_var, node->min, prefix, node->for_kind, main_body,
                                   node->annotations);
    Stmt tail_loop = ForNode::make(tail_var, analyzer_.simplify(node->min + prefix),
                                   analyzer_.simplify(node->extent - prefix), node->for_kind,
                                   tail_body, node->annotations);
    // Both halves may hold further guards on inner loops (the tail's inner loops most of all).
    return seq_stmt({mutate(main_loop), mutate(tail_loop)});
  }

  // The partial tile's body as a chain `if r == 1 {..} else if r == 2 {..} ... else {..}` of
  // copies for each remainder r in [1, tile), when every guard on the tile variable is a bound
  // `a < b` with b - a - r over unrolled inner loops only (`i * T + j < n` is `0 < r - j`);
  // nullopt otherwise.
  std::optional<Stmt> specialize_remainder(const Var& tail_var, int64_t tile,
                                           const PrimExpr& remainder, const Stmt& body) {
    if (tile < 2 || tile > kMaxSpecializedTile) return std::nullopt;
    std::vector<Guard> guards = guards_on(body, tail_var.get());
    if (guards.empty()) return std::nullopt;
    std::vector<std::vector<PrimExpr>> offsets;
    for (const Guard& g : guards) {
      auto unrolled_inner = [&g](const VarNode* v) {
        for (const InnerLoop& loop : g.inner_loops)
          if (loop.var.get() == v) return loop.kind == ForKind::Unrolled;
        return false;
      };
      std::vector<PrimExpr> per_term;
      for (const PrimExpr& term : g.on_var) {
        const auto* lt = as<LTNode>(term);
        if (!lt) return std::nullopt;
        PrimExpr offset = analyzer_.simplify(lt->b - lt->a - remainder);
        if (uses_var(offset, [&](const VarNode* v) { return !unrolled_inner(v); }))
          return std::nullopt;
        per_term.push_back(offset);
      }
      offsets.push_back(std::move(per_term));
    }
    Stmt chain;
    for (int64_t k = tile - 1; k >= 1; --k) {
      Stmt copy =
          detail::FreshCopy(VarMap{}).mutate(RemainderGuards(guards, offsets, k).mutate(body));
      chain = chain ? Stmt(IfThenElseNode::make(eq(remainder, make_int(k, remainder.dtype())), copy,
                                                chain))
                    : copy;
    }
    return chain;
  }

  // x < max(a, b) holds when x < a or x < b does (the analyzer bounds max(a, b) from below by
  // neither alone).
  bool proves(const PrimExpr& term) {
    if (analyzer_.can_prove(term)) return true;
    const auto* lt = as<LTNode>(term);
    const auto* max = lt ? as<MaxNode>(lt->b) : nullptr;
    return max && (proves(lt->a < max->a) || proves(lt->a < max->b));
  }

  // True when every guard holds for var in [min, min + prefix) and all values of its inner loops.
  bool holds(const ForNode* node, const PrimExpr& prefix, const std::vector<Guard>& guards) {
    analyzer_.bind(node->loop_var, Range::from_min_extent(node->min, prefix));
    bool all = true;
    for (const Guard& g : guards) {
      for (const InnerLoop& loop : g.inner_loops) analyzer_.bind(loop.var, loop.range);
      for (const PrimExpr& term : g.on_var) all = all && proves(term);
      for (const InnerLoop& loop : g.inner_loops) analyzer_.unbind(loop.var);
      if (!all) break;
    }
    analyzer_.unbind(node->loop_var);
    return all;
  }

  // The longest prefix of the loop's iterations over which every guard is proven true (0 if
  // none). Guards are monotone in practice (a linear bound on the loop variable), so a binary
  // search finds it; the answer is proven whatever the guard's shape.
  int64_t proven_prefix(const ForNode* node, int64_t extent, const std::vector<Guard>& guards) {
    DataType t = node->loop_var->dtype;
    auto holds_for = [&](int64_t count) { return holds(node, make_int(count, t), guards); };
    if (!holds_for(1)) return 0;
    int64_t lo = 1, hi = extent;  // holds for lo iterations; hi is an upper bound
    if (holds_for(hi)) return extent;
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      (holds_for(mid) ? lo : hi) = mid;
    }
    return lo;
  }

  // A loop over a size variable's tiles, `for i in range(ceildiv(n, T))` as a split of a
  // symbolic extent leaves it, is cut at floordiv(n, T): the full tiles run without their
  // guards, the last, partial one keeps them. The cut is proven like a constant one.
  // A reduction over a size variable that may be 0 runs `range(max(n, 1))` with its steps
  // guarded by `k < n` (te::create_prim_func, so that its init runs); it is cut at n.
  std::optional<Stmt> cut_symbolic(const ForNode* node) {
    if (!is_zero(node->min) ||
        !(node->for_kind == ForKind::Serial || node->for_kind == ForKind::Unrolled))
      return std::nullopt;
    if (const auto* at_least_one = as<MaxNode>(node->extent);
        at_least_one && is_one(at_least_one->b) && !as_const_int(at_least_one->a)) {
      // Only the step guards go; the init's `k == 0` stays in both parts.
      std::vector<Guard> guards;
      for (Guard& g : guards_on(node->body, node->loop_var.get()))
        if (holds(node, at_least_one->a, {g})) guards.push_back(std::move(g));
      if (guards.empty()) return std::nullopt;
      return cut(node, guards, at_least_one->a);
    }
    const auto* ceil = as<FloorDivNode>(node->extent);
    if (!ceil) return std::nullopt;
    const int64_t tile = as_const_int(ceil->b).value_or(0);
    if (tile < 2) return std::nullopt;
    std::vector<Guard> guards = guards_on(node->body, node->loop_var.get());
    if (guards.empty()) return std::nullopt;
    DataType t = node->loop_var->dtype;
    PrimExpr bound = analyzer_.simplify(ceil->a - make_int(tile - 1, t));
    // Tiles of a reduction over `max(n, 1)` steps (a split of the loop above): the full tiles
    // of n run unguarded.
    std::optional<Tiles> tiles = Tiles{tile, bound};
    if (const auto* at_least_one = as<MaxNode>(bound); at_least_one && is_one(at_least_one->b)) {
      bound = at_least_one->a;
      tiles.reset();
    }
    PrimExpr prefix = analyzer_.simplify(floordiv(bound, make_int(tile, t)));
    if (!holds(node, prefix, guards)) return std::nullopt;
    return cut(node, guards, prefix, tiles);
  }

  Analyzer analyzer_;
};

}  // namespace

PrimFunc partition_loops(const PrimFunc& func) {
  Stmt body = Partitioner().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
