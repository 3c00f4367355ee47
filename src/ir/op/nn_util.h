// Pieces shared by the convolution, pooling and image relations: data layouts
// (including blocked ones such as NCHW16c), spatial attribute checks, and the
// output-size formulas, all in Dim arithmetic so symbolic sizes flow through.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/nn_geometry.h"
#include "ir/op/relation_util.h"

namespace anvil::ir::nn {

// A tensor layout as in TVM: primal axes are upper-case letters ("NCHW");
// a sub-axis is a block factor and the lower-case letter of the primal axis it
// splits ("NCHW16c" holds C as C/16 outer blocks times an inner 16).
class Layout {
 public:
  // Parses text; throws Error naming the attribute when it is malformed or
  // when its primal axes are not exactly those of `primal` (in any order).
  static Layout parse(const std::string& text, const char* attr, std::string_view primal);

  const std::string& name() const { return name_; }
  // Number of axes, which is the rank of a tensor in this layout.
  size_t rank() const { return axes_.size(); }
  // The block factor of primal axis `axis` ('C'), or nullopt if it is not split.
  std::optional<int64_t> block(char axis) const;

  // The full size of each primal axis of `order` ("NCHW") for a shape in this
  // layout; a blocked axis multiplies its outer and inner parts. Throws Error
  // naming `who` ("argument 'data'") and `attr` on a rank or block mismatch.
  std::vector<Dim> to_primal(const std::vector<Dim>& shape, std::string_view order,
                             const std::string& who, const char* attr) const;
  // The shape in this layout of primal sizes given in `order`; throws Error
  // when a blocked axis is provably not a multiple of its block.
  std::vector<Dim> from_primal(const std::vector<Dim>& sizes, std::string_view order,
                               const char* attr) const;

 private:
  struct Axis {
    char name;       // upper case: primal axis; lower case: sub-axis
    int64_t factor;  // block size of a sub-axis, 0 for a primal axis
  };
  std::string name_;
  std::vector<Axis> axes_;
};

// The shape of input i, or `rank` unknown dims when its rank is unknown;
// throws Error when the input is not a tensor.
std::vector<Dim> shape_or_any(const RelationArgs& args, size_t i, size_t rank);

// The dtype of input i (which must be a tensor).
DataType input_dtype(const RelationArgs& args, size_t i);

// "data Tensor[(1, 3), float32], weight Tensor[...]": every input by name, for messages.
std::string inputs_text(const RelationArgs& args);

// Dims compared only when both are static: true when provably different.
bool provably_different(const Dim& a, const Dim& b);

// The output size of a sliding window (convolution or pooling) over an input
// of size `in`: floor((in + pads - dilated window) / stride) + 1. With
// ceil_mode it rounds up, except that the last window must start inside the
// input or its before-padding (as PyTorch and ONNX Runtime do). Throws Error
// naming `what` ("kernel", "pool window") and `axis` when the window is
// provably larger than the padded input.
Dim window_output(const Dim& in, const Dim& window, int64_t stride, int64_t dilation,
                  int64_t pad_before, int64_t pad_after, bool ceil_mode, const char* what,
                  char axis);

// The dtype of a product such as conv or dense of inputs a and b: the out_dtype
// if set, else a's. Float inputs must agree; integer inputs may mix (uint8 x int8).
DataType product_dtype(const RelationArgs& args, size_t a, size_t b,
                       const std::optional<DataType>& out_dtype);

// "[1, 2]" for messages.
std::string ints_text(const std::vector<int64_t>& values);

}  // namespace anvil::ir::nn
