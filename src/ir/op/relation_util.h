// Shared pieces of type relations: axis normalization, broadcasting, and
// checks that produce the messages users see.
#pragma once

#include <string>
#include <vector>

#include "anvil/ir/op.h"

namespace anvil::ir::relation {

// Axis in [-rank, rank) turned into [0, rank); throws Error naming the attribute otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* attr_name = "axis");

// Numpy broadcasting of two shapes. Equal dims, a 1 against anything, and a
// symbolic dim against 1 broadcast; two different static dims (neither 1)
// throw Error showing both shapes. Two different symbolic dims give Any.
std::vector<Dim> broadcast_shapes(const std::vector<Dim>& a, const std::vector<Dim>& b);

// The tensor type of the broadcast of all inputs (dtype of the first; every
// input must share it unless allow_mixed_dtypes).
Type broadcast_relation(const RelationArgs& args, bool allow_mixed_dtypes = false);

// Same type as input 0: for elementwise ops.
Type identity_relation(const RelationArgs& args);

// Throws Error unless every input is a tensor of the same dtype as input 0.
void expect_same_dtype(const RelationArgs& args);

// Throws Error "<what> must be <expected>, got <got>" when two dims are
// provably different (symbolic dims are accepted).
void expect_dim_equal(const Dim& got, const Dim& expected, const std::string& what);

// Throws Error unless the tensor has exactly `rank` dims.
void expect_rank(const TensorTypeNode& t, int64_t rank, const std::string& what);

// "Tensor[(1, 3), float32]" for messages.
std::string describe(const TensorTypeNode& t);

}  // namespace anvil::ir::relation
