// Calls (math intrinsics, builtins of the packed calling convention, extern C functions), the
// entry points of the functions and the kernel-library table.
#include <dlpack/dlpack.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <cstddef>
#include <set>

#include "anvil/runtime/c_abi.h"
#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/intrinsics.h"
#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen::llvm_backend {

using namespace tir;  // NOLINT

llvm::Value* CodeGenLLVM::string_constant(const std::string& text) {
  auto it = strings_.find(text);
  if (it != strings_.end()) return it->second;
  llvm::Constant* data = llvm::ConstantDataArray::getString(context_, text);
  auto* global = new llvm::GlobalVariable(module_, data->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, data, ".str");
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(1));
  strings_[text] = global;
  return global;
}

llvm::FunctionCallee CodeGenLLVM::runtime_function(const char* name) {
  llvm::Type* ptr = llvm::PointerType::get(context_, 0);
  llvm::Type* i32 = llvm::Type::getInt32Ty(context_);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context_);
  llvm::FunctionType* type = nullptr;
  std::string_view n = name;
  if (n == "AnvilSetLastError") {
    type = llvm::FunctionType::get(llvm::Type::getVoidTy(context_), {ptr}, false);
  } else if (n == "AnvilParallelLaunch") {
    type = llvm::FunctionType::get(i32, {ptr, ptr, i32}, false);
  } else if (n == "AnvilBackendAllocWorkspace") {
    type = llvm::FunctionType::get(ptr, {i64, i64}, false);
  } else if (n == "AnvilBackendFreeWorkspace") {
    type = llvm::FunctionType::get(i32, {ptr}, false);
  } else if (n == "AnvilBackendRequestAMX") {
    type = llvm::FunctionType::get(i32, {}, false);
  }
  ANVIL_ICHECK(type, "unknown runtime function ", name);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, type);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) fn->setDoesNotThrow();
  return callee;
}

llvm::Value* CodeGenLLVM::coerce(llvm::Value* value, DataType t) {
  llvm::Type* target = register_type(t);
  if (value->getType() == target) return value;
  if (value->getType()->isIntegerTy() && target->isIntegerTy())
    return builder_.CreateIntCast(value, target, /*isSigned=*/true);
  if (value->getType()->isPointerTy() && target->isIntegerTy())
    return builder_.CreatePtrToInt(value, target);
  if (value->getType()->isIntegerTy() && target->isPointerTy())
    return builder_.CreateIntToPtr(value, target);
  return builder_.CreateBitCast(value, target);
}

llvm::Value* CodeGenLLVM::emit_call(const CallNode* call) {
  if (call->call_kind == CallKind::Extern) return emit_extern(call);
  const IntrinsicInfo* info = find_intrinsic(call->op);
  if (!info)
    throw_error("LLVM code generation of '", current_symbol_, "': unknown intrinsic '", call->op,
                "'");
  if (info->intrinsic_class == IntrinsicClass::Builtin) return emit_builtin(call);
  return emit_math(call);
}

llvm::Value* CodeGenLLVM::emit_extern(const CallNode* call) {
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> types;
  for (const PrimExpr& arg : call->args) {
    args.push_back(emit(arg));
    types.push_back(args.back()->getType());
  }
  auto* type = llvm::FunctionType::get(register_type(call->dtype), types, false);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(call->op, type);
  return builder_.CreateCall(type, callee.getCallee(), args);
}

namespace {

// Byte offsets of the DLTensor fields, taken from the header the runtime is built with.
constexpr uint64_t kDataOffset = offsetof(DLTensor, data);
constexpr uint64_t kDeviceTypeOffset = offsetof(DLTensor, device) + offsetof(DLDevice, device_type);
constexpr uint64_t kNdimOffset = offsetof(DLTensor, ndim);
constexpr uint64_t kDtypeCodeOffset = offsetof(DLTensor, dtype) + offsetof(DLDataType, code);
constexpr uint64_t kDtypeBitsOffset = offsetof(DLTensor, dtype) + offsetof(DLDataType, bits);
constexpr uint64_t kDtypeLanesOffset = offsetof(DLTensor, dtype) + offsetof(DLDataType, lanes);
constexpr uint64_t kShapeOffset = offsetof(DLTensor, shape);
constexpr uint64_t kStridesOffset = offsetof(DLTensor, strides);
constexpr uint64_t kByteOffsetOffset = offsetof(DLTensor, byte_offset);
static_assert(sizeof(AnvilValue) == 8, "AnvilValue is one 8-byte slot");

}  // namespace

llvm::Value* CodeGenLLVM::emit_dot4_accumulate(const CallNode* call) {
  const int lanes = call->dtype.lanes;
  if (call->args[1].dtype().lanes != 4 || call->args[2].dtype().lanes != 4 * lanes)
    throw_error("LLVM code generation of '", current_symbol_,
                "': u8i8_dot4_accumulate expects uint8x4 and int8x", 4 * lanes, " operands");
  llvm::Value* acc = emit(call->args[0]);
  llvm::Value* a = emit(call->args[1]);
  llvm::Value* b = emit(call->args[2]);
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* words = llvm::FixedVectorType::get(i32, unsigned(lanes));
  // The four bytes of a, as one 32-bit word in every lane: vpdpbusd's unsigned operand.
  llvm::Value* a_words =
      builder_.CreateVectorSplat(unsigned(lanes), builder_.CreateBitCast(a, i32));
  llvm::Value* b_words = builder_.CreateBitCast(b, words);
  if (lanes == 16 && target_.vnni_512)
    return builder_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_512, {},
                                    {acc, a_words, b_words});
  if (lanes == 8 && target_.vnni_256)
    return builder_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_256, {},
                                    {acc, a_words, b_words});
  if (lanes == 4 && target_.vnni_256)  // the xmm form (AVX-VNNI or AVX-512 VNNI with VL)
    return builder_.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpdpbusd_128, {},
                                    {acc, a_words, b_words});
  // Without VNNI: each byte k of a, widened and broadcast, times every fourth byte of b
  // (starting at k), widened; products of u8 and s8 fit int16, so nothing saturates.
  llvm::Value* a_wide = builder_.CreateZExt(a, llvm::FixedVectorType::get(i32, 4));
  for (int k = 0; k < 4; ++k) {
    std::vector<int> pick(static_cast<size_t>(lanes));
    for (int l = 0; l < lanes; ++l) pick[size_t(l)] = 4 * l + k;
    llvm::Value* b_k = builder_.CreateSExt(builder_.CreateShuffleVector(b, pick), words);
    llvm::Value* a_k = builder_.CreateVectorSplat(
        unsigned(lanes), builder_.CreateExtractElement(a_wide, uint64_t(k)));
    acc = builder_.CreateAdd(acc, builder_.CreateMul(a_k, b_k));
  }
  return acc;
}

llvm::Value* CodeGenLLVM::emit_bf16_dot2_accumulate(const CallNode* call) {
  const int lanes = call->dtype.lanes;
  if (lanes < 2 || call->args[1].dtype().lanes != 2 || call->args[2].dtype().lanes != 2 * lanes ||
      !call->args[1].dtype().is_bfloat() || !call->args[2].dtype().is_bfloat())
    throw_error("LLVM code generation of '", current_symbol_,
                "': bf16_dot2_accumulate expects bfloat16x2 and bfloat16x", 2 * lanes, " operands");
  llvm::Value* acc = emit(call->args[0]);
  llvm::Value* a = emit(call->args[1]);  // <2 x i16>
  llvm::Value* b = emit(call->args[2]);  // <2N x i16>
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* words = llvm::FixedVectorType::get(i32, unsigned(lanes));
  if ((lanes == 16 && target_.bf16_512) || ((lanes == 8 || lanes == 4) && target_.bf16_256)) {
    const llvm::Intrinsic::ID id = lanes == 16  ? llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512
                                   : lanes == 8 ? llvm::Intrinsic::x86_avx512bf16_dpbf16ps_256
                                                : llvm::Intrinsic::x86_avx512bf16_dpbf16ps_128;
    llvm::Function* dpbf16ps = llvm::Intrinsic::getDeclaration(&module_, id);
    llvm::Type* pairs = dpbf16ps->getFunctionType()->getParamType(1);
    // The pair a in every lane, b as it is. LLVM declares the operands as bfloat vectors (LLVM
    // 16) or as 32-bit words (earlier releases); the pair is repeated by a shuffle of its
    // own type, since a bitcast of a word splat to bfloat sends LLVM 16's VectorCombine into
    // endless recursion.
    llvm::Value *a_pairs, *b_pairs;
    if (pairs->getScalarType()->isIntegerTy(32)) {
      a_pairs = builder_.CreateVectorSplat(unsigned(lanes), builder_.CreateBitCast(a, i32));
      b_pairs = builder_.CreateBitCast(b, words);
    } else {
      auto* two = llvm::FixedVectorType::get(pairs->getScalarType(), 2);
      std::vector<int> repeat(static_cast<size_t>(2 * lanes));
      for (size_t k = 0; k < repeat.size(); ++k) repeat[k] = int(k % 2);
      a_pairs = builder_.CreateShuffleVector(builder_.CreateBitCast(a, two), repeat);
      b_pairs = builder_.CreateBitCast(b, pairs);
    }
    return builder_.CreateCall(dpbf16ps, {acc, a_pairs, b_pairs});
  }
  // Without the instruction: bfloat16 is the upper half of a float32, so each operand widens
  // exactly; the odd elements' product is added first, as the instruction does.
  auto* floats = llvm::FixedVectorType::get(builder_.getFloatTy(), unsigned(lanes));
  auto widen = [&](llvm::Value* halves) {
    auto* n = llvm::cast<llvm::FixedVectorType>(halves->getType());
    llvm::Value* bits = builder_.CreateShl(
        builder_.CreateZExt(halves, llvm::FixedVectorType::get(i32, n->getNumElements())), 16);
    return builder_.CreateBitCast(
        bits, llvm::FixedVectorType::get(builder_.getFloatTy(), n->getNumElements()));
  };
  llvm::Value* a_wide = widen(a);
  for (int k : {1, 0}) {
    std::vector<int> pick(static_cast<size_t>(lanes));
    for (int l = 0; l < lanes; ++l) pick[size_t(l)] = 2 * l + k;
    llvm::Value* b_k = widen(builder_.CreateShuffleVector(b, pick));
    llvm::Value* a_k = builder_.CreateVectorSplat(
        unsigned(lanes), builder_.CreateExtractElement(a_wide, uint64_t(k)));
    acc = builder_.CreateIntrinsic(llvm::Intrinsic::fma, {floats}, {a_k, b_k, acc});
  }
  return acc;
}

llvm::Value* CodeGenLLVM::emit_builtin(const CallNode* call) {
  const std::string& op = call->op;
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::Type* i32 = builder_.getInt32Ty();
  auto field = [&](llvm::Value* base, uint64_t offset, llvm::Type* type, int align) {
    llvm::Value* address = builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), base, offset);
    return builder_.CreateAlignedLoad(type, address, llvm::Align(align));
  };
  auto slot = [&](llvm::Value* base, const PrimExpr& index, llvm::Type* type, int size) {
    llvm::Value* address =
        builder_.CreateInBoundsGEP(llvm::Type::getIntNTy(context_, size * 8), base, emit(index));
    return builder_.CreateAlignedLoad(type, address, llvm::Align(size));
  };
  if (op == "likely") return emit(call->args[0]);
  if (op == "address_of") {
    auto* load = as<BufferLoadNode>(call->args[0]);
    if (!load || load->indices.size() != 1)
      throw_error("LLVM code generation of '", current_symbol_,
                  "': address_of expects a flattened buffer access");
    PrimExpr index = load->indices[0];
    if (auto* ramp = as<RampNode>(index)) index = ramp->base;
    return element_pointer(load->buffer, index);
  }
  if (op == "round_to_int32") {
    llvm::Value* x = emit(call->args[0]);
    const DataType from = call->args[0].dtype();
    // The rounding is the instruction's own ({rn-sae}), not MXCSR's.
    if (from.lanes == 16 && from.element_of() == DataType::float32() && target_.vector_bits >= 512)
      return builder_.CreateIntrinsic(
          llvm::Intrinsic::x86_avx512_mask_cvtps2dq_512, {},
          {x, llvm::Constant::getNullValue(llvm::FixedVectorType::get(i32, 16)),
           builder_.getInt16(0xFFFF), builder_.getInt32(8)});
    llvm::Value* rounded = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    return builder_.CreateFPToSI(rounded, register_type(call->dtype));
  }
  if (op == "reinterpret") {
    llvm::Value* value = emit(call->args[0]);
    return coerce(value, call->dtype);
  }
  if (op == "u8i8_dot4_accumulate") return emit_dot4_accumulate(call);
  if (op == "bf16_dot2_accumulate") return emit_bf16_dot2_accumulate(call);
  if (op.starts_with("amx_")) return emit_amx_call(call);
  if (op == "if_then_else") return emit_if_then_else(call);
  if (op == "prefetch") {
    llvm::Value* address = emit(call->args[0]);
    builder_.CreateIntrinsic(
        llvm::Intrinsic::prefetch, {address->getType()},
        {address, builder_.getInt32(0), builder_.getInt32(3), builder_.getInt32(1)});
    return builder_.getInt32(0);
  }
  if (op == "anvil.arg_int64")
    return coerce(slot(emit(call->args[0]), call->args[1], i64, 8), call->dtype);
  if (op == "anvil.arg_float64")
    return emit_cast(DataType::float64(), call->dtype,
                     slot(emit(call->args[0]), call->args[1], builder_.getDoubleTy(), 8));
  if (op == "anvil.arg_handle") return slot(emit(call->args[0]), call->args[1], ptr, 8);
  if (op == "anvil.arg_type_code")
    return coerce(slot(emit(call->args[0]), call->args[1], i32, 4), call->dtype);
  if (op == "anvil.handle_add_bytes")
    return builder_.CreateGEP(builder_.getInt8Ty(), emit(call->args[0]), emit(call->args[1]));
  if (op == "anvil.is_null") return builder_.CreateIsNull(emit(call->args[0]));
  if (op.starts_with("anvil.dltensor_")) {
    llvm::Value* tensor = emit(call->args[0]);
    std::string_view name = std::string_view(op).substr(std::string_view("anvil.dltensor_").size());
    if (name == "data") return field(tensor, kDataOffset, ptr, 8);
    if (name == "byte_offset") return coerce(field(tensor, kByteOffsetOffset, i64, 8), call->dtype);
    if (name == "ndim") return coerce(field(tensor, kNdimOffset, i32, 4), call->dtype);
    if (name == "device_type") return coerce(field(tensor, kDeviceTypeOffset, i32, 4), call->dtype);
    auto unsigned_field = [&](uint64_t offset, int bits) {
      llvm::Value* value = field(tensor, offset, llvm::Type::getIntNTy(context_, bits), bits / 8);
      return builder_.CreateZExtOrTrunc(value, register_type(call->dtype));
    };
    if (name == "dtype_code") return unsigned_field(kDtypeCodeOffset, 8);
    if (name == "dtype_bits") return unsigned_field(kDtypeBitsOffset, 8);
    if (name == "dtype_lanes") return unsigned_field(kDtypeLanesOffset, 16);
    if (name == "has_strides")
      return builder_.CreateIsNotNull(field(tensor, kStridesOffset, ptr, 8));
    if (name == "shape" || name == "stride") {
      llvm::Value* array = field(tensor, name == "shape" ? kShapeOffset : kStridesOffset, ptr, 8);
      llvm::Value* address = builder_.CreateInBoundsGEP(i64, array, emit(call->args[1]));
      return coerce(builder_.CreateAlignedLoad(i64, address, llvm::Align(8)), call->dtype);
    }
  }
  throw_error("LLVM code generation of '", current_symbol_, "': builtin '", op,
              "' is not supported by the LLVM back end");
}

llvm::Value* CodeGenLLVM::emit_if_then_else(const CallNode* call) {
  llvm::Value* condition = emit(call->args[0]);
  if (condition->getType()->isVectorTy())  // lanes: both sides are computed, one is kept
    return builder_.CreateSelect(condition, emit(call->args[1]), emit(call->args[2]));
  auto* then_block = llvm::BasicBlock::Create(context_, "select_then", fn_.function);
  auto* else_block = llvm::BasicBlock::Create(context_, "select_else", fn_.function);
  auto* end_block = llvm::BasicBlock::Create(context_, "select_end", fn_.function);
  builder_.CreateCondBr(condition, then_block, else_block);
  builder_.SetInsertPoint(then_block);
  llvm::Value* then_value = emit(call->args[1]);
  llvm::BasicBlock* then_end = builder_.GetInsertBlock();
  builder_.CreateBr(end_block);
  builder_.SetInsertPoint(else_block);
  llvm::Value* else_value = emit(call->args[2]);
  llvm::BasicBlock* else_end = builder_.GetInsertBlock();
  builder_.CreateBr(end_block);
  builder_.SetInsertPoint(end_block);
  llvm::PHINode* phi = builder_.CreatePHI(then_value->getType(), 2);
  phi->addIncoming(then_value, then_end);
  phi->addIncoming(else_value, else_end);
  return phi;
}

llvm::Value* CodeGenLLVM::emit_libm_per_lane(const std::string& name, DataType t,
                                             const std::vector<llvm::Value*>& args) {
  llvm::Type* scalar = register_type(t.element_of());
  std::string symbol = t.bits == 32 ? name + "f" : name;
  std::vector<llvm::Type*> params(args.size(), scalar);
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(symbol, llvm::FunctionType::get(scalar, params, false));
  if (t.lanes == 1) return builder_.CreateCall(callee, args);
  llvm::Value* result = llvm::PoisonValue::get(register_type(t));
  for (int lane = 0; lane < t.lanes; ++lane) {
    std::vector<llvm::Value*> lane_args;
    for (llvm::Value* arg : args) lane_args.push_back(builder_.CreateExtractElement(arg, lane));
    result = builder_.CreateInsertElement(result, builder_.CreateCall(callee, lane_args), lane);
  }
  return result;
}

llvm::Value* CodeGenLLVM::emit_math(const CallNode* call) {
  DataType t = call->args[0].dtype();
  if (!t.is_float() && !t.is_bfloat())
    throw_error("LLVM code generation of '", current_symbol_, "': ", call->op,
                " expects a float argument, got ", t.to_string());
  // Half-precision math runs in float32.
  DataType compute = (t.is_bfloat() || t.bits == 16) ? DataType::float32().with_lanes(t.lanes) : t;
  std::vector<llvm::Value*> args;
  for (const PrimExpr& arg : call->args) args.push_back(emit_cast(arg.dtype(), compute, emit(arg)));
  llvm::Value* result = emit_float_math(call->op, compute, args);
  if (result->getType()->isIntOrIntVectorTy(1)) return result;  // isnan and friends
  return emit_cast(compute, call->dtype, result);
}

llvm::Value* CodeGenLLVM::emit_float_math(const std::string& op, DataType t,
                                          const std::vector<llvm::Value*>& args) {
  llvm::Value* x = args[0];
  llvm::Type* type = x->getType();
  auto intrinsic = [&](llvm::Intrinsic::ID id) {
    return builder_.CreateIntrinsic(id, {type}, args);
  };
  bool f32 = t.bits == 32;
  if (op == "sqrt") return intrinsic(llvm::Intrinsic::sqrt);
  if (op == "rsqrt")
    return builder_.CreateFDiv(llvm::ConstantFP::get(type, 1.0), intrinsic(llvm::Intrinsic::sqrt));
  if (op == "fabs") return intrinsic(llvm::Intrinsic::fabs);
  if (op == "floor") return intrinsic(llvm::Intrinsic::floor);
  if (op == "ceil") return intrinsic(llvm::Intrinsic::ceil);
  if (op == "trunc") return intrinsic(llvm::Intrinsic::trunc);
  if (op == "round") return intrinsic(llvm::Intrinsic::roundeven);
  if (op == "fma") return intrinsic(llvm::Intrinsic::fma);
  if (op == "mul_unfused") {
    // An arithmetic fence: no later fadd may absorb the product into an fma, whatever the
    // optimizer does to the instructions' contract flags.
    llvm::Value* product = builder_.CreateFMul(args[0], args[1]);
    return builder_.CreateArithmeticFence(product, product->getType());
  }
  if (op == "copysign") return intrinsic(llvm::Intrinsic::copysign);
  if (op == "pow") return intrinsic(llvm::Intrinsic::pow);
  if (op == "sin") return intrinsic(llvm::Intrinsic::sin);
  if (op == "cos") return intrinsic(llvm::Intrinsic::cos);
  if (op == "fmod") return builder_.CreateFRem(args[0], args[1]);
  if (op == "isnan") return builder_.CreateFCmpUNO(x, x);
  if (op == "isinf" || op == "isfinite") {
    llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* inf = llvm::ConstantFP::getInfinity(type);
    return op == "isinf" ? builder_.CreateFCmpOEQ(magnitude, inf)
                         : builder_.CreateFCmpONE(magnitude, inf);
  }
  if (f32) {
    if (op == "exp") return emit_exp_f32(builder_, x);
    if (op == "exp2") return emit_exp2_f32(builder_, x);
    if (op == "log") return emit_log_f32(builder_, x);
    if (op == "log2") return emit_log2_f32(builder_, x);
    if (op == "log10") return emit_log10_f32(builder_, x);
    if (op == "tanh") return emit_tanh_f32(builder_, x);
    if (op == "sigmoid") return emit_sigmoid_f32(builder_, x);
    if (op == "erf") return emit_erf_f32(builder_, x);
  }
  if (op == "sigmoid") {
    llvm::Value* e = emit_libm_per_lane("exp", t, {builder_.CreateFNeg(x)});
    llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
    return builder_.CreateFDiv(one, builder_.CreateFAdd(one, e));
  }
  // The rare functions (tan, atan, sinh, ...) and float64 exp/log/tanh/erf call libm per lane.
  return emit_libm_per_lane(op, t, args);
}

// ---------------------------------------------------------------- functions

void CodeGenLLVM::set_function_attributes(llvm::Function* fn) {
  fn->setDoesNotThrow();
  fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
  // Explicit vectors of the full register width stay whole (x86 otherwise splits 512-bit
  // vectors on CPUs tuned for 256), and LLVM's own vectorizers may use that width too.
  std::string width = std::to_string(target_.vector_bits);
  fn->addFnAttr("min-legal-vector-width", width);
  fn->addFnAttr("prefer-vector-width", width);
}

namespace {

bool attr_is_true(const PrimFunc& func, std::string_view key) {
  const ir::AttrValue* value = func->func_attrs.find(key);
  if (!value) return false;
  if (auto* i = std::get_if<int64_t>(value)) return *i != 0;
  if (auto* b = std::get_if<bool>(value)) return *b;
  return false;
}

bool is_packed(const PrimFunc& func) {
  const ir::AttrValue* value = func->func_attrs.find("calling_conv");
  auto* text = value ? std::get_if<std::string>(value) : nullptr;
  return text && *text == "packed";
}

}  // namespace

void CodeGenLLVM::prepare_alias_scopes(const PrimFunc& func) {
  if (!attr_is_true(func, "tir.noalias")) return;
  // Every buffer the body touches gets its own scope; each access is then known not to alias
  // the accesses of the other buffers.
  std::vector<const VarNode*> data_vars;
  std::set<const VarNode*> seen;
  auto note = [&](const Buffer& buffer) {
    if (seen.insert(buffer->data.get()).second) data_vars.push_back(buffer->data.get());
  };
  pre_order_visit(
      func->body,
      [&](const PrimExpr& e) {
        if (auto* load = as<BufferLoadNode>(e)) note(load->buffer);
      },
      [&](const Stmt& s) {
        if (auto* store = as<BufferStoreNode>(s)) note(store->buffer);
      });
  if (data_vars.size() < 2) return;
  llvm::MDNode* domain = md_.createAnonymousAliasScopeDomain(current_symbol_);
  std::vector<llvm::Metadata*> scopes;
  for (const VarNode* var : data_vars)
    scopes.push_back(md_.createAnonymousAliasScope(domain, var->name));
  for (size_t i = 0; i < data_vars.size(); ++i) {
    std::vector<llvm::Metadata*> others;
    for (size_t j = 0; j < scopes.size(); ++j)
      if (j != i) others.push_back(scopes[j]);
    PointerInfo& info = pointers_[data_vars[i]];
    info.alias_scope = llvm::cast<llvm::MDNode>(scopes[i]);
    info.noalias = llvm::MDNode::get(context_, others);
  }
}

void CodeGenLLVM::add_function(const PrimFunc& func) {
  std::string symbol = func->global_symbol();
  if (symbol.empty())
    throw_error("LLVM code generation: a PrimFunc has no \"global_symbol\" attribute");
  if (module_.getFunction(symbol))
    throw_error("LLVM code generation: two functions are named '", symbol, "'");
  current_symbol_ = symbol;
  parallel_count_ = 0;
  fn_ = FunctionState();
  prepare_alias_scopes(func);
  if (is_packed(func)) {
    emit_packed_function(func, symbol);
    packed_symbols_.push_back(symbol);
  } else {
    emit_c_function(func, symbol);
  }
}

llvm::Function* CodeGenLLVM::emit_packed_function(const PrimFunc& func, const std::string& symbol) {
  if (func->params.size() != 5)
    throw_error("LLVM code generation of '", symbol,
                "': a packed function takes (args, arg_type_codes, num_args, ret_value, "
                "ret_type_code), got ",
                func->params.size(), " parameters");
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* type = llvm::FunctionType::get(i32, {ptr, ptr, i32, ptr, ptr}, false);
  auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, symbol, module_);
  set_function_attributes(fn);
  fn_.function = fn;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", fn));
  for (unsigned i = 0; i < 5; ++i) {
    llvm::Argument* arg = fn->getArg(i);
    if (arg->getType()->isPointerTy()) arg->addAttr(llvm::Attribute::NoAlias);
    // A param declared with another integer width (num_args as int64) gets that width.
    bind(func->params[i], coerce(arg, func->params[i]->dtype));
  }
  enter_amx_region(func->body, /*entry_point=*/true);
  emit(func->body);
  leave_amx_region();
  builder_.CreateRet(builder_.getInt32(0));
  return fn;
}

llvm::Function* CodeGenLLVM::emit_c_function(const PrimFunc& func, const std::string& symbol) {
  std::vector<llvm::Type*> params;
  for (const Var& param : func->params) params.push_back(register_type(param->dtype));
  auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), params, false);
  auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, symbol, module_);
  set_function_attributes(fn);
  fn_.function = fn;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", fn));
  bool noalias = attr_is_true(func, "tir.noalias");
  for (size_t i = 0; i < func->params.size(); ++i) {
    llvm::Argument* arg = fn->getArg(unsigned(i));
    bind(func->params[i], arg);
    if (Buffer buffer = func->buffer_of(func->params[i])) {
      if (noalias) arg->addAttr(llvm::Attribute::NoAlias);
      fn_.vars[buffer->data.get()] = arg;
    }
  }
  enter_amx_region(func->body, /*entry_point=*/true);
  emit(func->body);
  leave_amx_region();
  builder_.CreateRet(builder_.getInt32(0));
  return fn;
}

void CodeGenLLVM::add_library_table(const std::vector<std::string>& symbols) {
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* ptr = builder_.getPtrTy();
  auto* packed_type = llvm::FunctionType::get(i32, {ptr, ptr, i32, ptr, ptr}, false);
  auto exported_constant = [&](llvm::Constant* value, const char* name) {
    auto* global = new llvm::GlobalVariable(module_, value->getType(), true,
                                            llvm::GlobalValue::ExternalLinkage, value, name);
    global->setVisibility(llvm::GlobalValue::DefaultVisibility);
    return global;
  };
  exported_constant(llvm::ConstantInt::get(i32, ANVIL_ABI_VERSION),
                    ANVIL_LIBRARY_ABI_VERSION_SYMBOL)
      ->setAlignment(llvm::Align(4));
  auto* entry_type = llvm::StructType::get(context_, {ptr, ptr});
  std::vector<llvm::Constant*> entries;
  for (const std::string& symbol : symbols) {
    auto* function =
        llvm::cast<llvm::Constant>(module_.getOrInsertFunction(symbol, packed_type).getCallee());
    entries.push_back(llvm::ConstantStruct::get(
        entry_type, {llvm::cast<llvm::Constant>(string_constant(symbol)), function}));
  }
  auto* table_type = llvm::ArrayType::get(entry_type, entries.size());
  exported_constant(llvm::ConstantArray::get(table_type, entries), ANVIL_LIBRARY_FUNCTIONS_SYMBOL)
      ->setAlignment(llvm::Align(8));
  exported_constant(llvm::ConstantInt::get(i32, int64_t(entries.size())),
                    ANVIL_LIBRARY_NUM_FUNCTIONS_SYMBOL)
      ->setAlignment(llvm::Align(4));
}

}  // namespace anvil::codegen::llvm_backend
