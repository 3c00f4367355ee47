// Parallel loops: the body is outlined into `<fn>_par<k>(task_id, num_tasks, closure)`, a
// function of the runtime's AnvilParallelLambda type that runs one contiguous chunk of the
// iterations, and the loop itself becomes one AnvilParallelLaunch call. The closure struct
// carries every variable the body uses but does not define.
#include <set>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen::llvm_backend {

using namespace tir;  // NOLINT

namespace {

// Variables used in s (including buffer data pointers) that s does not bind itself, in order
// of first use.
class FreeVarCollector : public Visitor {
 public:
  std::vector<const VarNode*> free;

  void visit_Var(const VarNode* node) override { use(node); }
  void visit_BufferLoad(const BufferLoadNode* node) override {
    use(node->buffer->data.get());
    Visitor::visit_BufferLoad(node);
  }
  void visit_BufferStore(const BufferStoreNode* node) override {
    use(node->buffer->data.get());
    Visitor::visit_BufferStore(node);
  }
  void visit_Let(const LetNode* node) override {
    bound_.insert(node->var.get());
    Visitor::visit_Let(node);
  }
  void visit_LetStmt(const LetStmtNode* node) override {
    bound_.insert(node->var.get());
    Visitor::visit_LetStmt(node);
  }
  void visit_For(const ForNode* node) override {
    bound_.insert(node->loop_var.get());
    Visitor::visit_For(node);
  }
  void visit_Allocate(const AllocateNode* node) override {
    bound_.insert(node->buffer->data.get());
    for (const PrimExpr& extent : node->buffer->shape) visit(extent);
    Visitor::visit_Allocate(node);
  }
  void bind(const VarNode* var) { bound_.insert(var); }

 private:
  void use(const VarNode* var) {
    // Names are bound before their uses in the lowered form, so one pass suffices.
    if (bound_.count(var) || !seen_.insert(var).second) return;
    free.push_back(var);
  }
  std::set<const VarNode*> bound_, seen_;
};

}  // namespace

void CodeGenLLVM::emit_parallel_for(const ForNode* node) {
  FreeVarCollector collector;
  collector.bind(node->loop_var.get());
  collector.visit(node->body);
  llvm::Value* begin = emit(node->min);
  llvm::Value* extent = emit(node->extent);
  llvm::Type* index_type = begin->getType();

  // The closure: the loop bounds, then the free variables' current values.
  std::vector<llvm::Value*> captured = {begin, extent};
  for (const VarNode* var : collector.free) captured.push_back(var_value(var));
  std::vector<llvm::Type*> field_types;
  for (llvm::Value* value : captured) field_types.push_back(value->getType());
  auto* closure_type = llvm::StructType::get(context_, field_types);
  llvm::Function* caller = fn_.function;
  llvm::AllocaInst* closure;
  {
    llvm::BasicBlock& entry = caller->getEntryBlock();
    llvm::IRBuilder<> entry_builder(&entry, entry.getFirstInsertionPt());
    closure = entry_builder.CreateAlloca(closure_type, nullptr, "closure");
  }
  for (size_t i = 0; i < captured.size(); ++i)
    builder_.CreateStore(captured[i], builder_.CreateStructGEP(closure_type, closure, unsigned(i)));

  // The task function.
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* lambda_type = llvm::FunctionType::get(i32, {i32, i32, builder_.getPtrTy()}, false);
  std::string name = current_symbol_ + "_par" + std::to_string(parallel_count_++);
  auto* lambda =
      llvm::Function::Create(lambda_type, llvm::GlobalValue::InternalLinkage, name, module_);
  set_function_attributes(lambda);
  lambda->getArg(2)->addAttr(llvm::Attribute::NoAlias);

  FunctionState saved = std::move(fn_);
  llvm::IRBuilderBase::InsertPoint saved_point = builder_.saveIP();
  fn_ = FunctionState();
  fn_.function = lambda;
  fn_.in_parallel = true;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", lambda));
  llvm::Value* task_id = builder_.CreateIntCast(lambda->getArg(0), index_type, true);
  llvm::Value* num_tasks = builder_.CreateIntCast(lambda->getArg(1), index_type, true);
  std::vector<llvm::Value*> fields;
  for (size_t i = 0; i < captured.size(); ++i) {
    llvm::Value* address = builder_.CreateStructGEP(closure_type, lambda->getArg(2), unsigned(i));
    fields.push_back(builder_.CreateLoad(field_types[i], address));
  }
  for (size_t i = 0; i < collector.free.size(); ++i) {
    fields[i + 2]->setName(collector.free[i]->name);
    fn_.vars[collector.free[i]] = fields[i + 2];
  }
  // Task t runs [min + t * chunk, min + min((t + 1) * chunk, extent)) with
  // chunk = ceil(extent / num_tasks).
  llvm::Value* loop_min = fields[0];
  llvm::Value* loop_extent = fields[1];
  llvm::Value* one = llvm::ConstantInt::get(index_type, 1);
  llvm::Value* chunk = builder_.CreateSDiv(
      builder_.CreateSub(builder_.CreateAdd(loop_extent, num_tasks), one), num_tasks);
  llvm::Value* chunk_begin = builder_.CreateMul(task_id, chunk);
  llvm::Value* chunk_end = builder_.CreateMul(builder_.CreateAdd(task_id, one), chunk);
  chunk_end =
      builder_.CreateSelect(builder_.CreateICmpSLT(chunk_end, loop_extent), chunk_end, loop_extent);
  enter_amx_region(node->body, /*entry_point=*/false);
  emit_loop(node->loop_var, builder_.CreateAdd(loop_min, chunk_begin),
            builder_.CreateAdd(loop_min, chunk_end), node->body, {});
  leave_amx_region();
  builder_.CreateRet(builder_.getInt32(0));

  fn_ = std::move(saved);
  builder_.restoreIP(saved_point);

  // The launch; a failed task's message is already the caller's last error.
  llvm::Value* status = builder_.CreateCall(runtime_function("AnvilParallelLaunch"),
                                            {lambda, closure, builder_.getInt32(0)});
  emit_error_return_if(builder_.CreateICmpNE(status, builder_.getInt32(0)), "parallel");
}

}  // namespace anvil::codegen::llvm_backend
