// lower_intrinsics: rewrites the few intrinsics that are cheaper to express
// once here than in every code generator.
//
//   rsqrt(x)            -> 1 / sqrt(x)
//   isfinite(x)         -> !(isnan(x) || isinf(x))
//   f(x, ...) on float16 / bfloat16 (any FloatMath or FloatTest intrinsic)
//                       -> computed in float32: casts around a float32 call, so no
//                          code generator needs half-precision math functions
//
// What the code generators must take after this pass, scalar and vector
// (lanes > 1: elementwise), on float32 and float64:
//   FloatMath: exp, exp2, log, log2, log10, sqrt, tanh, sigmoid (1 / (1 + exp(-x))),
//     erf, sin, cos, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
//     fabs, floor, ceil, round (to nearest, ties to even: C's nearbyint /
//     LLVM's roundeven, not C's round), trunc, pow, atan2, fmod, copysign, fma,
//     mul_unfused (a product no later add may fuse with);
//   FloatTest: isnan, isinf (bool result with the argument's lanes);
//   Builtin: likely (the condition itself, optionally a branch hint),
//     if_then_else (scalar condition; only the side taken is evaluated; the
//     values may be vectors), reinterpret, address_of, prefetch, and the
//     packed-API builtins anvil.* of make_packed_api.
// Anything else in the intrinsic table does not reach code generation.
#include <string>
#include <utility>
#include <vector>

#include "anvil/tir/functor.h"
#include "anvil/tir/intrinsics.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {
namespace {

bool is_half(DataType t) { return (t.is_float() && t.bits == 16) || t.is_bfloat(); }

class IntrinsicLowerer : public Mutator {
 public:
  PrimExpr mutate_Call(const CallNode* node, const PrimExpr& self) override {
    PrimExpr result = Mutator::mutate_Call(node, self);
    const auto* call = as<CallNode>(result);
    if (!call || call->call_kind != CallKind::Intrinsic) return result;
    const IntrinsicInfo* info = find_intrinsic(call->op);
    if (!info || info->intrinsic_class == IntrinsicClass::Builtin) return result;

    if (!call->args.empty() && is_half(call->args[0].dtype())) return in_float32(call);
    if (call->op == "rsqrt") {
      PrimExpr x = call->args[0];
      return DivNode::make(make_const(x.dtype(), 1.0), call_intrin(x.dtype(), "sqrt", {x}));
    }
    if (call->op == "isfinite") {
      PrimExpr x = call->args[0];
      return logical_not(logical_or(call_intrin(call->dtype, "isnan", {x}),
                                    call_intrin(call->dtype, "isinf", {x})));
    }
    return result;
  }

 private:
  // The call with every argument widened to float32 (same lanes) and, for
  // math functions, its result narrowed back; lowered again at float32.
  PrimExpr in_float32(const CallNode* call) {
    std::vector<PrimExpr> args;
    for (const PrimExpr& a : call->args)
      args.push_back(cast(DataType::float32().with_lanes(a.dtype().lanes), a));
    bool test = find_intrinsic(call->op)->intrinsic_class == IntrinsicClass::FloatTest;
    DataType wide = test ? call->dtype : DataType::float32().with_lanes(call->dtype.lanes);
    PrimExpr computed = mutate(call_intrin(wide, call->op, std::move(args)));
    return test ? computed : cast(call->dtype, computed);
  }
};

}  // namespace

PrimFunc lower_intrinsics(const PrimFunc& func) {
  Stmt body = IntrinsicLowerer().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
