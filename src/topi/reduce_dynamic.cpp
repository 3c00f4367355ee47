// Reductions whose axes arrive as a tensor at run time (dyn.sum, dyn.max, ...). Which dims are
// reduced is a value, so the kernel cannot be specialized to it; instead the shape function
// computes, besides the output dims, the data's dims in "kept" form, K_d = 1 where d is
// reduced and n_d where it is kept. The compute then reads the data through a view of rank
// m + r (m output dims, r data dims):
//   view[o, b] = data[a(o) + b]      with b_d < R_d = n_d - K_d + 1 (n_d if reduced, else 1)
// where a(o) is the output index in kept form (o itself with keepdims; else the output's flat
// position unravelled over K, which works because the kept dims keep their order). Reducing
// the view over its last r dims is the static reduction of the same op, so every dyn reduction
// shares its op's fold (NaN handling, accumulation dtype, mean's count) with the static one.
#include <string>
#include <vector>

#include "anvil/ir/attrs/reduce.h"
#include "anvil/ir/op.h"
#include "anvil/topi/topi.h"
#include "topi/topi_util.h"
#include "topi/transform_util.h"

namespace anvil::topi {
namespace {

using transform::axis_listed;
using transform::int64_vector;
using transform::kept_dims;

// Whether dim d of a rank-r tensor is among the axes; an empty axes list reduces every dim.
std::vector<PrimExpr> reduced_flags(const te::Tensor& axes, size_t rank) {
  bool all = transform::vector_length(axes) == 0;
  std::vector<PrimExpr> flags;
  for (size_t d = 0; d < rank; ++d)
    flags.push_back(all ? tir::make_const(DataType::boolean(), 1)
                        : axis_listed(axes, int64_t(d), int64_t(rank)));
  return flags;
}

te::Tensor dynamic_reduce_dims(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ReduceAttrs>();
  if (attrs.exclude) throw_error(args.op_name(), ": exclude with axes given at run time");
  const te::Tensor& data = args.inputs[0];
  size_t rank = data.ndim();
  std::vector<PrimExpr> reduced = reduced_flags(args.inputs[1], rank);
  std::vector<PrimExpr> kept_form;
  for (size_t d = 0; d < rank; ++d)
    kept_form.push_back(tir::select(reduced[d], tir::make_int(1), data.shape()[d]));
  // Without keepdims, output dim j is the j-th kept data dim.
  std::vector<PrimExpr> out =
      attrs.keepdims ? kept_form : kept_dims(data.shape(), reduced, transform::output_rank(args));
  out.insert(out.end(), kept_form.begin(), kept_form.end());
  return int64_vector(out, tensor_name(args.op_name()) + "_dims");
}

std::vector<te::Tensor> dynamic_reduce(const ComputeArgs& args, const ReduceFn& fold) {
  const auto& attrs = args.attrs_as<ir::ReduceAttrs>();
  const te::Tensor& data = args.inputs[0];
  size_t rank = data.ndim();
  if (args.extras.size() != rank)
    throw_error(args.op_name(), ": the axes are read at run time, which needs its shape function");
  std::vector<PrimExpr> out_shape = args.out_shape();
  std::vector<PrimExpr> kept(args.extras.begin(), args.extras.end());
  std::vector<PrimExpr> view_shape = out_shape;
  for (size_t d = 0; d < rank; ++d) {
    // A static empty dim folds nothing either way (kept, the output is empty too); saying so
    // statically lets the reduction start from its identity.
    std::optional<int64_t> n = tir::as_const_int(data.shape()[d]);
    view_shape.push_back(n && *n == 0 ? tir::make_int(0) : data.shape()[d] - kept[d] + 1);
  }
  const size_t m = out_shape.size();
  te::Tensor view = te::compute(
      view_shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> index;
        if (attrs.keepdims) {
          for (size_t d = 0; d < rank; ++d) index.push_back(PrimExpr(i[d]) + i[m + d]);
          return data.at(index);
        }
        std::vector<PrimExpr> out(i.begin(), i.begin() + std::ptrdiff_t(m));
        index = transform::unravel(transform::ravel(out, out_shape), kept);
        for (size_t d = 0; d < rank; ++d) index[d] = index[d] + i[m + d];
        return data.at(index);
      },
      tensor_name(args.op_name()) + "_view");
  std::vector<bool> reduced(m, false);
  reduced.resize(m + rank, true);
  return {fold(view, reduced, false, args.out_dtype())};
}

}  // namespace

void register_dynamic_reduction(const std::string& op, const ReduceFn& fold) {
  std::string dyn = "dyn." + op;
  if (!ir::OpTable::global().find(dyn)) return;
  register_compute(dyn, [fold](const ComputeArgs& args) { return dynamic_reduce(args, fold); });
  register_shape_compute(dyn, ShapeCompute{dynamic_reduce_dims, transform::data_rank});
}

}  // namespace anvil::topi
