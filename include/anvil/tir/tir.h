// The tensor IR (TVM's TIR): loops, buffers and blocks that every operator is
// lowered to before code generation. Nodes are immutable, refcounted structs
// built with make(); the kinds are listed once in node_kinds.def.
//
// Two forms share these nodes:
//  - scheduled form: the body is a tree of For loops and BlockRealize/Block
//    statements whose iteration variables say what each loop means (spatial
//    or reduction); schedule primitives work here;
//  - lowered form (after tir/transform's pipeline): no blocks, every buffer
//    flattened to one dimension, local buffers introduced by Allocate.
//    Code generators accept only this form.
//
// Index arithmetic is int64 throughout: shapes come from DLTensor (int64) and
// the width costs nothing on x86-64.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "anvil/ir/ir.h"
#include "anvil/runtime/data_type.h"
#include "anvil/support/ref.h"

namespace anvil::tir {

enum class ExprKind : uint8_t {
#define ANVIL_TIR_EXPR(Name) Name,
#include "anvil/tir/node_kinds.def"
};

enum class StmtKind : uint8_t {
#define ANVIL_TIR_STMT(Name) Name,
#include "anvil/tir/node_kinds.def"
};

// "Add", "BufferLoad", ...
const char* expr_kind_name(ExprKind kind);
const char* stmt_kind_name(StmtKind kind);

// The type of index arithmetic, loop variables and shapes.
inline constexpr DataType kIndexType = DataType::int64();

// ---------------------------------------------------------------- expressions

struct PrimExprNode : RefCounted {
  const ExprKind kind;
  DataType dtype;
  PrimExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
};

// A scalar or vector expression. Arithmetic operators build nodes and fold
// constants (2 + 3 is IntImm 5, x * 1 is x), nothing more; the simplifier in
// tir/arith does the rest. Plain integers convert to int64 immediates.
class PrimExpr : public Ref<const PrimExprNode> {
 public:
  PrimExpr() = default;
  PrimExpr(std::nullptr_t) {}                        // NOLINT
  PrimExpr(int64_t value);                           // NOLINT: literals in index arithmetic
  PrimExpr(int value) : PrimExpr(int64_t(value)) {}  // NOLINT
  template <typename T>
  PrimExpr(const Ref<T>& node) : Ref<const PrimExprNode>(node) {}  // NOLINT
  DataType dtype() const { return get()->dtype; }
  ExprKind kind() const { return get()->kind; }
};

// The node as T when its kind matches, else nullptr.
template <typename T>
const T* as(const PrimExpr& e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}

struct IntImmNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value = 0;
  IntImmNode() : PrimExprNode(kKind, kIndexType) {}
  // An integer or bool immediate; value is wrapped to dtype's width.
  static Ref<const IntImmNode> make(DataType dtype, int64_t value);
};
using IntImm = Ref<const IntImmNode>;

struct FloatImmNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value = 0;
  FloatImmNode() : PrimExprNode(kKind, DataType::float32()) {}
  static Ref<const FloatImmNode> make(DataType dtype, double value);
};
using FloatImm = Ref<const FloatImmNode>;

// A string argument of an extern call (e.g. an error message).
struct StringImmNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::StringImm;
  std::string value;
  StringImmNode() : PrimExprNode(kKind, DataType::handle()) {}
  static Ref<const StringImmNode> make(std::string value);
};
using StringImm = Ref<const StringImmNode>;

// A variable. Identity is the node (two Vars named "i" are different
// variables); the name is only for printing. A buffer's data pointer is a
// Var of dtype handle.
struct VarNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  VarNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const VarNode> make(std::string name, DataType dtype = kIndexType);
};
using Var = Ref<const VarNode>;

// a op b for the binary kinds of node_kinds.def. Arithmetic kinds have the
// operands' dtype; comparisons and And/Or have bool with the operands' lanes.
// Div and Mod truncate toward zero (C semantics) on integers; FloorDiv and
// FloorMod round toward negative infinity. On floats Div is division.
template <ExprKind K>
struct BinaryNode : PrimExprNode {
  static constexpr ExprKind kKind = K;
  PrimExpr a, b;
  BinaryNode() : PrimExprNode(kKind, kIndexType) {}
  // Builds the node without folding; operands must share a dtype.
  static Ref<const BinaryNode> make(PrimExpr a, PrimExpr b);
};
#define ANVIL_TIR_BINARY(Name) using Name##Node = BinaryNode<ExprKind::Name>;
#include "anvil/tir/node_kinds.def"

// True for the comparison and logical kinds (bool result).
bool is_comparison(ExprKind kind);
// True for the binary kinds listed with ANVIL_TIR_BINARY.
bool is_binary(ExprKind kind);
// The two operands of a node of a binary kind (a, b); both null for any other kind.
void binary_operands(const PrimExprNode* node, const PrimExpr*& a, const PrimExpr*& b);

struct NotNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  PrimExpr a;
  NotNode() : PrimExprNode(kKind, DataType::boolean()) {}
  static Ref<const NotNode> make(PrimExpr a);
};

// cond ? true_value : false_value; both sides are evaluated.
struct SelectNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  PrimExpr condition, true_value, false_value;
  SelectNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const SelectNode> make(PrimExpr condition, PrimExpr true_value, PrimExpr false_value);
};

struct CastNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  PrimExpr value;
  CastNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const CastNode> make(DataType dtype, PrimExpr value);
};

struct BufferNode;
using Buffer = Ref<const BufferNode>;

// buffer[indices]. A Ramp index (lowered form) loads a vector; dtype is the
// buffer's element type with the index's lanes.
struct BufferLoadNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::BufferLoad;
  Buffer buffer;
  std::vector<PrimExpr> indices;
  BufferLoadNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const BufferLoadNode> make(Buffer buffer, std::vector<PrimExpr> indices);
};
using BufferLoad = Ref<const BufferLoadNode>;

// The vector (base, base + stride, ..., base + (lanes - 1) * stride).
struct RampNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  PrimExpr base, stride;
  int lanes = 1;
  RampNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const RampNode> make(PrimExpr base, PrimExpr stride, int lanes);
};

// A scalar repeated in every lane.
struct BroadcastNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  PrimExpr value;
  int lanes = 1;
  BroadcastNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const BroadcastNode> make(PrimExpr value, int lanes);
};

// let var = value in body.
struct LetNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Let;
  Var var;
  PrimExpr value, body;
  LetNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const LetNode> make(Var var, PrimExpr value, PrimExpr body);
};

// Intrinsics are anvil's own (math functions, address_of, likely, ...; the
// table is in tir/intrinsics.h); Extern calls a C function by name.
enum class CallKind : uint8_t { Intrinsic, Extern };

struct CallNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  std::string op;
  std::vector<PrimExpr> args;
  CallKind call_kind = CallKind::Intrinsic;
  CallNode() : PrimExprNode(kKind, kIndexType) {}
  // An intrinsic must be in the table and get its arity; an extern may be anything.
  static Ref<const CallNode> make(DataType dtype, std::string op, std::vector<PrimExpr> args,
                                  CallKind call_kind = CallKind::Intrinsic);
};
using Call = Ref<const CallNode>;

// ---------------------------------------------------------------- ranges, iteration variables

// [min, min + extent).
struct Range {
  PrimExpr min, extent;
  static Range from_min_extent(PrimExpr min, PrimExpr extent) { return {min, extent}; }
};

// What a block iteration variable means. Spatial variables index the output;
// Reduce variables are folded by the block's reduction; Opaque ones are
// neither (schedule primitives treat them conservatively).
enum class IterKind : uint8_t { Spatial, Reduce, Opaque };

// A block iteration variable (TVM's IterVar) or a TE axis.
struct IterVar {
  Var var;
  Range dom;
  IterKind kind = IterKind::Spatial;
};

enum class ReduceKind : uint8_t { Sum, Prod, Min, Max };

// A reduction inside a TE compute body: combiner over source for every point
// of axis where condition holds (TVM's te.sum/te.max/te.min). Never appears in
// a PrimFunc.
struct ReduceNode : PrimExprNode {
  static constexpr ExprKind kKind = ExprKind::Reduce;
  ReduceKind combiner = ReduceKind::Sum;
  PrimExpr source;
  std::vector<IterVar> axis;
  PrimExpr condition;  // null: always
  ReduceNode() : PrimExprNode(kKind, kIndexType) {}
  static Ref<const ReduceNode> make(ReduceKind combiner, PrimExpr source, std::vector<IterVar> axis,
                                    PrimExpr condition = nullptr);
};

// The identity of a combiner for dtype (0 for Sum, lowest value for Max, ...).
PrimExpr reduce_identity(ReduceKind combiner, DataType dtype);
// combiner(a, b).
PrimExpr reduce_combine(ReduceKind combiner, PrimExpr a, PrimExpr b);

// ---------------------------------------------------------------- buffers

// A multi-dimensional view of memory. Identity is the node. strides empty
// means compact row-major. scope is "global" (a parameter or heap memory) or
// "local" (private to the function; codegen may keep it on the stack or in
// registers). The data pointer is the handle Var `data`; a flattened buffer
// shares its original's data Var.
struct BufferNode : RefCounted {
  Var data;
  DataType dtype;
  std::vector<PrimExpr> shape;
  std::vector<PrimExpr> strides;
  PrimExpr elem_offset;  // in elements; IntImm 0 unless a view
  std::string name;
  std::string scope = "global";
  int data_alignment = 64;

  // A compact buffer with a fresh data Var named after the buffer.
  static Buffer make(std::string name, DataType dtype, std::vector<PrimExpr> shape,
                     std::string scope = "global");
  // Every field given.
  static Buffer make_full(Var data, DataType dtype, std::vector<PrimExpr> shape,
                          std::vector<PrimExpr> strides, PrimExpr elem_offset, std::string name,
                          std::string scope, int data_alignment);
  int ndim() const { return int(shape.size()); }
  // Strides in elements: the explicit ones, or row-major strides of shape.
  std::vector<PrimExpr> effective_strides() const;
};

// buffer[region]: the part of a buffer a block reads or writes.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  // The whole buffer.
  static BufferRegion full(Buffer buffer);
};

// ---------------------------------------------------------------- statements

struct StmtNode : RefCounted {
  const StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
};
using Stmt = Ref<const StmtNode>;

template <typename T>
const T* as(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

// Free-form annotations on loops and blocks ("pragma_unroll", "meta_schedule.tile", ...).
using AnnotationValue = std::variant<int64_t, std::string>;
using Annotations = std::map<std::string, AnnotationValue>;

struct LetStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  Var var;
  PrimExpr value;
  Stmt body;
  LetStmtNode() : StmtNode(kKind) {}
  static Ref<const LetStmtNode> make(Var var, PrimExpr value, Stmt body);
};

// Checks condition; when false the function fails with message (a user
// error at run time, e.g. a shape mismatch on entry).
struct AssertStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::AssertStmt;
  PrimExpr condition;
  std::string message;
  Stmt body;
  AssertStmtNode() : StmtNode(kKind) {}
  static Ref<const AssertStmtNode> make(PrimExpr condition, std::string message, Stmt body);
};

// buffer[indices] = value.
struct BufferStoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::BufferStore;
  Buffer buffer;
  PrimExpr value;
  std::vector<PrimExpr> indices;
  BufferStoreNode() : StmtNode(kKind) {}
  static Ref<const BufferStoreNode> make(Buffer buffer, PrimExpr value,
                                         std::vector<PrimExpr> indices);
};
using BufferStore = Ref<const BufferStoreNode>;

// Storage for buffer (its shape's product of elements) live during body.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Buffer buffer;
  Stmt body;
  AllocateNode() : StmtNode(kKind) {}
  static Ref<const AllocateNode> make(Buffer buffer, Stmt body);
};

// Serial, Parallel (iterations spread over the thread pool), Vectorized
// (iterations become vector lanes), Unrolled (body repeated).
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled };
const char* for_kind_name(ForKind kind);  // "serial", "parallel", ...

// for loop_var in [min, min + extent): body.
struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var loop_var;
  PrimExpr min, extent;
  ForKind for_kind = ForKind::Serial;
  Stmt body;
  Annotations annotations;
  ForNode() : StmtNode(kKind) {}
  static Ref<const ForNode> make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind for_kind,
                                 Stmt body, Annotations annotations = {});
};
using For = Ref<const ForNode>;

struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  PrimExpr condition;
  Stmt then_case;
  Stmt else_case;  // may be null
  IfThenElseNode() : StmtNode(kKind) {}
  static Ref<const IfThenElseNode> make(PrimExpr condition, Stmt then_case,
                                        Stmt else_case = nullptr);
};

struct SeqStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::SeqStmt;
  std::vector<Stmt> seq;
  SeqStmtNode() : StmtNode(kKind) {}
  // At least two statements; use seq_stmt() to build from any number.
  static Ref<const SeqStmtNode> make(std::vector<Stmt> seq);
};

// Evaluates value for its effect (an extern call).
struct EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Evaluate;
  PrimExpr value;
  EvaluateNode() : StmtNode(kKind) {}
  static Ref<const EvaluateNode> make(PrimExpr value);
};

// A unit of computation with its own iteration space (TVM's block): body runs
// once per point of iter_vars; init (if any) runs before the first reduction
// step of each spatial point. reads/writes summarize its buffer accesses in
// terms of iter_vars; alloc_buffers are local to it.
struct BlockNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  std::vector<IterVar> iter_vars;
  std::vector<BufferRegion> reads, writes;
  std::string name;
  Stmt body;
  Stmt init;  // may be null
  std::vector<Buffer> alloc_buffers;
  Annotations annotations;
  BlockNode() : StmtNode(kKind) {}
  static Ref<const BlockNode> make(std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                                   std::vector<BufferRegion> writes, std::string name, Stmt body,
                                   Stmt init = nullptr, std::vector<Buffer> alloc_buffers = {},
                                   Annotations annotations = {});
};
using Block = Ref<const BlockNode>;

// One execution of block for iter_vars bound to iter_values (expressions of
// the surrounding loop variables), when predicate holds.
struct BlockRealizeNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::BlockRealize;
  std::vector<PrimExpr> iter_values;
  PrimExpr predicate;  // a bool expression; true when unconditioned
  Block block;
  BlockRealizeNode() : StmtNode(kKind) {}
  static Ref<const BlockRealizeNode> make(std::vector<PrimExpr> iter_values, PrimExpr predicate,
                                          Block block);
};
using BlockRealize = Ref<const BlockRealizeNode>;

// ---------------------------------------------------------------- builders

// Immediates.
PrimExpr make_const(DataType dtype, double value);
PrimExpr make_int(int64_t value, DataType dtype = kIndexType);
PrimExpr const_true(int lanes = 1);
PrimExpr const_false(int lanes = 1);
// The value of an integer immediate (or a broadcast of one), if e is one.
std::optional<int64_t> as_const_int(const PrimExpr& e);
bool is_const_int(const PrimExpr& e, int64_t value);
bool is_zero(const PrimExpr& e);
bool is_one(const PrimExpr& e);

// Arithmetic with constant folding. An int64 immediate operand takes the
// other operand's integer dtype; otherwise dtypes must match.
PrimExpr operator+(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a);
PrimExpr operator*(PrimExpr a, PrimExpr b);
// Division: on floats plain, on integers floor division (what index
// arithmetic almost always means; truncdiv gives C semantics).
PrimExpr operator/(PrimExpr a, PrimExpr b);
PrimExpr operator%(PrimExpr a, PrimExpr b);  // floormod on integers
PrimExpr floordiv(PrimExpr a, PrimExpr b);
PrimExpr floormod(PrimExpr a, PrimExpr b);
PrimExpr truncdiv(PrimExpr a, PrimExpr b);
PrimExpr truncmod(PrimExpr a, PrimExpr b);
PrimExpr min(PrimExpr a, PrimExpr b);
PrimExpr max(PrimExpr a, PrimExpr b);
// ==, !=, &&, || and ! keep their meaning on the Ref (identity, null tests),
// so the IR nodes for them are built by name.
PrimExpr eq(PrimExpr a, PrimExpr b);
PrimExpr ne(PrimExpr a, PrimExpr b);
PrimExpr operator<(PrimExpr a, PrimExpr b);
PrimExpr operator<=(PrimExpr a, PrimExpr b);
PrimExpr operator>(PrimExpr a, PrimExpr b);
PrimExpr operator>=(PrimExpr a, PrimExpr b);
PrimExpr logical_and(PrimExpr a, PrimExpr b);
PrimExpr logical_or(PrimExpr a, PrimExpr b);
PrimExpr logical_not(PrimExpr a);
PrimExpr select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value);
// A no-op when value already has dtype.
PrimExpr cast(DataType dtype, PrimExpr value);
PrimExpr ramp(PrimExpr base, PrimExpr stride, int lanes);
PrimExpr broadcast(PrimExpr value, int lanes);
PrimExpr let(Var var, PrimExpr value, PrimExpr body);
PrimExpr load(Buffer buffer, std::vector<PrimExpr> indices);
// Math intrinsics: the result has x's dtype.
PrimExpr call_intrin(DataType dtype, std::string op, std::vector<PrimExpr> args);
PrimExpr call_extern(DataType dtype, std::string name, std::vector<PrimExpr> args);
// Reductions for TE bodies.
PrimExpr sum(PrimExpr source, std::vector<IterVar> axis, PrimExpr condition = nullptr);
PrimExpr max_reduce(PrimExpr source, std::vector<IterVar> axis, PrimExpr condition = nullptr);
PrimExpr min_reduce(PrimExpr source, std::vector<IterVar> axis, PrimExpr condition = nullptr);

// Statements.
Stmt store(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices);
// Flattens nested sequences; one statement is returned as itself; none is an
// empty Evaluate(0).
Stmt seq_stmt(std::vector<Stmt> stmts);
Stmt evaluate(PrimExpr value);
// A serial loop of extent over a fresh variable named name.
Stmt for_loop(Var loop_var, PrimExpr min, PrimExpr extent, Stmt body,
              ForKind kind = ForKind::Serial);
// A reduce/spatial iteration variable over [0, extent).
IterVar iter_var(std::string name, PrimExpr extent, IterKind kind = IterKind::Spatial);

}  // namespace anvil::tir

// ---------------------------------------------------------------- functions

namespace anvil::ir {

// A tensor-IR function: params are Vars (a handle per tensor argument, an
// int64 per scalar); buffer_map gives the Buffer each handle param is seen
// through, whose shape may use symbolic Vars (TVM's T.match_buffer(x, (1, n)))
// that are bound from the tensor at the call. Attrs: "global_symbol" (the
// exported name), "tir.noalias" (1 when buffers never overlap).
struct PrimFuncNode : BaseFuncNode {
  static constexpr ExprKind kKind = ExprKind::PrimFunc;
  std::vector<tir::Var> params;
  std::vector<std::pair<tir::Var, tir::Buffer>> buffer_map;
  tir::Stmt body;

  PrimFuncNode() : BaseFuncNode(kKind) {}
  static Ref<const PrimFuncNode> make(std::vector<tir::Var> params,
                                      std::vector<std::pair<tir::Var, tir::Buffer>> buffer_map,
                                      tir::Stmt body, DictAttrs attrs = {});
  // The buffer bound to param, or null for a scalar param.
  tir::Buffer buffer_of(const tir::Var& param) const;
  // func_attrs' "global_symbol", or "" when unset.
  std::string global_symbol() const;
  // A copy with body replaced.
  Ref<const PrimFuncNode> with_body(tir::Stmt new_body) const;
};

}  // namespace anvil::ir

namespace anvil::tir {
using PrimFuncNode = ir::PrimFuncNode;
using PrimFunc = Ref<const PrimFuncNode>;
}  // namespace anvil::tir
