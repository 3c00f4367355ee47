// Pieces shared by the tensor converter files (reshaping and slicing, shapes
// and creation, indexing); register_tensor_converters calls each file's part.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "frontend/onnx/converter.h"

namespace anvil::frontend::onnx_import::tensor {

void register_reshape_converters(ConverterTable& table);  // convert_tensor.cpp
void register_slice_converters(ConverterTable& table);    // convert_tensor_slice.cpp
void register_shape_converters(ConverterTable& table);    // convert_shape.cpp
void register_index_converters(ConverterTable& table);    // convert_index.cpp
void register_scatter_converters(ConverterTable& table);  // convert_index_scatter.cpp

// A 1-D int64 constant.
ir::Expr int64_vector(ConvertContext& ctx, const std::vector<int64_t>& values);
// A scalar int64 constant.
ir::Expr int64_scalar(ConvertContext& ctx, int64_t value);

// Field i of a tuple-typed expression; a folded tuple gives its field itself,
// so that constants keep folding downstream.
ir::Expr tuple_item(ConvertContext& ctx, const ir::Expr& tuple, int i);

// Input i converted to int64 when it has another integer (or other) dtype, for
// ops whose index arguments ONNX lets be any integer type.
ir::Expr as_int64(ConvertContext& ctx, const ir::Expr& value);

// The static dims of input i, or nullopt when a dim is symbolic.
std::optional<std::vector<int64_t>> static_dims(const ConvertContext& ctx, size_t i);

// The static dims of input i; an error saying `what` needs them when a dim is symbolic.
std::vector<int64_t> known_dims(const ConvertContext& ctx, size_t i, const char* what);

// Input i's dtype, which must be a float type; an error naming the node otherwise.
DataType float_input(const ConvertContext& ctx, size_t i);

// The length of input i, a 1-D tensor whose values may be known only at run
// time; fails naming `what` when it is not 1-D or its length is symbolic.
int64_t static_length(const ConvertContext& ctx, size_t i, const char* what);

}  // namespace anvil::frontend::onnx_import::tensor
