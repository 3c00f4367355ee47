// BindParams: parameters of @main become constants holding the given tensors, so that the
// later passes can fold them (TVM's bind_params_by_name).
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

// Replaces each bound variable by its constant wherever it is used.
class ParamBinder : public detail::TypedMutator {
 public:
  explicit ParamBinder(std::unordered_map<const ir::VarNode*, ir::Expr> bound)
      : bound_(std::move(bound)) {}

  ir::Expr mutate_Var(const ir::VarNode* node, const ir::Expr& self) override {
    auto it = bound_.find(node);
    return it == bound_.end() ? self : it->second;
  }

 private:
  std::unordered_map<const ir::VarNode*, ir::Expr> bound_;
};

// The parameter's annotation must describe the tensor exactly: same dtype, same static shape.
void check_matches(const ir::Var& param, const Tensor& tensor) {
  ir::Type tensor_type =
      ir::TensorTypeNode::make(ir::to_dims(tensor.shape_vector()), tensor.dtype());
  if (!param->annotation || ir::types_equal(param->annotation, tensor_type)) return;
  throw_error("bind_params: parameter '", param->name, "' has type ",
              ir::type_to_string(param->annotation), " but the bound tensor is ",
              ir::type_to_string(tensor_type));
}

}  // namespace

ir::IRModule bind_params(const ir::IRModule& mod,
                         const std::vector<std::pair<std::string, Tensor>>& params) {
  ir::Function main = mod.get_function("main");
  std::unordered_map<std::string, const ir::VarNode*> by_name;
  for (const ir::Var& p : main->params) {
    if (!by_name.emplace(p->name, p.get()).second)
      throw_error("bind_params: @main has more than one parameter named '", p->name, "'");
  }

  std::unordered_map<const ir::VarNode*, ir::Expr> bound;
  for (const auto& [name, tensor] : params) {
    auto it = by_name.find(name);
    // Names that @main does not have are ignored, as TVM does: a params file may hold more.
    if (it == by_name.end()) continue;
    if (!tensor.defined())
      throw_error("bind_params: the tensor for parameter '", name, "' is empty");
    check_matches(ir::Var(it->second), tensor);
    bound[it->second] = ir::ConstantNode::make(tensor);
  }
  if (bound.empty()) return ir::infer_type(mod);

  std::vector<ir::Var> kept;
  for (const ir::Var& p : main->params)
    if (!bound.count(p.get())) kept.push_back(p);
  ParamBinder binder(std::move(bound));
  ir::Expr body = binder.mutate(main->body);

  ir::IRModule result;
  for (const auto& [name, func] : mod.functions()) {
    if (name != "main") {
      result.add(name, func);
      continue;
    }
    result.add(name, ir::FunctionNode::make(kept, body, main->ret_type, main->func_attrs));
  }
  return ir::infer_type(result);
}

}  // namespace anvil::transform
