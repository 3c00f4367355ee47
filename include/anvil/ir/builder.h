// Small pieces for code that builds or rewrites graph IR (graph passes, layout strategies):
// recognizing op calls, reading constants and static shapes, making constants, and the calls
// that change a layout or slice a tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/ir.h"

namespace anvil::ir {

// The call when e calls the named op, else nullptr.
const CallNode* op_call(const Expr& e, std::string_view op_name);

// The tensor of a constant, or nullptr.
const Tensor* constant_data(const Expr& e);

// The static shape of a tensor-typed expression (from checked_type), or nullopt.
std::optional<std::vector<int64_t>> static_shape(const Expr& e);

// The dims of a tensor-typed expression (symbolic ones included), or nullopt when its rank is
// unknown or it is not a tensor.
std::optional<std::vector<Dim>> shape_dims(const Expr& e);

// The dtype of a tensor-typed expression, or nullopt.
std::optional<DataType> tensor_dtype(const Expr& e);

// True when e is a float32 tensor.
bool is_float32(const Expr& e);

// True when type is a float32 tensor type.
bool is_float32(const Type& type);

// All elements of t in row-major order, widened to double.
std::vector<double> tensor_values(const Tensor& t);

// A new tensor of shape and dtype holding values (rounded to dtype).
Tensor make_tensor(const std::vector<double>& values, std::vector<int64_t> shape, DataType dtype);

// A scalar constant of dtype.
Expr scalar_constant(double value, DataType dtype);

// The blocked NCHW layout whose channels are split into blocks of `block`: "NCHW{block}c".
std::string blocked_layout(int64_t block);

// layout_transform(x, src -> dst): x itself when the layouts are equal, x's source when x is
// itself the inverse transform (so transforms cancel where they meet).
Expr transform_layout(const Expr& x, const std::string& src, const std::string& dst);

// transpose(x, axes): output axis k is x's axis axes[k].
Expr transpose(const Expr& x, std::vector<int64_t> axes);

// strided_slice(x) over `axes` from begin to end (exclusive), step 1.
Expr slice_axes(const Expr& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                std::vector<int64_t> axes);

}  // namespace anvil::ir
