// Expressions and statements of the lowered tensor IR -> LLVM IR.
#include "codegen/llvm/codegen_llvm.h"

#include <llvm/IR/Intrinsics.h>

#include <bit>
#include <numeric>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"

namespace anvil::codegen::llvm_backend {

using namespace tir;  // NOLINT: the node names read better unqualified here

namespace {

// Allocations up to this size with a constant extent live on the stack.
constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;

// The largest d with e == 0 (mod d) that a look at e's structure proves (1 when nothing is
// known); capped so that products cannot overflow.
int64_t known_divisor(const PrimExpr& e) {
  constexpr int64_t kCap = int64_t(1) << 20;
  if (auto* imm = as<IntImmNode>(e))
    return imm->value == 0 ? kCap : std::min(kCap, std::abs(imm->value));
  if (auto* add = as<AddNode>(e)) return std::gcd(known_divisor(add->a), known_divisor(add->b));
  if (auto* sub = as<SubNode>(e)) return std::gcd(known_divisor(sub->a), known_divisor(sub->b));
  if (auto* mul = as<MulNode>(e))
    return std::min(kCap, known_divisor(mul->a) * known_divisor(mul->b));
  if (auto* ramp = as<RampNode>(e)) return known_divisor(ramp->base);
  return 1;
}

}  // namespace

CodeGenLLVM::CodeGenLLVM(llvm::Module& module, const ResolvedTarget& target)
    : context_(module.getContext()),
      module_(module),
      target_(target),
      builder_(module.getContext()),
      md_(module.getContext()) {
  // Multiply-add pairs may fuse; nothing else is relaxed (no reassociation), so results stay
  // close to a plain C evaluation.
  llvm::FastMathFlags flags;
  flags.setAllowContract(true);
  builder_.setFastMathFlags(flags);
}

llvm::Type* CodeGenLLVM::register_type(DataType t) const {
  llvm::Type* scalar = nullptr;
  if (t.is_handle()) {
    scalar = llvm::PointerType::get(context_, 0);
  } else if (t.is_bool()) {
    scalar = llvm::Type::getInt1Ty(context_);
  } else if (t.is_int() || t.is_uint()) {
    scalar = llvm::Type::getIntNTy(context_, t.bits);
  } else if (t.is_bfloat()) {
    scalar = llvm::Type::getInt16Ty(context_);  // converted through float for arithmetic
  } else if (t.is_minifloat()) {
    scalar = llvm::Type::getInt8Ty(context_);  // codes; legalize_minifloats lowered the casts
  } else if (t.is_float() && t.bits == 16) {
    scalar = llvm::Type::getHalfTy(context_);
  } else if (t.is_float() && t.bits == 32) {
    scalar = llvm::Type::getFloatTy(context_);
  } else if (t.is_float() && t.bits == 64) {
    scalar = llvm::Type::getDoubleTy(context_);
  } else {
    throw_error("the LLVM back end does not support dtype ", t.to_string());
  }
  if (t.lanes == 1) return scalar;
  return llvm::FixedVectorType::get(scalar, t.lanes);
}

llvm::Type* CodeGenLLVM::memory_type(DataType t) const {
  // Types narrower than a byte take one each, as Tensor stores them.
  if (t.is_bool() || t.is_sub_byte_int())
    return register_type(DataType::uint8().with_lanes(t.lanes));
  return register_type(t);
}

void CodeGenLLVM::bind(const Var& var, llvm::Value* value) {
  if (!value->hasName() && !llvm::isa<llvm::Constant>(value)) value->setName(var->name);
  fn_.vars[var.get()] = value;
}

llvm::Value* CodeGenLLVM::var_value(const VarNode* var) {
  auto it = fn_.vars.find(var);
  if (it == fn_.vars.end())
    throw_error("LLVM code generation of '", current_symbol_, "': variable '", var->name,
                "' is used but never bound");
  return it->second;
}

llvm::Value* CodeGenLLVM::broadcast(llvm::Value* scalar, int lanes) {
  if (lanes == 1) return scalar;
  return builder_.CreateVectorSplat(lanes, scalar);
}

// ---------------------------------------------------------------- expressions

llvm::Value* CodeGenLLVM::emit(const PrimExpr& e) {
  ANVIL_ICHECK(e, "null expression in ", current_symbol_);
  switch (e.kind()) {
    case ExprKind::IntImm:
      return llvm::ConstantInt::get(register_type(e.dtype()), uint64_t(as<IntImmNode>(e)->value),
                                    /*isSigned=*/true);
    case ExprKind::FloatImm: {
      double value = as<FloatImmNode>(e)->value;
      if (e.dtype().is_bfloat()) {
        float f = float(value);
        uint32_t bits = std::bit_cast<uint32_t>(f);
        bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
        return llvm::ConstantInt::get(register_type(e.dtype()), bits >> 16);
      }
      return llvm::ConstantFP::get(register_type(e.dtype()), value);
    }
    case ExprKind::StringImm:
      return string_constant(as<StringImmNode>(e)->value);
    case ExprKind::Var:
      return var_value(as<VarNode>(e));
#define ANVIL_TIR_BINARY(Name) case ExprKind::Name:
#define ANVIL_TIR_EXPR(Name)
#include "anvil/tir/node_kinds.def"
      return emit_binary(e.get());
    case ExprKind::Not:
      return builder_.CreateNot(emit(as<NotNode>(e)->a));
    case ExprKind::Select: {
      auto* node = as<SelectNode>(e);
      llvm::Value* cond = emit(node->condition);
      return builder_.CreateSelect(cond, emit(node->true_value), emit(node->false_value));
    }
    case ExprKind::Cast: {
      auto* node = as<CastNode>(e);
      return emit_cast(node->value.dtype(), node->dtype, emit(node->value));
    }
    case ExprKind::BufferLoad:
      return emit_load(as<BufferLoadNode>(e));
    case ExprKind::Ramp: {
      auto* node = as<RampNode>(e);
      llvm::Value* base = emit(node->base);
      llvm::Value* stride = emit(node->stride);
      llvm::Type* type = base->getType();
      std::vector<llvm::Constant*> steps;
      for (int i = 0; i < node->lanes; ++i) steps.push_back(llvm::ConstantInt::get(type, i));
      llvm::Value* offsets =
          builder_.CreateMul(broadcast(stride, node->lanes), llvm::ConstantVector::get(steps));
      return builder_.CreateAdd(broadcast(base, node->lanes), offsets);
    }
    case ExprKind::Broadcast: {
      auto* node = as<BroadcastNode>(e);
      return broadcast(emit(node->value), node->lanes);
    }
    case ExprKind::Let: {
      auto* node = as<LetNode>(e);
      bind(node->var, emit(node->value));
      llvm::Value* body = emit(node->body);
      fn_.vars.erase(node->var.get());
      return body;
    }
    case ExprKind::Call:
      return emit_call(as<CallNode>(e));
    case ExprKind::Reduce:
      throw_error("LLVM code generation of '", current_symbol_,
                  "': a Reduce expression is left (the function is not lowered)");
  }
  ANVIL_ICHECK(false, "unhandled expression kind");
  return nullptr;
}

llvm::Value* CodeGenLLVM::emit_float_binary(ExprKind kind, llvm::Value* a, llvm::Value* b) {
  switch (kind) {
    case ExprKind::Add:
      return builder_.CreateFAdd(a, b);
    case ExprKind::Sub:
      return builder_.CreateFSub(a, b);
    case ExprKind::Mul:
      return builder_.CreateFMul(a, b);
    case ExprKind::Div:
      return builder_.CreateFDiv(a, b);
    case ExprKind::Mod:
      return builder_.CreateFRem(a, b);
    case ExprKind::FloorDiv: {
      llvm::Value* q = builder_.CreateFDiv(a, b);
      return builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, q);
    }
    case ExprKind::FloorMod: {
      llvm::Value* q =
          builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
      return builder_.CreateFSub(a, builder_.CreateFMul(q, b));
    }
    // select(a < b) is what the x86 min/max instructions compute.
    case ExprKind::Min:
      return builder_.CreateSelect(builder_.CreateFCmpOLT(a, b), a, b);
    case ExprKind::Max:
      return builder_.CreateSelect(builder_.CreateFCmpOGT(a, b), a, b);
    case ExprKind::EQ:
      return builder_.CreateFCmpOEQ(a, b);
    case ExprKind::NE:
      return builder_.CreateFCmpUNE(a, b);
    case ExprKind::LT:
      return builder_.CreateFCmpOLT(a, b);
    case ExprKind::LE:
      return builder_.CreateFCmpOLE(a, b);
    case ExprKind::GT:
      return builder_.CreateFCmpOGT(a, b);
    case ExprKind::GE:
      return builder_.CreateFCmpOGE(a, b);
    default:
      return nullptr;
  }
}

llvm::Value* CodeGenLLVM::emit_binary(const PrimExprNode* node) {
  const PrimExpr *lhs = nullptr, *rhs = nullptr;
  binary_operands(node, lhs, rhs);
  ANVIL_ICHECK(lhs && rhs, "emit_binary on a ", expr_kind_name(node->kind), " node");
  DataType t = lhs->dtype();
  ExprKind kind = node->kind;
  llvm::Value* a = emit(*lhs);
  llvm::Value* b = emit(*rhs);
  if (t.is_bfloat()) {
    // Arithmetic in float32, rounded back to bfloat16; comparisons on the float values.
    // Mod and the floor forms are not taken on bfloat16.
    bool supported =
        kind != ExprKind::Mod && kind != ExprKind::FloorDiv && kind != ExprKind::FloorMod;
    DataType f32 = DataType::float32().with_lanes(t.lanes);
    llvm::Value* value =
        supported ? emit_float_binary(kind, emit_cast(t, f32, a), emit_cast(t, f32, b)) : nullptr;
    if (!value)
      throw_error("LLVM code generation of '", current_symbol_, "': ", expr_kind_name(kind),
                  " on bfloat16 is not supported");
    return is_comparison(kind) ? value : emit_cast(f32, node->dtype, value);
  }
  if (t.is_float()) {
    if (llvm::Value* value = emit_float_binary(kind, a, b)) return value;
    throw_error("LLVM code generation of '", current_symbol_, "': ", expr_kind_name(kind), " on ",
                t.to_string(), " is not supported");
  }
  if (t.is_handle()) {
    if (kind == ExprKind::EQ) return builder_.CreateICmpEQ(a, b);
    if (kind == ExprKind::NE) return builder_.CreateICmpNE(a, b);
    throw_error("LLVM code generation of '", current_symbol_, "': ", expr_kind_name(kind),
                " on handles is not supported");
  }
  bool is_signed = t.is_int();
  switch (kind) {
    case ExprKind::Add:
      return builder_.CreateAdd(a, b, "", false, is_signed);
    case ExprKind::Sub:
      return builder_.CreateSub(a, b, "", false, is_signed);
    case ExprKind::Mul:
      return builder_.CreateMul(a, b, "", false, is_signed);
    case ExprKind::Div:
    case ExprKind::Mod:
    case ExprKind::FloorDiv:
    case ExprKind::FloorMod:
      return emit_int_division(kind, t, a, b, *rhs);
    case ExprKind::Min:
      return builder_.CreateSelect(
          is_signed ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b), a, b);
    case ExprKind::Max:
      return builder_.CreateSelect(
          is_signed ? builder_.CreateICmpSGT(a, b) : builder_.CreateICmpUGT(a, b), a, b);
    case ExprKind::EQ:
      return builder_.CreateICmpEQ(a, b);
    case ExprKind::NE:
      return builder_.CreateICmpNE(a, b);
    case ExprKind::LT:
      return is_signed ? builder_.CreateICmpSLT(a, b) : builder_.CreateICmpULT(a, b);
    case ExprKind::LE:
      return is_signed ? builder_.CreateICmpSLE(a, b) : builder_.CreateICmpULE(a, b);
    case ExprKind::GT:
      return is_signed ? builder_.CreateICmpSGT(a, b) : builder_.CreateICmpUGT(a, b);
    case ExprKind::GE:
      return is_signed ? builder_.CreateICmpSGE(a, b) : builder_.CreateICmpUGE(a, b);
    case ExprKind::And:
      return builder_.CreateAnd(a, b);
    case ExprKind::Or:
      return builder_.CreateOr(a, b);
    default:
      break;
  }
  ANVIL_ICHECK(false, "unhandled binary kind ", expr_kind_name(kind));
  return nullptr;
}

llvm::Value* CodeGenLLVM::emit_int_division(ExprKind kind, DataType t, llvm::Value* a,
                                            llvm::Value* b, const PrimExpr& divisor) {
  if (!t.is_int()) {  // unsigned: floor and truncation agree
    bool div = kind == ExprKind::Div || kind == ExprKind::FloorDiv;
    return div ? builder_.CreateUDiv(a, b) : builder_.CreateURem(a, b);
  }
  if (kind == ExprKind::Div) return builder_.CreateSDiv(a, b);
  if (kind == ExprKind::Mod) return builder_.CreateSRem(a, b);
  std::optional<int64_t> constant = as_const_int(divisor);
  if (constant && *constant > 0 && std::has_single_bit(uint64_t(*constant))) {
    // Floor semantics on two's complement: a shift and a mask.
    int shift = std::countr_zero(uint64_t(*constant));
    if (kind == ExprKind::FloorDiv)
      return builder_.CreateAShr(a, llvm::ConstantInt::get(a->getType(), shift));
    return builder_.CreateAnd(a, llvm::ConstantInt::get(a->getType(), *constant - 1));
  }
  llvm::Value* quotient = builder_.CreateSDiv(a, b);
  llvm::Value* remainder = builder_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  // The truncated result is one too high when the remainder is non-zero and its sign differs
  // from the divisor's.
  llvm::Value* adjust;
  if (constant && *constant > 0) {
    adjust = builder_.CreateICmpSLT(remainder, zero);
  } else {
    llvm::Value* signs_differ = builder_.CreateICmpSLT(builder_.CreateXor(remainder, b), zero);
    adjust = builder_.CreateAnd(builder_.CreateICmpNE(remainder, zero), signs_differ);
  }
  if (kind == ExprKind::FloorDiv)
    return builder_.CreateSub(quotient, builder_.CreateZExt(adjust, a->getType()));
  return builder_.CreateAdd(remainder, builder_.CreateSelect(adjust, b, zero));
}

llvm::Value* CodeGenLLVM::emit_cast(DataType from, DataType to, llvm::Value* value) {
  if (from == to) return value;
  int lanes = to.lanes;
  if (from.lanes == 1 && lanes > 1) {
    value = broadcast(value, lanes);
    from = from.with_lanes(lanes);
  }
  if (from.is_minifloat() || to.is_minifloat())
    throw_error("LLVM code generation of '", current_symbol_, "': a cast from ", from.to_string(),
                " to ", to.to_string(), " is left (legalize_minifloats lowers those)");
  llvm::Type* target = register_type(to);
  if (from.is_bfloat()) {
    // bfloat16 is the upper half of a float32.
    llvm::Type* i32 = register_type(DataType::int32().with_lanes(lanes));
    llvm::Value* bits = builder_.CreateShl(builder_.CreateZExt(value, i32), 16);
    llvm::Value* f32 =
        builder_.CreateBitCast(bits, register_type(DataType::float32().with_lanes(lanes)));
    return emit_cast(DataType::float32().with_lanes(lanes), to, f32);
  }
  if (to.is_bfloat()) {
    DataType f32_type = DataType::float32().with_lanes(lanes);
    llvm::Value* f32 = emit_cast(from, f32_type, value);
    llvm::Type* i32 = register_type(DataType::int32().with_lanes(lanes));
    llvm::Value* bits = builder_.CreateBitCast(f32, i32);
    // Round to nearest even; NaNs keep a quiet payload.
    llvm::Value* lsb = builder_.CreateAnd(builder_.CreateLShr(bits, 16), 1);
    llvm::Value* rounded =
        builder_.CreateAdd(bits, builder_.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff)));
    llvm::Value* is_nan = builder_.CreateFCmpUNO(f32, f32);
    llvm::Value* nan_bits = builder_.CreateOr(bits, llvm::ConstantInt::get(i32, 0x400000));
    llvm::Value* chosen = builder_.CreateSelect(is_nan, nan_bits, rounded);
    return builder_.CreateTrunc(builder_.CreateLShr(chosen, 16), target);
  }
  if (to.is_bool()) {
    if (from.is_float())
      return builder_.CreateFCmpUNE(value, llvm::Constant::getNullValue(value->getType()));
    if (from.is_handle()) return builder_.CreateIsNotNull(value);
    return builder_.CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
  }
  if (from.is_handle() || to.is_handle()) {
    if (from.is_handle() && to.is_handle()) return value;
    return from.is_handle() ? builder_.CreatePtrToInt(value, target)
                            : builder_.CreateIntToPtr(value, target);
  }
  bool from_signed = from.is_int();  // bool and unsigned extend with zeros
  if (from.is_float() && to.is_float()) return builder_.CreateFPCast(value, target);
  if (from.is_float() && to.is_sub_byte_int()) {
    // Through int32, then the low bits: a value out of the narrow range wraps.
    DataType i32 = DataType::int32().with_lanes(lanes);
    return builder_.CreateTrunc(emit_cast(from, i32, value), target);
  }
  if (from.is_float())
    return to.is_int() ? builder_.CreateFPToSI(value, target)
                       : builder_.CreateFPToUI(value, target);
  if (to.is_float())
    return from_signed ? builder_.CreateSIToFP(value, target)
                       : builder_.CreateUIToFP(value, target);
  return builder_.CreateIntCast(value, target, from_signed);
}

llvm::Align CodeGenLLVM::access_alignment(const Buffer& buffer, const PrimExpr& index,
                                          int64_t access_bytes) {
  int64_t element = memory_type(buffer->dtype)->getPrimitiveSizeInBits() / 8;
  if (element <= 0) element = 1;
  int64_t base = 1;
  auto it = pointers_.find(buffer->data.get());
  if (it != pointers_.end()) base = it->second.alignment;
  // The offset's largest power-of-two factor times the element size, as far as the base allows.
  int64_t divisor = known_divisor(index);
  int64_t offset_alignment = element * int64_t(uint64_t(divisor) & -uint64_t(divisor));
  int64_t alignment = std::min({std::max(base, element), offset_alignment, access_bytes});
  alignment = std::max<int64_t>(alignment, std::min<int64_t>(element, access_bytes));
  return llvm::Align(std::bit_floor(uint64_t(alignment)));
}

void CodeGenLLVM::annotate_access(llvm::Instruction* access, const Buffer& buffer) {
  auto it = pointers_.find(buffer->data.get());
  if (it == pointers_.end() || !it->second.alias_scope) return;
  access->setMetadata(llvm::LLVMContext::MD_alias_scope,
                      llvm::MDNode::get(context_, {it->second.alias_scope}));
  if (it->second.noalias) access->setMetadata(llvm::LLVMContext::MD_noalias, it->second.noalias);
}

llvm::Value* CodeGenLLVM::element_pointer(const Buffer& buffer, const PrimExpr& index) {
  ANVIL_ICHECK(index.dtype().lanes == 1);
  llvm::Value* base = var_value(buffer->data.get());
  llvm::Type* element = memory_type(buffer->dtype);
  return builder_.CreateInBoundsGEP(element, base, emit(index));
}

llvm::Value* CodeGenLLVM::emit_load(const BufferLoadNode* node) {
  if (node->indices.size() != 1)
    throw_error("LLVM code generation of '", current_symbol_, "': access to '", node->buffer->name,
                "' is not flattened to one dimension");
  const Buffer& buffer = node->buffer;
  const PrimExpr& index = node->indices[0];
  int lanes = index.dtype().lanes;
  llvm::Type* element = memory_type(buffer->dtype);
  int64_t element_bytes = buffer->dtype.bytes();
  llvm::Value* loaded = nullptr;
  if (lanes == 1) {
    auto* load = builder_.CreateAlignedLoad(element, element_pointer(buffer, index),
                                            access_alignment(buffer, index, element_bytes));
    annotate_access(load, buffer);
    loaded = load;
  } else if (auto* ramp = as<RampNode>(index); ramp && is_one(ramp->stride)) {
    llvm::Type* vector = llvm::FixedVectorType::get(element, lanes);
    auto* load =
        builder_.CreateAlignedLoad(vector, element_pointer(buffer, ramp->base),
                                   access_alignment(buffer, ramp->base, element_bytes * lanes));
    annotate_access(load, buffer);
    loaded = load;
  } else if (auto* bcast = as<BroadcastNode>(index)) {
    auto* load = builder_.CreateAlignedLoad(element, element_pointer(buffer, bcast->value),
                                            access_alignment(buffer, bcast->value, element_bytes));
    annotate_access(load, buffer);
    loaded = broadcast(load, lanes);
  } else {
    llvm::Value* base = var_value(buffer->data.get());
    llvm::Value* pointers = builder_.CreateInBoundsGEP(element, base, emit(index));
    llvm::Type* vector = llvm::FixedVectorType::get(element, lanes);
    auto* gather = builder_.CreateMaskedGather(
        vector, pointers, llvm::Align(std::bit_floor(uint64_t(element_bytes))));
    annotate_access(gather, buffer);
    loaded = gather;
  }
  if (buffer->dtype.is_bool() || buffer->dtype.is_sub_byte_int())
    return builder_.CreateTrunc(loaded, register_type(node->dtype));
  return loaded;
}

// ---------------------------------------------------------------- statements

void CodeGenLLVM::emit(const Stmt& s) {
  ANVIL_ICHECK(s, "null statement in ", current_symbol_);
  switch (s->kind) {
    case StmtKind::LetStmt: {
      auto* node = as<LetStmtNode>(s);
      bind(node->var, emit(node->value));
      emit(node->body);
      return;
    }
    case StmtKind::AssertStmt:
      return emit_assert(as<AssertStmtNode>(s));
    case StmtKind::BufferStore:
      return emit_store(as<BufferStoreNode>(s));
    case StmtKind::Allocate:
      return emit_allocate(as<AllocateNode>(s));
    case StmtKind::For:
      return emit_for(as<ForNode>(s));
    case StmtKind::IfThenElse:
      return emit_if(as<IfThenElseNode>(s));
    case StmtKind::SeqStmt:
      for (const Stmt& child : as<SeqStmtNode>(s)->seq) emit(child);
      return;
    case StmtKind::Evaluate: {
      const PrimExpr& value = as<EvaluateNode>(s)->value;
      if (!as<IntImmNode>(value)) emit(value);
      return;
    }
    case StmtKind::Block:
    case StmtKind::BlockRealize:
      throw_error("LLVM code generation of '", current_symbol_, "': ", stmt_kind_name(s->kind),
                  " is left (the function is not lowered)");
  }
}

void CodeGenLLVM::emit_store(const BufferStoreNode* node) {
  if (node->indices.size() != 1)
    throw_error("LLVM code generation of '", current_symbol_, "': access to '", node->buffer->name,
                "' is not flattened to one dimension");
  const Buffer& buffer = node->buffer;
  const PrimExpr& index = node->indices[0];
  int lanes = index.dtype().lanes;
  llvm::Value* value = emit(node->value);
  if (value->getType()->isVectorTy() != (lanes > 1) && lanes > 1) value = broadcast(value, lanes);
  llvm::Type* element = memory_type(buffer->dtype);
  if (buffer->dtype.is_bool() || buffer->dtype.is_sub_byte_int())
    value = builder_.CreateIntCast(value,
                                   lanes > 1 ? llvm::FixedVectorType::get(element, lanes) : element,
                                   /*isSigned=*/buffer->dtype.is_int());
  int64_t element_bytes = buffer->dtype.bytes();
  llvm::Instruction* store = nullptr;
  if (lanes == 1) {
    store = builder_.CreateAlignedStore(value, element_pointer(buffer, index),
                                        access_alignment(buffer, index, element_bytes));
  } else if (auto* ramp = as<RampNode>(index); ramp && is_one(ramp->stride)) {
    store =
        builder_.CreateAlignedStore(value, element_pointer(buffer, ramp->base),
                                    access_alignment(buffer, ramp->base, element_bytes * lanes));
  } else {
    llvm::Value* base = var_value(buffer->data.get());
    llvm::Value* pointers = builder_.CreateInBoundsGEP(element, base, emit(index));
    store = builder_.CreateMaskedScatter(value, pointers,
                                         llvm::Align(std::bit_floor(uint64_t(element_bytes))));
  }
  annotate_access(store, buffer);
}

void CodeGenLLVM::emit_for(const ForNode* node) {
  if (node->for_kind == ForKind::Parallel && !fn_.in_parallel) return emit_parallel_for(node);
  llvm::Value* begin = emit(node->min);
  llvm::Value* extent = emit(node->extent);
  llvm::Value* end = builder_.CreateAdd(begin, extent, "", false, node->loop_var->dtype.is_int());
  std::vector<llvm::Metadata*> properties;
  auto flag = [&](const char* name) {
    properties.push_back(llvm::MDNode::get(context_, {llvm::MDString::get(context_, name)}));
  };
  if (node->for_kind == ForKind::Unrolled) {
    flag(as_const_int(node->extent) ? "llvm.loop.unroll.full" : "llvm.loop.unroll.enable");
  } else if (node->for_kind == ForKind::Vectorized) {
    properties.push_back(
        llvm::MDNode::get(context_, {llvm::MDString::get(context_, "llvm.loop.vectorize.enable"),
                                     llvm::ConstantAsMetadata::get(builder_.getTrue())}));
  }
  emit_loop(node->loop_var, begin, end, node->body, properties);
}

void CodeGenLLVM::emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, const Stmt& body,
                            const std::vector<llvm::Metadata*>& loop_properties) {
  llvm::Function* function = fn_.function;
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "for_begin_" + var->name, function);
  auto* body_block = llvm::BasicBlock::Create(context_, "for_body_" + var->name, function);
  auto* exit = llvm::BasicBlock::Create(context_, "for_end_" + var->name, function);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* index = builder_.CreatePHI(begin->getType(), 2, var->name);
  index->addIncoming(begin, preheader);
  bool is_signed = !var->dtype.is_uint();
  llvm::Value* more =
      is_signed ? builder_.CreateICmpSLT(index, end) : builder_.CreateICmpULT(index, end);
  builder_.CreateCondBr(more, body_block, exit);
  builder_.SetInsertPoint(body_block);
  fn_.vars[var.get()] = index;
  emit(body);
  fn_.vars.erase(var.get());
  llvm::Value* next =
      builder_.CreateAdd(index, llvm::ConstantInt::get(index->getType(), 1), "", false, is_signed);
  llvm::BranchInst* back_edge = builder_.CreateBr(header);
  index->addIncoming(next, builder_.GetInsertBlock());
  if (!loop_properties.empty()) {
    std::vector<llvm::Metadata*> operands = {nullptr};
    operands.insert(operands.end(), loop_properties.begin(), loop_properties.end());
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(context_, operands);
    loop_id->replaceOperandWith(0, loop_id);
    back_edge->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }
  builder_.SetInsertPoint(exit);
}

void CodeGenLLVM::emit_allocate(const AllocateNode* node) {
  const Buffer& buffer = node->buffer;
  llvm::Type* element = memory_type(buffer->dtype);
  int64_t element_bytes = buffer->dtype.bytes();
  std::optional<int64_t> constant_count = 1;
  for (const PrimExpr& extent : buffer->shape) {
    std::optional<int64_t> value = as_const_int(extent);
    constant_count =
        value && constant_count ? std::optional(*constant_count * *value) : std::nullopt;
  }
  constexpr int64_t kAlignment = 64;
  if (constant_count && *constant_count * element_bytes <= kMaxStackAllocationBytes) {
    // In the entry block, so that a loop around the allocation does not grow the stack.
    llvm::BasicBlock& entry = fn_.function->getEntryBlock();
    llvm::IRBuilder<> entry_builder(&entry, entry.getFirstInsertionPt());
    auto* storage = entry_builder.CreateAlloca(
        element, entry_builder.getInt64(std::max<int64_t>(*constant_count, 1)), buffer->name);
    storage->setAlignment(llvm::Align(kAlignment));
    pointers_[buffer->data.get()].alignment = kAlignment;
    bind(buffer->data, storage);
    emit(node->body);
    fn_.vars.erase(buffer->data.get());
    return;
  }
  llvm::Value* count = builder_.getInt64(1);
  for (const PrimExpr& extent : buffer->shape)
    count = builder_.CreateMul(count,
                               builder_.CreateIntCast(emit(extent), builder_.getInt64Ty(), true));
  llvm::Value* bytes = builder_.CreateMul(count, builder_.getInt64(element_bytes));
  llvm::Value* storage = builder_.CreateCall(runtime_function("AnvilBackendAllocWorkspace"),
                                             {bytes, builder_.getInt64(kAlignment)}, buffer->name);
  emit_error_return_if(builder_.CreateIsNull(storage), "alloc");
  pointers_[buffer->data.get()].alignment = kAlignment;
  bind(buffer->data, storage);
  fn_.live_workspaces.push_back(storage);
  emit(node->body);
  fn_.live_workspaces.pop_back();
  fn_.vars.erase(buffer->data.get());
  llvm::Value* status =
      builder_.CreateCall(runtime_function("AnvilBackendFreeWorkspace"), {storage});
  emit_error_return_if(builder_.CreateICmpNE(status, builder_.getInt32(0)), "free");
}

void CodeGenLLVM::emit_error_return_if(llvm::Value* failed, const std::string& what) {
  auto* on_failure = llvm::BasicBlock::Create(context_, what + "_failed", fn_.function);
  auto* on_success = llvm::BasicBlock::Create(context_, what + "_ok", fn_.function);
  builder_.CreateCondBr(failed, on_failure, on_success, md_.createBranchWeights(1, 1 << 20));
  builder_.SetInsertPoint(on_failure);
  emit_error_return();
  builder_.SetInsertPoint(on_success);
}

void CodeGenLLVM::emit_error_return() {
  for (auto it = fn_.live_workspaces.rbegin(); it != fn_.live_workspaces.rend(); ++it)
    builder_.CreateCall(runtime_function("AnvilBackendFreeWorkspace"), {*it});
  leave_amx_region();
  builder_.CreateRet(builder_.getInt32(-1));
}

void CodeGenLLVM::emit_assert(const AssertStmtNode* node) {
  llvm::Value* condition = emit(node->condition);
  auto* fail = llvm::BasicBlock::Create(context_, "assert_fail", fn_.function);
  auto* pass = llvm::BasicBlock::Create(context_, "assert_pass", fn_.function);
  builder_.CreateCondBr(condition, pass, fail, md_.createBranchWeights(1 << 20, 1));
  builder_.SetInsertPoint(fail);
  builder_.CreateCall(runtime_function("AnvilSetLastError"), {string_constant(node->message)});
  emit_error_return();
  builder_.SetInsertPoint(pass);
  emit(node->body);
}

void CodeGenLLVM::emit_if(const IfThenElseNode* node) {
  llvm::MDNode* weights = nullptr;
  if (auto* call = as<CallNode>(node->condition); call && call->op == "likely")
    weights = md_.createBranchWeights(2000, 1);
  llvm::Value* condition = emit(node->condition);
  auto* then_block = llvm::BasicBlock::Create(context_, "if_then", fn_.function);
  auto* end_block = llvm::BasicBlock::Create(context_, "if_end", fn_.function);
  llvm::BasicBlock* else_block = end_block;
  if (node->else_case) else_block = llvm::BasicBlock::Create(context_, "if_else", fn_.function);
  builder_.CreateCondBr(condition, then_block, else_block, weights);
  builder_.SetInsertPoint(then_block);
  emit(node->then_case);
  builder_.CreateBr(end_block);
  if (node->else_case) {
    builder_.SetInsertPoint(else_block);
    emit(node->else_case);
    builder_.CreateBr(end_block);
  }
  builder_.SetInsertPoint(end_block);
}

}  // namespace anvil::codegen::llvm_backend
