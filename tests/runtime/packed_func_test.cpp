#include "anvil/runtime/packed_func.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "anvil/support/error.h"

namespace anvil {
namespace {

// Runs fn, expecting an anvil::Error whose message is exactly `message`.
template <typename Fn>
void expect_error(Fn&& fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown; expected: " << message;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

Tensor filled(std::vector<int64_t> shape, float value) {
  Tensor t = Tensor::empty(std::move(shape), DataType::float32());
  t.fill(value);
  return t;
}

// ---- Value ----

TEST(PackedFuncValueTest, HoldsEachKind) {
  Tensor t = filled({2}, 1.0f);
  PackedFunc f([](const PackedArgs&) { return Value(); });
  int dummy = 0;
  EXPECT_EQ(Value().kind(), ValueKind::Null);
  EXPECT_EQ(Value(nullptr).kind(), ValueKind::Null);
  EXPECT_EQ(Value(3).kind(), ValueKind::Int);
  EXPECT_EQ(Value(int64_t(-5)).as_int(), -5);
  EXPECT_EQ(Value(uint8_t(200)).as_int(), 200);
  EXPECT_EQ(Value(2.5).as_float(), 2.5);
  EXPECT_EQ(Value(1.5f).kind(), ValueKind::Float);
  EXPECT_EQ(Value(true).kind(), ValueKind::Bool);
  EXPECT_EQ(Value("relu").as_string(), "relu");
  EXPECT_EQ(Value(std::string("x")).kind(), ValueKind::String);
  EXPECT_EQ(Value(std::string_view("y")).as_string(), "y");
  EXPECT_EQ(Value(DataType::int8()).as_dtype(), DataType::int8());
  EXPECT_TRUE(Value(t).as_tensor().same_as(t));
  EXPECT_TRUE(Value(f).as_func().same_as(f));
  EXPECT_EQ(Value(static_cast<void*>(&dummy)).as_handle(), &dummy);
  EXPECT_TRUE(Value().is_null());
}

TEST(PackedFuncValueTest, PointersBecomeHandlesNotBools) {
  const float constant = 1.0f;
  float mutable_value = 2.0f;
  Value a(&constant), b(&mutable_value);
  EXPECT_EQ(a.kind(), ValueKind::Handle);
  EXPECT_EQ(b.kind(), ValueKind::Handle);
  EXPECT_EQ(a.cast<const float*>(), &constant);
  EXPECT_EQ(b.cast<float*>(), &mutable_value);
  EXPECT_EQ(Value().cast<float*>(), nullptr);
}

TEST(PackedFuncValueTest, MismatchNamesExpectedAndActualKinds) {
  expect_error([] { Value(3).as_tensor(); }, "expected a tensor, got int");
  expect_error([] { Value("a").as_int(); }, "expected an int, got string");
  expect_error([] { Value().as_float(); }, "expected a float, got null");
  expect_error([] { Value(1.0).as_string(); }, "expected a string, got float");
  expect_error([] { Value(filled({1}, 0)).as_dtype(); }, "expected a dtype, got tensor");
  expect_error([] { Value(2).as_func(); }, "expected a function, got int");
  expect_error([] { Value(2.0).as_bool(); }, "expected a bool, got float");
  expect_error([] { Value(DataType::int8()).as_handle(); }, "expected a handle, got dtype");
}

TEST(PackedFuncValueTest, NumericConversions) {
  EXPECT_EQ(Value(3).as_float(), 3.0);
  EXPECT_EQ(Value(true).as_int(), 1);
  EXPECT_TRUE(Value(7).as_bool());
  EXPECT_FALSE(Value(0).as_bool());
  EXPECT_EQ(Value(2.75).cast<float>(), 2.75f);
  EXPECT_EQ(Value(-3).cast<int8_t>(), -3);
  EXPECT_EQ(Value("float16").as_dtype(), DataType::float16());
  expect_error([] { Value(int64_t(3000000000)).cast<int32_t>(); },
               "int 3000000000 does not fit in a 32-bit signed integer");
  expect_error([] { Value(-1).cast<uint16_t>(); },
               "int -1 does not fit in a 16-bit unsigned integer");
  EXPECT_THROW(Value("float33").as_dtype(), Error);
}

TEST(PackedFuncValueTest, KindNames) {
  EXPECT_STREQ(value_kind_name(ValueKind::Null), "null");
  EXPECT_STREQ(value_kind_name(ValueKind::DataType), "dtype");
  EXPECT_STREQ(value_kind_name(ValueKind::Func), "function");
  EXPECT_STREQ(Value(filled({1}, 0)).kind_name(), "tensor");
}

// ---- PackedFunc ----

TEST(PackedFuncTest, RawBodySeesArgumentsAndName) {
  PackedFunc f(
      [](const PackedArgs& args) -> Value {
        EXPECT_EQ(args.func_name(), "test.raw");
        int64_t total = 0;
        for (const Value& v : args) total += v.as_int();
        return total;
      },
      "test.raw");
  EXPECT_EQ(f.name(), "test.raw");
  EXPECT_EQ(f(1, 2, 3).as_int(), 6);
  EXPECT_EQ(f().as_int(), 0);
  std::vector<Value> args{Value(10), Value(20)};
  EXPECT_EQ(f.call(args).as_int(), 30);
}

TEST(PackedFuncTest, CallsWithTensorsIntsFloatsAndStrings) {
  // out = x * scale + bias, with the activation named by a string.
  PackedFunc f([](const PackedArgs& args) -> Value {
    args.expect_count(5);
    Tensor x = args.get<Tensor>(0), out = args.get<Tensor>(1);
    double scale = args.get<double>(2);
    int64_t bias = args.get<int64_t>(3);
    std::string activation = args.get<std::string>(4);
    for (int64_t i = 0; i < x.numel(); ++i) {
      double v = x.get_as_double(i) * scale + double(bias);
      if (activation == "relu") v = std::max(v, 0.0);
      out.set_from_double(i, v);
    }
    return out.numel();
  });
  Tensor x = Tensor::empty({4}, DataType::float32());
  for (int i = 0; i < 4; ++i) x.set_from_double(i, i - 2);
  Tensor out = Tensor::zeros({4}, DataType::float32());
  EXPECT_EQ(f(x, out, 2.0, 1, "relu").as_int(), 4);
  std::vector<double> expected{0, 0, 1, 3};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out.get_as_double(i), expected[i]) << i;
  EXPECT_EQ(f(x, out, 0.5, 0, std::string("none")).as_int(), 4);
  EXPECT_EQ(out.get_as_double(0), -1.0);
}

TEST(PackedFuncTest, TypedWrapperConvertsArgumentsAndResult) {
  PackedFunc add = PackedFunc::from_typed([](int a, double b) { return a + b; }, "test.add");
  EXPECT_EQ(add(2, 0.5).as_float(), 2.5);
  PackedFunc concat = PackedFunc::from_typed(
      [](const std::string& a, std::string_view b) { return a + std::string(b); });
  EXPECT_EQ(concat("ab", "cd").as_string(), "abcd");
  PackedFunc shout =
      PackedFunc::from_typed([](const char* text) { return std::string(text) + "!"; });
  EXPECT_EQ(shout("hi").as_string(), "hi!");
  PackedFunc scale = PackedFunc::from_typed([](Tensor x, float s, DataType t) {
    EXPECT_EQ(t, DataType::float32());
    for (int64_t i = 0; i < x.numel(); ++i) x.set_from_double(i, x.get_as_double(i) * s);
    return x;
  });
  Tensor x = filled({3}, 2.0f);
  Tensor y = scale(x, 3, "float32").as_tensor();
  EXPECT_TRUE(y.same_as(x));
  EXPECT_EQ(x.get_as_double(2), 6.0);
}

TEST(PackedFuncTest, TypedWrapperVoidResultIsNull) {
  int calls = 0;
  PackedFunc f = PackedFunc::from_typed([&calls](bool flag) { calls += flag ? 1 : 0; });
  EXPECT_TRUE(f(true).is_null());
  EXPECT_EQ(calls, 1);
}

int64_t triple(int64_t x) { return 3 * x; }

TEST(PackedFuncTest, TypedWrapperTakesFunctionPointersAndMutableLambdas) {
  EXPECT_EQ(PackedFunc::from_typed(&triple)(4).as_int(), 12);
  EXPECT_EQ(PackedFunc::from_typed(triple)(5).as_int(), 15);
  PackedFunc counter = PackedFunc::from_typed([n = 0]() mutable { return ++n; });
  EXPECT_EQ(counter().as_int(), 1);
  EXPECT_EQ(counter().as_int(), 2);
}

TEST(PackedFuncTest, TypedWrapperArityErrors) {
  PackedFunc f = PackedFunc::from_typed([](Tensor, Tensor) {}, "test.pair");
  Tensor t = filled({1}, 0);
  expect_error([&] { f(t); }, "'test.pair' expects 2 arguments, got 1");
  expect_error([&] { f(t, t, t); }, "'test.pair' expects 2 arguments, got 3");
  PackedFunc g = PackedFunc::from_typed([](int) {});
  expect_error([&] { g(); }, "function expects 1 argument, got 0");
}

TEST(PackedFuncTest, TypedWrapperTypeErrorNamesArgumentAndFunction) {
  PackedFunc linear = PackedFunc::from_typed([](Tensor, Tensor, Tensor) {}, "env.linear");
  Tensor t = filled({1}, 0);
  expect_error([&] { linear(t, t, 2); }, "argument 2 of 'env.linear': expected a tensor, got int");
  expect_error([&] { linear("x", 1, 2); },
               "argument 0 of 'env.linear': expected a tensor, got string");
  PackedFunc narrow = PackedFunc::from_typed([](int32_t) {}, "test.narrow");
  expect_error([&] { narrow(int64_t(1) << 40); },
               "argument 0 of 'test.narrow': int 1099511627776 does not fit in a 32-bit signed "
               "integer");
}

TEST(PackedFuncTest, GetPastTheEndIsACountError) {
  PackedFunc f([](const PackedArgs& args) { return args.get<int>(2); }, "test.third");
  expect_error([&] { f(1, 2); }, "'test.third' expects at least 3 arguments, got 2");
}

TEST(PackedFuncTest, CopiesShareOneFunctionAndWithNameMakesANewOne) {
  PackedFunc f = PackedFunc::from_typed([] { return 1; }, "a");
  PackedFunc copy = f;
  EXPECT_TRUE(copy.same_as(f));
  PackedFunc renamed = f.with_name("b");
  EXPECT_FALSE(renamed.same_as(f));
  EXPECT_EQ(renamed.name(), "b");
  EXPECT_EQ(f.name(), "a");
  EXPECT_EQ(renamed().as_int(), 1);
  EXPECT_FALSE(PackedFunc().defined());
  EXPECT_EQ(PackedFunc().name(), "");
}

TEST(PackedFuncTest, FunctionsTravelAsValues) {
  PackedFunc apply = PackedFunc::from_typed([](PackedFunc g, int64_t x) { return g(x).as_int(); });
  PackedFunc square = PackedFunc::from_typed([](int64_t x) { return x * x; });
  EXPECT_EQ(apply(square, 7).as_int(), 49);
  PackedFunc make_adder = PackedFunc::from_typed(
      [](int64_t n) { return PackedFunc::from_typed([n](int64_t x) { return x + n; }); });
  EXPECT_EQ(make_adder(10).as_func()(5).as_int(), 15);
}

TEST(PackedFuncTest, ExceptionsPropagateUnchanged) {
  PackedFunc f = PackedFunc::from_typed([](int x) -> int { throw_error("bad x ", x); });
  expect_error([&] { f(4); }, "bad x 4");
}

// ---- Registry ----

// Static registration, the way operator libraries register their functions.
ANVIL_REGISTER_GLOBAL("test.static_typed", [](int64_t a, int64_t b) { return a - b; });
ANVIL_REGISTER_GLOBAL("test.static_raw",
                      [](const PackedArgs& args) -> Value { return int64_t(args.size()); });
ANVIL_REGISTER_GLOBAL("test.static_packed", PackedFunc::from_typed([] { return "packed"; }));

TEST(RegistryTest, StaticRegistrationMacro) {
  EXPECT_EQ(get_global("test.static_typed")(10, 3).as_int(), 7);
  EXPECT_EQ(get_global("test.static_raw")(1, 2, 3).as_int(), 3);
  EXPECT_EQ(get_global("test.static_packed")().as_string(), "packed");
  EXPECT_EQ(get_global("test.static_typed").name(), "test.static_typed");
}

TEST(RegistryTest, RegisterFindCallListAndRemove) {
  register_global("test.scale", PackedFunc::from_typed([](Tensor x, double s) {
                    x.fill(x.get_as_double(0) * s);
                    return x;
                  }));
  std::optional<PackedFunc> found = find_global("test.scale");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->name(), "test.scale");
  Tensor x = filled({2, 2}, 3.0f);
  EXPECT_EQ((*found)(x, 2.0).as_tensor().get_as_double(3), 6.0);

  std::vector<std::string> names = list_globals();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "test.scale"), names.end());

  EXPECT_TRUE(remove_global("test.scale"));
  EXPECT_FALSE(remove_global("test.scale"));
  EXPECT_FALSE(find_global("test.scale").has_value());
  // The handle taken before removal still works.
  EXPECT_EQ((*found)(x, 0.5).as_tensor().get_as_double(0), 3.0);
}

TEST(RegistryTest, DuplicateRegistrationIsAnErrorUnlessOverriding) {
  register_global("test.dup", PackedFunc::from_typed([] { return 1; }));
  expect_error(
      [] { register_global("test.dup", PackedFunc::from_typed([] { return 2; })); },
      "a function named 'test.dup' is already registered (pass override_existing to replace it)");
  EXPECT_EQ(get_global("test.dup")().as_int(), 1);
  register_global("test.dup", PackedFunc::from_typed([] { return 2; }), /*override_existing=*/true);
  EXPECT_EQ(get_global("test.dup")().as_int(), 2);
  remove_global("test.dup");
}

TEST(RegistryTest, UnknownNameErrorNamesIt) {
  expect_error([] { get_global("test.no_such_function"); },
               "no registered function named 'test.no_such_function'");
  EXPECT_FALSE(find_global("test.no_such_function").has_value());
}

TEST(RegistryTest, RejectsEmptyNamesAndNullFunctions) {
  EXPECT_THROW(register_global("", PackedFunc::from_typed([] {})), Error);
  EXPECT_THROW(register_global("test.null", PackedFunc()), Error);
}

TEST(RegistryTest, RegisteredNameAppearsInArgumentErrors) {
  register_global("test.named_later", PackedFunc::from_typed([](Tensor) {}));
  expect_error([] { get_global("test.named_later")(1.5); },
               "argument 0 of 'test.named_later': expected a tensor, got float");
  remove_global("test.named_later");
}

TEST(RegistryTest, ConcurrentRegistrationLookupAndCalls) {
  register_global("test.shared_counter", PackedFunc::from_typed([](int64_t x) { return x + 1; }));
  constexpr int kThreads = 4, kIterations = 300;
  std::atomic<int64_t> total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &total] {
      for (int i = 0; i < kIterations; ++i) {
        std::string name = "test.thread" + std::to_string(t) + "." + std::to_string(i % 5);
        register_global(name, PackedFunc::from_typed([i] { return i; }), true);
        std::optional<PackedFunc> own = find_global(name);
        if (own) total += (*own)().as_int() == i ? 1 : 0;
        total += get_global("test.shared_counter")(i).as_int() == i + 1 ? 1 : 0;
        if (i % 7 == 0) (void)list_globals();
        if (i % 3 == 0) remove_global(name);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(total.load(), 2 * kThreads * kIterations);
  for (int t = 0; t < kThreads; ++t)
    for (int k = 0; k < 5; ++k)
      remove_global("test.thread" + std::to_string(t) + "." + std::to_string(k));
  remove_global("test.shared_counter");
  for (const std::string& name : list_globals())
    EXPECT_EQ(name.rfind("test.thread", 0), std::string::npos);
}

}  // namespace
}  // namespace anvil
