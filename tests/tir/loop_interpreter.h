// A slow, obviously-correct interpreter of block-free tensor IR (loops,
// multi-dimensional or flattened buffer accesses, lets, ifs, allocations), so
// lowering passes can be checked numerically against plain C++ before any
// code generator exists. Scalars only; every element is held as a double and
// addressed through its buffer's data Var, so a flattened buffer sees the
// same storage as its original. An access out of bounds fails the test;
// allocated memory starts as NaN, so reading it before writing shows in
// the results.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/tir/tir.h"

namespace anvil::tir::testing {

class LoopInterpreter {
 public:
  // Storage for a buffer's data Var (a parameter's tensor), used in place.
  void bind_storage(const Buffer& buffer, std::vector<double>* storage) {
    storage_[buffer->data.get()] = storage;
  }
  // A scalar variable's value (a symbolic shape).
  void bind(const Var& var, int64_t value) { ints_[var.get()] = value; }

  // Runs func with its buffer_map buffers bound to args (in buffer_map order).
  void run(const PrimFunc& func, const std::vector<std::vector<double>*>& args) {
    ASSERT_EQ(func->buffer_map.size(), args.size());
    for (size_t i = 0; i < args.size(); ++i) bind_storage(func->buffer_map[i].second, args[i]);
    exec(func->body);
  }

  void exec(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::SeqStmt:
        for (const Stmt& part : as<SeqStmtNode>(s)->seq) exec(part);
        return;
      case StmtKind::For: {
        const auto* loop = as<ForNode>(s);
        int64_t begin = eval_int(loop->min), end = begin + eval_int(loop->extent);
        for (int64_t v = begin; v < end; ++v) {
          ints_[loop->loop_var.get()] = v;
          exec(loop->body);
        }
        return;
      }
      case StmtKind::BufferStore: {
        const auto* st = as<BufferStoreNode>(s);
        double value = eval(st->value);
        element(st->buffer, st->indices) = value;
        return;
      }
      case StmtKind::IfThenElse: {
        const auto* branch = as<IfThenElseNode>(s);
        if (eval_int(branch->condition))
          exec(branch->then_case);
        else if (branch->else_case)
          exec(branch->else_case);
        return;
      }
      case StmtKind::LetStmt: {
        const auto* l = as<LetStmtNode>(s);
        bind_value(l->var, l->value);
        exec(l->body);
        return;
      }
      case StmtKind::Allocate: {
        const auto* a = as<AllocateNode>(s);
        int64_t size = 1;
        for (const PrimExpr& d : a->buffer->shape) size *= eval_int(d);
        auto& owned = allocations_[a->buffer->data.get()];
        owned.assign(size_t(size), std::numeric_limits<double>::quiet_NaN());
        storage_[a->buffer->data.get()] = &owned;
        exec(a->body);
        return;
      }
      case StmtKind::Evaluate:
        eval(as<EvaluateNode>(s)->value);
        return;
      case StmtKind::AssertStmt: {
        const auto* a = as<AssertStmtNode>(s);
        ASSERT_TRUE(eval_int(a->condition)) << a->message;
        exec(a->body);
        return;
      }
      default:
        FAIL() << "the interpreter does not run " << stmt_kind_name(s->kind);
    }
  }

  double eval(const PrimExpr& e) {
    EXPECT_EQ(e.dtype().lanes, 1) << "vector expression in the scalar interpreter";
    bool is_float = e.dtype().is_float() || e.dtype().is_bfloat();
    switch (e.kind()) {
      case ExprKind::IntImm:
        return double(as<IntImmNode>(e)->value);
      case ExprKind::FloatImm:
        return as<FloatImmNode>(e)->value;
      case ExprKind::Var: {
        const auto* v = as<VarNode>(e);
        if (auto it = floats_.find(v); it != floats_.end()) return it->second;
        auto it = ints_.find(v);
        EXPECT_NE(it, ints_.end()) << "unbound variable " << v->name;
        return it == ints_.end() ? 0 : double(it->second);
      }
      case ExprKind::Add:
        return binary<AddNode>(e, [](double a, double b) { return a + b; });
      case ExprKind::Sub:
        return binary<SubNode>(e, [](double a, double b) { return a - b; });
      case ExprKind::Mul:
        return binary<MulNode>(e, [](double a, double b) { return a * b; });
      case ExprKind::Div: {
        const auto* d = as<DivNode>(e);
        if (is_float) return eval(d->a) / eval(d->b);
        return double(eval_int(d->a) / eval_int(d->b));
      }
      case ExprKind::Mod: {
        const auto* d = as<ModNode>(e);
        return double(eval_int(d->a) % eval_int(d->b));
      }
      case ExprKind::FloorDiv: {
        const auto* d = as<FloorDivNode>(e);
        return std::floor(double(eval_int(d->a)) / double(eval_int(d->b)));
      }
      case ExprKind::FloorMod: {
        const auto* d = as<FloorModNode>(e);
        int64_t a = eval_int(d->a), b = eval_int(d->b);
        int64_t q = int64_t(std::floor(double(a) / double(b)));
        return double(a - q * b);
      }
      case ExprKind::Min:
        return binary<MinNode>(e, [](double a, double b) { return std::min(a, b); });
      case ExprKind::Max:
        return binary<MaxNode>(e, [](double a, double b) { return std::max(a, b); });
      case ExprKind::EQ:
        return binary<EQNode>(e, [](double a, double b) { return double(a == b); });
      case ExprKind::NE:
        return binary<NENode>(e, [](double a, double b) { return double(a != b); });
      case ExprKind::LT:
        return binary<LTNode>(e, [](double a, double b) { return double(a < b); });
      case ExprKind::LE:
        return binary<LENode>(e, [](double a, double b) { return double(a <= b); });
      case ExprKind::GT:
        return binary<GTNode>(e, [](double a, double b) { return double(a > b); });
      case ExprKind::GE:
        return binary<GENode>(e, [](double a, double b) { return double(a >= b); });
      case ExprKind::And:
        return binary<AndNode>(e, [](double a, double b) { return double(a != 0 && b != 0); });
      case ExprKind::Or:
        return binary<OrNode>(e, [](double a, double b) { return double(a != 0 || b != 0); });
      case ExprKind::Not:
        return double(eval(as<NotNode>(e)->a) == 0);
      case ExprKind::Select: {
        const auto* s = as<SelectNode>(e);
        double t = eval(s->true_value), f = eval(s->false_value);  // both sides, like the IR
        return eval_int(s->condition) ? t : f;
      }
      case ExprKind::Cast: {
        double v = eval(as<CastNode>(e)->value);
        return is_float ? v : std::trunc(v);
      }
      case ExprKind::BufferLoad: {
        const auto* l = as<BufferLoadNode>(e);
        return element(l->buffer, l->indices);
      }
      case ExprKind::Let: {
        const auto* l = as<LetNode>(e);
        bind_value(l->var, l->value);
        return eval(l->body);
      }
      case ExprKind::Call: {
        const auto* c = as<CallNode>(e);
        if (c->op == "if_then_else")
          return eval_int(c->args[0]) ? eval(c->args[1]) : eval(c->args[2]);
        if (c->op == "likely") return eval(c->args[0]);
        if (c->op == "exp") return std::exp(eval(c->args[0]));
        if (c->op == "sqrt") return std::sqrt(eval(c->args[0]));
        ADD_FAILURE() << "the interpreter does not know call " << c->op;
        return 0;
      }
      default:
        ADD_FAILURE() << "the interpreter does not evaluate " << expr_kind_name(e.kind());
        return 0;
    }
  }

  int64_t eval_int(const PrimExpr& e) { return int64_t(eval(e)); }

 private:
  template <typename Node, typename F>
  double binary(const PrimExpr& e, F op) {
    const auto* node = as<Node>(e);
    return op(eval(node->a), eval(node->b));
  }

  void bind_value(const Var& var, const PrimExpr& value) {
    if (var->dtype.is_float())
      floats_[var.get()] = eval(value);
    else
      ints_[var.get()] = eval_int(value);
  }

  double& element(const Buffer& buffer, const std::vector<PrimExpr>& indices) {
    static double dummy = 0;
    auto it = storage_.find(buffer->data.get());
    if (it == storage_.end()) {
      ADD_FAILURE() << "buffer " << buffer->name << " has no storage";
      return dummy;
    }
    std::vector<PrimExpr> strides = buffer->effective_strides();
    EXPECT_EQ(indices.size(), strides.size()) << "rank of " << buffer->name;
    int64_t offset = eval_int(buffer->elem_offset);
    for (size_t d = 0; d < indices.size() && d < strides.size(); ++d)
      offset += eval_int(indices[d]) * eval_int(strides[d]);
    std::vector<double>& data = *it->second;
    if (offset < 0 || offset >= int64_t(data.size())) {
      ADD_FAILURE() << "access of " << buffer->name << " at " << offset << " of " << data.size();
      return dummy;
    }
    return data[size_t(offset)];
  }

  std::unordered_map<const VarNode*, int64_t> ints_;
  std::unordered_map<const VarNode*, double> floats_;
  std::unordered_map<const VarNode*, std::vector<double>*> storage_;
  std::unordered_map<const VarNode*, std::vector<double>> allocations_;
};

}  // namespace anvil::tir::testing
