// Index arithmetic shared by the computes of the transform, index and creation families. These
// ops only move elements (or make them from attributes), so their computes are mostly an
// output index mapped back to an input index; the helpers here build those maps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/te/te.h"
#include "anvil/tir/tir.h"
#include "anvil/topi/topi.h"
#include "topi/topi_util.h"

namespace anvil::topi::transform {

using tir::PrimExpr;

// Registration parts of the transform and index families, one per file.
void register_transform_shape_computes();    // transform.cpp
void register_transform_slice_computes();    // transform_slice.cpp
void register_transform_layout_computes();   // transform_layout.cpp
void register_index_gather_computes();       // index.cpp
void register_index_creation_computes();     // index_creation.cpp
void register_index_scatter_computes();      // index_scatter.cpp
void register_index_scan_computes();         // index_scan.cpp
void register_transform_dynamic_computes();  // transform_dynamic.cpp

// Computes shared by an op and its dyn. form (transform.cpp): a row-major reshape to the
// output's dims, broadcast_to (a symbolic input dim tested for 1 at run time) and tile.
std::vector<te::Tensor> reshape_like(const ComputeArgs& args);
std::vector<te::Tensor> broadcast_to(const ComputeArgs& args);
std::vector<te::Tensor> tile(const ComputeArgs& args);

// Pieces of the shape functions (topi::ShapeCompute), which compute sizes from the values of
// a shape operand: an integer vector of static length.
int64_t vector_length(const te::Tensor& values);
// Element j of an integer vector as an int64 index.
PrimExpr vector_element(const te::Tensor& values, int64_t j);
// values[position] for a position known only as an expression; 0 when none matches.
PrimExpr pick(const std::vector<PrimExpr>& values, const PrimExpr& position);
// Whether element j of `axes` names dim d of a rank-`rank` shape (negative axes count from the
// end), and whether any element does.
PrimExpr axis_matches(const te::Tensor& axes, int64_t j, int64_t d, int64_t rank);
PrimExpr axis_listed(const te::Tensor& axes, int64_t d, int64_t rank);
// The dims whose `dropped` flag is false, in order, as `out_rank` dims.
std::vector<PrimExpr> kept_dims(const std::vector<PrimExpr>& dims,
                                const std::vector<PrimExpr>& dropped, size_t out_rank);
// The int64 vector of `values`, as a shape function writes its sizes.
te::Tensor int64_vector(const std::vector<PrimExpr>& values, const std::string& name);
// What a shape function writes: the output dims, or -1 for each when `valid` is false (an
// operand the op rejects; the VM then refuses to allocate), then the extras.
te::Tensor shape_function_result(const std::vector<PrimExpr>& dims, const PrimExpr& valid,
                                 const ComputeArgs& args, const std::vector<PrimExpr>& extras = {});
// The rank of the call's (single) output, and of its first argument; both must be known.
size_t output_rank(const ComputeArgs& args);
size_t data_rank(const ir::CallNode& call);

// "T_" + the op name with dots replaced, the name of the tensor an op computes.
std::string tensor_name(const ComputeArgs& args);

// The static dims of a tensor (shapes are static by lowering time).
std::vector<int64_t> static_shape(const te::Tensor& t);
// The static dims of output i of the call.
std::vector<int64_t> static_out_shape(const ComputeArgs& args, size_t i = 0);
// The shape as index expressions.
std::vector<PrimExpr> shape_exprs(const std::vector<int64_t>& shape);

// An axis in [-rank, rank) as [0, rank) (the type relation has checked the range).
int64_t wrap_axis(int64_t axis, int64_t rank);

// The compute vars as expressions.
std::vector<PrimExpr> as_exprs(const std::vector<tir::Var>& vars);

// An element of an integer tensor as an int64 index.
PrimExpr as_index(const PrimExpr& value);

// The flat row-major position of index in shape.
PrimExpr ravel(const std::vector<PrimExpr>& index, const std::vector<int64_t>& shape);
// The multi-index of flat position `flat` in shape.
std::vector<PrimExpr> unravel(const PrimExpr& flat, const std::vector<int64_t>& shape);

// The input index that an output index of a reshape reads (row-major element order kept).
// The dims are matched in runs of equal element count, so a reshape that only splits, merges
// or adds unit dims gets short index expressions rather than one through the flat position.
std::vector<PrimExpr> reshape_source(const std::vector<PrimExpr>& out_index,
                                     const std::vector<int64_t>& out_shape,
                                     const std::vector<int64_t>& in_shape);
// The same over shapes that may hold size variables: leading and trailing dims that are the
// same expression on both sides map to themselves, a static middle goes through the runs
// above, and a symbolic middle through the flat position.
std::vector<PrimExpr> reshape_source(const std::vector<PrimExpr>& out_index,
                                     const std::vector<PrimExpr>& out_shape,
                                     const std::vector<PrimExpr>& in_shape);
// ravel and unravel over shapes that may hold size variables.
PrimExpr ravel(const std::vector<PrimExpr>& index, const std::vector<PrimExpr>& shape);
std::vector<PrimExpr> unravel(const PrimExpr& flat, const std::vector<PrimExpr>& shape);

// value converted to dtype as the reference kernels convert a fill value: a float becomes an
// integer (or bool) by truncation to int64 first, everything else by a plain cast.
PrimExpr convert_like_reference(const PrimExpr& value, DataType dtype);

// The single element of a scalar (or one-element) tensor.
PrimExpr scalar_value(const te::Tensor& t);

// A compute over the call's output i whose element at each index is source(index).
te::Tensor map_output(const ComputeArgs& args, size_t i,
                      std::function<PrimExpr(const std::vector<PrimExpr>&)> source);

// A compute of out_shape reading `input` at the index `source_index` returns.
te::Tensor gather_compute(
    const te::Tensor& input, const std::vector<int64_t>& out_shape,
    std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)> source_index,
    const std::string& name);
te::Tensor gather_compute(
    const te::Tensor& input, const std::vector<PrimExpr>& out_shape,
    std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)> source_index,
    const std::string& name);

// ---------------------------------------------------------------- layouts

// A layout string such as "NCHW16c" read as axes: an upper-case letter is a whole (primal)
// axis, a lower-case one preceded by a number is a block of that many of its primal axis.
class Layout {
 public:
  explicit Layout(const std::string& text);
  size_t rank() const { return axes_.size(); }
  // The block size of primal axis `primal` (upper case), or 1 when it is not blocked.
  int64_t block(char primal) const;
  // The primal letters in the order they appear.
  std::string primal_names() const;
  // The coordinate along each primal axis (indexed by letter) of a stored index.
  std::vector<PrimExpr> to_primal(const std::vector<PrimExpr>& stored) const;
  // The stored index of primal coordinates (indexed by letter 'A'..'Z').
  std::vector<PrimExpr> from_primal(const std::vector<PrimExpr>& primal) const;
  // The stored shape of a tensor whose primal extents (by letter) are given.
  std::vector<int64_t> stored_shape(const std::vector<int64_t>& primal_extent) const;
  // The primal extents (by letter, 0 where absent) of a stored shape.
  std::vector<int64_t> primal_extents(const std::vector<int64_t>& stored) const;

 private:
  struct Axis {
    char primal;     // the upper-case letter of the axis this one belongs to
    int64_t factor;  // 0 for the primal axis itself
  };
  std::vector<Axis> axes_;
};

}  // namespace anvil::topi::transform
