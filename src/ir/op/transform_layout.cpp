// The transform family's ops whose shapes follow a small language in an
// attribute: layout_transform (layout strings such as "NCHW16c") and einsum
// (equations such as "bij,bjk->bik").
#include <algorithm>
#include <cctype>
#include <map>

#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

// ---------------------------------------------------------------- layouts

// One axis of a layout: an upper-case letter is a whole (primal) axis, a
// lower-case one a block of `factor` elements of the primal axis of that letter.
struct LayoutAxis {
  char name;
  int64_t factor;  // 0 for a primal axis
};

std::vector<LayoutAxis> parse_layout(const std::string& layout, const char* attr_name) {
  auto fail = [&](const auto&... why) {
    throw_error("attribute '", attr_name, "' = \"", layout, "\" is not a layout: ", why...);
  };
  if (layout.empty()) fail("it is empty");
  std::vector<LayoutAxis> axes;
  int64_t factor = 0;
  bool in_number = false;
  for (char c : layout) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      factor = factor * 10 + (c - '0');
      if (factor > (int64_t(1) << 40)) fail("block size too large");
      in_number = true;
    } else if (std::isupper(static_cast<unsigned char>(c))) {
      if (in_number) fail("a block size must be followed by a lower-case axis");
      axes.push_back({c, 0});
    } else if (std::islower(static_cast<unsigned char>(c))) {
      if (!in_number || factor <= 0)
        fail("blocked axis '", c, "' needs a positive block size before it, like 16", c);
      axes.push_back({c, factor});
      factor = 0;
      in_number = false;
    } else {
      fail("unexpected character '", c, "'");
    }
  }
  if (in_number) fail("it ends in a block size");
  for (size_t i = 0; i < axes.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (axes[i].name == axes[j].name) fail("axis '", axes[i].name, "' appears twice");
    if (axes[i].factor > 0) {
      char primal = char(std::toupper(static_cast<unsigned char>(axes[i].name)));
      bool has_primal = std::any_of(axes.begin(), axes.end(),
                                    [&](const LayoutAxis& a) { return a.name == primal; });
      if (!has_primal) fail("blocked axis '", axes[i].name, "' has no axis '", primal, "'");
    }
  }
  return axes;
}

// The block size of the lower-case axis of `primal`, or 0 when unblocked.
int64_t block_factor(const std::vector<LayoutAxis>& axes, char primal) {
  char sub = char(std::tolower(static_cast<unsigned char>(primal)));
  for (const LayoutAxis& a : axes)
    if (a.name == sub) return a.factor;
  return 0;
}

Type layout_transform_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<LayoutTransformAttrs>();
  const TensorTypeNode& data = args.tensor(0);
  const std::vector<Dim>& in = *data.shape;
  std::vector<LayoutAxis> src = parse_layout(attrs.src_layout, "src_layout");
  std::vector<LayoutAxis> dst = parse_layout(attrs.dst_layout, "dst_layout");
  if (src.size() != in.size())
    throw_error("attribute 'src_layout' = \"", attrs.src_layout, "\" has ", src.size(),
                " axes but the input ", describe(data), " has rank ", in.size());

  // Full extent of each primal axis, blocks folded back in.
  std::map<char, Dim> extent;
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i].factor > 0) {
      if (provably_different(in[i], src[i].factor))
        throw_error("axis '", src[i].name, "' of attribute 'src_layout' = \"", attrs.src_layout,
                    "\" is a block of ", src[i].factor, " but the input ", describe(data), " has ",
                    in[i].to_string(), " there");
      continue;
    }
    extent.emplace(src[i].name, in[i]);
  }
  for (size_t i = 0; i < src.size(); ++i)
    if (src[i].factor == 0)
      if (int64_t f = block_factor(src, src[i].name); f > 0) extent.at(src[i].name) = in[i] * f;

  auto primal_names = [](const std::vector<LayoutAxis>& axes) {
    std::string names;
    for (const LayoutAxis& a : axes)
      if (a.factor == 0) names += a.name;
    std::sort(names.begin(), names.end());
    return names;
  };
  if (primal_names(src) != primal_names(dst))
    throw_error("attributes 'src_layout' = \"", attrs.src_layout, "\" and 'dst_layout' = \"",
                attrs.dst_layout, "\" must have the same axes");

  std::vector<Dim> out;
  for (const LayoutAxis& a : dst) {
    if (a.factor > 0) {
      out.push_back(a.factor);
      continue;
    }
    const Dim& whole = extent.at(a.name);
    int64_t f = block_factor(dst, a.name);
    if (f == 0) {
      out.push_back(whole);
      continue;
    }
    if (auto rem = floormod(whole, f).as_int(); rem && *rem != 0)
      throw_error("axis '", a.name, "' of ", describe(data), " has size ", whole.to_string(),
                  ", which blocks of ", f, " in attribute 'dst_layout' = \"", attrs.dst_layout,
                  "\" do not divide");
    out.push_back(floordiv(whole, f));
  }
  return TensorTypeNode::make(std::move(out), data.dtype);
}

// ---------------------------------------------------------------- einsum

// The labels of one operand; kEllipsis stands for "...".
constexpr char kEllipsis = '.';

std::vector<char> parse_einsum_term(const std::string& term, const std::string& equation) {
  std::vector<char> labels;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(c);
    } else if (term.compare(i, 3, "...") == 0 &&
               std::find(labels.begin(), labels.end(), kEllipsis) == labels.end()) {
      labels.push_back(kEllipsis);
      i += 2;
    } else {
      throw_error("attribute 'equation' = \"", equation, "\" has an unexpected '", c, "' in \"",
                  term, "\"");
    }
  }
  return labels;
}

Type einsum_relation(const RelationArgs& args) {
  const std::string& equation = args.attrs_as<EinsumAttrs>().equation;
  std::vector<const TensorTypeNode*> operands = tuple_of_tensors(args, 0);
  std::string text;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  size_t arrow = text.find("->");
  if (arrow != std::string::npos && text.find("->", arrow + 2) != std::string::npos)
    throw_error("attribute 'equation' = \"", equation, "\" has more than one \"->\"");
  std::string lhs = text.substr(0, arrow);

  std::vector<std::vector<char>> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(parse_einsum_term(lhs.substr(start, comma - start), equation));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size())
    throw_error("attribute 'equation' = \"", equation, "\" has ", terms.size(), " operands but ",
                args.arg_name(0), " holds ", operands.size(), " tensors");

  std::map<char, Dim> sizes;
  std::map<char, int> uses;
  std::vector<Dim> ellipsis_dims;
  for (size_t k = 0; k < terms.size(); ++k) {
    const TensorTypeNode& t = *operands[k];
    if (t.dtype != operands[0]->dtype)
      throw_error(args.arg_name(0), " field ", k, " has dtype ", t.dtype.to_string(),
                  " but field 0 has ", operands[0]->dtype.to_string());
    const std::vector<Dim>& shape = *t.shape;
    bool has_ellipsis = std::find(terms[k].begin(), terms[k].end(), kEllipsis) != terms[k].end();
    size_t named = terms[k].size() - (has_ellipsis ? 1 : 0);
    if (has_ellipsis ? named > shape.size() : named != shape.size())
      throw_error("attribute 'equation' = \"", equation, "\" gives operand ", k, " ", named,
                  " labels but field ", k, " is ", describe(t));
    size_t ellipsis_rank = shape.size() - named;
    size_t d = 0;
    for (char label : terms[k]) {
      if (label == kEllipsis) {
        std::vector<Dim> dims(shape.begin() + d, shape.begin() + d + ellipsis_rank);
        ellipsis_dims = broadcast_shapes(ellipsis_dims, dims);
        d += ellipsis_rank;
        continue;
      }
      const Dim& dim = shape[d++];
      ++uses[label];
      auto [it, inserted] = sizes.emplace(label, dim);
      if (inserted || it->second == dim) continue;
      // A label of size 1 broadcasts against the same label elsewhere, as in numpy.
      if (it->second.as_int() == 1) {
        it->second = dim;
      } else if (dim.as_int() != 1) {
        if (provably_different(it->second, dim))
          throw_error("attribute 'equation' = \"", equation, "\": label '", label, "' has size ",
                      it->second.to_string(), " in one place and ", dim.to_string(), " in field ",
                      k, " ", describe(t));
        it->second = more_known(it->second, dim);
      }
    }
  }

  std::vector<Dim> out;
  if (arrow == std::string::npos) {
    // Implicit output: the broadcast dims, then labels used once, in ASCII order.
    out = ellipsis_dims;
    for (const auto& [label, count] : uses)
      if (count == 1) out.push_back(sizes.at(label));
  } else {
    std::vector<char> labels = parse_einsum_term(text.substr(arrow + 2), equation);
    for (size_t i = 0; i < labels.size(); ++i) {
      char label = labels[i];
      if (std::find(labels.begin(), labels.begin() + i, label) != labels.begin() + i)
        throw_error("attribute 'equation' = \"", equation, "\" names output label '", label,
                    "' twice");
      if (label == kEllipsis) {
        out.insert(out.end(), ellipsis_dims.begin(), ellipsis_dims.end());
      } else if (auto it = sizes.find(label); it != sizes.end()) {
        out.push_back(it->second);
      } else {
        throw_error("attribute 'equation' = \"", equation, "\" has output label '", label,
                    "' that no operand has");
      }
    }
  }
  return TensorTypeNode::make(std::move(out), operands[0]->dtype);
}

}  // namespace

void register_transform_layout_ops(OpTable& table) {
  table.add("layout_transform")
      .describe("Rearranges data between layouts such as NCHW and NCHW16c.")
      .inputs({"data"})
      .attrs<LayoutTransformAttrs>()
      .type_relation(layout_transform_relation)
      .fusion_pattern(OpPattern::Injective);
  table.add("einsum")
      .describe("Einstein summation over a tuple of tensors.")
      .inputs({"data"})
      .attrs<EinsumAttrs>()
      .type_relation(einsum_relation)
      .fusion_pattern(OpPattern::Injective);
}

}  // namespace anvil::ir
