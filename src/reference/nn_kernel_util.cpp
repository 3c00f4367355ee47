#include "reference/nn_kernel_util.h"

#include "anvil/support/error.h"

namespace anvil::reference::nn {

namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
char to_lower(char c) { return char(c - 'A' + 'a'); }

// Position of primal axis `name` in `order`; the type relation has checked the layout.
size_t primal_position(std::string_view order, char name) {
  size_t pos = order.find(name);
  ANVIL_ICHECK(pos != std::string_view::npos, "layout axis ", name, " is not in ", order);
  return pos;
}

// The block factor of primal axis `name` in the axes, or 1.
int64_t block_of(const std::vector<LayoutAxis>& axes, char name) {
  for (const LayoutAxis& a : axes)
    if (a.factor > 0 && a.name == to_lower(name)) return a.factor;
  return 1;
}

}  // namespace

std::vector<LayoutAxis> parse_layout(std::string_view layout) {
  std::vector<LayoutAxis> axes;
  for (size_t i = 0; i < layout.size();) {
    if (is_upper(layout[i])) {
      axes.push_back({layout[i++], 0});
      continue;
    }
    int64_t factor = 0;
    while (i < layout.size() && layout[i] >= '0' && layout[i] <= '9')
      factor = factor * 10 + (layout[i++] - '0');
    ANVIL_ICHECK(factor > 0 && i < layout.size(), "malformed layout ", layout);
    axes.push_back({layout[i++], factor});
  }
  return axes;
}

std::vector<int64_t> primal_shape(std::string_view layout, std::string_view order,
                                  std::span<const int64_t> shape) {
  std::vector<LayoutAxis> axes = parse_layout(layout);
  ANVIL_ICHECK(axes.size() == shape.size(), "layout ", layout, " does not fit the rank ",
               shape.size());
  std::vector<int64_t> primal(order.size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    char name = axes[i].factor > 0 ? char(axes[i].name - 'a' + 'A') : axes[i].name;
    primal[primal_position(order, name)] *= shape[i];
  }
  return primal;
}

std::vector<int64_t> layout_shape(std::string_view layout, std::string_view order,
                                  std::span<const int64_t> primal) {
  std::vector<LayoutAxis> axes = parse_layout(layout);
  std::vector<int64_t> shape;
  for (const LayoutAxis& a : axes) {
    if (a.factor > 0) {
      shape.push_back(a.factor);
    } else {
      shape.push_back(primal[primal_position(order, a.name)] / block_of(axes, a.name));
    }
  }
  return shape;
}

std::vector<int64_t> layout_index_map(std::string_view layout, std::string_view order,
                                      std::span<const int64_t> primal) {
  std::vector<LayoutAxis> axes = parse_layout(layout);
  std::vector<int64_t> shape = layout_shape(layout, order, primal);
  std::vector<int64_t> strides = row_major_strides(shape);
  // For each stored axis: which primal axis it reads, and how (outer blocks or inner part).
  struct Source {
    size_t primal;
    int64_t divisor, modulus;  // coordinate = (primal coordinate / divisor) % modulus
  };
  std::vector<Source> sources;
  for (size_t i = 0; i < axes.size(); ++i) {
    const LayoutAxis& a = axes[i];
    if (a.factor > 0) {
      sources.push_back({primal_position(order, char(a.name - 'a' + 'A')), 1, a.factor});
    } else {
      size_t p = primal_position(order, a.name);
      sources.push_back({p, block_of(axes, a.name), shape[i]});
    }
  }
  int64_t count = shape_numel(primal);
  std::vector<int64_t> map(static_cast<size_t>(count));
  for (int64_t flat = 0; flat < count; ++flat) {
    std::vector<int64_t> coord = unravel(flat, primal);
    int64_t index = 0;
    for (size_t i = 0; i < sources.size(); ++i)
      index += (coord[sources[i].primal] / sources[i].divisor) % sources[i].modulus * strides[i];
    map[size_t(flat)] = index;
  }
  return map;
}

std::vector<int64_t> spread(const std::vector<int64_t>& values, size_t n, int64_t fallback) {
  if (values.empty()) return std::vector<int64_t>(n, fallback);
  if (values.size() == 1) return std::vector<int64_t>(n, values[0]);
  return values;
}

std::string spatial_order(std::string_view first_two, size_t n) {
  return std::string(first_two) + (n == 1 ? "W" : n == 2 ? "HW" : "DHW");
}

bool integer_math(std::initializer_list<DataType> dtypes) {
  for (DataType t : dtypes)
    if (!is_integer_like(t)) return false;
  return true;
}

Tensor compact(const Tensor& t) { return t.is_contiguous() ? t : t.copy(); }

}  // namespace anvil::reference::nn
