// The runtime half of the extension: devices, NDArray (anvil::Tensor) with numpy and DLPack
// both ways, the global function registry with Python callables in it, and params blobs.
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "anvil/runtime/packed_func.h"
#include "anvil/runtime/params.h"
#include "anvil/support/error.h"
#include "bindings.h"

namespace anvil::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

nb::tuple shape_tuple(std::span<const int64_t> shape) {
  nb::list dims;
  for (int64_t d : shape) dims.append(d);
  return nb::tuple(dims);
}

DataType from_dlpack_dtype(nb::dlpack::dtype t) {
  if (t.code == uint8_t(nb::dlpack::dtype_code::Bool)) return DataType::boolean();
  return DataType(t.code, t.bits, t.lanes);
}

// The numpy element type of dtype, or an Error naming the dtype numpy has none for.
nb::dlpack::dtype numpy_dtype(DataType dtype) {
  if (dtype.is_bool()) return {uint8_t(nb::dlpack::dtype_code::Bool), 8, 1};
  const bool plain = dtype.lanes == 1 && (dtype.is_int() || dtype.is_uint() || dtype.is_float()) &&
                     !dtype.is_minifloat() && !dtype.is_sub_byte_int() && dtype.bits >= 8;
  if (!plain) throw Error("numpy has no element type for " + dtype.to_string());
  return {dtype.code, dtype.bits, 1};
}

// numpy's __array_interface__ of the tensor: a view of its memory, kept alive by the NDArray.
nb::dict array_interface(const Tensor& tensor) {
  nb::dlpack::dtype dtype = numpy_dtype(tensor.dtype());
  char kind = dtype.code == uint8_t(nb::dlpack::dtype_code::Bool)    ? 'b'
              : dtype.code == uint8_t(nb::dlpack::dtype_code::Float) ? 'f'
              : dtype.code == uint8_t(nb::dlpack::dtype_code::Int)   ? 'i'
                                                                     : 'u';
  nb::dict d;
  d["version"] = 3;
  d["shape"] = shape_tuple(tensor.shape());
  d["typestr"] = std::string(dtype.bits == 8 ? "|" : "<") + kind + std::to_string(dtype.bits / 8);
  d["data"] = nb::make_tuple(reinterpret_cast<uintptr_t>(tensor.data()), false);
  if (!tensor.is_contiguous()) {
    nb::list strides;
    for (int64_t s : tensor.strides()) strides.append(s * int64_t(dtype.bits / 8));
    d["strides"] = nb::tuple(strides);
  } else {
    d["strides"] = nb::none();
  }
  return d;
}

// A copy of the tensor as a numpy array that owns its memory.
nb::object to_numpy(const Tensor& tensor) {
  nb::dlpack::dtype dtype = numpy_dtype(tensor.dtype());
  auto* owned = new Tensor(tensor.copy());
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(owned->shape().begin(), owned->shape().end());
  nb::ndarray<nb::numpy> array(owned->data(), shape.size(), shape.data(), owner, nullptr, dtype);
  return nb::cast(array, nb::rv_policy::reference);
}

// A DLPack capsule sharing the tensor; the capsule's destructor frees it unless a consumer has
// taken it (and renamed the capsule).
nb::object to_dlpack_capsule(const Tensor& tensor) {
  DLManagedTensor* managed = tensor.to_dlpack();
  PyObject* capsule = PyCapsule_New(managed, kCapsuleName, [](PyObject* self) {
    if (!PyCapsule_IsValid(self, kCapsuleName)) return;  // consumed
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, kCapsuleName));
    if (m && m->deleter) m->deleter(m);
  });
  if (!capsule) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// A tensor sharing the memory of anything with __dlpack__ (or of a DLPack capsule).
Tensor from_dlpack(nb::handle object) {
  nb::object capsule = nb::borrow(object);
  if (!PyCapsule_CheckExact(object.ptr())) {
    if (!nb::hasattr(object, "__dlpack__"))
      throw Error(std::string("from_dlpack: expected an object with __dlpack__, got ") +
                  nb::type_name(object.type()).c_str());
    capsule = object.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsuleName))
    throw Error("from_dlpack: the capsule is not an unused 'dltensor' (already consumed?)");
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsuleName));
  if (managed->dl_tensor.device.device_type != kDLCPU)
    throw Error("from_dlpack: only CPU tensors can be shared, got device type " +
                std::to_string(int(managed->dl_tensor.device.device_type)));
  Tensor tensor = Tensor::from_dlpack(managed);
  PyCapsule_SetName(capsule.ptr(), kUsedCapsuleName);
  return tensor;
}

// ---- Packed functions: values both ways, and Python callables as PackedFuncs ----

Value to_value(nb::handle object, const std::string& what) {
  if (object.is_none()) return Value();
  if (nb::isinstance<Tensor>(object)) return Value(nb::cast<Tensor>(object));
  if (PyBool_Check(object.ptr())) return Value(nb::cast<bool>(object));
  if (PyLong_Check(object.ptr())) return Value(nb::cast<int64_t>(object));
  if (PyFloat_Check(object.ptr())) return Value(nb::cast<double>(object));
  if (PyUnicode_Check(object.ptr())) return Value(nb::cast<std::string>(object));
  if (nb::isinstance<PackedFunc>(object)) return Value(nb::cast<PackedFunc>(object));
  return Value(as_tensor(object, what));
}

nb::object from_value(const Value& value) {
  switch (value.kind()) {
    case ValueKind::Null:
      return nb::none();
    case ValueKind::Int:
      return nb::int_(value.as_int());
    case ValueKind::Float:
      return nb::float_(value.as_float());
    case ValueKind::Bool:
      return nb::bool_(value.as_bool());
    case ValueKind::String:
      return nb::str(value.as_string().c_str());
    case ValueKind::DataType:
      return nb::str(value.as_dtype().to_string().c_str());
    case ValueKind::Tensor:
      return to_python(value.as_tensor());
    case ValueKind::Func:
      return nb::cast(value.as_func());
    case ValueKind::Handle:
      return nb::int_(reinterpret_cast<uintptr_t>(value.as_handle()));
  }
  return nb::none();
}

// Holds a Python callable for C++; drops the reference only while the interpreter lives (the
// registry's static destructors run after it has gone).
struct PythonCallable {
  PyObject* callable;
  explicit PythonCallable(nb::handle f) : callable(f.ptr()) { Py_INCREF(callable); }
  PythonCallable(const PythonCallable&) = delete;
  PythonCallable& operator=(const PythonCallable&) = delete;
  ~PythonCallable() {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    Py_DECREF(callable);
  }
};

PackedFunc python_packed_func(nb::handle callable, const std::string& name) {
  auto held = std::make_shared<PythonCallable>(callable);
  return PackedFunc(
      [held, name](const PackedArgs& args) -> Value {
        nb::gil_scoped_acquire gil;
        try {
          nb::list py_args;
          for (const Value& v : args) py_args.append(from_value(v));
          nb::object result = nb::borrow(held->callable)(*nb::tuple(py_args));
          return to_value(result, "the result of '" + name + "'");
        } catch (nb::python_error& e) {
          // One line: the exception's type and message, not the traceback.
          std::string type = nb::cast<std::string>(nb::str(e.type().attr("__name__")));
          std::string message = nb::cast<std::string>(nb::str(e.value()));
          if (size_t newline = message.find('\n'); newline != std::string::npos)
            message.resize(newline);
          throw Error("'" + name + "' (a Python function) raised " + type +
                      (message.empty() ? "" : ": " + message));
        }
      },
      name);
}

Value call_packed(const PackedFunc& f, nb::args args) {
  std::vector<Value> values;
  for (size_t i = 0; i < args.size(); ++i)
    values.push_back(to_value(args[i], "argument " + std::to_string(i) + " of '" + f.name() + "'"));
  nb::gil_scoped_release release;
  return f.call(values);
}

}  // namespace

Tensor as_tensor(nb::handle object, const std::string& what) {
  if (nb::isinstance<Tensor>(object)) return nb::cast<Tensor>(object);
  nb::ndarray<nb::ro, nb::device::cpu> array;
  if (!nb::try_cast(object, array))
    throw Error(what + ": expected an array (numpy.ndarray or anvil.nd.NDArray), got " +
                nb::type_name(object.type()).c_str());
  std::vector<int64_t> shape(array.ndim());
  int64_t expected = 1;
  bool contiguous = true;
  for (size_t i = array.ndim(); i-- > 0;) {
    shape[i] = int64_t(array.shape(i));
    if (shape[i] != 1 && array.stride(i) != expected) contiguous = false;
    expected *= shape[i];
  }
  if (!contiguous)
    throw Error(what +
                ": the array is not C-contiguous (pass numpy.ascontiguousarray(a), or an "
                "anvil.nd.array)");
  return Tensor::wrap(const_cast<void*>(array.data()), shape, from_dlpack_dtype(array.dtype()));
}

nb::object to_python(const Tensor& tensor) { return nb::cast(tensor); }

void bind_runtime(nb::module_& m) {
  nb::class_<Device>(m, "Device", "A device tensors live on and code runs on (anvil.cpu()).")
      .def_prop_ro("device_type", [](const Device& d) { return int(d.type); })
      .def_prop_ro("device_id", [](const Device& d) { return d.id; })
      .def("__eq__", [](const Device& a, const Device& b) { return a == b; })
      .def("__repr__",
           [](const Device& d) { return d.to_string() + "(" + std::to_string(d.id) + ")"; });
  m.def(
      "cpu", [](int id) { return Device::cpu(id); }, nb::arg("dev_id") = 0,
      "The host CPU (TVM's tvm.cpu()).");

  nb::class_<Tensor>(m, "NDArray",
                     "An n-dimensional array on a device (TVM's NDArray). Copying an NDArray "
                     "handle shares its memory; numpy() makes a copy.")
      .def_prop_ro("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
      .def_prop_ro("dtype", [](const Tensor& t) { return t.dtype().to_string(); })
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro(
          "data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data()); },
          "The address of the first element (to check sharing).")
      .def("numpy", &to_numpy, "A numpy array holding a copy of the elements.")
      .def_prop_ro("__array_interface__", &array_interface,
                   "numpy.asarray(a) is a writable view of this array's memory (no copy).")
      .def(
          "copyfrom",
          [](Tensor& t, nb::handle source) -> Tensor& {
            t.copy_from(as_tensor(source, "copyfrom"));
            return t;
          },
          nb::arg("source"), nb::rv_policy::reference,
          "Copies the elements of an array of the same shape and dtype into this one.")
      .def(
          "__dlpack__", [](const Tensor& t, nb::kwargs) { return to_dlpack_capsule(t); },
          "A DLPack capsule sharing this array's memory (the stream and version arguments of the "
          "array API are accepted and ignored: the memory is the host's).")
      .def("__dlpack_device__",
           [](const Tensor& t) {
             return std::make_pair(int(t.device().to_dlpack().device_type), t.device().id);
           })
      .def("__repr__", [](const Tensor& t) {
        return "<anvil.nd.NDArray shape=" + shape_to_string(t.shape()) +
               ", dtype=" + t.dtype().to_string() + ">";
      });

  m.def(
      "array",
      [](nb::handle source, nb::handle dtype) {
        Tensor view = as_tensor(source, "anvil.nd.array");
        Tensor copy = view.copy();
        if (!dtype.is_none() && DataType::parse(nb::cast<std::string>(dtype)) != copy.dtype())
          throw Error("anvil.nd.array: the array's dtype is " + copy.dtype().to_string() +
                      ", not " + nb::cast<std::string>(dtype) + " (convert it with numpy first)");
        return copy;
      },
      nb::arg("source"), nb::arg("dtype") = nb::none(),
      "A new NDArray holding a copy of a C-contiguous array.");
  m.def(
      "empty",
      [](std::vector<int64_t> shape, const std::string& dtype) {
        return Tensor::empty(std::move(shape), DataType::parse(dtype));
      },
      nb::arg("shape"), nb::arg("dtype") = "float32", "A new uninitialized NDArray.");
  m.def("from_dlpack", &from_dlpack, nb::arg("tensor"),
        "An NDArray sharing the memory of a DLPack producer (torch, numpy, ...) without a copy.");

  nb::class_<PackedFunc>(m, "PackedFunc", "A function of the runtime's registry or of a module.")
      .def_prop_ro("name", &PackedFunc::name)
      .def("__call__",
           [](const PackedFunc& f, nb::args args) { return from_value(call_packed(f, args)); });
  m.def(
      "register_func",
      [](const std::string& name, nb::handle f, bool override_existing) {
        if (!PyCallable_Check(f.ptr())) throw Error("register_func('" + name + "'): not callable");
        register_global(name, python_packed_func(f, name), override_existing);
      },
      nb::arg("name"), nb::arg("f"), nb::arg("override") = false);
  m.def(
      "get_global_func",
      [](const std::string& name, bool allow_missing) -> nb::object {
        std::optional<PackedFunc> f = find_global(name);
        if (f) return nb::cast(*f);
        if (allow_missing) return nb::none();
        return nb::cast(get_global(name));  // throws the registry's error
      },
      nb::arg("name"), nb::arg("allow_missing") = false);
  m.def("list_global_func_names", &list_globals);
  m.def("remove_global_func", [](const std::string& name) { return remove_global(name); });

  m.def(
      "save_param_dict",
      [](nb::dict params) {
        NamedTensors tensors;
        for (auto [key, value] : params) {
          std::string name = nb::cast<std::string>(key);
          tensors.emplace_back(name, as_tensor(value, "param '" + name + "'"));
        }
        std::string bytes = save_params(tensors);
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("params"));
  m.def(
      "load_param_dict",
      [](nb::bytes bytes) {
        nb::dict params;
        for (auto& [name, tensor] :
             load_params(std::string_view(bytes.c_str(), bytes.size()), "params bytes"))
          params[name.c_str()] = to_python(tensor);
        return params;
      },
      nb::arg("param_bytes"));
}

}  // namespace anvil::python
