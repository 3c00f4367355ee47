#include "anvil/runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "anvil/support/error.h"

namespace anvil {
namespace {

TEST(Tensor, EmptyIsAlignedAndDescribed) {
  Tensor t = Tensor::empty({2, 3, 5}, DataType::float32());
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % Tensor::kAlignment, 0u);
  EXPECT_EQ(t.ndim(), 3);
  EXPECT_EQ(t.numel(), 30);
  EXPECT_EQ(t.nbytes(), 120);
  EXPECT_EQ(t.strides()[0], 15);
  EXPECT_EQ(t.strides()[2], 1);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.dl_tensor().dtype.bits, 32);
  EXPECT_EQ(t.device(), Device::cpu());
}

TEST(Tensor, ZeroSizedAndScalar) {
  Tensor empty = Tensor::zeros({0, 4}, DataType::int64());
  EXPECT_EQ(empty.numel(), 0);
  Tensor scalar = Tensor::zeros({}, DataType::float64());
  EXPECT_EQ(scalar.numel(), 1);
  scalar.fill(2.5);
  EXPECT_EQ(scalar.get_as_double(0), 2.5);
}

TEST(Tensor, NegativeDimIsAnError) {
  EXPECT_THROW(Tensor::empty({2, -1}, DataType::float32()), Error);
}

// Shapes computed at run time (VM dims) may be absurd: a byte size or stride past int64 is an
// Error, also when another dim is zero (the strides would still overflow).
TEST(Tensor, ShapeWhoseSizeOverflowsIsAnError) {
  EXPECT_THROW(Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}, DataType::float32()), Error);
  EXPECT_THROW(Tensor::empty({int64_t(1) << 61}, DataType::float32()), Error);
  EXPECT_THROW(Tensor::empty({0, int64_t(1) << 40, int64_t(1) << 40}, DataType::int8()), Error);
}

TEST(Tensor, FillAndElementAccessForEveryType) {
  for (const char* name : {"float16", "float32", "float64", "bfloat16", "int8", "int16", "int32",
                           "int64", "uint8", "uint16", "uint32", "uint64"}) {
    Tensor t = Tensor::empty({3, 2}, DataType::parse(name));
    t.fill(3);
    for (int64_t i = 0; i < 6; ++i) ASSERT_EQ(t.get_as_double(i), 3.0) << name;
    t.set_from_double(4, 7);
    EXPECT_EQ(t.get_as_double(4), 7.0) << name;
  }
  Tensor b = Tensor::empty({4}, DataType::boolean());
  b.fill(5);
  EXPECT_EQ(b.data_as<uint8_t>()[3], 1);
}

TEST(Tensor, CopyIsDeepAndHandleCopyIsShallow) {
  Tensor a = Tensor::empty({4}, DataType::int32());
  for (int i = 0; i < 4; ++i) a.data_as<int32_t>()[i] = i;
  Tensor shared = a;
  Tensor deep = a.copy();
  a.data_as<int32_t>()[0] = 42;
  EXPECT_EQ(shared.data_as<int32_t>()[0], 42);
  EXPECT_EQ(deep.data_as<int32_t>()[0], 0);
  EXPECT_EQ(a.use_count(), 2);
  EXPECT_TRUE(shared.same_as(a));
  EXPECT_FALSE(deep.same_as(a));
}

TEST(Tensor, ViewSharesStorageAndKeepsBaseAlive) {
  Tensor view;
  {
    Tensor base = Tensor::empty({2, 6}, DataType::float32());
    for (int i = 0; i < 12; ++i) base.data_as<float>()[i] = float(i);
    view = base.view({3, 4});
  }
  EXPECT_EQ(view.shape()[0], 3);
  EXPECT_EQ(view.get_as_double(11), 11.0);
  EXPECT_THROW(view.view({5}), Error);
}

TEST(Tensor, CopyFromStridedSource) {
  // A transposed 2x3 view over a 3x2 buffer.
  float storage[6] = {0, 1, 2, 3, 4, 5};
  Tensor transposed = Tensor::wrap(storage, {2, 3}, DataType::float32(), {1, 2});
  EXPECT_FALSE(transposed.is_contiguous());
  Tensor dense = Tensor::empty({2, 3}, DataType::float32());
  dense.copy_from(transposed);
  const float expected[6] = {0, 2, 4, 1, 3, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(dense.data_as<float>()[i], expected[i]);
  Tensor wrong = Tensor::empty({3, 2}, DataType::float32());
  EXPECT_THROW(wrong.copy_from(transposed), Error);
}

TEST(Tensor, DLPackExportKeepsDataAliveUntilDeleter) {
  DLManagedTensor* managed;
  void* data;
  {
    Tensor t = Tensor::empty({5}, DataType::float32());
    t.fill(1.5);
    data = t.data();
    managed = t.to_dlpack();
  }
  EXPECT_EQ(managed->dl_tensor.data, data);
  EXPECT_EQ(static_cast<float*>(managed->dl_tensor.data)[4], 1.5f);
  Tensor back = Tensor::from_dlpack(managed);  // takes ownership; deleter runs with `back`
  EXPECT_EQ(back.data(), data);
  EXPECT_EQ(back.get_as_double(2), 1.5);
}

struct ForeignBuffer {
  double values[3] = {1, 2, 3};
  int64_t shape[1] = {3};
  bool* deleted;
};

TEST(Tensor, DLPackImportCallsProducerDeleterOnce) {
  bool deleted = false;
  auto* foreign = new ForeignBuffer{};
  foreign->deleted = &deleted;
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor.data = foreign->values;
  managed->dl_tensor.device = {kDLCPU, 0};
  managed->dl_tensor.ndim = 1;
  managed->dl_tensor.dtype = {kDLFloat, 64, 1};
  managed->dl_tensor.shape = foreign->shape;
  managed->dl_tensor.strides = nullptr;
  managed->manager_ctx = foreign;
  managed->deleter = [](DLManagedTensor* self) {
    auto* owner = static_cast<ForeignBuffer*>(self->manager_ctx);
    *owner->deleted = true;
    delete owner;
    delete self;
  };
  {
    Tensor t = Tensor::from_dlpack(managed);
    Tensor again = t;
    EXPECT_EQ(t.get_as_double(2), 3.0);
    EXPECT_TRUE(t.is_contiguous());
  }
  EXPECT_TRUE(deleted);
}

TEST(Tensor, ShapeToString) {
  std::vector<int64_t> s{1, 3, 224, 224};
  EXPECT_EQ(shape_to_string(s), "(1, 3, 224, 224)");
  std::vector<int64_t> one{7};
  EXPECT_EQ(shape_to_string(one), "(7,)");
}

}  // namespace
}  // namespace anvil
