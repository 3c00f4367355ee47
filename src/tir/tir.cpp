// Node constructors of the tensor IR: each checks the typing rules of its
// node, so a malformed tree fails where it is built, not in code generation.
#include "anvil/tir/tir.h"

#include "anvil/support/error.h"
#include "anvil/tir/intrinsics.h"

namespace anvil::tir {

const char* expr_kind_name(ExprKind kind) {
  switch (kind) {
#define ANVIL_TIR_EXPR(Name) \
  case ExprKind::Name:       \
    return #Name;
#include "anvil/tir/node_kinds.def"
  }
  return "?";
}

const char* stmt_kind_name(StmtKind kind) {
  switch (kind) {
#define ANVIL_TIR_STMT(Name) \
  case StmtKind::Name:       \
    return #Name;
#include "anvil/tir/node_kinds.def"
  }
  return "?";
}

const char* for_kind_name(ForKind kind) {
  switch (kind) {
    case ForKind::Serial:
      return "serial";
    case ForKind::Parallel:
      return "parallel";
    case ForKind::Vectorized:
      return "vectorized";
    case ForKind::Unrolled:
      return "unroll";
  }
  return "?";
}

bool is_binary(ExprKind kind) {
  switch (kind) {
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name) case ExprKind::Name:
#include "anvil/tir/node_kinds.def"
    return true;
    default:
      return false;
  }
}

void binary_operands(const PrimExprNode* node, const PrimExpr*& a, const PrimExpr*& b) {
  switch (node->kind) {
#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name)                                 \
  case ExprKind::Name: {                                       \
    const auto* binary = static_cast<const Name##Node*>(node); \
    a = &binary->a;                                            \
    b = &binary->b;                                            \
    return;                                                    \
  }
#include "anvil/tir/node_kinds.def"
    default:
      a = b = nullptr;
  }
}

bool is_comparison(ExprKind kind) {
  switch (kind) {
    case ExprKind::EQ:
    case ExprKind::NE:
    case ExprKind::LT:
    case ExprKind::LE:
    case ExprKind::GT:
    case ExprKind::GE:
    case ExprKind::And:
    case ExprKind::Or:
      return true;
    default:
      return false;
  }
}

PrimExpr::PrimExpr(int64_t value) : Ref<const PrimExprNode>(IntImmNode::make(kIndexType, value)) {}

// ---------------------------------------------------------------- node constructors

namespace {

int64_t wrap_to(DataType dtype, int64_t value) {
  if (dtype.is_bool()) return value != 0;
  if (dtype.bits >= 64) return value;
  uint64_t mask = (uint64_t(1) << dtype.bits) - 1;
  uint64_t bits = uint64_t(value) & mask;
  if (dtype.is_int() && (bits >> (dtype.bits - 1)) & 1) bits |= ~mask;
  return int64_t(bits);
}

void check_defined(const PrimExpr& e, const char* what) {
  ANVIL_ICHECK(e, "tensor IR: ", what, " is null");
}

}  // namespace

Ref<const IntImmNode> IntImmNode::make(DataType dtype, int64_t value) {
  ANVIL_ICHECK(dtype.is_int() || dtype.is_uint() || dtype.is_bool(), "IntImm of non-integer type ",
               dtype.to_string());
  ANVIL_ICHECK(dtype.lanes == 1, "IntImm must be scalar");
  auto n = make_ref<IntImmNode>();
  n->dtype = dtype;
  n->value = wrap_to(dtype, value);
  return n;
}

Ref<const FloatImmNode> FloatImmNode::make(DataType dtype, double value) {
  ANVIL_ICHECK((dtype.is_float() || dtype.is_bfloat() || dtype.is_minifloat()) && dtype.lanes == 1,
               "FloatImm of type ", dtype.to_string());
  auto n = make_ref<FloatImmNode>();
  n->dtype = dtype;
  n->value = value;
  return n;
}

Ref<const StringImmNode> StringImmNode::make(std::string value) {
  auto n = make_ref<StringImmNode>();
  n->value = std::move(value);
  return n;
}

Ref<const VarNode> VarNode::make(std::string name, DataType dtype) {
  auto n = make_ref<VarNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  return n;
}

template <ExprKind K>
Ref<const BinaryNode<K>> BinaryNode<K>::make(PrimExpr a, PrimExpr b) {
  check_defined(a, "binary operand");
  check_defined(b, "binary operand");
  ANVIL_ICHECK(a.dtype() == b.dtype(), expr_kind_name(K), " of mismatched types ",
               a.dtype().to_string(), " and ", b.dtype().to_string());
  auto n = make_ref<BinaryNode<K>>();
  if (K == ExprKind::And || K == ExprKind::Or)
    ANVIL_ICHECK(a.dtype().is_bool(), expr_kind_name(K), " of non-bool ", a.dtype().to_string());
  n->dtype = is_comparison(K) ? DataType::boolean().with_lanes(a.dtype().lanes) : a.dtype();
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

#define ANVIL_TIR_EXPR(Name)
#define ANVIL_TIR_BINARY(Name) template struct BinaryNode<ExprKind::Name>;
#include "anvil/tir/node_kinds.def"

Ref<const NotNode> NotNode::make(PrimExpr a) {
  check_defined(a, "Not operand");
  ANVIL_ICHECK(a.dtype().is_bool(), "Not of non-bool ", a.dtype().to_string());
  auto n = make_ref<NotNode>();
  n->dtype = a.dtype();
  n->a = std::move(a);
  return n;
}

Ref<const SelectNode> SelectNode::make(PrimExpr condition, PrimExpr true_value,
                                       PrimExpr false_value) {
  check_defined(condition, "Select condition");
  check_defined(true_value, "Select value");
  check_defined(false_value, "Select value");
  ANVIL_ICHECK(condition.dtype().is_bool(), "Select condition of type ",
               condition.dtype().to_string());
  ANVIL_ICHECK(true_value.dtype() == false_value.dtype(), "Select of mismatched types ",
               true_value.dtype().to_string(), " and ", false_value.dtype().to_string());
  ANVIL_ICHECK(condition.dtype().lanes == 1 || condition.dtype().lanes == true_value.dtype().lanes,
               "Select condition lanes do not match its values");
  auto n = make_ref<SelectNode>();
  n->dtype = true_value.dtype();
  n->condition = std::move(condition);
  n->true_value = std::move(true_value);
  n->false_value = std::move(false_value);
  return n;
}

Ref<const CastNode> CastNode::make(DataType dtype, PrimExpr value) {
  check_defined(value, "Cast operand");
  ANVIL_ICHECK(dtype.lanes == value.dtype().lanes,
               "Cast changes lanes: ", value.dtype().to_string(), " to ", dtype.to_string());
  auto n = make_ref<CastNode>();
  n->dtype = dtype;
  n->value = std::move(value);
  return n;
}

Ref<const BufferLoadNode> BufferLoadNode::make(Buffer buffer, std::vector<PrimExpr> indices) {
  ANVIL_ICHECK(buffer, "BufferLoad of a null buffer");
  int lanes = 1;
  for (const PrimExpr& i : indices) {
    check_defined(i, "BufferLoad index");
    ANVIL_ICHECK(i.dtype().is_int() || i.dtype().is_uint(), "index of buffer '", buffer->name,
                 "' has type ", i.dtype().to_string());
    if (i.dtype().lanes > 1) {
      ANVIL_ICHECK(lanes == 1 || lanes == i.dtype().lanes, "vector indices of buffer '",
                   buffer->name, "' differ in lanes");
      lanes = i.dtype().lanes;
    }
  }
  auto n = make_ref<BufferLoadNode>();
  n->dtype = buffer->dtype.with_lanes(uint16_t(buffer->dtype.lanes * lanes));
  n->buffer = std::move(buffer);
  n->indices = std::move(indices);
  return n;
}

Ref<const RampNode> RampNode::make(PrimExpr base, PrimExpr stride, int lanes) {
  check_defined(base, "Ramp base");
  check_defined(stride, "Ramp stride");
  ANVIL_ICHECK(base.dtype().lanes == 1 && base.dtype() == stride.dtype(),
               "Ramp base and stride must be scalars of one type");
  ANVIL_ICHECK(lanes > 1, "Ramp of ", lanes, " lanes");
  auto n = make_ref<RampNode>();
  n->dtype = base.dtype().with_lanes(uint16_t(lanes));
  n->base = std::move(base);
  n->stride = std::move(stride);
  n->lanes = lanes;
  return n;
}

Ref<const BroadcastNode> BroadcastNode::make(PrimExpr value, int lanes) {
  check_defined(value, "Broadcast value");
  ANVIL_ICHECK(value.dtype().lanes == 1, "Broadcast of a vector");
  ANVIL_ICHECK(lanes > 1, "Broadcast to ", lanes, " lanes");
  auto n = make_ref<BroadcastNode>();
  n->dtype = value.dtype().with_lanes(uint16_t(lanes));
  n->value = std::move(value);
  n->lanes = lanes;
  return n;
}

Ref<const LetNode> LetNode::make(Var var, PrimExpr value, PrimExpr body) {
  ANVIL_ICHECK(var, "Let of a null var");
  check_defined(value, "Let value");
  check_defined(body, "Let body");
  ANVIL_ICHECK(var->dtype == value.dtype(), "Let binds ", var->name, " of type ",
               var->dtype.to_string(), " to ", value.dtype().to_string());
  auto n = make_ref<LetNode>();
  n->dtype = body.dtype();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return n;
}

Ref<const CallNode> CallNode::make(DataType dtype, std::string op, std::vector<PrimExpr> args,
                                   CallKind call_kind) {
  for (const PrimExpr& a : args) check_defined(a, "call argument");
  if (call_kind == CallKind::Intrinsic) {
    const IntrinsicInfo* info = find_intrinsic(op);
    ANVIL_ICHECK(info, "unknown intrinsic '", op, "'");
    ANVIL_ICHECK(info->num_args < 0 || info->num_args == int(args.size()), "intrinsic '", op,
                 "' takes ", info->num_args, " arguments, got ", args.size());
  }
  auto n = make_ref<CallNode>();
  n->dtype = dtype;
  n->op = std::move(op);
  n->args = std::move(args);
  n->call_kind = call_kind;
  return n;
}

Ref<const ReduceNode> ReduceNode::make(ReduceKind combiner, PrimExpr source,
                                       std::vector<IterVar> axis, PrimExpr condition) {
  check_defined(source, "Reduce source");
  auto n = make_ref<ReduceNode>();
  n->dtype = source.dtype();
  n->combiner = combiner;
  n->source = std::move(source);
  n->axis = std::move(axis);
  n->condition = std::move(condition);
  return n;
}

// ---------------------------------------------------------------- buffers

Buffer BufferNode::make(std::string name, DataType dtype, std::vector<PrimExpr> shape,
                        std::string scope) {
  Var data = VarNode::make(name, DataType::handle());
  return make_full(std::move(data), dtype, std::move(shape), {}, make_int(0), std::move(name),
                   std::move(scope), 64);
}

Buffer BufferNode::make_full(Var data, DataType dtype, std::vector<PrimExpr> shape,
                             std::vector<PrimExpr> strides, PrimExpr elem_offset, std::string name,
                             std::string scope, int data_alignment) {
  ANVIL_ICHECK(data && data->dtype.is_handle(), "buffer '", name, "' needs a handle data var");
  ANVIL_ICHECK(strides.empty() || strides.size() == shape.size(), "buffer '", name, "' has ",
               shape.size(), " dims but ", strides.size(), " strides");
  for (const PrimExpr& d : shape) check_defined(d, "buffer dim");
  auto n = make_ref<BufferNode>();
  n->data = std::move(data);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->elem_offset = elem_offset ? std::move(elem_offset) : make_int(0);
  n->name = std::move(name);
  n->scope = std::move(scope);
  n->data_alignment = data_alignment;
  return n;
}

std::vector<PrimExpr> BufferNode::effective_strides() const {
  if (!strides.empty()) return strides;
  std::vector<PrimExpr> out(shape.size());
  PrimExpr running = make_int(1);
  for (size_t i = shape.size(); i-- > 0;) {
    out[i] = running;
    running = running * shape[i];
  }
  return out;
}

BufferRegion BufferRegion::full(Buffer buffer) {
  BufferRegion r{buffer, {}};
  for (const PrimExpr& d : buffer->shape) r.region.push_back({make_int(0), d});
  return r;
}

// ---------------------------------------------------------------- statements

Ref<const LetStmtNode> LetStmtNode::make(Var var, PrimExpr value, Stmt body) {
  ANVIL_ICHECK(var && value && body, "LetStmt with a null part");
  ANVIL_ICHECK(var->dtype == value.dtype(), "LetStmt binds ", var->name, " of type ",
               var->dtype.to_string(), " to ", value.dtype().to_string());
  auto n = make_ref<LetStmtNode>();
  n->var = std::move(var);
  n->value = std::move(value);
  n->body = std::move(body);
  return n;
}

Ref<const AssertStmtNode> AssertStmtNode::make(PrimExpr condition, std::string message, Stmt body) {
  ANVIL_ICHECK(condition && body, "AssertStmt with a null part");
  ANVIL_ICHECK(condition.dtype().is_bool(), "assert condition of type ",
               condition.dtype().to_string());
  auto n = make_ref<AssertStmtNode>();
  n->condition = std::move(condition);
  n->message = std::move(message);
  n->body = std::move(body);
  return n;
}

Ref<const BufferStoreNode> BufferStoreNode::make(Buffer buffer, PrimExpr value,
                                                 std::vector<PrimExpr> indices) {
  ANVIL_ICHECK(buffer, "BufferStore to a null buffer");
  check_defined(value, "stored value");
  int lanes = 1;
  for (const PrimExpr& i : indices) {
    check_defined(i, "BufferStore index");
    lanes = std::max<int>(lanes, i.dtype().lanes);
  }
  ANVIL_ICHECK(value.dtype() == buffer->dtype.with_lanes(uint16_t(buffer->dtype.lanes * lanes)),
               "store of ", value.dtype().to_string(), " into buffer '", buffer->name, "' of ",
               buffer->dtype.to_string(), " with ", lanes, "-lane indices");
  auto n = make_ref<BufferStoreNode>();
  n->buffer = std::move(buffer);
  n->value = std::move(value);
  n->indices = std::move(indices);
  return n;
}

Ref<const AllocateNode> AllocateNode::make(Buffer buffer, Stmt body) {
  ANVIL_ICHECK(buffer && body, "Allocate with a null part");
  auto n = make_ref<AllocateNode>();
  n->buffer = std::move(buffer);
  n->body = std::move(body);
  return n;
}

Ref<const ForNode> ForNode::make(Var loop_var, PrimExpr min, PrimExpr extent, ForKind for_kind,
                                 Stmt body, Annotations annotations) {
  ANVIL_ICHECK(loop_var && min && extent && body, "For with a null part");
  ANVIL_ICHECK(min.dtype() == loop_var->dtype && extent.dtype() == loop_var->dtype, "loop '",
               loop_var->name, "' bounds differ in type from its variable");
  auto n = make_ref<ForNode>();
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = for_kind;
  n->body = std::move(body);
  n->annotations = std::move(annotations);
  return n;
}

Ref<const IfThenElseNode> IfThenElseNode::make(PrimExpr condition, Stmt then_case, Stmt else_case) {
  ANVIL_ICHECK(condition && then_case, "IfThenElse with a null part");
  ANVIL_ICHECK(condition.dtype() == DataType::boolean(), "if condition of type ",
               condition.dtype().to_string());
  auto n = make_ref<IfThenElseNode>();
  n->condition = std::move(condition);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return n;
}

Ref<const SeqStmtNode> SeqStmtNode::make(std::vector<Stmt> seq) {
  for (const Stmt& s : seq) ANVIL_ICHECK(s, "SeqStmt with a null statement");
  auto n = make_ref<SeqStmtNode>();
  n->seq = std::move(seq);
  return n;
}

Ref<const EvaluateNode> EvaluateNode::make(PrimExpr value) {
  check_defined(value, "Evaluate value");
  auto n = make_ref<EvaluateNode>();
  n->value = std::move(value);
  return n;
}

Ref<const BlockNode> BlockNode::make(std::vector<IterVar> iter_vars,
                                     std::vector<BufferRegion> reads,
                                     std::vector<BufferRegion> writes, std::string name, Stmt body,
                                     Stmt init, std::vector<Buffer> alloc_buffers,
                                     Annotations annotations) {
  ANVIL_ICHECK(body, "block '", name, "' has no body");
  for (const IterVar& iv : iter_vars)
    ANVIL_ICHECK(iv.var && iv.dom.min && iv.dom.extent, "block '", name,
                 "' has an incomplete iteration variable");
  auto n = make_ref<BlockNode>();
  n->iter_vars = std::move(iter_vars);
  n->reads = std::move(reads);
  n->writes = std::move(writes);
  n->name = std::move(name);
  n->body = std::move(body);
  n->init = std::move(init);
  n->alloc_buffers = std::move(alloc_buffers);
  n->annotations = std::move(annotations);
  return n;
}

Ref<const BlockRealizeNode> BlockRealizeNode::make(std::vector<PrimExpr> iter_values,
                                                   PrimExpr predicate, Block block) {
  ANVIL_ICHECK(block, "BlockRealize of a null block");
  ANVIL_ICHECK(iter_values.size() == block->iter_vars.size(), "block '", block->name, "' has ",
               block->iter_vars.size(), " iteration variables but is given ", iter_values.size(),
               " values");
  auto n = make_ref<BlockRealizeNode>();
  n->iter_values = std::move(iter_values);
  n->predicate = predicate ? std::move(predicate) : const_true();
  n->block = std::move(block);
  return n;
}

// ---------------------------------------------------------------- statement builders

Stmt store(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices) {
  return BufferStoreNode::make(std::move(buffer), std::move(value), std::move(indices));
}

Stmt seq_stmt(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s) continue;
    if (const auto* seq = as<SeqStmtNode>(s))
      flat.insert(flat.end(), seq->seq.begin(), seq->seq.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.empty()) return EvaluateNode::make(make_int(0));
  if (flat.size() == 1) return flat[0];
  return SeqStmtNode::make(std::move(flat));
}

Stmt evaluate(PrimExpr value) { return EvaluateNode::make(std::move(value)); }

Stmt for_loop(Var loop_var, PrimExpr min, PrimExpr extent, Stmt body, ForKind kind) {
  return ForNode::make(std::move(loop_var), std::move(min), std::move(extent), kind,
                       std::move(body));
}

IterVar iter_var(std::string name, PrimExpr extent, IterKind kind) {
  return IterVar{VarNode::make(std::move(name)), Range{make_int(0), std::move(extent)}, kind};
}

}  // namespace anvil::tir

// ---------------------------------------------------------------- PrimFunc

namespace anvil::ir {

Ref<const PrimFuncNode> PrimFuncNode::make(std::vector<tir::Var> params,
                                           std::vector<std::pair<tir::Var, tir::Buffer>> buffer_map,
                                           tir::Stmt body, DictAttrs attrs) {
  ANVIL_ICHECK(body, "PrimFunc without a body");
  for (const auto& [param, buffer] : buffer_map) {
    bool found = false;
    for (const tir::Var& p : params) found = found || p.get() == param.get();
    ANVIL_ICHECK(found && buffer, "buffer_map entry for a var that is not a parameter");
  }
  auto n = make_ref<PrimFuncNode>();
  n->params = std::move(params);
  n->buffer_map = std::move(buffer_map);
  n->body = std::move(body);
  n->func_attrs = std::move(attrs);
  return n;
}

tir::Buffer PrimFuncNode::buffer_of(const tir::Var& param) const {
  for (const auto& [p, b] : buffer_map)
    if (p.get() == param.get()) return b;
  return nullptr;
}

std::string PrimFuncNode::global_symbol() const {
  const AttrValue* v = func_attrs.find("global_symbol");
  if (!v) return "";
  const auto* s = std::get_if<std::string>(v);
  return s ? *s : "";
}

Ref<const PrimFuncNode> PrimFuncNode::with_body(tir::Stmt new_body) const {
  return make(params, buffer_map, std::move(new_body), func_attrs);
}

}  // namespace anvil::ir
