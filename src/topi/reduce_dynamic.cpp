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

namespace anvil::topi {
namespace {

size_t data_rank(const ir::CallNode& call) {
  const auto* data = ir::as<ir::TensorTypeNode>(call.args.at(0)->checked_type);
  ANVIL_ICHECK(data && data->shape, "a dynamic reduction of data of unknown rank");
  return data->shape->size();
}

// Whether dim d of a rank-r tensor is among the axes (negative ones count from the end);
// an empty axes list reduces every dim.
std::vector<PrimExpr> reduced_flags(const te::Tensor& axes, size_t rank) {
  int64_t count = static_extent(axes.shape().at(0));
  std::vector<PrimExpr> flags;
  for (size_t d = 0; d < rank; ++d) {
    PrimExpr listed = tir::make_const(DataType::boolean(), count == 0 ? 1.0 : 0.0);
    for (int64_t j = 0; j < count; ++j) {
      PrimExpr axis = tir::cast(DataType::int64(), axes.at({tir::make_int(j)}));
      listed = tir::logical_or(
          listed, tir::logical_or(tir::eq(axis, tir::make_int(int64_t(d))),
                                  tir::eq(axis, tir::make_int(int64_t(d) - int64_t(rank)))));
    }
    flags.push_back(listed);
  }
  return flags;
}

te::Tensor dynamic_reduce_dims(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::ReduceAttrs>();
  if (attrs.exclude) throw_error(args.op_name(), ": exclude with axes given at run time");
  const te::Tensor& data = args.inputs[0];
  size_t rank = data.ndim();
  std::vector<PrimExpr> reduced = reduced_flags(args.inputs[1], rank);
  std::vector<PrimExpr> kept_form, out;
  for (size_t d = 0; d < rank; ++d)
    kept_form.push_back(tir::select(reduced[d], tir::make_int(1), data.shape()[d]));
  if (attrs.keepdims) {
    out = kept_form;
  } else {
    // Output dim j is the data dim d that is the j-th kept one.
    const auto* out_type = ir::as<ir::TensorTypeNode>(args.out_type);
    ANVIL_ICHECK(out_type && out_type->shape, "a dynamic reduction of unknown output rank");
    size_t out_rank = out_type->shape->size();
    for (size_t j = 0; j < out_rank; ++j) {
      PrimExpr position = tir::make_int(0), dim = tir::make_int(0);
      for (size_t d = 0; d < rank; ++d) {
        PrimExpr kept = tir::logical_not(reduced[d]);
        dim = tir::select(tir::logical_and(kept, tir::eq(position, tir::make_int(int64_t(j)))),
                          data.shape()[d], dim);
        position = position + tir::select(kept, tir::make_int(1), tir::make_int(0));
      }
      out.push_back(dim);
    }
  }
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
        PrimExpr flat = tir::make_int(0);
        for (size_t j = 0; j < m; ++j) flat = flat * out_shape[j] + i[j];
        for (size_t d = rank; d-- > 0;) {
          index.insert(index.begin(), tir::floormod(flat, kept[d]) + i[m + d]);
          flat = tir::floordiv(flat, kept[d]);
        }
        return data.at(index);
      },
      tensor_name(args.op_name()) + "_view");
  std::vector<bool> reduced(m, false);
  reduced.resize(m + rank, true);
  return {fold(view, reduced, false, args.out_dtype())};
}

}  // namespace

te::Tensor int64_vector(const std::vector<PrimExpr>& values, const std::string& name) {
  return te::compute(
      {tir::make_int(int64_t(values.size()))},
      [&](const std::vector<Var>& i) {
        PrimExpr value = tir::make_int(0);
        for (size_t k = values.size(); k-- > 0;)
          value = tir::select(tir::eq(i[0], tir::make_int(int64_t(k))), values[k], value);
        return value;
      },
      name);
}

void register_dynamic_reduction(const std::string& op, const ReduceFn& fold) {
  std::string dyn = "dyn." + op;
  if (!ir::OpTable::global().find(dyn)) return;
  register_compute(dyn, [fold](const ComputeArgs& args) { return dynamic_reduce(args, fold); });
  register_shape_compute(dyn, ShapeCompute{dynamic_reduce_dims, data_rank});
}

}  // namespace anvil::topi
