// Computes of the ops whose index maps follow a layout or a small language in an attribute:
// layout_transform ("NCHW" <-> "NCHW16c", "OIHW" -> "OIHW16i16o") and einsum.
#include <algorithm>
#include <cctype>
#include <map>

#include "anvil/ir/attrs/transform.h"
#include "topi/transform_util.h"

namespace anvil::topi::transform {
namespace {

// An output element of the dst layout reads the element at the same primal coordinates in
// the src layout: split each dst index into primal coordinates, then regroup them by src.
std::vector<te::Tensor> layout_transform(const ComputeArgs& args) {
  const auto& attrs = args.attrs_as<ir::LayoutTransformAttrs>();
  Layout src(attrs.src_layout), dst(attrs.dst_layout);
  return {gather_compute(
      args.inputs[0], args.out_shape(),
      [src, dst](const std::vector<PrimExpr>& out) { return src.from_primal(dst.to_primal(out)); },
      tensor_name(args))};
}

// ---------------------------------------------------------------- einsum

// Labels are numbered: a letter by its character code, the dims an ellipsis stands for by
// kEllipsisBase + their position among the broadcast dims (as the reference kernel does).
constexpr int kEllipsisBase = 256;

std::vector<int> parse_term(const std::string& text) {
  std::vector<int> labels;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "...") == 0) {
      labels.push_back(-1);
      i += 2;
    } else {
      labels.push_back(static_cast<unsigned char>(text[i]));
    }
  }
  return labels;
}

size_t named_count(const std::vector<int>& term) {
  return size_t(std::count_if(term.begin(), term.end(), [](int l) { return l >= 0; }));
}

// The label of each dim of an operand of `rank` dims, the ellipsis expanded into the last
// of `ellipsis_rank` broadcast dims.
std::vector<int> expand_labels(const std::vector<int>& term, size_t rank, size_t ellipsis_rank) {
  std::vector<int> labels;
  size_t own = rank - named_count(term);
  for (int l : term) {
    if (l >= 0) {
      labels.push_back(l);
      continue;
    }
    for (size_t j = 0; j < own; ++j) labels.push_back(kEllipsisBase + int(ellipsis_rank - own + j));
  }
  ANVIL_ICHECK(labels.size() == rank, "einsum term does not fit rank ", rank);
  return labels;
}

std::vector<te::Tensor> einsum(const ComputeArgs& args) {
  std::string equation;
  for (char c : args.attrs_as<ir::EinsumAttrs>().equation)
    if (!std::isspace(static_cast<unsigned char>(c))) equation += c;
  size_t arrow = equation.find("->");
  std::string lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_term(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<te::Tensor> operands(args.inputs.begin(), args.inputs.end());
  ANVIL_ICHECK(terms.size() == operands.size(), "einsum terms vs operands");

  size_t ellipsis_rank = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    bool has_ellipsis = std::find(terms[k].begin(), terms[k].end(), -1) != terms[k].end();
    if (has_ellipsis)
      ellipsis_rank = std::max(ellipsis_rank, size_t(operands[k].ndim()) - named_count(terms[k]));
  }
  std::vector<std::vector<int>> labels;
  std::vector<std::vector<int64_t>> shapes;
  std::map<int, int64_t> size;
  std::map<int, int> uses;
  for (size_t k = 0; k < terms.size(); ++k) {
    shapes.push_back(static_shape(operands[k]));
    labels.push_back(expand_labels(terms[k], shapes[k].size(), ellipsis_rank));
    for (size_t d = 0; d < labels[k].size(); ++d) {
      int l = labels[k][d];
      ++uses[l];
      auto [it, inserted] = size.emplace(l, shapes[k][d]);
      if (!inserted && it->second == 1) it->second = shapes[k][d];  // a 1 broadcasts
    }
  }
  std::vector<int> out_labels;
  if (arrow == std::string::npos) {
    for (size_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(kEllipsisBase + int(j));
    for (const auto& [l, count] : uses)
      if (l < kEllipsisBase && count == 1) out_labels.push_back(l);
  } else {
    for (int l : parse_term(equation.substr(arrow + 2))) {
      if (l >= 0) {
        out_labels.push_back(l);
        continue;
      }
      for (size_t j = 0; j < ellipsis_rank; ++j) out_labels.push_back(kEllipsisBase + int(j));
    }
  }
  std::vector<tir::IterVar> reduce_axes;
  std::map<int, PrimExpr> summed;  // label -> its reduction variable
  for (const auto& [l, extent] : size) {
    if (std::find(out_labels.begin(), out_labels.end(), l) != out_labels.end()) continue;
    std::string name = l < kEllipsisBase ? std::string(1, char(l)) + "_sum"
                                         : "e" + std::to_string(l - kEllipsisBase) + "_sum";
    reduce_axes.push_back(te::reduce_axis(tir::make_int(extent), name));
    summed[l] = reduce_axes.back().var;
  }
  return {map_output(args, 0, [=](const std::vector<PrimExpr>& out) {
    std::map<int, PrimExpr> value = summed;
    for (size_t i = 0; i < out_labels.size(); ++i) value[out_labels[i]] = out[i];
    PrimExpr product;
    for (size_t k = 0; k < operands.size(); ++k) {
      std::vector<PrimExpr> index;
      for (size_t d = 0; d < labels[k].size(); ++d)
        index.push_back(shapes[k][d] == 1 ? tir::make_int(0) : value.at(labels[k][d]));
      PrimExpr element = operands[k].at(index);
      product = product ? product * element : element;
    }
    return reduce_axes.empty() ? product : tir::sum(product, reduce_axes);
  })};
}

}  // namespace

void register_transform_layout_computes() {
  register_compute("layout_transform", layout_transform);
  register_compute("einsum", einsum);
}

}  // namespace anvil::topi::transform
