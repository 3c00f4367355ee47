// FunctionRef: a non-owning reference to a callable, for callbacks that do not outlive the call.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace anvil {

template <typename Signature>
class FunctionRef;

namespace detail {
// What a FunctionRef<R(Args...)> can refer to: any callable but another FunctionRef.
template <typename F, typename Ref, typename R, typename... Args>
concept FunctionRefTarget =
    !std::is_same_v<std::remove_cvref_t<F>, Ref> && std::is_invocable_r_v<R, F&, Args...>;
}  // namespace detail

// Two words, no allocation, no virtual call: cheaper than std::function on hot paths such as
// parallel loops. The referenced callable must stay alive while the FunctionRef is used; binding
// a temporary lambda to a by-value FunctionRef parameter is fine, storing it is not.
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <detail::FunctionRefTarget<FunctionRef, R, Args...> F>
  FunctionRef(F&& f) noexcept {  // NOLINT(google-explicit-constructor): meant to convert.
    if constexpr (std::is_function_v<std::remove_reference_t<F>>) {
      object_ = reinterpret_cast<void*>(&f);
      call_ = [](void* object, Args... args) -> R {
        return std::invoke(reinterpret_cast<std::remove_reference_t<F>*>(object),
                           std::forward<Args>(args)...);
      };
    } else {
      object_ = const_cast<void*>(static_cast<const void*>(std::addressof(f)));
      call_ = [](void* object, Args... args) -> R {
        return std::invoke(*static_cast<std::add_pointer_t<std::remove_reference_t<F>>>(object),
                           std::forward<Args>(args)...);
      };
    }
  }

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace anvil
