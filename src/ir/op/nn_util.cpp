#include "ir/op/nn_util.h"

#include <algorithm>

namespace anvil::ir::nn {

namespace {

bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
char to_upper(char c) { return char(c - 'a' + 'A'); }

std::string axes_list(std::string_view axes) {
  std::string text;
  for (size_t i = 0; i < axes.size(); ++i) text += (i ? ", " : "") + std::string(1, axes[i]);
  return text;
}

}  // namespace

Layout Layout::parse(const std::string& text, const char* attr, std::string_view primal) {
  Layout layout;
  layout.name_ = text;
  auto malformed = [&](const auto&... why) {
    throw_error("attribute '", attr, "' = \"", text, "\" is not a valid layout: ", why...);
  };
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (is_upper(c)) {
      layout.axes_.push_back({c, 0});
      ++i;
    } else if (is_digit(c)) {
      int64_t factor = 0;
      while (i < text.size() && is_digit(text[i])) {
        factor = factor * 10 + (text[i] - '0');
        if (factor > (int64_t(1) << 40)) malformed("block factor too large");
        ++i;
      }
      if (i == text.size() || !is_lower(text[i]))
        malformed("block factor ", factor, " must be followed by a lower-case axis, as in NCHW16c");
      if (factor <= 0) malformed("block factor of '", text[i], "' must be positive");
      layout.axes_.push_back({text[i], factor});
      ++i;
    } else if (is_lower(c)) {
      malformed("sub-axis '", c, "' needs a block factor before it, as in NCHW16c");
    } else {
      malformed("unexpected character '", c, "'");
    }
  }
  std::string seen;
  for (const Axis& axis : layout.axes_) {
    if (seen.find(axis.name) != std::string::npos) malformed("axis '", axis.name, "' repeats");
    seen += axis.name;
  }
  for (const Axis& axis : layout.axes_) {
    if (axis.factor > 0 && seen.find(to_upper(axis.name)) == std::string::npos)
      malformed("sub-axis '", axis.name, "' splits axis '", to_upper(axis.name),
                "', which is absent");
  }
  std::string primal_seen;
  for (const Axis& axis : layout.axes_)
    if (axis.factor == 0) primal_seen += axis.name;
  std::string expected(primal);
  std::sort(primal_seen.begin(), primal_seen.end());
  std::sort(expected.begin(), expected.end());
  if (primal_seen != expected)
    throw_error("attribute '", attr, "' = \"", text, "\" must have the axes ", axes_list(primal),
                " (in any order)");
  return layout;
}

std::optional<int64_t> Layout::block(char axis) const {
  char sub = char(axis - 'A' + 'a');
  for (const Axis& a : axes_)
    if (a.name == sub) return a.factor;
  return std::nullopt;
}

std::vector<Dim> Layout::to_primal(const std::vector<Dim>& shape, std::string_view order,
                                   const std::string& who, const char* attr) const {
  if (shape.size() != axes_.size())
    throw_error(who, " has shape ", dims_to_string(shape), " of rank ", shape.size(), ", but ",
                attr, " \"", name_, "\" needs rank ", axes_.size());
  std::vector<Dim> sizes;
  for (char axis : order) {
    std::optional<Dim> size;
    for (size_t i = 0; i < axes_.size(); ++i)
      if (axes_[i].name == axis) size = shape[i];
    ANVIL_ICHECK(size.has_value(), "layout ", name_, " lacks axis ", axis);
    for (size_t i = 0; i < axes_.size(); ++i) {
      if (axes_[i].factor == 0 || to_upper(axes_[i].name) != axis) continue;
      if (provably_different(shape[i], axes_[i].factor))
        throw_error(who, " has shape ", dims_to_string(shape), " whose inner '", axes_[i].name,
                    "' axis is ", shape[i].to_string(), ", but ", attr, " \"", name_, "\" needs ",
                    axes_[i].factor);
      *size = *size * axes_[i].factor;
    }
    sizes.push_back(*size);
  }
  return sizes;
}

std::vector<Dim> Layout::from_primal(const std::vector<Dim>& sizes, std::string_view order,
                                     const char* attr) const {
  std::vector<Dim> shape;
  for (const Axis& axis : axes_) {
    if (axis.factor > 0) {
      shape.push_back(axis.factor);
      continue;
    }
    size_t pos = order.find(axis.name);
    ANVIL_ICHECK(pos != std::string_view::npos, "layout ", name_, " has unknown axis ", axis.name);
    Dim size = sizes[pos];
    if (std::optional<int64_t> factor = block(axis.name)) {
      if (size.is_int() && size.int_value() % *factor != 0)
        throw_error("attribute '", attr, "' = \"", name_, "\" splits axis ", axis.name,
                    " into blocks of ", *factor, ", but the output's ", axis.name, " is ",
                    size.int_value());
      size = floordiv(size, *factor);
    }
    shape.push_back(size);
  }
  return shape;
}

std::vector<Dim> shape_or_any(const RelationArgs& args, size_t i, size_t rank) {
  const auto* t = as<TensorTypeNode>(args.inputs[i]);
  if (t && !t->shape) return std::vector<Dim>(rank, Dim::any());
  return *args.tensor(i).shape;
}

DataType input_dtype(const RelationArgs& args, size_t i) {
  const auto* t = as<TensorTypeNode>(args.inputs[i]);
  if (!t) throw_error(args.arg_name(i), " must be a tensor, got ", type_to_string(args.inputs[i]));
  return t->dtype;
}

std::string inputs_text(const RelationArgs& args) {
  std::string text;
  for (size_t i = 0; i < args.inputs.size(); ++i) {
    std::string name =
        i < args.op.input_names.size() ? args.op.input_names[i] : "input " + std::to_string(i);
    text += (i ? ", " : "") + name + " " + type_to_string(args.inputs[i]);
  }
  return text;
}

std::string ints_text(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::vector<int64_t> spatial_attr(const std::vector<int64_t>& values, size_t n, const char* attr,
                                  int64_t min_value) {
  if (values.size() != n && values.size() != 1)
    throw_error("attribute '", attr, "' must have ", n, " value", n == 1 ? "" : "s",
                " (one per spatial axis), got ", ints_text(values));
  for (int64_t v : values)
    if (v < min_value)
      throw_error("attribute '", attr, "' must be ", min_value == 1 ? "positive" : "non-negative",
                  ", got ", ints_text(values));
  return values.size() == n ? values : std::vector<int64_t>(n, values[0]);
}

std::vector<int64_t> expand_padding(const std::vector<int64_t>& values, size_t n,
                                    const char* attr) {
  for (int64_t v : values)
    if (v < 0) throw_error("attribute '", attr, "' must be non-negative, got ", ints_text(values));
  if (values.size() == 2 * n) return values;
  if (values.size() == 1) return std::vector<int64_t>(2 * n, values[0]);
  if (values.size() == n) {
    std::vector<int64_t> both = values;
    both.insert(both.end(), values.begin(), values.end());
    return both;
  }
  throw_error("attribute '", attr, "' must have 1, ", n, " or ", 2 * n,
              " values (befores then afters), got ", ints_text(values));
}

bool provably_different(const Dim& a, const Dim& b) {
  return a.is_int() && b.is_int() && a.int_value() != b.int_value();
}

Dim window_output(const Dim& in, const Dim& window, int64_t stride, int64_t dilation,
                  int64_t pad_before, int64_t pad_after, bool ceil_mode, const char* what,
                  char axis) {
  Dim dilated = (window - 1) * dilation + 1;
  Dim span = in + (pad_before + pad_after) - dilated;
  if (span.is_int() && span.int_value() < 0)
    throw_error("the ", what, " spans ", dilated.to_string(), " on axis ", axis, " (size ",
                window.to_string(), ", dilation ", dilation, ") but the padded input is only ",
                (in + (pad_before + pad_after)).to_string());
  if (!ceil_mode) return floordiv(span, stride) + 1;
  Dim last_start = floordiv(span + (stride - 1), stride);
  // Rounding up can add a window that starts in the after-padding only when
  // stride + pad_after exceeds the dilated window; such a window is dropped.
  if (dilated.is_int() && stride + pad_after <= dilated.int_value()) return last_start + 1;
  return min(last_start, floordiv(in + (pad_before - 1), stride)) + 1;
}

DataType product_dtype(const RelationArgs& args, size_t a, size_t b,
                       const std::optional<DataType>& out_dtype) {
  DataType ta = input_dtype(args, a), tb = input_dtype(args, b);
  bool both_integer = (ta.is_int() || ta.is_uint()) && (tb.is_int() || tb.is_uint());
  if (ta != tb && !both_integer)
    throw_error(args.arg_name(b), " has dtype ", tb.to_string(), " but ", args.arg_name(a), " has ",
                ta.to_string());
  return out_dtype.value_or(ta);
}

}  // namespace anvil::ir::nn
