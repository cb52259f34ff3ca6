//===- Instance.cpp - running compiled models from Python -----------------===//
//
// Part of the seqc project.
//
//===----------------------------------------------------------------------===//
//
// One call of a model from Python (seqc.Model.__call__) costs a few
// microseconds more than the same calls through the C API: the arguments are
// matched to the manifest's inputs here, each NumPy array is bound with
// seqc_model_set_input_view (in place when it is C-contiguous and aligned),
// the model runs with the GIL released, and each output comes back as an
// array over the storage seqc_model_retain_output keeps alive (a capsule
// that releases it is the array's base). Everything else (weights, state,
// generation, descriptions) goes through ctypes in seqc/_runtime.py.
//
// NumPy's C API is looked up at run time from NumPy's capsule, as pybind11's
// numpy.h does, so the extension builds without NumPy's headers and runs
// with NumPy 1.x and 2.x alike: it uses four API slots and the leading
// fields of the array and descriptor objects, which both keep.
//
//===----------------------------------------------------------------------===//

#include "tools/python/src/Instance.h"

#include "runtime/include/seqc_runtime.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

//===----------------------------------------------------------------------===//
// NumPy
//===----------------------------------------------------------------------===//

/// The leading fields of NumPy's PyArrayObject (numpy/ndarraytypes.h).
struct ArrayFields {
  PyObject_HEAD char *data;
  int nd;
  Py_intptr_t *dimensions;
  Py_intptr_t *strides;
  PyObject *base;
  PyObject *descr;
  int flags;
};

/// The leading fields of NumPy's PyArray_Descr.
struct DescrFields {
  PyObject_HEAD PyTypeObject *typeobj;
  char kind;
  char type;
  char byteorder;
  char flags;
  int type_num;
};

constexpr int kArrayCContiguous = 0x0001; // NPY_ARRAY_C_CONTIGUOUS
constexpr int kArrayCArray = 0x0501;      // NPY_ARRAY_CARRAY

/// The slots of NumPy's C API that the per-call path uses.
struct NumPy {
  PyTypeObject *arrayType = nullptr;
  PyObject *(*descrFromType)(int) = nullptr;
  PyObject *(*newFromDescr)(PyTypeObject *, PyObject *, int, Py_intptr_t *,
                            Py_intptr_t *, void *, int, PyObject *) = nullptr;
  int (*setBaseObject)(PyObject *, PyObject *) = nullptr;
  /// numpy.ascontiguousarray, for inputs that are not C-contiguous.
  PyObject *ascontiguousarray = nullptr;
  /// seqc_dtype of each NumPy type number (-1: not one seqc takes), and
  /// the NumPy type number of each seqc_dtype an output can have (-1: none).
  std::vector<int> seqcDtypes;
  int numpyTypes[SEQC_DTYPE_Q4_1 + 1];

  bool isArray(PyObject *object) const {
    return PyObject_TypeCheck(object, arrayType);
  }
  /// The seqc_dtype of `array`'s elements, -1 when seqc takes no such
  /// elements (another type, or the wrong byte order).
  int seqcDtype(PyObject *array) const {
    auto *descr = reinterpret_cast<DescrFields *>(
        reinterpret_cast<ArrayFields *>(array)->descr);
    if (descr->byteorder == '>' || descr->type_num < 0 ||
        descr->type_num >= static_cast<int>(seqcDtypes.size()))
      return -1;
    return seqcDtypes[descr->type_num];
  }
};

NumPy *numpy = nullptr;

/// Fills `numpy` from NumPy's `_ARRAY_API` capsule (NumPy 2 moved the module
/// from numpy.core to numpy._core).
void lookUpNumPy() {
  py::module_ multiarray;
  try {
    multiarray = py::module_::import("numpy._core._multiarray_umath");
  } catch (py::error_already_set &) {
    multiarray = py::module_::import("numpy.core._multiarray_umath");
  }
  py::object capsule = multiarray.attr("_ARRAY_API");
  void **api = static_cast<void **>(
      PyCapsule_GetPointer(capsule.ptr(), PyCapsule_GetName(capsule.ptr())));
  if (!api)
    throw py::error_already_set();
  auto *result = new NumPy;
  // Slot numbers of numpy/__multiarray_api.h, fixed by NumPy's ABI.
  result->arrayType = static_cast<PyTypeObject *>(api[2]);
  result->descrFromType =
      reinterpret_cast<decltype(result->descrFromType)>(api[45]);
  result->newFromDescr =
      reinterpret_cast<decltype(result->newFromDescr)>(api[94]);
  result->setBaseObject =
      reinterpret_cast<decltype(result->setBaseObject)>(api[282]);
  py::module_ np = py::module_::import("numpy");
  // Kept for the life of the process, as NumPy is.
  result->ascontiguousarray =
      py::object(np.attr("ascontiguousarray")).release().ptr();
  // Every type character of an equal dtype maps to the seqc dtype (int64
  // is both `long` and `long long` on LP64 systems).
  const std::pair<int, const char *> names[] = {
      {SEQC_DTYPE_F32, "float32"}, {SEQC_DTYPE_F64, "float64"},
      {SEQC_DTYPE_F16, "float16"}, {SEQC_DTYPE_BF16, "uint16"},
      {SEQC_DTYPE_I32, "int32"},   {SEQC_DTYPE_I64, "int64"}};
  py::object dtypeOf = np.attr("dtype");
  std::string characters =
      py::str(np.attr("typecodes")["All"]).cast<std::string>();
  for (int &type : result->numpyTypes)
    type = -1;
  for (const auto &[dtype, name] : names)
    result->numpyTypes[dtype] = dtypeOf(name).attr("num").cast<int>();
  for (char character : characters) {
    py::object candidate = dtypeOf(std::string(1, character));
    int number = candidate.attr("num").cast<int>();
    if (number < 0)
      continue;
    if (static_cast<int>(result->seqcDtypes.size()) <= number)
      result->seqcDtypes.resize(number + 1, -1);
    // bf16 comes back as its bits (uint16) but is never taken as input.
    for (const auto &[dtype, name] : names)
      if (dtype != SEQC_DTYPE_BF16 && candidate.equal(dtypeOf(name)))
        result->seqcDtypes[number] = dtype;
  }
  numpy = result;
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

/// The C API of one model library, resolved from the handle ctypes opened
/// it with, and the package's Python hooks: the exception of a status, the
/// conversion of anything else to a NumPy array and of an output array to a
/// PyTorch tensor.
class Runtime {
public:
  Runtime(std::uintptr_t handle, py::object errorForStatus, py::object asArray,
          py::object toTorch)
      : errorForStatus(std::move(errorForStatus)), asArray(std::move(asArray)),
        toTorch(std::move(toTorch)) {
    void *library = reinterpret_cast<void *>(handle);
    resolve(library, "seqc_status_get_code", statusGetCode);
    resolve(library, "seqc_status_message", statusMessage);
    resolve(library, "seqc_status_free", statusFree);
    resolve(library, "seqc_model_reset_inputs", resetInputs);
    resolve(library, "seqc_model_set_dim", setDim);
    resolve(library, "seqc_model_set_input_view", setInputView);
    resolve(library, "seqc_model_run", run);
    resolve(library, "seqc_model_retain_output", retainOutput);
    resolve(library, "seqc_buffer_ref_release", bufferRefRelease);
    resolve(library, "seqc_model_selected_entry", selectedEntry);
    resolve(library, "seqc_model_select_entry", selectEntry);
  }

  /// Raises the package's exception for `code` (seqc._error_for_status).
  [[noreturn]] void raise(int code, const py::str &message) const {
    py::object error = errorForStatus(code, message);
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(error.ptr())),
                    error.ptr());
    throw py::error_already_set();
  }

  /// Raises the exception of a non-NULL status, which it frees.
  void check(seqc_status *status) const {
    if (!status)
      return;
    int code = statusGetCode(status);
    const char *text = statusMessage(status);
    PyObject *message =
        PyUnicode_DecodeUTF8(text, std::strlen(text), "replace");
    statusFree(status);
    if (!message)
      throw py::error_already_set();
    raise(code, py::reinterpret_steal<py::str>(message));
  }

  decltype(&seqc_status_get_code) statusGetCode;
  decltype(&seqc_status_message) statusMessage;
  decltype(&seqc_status_free) statusFree;
  decltype(&seqc_model_reset_inputs) resetInputs;
  decltype(&seqc_model_set_dim) setDim;
  decltype(&seqc_model_set_input_view) setInputView;
  decltype(&seqc_model_run) run;
  decltype(&seqc_model_retain_output) retainOutput;
  decltype(&seqc_buffer_ref_release) bufferRefRelease;
  decltype(&seqc_model_selected_entry) selectedEntry;
  decltype(&seqc_model_select_entry) selectEntry;
  py::object errorForStatus;
  py::object asArray;
  py::object toTorch;

private:
  template <typename Function>
  static void resolve(void *library, const char *name, Function &function) {
    function = reinterpret_cast<Function>(dlsym(library, name));
    if (!function)
      throw std::runtime_error(std::string("the model library has no ") +
                               name);
  }
};

/// The base of an output array: releases the output's storage with the
/// runtime that retained it.
constexpr const char *kBufferRefName = "seqc.buffer_ref";

void releaseBufferRef(PyObject *capsule) {
  auto release = reinterpret_cast<decltype(&seqc_buffer_ref_release)>(
      PyCapsule_GetContext(capsule));
  release(static_cast<seqc_buffer_ref *>(
      PyCapsule_GetPointer(capsule, kBufferRefName)));
}

/// Bytes above which binding an input releases the GIL (the runtime checks
/// the ranges of integer inputs and copies unaligned data).
constexpr int64_t kReleaseGilBytes = 1 << 20;

int64_t elementSize(seqc_dtype dtype) {
  switch (dtype) {
  case SEQC_DTYPE_F64:
  case SEQC_DTYPE_I64:
    return 8;
  case SEQC_DTYPE_F16:
  case SEQC_DTYPE_BF16:
    return 2;
  default:
    return 4;
  }
}

//===----------------------------------------------------------------------===//
// Instance
//===----------------------------------------------------------------------===//

/// The per-call path of one entry of one seqc_model. The handle stays owned
/// by the Python Model (which frees it after `close`); `lock` is the Model's
/// threading.Lock, held around every call so that the Python side
/// (generation) and this one run one call at a time. Several Instances (the
/// Model and its entries' views, seqc.Entry) share one handle, each running
/// its own entry: a call selects it first when another one is selected
/// (seqc_model_select_entry; the inputs, outputs and dimensions are then
/// that entry's, the weights and the state the instance's).
class Instance {
public:
  Instance(py::object runtimeObject, std::uintptr_t handle, std::string name,
           std::string entry, const std::vector<std::string> &inputNames,
           std::vector<std::string> outputNames, py::object outputsType,
           const py::object &lock, py::dict dims)
      : runtimeObject(std::move(runtimeObject)),
        runtime(this->runtimeObject.cast<Runtime *>()),
        model(reinterpret_cast<seqc_model *>(handle)), name(std::move(name)),
        entry(std::move(entry)), outputNames(std::move(outputNames)),
        outputsType(std::move(outputsType)), acquire(lock.attr("acquire")),
        release(lock.attr("release")), dims(std::move(dims)) {
    for (const std::string &input : inputNames) {
      py::str key(input);
      PyUnicode_InternInPlace(&key.ptr());
      inputs.push_back({input, std::move(key), py::none()});
    }
  }

  /// Runs on `args` (in manifest order) and `kwargs` (by name, may be
  /// NULL); returns the outputs as an instance of the outputs type (a named
  /// tuple) of arrays, or of tensors with `asTorch`.
  py::object call(PyObject *args, PyObject *kwargs, bool asTorch);
  /// Binds input `inputName`; true when the data is used in place.
  bool bindNamed(const std::string &inputName, const py::handle &value);
  void runBound();
  /// Output `outputName` of the last run as an array.
  py::object outputNamed(const std::string &outputName);
  /// The entry this runs and the handle it runs it on.
  bool runs(const std::string &entryName, std::uintptr_t handle) const {
    return entry == entryName &&
           reinterpret_cast<std::uintptr_t>(model) == handle;
  }
  /// Forgets the handle (the Model frees it) and the borrowed inputs.
  void close() {
    model = nullptr;
    for (Input &input : inputs)
      input.alive = py::none();
  }
  /// Visits the Python objects this holds (the garbage collector's
  /// tp_traverse).
  int traverse(visitproc visit, void *arg) const {
    for (const py::object *object :
         {&runtimeObject, &outputsType, &acquire, &release,
          static_cast<const py::object *>(&dims)})
      Py_VISIT(object->ptr());
    for (const Input &input : inputs)
      Py_VISIT(input.alive.ptr());
    return 0;
  }

private:
  struct Input {
    std::string name;
    py::str key;
    /// The array bound in place, kept alive while the runtime reads it.
    py::object alive;
  };

  /// Holds the Model's lock (its acquire waits with the GIL released).
  class Locked {
  public:
    explicit Locked(Instance &instance) : instance(instance) {
      PyObject *result = PyObject_CallNoArgs(instance.acquire.ptr());
      if (!result)
        throw py::error_already_set();
      Py_DECREF(result);
    }
    ~Locked() {
      PyObject *result = PyObject_CallNoArgs(instance.release.ptr());
      if (!result)
        PyErr_WriteUnraisable(instance.release.ptr());
      Py_XDECREF(result);
    }

  private:
    Instance &instance;
  };

  /// Raises when the model is closed; else selects this Instance's entry
  /// when another one is selected (with the lock held).
  void ensureOpen() const {
    if (!model)
      runtime->raise(SEQC_STATUS_FAILED_PRECONDITION,
                     py::str("the model is closed"));
    if (!entry.empty()) {
      const char *selected = runtime->selectedEntry(model);
      if (!selected || std::strcmp(selected, entry.c_str()) != 0)
        runtime->check(runtime->selectEntry(model, entry.c_str()));
    }
  }
  void applyDims();
  bool bind(const char *inputName, Input *slot, const py::handle &value);
  py::object output(const char *outputName);

  py::object runtimeObject;
  const Runtime *runtime;
  seqc_model *model;
  /// The name calls use in their messages ("gpt", "gpt.decode").
  std::string name;
  /// The entry this runs (empty: whichever is selected).
  std::string entry;
  std::vector<Input> inputs;
  std::vector<std::string> outputNames;
  py::object outputsType;
  py::object acquire, release;
  /// Sizes set with model.dims (seqc_model_set_dim before each call).
  py::dict dims;
};

void Instance::applyDims() {
  for (auto [key, size] : dims) {
    std::string dim = py::str(key);
    long long value = PyLong_AsLongLong(size.ptr());
    if (value == -1 && PyErr_Occurred())
      throw py::error_already_set();
    runtime->check(runtime->setDim(model, dim.c_str(), value));
  }
}

bool Instance::bind(const char *inputName, Input *slot,
                    const py::handle &value) {
  py::object array = py::reinterpret_borrow<py::object>(value);
  if (!numpy->isArray(array.ptr())) {
    array = runtime->asArray(value);
    if (!numpy->isArray(array.ptr()))
      throw py::type_error("seqc._as_array did not return an array");
  }
  int dtype = numpy->seqcDtype(array.ptr());
  if (dtype < 0)
    runtime->raise(
        SEQC_STATUS_INVALID_ARGUMENT,
        py::str("input '{}': dtype {} is not one seqc takes (float32, "
                "float64, float16, int32, int64)")
            .format(inputName, py::str(array.attr("dtype"))));
  auto *fields = reinterpret_cast<ArrayFields *>(array.ptr());
  bool contiguous = fields->flags & kArrayCContiguous;
  if (!contiguous) {
    PyObject *copy = PyObject_CallOneArg(numpy->ascontiguousarray,
                                         array.ptr());
    if (!copy)
      throw py::error_already_set();
    array = py::reinterpret_steal<py::object>(copy);
    fields = reinterpret_cast<ArrayFields *>(array.ptr());
  }
  if (fields->nd > SEQC_MAX_RANK)
    runtime->raise(SEQC_STATUS_INVALID_ARGUMENT,
                   py::str("rank {} is more than {}")
                       .format(fields->nd, SEQC_MAX_RANK));
  seqc_tensor tensor;
  tensor.dtype = static_cast<seqc_dtype>(dtype);
  tensor.rank = fields->nd;
  int64_t count = 1;
  for (int d = 0; d < fields->nd; ++d) {
    tensor.shape[d] = fields->dimensions[d];
    count *= fields->dimensions[d];
  }
  tensor.data = count ? fields->data : nullptr;
  int32_t borrowed = 0;
  seqc_status *status;
  if (count * elementSize(tensor.dtype) >= kReleaseGilBytes) {
    py::gil_scoped_release unlocked;
    status = runtime->setInputView(model, inputName, &tensor, &borrowed);
  } else {
    status = runtime->setInputView(model, inputName, &tensor, &borrowed);
  }
  runtime->check(status);
  if (slot)
    slot->alive = borrowed ? std::move(array) : py::none();
  return contiguous && borrowed;
}

py::object Instance::output(const char *outputName) {
  seqc_tensor tensor;
  seqc_buffer_ref *ref = nullptr;
  runtime->check(runtime->retainOutput(model, outputName, &tensor, &ref));
  int type = tensor.dtype >= 0 && tensor.dtype <= SEQC_DTYPE_Q4_1
                 ? numpy->numpyTypes[tensor.dtype]
                 : -1;
  Py_intptr_t shape[SEQC_MAX_RANK];
  int64_t count = 1;
  for (int d = 0; d < tensor.rank; ++d) {
    shape[d] = tensor.shape[d];
    count *= tensor.shape[d];
  }
  if (type < 0 || count == 0 || !ref) {
    runtime->bufferRefRelease(ref);
    if (type < 0)
      runtime->raise(SEQC_STATUS_MODEL_ERROR,
                     py::str("output '{}' has dtype {}, which NumPy has no "
                             "type for")
                         .format(outputName, static_cast<int>(tensor.dtype)));
    // An empty output: an array of its own (nothing to keep alive).
    PyObject *empty =
        numpy->newFromDescr(numpy->arrayType, numpy->descrFromType(type),
                            tensor.rank, shape, nullptr, nullptr, 0, nullptr);
    if (!empty)
      throw py::error_already_set();
    return py::reinterpret_steal<py::object>(empty);
  }
  PyObject *owner = PyCapsule_New(ref, kBufferRefName, releaseBufferRef);
  if (!owner) {
    runtime->bufferRefRelease(ref);
    throw py::error_already_set();
  }
  PyCapsule_SetContext(owner,
                       reinterpret_cast<void *>(runtime->bufferRefRelease));
  PyObject *array = numpy->newFromDescr(
      numpy->arrayType, numpy->descrFromType(type), tensor.rank, shape,
      nullptr, tensor.data, kArrayCArray, nullptr);
  if (!array) {
    Py_DECREF(owner);
    throw py::error_already_set();
  }
  // Steals `owner`, also when it fails.
  if (numpy->setBaseObject(array, owner) < 0) {
    Py_DECREF(array);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(array);
}

py::object Instance::call(PyObject *args, PyObject *kwargs, bool asTorch) {
  size_t count = inputs.size();
  size_t positional = PyTuple_GET_SIZE(args);
  if (positional > count)
    throw py::type_error(py::str("{} takes {} inputs, got {}")
                             .format(name, count, positional));
  std::vector<PyObject *> values(count, nullptr);
  size_t byName = 0;
  size_t givenByName = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
  for (size_t i = 0; i < count; ++i) {
    PyObject *value =
        givenByName ? PyDict_GetItemWithError(kwargs, inputs[i].key.ptr())
                    : nullptr;
    if (!value && PyErr_Occurred())
      throw py::error_already_set();
    if (i < positional) {
      if (value)
        throw py::type_error(
            py::str("input '{}' given twice").format(inputs[i].name));
      value = PyTuple_GET_ITEM(args, i);
    } else if (value) {
      ++byName;
    }
    values[i] = value;
  }
  if (byName != givenByName) {
    py::list known;
    for (const Input &input : inputs)
      known.append(input.key);
    known.attr("sort")();
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(kwargs))
      if (!known.contains(key))
        runtime->raise(SEQC_STATUS_NOT_FOUND,
                       py::str("{} has no input '{}' (inputs: {})")
                           .format(name, key, py::str(", ").attr("join")(
                                                  known)));
  }
  py::list missing;
  for (size_t i = 0; i < count; ++i)
    if (!values[i])
      missing.append(inputs[i].key);
  if (!missing.empty())
    runtime->raise(SEQC_STATUS_INVALID_ARGUMENT,
                   py::str("missing input(s) {} of {}")
                       .format(py::str(", ").attr("join")(missing), name));

  Locked locked(*this);
  ensureOpen();
  runtime->resetInputs(model);
  if (PyDict_GET_SIZE(dims.ptr()))
    applyDims();
  for (size_t i = 0; i < count; ++i)
    bind(inputs[i].name.c_str(), &inputs[i], values[i]);
  seqc_status *status;
  {
    py::gil_scoped_release unlocked;
    status = runtime->run(model);
  }
  runtime->check(status);
  py::tuple outputs(outputNames.size());
  for (size_t i = 0; i < outputNames.size(); ++i) {
    py::object array = output(outputNames[i].c_str());
    if (asTorch)
      array = runtime->toTorch(array);
    PyTuple_SET_ITEM(outputs.ptr(), i, array.release().ptr());
  }
  // The named tuple, as its __new__ makes it, without calling into Python.
  py::tuple newArgs(1);
  PyTuple_SET_ITEM(newArgs.ptr(), 0, outputs.release().ptr());
  PyObject *result = PyTuple_Type.tp_new(
      reinterpret_cast<PyTypeObject *>(outputsType.ptr()), newArgs.ptr(),
      nullptr);
  if (!result)
    throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

bool Instance::bindNamed(const std::string &inputName,
                         const py::handle &value) {
  Locked locked(*this);
  ensureOpen();
  Input *slot = nullptr;
  for (Input &input : inputs)
    if (input.name == inputName)
      slot = &input;
  return bind(inputName.c_str(), slot, value);
}

void Instance::runBound() {
  Locked locked(*this);
  ensureOpen();
  seqc_status *status;
  {
    py::gil_scoped_release unlocked;
    status = runtime->run(model);
  }
  runtime->check(status);
}

py::object Instance::outputNamed(const std::string &outputName) {
  Locked locked(*this);
  ensureOpen();
  return output(outputName.c_str());
}


//===----------------------------------------------------------------------===//
// The base class of seqc.Model
//===----------------------------------------------------------------------===//

/// seqc._instance.Instance, the base class of seqc.Model: calling a Model is
/// this type's tp_call (a Python class that defines no __call__ inherits
/// it), so a call reaches Instance::call with no Python frame and no
/// binding layer in between.
/// Model.select_entry attaches another Instance while a call on another
/// thread may be using the current one (it holds a pointer to it while it
/// waits for the lock), so an attached Instance lives as long as the
/// object: `attached` keeps each one (at most one per entry: attaching an
/// entry again reuses its Instance), `instance` points at the one calls run.
struct InstanceObject {
  PyObject_HEAD
  /// Null until Model.__init__ attaches it.
  Instance *instance;
  /// Every Instance attached (the memory of the object starts zeroed).
  std::vector<Instance *> *attached;
};

PyTypeObject *instanceType = nullptr;

/// Runs `body` and turns a C++ exception into the pending Python error.
template <typename Body>
PyObject *translateExceptions(Body body) {
  try {
    return body();
  } catch (py::error_already_set &error) {
    error.restore();
  } catch (py::builtin_exception &error) {
    error.set_error();
  } catch (const std::exception &error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return nullptr;
}

Instance &instanceOf(py::handle self) {
  if (!PyObject_TypeCheck(self.ptr(), instanceType))
    throw py::type_error("not a seqc model instance");
  Instance *instance = reinterpret_cast<InstanceObject *>(self.ptr())->instance;
  if (!instance)
    throw py::type_error("the model instance was not initialized");
  return *instance;
}

PyObject *callInstance(PyObject *self, PyObject *args, PyObject *kwargs) {
  return translateExceptions([&]() -> PyObject * {
    Instance &instance = instanceOf(self);
    bool asTorch = false;
    py::object inputs;
    if (kwargs) {
      // as_torch=True returns tensors; every other keyword is an input.
      static PyObject *asTorchKey = PyUnicode_InternFromString("as_torch");
      PyObject *flag = PyDict_GetItemWithError(kwargs, asTorchKey);
      if (!flag && PyErr_Occurred())
        throw py::error_already_set();
      if (flag) {
        int truth = PyObject_IsTrue(flag);
        if (truth < 0)
          throw py::error_already_set();
        asTorch = truth;
        inputs = py::reinterpret_steal<py::object>(PyDict_Copy(kwargs));
        if (!inputs || PyDict_DelItem(inputs.ptr(), asTorchKey) < 0)
          throw py::error_already_set();
        kwargs = inputs.ptr();
      }
    }
    return instance.call(args, kwargs, asTorch).release().ptr();
  });
}

int traverseInstance(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  if (auto *attached = reinterpret_cast<InstanceObject *>(self)->attached)
    for (Instance *instance : *attached)
      if (int result = instance->traverse(visit, arg))
        return result;
  return 0;
}

int clearInstance(PyObject *self) {
  auto *object = reinterpret_cast<InstanceObject *>(self);
  object->instance = nullptr;
  if (std::vector<Instance *> *attached = object->attached) {
    object->attached = nullptr;
    for (Instance *instance : *attached)
      delete instance;
    delete attached;
  }
  return 0;
}

void deallocInstance(PyObject *self) {
  PyTypeObject *type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  clearInstance(self);
  type->tp_free(self);
  Py_DECREF(type);
}

/// Adds `function` to the Instance type as method `name`.
template <typename Function, typename... Extra>
void defineMethod(py::handle type, const char *name, Function &&function,
                  const Extra &...extra) {
  py::cpp_function method(std::forward<Function>(function), py::name(name),
                          py::is_method(type),
                          py::sibling(py::getattr(type, name, py::none())),
                          extra...);
  py::setattr(type, name, method);
}

} // namespace

void seqc::python::registerInstance(py::module_ &m) {
  lookUpNumPy();
  py::class_<Runtime>(m, "Runtime",
                      "The C API of one model library (seqc._runtime.Api)",
                      py::module_local())
      .def(py::init<std::uintptr_t, py::object, py::object, py::object>(),
           py::arg("handle"), py::arg("error_for_status"),
           py::arg("as_array"), py::arg("to_torch"),
           "`handle`: the library's dlopen handle (ctypes' _handle); "
           "`error_for_status(code, message)` makes the exception of a "
           "status; `as_array(value)` makes a NumPy array of a value that "
           "is not one; `to_torch(array)` a PyTorch tensor of an output.");

  static PyType_Slot slots[] = {
      {Py_tp_call, reinterpret_cast<void *>(callInstance)},
      {Py_tp_traverse, reinterpret_cast<void *>(traverseInstance)},
      {Py_tp_clear, reinterpret_cast<void *>(clearInstance)},
      {Py_tp_dealloc, reinterpret_cast<void *>(deallocInstance)},
      {Py_tp_doc, const_cast<char *>(
                      "The base class of seqc.Model: calling an instance "
                      "binds the inputs, runs the model and returns its "
                      "outputs.")},
      {0, nullptr}};
  static PyType_Spec spec = {
      "seqc._instance.Instance", sizeof(InstanceObject), 0,
      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, slots};
  py::object type =
      py::reinterpret_steal<py::object>(PyType_FromSpec(&spec));
  if (!type)
    throw py::error_already_set();
  instanceType = reinterpret_cast<PyTypeObject *>(type.ptr());
  m.attr("Instance") = type;

  defineMethod(
      type, "_attach",
      [](py::handle self, py::object runtime, std::uintptr_t model,
         std::string name, std::string entry,
         const std::vector<std::string> &inputs,
         std::vector<std::string> outputs, py::object outputsType,
         const py::object &lock, py::dict dims) {
        if (!PyObject_TypeCheck(self.ptr(), instanceType))
          throw py::type_error("not a seqc model instance");
        auto *object = reinterpret_cast<InstanceObject *>(self.ptr());
        if (!object->attached)
          object->attached = new std::vector<Instance *>;
        for (Instance *instance : *object->attached)
          if (instance->runs(entry, model)) {
            object->instance = instance;
            return;
          }
        auto *instance =
            new Instance(std::move(runtime), model, std::move(name),
                         std::move(entry), inputs, std::move(outputs),
                         std::move(outputsType), lock, std::move(dims));
        object->attached->push_back(instance);
        object->instance = instance;
      },
      py::arg("runtime"), py::arg("model"), py::arg("name"), py::arg("entry"),
      py::arg("inputs"), py::arg("outputs"), py::arg("outputs_type"),
      py::arg("lock"), py::arg("dims"),
      "Attaches the model handle `model` (freed by the caller after "
      "_close) to run its entry `entry` (selected before each call when "
      "another one is; empty: the selected one); `lock` is held around "
      "every call. Attaching an entry attached before makes its first "
      "attachment current again (the other arguments are then unused).");
  defineMethod(
      type, "_bind",
      [](py::handle self, const std::string &name, py::handle value) {
        return instanceOf(self).bindNamed(name, value);
      },
      py::arg("name"), py::arg("value"));
  defineMethod(type, "_run",
               [](py::handle self) { instanceOf(self).runBound(); });
  defineMethod(
      type, "_output",
      [](py::handle self, const std::string &name) {
        return instanceOf(self).outputNamed(name);
      },
      py::arg("name"));
  defineMethod(type, "_close", [](py::handle self) {
    if (!PyObject_TypeCheck(self.ptr(), instanceType))
      throw py::type_error("not a seqc model instance");
    if (auto *attached =
            reinterpret_cast<InstanceObject *>(self.ptr())->attached)
      for (Instance *instance : *attached)
        instance->close();
  });
}
