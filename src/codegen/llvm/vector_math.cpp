// exp, exp2, log, log2, log10, tanh, sigmoid and erf for float32 scalars and vectors, as plain
// LLVM IR (range reduction plus polynomials) so that a vector of lanes stays in vector
// registers; a libm call would be made once per lane. Scalars use the same code, so a kernel's
// result does not depend on whether it was vectorized.
//
// Polynomials are evaluated with llvm.fmuladd (a fused multiply-add where the target has one).
// The coefficients of tanh and erf are least-squares fits on Chebyshev nodes against the
// functions evaluated in 40-digit arithmetic, rounded to float32 and re-checked in float32 with
// fused multiply-adds; the others are Taylor coefficients, which suffice after range
// reduction. Largest errors measured against the exact result over a sample of every float32
// binade (tests/codegen/llvm_vector_math_test.cpp asserts them with a little margin):
//   exp 0.92 ulp, exp2 0.87, log 0.80, log2 1.62, log10 1.73, tanh 1.28, sigmoid 2.10
//   (e^x's own error passes through e / (1 + e) for x < 0), erf 1.29.
// Special values follow C99: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(x < 0) = NaN,
// NaN in gives NaN out; results that underflow are subnormal or zero.
#include <llvm/IR/Intrinsics.h>

#include <initializer_list>

#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen::llvm_backend {

namespace {

// Shorthands over one IRBuilder for float32 values of x's shape (scalar or vector).
class MathBuilder {
 public:
  MathBuilder(llvm::IRBuilder<>& b, llvm::Value* x) : b_(b), type_(x->getType()) {
    llvm::Type* i32 = b.getInt32Ty();
    int_type_ =
        type_->isVectorTy() ? llvm::VectorType::get(i32, llvm::cast<llvm::VectorType>(type_)) : i32;
  }
  llvm::Constant* f(double v) const { return llvm::ConstantFP::get(type_, v); }
  llvm::Constant* i(int64_t v) const {
    return llvm::ConstantInt::get(int_type_, uint64_t(v), true);
  }
  llvm::Value* fma(llvm::Value* a, llvm::Value* x, llvm::Value* c) const {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {type_}, {a, x, c});
  }
  // c[0] + x * (c[1] + x * (c[2] + ...)).
  llvm::Value* horner(llvm::Value* x, std::initializer_list<double> coefficients) const {
    const double* c = coefficients.begin();
    size_t n = coefficients.size();
    llvm::Value* acc = f(c[n - 1]);
    for (size_t k = n - 1; k-- > 0;) acc = fma(acc, x, f(c[k]));
    return acc;
  }
  llvm::Value* fabs(llvm::Value* x) const {
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  }
  llvm::Value* copysign(llvm::Value* magnitude, llvm::Value* sign) const {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, sign);
  }
  llvm::Value* is_nan(llvm::Value* x) const { return b_.CreateFCmpUNO(x, x); }
  llvm::Value* to_bits(llvm::Value* x) const { return b_.CreateBitCast(x, int_type_); }
  llvm::Value* from_bits(llvm::Value* x) const { return b_.CreateBitCast(x, type_); }
  // x limited to [lo, hi]; NaN stays NaN.
  llvm::Value* clamp(llvm::Value* x, double lo, double hi) const {
    x = b_.CreateSelect(b_.CreateFCmpOGT(x, f(hi)), f(hi), x);
    return b_.CreateSelect(b_.CreateFCmpOLT(x, f(lo)), f(lo), x);
  }
  llvm::IRBuilder<>& b() const { return b_; }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* type_;
  llvm::Type* int_type_;
};

// Adding and subtracting 1.5 * 2^23 rounds a float32 of magnitude below 2^22 to an integer
// (ties to even) without a rounding instruction.
constexpr double kRoundingShifter = 12582912.0;
// ln 2 split so that n * kLn2Hi is exact for |n| < 2^15.
constexpr double kLn2Hi = 0.693359375;
constexpr double kLn2Lo = -2.12194440e-4;
constexpr double kLog2E = 1.44269504088896341;
constexpr double kLn2 = 0.693147180559945309;

// 2^n * e^r for integral n in [-150, 128] and |r| <= ln2 / 2 + a little.
llvm::Value* scaled_exp(const MathBuilder& m, llvm::Value* n, llvm::Value* r) {
  // Taylor polynomial of degree 7: the truncation error is below 6e-9 on the reduced range.
  llvm::Value* p =
      m.horner(r, {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040});
  // 2^n as two factors, each a normal float32, so results near overflow and in the subnormal
  // range are rounded only once.
  llvm::IRBuilder<>& b = m.b();
  llvm::Value* ni = b.CreateFPToSI(n, m.i(0)->getType());
  llvm::Value* n1 = b.CreateAShr(ni, m.i(1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  auto power = [&](llvm::Value* e) {
    return m.from_bits(b.CreateShl(b.CreateAdd(e, m.i(127)), m.i(23)));
  };
  return b.CreateFMul(b.CreateFMul(p, power(n1)), power(n2));
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] through s = f / (2 + f):
// log(1 + f) = 2 atanh(s) = f - f^2/2 + s * (f^2/2 + R(s^2)).
llvm::Value* log1p_reduced(const MathBuilder& m, llvm::Value* f) {
  llvm::IRBuilder<>& b = m.b();
  llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(m.f(2.0), f));
  llvm::Value* z = b.CreateFMul(s, s);
  llvm::Value* r = b.CreateFMul(z, m.horner(z, {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9}));
  llvm::Value* half_f2 = b.CreateFMul(m.f(0.5), b.CreateFMul(f, f));
  llvm::Value* correction = m.fma(s, b.CreateFAdd(half_f2, r), b.CreateFNeg(half_f2));
  return b.CreateFAdd(f, correction);
}

// x = 2^e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); e as float32. Also returns whether x is
// outside log's finite domain so the caller can patch special values.
struct LogParts {
  llvm::Value* e;
  llvm::Value* f;
};
LogParts decompose(const MathBuilder& m, llvm::Value* x) {
  llvm::IRBuilder<>& b = m.b();
  // Subnormals are scaled into the normal range first.
  llvm::Value* subnormal = b.CreateFCmpOLT(x, m.f(1.17549435e-38));
  llvm::Value* scaled = b.CreateSelect(subnormal, b.CreateFMul(x, m.f(8388608.0)), x);
  llvm::Value* exponent_bias = b.CreateSelect(subnormal, m.i(-23), m.i(0));
  // Subtracting the bits of sqrt(1/2) puts mantissas at or above sqrt(1/2) in the lower
  // exponent, so the mantissa lands in [sqrt(1/2), sqrt(2)).
  constexpr int64_t kSqrtHalfBits = 0x3f3504f3;
  llvm::Value* bits = b.CreateSub(m.to_bits(scaled), m.i(kSqrtHalfBits));
  llvm::Value* e = b.CreateAdd(b.CreateAShr(bits, m.i(23)), exponent_bias);
  llvm::Value* mantissa =
      m.from_bits(b.CreateAdd(b.CreateAnd(bits, m.i(0x007fffff)), m.i(kSqrtHalfBits)));
  return {b.CreateSIToFP(e, scaled->getType()), b.CreateFSub(mantissa, m.f(1.0))};
}

// Patches log's special values: NaN for x < 0, -inf for 0, +inf for +inf, NaN for NaN.
llvm::Value* log_special_values(const MathBuilder& m, llvm::Value* x, llvm::Value* result) {
  llvm::IRBuilder<>& b = m.b();
  double inf = std::numeric_limits<double>::infinity();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, m.f(inf)), m.f(inf), result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, m.f(0.0)), m.f(-inf), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, m.f(0.0)),
                          m.f(std::numeric_limits<double>::quiet_NaN()), result);
  return b.CreateSelect(m.is_nan(x), x, result);
}

}  // namespace

llvm::Value* emit_exp_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  // Below -104 the result rounds to zero, above 88.73 it overflows; NaN is computed as 0 and
  // patched at the end (converting NaN to an integer would be undefined).
  llvm::Value* nan = m.is_nan(x);
  llvm::Value* clamped = b.CreateSelect(nan, m.f(0.0), m.clamp(x, -104.0, 88.73));
  llvm::Value* n =
      b.CreateFSub(m.fma(clamped, m.f(kLog2E), m.f(kRoundingShifter)), m.f(kRoundingShifter));
  llvm::Value* r = m.fma(n, m.f(-kLn2Hi), clamped);
  r = m.fma(n, m.f(-kLn2Lo), r);
  return b.CreateSelect(nan, x, scaled_exp(m, n, r));
}

llvm::Value* emit_exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  llvm::Value* nan = m.is_nan(x);
  llvm::Value* clamped = b.CreateSelect(nan, m.f(0.0), m.clamp(x, -151.0, 128.5));
  llvm::Value* n =
      b.CreateFSub(b.CreateFAdd(clamped, m.f(kRoundingShifter)), m.f(kRoundingShifter));
  llvm::Value* r = b.CreateFMul(b.CreateFSub(clamped, n), m.f(kLn2));  // x - n is exact
  return b.CreateSelect(nan, x, scaled_exp(m, n, r));
}

llvm::Value* emit_log_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  LogParts parts = decompose(m, x);
  llvm::Value* lp = log1p_reduced(m, parts.f);
  llvm::Value* result = m.fma(parts.e, m.f(kLn2Hi), m.fma(parts.e, m.f(kLn2Lo), lp));
  return log_special_values(m, x, result);
}

llvm::Value* emit_log2_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  LogParts parts = decompose(m, x);
  llvm::Value* result = m.fma(log1p_reduced(m, parts.f), m.f(kLog2E), parts.e);
  return log_special_values(m, x, result);
}

llvm::Value* emit_log10_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  LogParts parts = decompose(m, x);
  constexpr double kLog10E = 0.434294481903251828;
  constexpr double kLog10Of2Hi = 0.30102539062;  // 9 significant bits: e * hi is exact
  constexpr double kLog10Of2Lo = 4.6050389811952e-06;
  llvm::Value* scaled = b.CreateFMul(log1p_reduced(m, parts.f), m.f(kLog10E));
  llvm::Value* result = m.fma(parts.e, m.f(kLog10Of2Hi), m.fma(parts.e, m.f(kLog10Of2Lo), scaled));
  return log_special_values(m, x, result);
}

llvm::Value* emit_tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  llvm::Value* a = m.fabs(x);
  // |x| < 0.625: x + x^3 * P(x^2), P fitted (see the file comment).
  llvm::Value* z = b.CreateFMul(x, x);
  llvm::Value* p = m.horner(z, {-3.333333433e-01, 1.333330274e-01, -5.395911634e-02,
                                2.176789753e-02, -8.340987377e-03, 2.289738040e-03});
  llvm::Value* small = m.fma(b.CreateFMul(x, z), p, x);
  // Otherwise 1 - 2 / (e^(2|x|) + 1) with x's sign: no cancellation once tanh >= 0.55, and
  // e^(2|x|) = inf gives exactly 1.
  llvm::Value* e = emit_exp_f32(b, b.CreateFAdd(a, a));
  llvm::Value* large = b.CreateFSub(m.f(1.0), b.CreateFDiv(m.f(2.0), b.CreateFAdd(e, m.f(1.0))));
  large = m.copysign(large, x);
  return b.CreateSelect(b.CreateFCmpOLT(a, m.f(0.625)), small, large);
}

llvm::Value* emit_sigmoid_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  // With e = e^-|x| (never overflows): 1 / (1 + e) for x >= 0, e / (1 + e) otherwise, so tiny
  // results for very negative x keep their relative accuracy.
  llvm::Value* e = emit_exp_f32(b, b.CreateFNeg(m.fabs(x)));
  llvm::Value* numerator = b.CreateSelect(b.CreateFCmpOGE(x, m.f(0.0)), m.f(1.0), e);
  return b.CreateFDiv(numerator, b.CreateFAdd(m.f(1.0), e));
}

llvm::Value* emit_erf_f32(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x);
  llvm::Value* a = m.fabs(x);
  // |x| < 1.25: |x| + |x| * Q(x^2), Q fitted; the leading term is exact.
  llvm::Value* z = b.CreateFMul(a, a);
  llvm::Value* q =
      m.horner(z, {1.283791661e-01, -3.761263192e-01, 1.128368601e-01, -2.686065435e-02,
                   5.209747702e-03, -8.346330142e-04, 1.042495060e-04, -7.629189440e-06});
  llvm::Value* small = m.fma(a, q, a);
  // 1.25 <= |x| < 3.92: 1 - erfc(|x|) with log(erfc) fitted as a polynomial in |x| - 2.585.
  llvm::Value* t = b.CreateFSub(a, m.f(2.585));
  llvm::Value* log_erfc = m.horner(
      t, {-8.268619537e+00, -5.513372898e+00, -9.465711713e-01, -1.015132479e-02, 1.994583290e-03,
          -3.834458475e-04, 6.990149268e-05, -1.168896051e-05, 1.589533213e-06, -1.134877863e-07});
  llvm::Value* large = b.CreateFSub(m.f(1.0), emit_exp_f32(b, log_erfc));
  // From 3.92 on, erf rounds to 1 in float32.
  llvm::Value* result = b.CreateSelect(b.CreateFCmpOLT(a, m.f(1.25)), small, large);
  result = b.CreateSelect(b.CreateFCmpOGE(a, m.f(3.92)), m.f(1.0), result);
  return m.copysign(result, x);
}

}  // namespace anvil::codegen::llvm_backend
