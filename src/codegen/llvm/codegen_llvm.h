// Internals of the LLVM back end, shared by the files of src/codegen/llvm. Nothing outside this
// folder includes it: the public interface (anvil/codegen/llvm.h) names no LLVM type.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "anvil/codegen/target.h"
#include "anvil/tir/tir.h"

namespace anvil::codegen::llvm_backend {

// ---------------------------------------------------------------- target.cpp

// Registers LLVM's targets once per process.
void initialize_llvm();

// What a Target means to LLVM once the host defaults are filled in.
struct ResolvedTarget {
  std::string triple;
  std::string cpu;
  std::string features;  // "+avx512f,-amx-tile,..."
  int opt_level = 3;
  int vector_bits = 128;
  // Dot-product instructions the features (the CPU's and the explicit ones) give: vpdpbusd on
  // zmm (AVX-512 VNNI), on ymm (AVX-VNNI, or AVX-512 VNNI with VL).
  bool vnni_512 = false;
  bool vnni_256 = false;
  // vdpbf16ps on zmm (AVX-512 BF16), on ymm/xmm (with VL).
  bool bf16_512 = false;
  bool bf16_256 = false;
  // AMX tiles (amx-tile) with tdpbf16ps (amx-bf16) and tdpbusd and its kin (amx-int8).
  bool amx_bf16 = false;
  bool amx_int8 = false;
};
ResolvedTarget resolve_target(const Target& target);

// A target machine for target; position-independent code when pic (shared libraries).
std::unique_ptr<llvm::TargetMachine> create_target_machine(const ResolvedTarget& target, bool pic);

// ---------------------------------------------------------------- emit.cpp

// funcs compiled into a fresh module of context and verified (not yet optimized). with_table
// adds the kernel-library table (c_abi.h). packed_symbols receives the exported packed entry
// points.
std::unique_ptr<llvm::Module> build_module(const std::vector<tir::PrimFunc>& funcs,
                                           const ResolvedTarget& target, llvm::TargetMachine& tm,
                                           llvm::LLVMContext& context, bool with_table,
                                           std::vector<std::string>* packed_symbols);

// A module holding only the kernel-library table for packed functions defined elsewhere.
std::unique_ptr<llvm::Module> build_table_module(const std::vector<std::string>& packed_symbols,
                                                 const ResolvedTarget& target,
                                                 llvm::TargetMachine& tm,
                                                 llvm::LLVMContext& context);

// Runs LLVM's optimization pipeline for opt_level (0..3) over module.
void optimize_module(llvm::Module& module, llvm::TargetMachine& tm, int opt_level);

// module as an object file (or assembly text) by tm.
std::string emit_machine_code(llvm::Module& module, llvm::TargetMachine& tm,
                              llvm::CodeGenFileType kind);

// ---------------------------------------------------------------- vector_math.cpp

// Polynomial implementations of the transcendental functions for float32 scalars and vectors,
// written as plain LLVM IR so that the vectorizers keep them in vector registers (a libm call
// would be made once per lane). Accuracy is documented in vector_math.cpp.
llvm::Value* emit_exp_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_exp2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log2_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_log10_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_tanh_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_sigmoid_f32(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emit_erf_f32(llvm::IRBuilder<>& b, llvm::Value* x);

// ---------------------------------------------------------------- the code generator

// Turns lowered PrimFuncs into functions of one LLVM module. Expressions and statements live in
// codegen_llvm.cpp, calls and the packed entry in codegen_builtins.cpp, parallel loops in
// parallel.cpp.
class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::Module& module, const ResolvedTarget& target);

  // Emits func: packed functions (attr "calling_conv" = "packed") with the AnvilPackedCFunc
  // signature, others with a C signature of their params returning int32.
  void add_function(const tir::PrimFunc& func);
  // Adds anvil_library_abi_version / _functions / _num_functions listing the packed functions
  // named symbols, declaring those not defined in this module.
  void add_library_table(const std::vector<std::string>& symbols);
  // Exported names of the packed functions added so far.
  const std::vector<std::string>& packed_symbols() const { return packed_symbols_; }

 private:
  // Per-buffer facts that improve the generated memory accesses.
  struct PointerInfo {
    int64_t alignment = 1;                // known alignment of the base pointer, in bytes
    llvm::MDNode* alias_scope = nullptr;  // this buffer's scope under "tir.noalias"
    llvm::MDNode* noalias = nullptr;      // every other buffer's scope
  };
  // The state of the LLVM function being emitted (saved while a parallel body is outlined).
  struct FunctionState {
    llvm::Function* function = nullptr;
    std::unordered_map<const tir::VarNode*, llvm::Value*> vars;
    std::vector<llvm::Value*> live_workspaces;  // freed on an early error return
    bool in_parallel = false;
    bool tiles_configured = false;  // ldtilecfg ran on entry: release the tiles on return
  };

  // Types: registers (bool i1, bfloat16 as its i16 bits) and memory (bool takes a byte).
  llvm::Type* register_type(DataType t) const;
  llvm::Type* memory_type(DataType t) const;

  // Expressions (codegen_llvm.cpp).
  llvm::Value* emit(const tir::PrimExpr& e);
  llvm::Value* emit_binary(const tir::PrimExprNode* node);
  // a <kind> b on float operands; nullptr for a kind floats do not have.
  llvm::Value* emit_float_binary(tir::ExprKind kind, llvm::Value* a, llvm::Value* b);
  llvm::Value* emit_int_division(tir::ExprKind kind, DataType t, llvm::Value* a, llvm::Value* b,
                                 const tir::PrimExpr& divisor);
  llvm::Value* emit_cast(DataType from, DataType to, llvm::Value* value);
  llvm::Value* emit_load(const tir::BufferLoadNode* node);
  llvm::Value* broadcast(llvm::Value* scalar, int lanes);
  llvm::Value* var_value(const tir::VarNode* var);
  // The address of buffer[index] for a scalar index.
  llvm::Value* element_pointer(const tir::Buffer& buffer, const tir::PrimExpr& index);
  llvm::Align access_alignment(const tir::Buffer& buffer, const tir::PrimExpr& index,
                               int64_t access_bytes);
  void annotate_access(llvm::Instruction* access, const tir::Buffer& buffer);

  // Statements (codegen_llvm.cpp).
  void emit(const tir::Stmt& s);
  void emit_store(const tir::BufferStoreNode* node);
  void emit_for(const tir::ForNode* node);
  // A counted loop of var over [begin, end) running body; loop_properties go on the back edge.
  void emit_loop(const tir::Var& var, llvm::Value* begin, llvm::Value* end, const tir::Stmt& body,
                 const std::vector<llvm::Metadata*>& loop_properties);
  void emit_allocate(const tir::AllocateNode* node);
  void emit_assert(const tir::AssertStmtNode* node);
  void emit_if(const tir::IfThenElseNode* node);
  // Frees live workspaces and returns -1 from the current function (the error path).
  void emit_error_return();
  // Branches to an error return (unlikely) where `failed` holds; blocks named what_failed and
  // what_ok.
  void emit_error_return_if(llvm::Value* failed, const std::string& what);
  void bind(const tir::Var& var, llvm::Value* value);

  // Calls (codegen_builtins.cpp).
  llvm::Value* emit_call(const tir::CallNode* call);
  llvm::Value* emit_builtin(const tir::CallNode* call);
  llvm::Value* emit_math(const tir::CallNode* call);
  // op on float values of type t (float32 or float64).
  llvm::Value* emit_float_math(const std::string& op, DataType t,
                               const std::vector<llvm::Value*>& args);
  llvm::Value* emit_libm_per_lane(const std::string& name, DataType t,
                                  const std::vector<llvm::Value*>& args);
  llvm::Value* emit_extern(const tir::CallNode* call);
  llvm::Value* emit_if_then_else(const tir::CallNode* call);
  // u8i8_dot4_accumulate: vpdpbusd where the target has VNNI, widening arithmetic elsewhere.
  llvm::Value* emit_dot4_accumulate(const tir::CallNode* call);
  // bf16_dot2_accumulate: vdpbf16ps where the target has AVX-512 BF16, two FMAs elsewhere.
  llvm::Value* emit_bf16_dot2_accumulate(const tir::CallNode* call);
  llvm::Value* string_constant(const std::string& text);
  llvm::FunctionCallee runtime_function(const char* name);
  // Fits value (an integer or pointer produced by a builtin) to the call's dtype.
  llvm::Value* coerce(llvm::Value* value, DataType t);
  llvm::Function* emit_packed_function(const tir::PrimFunc& func, const std::string& symbol);
  llvm::Function* emit_c_function(const tir::PrimFunc& func, const std::string& symbol);
  void set_function_attributes(llvm::Function* fn);
  void prepare_alias_scopes(const tir::PrimFunc& func);

  // AMX tiles (amx.cpp). enter_amx_region, at the start of a function's body: when the body
  // uses tiles, the permission request (entry_point: the kernel itself, not a parallel body)
  // and the tile configuration of the calls in this function. leave_amx_region, before each
  // return: the tiles' release.
  void enter_amx_region(const tir::Stmt& body, bool entry_point);
  void leave_amx_region();
  llvm::Value* emit_amx_call(const tir::CallNode* call);

  // Parallel loops (parallel.cpp).
  void emit_parallel_for(const tir::ForNode* node);

  llvm::LLVMContext& context_;
  llvm::Module& module_;
  ResolvedTarget target_;
  llvm::IRBuilder<> builder_;
  llvm::MDBuilder md_;
  FunctionState fn_;
  std::string current_symbol_;
  int parallel_count_ = 0;
  std::unordered_map<const tir::VarNode*, PointerInfo> pointers_;
  std::map<std::string, llvm::Constant*> strings_;
  std::vector<std::string> packed_symbols_;
};

}  // namespace anvil::codegen::llvm_backend
