// Reference kernels of layout_transform and einsum, the transform ops whose
// shapes follow a small language in an attribute.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "anvil/ir/attrs/transform.h"
#include "reference/transform_kernel_util.h"

namespace anvil::reference {
namespace {

using namespace ir;

// ---------------------------------------------------------------- layout_transform

// One axis of a layout such as "NCHW16c": a primal (upper-case) axis, or a
// block of `factor` elements of the primal axis of the same letter.
struct LayoutAxis {
  char primal;     // upper-case letter of the axis this one belongs to
  int64_t factor;  // 0 for a primal axis
};

// The type relation has validated the layout strings already.
std::vector<LayoutAxis> parse_layout(const std::string& layout) {
  std::vector<LayoutAxis> axes;
  int64_t factor = 0;
  for (char c : layout) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      factor = factor * 10 + (c - '0');
    } else {
      axes.push_back({char(std::toupper(static_cast<unsigned char>(c))), factor});
      factor = 0;
    }
  }
  return axes;
}

// The block size of `primal` in a layout, or 1 when it is not blocked.
int64_t block_of(const std::vector<LayoutAxis>& axes, char primal) {
  for (const LayoutAxis& a : axes)
    if (a.primal == primal && a.factor > 0) return a.factor;
  return 1;
}

std::vector<Tensor> layout_transform_kernel(const KernelArgs& args) {
  const auto& attrs = args.attrs_as<LayoutTransformAttrs>();
  const Tensor& data = args.inputs[0];
  std::vector<LayoutAxis> src = parse_layout(attrs.src_layout);
  std::vector<LayoutAxis> dst = parse_layout(attrs.dst_layout);
  std::vector<int64_t> in = data.shape_vector();
  if (src.size() != in.size())
    throw_error("layout \"", attrs.src_layout, "\" does not fit shape ", shape_to_string(in));
  // The full extent of each primal axis.
  std::map<char, int64_t> extent;
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i].factor == 0) extent[src[i].primal] = in[i] * block_of(src, src[i].primal);
  std::vector<int64_t> out_shape;
  for (const LayoutAxis& a : dst)
    out_shape.push_back(a.factor > 0 ? a.factor : extent.at(a.primal) / block_of(dst, a.primal));
  return {remap(data, out_shape, [&](const std::vector<int64_t>& out) {
    std::map<char, int64_t> full;  // the coordinate along each primal axis
    for (size_t i = 0; i < dst.size(); ++i) {
      const LayoutAxis& a = dst[i];
      full[a.primal] += a.factor > 0 ? out[i] : out[i] * block_of(dst, a.primal);
    }
    std::vector<int64_t> from(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
      const LayoutAxis& a = src[i];
      int64_t coord = full[a.primal];
      from[i] = a.factor > 0 ? coord % a.factor : coord / block_of(src, a.primal);
    }
    return from;
  })};
}

// ---------------------------------------------------------------- einsum

// Labels are numbered: a letter by its character code, the dims an ellipsis
// stands for by kEllipsisBase + their position among the broadcast dims.
constexpr int kEllipsisBase = 256;

struct EinsumTerm {
  std::vector<int> labels;  // letters, with -1 where "..." stands
};

EinsumTerm parse_term(const std::string& text) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      term.labels.push_back(-1);
      i += 2;
    } else {
      term.labels.push_back(static_cast<unsigned char>(text[i]));
    }
  }
  return term;
}

// The labels of each dim of an operand of `rank` dims, with the ellipsis
// expanded into the last of `ellipsis_rank` broadcast dims.
std::vector<int> expand_labels(const EinsumTerm& term, size_t rank, size_t ellipsis_rank) {
  std::vector<int> labels;
  size_t named = 0;
  for (int l : term.labels) named += l >= 0 ? 1 : 0;
  if (named > rank) throw_error("einsum term has ", named, " labels for an operand of rank ", rank);
  size_t own = rank - named;  // dims this operand's ellipsis covers
  for (int l : term.labels) {
    if (l >= 0) {
      labels.push_back(l);
      continue;
    }
    for (size_t j = 0; j < own; ++j) labels.push_back(kEllipsisBase + int(ellipsis_rank - own + j));
  }
  if (labels.size() != rank)
    throw_error("einsum term has ", labels.size(), " labels for an operand of rank ", rank);
  return labels;
}

std::vector<Tensor> einsum_kernel(const KernelArgs& args) {
  std::string equation;
  for (char c : args.attrs_as<EinsumAttrs>().equation)
    if (!std::isspace(static_cast<unsigned char>(c))) equation += c;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::span<const Tensor> operands = args.inputs;
  if (terms.size() != operands.size())
    throw_error("einsum equation has ", terms.size(), " terms for ", operands.size(), " operands");

  size_t ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t named = 0;
    bool has_ellipsis = false;
    for (int l : terms[k].labels) {
      if (l >= 0)
        ++named;
      else
        has_ellipsis = true;
    }
    if (has_ellipsis && size_t(operands[k].ndim()) >= named)
      ellipsis_rank = std::max(ellipsis_rank, size_t(operands[k].ndim()) - named);
  }
  std::vector<std::vector<int>> labels;
  std::map<int, int64_t> size;
  std::map<int, int> uses;
  for (size_t k = 0; k < terms.size(); ++k) {
    labels.push_back(expand_labels(terms[k], size_t(operands[k].ndim()), ellipsis_rank));
    for (size_t d = 0; d < labels[k].size(); ++d) {
      int l = labels[k][d];
      int64_t dim = operands[k].shape()[d];
      ++uses[l];
      auto [it, inserted] = size.emplace(l, dim);
      if (inserted || it->second == dim || dim == 1) continue;
      if (it->second != 1)
        throw_error("einsum label '", char(l), "' has sizes ", it->second, " and ", dim);
      it->second = dim;
    }
  }

  std::vector<int> out_labels;
  if (arrow == std::string::npos) {
    for (size_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(kEllipsisBase + int(j));
    for (const auto& [l, count] : uses)
      if (l < kEllipsisBase && count == 1) out_labels.push_back(l);
  } else {
    EinsumTerm out_term = parse_term(equation.substr(arrow + 2));
    for (int l : out_term.labels) {
      if (l >= 0) {
        if (!size.count(l)) throw_error("einsum output label '", char(l), "' is on no operand");
        out_labels.push_back(l);
        continue;
      }
      for (size_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(kEllipsisBase + int(j));
    }
  }
  std::vector<int> summed;
  for (const auto& [l, s] : size)
    if (std::find(out_labels.begin(), out_labels.end(), l) == out_labels.end()) summed.push_back(l);

  std::vector<int64_t> out_shape, sum_shape;
  for (int l : out_labels) out_shape.push_back(size.at(l));
  for (int l : summed) sum_shape.push_back(size.at(l));
  DataType dtype = args.out_dtype();
  bool exact = is_integer_like(dtype);
  std::vector<std::vector<double>> real;
  std::vector<std::vector<int64_t>> ints;
  for (const Tensor& t : operands) {
    if (exact)
      ints.push_back(to_int64s(t));
    else
      real.push_back(to_doubles(t));
  }
  int64_t out_count = shape_numel(out_shape), sum_count = shape_numel(sum_shape);
  std::vector<double> out_real(exact ? 0 : size_t(out_count));
  std::vector<int64_t> out_ints(exact ? size_t(out_count) : 0);
  std::map<int, int64_t> value;  // the current coordinate of each label
  for (int64_t o = 0; o < out_count; ++o) {
    std::vector<int64_t> out_index = unravel(o, out_shape);
    for (size_t i = 0; i < out_labels.size(); ++i) value[out_labels[i]] = out_index[i];
    double acc = 0;
    int64_t acc_int = 0;
    for (int64_t s = 0; s < sum_count; ++s) {
      std::vector<int64_t> sum_index = unravel(s, sum_shape);
      for (size_t i = 0; i < summed.size(); ++i) value[summed[i]] = sum_index[i];
      double product = 1;
      int64_t product_int = 1;
      for (size_t k = 0; k < operands.size(); ++k) {
        std::span<const int64_t> shape = operands[k].shape();
        int64_t flat = 0;
        for (size_t d = 0; d < shape.size(); ++d)
          flat = flat * shape[d] + (shape[d] == 1 ? 0 : value[labels[k][d]]);
        if (exact)
          product_int *= ints[k][size_t(flat)];
        else
          product *= real[k][size_t(flat)];
      }
      acc += product;
      acc_int += product_int;
    }
    if (exact)
      out_ints[size_t(o)] = acc_int;
    else
      out_real[size_t(o)] = acc;
  }
  return {exact ? from_int64s(out_ints, out_shape, dtype)
                : from_doubles(out_real, out_shape, dtype)};
}

}  // namespace

void register_transform_layout_kernels() {
  register_kernel("layout_transform", layout_transform_kernel);
  register_kernel("einsum", einsum_kernel);
}

}  // namespace anvil::reference
