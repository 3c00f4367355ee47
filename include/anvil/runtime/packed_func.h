// PackedFunc: a function over dynamically typed values (TVM's PackedFunc), and the process-wide
// registry of named functions ("env.linear") that executors and the IR's call_dps_packed reach.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "anvil/runtime/data_type.h"
#include "anvil/runtime/tensor.h"
#include "anvil/support/ref.h"

namespace anvil {

class Value;
class PackedArgs;

// The kinds of value a packed function takes and returns. The order is the order of
// Value's alternatives.
enum class ValueKind : uint8_t { Null, Int, Float, Bool, String, DataType, Tensor, Func, Handle };

// The word messages use for a kind: "null", "int", "float", "bool", "string", "dtype",
// "tensor", "function", "handle".
const char* value_kind_name(ValueKind kind);

namespace detail {
// Where a conversion happens, for messages: argument `index` (0-based) of function `func`.
// index < 0 means "not an argument" and the message has no prefix.
struct ArgContext {
  std::string_view func;
  int64_t index = -1;
};
// Integers that become an int Value (bool has its own kind).
template <typename T>
concept IntegerNotBool = std::is_integral_v<T> && !std::is_same_v<T, bool>;
// Pointees whose pointers become a handle Value (char pointers are strings).
template <typename T>
concept HandlePointee = !std::is_function_v<T> && !std::is_same_v<std::remove_cv_t<T>, char>;

[[noreturn]] void throw_kind_mismatch(const ArgContext& ctx, const char* expected,
                                      const Value& got);
[[noreturn]] void throw_int_out_of_range(const ArgContext& ctx, int bits, bool is_signed,
                                         int64_t value);
}  // namespace detail

// A refcounted, copyable callable: Value(PackedArgs). Copies share the same function. Calls are
// thread-safe as long as the wrapped callable is.
class PackedFunc {
 public:
  // The callable a PackedFunc wraps.
  using Body = std::function<Value(const PackedArgs&)>;

  // A null function; defined() is false and calling it is a bug.
  PackedFunc();
  // Wraps a callable that reads its arguments itself. `name` appears in argument errors.
  explicit PackedFunc(Body body, std::string name = {});
  PackedFunc(const PackedFunc&);
  PackedFunc(PackedFunc&&) noexcept;
  PackedFunc& operator=(const PackedFunc&);
  PackedFunc& operator=(PackedFunc&&) noexcept;
  ~PackedFunc();

  // Wraps a typed callable, e.g. [](Tensor x, Tensor w, Tensor out) {...}: checks the argument
  // count and converts each argument, throwing Error that names the argument and the function.
  // A void result becomes a null Value.
  template <typename F>
  static PackedFunc from_typed(F&& f, std::string name = {});

  // Calls with an argument array.
  Value call(std::span<const Value> args) const;
  // Calls with each argument converted to a Value: f(x, w, 3, "relu").
  template <typename... Args>
  Value operator()(Args&&... args) const;

  bool defined() const { return bool(node_); }
  // The name given at construction or registration; empty for an anonymous function.
  const std::string& name() const;
  // The same callable under another name (a new handle; this one is unchanged).
  PackedFunc with_name(std::string name) const;
  // Same function object (not merely equal behaviour).
  bool same_as(const PackedFunc& other) const { return node_ == other.node_; }

  class Node;

 private:
  Ref<Node> node_;
};

// A dynamically typed value: what a packed function takes and returns.
class Value {
 public:
  // Null.
  Value() = default;
  Value(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  template <detail::IntegerNotBool T>
  Value(T v) : data_(std::in_place_type<int64_t>, int64_t(v)) {}  // NOLINT
  template <std::floating_point T>
  Value(T v) : data_(std::in_place_type<double>, double(v)) {}                    // NOLINT
  Value(bool v) : data_(std::in_place_type<bool>, v) {}                           // NOLINT
  Value(const char* s) : data_(std::in_place_type<std::string>, s) {}             // NOLINT
  Value(std::string s) : data_(std::in_place_type<std::string>, std::move(s)) {}  // NOLINT
  Value(std::string_view s) : data_(std::in_place_type<std::string>, s) {}        // NOLINT
  Value(DataType t) : data_(std::in_place_type<DataType>, t) {}                   // NOLINT
  Value(Tensor t) : data_(std::in_place_type<Tensor>, std::move(t)) {}            // NOLINT
  Value(PackedFunc f) : data_(std::in_place_type<PackedFunc>, std::move(f)) {}    // NOLINT
  // An opaque pointer the runtime passes through untouched.
  Value(void* handle) : data_(std::in_place_type<void*>, handle) {}  // NOLINT
  // Any other object pointer is a handle too (without this, a const pointer would become a bool).
  template <detail::HandlePointee T>
  Value(T* p)  // NOLINT
      : data_(std::in_place_type<void*>, const_cast<void*>(static_cast<const volatile void*>(p))) {}

  ValueKind kind() const { return ValueKind(data_.index()); }
  const char* kind_name() const { return value_kind_name(kind()); }
  bool is_null() const { return kind() == ValueKind::Null; }

  // Accessors; each throws Error "expected a tensor, got int" on a kind mismatch.
  // An int is accepted where a float is expected and a bool where an int is expected (and
  // the reverse); a string is parsed where a dtype is expected.
  int64_t as_int() const { return cast<int64_t>(); }
  double as_float() const { return cast<double>(); }
  bool as_bool() const { return cast<bool>(); }
  const std::string& as_string() const;
  DataType as_dtype() const { return cast<DataType>(); }
  const Tensor& as_tensor() const;
  const PackedFunc& as_func() const;
  void* as_handle() const { return cast<void*>(); }

  // Converts to T the way typed functions convert their arguments; `ctx` names the argument
  // in messages. T is a Value, an arithmetic type (range-checked), std::string,
  // std::string_view or const char* (views into this value), DataType, Tensor, PackedFunc or
  // another pointer (from a handle).
  template <typename T>
  T cast(const detail::ArgContext& ctx = {}) const;

 private:
  std::variant<std::monostate, int64_t, double, bool, std::string, DataType, Tensor, PackedFunc,
               void*>
      data_;
};

// The arguments of one call: a view of Values plus the callee's name for messages. Indices
// are 0-based.
class PackedArgs {
 public:
  PackedArgs(std::span<const Value> values, std::string_view func_name)
      : values_(values), func_name_(func_name) {}

  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  // Unchecked access.
  const Value& operator[](size_t i) const { return values_[i]; }
  std::span<const Value> values() const { return values_; }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }
  // The callee's name; empty for an anonymous function.
  std::string_view func_name() const { return func_name_; }

  // Throws Error "'env.linear' expects 3 arguments, got 2" unless there are exactly n.
  void expect_count(size_t n) const;
  // Argument i converted to T; throws Error "argument 2 of 'env.linear': expected a tensor,
  // got int", or a count error if there are not more than i arguments.
  template <typename T>
  T get(size_t i) const {
    if (i >= values_.size()) throw_missing(i);
    return values_[i].cast<T>(detail::ArgContext{func_name_, int64_t(i)});
  }

 private:
  [[noreturn]] void throw_missing(size_t i) const;

  std::span<const Value> values_;
  std::string_view func_name_;
};

// ---- The global registry. All functions are thread-safe. ----

// Registers func under name. Registering a taken name throws Error naming it unless
// override_existing is set. The stored function carries the registered name.
void register_global(const std::string& name, PackedFunc func, bool override_existing = false);
// The function registered under name, if any.
std::optional<PackedFunc> find_global(std::string_view name);
// The function registered under name; throws Error "no registered function named 'x'".
PackedFunc get_global(std::string_view name);
// Every registered name, sorted.
std::vector<std::string> list_globals();
// Unregisters name; returns whether it was registered.
bool remove_global(std::string_view name);

// ---- Template definitions. ----

template <typename T>
T Value::cast(const detail::ArgContext& ctx) const {
  static_assert(!std::is_reference_v<T>, "Value::cast: convert to a value type, not a reference");
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, Value>) {
    return *this;
  } else if constexpr (std::is_same_v<U, bool>) {
    if (auto* b = std::get_if<bool>(&data_)) return *b;
    if (auto* i = std::get_if<int64_t>(&data_)) return *i != 0;
    detail::throw_kind_mismatch(ctx, "a bool", *this);
  } else if constexpr (std::is_integral_v<U>) {
    int64_t v;
    if (auto* i = std::get_if<int64_t>(&data_)) {
      v = *i;
    } else if (auto* b = std::get_if<bool>(&data_)) {
      v = *b;
    } else {
      detail::throw_kind_mismatch(ctx, "an int", *this);
    }
    if constexpr (!std::is_same_v<U, int64_t>) {
      if (!std::in_range<U>(v))
        detail::throw_int_out_of_range(ctx, int(sizeof(U) * 8), std::is_signed_v<U>, v);
    }
    return U(v);
  } else if constexpr (std::is_floating_point_v<U>) {
    if (auto* d = std::get_if<double>(&data_)) return U(*d);
    if (auto* i = std::get_if<int64_t>(&data_)) return U(*i);
    detail::throw_kind_mismatch(ctx, "a float", *this);
  } else if constexpr (std::is_same_v<U, std::string> || std::is_same_v<U, std::string_view>) {
    if (auto* s = std::get_if<std::string>(&data_)) return U(*s);
    detail::throw_kind_mismatch(ctx, "a string", *this);
  } else if constexpr (std::is_same_v<U, DataType>) {
    if (auto* t = std::get_if<DataType>(&data_)) return *t;
    if (auto* s = std::get_if<std::string>(&data_)) return DataType::parse(*s);
    detail::throw_kind_mismatch(ctx, "a dtype", *this);
  } else if constexpr (std::is_same_v<U, Tensor>) {
    if (auto* t = std::get_if<Tensor>(&data_)) return *t;
    detail::throw_kind_mismatch(ctx, "a tensor", *this);
  } else if constexpr (std::is_same_v<U, PackedFunc>) {
    if (auto* f = std::get_if<PackedFunc>(&data_)) return *f;
    detail::throw_kind_mismatch(ctx, "a function", *this);
  } else if constexpr (std::is_same_v<U, const char*>) {
    if (auto* s = std::get_if<std::string>(&data_)) return s->c_str();
    detail::throw_kind_mismatch(ctx, "a string", *this);
  } else if constexpr (std::is_pointer_v<U>) {
    if (auto* h = std::get_if<void*>(&data_)) return static_cast<U>(*h);
    if (is_null()) return nullptr;
    detail::throw_kind_mismatch(ctx, "a handle", *this);
  } else {
    static_assert(sizeof(U) == 0, "Value::cast: unsupported target type");
  }
}

template <typename... Args>
Value PackedFunc::operator()(Args&&... args) const {
  if constexpr (sizeof...(Args) == 0) {
    return call({});
  } else {
    const Value values[] = {Value(std::forward<Args>(args))...};
    return call(values);
  }
}

namespace detail {

// Argument and result types of a non-generic callable.
template <typename F>
struct CallableTraits : CallableTraits<decltype(&F::operator())> {};
template <typename R, typename... A>
struct CallableTraits<R(A...)> {
  using Result = R;
  using Args = std::tuple<A...>;
};
template <typename R, typename... A>
struct CallableTraits<R (*)(A...)> : CallableTraits<R(A...)> {};
template <typename R, typename... A>
struct CallableTraits<R (*)(A...) noexcept> : CallableTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...)> : CallableTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...) const> : CallableTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...) noexcept> : CallableTraits<R(A...)> {};
template <typename C, typename R, typename... A>
struct CallableTraits<R (C::*)(A...) const noexcept> : CallableTraits<R(A...)> {};

template <typename Fn, typename R, typename... A, size_t... I>
Value invoke_typed(Fn& fn, const PackedArgs& args, std::tuple<A...>*, std::index_sequence<I...>) {
  args.expect_count(sizeof...(A));
  // Braced initialization converts left to right, so the first bad argument is reported.
  std::tuple<std::remove_cvref_t<A>...> converted{args.get<std::remove_cvref_t<A>>(I)...};
  if constexpr (std::is_void_v<R>) {
    std::apply(fn, std::move(converted));
    return Value();
  } else {
    return Value(std::apply(fn, std::move(converted)));
  }
}

}  // namespace detail

template <typename F>
PackedFunc PackedFunc::from_typed(F&& f, std::string name) {
  using Fn = std::decay_t<F>;
  using Traits = detail::CallableTraits<Fn>;
  using ArgTuple = typename Traits::Args;
  return PackedFunc(Body([fn = Fn(std::forward<F>(f))](const PackedArgs& args) mutable -> Value {
                      return detail::invoke_typed<Fn, typename Traits::Result>(
                          fn, args, static_cast<ArgTuple*>(nullptr),
                          std::make_index_sequence<std::tuple_size_v<ArgTuple>>());
                    }),
                    std::move(name));
}

namespace detail {

// Turns whatever ANVIL_REGISTER_GLOBAL is given into a PackedFunc: a PackedFunc as is, a
// callable taking PackedArgs as a raw body, anything else through from_typed.
template <typename F>
PackedFunc to_packed_func(F&& f, std::string name) {
  using Fn = std::decay_t<F>;
  if constexpr (std::is_same_v<Fn, PackedFunc>) {
    return f.with_name(std::move(name));
  } else if constexpr (std::is_invocable_v<Fn&, const PackedArgs&>) {
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&, const PackedArgs&>>) {
      return PackedFunc(
          [fn = Fn(std::forward<F>(f))](const PackedArgs& args) mutable -> Value {
            fn(args);
            return Value();
          },
          std::move(name));
    } else {
      return PackedFunc(PackedFunc::Body(std::forward<F>(f)), std::move(name));
    }
  } else {
    return PackedFunc::from_typed(std::forward<F>(f), std::move(name));
  }
}

// Registers a function while a library's static objects are constructed.
struct GlobalRegistrar {
  template <typename F>
  GlobalRegistrar(const char* name, F&& f) {
    register_global(name, to_packed_func(std::forward<F>(f), name));
  }
};

}  // namespace detail
}  // namespace anvil

#define ANVIL_PACKED_FUNC_CONCAT_INNER(a, b) a##b
#define ANVIL_PACKED_FUNC_CONCAT(a, b) ANVIL_PACKED_FUNC_CONCAT_INNER(a, b)

// Registers a global function when the library or program containing this line loads, e.g.
//   ANVIL_REGISTER_GLOBAL("env.linear", [](Tensor x, Tensor w, Tensor out) { ... });
// The function may be a PackedFunc, a callable taking const PackedArgs&, or a typed callable.
// Use it at namespace scope in a .cpp file of a shared library or executable (a static
// library's object files may be dropped by the linker, and their registrations with them).
#define ANVIL_REGISTER_GLOBAL(name, ...)                                                   \
  [[maybe_unused]] static const ::anvil::detail::GlobalRegistrar ANVIL_PACKED_FUNC_CONCAT( \
      anvil_global_registrar_, __COUNTER__)(name, __VA_ARGS__)
