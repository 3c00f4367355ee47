// Functions of the tensor IR text: decorator, signature, attributes,
// declared size variables, T.match_buffer lines and the implicit root block;
// plus the public print() entry points.
#include "anvil/tir/printer.h"

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "tir/text_lexer.h"
#include "tir/text_printer.h"

namespace anvil::tir {

namespace text {

namespace {

std::string attr_scalar_text(const ir::AttrValue& value);

template <typename T>
std::string attr_list_text(const std::vector<T>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i)
    s += (i ? ", " : "") + attr_scalar_text(ir::AttrValue(items[i]));
  return s + "]";
}

std::string attr_scalar_text(const ir::AttrValue& value) {
  if (std::holds_alternative<std::monostate>(value)) return "None";
  if (const auto* v = std::get_if<int64_t>(&value)) return std::to_string(*v);
  if (const auto* v = std::get_if<double>(&value)) {
    std::string s = format_double(*v);
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  if (const auto* v = std::get_if<bool>(&value)) return *v ? "True" : "False";
  if (const auto* v = std::get_if<std::string>(&value)) return quote_string(*v);
  if (const auto* v = std::get_if<DataType>(&value))
    return "T.dtype(" + quote_string(v->to_string()) + ")";
  if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) return attr_list_text(*v);
  if (const auto* v = std::get_if<std::vector<double>>(&value)) return attr_list_text(*v);
  return attr_list_text(std::get<std::vector<std::string>>(value));
}

bool contains_block(const Stmt& s) {
  bool found = false;
  pre_order_visit(s, nullptr, [&](const Stmt& x) {
    if (x->kind == StmtKind::Block || x->kind == StmtKind::BlockRealize) found = true;
  });
  return found;
}

// The root block the text leaves implicit: no axes, regions, init or
// annotations, and a body the parser would wrap again.
const BlockNode* implicit_root(const Stmt& body) {
  const auto* realize = as<BlockRealizeNode>(body);
  if (!realize || !realize->iter_values.empty() ||
      !(is_one(realize->predicate) && realize->predicate.dtype() == DataType::boolean()))
    return nullptr;
  const BlockNode* root = realize->block.get();
  if (root->name != "root" || !root->iter_vars.empty() || !root->reads.empty() ||
      !root->writes.empty() || root->init || !root->annotations.empty())
    return nullptr;
  bool parser_wraps = !root->alloc_buffers.empty() ||
                      (contains_block(root->body) && !as<BlockRealizeNode>(root->body));
  return parser_wraps ? root : nullptr;
}

}  // namespace

std::string TirPrinter::function(const PrimFunc& func, const std::string& name) {
  ANVIL_ICHECK(func && func->body, "printing a null PrimFunc");
  const ir::AttrValue* symbol = func->func_attrs.find("global_symbol");
  bool is_private = !symbol || !std::holds_alternative<std::string>(*symbol);
  std::string def_name = name;
  if (def_name.empty()) def_name = is_private ? "main" : std::get<std::string>(*symbol);
  used_names_.insert(sanitize_name(def_name));

  std::string params;
  for (const Var& p : func->params) {
    if (!params.empty()) params += ", ";
    params += define_var(p.get()) + ": " + dtype_ref(p->dtype);
  }

  // Size variables the buffer_map introduces, declared before the buffers.
  std::vector<const VarNode*> size_vars;
  auto collect = [&](const PrimExpr& e) {
    if (!e) return;
    pre_order_visit(e, [&](const PrimExpr& x) {
      const auto* v = as<VarNode>(x);
      if (v && !var_names_.count(v)) {
        define_var(v);
        size_vars.push_back(v);
      }
    });
  };
  for (const auto& [param, buffer] : func->buffer_map) {
    for (const PrimExpr& d : buffer->shape) collect(d);
    for (const PrimExpr& s : buffer->strides) collect(s);
    collect(buffer->elem_offset);
  }
  std::string buffers;
  for (const auto& [param, buffer] : func->buffer_map) {
    bool owns_data = !var_names_.count(buffer->data.get());
    std::string args = var_name(param.get()) + ", " + buffer_args(buffer.get(), !owns_data);
    buffers += "    " + define_buffer(buffer.get()) + " = T.match_buffer(" + args + ")\n";
  }

  Stmt body = func->body;
  const BlockNode* root = implicit_root(body);
  if (root) {
    for (const Buffer& b : root->alloc_buffers) {
      bool owns_data = !var_names_.count(b->data.get());
      std::string args = buffer_args(b.get(), !owns_data);
      buffers += "    " + define_buffer(b.get()) + " = T.alloc_buffer(" + args + ")\n";
    }
    body = root->body;
  }
  stmt(body, 1);
  std::string body_text = std::move(out_);

  std::vector<const VarNode*> declared = size_vars;
  for (const VarNode* v : free_vars_)
    if (!defined_vars_.count(v)) declared.push_back(v);

  std::vector<std::string> options;
  if (is_private) options.push_back("private=True");
  if (!root && !as<BlockRealizeNode>(func->body) && contains_block(func->body))
    options.push_back("implicit_root=False");
  std::string text = "@T.prim_func";
  for (size_t i = 0; i < options.size(); ++i) text += (i ? ", " : "(") + options[i];
  if (!options.empty()) text += ")";
  text += "\ndef " + sanitize_name(def_name) + "(" + params + "):\n";
  if (!func->func_attrs.empty()) {
    std::string attrs;
    for (const auto& [key, value] : func->func_attrs.entries)
      attrs += (attrs.empty() ? "" : ", ") + quote_string(key) + ": " + attr_scalar_text(value);
    text += "    T.func_attr({" + attrs + "})\n";
  }
  if (!declared.empty()) {
    std::string names, types;
    for (size_t i = 0; i < declared.size(); ++i) {
      names += (i ? ", " : "") + var_names_[declared[i]];
      types += (i ? ", " : "") + dtype_ref(declared[i]->dtype) + "()";
    }
    text += "    " + names + " = " + types + "\n";
  }
  return text + buffers + body_text;
}

}  // namespace text

std::string print(const PrimFunc& func, const std::string& name) {
  return text::TirPrinter(true).function(func, name);
}

std::string print(const Stmt& stmt, int indent) {
  text::TirPrinter printer(false);
  printer.stmt(stmt, indent);
  return printer.output();
}

std::string print(const PrimExpr& expr) { return text::TirPrinter(false).expr(expr); }

}  // namespace anvil::tir
