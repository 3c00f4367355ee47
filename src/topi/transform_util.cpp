#include "topi/transform_util.h"

#include <algorithm>
#include <cctype>

#include "anvil/ir/op.h"
#include "anvil/tir/structural_equal.h"
#include "topi/topi_util.h"

namespace anvil::topi::transform {

std::string tensor_name(const ComputeArgs& args) {
  std::string name = "T_" + args.op_name();
  for (char& c : name)
    if (c == '.') c = '_';
  return name;
}

std::vector<int64_t> static_shape(const te::Tensor& t) {
  std::vector<int64_t> shape;
  for (const PrimExpr& dim : t.shape()) {
    auto value = tir::as_const_int(dim);
    if (!value) throw_error("tensor ", t.name(), " has a symbolic dim");
    shape.push_back(*value);
  }
  return shape;
}

std::vector<int64_t> static_out_shape(const ComputeArgs& args, size_t i) {
  std::vector<int64_t> shape;
  for (const PrimExpr& dim : args.out_shape(i)) {
    auto value = tir::as_const_int(dim);
    if (!value) throw_error(args.op_name(), ": output ", i, " has a symbolic dim");
    shape.push_back(*value);
  }
  return shape;
}

std::vector<PrimExpr> shape_exprs(const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> out;
  for (int64_t d : shape) out.push_back(tir::make_int(d));
  return out;
}

int64_t wrap_axis(int64_t axis, int64_t rank) {
  ANVIL_ICHECK(axis >= -rank && axis < rank, "axis ", axis, " out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<PrimExpr> as_exprs(const std::vector<tir::Var>& vars) {
  return std::vector<PrimExpr>(vars.begin(), vars.end());
}

PrimExpr as_index(const PrimExpr& value) { return tir::cast(tir::kIndexType, value); }

PrimExpr ravel(const std::vector<PrimExpr>& index, const std::vector<int64_t>& shape) {
  PrimExpr flat = tir::make_int(0);
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * tir::make_int(shape[i]) + index[i];
  return flat;
}

std::vector<PrimExpr> unravel(const PrimExpr& flat, const std::vector<int64_t>& shape) {
  std::vector<PrimExpr> index(shape.size());
  int64_t inner = 1;  // elements of the dims after i
  for (size_t i = shape.size(); i-- > 0;) {
    PrimExpr coord = inner == 1 ? flat : tir::floordiv(flat, tir::make_int(inner));
    // The leading dim needs no modulo: the flat position is in range.
    index[i] = i == 0 ? coord : tir::floormod(coord, tir::make_int(shape[i]));
    inner *= shape[i];
  }
  return index;
}

std::vector<PrimExpr> reshape_source(const std::vector<PrimExpr>& out_index,
                                     const std::vector<int64_t>& out_shape,
                                     const std::vector<int64_t>& in_shape) {
  bool empty = std::find(in_shape.begin(), in_shape.end(), 0) != in_shape.end() ||
               std::find(out_shape.begin(), out_shape.end(), 0) != out_shape.end();
  if (empty) return unravel(ravel(out_index, out_shape), in_shape);
  // Unit dims read index 0 and write nothing; the other dims are cut into the shortest runs
  // whose sizes multiply to the same count on both sides, so each run maps on its own.
  std::vector<size_t> out_dims, in_dims;
  for (size_t i = 0; i < out_shape.size(); ++i)
    if (out_shape[i] != 1) out_dims.push_back(i);
  for (size_t i = 0; i < in_shape.size(); ++i)
    if (in_shape[i] != 1) in_dims.push_back(i);
  std::vector<PrimExpr> source(in_shape.size(), tir::make_int(0));
  size_t next_in = 0, next_out = 0;
  while (next_in < in_dims.size() || next_out < out_dims.size()) {
    std::vector<size_t> run_in, run_out;
    int64_t in_count = 1, out_count = 1;
    do {
      if (in_count <= out_count && next_in < in_dims.size()) {
        run_in.push_back(in_dims[next_in++]);
        in_count *= in_shape[run_in.back()];
      } else {
        ANVIL_ICHECK(next_out < out_dims.size(), "reshape of unequal element counts");
        run_out.push_back(out_dims[next_out++]);
        out_count *= out_shape[run_out.back()];
      }
    } while (in_count != out_count);
    std::vector<PrimExpr> out_part;
    std::vector<int64_t> out_part_shape, in_part_shape;
    for (size_t d : run_out) {
      out_part.push_back(out_index[d]);
      out_part_shape.push_back(out_shape[d]);
    }
    for (size_t d : run_in) in_part_shape.push_back(in_shape[d]);
    std::vector<PrimExpr> in_part = unravel(ravel(out_part, out_part_shape), in_part_shape);
    for (size_t k = 0; k < run_in.size(); ++k) source[run_in[k]] = in_part[k];
  }
  return source;
}

PrimExpr ravel(const std::vector<PrimExpr>& index, const std::vector<PrimExpr>& shape) {
  PrimExpr flat = tir::make_int(0);
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + index[i];
  return flat;
}

std::vector<PrimExpr> unravel(const PrimExpr& flat, const std::vector<PrimExpr>& shape) {
  std::vector<PrimExpr> index(shape.size());
  PrimExpr inner = tir::make_int(1);  // elements of the dims after i
  for (size_t i = shape.size(); i-- > 0;) {
    PrimExpr coord = tir::is_one(inner) ? flat : tir::floordiv(flat, inner);
    index[i] = i == 0 ? coord : tir::floormod(coord, shape[i]);
    inner = inner * shape[i];
  }
  return index;
}

std::vector<PrimExpr> reshape_source(const std::vector<PrimExpr>& out_index,
                                     const std::vector<PrimExpr>& out_shape,
                                     const std::vector<PrimExpr>& in_shape) {
  auto all_static = [](const std::vector<PrimExpr>& shape, size_t from, size_t to,
                       std::vector<int64_t>& values) {
    values.clear();
    for (size_t i = from; i < to; ++i) {
      auto value = tir::as_const_int(shape[i]);
      if (!value) return false;
      values.push_back(*value);
    }
    return true;
  };
  // Peel dims that are the same on both sides from the front and the back, symbolic or not,
  // until a size variable no longer stands alone.
  size_t head = 0;
  while (head < out_shape.size() && head < in_shape.size() && !tir::as_const_int(out_shape[head]) &&
         same_extent(out_shape[head], in_shape[head]))
    ++head;
  size_t tail = 0;
  while (tail + head < out_shape.size() && tail + head < in_shape.size() &&
         !tir::as_const_int(out_shape[out_shape.size() - 1 - tail]) &&
         same_extent(out_shape[out_shape.size() - 1 - tail], in_shape[in_shape.size() - 1 - tail]))
    ++tail;
  size_t out_end = out_shape.size() - tail, in_end = in_shape.size() - tail;
  std::vector<PrimExpr> source(in_shape.size());
  for (size_t i = 0; i < head; ++i) source[i] = out_index[i];
  for (size_t k = 0; k < tail; ++k) source[in_end + k] = out_index[out_end + k];
  std::vector<PrimExpr> middle_index(out_index.begin() + long(head),
                                     out_index.begin() + long(out_end));
  std::vector<int64_t> out_static, in_static;
  std::vector<PrimExpr> middle;
  if (all_static(out_shape, head, out_end, out_static) &&
      all_static(in_shape, head, in_end, in_static)) {
    middle = reshape_source(middle_index, out_static, in_static);
  } else {
    std::vector<PrimExpr> out_mid(out_shape.begin() + long(head),
                                  out_shape.begin() + long(out_end));
    std::vector<PrimExpr> in_mid(in_shape.begin() + long(head), in_shape.begin() + long(in_end));
    middle = unravel(ravel(middle_index, out_mid), in_mid);
  }
  for (size_t k = 0; k < middle.size(); ++k) source[head + k] = middle[k];
  return source;
}

PrimExpr convert_like_reference(const PrimExpr& value, DataType dtype) {
  DataType from = value.dtype();
  if (from == dtype) return value;
  bool to_integer = dtype.is_int() || dtype.is_uint() || dtype.is_bool();
  if (to_integer && (from.is_float() || from.is_bfloat()))
    return tir::cast(dtype, tir::cast(DataType::int64(), value));
  return tir::cast(dtype, value);
}

PrimExpr scalar_value(const te::Tensor& t) {
  return t.at(std::vector<PrimExpr>(size_t(t.ndim()), tir::make_int(0)));
}

te::Tensor map_output(const ComputeArgs& args, size_t i,
                      std::function<PrimExpr(const std::vector<PrimExpr>&)> source) {
  return te::compute(
      args.out_shape(i),
      [source = std::move(source)](const std::vector<tir::Var>& idx) {
        return source(as_exprs(idx));
      },
      tensor_name(args));
}

te::Tensor gather_compute(
    const te::Tensor& input, const std::vector<int64_t>& out_shape,
    std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)> source_index,
    const std::string& name) {
  return te::compute(
      shape_exprs(out_shape),
      [input, source_index = std::move(source_index)](const std::vector<tir::Var>& idx) {
        return input.at(source_index(as_exprs(idx)));
      },
      name);
}

te::Tensor gather_compute(
    const te::Tensor& input, const std::vector<PrimExpr>& out_shape,
    std::function<std::vector<PrimExpr>(const std::vector<PrimExpr>&)> source_index,
    const std::string& name) {
  return te::compute(
      out_shape,
      [input, source_index = std::move(source_index)](const std::vector<tir::Var>& idx) {
        return input.at(source_index(as_exprs(idx)));
      },
      name);
}

// ---------------------------------------------------------------- layouts

namespace {

size_t letter(char primal) { return size_t(primal - 'A'); }

}  // namespace

Layout::Layout(const std::string& text) {
  int64_t factor = 0;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      factor = factor * 10 + (c - '0');
      continue;
    }
    ANVIL_ICHECK(std::isalpha(static_cast<unsigned char>(c)), "layout \"", text, "\"");
    axes_.push_back({char(std::toupper(static_cast<unsigned char>(c))), factor});
    factor = 0;
  }
}

int64_t Layout::block(char primal) const {
  for (const Axis& a : axes_)
    if (a.primal == primal && a.factor > 0) return a.factor;
  return 1;
}

std::string Layout::primal_names() const {
  std::string names;
  for (const Axis& a : axes_)
    if (a.factor == 0) names += a.primal;
  return names;
}

std::vector<PrimExpr> Layout::to_primal(const std::vector<PrimExpr>& stored) const {
  ANVIL_ICHECK(stored.size() == axes_.size(), "index of rank ", stored.size(), " for a layout of ",
               axes_.size());
  std::vector<PrimExpr> primal(26);
  for (size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    PrimExpr part = a.factor > 0 ? stored[i] : stored[i] * tir::make_int(block(a.primal));
    PrimExpr& coord = primal[letter(a.primal)];
    coord = coord ? coord + part : part;
  }
  return primal;
}

std::vector<PrimExpr> Layout::from_primal(const std::vector<PrimExpr>& primal) const {
  std::vector<PrimExpr> stored;
  for (const Axis& a : axes_) {
    const PrimExpr& coord = primal[letter(a.primal)];
    ANVIL_ICHECK(coord, "layout axis ", a.primal, " has no coordinate");
    int64_t b = block(a.primal);
    if (a.factor > 0)
      stored.push_back(tir::floormod(coord, tir::make_int(a.factor)));
    else
      stored.push_back(b == 1 ? coord : tir::floordiv(coord, tir::make_int(b)));
  }
  return stored;
}

std::vector<int64_t> Layout::stored_shape(const std::vector<int64_t>& primal_extent) const {
  std::vector<int64_t> shape;
  for (const Axis& a : axes_)
    shape.push_back(a.factor > 0 ? a.factor : primal_extent[letter(a.primal)] / block(a.primal));
  return shape;
}

std::vector<int64_t> Layout::primal_extents(const std::vector<int64_t>& stored) const {
  std::vector<int64_t> extent(26, 0);
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].factor == 0) extent[letter(axes_[i].primal)] = stored[i] * block(axes_[i].primal);
  return extent;
}

int64_t vector_length(const te::Tensor& values) { return static_extent(values.shape().at(0)); }

PrimExpr vector_element(const te::Tensor& values, int64_t j) {
  return as_index(values.at({tir::make_int(j)}));
}

PrimExpr pick(const std::vector<PrimExpr>& values, const PrimExpr& position) {
  PrimExpr value = tir::make_int(0);
  for (size_t k = values.size(); k-- > 0;)
    value = tir::select(tir::eq(position, tir::make_int(int64_t(k))), values[k], value);
  return value;
}

PrimExpr axis_matches(const te::Tensor& axes, int64_t j, int64_t d, int64_t rank) {
  PrimExpr axis = vector_element(axes, j);
  return tir::logical_or(tir::eq(axis, tir::make_int(d)), tir::eq(axis, tir::make_int(d - rank)));
}

PrimExpr axis_listed(const te::Tensor& axes, int64_t d, int64_t rank) {
  PrimExpr found = tir::make_const(DataType::boolean(), 0);
  for (int64_t j = 0; j < vector_length(axes); ++j)
    found = tir::logical_or(found, axis_matches(axes, j, d, rank));
  return found;
}

std::vector<PrimExpr> kept_dims(const std::vector<PrimExpr>& dims,
                                const std::vector<PrimExpr>& dropped, size_t out_rank) {
  std::vector<PrimExpr> out;
  for (size_t j = 0; j < out_rank; ++j) {
    PrimExpr position = tir::make_int(0), dim = tir::make_int(0);
    for (size_t d = 0; d < dims.size(); ++d) {
      PrimExpr kept = tir::logical_not(dropped[d]);
      dim = tir::select(tir::logical_and(kept, tir::eq(position, tir::make_int(int64_t(j)))),
                        dims[d], dim);
      position = position + tir::select(kept, tir::make_int(1), tir::make_int(0));
    }
    out.push_back(dim);
  }
  return out;
}

te::Tensor int64_vector(const std::vector<PrimExpr>& values, const std::string& name) {
  return te::compute(
      {tir::make_int(int64_t(values.size()))},
      [&](const std::vector<tir::Var>& i) { return pick(values, i[0]); }, name);
}

te::Tensor shape_function_result(const std::vector<PrimExpr>& dims, const PrimExpr& valid,
                                 const ComputeArgs& args, const std::vector<PrimExpr>& extras) {
  std::vector<PrimExpr> values;
  for (const PrimExpr& dim : dims) values.push_back(tir::select(valid, dim, tir::make_int(-1)));
  values.insert(values.end(), extras.begin(), extras.end());
  return int64_vector(values, tensor_name(args) + "_dims");
}

size_t output_rank(const ComputeArgs& args) {
  const auto* type = ir::as<ir::TensorTypeNode>(args.out_type);
  ANVIL_ICHECK(type && type->shape, args.op_name(), ": output of unknown rank");
  return type->shape->size();
}

size_t data_rank(const ir::CallNode& call) {
  const auto* data = ir::as<ir::TensorTypeNode>(call.args.at(0)->checked_type);
  ANVIL_ICHECK(data && data->shape, "the data of a shape function has unknown rank");
  return data->shape->size();
}

}  // namespace anvil::topi::transform
