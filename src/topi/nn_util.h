// Pieces shared by the computes of the neural-network ops: reading a tensor stored in any
// IR data layout (NCHW, NHWC, HWIO, blocked NCHW16c) through the canonical primal axis
// order, spreading per-axis attributes, the padded-input stage of convolutions and pools,
// and small expression builders.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/nn_geometry.h"
#include "anvil/support/error.h"
#include "anvil/te/te.h"
#include "anvil/tir/tir.h"

namespace anvil::topi::nn {

using tir::PrimExpr;

// The values of constant index expressions (shapes are static once a group is lowered).
inline std::vector<int64_t> static_ints(const std::vector<PrimExpr>& exprs, std::string_view what) {
  std::vector<int64_t> values;
  for (const PrimExpr& e : exprs) {
    std::optional<int64_t> value = tir::as_const_int(e);
    if (!value) throw_error(what, " has a dim that is not static");
    values.push_back(*value);
  }
  return values;
}

// The static sizes of a tensor's dims.
inline std::vector<int64_t> static_shape(const te::Tensor& t) {
  return static_ints(t.shape(), "tensor '" + t.name() + "'");
}

inline std::vector<PrimExpr> int_exprs(const std::vector<int64_t>& values) {
  std::vector<PrimExpr> exprs;
  for (int64_t v : values) exprs.push_back(tir::make_int(v));
  return exprs;
}

inline std::vector<PrimExpr> var_exprs(const std::vector<tir::Var>& vars) {
  return std::vector<PrimExpr>(vars.begin(), vars.end());
}

// An attribute given as one value per spatial axis, or one value for all (empty: fallback).
inline std::vector<int64_t> spread(const std::vector<int64_t>& values, size_t n, int64_t fallback) {
  if (values.empty()) return std::vector<int64_t>(n, fallback);
  if (values.size() == 1) return std::vector<int64_t>(n, values[0]);
  return values;
}

// The spatial axis names of an op over n of them: "W", "HW" or "DHW".
inline std::string spatial_axes(int n) { return n == 1 ? "W" : n == 2 ? "HW" : "DHW"; }

// "NCW", "NCHW", "NCDHW" (or with first_two = "OI", "IO" for weights).
inline std::string spatial_order(std::string_view first_two, int n) {
  return std::string(first_two) + spatial_axes(n);
}

inline std::string lower_case(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

// A layout string ("NHWC", "NCHW16c", "OIHW16i16o") against the primal order of its axes
// ("NCHW"): converts index expressions between the stored tensor and the primal view. A
// blocked axis C with sub-axis 16c stores primal index p at (p / 16, ..., p % 16).
class LayoutMap {
 public:
  LayoutMap(std::string_view layout, std::string_view order) : layout_(layout), order_(order) {
    for (size_t i = 0; i < layout.size();) {
      char c = layout[i];
      if (c >= 'A' && c <= 'Z') {
        axes_.push_back({c, 0, position(c)});
        ++i;
        continue;
      }
      int64_t factor = 0;
      while (i < layout.size() && layout[i] >= '0' && layout[i] <= '9')
        factor = factor * 10 + (layout[i++] - '0');
      if (factor <= 0 || i >= layout.size() || layout[i] < 'a' || layout[i] > 'z')
        throw_error("malformed layout \"", layout, "\"");
      char primal = char(layout[i++] - 'a' + 'A');
      axes_.push_back({primal, factor, position(primal)});
    }
  }

  const std::string& layout() const { return layout_; }
  size_t rank() const { return axes_.size(); }

  // The stored indices of the element at primal indices (in the primal order).
  std::vector<PrimExpr> to_stored(const std::vector<PrimExpr>& primal) const {
    ANVIL_ICHECK(primal.size() == order_.size(), "layout ", layout_, ": ", primal.size(),
                 " primal indices");
    std::vector<PrimExpr> stored;
    for (const Axis& a : axes_) {
      const PrimExpr& p = primal[a.primal_pos];
      if (a.factor > 0) {
        stored.push_back(p % a.factor);
      } else {
        int64_t block = block_of(a.primal);
        stored.push_back(block > 1 ? p / block : p);
      }
    }
    return stored;
  }

  // The primal indices of the element at stored indices.
  std::vector<PrimExpr> to_primal(const std::vector<PrimExpr>& stored) const {
    ANVIL_ICHECK(stored.size() == axes_.size(), "layout ", layout_, ": ", stored.size(),
                 " stored indices");
    std::vector<PrimExpr> primal(order_.size());
    for (size_t i = 0; i < axes_.size(); ++i) {
      const Axis& a = axes_[i];
      PrimExpr part = a.factor > 0 ? stored[i] : stored[i] * block_of(a.primal);
      primal[a.primal_pos] = primal[a.primal_pos] ? primal[a.primal_pos] + part : part;
    }
    return primal;
  }

  // The primal sizes of a tensor of the stored shape.
  std::vector<int64_t> primal_shape(const std::vector<int64_t>& stored) const {
    ANVIL_ICHECK(stored.size() == axes_.size(), "layout ", layout_, " does not fit rank ",
                 stored.size());
    std::vector<int64_t> primal(order_.size(), 1);
    for (size_t i = 0; i < axes_.size(); ++i) primal[axes_[i].primal_pos] *= stored[i];
    return primal;
  }

  // The primal sizes of stored dims that may hold size variables, for the geometry of an op
  // over (N, C, spatial...): the batch N may be symbolic and reads as -1 (a compute must not
  // compute with it), any other symbolic dim is an Error (the compute declines it).
  std::vector<int64_t> primal_geometry(const std::vector<PrimExpr>& stored,
                                       std::string_view what) const {
    ANVIL_ICHECK(stored.size() == axes_.size(), "layout ", layout_, " does not fit rank ",
                 stored.size());
    std::vector<int64_t> primal(order_.size(), 1);
    for (size_t i = 0; i < axes_.size(); ++i) {
      std::optional<int64_t> value = tir::as_const_int(stored[i]);
      if (!value && !(axes_[i].primal_pos == 0 && axes_[i].factor == 0))
        throw_error(what, ": dim ", i, " of layout ", layout_,
                    " is symbolic; only the batch may be");
      primal[axes_[i].primal_pos] *= value ? *value : -1;
    }
    return primal;
  }

  // The stored position of an unsplit primal axis (spatial axes are never blocked).
  size_t stored_axis(char primal) const {
    if (block_of(primal) > 1)
      throw_error("layout \"", layout_, "\" blocks the axis ", primal,
                  ", which the compute reads whole");
    for (size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i].primal == primal && axes_[i].factor == 0) return i;
    throw_error("layout \"", layout_, "\" has no axis ", primal);
  }

 private:
  struct Axis {
    char primal;     // the primal axis this stored axis belongs to
    int64_t factor;  // block size of a sub-axis, 0 for the outer (or whole) axis
    size_t primal_pos;
  };

  size_t position(char primal) const {
    size_t pos = order_.find(primal);
    if (pos == std::string::npos)
      throw_error("layout \"", layout_, "\" has an axis ", primal, " outside ", order_);
    return pos;
  }

  int64_t block_of(char primal) const {
    for (const Axis& a : axes_)
      if (a.factor > 0 && a.primal == primal) return a.factor;
    return 1;
  }

  std::string layout_, order_;
  std::vector<Axis> axes_;
};

// if_then_else(condition, a, b): only the side taken is evaluated, so a may load out of
// bounds where condition fails.
inline PrimExpr if_then_else(PrimExpr condition, PrimExpr a, PrimExpr b) {
  DataType dtype = a.dtype();
  return tir::call_intrin(dtype, "if_then_else",
                          {std::move(condition), std::move(a), std::move(b)});
}

// a && b, where a may be null (no condition yet).
inline PrimExpr and_also(const PrimExpr& a, PrimExpr b) {
  return a ? tir::logical_and(a, std::move(b)) : b;
}

// a || b, where a may be null (no condition yet).
inline PrimExpr or_else(const PrimExpr& a, PrimExpr b) {
  return a ? tir::logical_or(a, std::move(b)) : b;
}

// data (stored in `layout`) padded on the named primal spatial axes by before[i] / after[i]
// with `value`: a separate stage (TVM's pad_temp) that the default schedule inlines. data
// itself when there is no padding.
inline te::Tensor pad_spatial(const te::Tensor& data, const LayoutMap& layout,
                              std::string_view axes, const std::vector<int64_t>& before,
                              const std::vector<int64_t>& after, PrimExpr value,
                              const std::string& name = "pad_temp") {
  bool any = false;
  for (size_t i = 0; i < axes.size(); ++i) any = any || before[i] != 0 || after[i] != 0;
  if (!any) return data;
  // Any axis may be a size variable (an image of any size).
  std::vector<PrimExpr> shape = data.shape();
  std::vector<size_t> positions;
  std::vector<PrimExpr> in_extent;  // of each padded axis
  for (size_t i = 0; i < axes.size(); ++i) {
    positions.push_back(layout.stored_axis(axes[i]));
    in_extent.push_back(shape[positions.back()]);
    shape[positions.back()] = in_extent.back() + (before[i] + after[i]);
  }
  return te::compute(
      shape,
      [=](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> read = var_exprs(idx);
        PrimExpr inside;
        for (size_t i = 0; i < positions.size(); ++i) {
          size_t p = positions[i];
          if (before[i] == 0 && after[i] == 0) continue;
          read[p] = idx[p] - before[i];
          if (before[i] > 0) inside = and_also(inside, idx[p] >= before[i]);
          if (after[i] > 0) inside = and_also(inside, idx[p] < before[i] + in_extent[i]);
        }
        if (!inside) return data.at(read);
        return if_then_else(inside, data.at(read), value);
      },
      name);
}

// The reduce axes r0, r1, ... over the given extents, named prefix + axis letter.
inline std::vector<tir::IterVar> reduce_axes(const std::vector<int64_t>& extents,
                                             std::string_view prefix, std::string_view letters) {
  std::vector<tir::IterVar> axes;
  for (size_t i = 0; i < extents.size(); ++i)
    axes.push_back(te::reduce_axis(tir::make_int(extents[i]),
                                   std::string(prefix) + lower_case(letters.substr(i, 1))));
  return axes;
}

}  // namespace anvil::topi::nn
