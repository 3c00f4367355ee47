// AMX tiles: the amx_* builtins (src/tir/intrinsics.cpp) as LLVM's x86 tile intrinsics with
// fixed tile numbers, and the tile configuration they need.
//
// A tile's shape lives in the tile configuration (ldtilecfg), which is per thread. Each LLVM
// function that issues tile instructions itself (a kernel, or the outlined body of a parallel
// loop, which runs on a worker thread) therefore loads a configuration made from the shapes
// its calls name, once on entry, and releases the tiles before it returns. The kernel's entry
// point also asks the runtime, once per process, for the permission to use the tile state.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <map>

#include "anvil/support/error.h"
#include "anvil/tir/functor.h"
#include "codegen/llvm/codegen_llvm.h"

namespace anvil::codegen::llvm_backend {

using namespace tir;  // NOLINT

namespace {

bool is_amx_call(const CallNode* call) {
  return call->call_kind != CallKind::Extern && call->op.starts_with("amx_");
}

// The tile shapes named by the amx_* calls of a statement; those inside parallel loops only
// when asked (a parallel body is a function of its own).
class TileShapeCollector : public Visitor {
 public:
  explicit TileShapeCollector(bool into_parallel) : into_parallel_(into_parallel) {}

  std::map<int64_t, std::pair<int64_t, int64_t>> shapes;  // tile -> (rows, colsb)
  bool any = false;
  std::string conflict;

  void visit_For(const ForNode* node) override {
    if (node->for_kind == ForKind::Parallel && !into_parallel_) return;
    Visitor::visit_For(node);
  }
  void visit_Call(const CallNode* node) override {
    Visitor::visit_Call(node);
    if (!is_amx_call(node)) return;
    any = true;
    if (node->op.starts_with("amx_dp")) return;  // its tiles' shapes come from loads and stores
    auto constant = [&](size_t i) { return as_const_int(node->args[i]); };
    auto tile = constant(0), rows = constant(1), colsb = constant(2);
    if (!tile || !rows || !colsb) {
      conflict = node->op + " takes a constant tile number, row count and row width";
      return;
    }
    if (*tile < 0 || *tile > 7 || *rows < 1 || *rows > 16 || *colsb < 4 || *colsb > 64 ||
        *colsb % 4 != 0) {
      conflict = node->op + " names tile " + std::to_string(*tile) + " of " +
                 std::to_string(*rows) + " x " + std::to_string(*colsb) +
                 " bytes (tiles 0-7 hold at most 16 rows of 64 bytes, in 4-byte units)";
      return;
    }
    auto [it, inserted] = shapes.emplace(*tile, std::make_pair(*rows, *colsb));
    if (!inserted && it->second != std::make_pair(*rows, *colsb))
      conflict = "tile " + std::to_string(*tile) + " is used as " +
                 std::to_string(it->second.first) + " x " + std::to_string(it->second.second) +
                 " and as " + std::to_string(*rows) + " x " + std::to_string(*colsb) +
                 " bytes in one function";
  }

 private:
  bool into_parallel_;
};

}  // namespace

void CodeGenLLVM::enter_amx_region(const Stmt& body, bool entry_point) {
  // A parallel loop inside a parallel body runs in that body's function.
  TileShapeCollector direct(/*into_parallel=*/fn_.in_parallel);
  direct.visit(body);
  bool any = direct.any;
  if (entry_point && !any) {
    TileShapeCollector all(/*into_parallel=*/true);
    all.visit(body);
    any = all.any;
  }
  if (!any) return;
  if (!direct.conflict.empty())
    throw_error("LLVM code generation of '", current_symbol_, "': ", direct.conflict);
  if (!target_.amx_bf16)
    throw_error("LLVM code generation of '", current_symbol_,
                "': the kernel uses AMX tiles, which the target lacks (add -mattr=+amx-tile,"
                "+amx-bf16, or build it for this target again)");
  if (entry_point) {
    llvm::Value* status = builder_.CreateCall(runtime_function("AnvilBackendRequestAMX"), {});
    emit_error_return_if(builder_.CreateICmpNE(status, builder_.getInt32(0)), "amx_permission");
  }
  if (direct.shapes.empty()) return;
  // The 64-byte configuration: palette 1, then each tile's bytes per row (16-bit, from byte 16)
  // and rows (8-bit, from byte 48); unused tiles stay 0 x 0.
  llvm::Type* i8 = builder_.getInt8Ty();
  llvm::AllocaInst* config;
  {
    llvm::BasicBlock& entry = fn_.function->getEntryBlock();
    llvm::IRBuilder<> entry_builder(&entry, entry.getFirstInsertionPt());
    config = entry_builder.CreateAlloca(llvm::ArrayType::get(i8, 64), nullptr, "tile_config");
    config->setAlignment(llvm::Align(64));
  }
  builder_.CreateMemSet(config, builder_.getInt8(0), 64, llvm::Align(64));
  builder_.CreateStore(builder_.getInt8(1), config);
  for (const auto& [tile, shape] : direct.shapes) {
    builder_.CreateAlignedStore(builder_.getInt16(uint16_t(shape.second)),
                                builder_.CreateConstInBoundsGEP1_64(i8, config, 16 + 2 * tile),
                                llvm::Align(2));
    builder_.CreateStore(builder_.getInt8(uint8_t(shape.first)),
                         builder_.CreateConstInBoundsGEP1_64(i8, config, 48 + tile));
  }
  builder_.CreateIntrinsic(llvm::Intrinsic::x86_ldtilecfg, {}, {config});
  fn_.tiles_configured = true;
}

void CodeGenLLVM::leave_amx_region() {
  if (fn_.tiles_configured) builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilerelease, {}, {});
}

llvm::Value* CodeGenLLVM::emit_amx_call(const CallNode* call) {
  if (!target_.amx_bf16)
    throw_error("LLVM code generation of '", current_symbol_, "': ", call->op,
                " needs AMX tiles, which the target lacks");
  if (!fn_.tiles_configured)
    throw_error("LLVM code generation of '", current_symbol_, "': ", call->op,
                " outside the function whose tiles were configured");
  auto tile = [&](size_t i) {
    auto value = as_const_int(call->args[i]);
    if (!value || *value < 0 || *value > 7)
      throw_error("LLVM code generation of '", current_symbol_, "': ", call->op,
                  " takes tile numbers 0-7 as constants");
    return builder_.getInt8(uint8_t(*value));
  };
  const std::string& op = call->op;
  if (op == "amx_tile_load" || op == "amx_tile_store") {
    llvm::Value* address = emit(call->args[3]);
    llvm::Value* stride = builder_.CreateIntCast(emit(call->args[4]), builder_.getInt64Ty(), true);
    builder_.CreateIntrinsic(op == "amx_tile_load" ? llvm::Intrinsic::x86_tileloadd64
                                                   : llvm::Intrinsic::x86_tilestored64,
                             {}, {tile(0), address, stride});
  } else if (op == "amx_tile_zero") {
    builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilezero, {}, {tile(0)});
  } else if (op == "amx_dpbf16ps") {
    builder_.CreateIntrinsic(llvm::Intrinsic::x86_tdpbf16ps, {}, {tile(0), tile(1), tile(2)});
  } else if (op == "amx_dpbusd") {
    if (!target_.amx_int8)
      throw_error("LLVM code generation of '", current_symbol_,
                  "': amx_dpbusd needs AMX-INT8, which the target lacks");
    builder_.CreateIntrinsic(llvm::Intrinsic::x86_tdpbusd, {}, {tile(0), tile(1), tile(2)});
  } else {
    throw_error("LLVM code generation of '", current_symbol_, "': unknown AMX builtin '", op, "'");
  }
  return builder_.getInt32(0);
}

}  // namespace anvil::codegen::llvm_backend
