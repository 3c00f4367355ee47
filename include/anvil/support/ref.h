// Intrusive reference counting: the ownership model of tensors and IR nodes.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace anvil {

// Base of every refcounted object. The count lives in the object, so a raw
// pointer can be turned back into an owning Ref without a control block.
class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;

  void inc_ref() const noexcept { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void dec_ref() const noexcept {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int32_t use_count() const noexcept { return ref_count_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int32_t> ref_count_{0};
};

// An owning pointer to a RefCounted object.
template <typename T>
class Ref {
 public:
  Ref() noexcept = default;
  Ref(std::nullptr_t) noexcept {}
  explicit Ref(T* ptr) noexcept : ptr_(ptr) {
    if (ptr_) ptr_->inc_ref();
  }
  Ref(const Ref& other) noexcept : Ref(other.ptr_) {}
  Ref(Ref&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U>
  Ref(const Ref<U>& other) noexcept : Ref(static_cast<T*>(other.get())) {}
  ~Ref() {
    if (ptr_) ptr_->dec_ref();
  }
  Ref& operator=(Ref other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  T* get() const noexcept { return ptr_; }
  T* operator->() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  bool operator==(const Ref& other) const noexcept { return ptr_ == other.ptr_; }
  bool operator==(std::nullptr_t) const noexcept { return ptr_ == nullptr; }

 private:
  T* ptr_ = nullptr;
};

// Allocates a T and returns the first owning reference to it.
template <typename T, typename... Args>
Ref<T> make_ref(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

}  // namespace anvil
