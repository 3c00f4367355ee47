#include "anvil/runtime/packed_func.h"

#include "anvil/support/error.h"

namespace anvil {

// What a PackedFunc handle points to. Immutable after construction, so calls from several
// threads need no locking.
class PackedFunc::Node : public RefCounted {
 public:
  Node(Body body_, std::string name_) : body(std::move(body_)), name(std::move(name_)) {}
  const Body body;
  const std::string name;
};

namespace {

std::string arg_prefix(const detail::ArgContext& ctx) {
  if (ctx.index < 0) return {};
  if (ctx.func.empty()) return str_cat("argument ", ctx.index, ": ");
  return str_cat("argument ", ctx.index, " of '", ctx.func, "': ");
}

std::string callee(std::string_view name) {
  return name.empty() ? std::string("function") : str_cat("'", name, "'");
}

std::string plural_arguments(size_t n) { return str_cat(n, n == 1 ? " argument" : " arguments"); }

}  // namespace

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Null:
      return "null";
    case ValueKind::Int:
      return "int";
    case ValueKind::Float:
      return "float";
    case ValueKind::Bool:
      return "bool";
    case ValueKind::String:
      return "string";
    case ValueKind::DataType:
      return "dtype";
    case ValueKind::Tensor:
      return "tensor";
    case ValueKind::Func:
      return "function";
    case ValueKind::Handle:
      return "handle";
  }
  return "unknown";
}

namespace detail {

void throw_kind_mismatch(const ArgContext& ctx, const char* expected, const Value& got) {
  throw_error(arg_prefix(ctx), "expected ", expected, ", got ", got.kind_name());
}

void throw_int_out_of_range(const ArgContext& ctx, int bits, bool is_signed, int64_t value) {
  throw_error(arg_prefix(ctx), "int ", value, " does not fit in a ", bits, "-bit ",
              is_signed ? "signed" : "unsigned", " integer");
}

}  // namespace detail

// ---- Value ----

const std::string& Value::as_string() const {
  if (auto* s = std::get_if<std::string>(&data_)) return *s;
  detail::throw_kind_mismatch({}, "a string", *this);
}

const Tensor& Value::as_tensor() const {
  if (auto* t = std::get_if<Tensor>(&data_)) return *t;
  detail::throw_kind_mismatch({}, "a tensor", *this);
}

const PackedFunc& Value::as_func() const {
  if (auto* f = std::get_if<PackedFunc>(&data_)) return *f;
  detail::throw_kind_mismatch({}, "a function", *this);
}

// ---- PackedArgs ----

void PackedArgs::expect_count(size_t n) const {
  if (values_.size() != n)
    throw_error(callee(func_name_), " expects ", plural_arguments(n), ", got ", values_.size());
}

void PackedArgs::throw_missing(size_t i) const {
  throw_error(callee(func_name_), " expects at least ", plural_arguments(i + 1), ", got ",
              values_.size());
}

// ---- PackedFunc ----

PackedFunc::PackedFunc() = default;
PackedFunc::PackedFunc(Body body, std::string name) {
  ANVIL_ICHECK(body != nullptr, "PackedFunc built from an empty callable");
  node_ = make_ref<Node>(std::move(body), std::move(name));
}
PackedFunc::PackedFunc(const PackedFunc&) = default;
PackedFunc::PackedFunc(PackedFunc&&) noexcept = default;
PackedFunc& PackedFunc::operator=(const PackedFunc&) = default;
PackedFunc& PackedFunc::operator=(PackedFunc&&) noexcept = default;
PackedFunc::~PackedFunc() = default;

Value PackedFunc::call(std::span<const Value> args) const {
  ANVIL_ICHECK(node_, "call of a null PackedFunc");
  return node_->body(PackedArgs(args, node_->name));
}

const std::string& PackedFunc::name() const {
  static const std::string empty;
  return node_ ? node_->name : empty;
}

PackedFunc PackedFunc::with_name(std::string name) const {
  ANVIL_ICHECK(node_, "with_name on a null PackedFunc");
  return PackedFunc(node_->body, std::move(name));
}

}  // namespace anvil
