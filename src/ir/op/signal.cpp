// The signal family: ops whose output size is a value known only at run time, run as runtime
// functions of the VM (anvil/runtime/builtins.h). signal.stft: the frame count and length come
// from frame_step and frame_length; signal.mel_weight_matrix: the filter bank's shape is its
// inputs' values. (DFT with static lengths is imported as matrix products instead.)
#include "anvil/runtime/builtins.h"
#include "ir/op/dtype_check.h"
#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

// Argument i holds one floating-point value (a scalar or a one-element vector).
void expect_float_scalar(const RelationArgs& args, size_t i) {
  const TensorTypeNode& t = args.tensor(i);
  expect_dtype_class(args, i, DtypeClass::Float);
  bool single = t.shape->empty() || (t.shape->size() == 1 && (*t.shape)[0].as_int() == 1);
  if (!single) throw_error(args.arg_name(i), " must be a scalar, got ", describe(t));
}

// signal [batch, length, 1 or 2] float32/float64, frame_step, window [frame_length] (or no
// element), frame_length, onesided -> [batch, frames, bins, 2].
Type stft_relation(const RelationArgs& args) {
  const TensorTypeNode& signal = args.tensor(0);
  if (signal.dtype != DataType::float32() && signal.dtype != DataType::float64())
    throw_error(args.arg_name(0), " must be float32 or float64, got ", describe(signal));
  expect_rank(signal, 3, args.arg_name(0));
  const Dim& components = (*signal.shape)[2];
  if (components.is_static() && components.int_value() != 1 && components.int_value() != 2)
    throw_error(args.arg_name(0), " dim 2 must be 1 (real) or 2 (complex), got ", describe(signal));
  expect_index_scalar(args, 1);
  const TensorTypeNode& window = args.tensor(2);
  if (window.dtype != signal.dtype)
    throw_error(args.arg_name(2), " must have the signal's dtype, got ", describe(window));
  expect_rank(window, 1, args.arg_name(2));
  expect_index_scalar(args, 3);
  expect_index_scalar(args, 4);
  return TensorTypeNode::make({(*signal.shape)[0], Dim::any(), Dim::any(), Dim(2)}, signal.dtype);
}

// input [batch, ..., 1 or 2], dft_length, axis, flags [2] -> the input's rank: which dim
// changes (and whether the output is real) depends on the axis's value.
Type dft_relation(const RelationArgs& args) {
  const TensorTypeNode& input = args.tensor(0);
  if (input.dtype != DataType::float32() && input.dtype != DataType::float64())
    throw_error(args.arg_name(0), " must be float32 or float64, got ", describe(input));
  if (!input.shape || input.shape->size() < 3)
    throw_error(args.arg_name(0), " must have rank 3 or more, got ", describe(input));
  expect_index_scalar(args, 1);
  expect_index_scalar(args, 2);
  expect_rank(args.tensor(3), 1, args.arg_name(3));
  std::vector<Dim> out = {(*input.shape)[0]};
  for (size_t d = 1; d < input.shape->size(); ++d) out.push_back(Dim::any());
  return TensorTypeNode::make(out, input.dtype);
}

// num_mel_bins, dft_length, sample_rate (integers), lower and upper edge (floats) ->
// [dft_length / 2 + 1, num_mel_bins] float32.
Type mel_weight_matrix_relation(const RelationArgs& args) {
  for (size_t i : {size_t(0), size_t(1), size_t(2)}) expect_index_scalar(args, i);
  expect_float_scalar(args, 3);
  expect_float_scalar(args, 4);
  return TensorTypeNode::make({Dim::any(), Dim::any()}, DataType::float32());
}

}  // namespace

void register_signal_ops(OpTable& table) {
  table.add("signal.stft")
      .describe(
          "ONNX STFT: the DFT of each frame (frame_length samples, frame_step apart) of the "
          "windowed signal; an empty window is a rectangular one, frame_length -1 takes the "
          "window's length, a non-zero onesided keeps frame_length / 2 + 1 bins.")
      .inputs({"signal", "frame_step", "window", "frame_length", "onesided"})
      .type_relation(stft_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kStft));
  table.add("signal.dft")
      .describe(
          "ONNX DFT along an axis given at run time (flags: inverse, onesided); DFT with a "
          "constant axis is imported as matrix products instead.")
      .inputs({"input", "dft_length", "axis", "flags"})
      .type_relation(dft_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kDft));
  table.add("signal.mel_weight_matrix")
      .describe(
          "ONNX MelWeightMatrix: triangular filters on num_mel_bins + 2 mel-spaced points "
          "between the edges, rounded down to the bins of a dft_length-point DFT.")
      .inputs({"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"})
      .type_relation(mel_weight_matrix_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kMelWeightMatrix));
}

}  // namespace anvil::ir
