// DFT as matrix products: along the transformed axis (static length) the input's real and
// imaginary parts are multiplied by constant cosine and sine matrices, which covers the full
// transform, the one-sided (real-input) one, the inverse and the inverse of a one-sided
// spectrum (numpy's irfft) with one GEMM each, and lets the compiler treat DFT like any
// other matmul. O(n^2) per line, which is what short signal axes (audio frames, feature
// maps) need; no FFT.
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/convert_tensor.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

// How one DFT maps its input along the axis (length n) to its output (length m): the output
// is re * real + im * imag for the real part and re * imag_of_re + im * real for the
// imaginary part, i.e. multiplication by the complex matrix real + i imag.
struct DftPlan {
  int64_t in = 0, out = 0, length = 0;  // rows, columns, the transform's length
  bool inverse = false, onesided = false;
  bool complex_output() const { return !(inverse && onesided); }

  // The complex matrix W (in x out) as its real and imaginary parts.
  std::pair<Tensor, Tensor> matrices(DataType dtype) const {
    Tensor re = Tensor::empty({in, out}, dtype), im = Tensor::empty({in, out}, dtype);
    for (int64_t t = 0; t < in; ++t) {
      for (int64_t k = 0; k < out; ++k) {
        auto [wr, wi] = builtins::dft_weight(t, k, length, inverse, onesided);
        re.set_from_double(t * out + k, wr);
        im.set_from_double(t * out + k, wi);
      }
    }
    return {re, im};
  }
};

class DftBuilder {
 public:
  DftBuilder(ConvertContext& ctx, DataType dtype, int64_t rank)
      : ctx_(ctx), dtype_(dtype), rank_(rank) {}

  // The DFT of x (rank_ dims, the last 1 for real or 2 for complex input) along `axis`.
  Expr transform(const Expr& x, int64_t axis, const DftPlan& plan, bool complex_input) {
    std::vector<int64_t> perm;  // the signal dims with `axis` moved last
    for (int64_t d = 0; d + 1 < rank_; ++d)
      if (d != axis) perm.push_back(d);
    perm.push_back(axis);
    std::vector<int64_t> back(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) back[size_t(perm[i])] = int64_t(i);
    auto part = [&](int64_t c) {
      Expr slice = ctx_.op("strided_slice", {x},
                           {{"begin", std::vector<int64_t>{c}},
                            {"end", std::vector<int64_t>{c + 1}},
                            {"axes", std::vector<int64_t>{rank_ - 1}}});
      Expr squeezed = ctx_.op("squeeze", {slice}, {{"axis", std::vector<int64_t>{rank_ - 1}}});
      return ctx_.op("transpose", {squeezed}, {{"axes", perm}});
    };
    auto [wr_value, wi_value] = plan.matrices(dtype_);
    Expr wr = ctx_.constant(wr_value), wi = ctx_.constant(wi_value);
    Expr re = part(0);
    Expr out_re = ctx_.op("matmul", {re, wr}), out_im = ctx_.op("matmul", {re, wi});
    if (complex_input) {
      Expr im = part(1);
      out_re = ctx_.op("subtract", {out_re, ctx_.op("matmul", {im, wi})});
      out_im = ctx_.op("add", {out_im, ctx_.op("matmul", {im, wr})});
    }
    auto restore = [&](const Expr& e) {
      Expr t = ctx_.op("transpose", {e}, {{"axes", back}});
      return ctx_.op("expand_dims", {t}, {{"axis", rank_ - 1}});
    };
    if (!plan.complex_output()) return restore(out_re);
    return ctx_.op("concatenate",
                   {ctx_.typed(ir::TupleNode::make({restore(out_re), restore(out_im)}))},
                   {{"axis", rank_ - 1}});
  }

 private:
  ConvertContext& ctx_;
  DataType dtype_;
  int64_t rank_;
};

// DFT-17 (axis an attribute) and DFT-20 (axis an input, default -2): input (..., 1) real or
// (..., 2) complex; dft_length pads or truncates the axis; onesided keeps L/2 + 1 frequencies
// (with inverse: the input is such a half spectrum and the output real).
ConverterFn convert_dft(bool axis_is_input) {
  return [axis_is_input](ConvertContext& ctx) -> std::vector<Expr> {
    const DataType t = ctx.input_tensor(0).dtype;
    if (!t.is_float()) ctx.fail("input must be a float tensor, got ", t.to_string());
    std::optional<std::vector<int64_t>> dims = tensor::static_dims(ctx, 0);
    if (!dims || dims->size() < 3) ctx.fail("input must have static dims and rank >= 3");
    const int64_t rank = int64_t(dims->size());
    const int64_t components = dims->back();
    if (components != 1 && components != 2)
      ctx.fail("the last dim must be 1 (real) or 2 (complex), got ", components);
    const bool inverse = ctx.attr_int("inverse", 0) != 0;
    const bool onesided = ctx.attr_int("onesided", 0) != 0;
    if (onesided && !inverse && components == 2)
      ctx.fail("onesided needs a real input (last dim 1)");
    // The VM's runtime function, for what only run time knows: the axis's or dft_length's value.
    auto at_run_time = [&] {
      Tensor flags = Tensor::empty({2}, DataType::int64());
      flags.data_as<int64_t>()[0] = inverse;
      flags.data_as<int64_t>()[1] = onesided;
      Expr length = ctx.has_input(1) ? ctx.input(1) : tensor::int64_scalar(ctx, -1);
      Expr axis = axis_is_input && ctx.has_input(2)
                      ? ctx.input(2)
                      : tensor::int64_scalar(ctx, axis_is_input ? -2 : ctx.attr_int("axis", 1));
      return std::vector<Expr>{
          ctx.op("signal.dft", {ctx.input(0), length, axis, ctx.constant(flags)})};
    };
    if (ctx.has_input(1) && !ctx.input_constant(1)) return at_run_time();
    std::optional<int64_t> requested_length;
    if (ctx.has_input(1)) {
      std::vector<int64_t> l = ctx.constant_ints(1, "dft_length");
      if (l.size() != 1 || l[0] < 1) ctx.fail("dft_length must be one positive value");
      requested_length = l[0];
    }
    auto plan_for = [&](int64_t axis) {
      DftPlan plan;
      plan.inverse = inverse;
      plan.onesided = onesided;
      plan.in = (*dims)[size_t(axis)];
      plan.length = requested_length.value_or(inverse && onesided ? 2 * (plan.in - 1) : plan.in);
      if (plan.length < 1) ctx.fail("the transform length must be positive");
      plan.out = onesided && !inverse ? plan.length / 2 + 1 : plan.length;
      return plan;
    };
    auto valid_axis = [&](int64_t axis) {
      if (axis < -rank || axis >= rank) ctx.fail("axis ", axis, " is out of range");
      if (axis < 0) axis += rank;
      if (axis == 0 || axis == rank - 1)
        ctx.fail("axis ", axis, " is the batch or the complex axis");
      return axis;
    };
    DftBuilder builder(ctx, t, rank);
    if (!axis_is_input || !ctx.has_input(2) || ctx.input_constant(2)) {
      int64_t axis = axis_is_input ? (ctx.has_input(2) ? ctx.constant_ints(2, "axis")[0] : -2)
                                   : ctx.attr_int("axis", 1);
      axis = valid_axis(axis);
      return {builder.transform(ctx.input(0), axis, plan_for(axis), components == 2)};
    }
    // An axis known only at run time: every candidate signal axis is transformed and the one
    // asked for selected, which needs the candidates to have one output shape; otherwise the
    // VM's runtime function transforms along the axis the value names.
    bool same_shapes = true;
    for (int64_t axis = rank - 2; axis >= 1; --axis)
      same_shapes &= plan_for(axis).out == plan_for(axis).in && plan_for(axis).complex_output();
    if (!same_shapes) return at_run_time();
    Expr asked =
        ctx.op("floor_mod", {tensor::as_int64(ctx, ctx.input(2)), tensor::int64_scalar(ctx, rank)});
    Expr result;
    for (int64_t axis = rank - 2; axis >= 1; --axis) {
      DftPlan plan = plan_for(axis);
      if (plan.out != plan.in)
        ctx.fail(
            "an axis given at run time needs a transform that keeps the axis length "
            "(no onesided, no dft_length)");
      Expr candidate = builder.transform(ctx.input(0), axis, plan, components == 2);
      result = result ? ctx.op("where", {ctx.op("equal", {asked, tensor::int64_scalar(ctx, axis)}),
                                         candidate, result})
                      : candidate;
    }
    return {result};
  };
}

// STFT: signal.stft, a runtime function of the VM (its frame count and length are inputs'
// values). An absent window is an empty one (rectangular), an absent frame_length is -1 (the
// window's length); onesided travels as a constant.
std::vector<Expr> convert_stft(ConvertContext& ctx) {
  DataType dtype = ctx.input_tensor(0).dtype;
  if (!ctx.has_input(2) && !ctx.has_input(3))
    ctx.fail("give a window (input 2) or a frame_length (input 3)");
  Expr window = ctx.has_input(2) ? ctx.input(2) : ctx.constant(Tensor::empty({0}, dtype));
  Expr frame_length = ctx.has_input(3) ? ctx.input(3) : tensor::int64_scalar(ctx, -1);
  int64_t onesided = ctx.attr_int("onesided", 1);
  return {ctx.op("signal.stft", {ctx.input(0), ctx.input(1), window, frame_length,
                                 tensor::int64_scalar(ctx, onesided != 0)})};
}

// MelWeightMatrix: signal.mel_weight_matrix (float32; its shape is its inputs' values), cast to
// output_datatype.
std::vector<Expr> convert_mel_weight_matrix(ConvertContext& ctx) {
  std::vector<Expr> inputs;
  for (size_t i = 0; i < 5; ++i) inputs.push_back(ctx.input(i));
  Expr weights = ctx.op("signal.mel_weight_matrix", inputs);
  DataType out = onnx_dtype(int32_t(ctx.attr_int("output_datatype", 1)), "output_datatype");
  if (out != DataType::float32()) weights = ctx.op("cast", {weights}, {{"dtype", out}});
  return {weights};
}

}  // namespace

void register_signal_converters(ConverterTable& table) {
  table.add("DFT", 17, convert_dft(false));
  table.add("DFT", 20, convert_dft(true));
  table.add("STFT", 17, convert_stft);
  table.add("MelWeightMatrix", 17, convert_mel_weight_matrix);
}

}  // namespace anvil::frontend::onnx_import
