"""seqc from Python: compile `.seq` models and run them on NumPy arrays and
PyTorch tensors (docs/python.md).

    import numpy as np, seqc
    module = seqc.compile("examples/gpt.seq", defines={"depth": 2})
    model = module.load(random_weights=0)
    logits = model(tokens=np.zeros((1, 8), np.int32)).logits

A model with several entries (`def prefill`, `def decode` beside `def
forward`) runs each by name over the same weights and state:
`model.entry("decode")(tokens=..., pos=...)` or `model.decode(...)`.

The compiler runs in this process (the extension module `seqc._seqc`,
imported when something compiles); a compiled model is a shared library that
carries the seqc runtime. A call of a model binds, runs and wraps its outputs
in the extension module `seqc._instance`; the rest of the runtime's C API is
called through ctypes (`seqc._runtime`).
"""

import builtins
import collections
import collections.abc
import ctypes
import os
import shutil
import tempfile
import threading

import numpy as np

from . import _instance
from . import _runtime
from ._runtime import DTYPES

__all__ = [
    "CompileError", "Entry", "Error", "FileError", "InvalidArgumentError",
    "Model",
    "Module", "OutOfMemoryError",
    "RuntimeError", "ValueInfo", "compile", "emit", "load_library",
]

STAGES = ("seq", "manifest", "linalg", "llvm-mlir", "ptx", "memory-plan",
          "llvm-ir", "asm", "header")


class Error(Exception):
    """Every error seqc raises."""


class CompileError(Error):
    """A `.seq` model did not compile. `file`, `line`, `column` and
    `message` locate the first error (line and column are 0 when it has no
    location); `diagnostics` lists every diagnostic as (severity, file, line,
    column, message); str() is the compiler's output, as the CLI prints it.
    """

    def __init__(self, log, diagnostics):
        self.log = log
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d[0] == "error"] or [
            ("error", "", 0, 0, "compilation failed")]
        _, self.file, self.line, self.column, self.message = errors[0]
        super().__init__(log.strip() or self.message)


class RuntimeError(Error, builtins.RuntimeError):
    """The runtime refused a call or a run failed; `code` is the C API's
    status code (seqc._runtime.*), the message the runtime's."""

    def __init__(self, message, code=_runtime.FAILED_PRECONDITION):
        super().__init__(message)
        self.code = code


class InvalidArgumentError(RuntimeError, builtins.ValueError):
    """A bad argument: a wrong dtype, rank or shape, a value out of its
    range, an unknown name, a malformed file."""


class FileError(RuntimeError, builtins.OSError):
    """A file could not be opened, mapped, read or written."""


class OutOfMemoryError(RuntimeError, builtins.MemoryError):
    """A run needed more memory than the system or the limit gives."""


def _error_for_status(code, message):
    if code in (_runtime.INVALID_ARGUMENT, _runtime.NOT_FOUND,
                _runtime.INVALID_FILE):
        return InvalidArgumentError(message, code)
    if code == _runtime.OUT_OF_MEMORY:
        return OutOfMemoryError(message, code)
    if code == _runtime.IO_ERROR:
        return FileError(message, code)
    return RuntimeError(message, code)


def _extension():
    """The compiler (loads libMLIR and libLLVM, so only when needed)."""
    from . import _seqc
    return _seqc


def _runtime_dir():
    packaged = os.path.join(os.path.dirname(__file__), "lib")
    if os.path.exists(os.path.join(packaged, "libseqc_runtime.a")):
        return packaged
    return os.environ.get("SEQC_RUNTIME_DIR") or _extension().DEFAULT_RUNTIME_DIR


def _read_source(source):
    """(text, name) of a path or of .seq text."""
    if isinstance(source, os.PathLike) or (
            isinstance(source, str) and "\n" not in source
            and source.endswith(".seq")):
        path = os.fspath(source)
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    if not isinstance(source, str):
        raise TypeError("source must be a path or the text of a .seq model, "
                        "not %s" % type(source).__name__)
    return source, "<string>"


def _compile(source, emit, output_path, target, opt_level, defines, mcpu,
             mattr, remarks, gpu_interpret, entry):
    text, name = _read_source(source)
    pairs = [(str(k), str(v)) for k, v in (defines or {}).items()]
    if entry is not None and not isinstance(entry, str):
        raise TypeError("entry must be the name of an entry (a str), not %s"
                        % type(entry).__name__)
    result = _extension().compile(
        source=text, source_name=name, emit=emit, output_path=output_path,
        target=target, opt_level=int(opt_level), defines=pairs,
        mcpu=mcpu or "", mattr=mattr or "", remarks=bool(remarks),
        gpu_interpret=bool(gpu_interpret), runtime_dir=_runtime_dir(),
        entry=entry or "")
    if not result["ok"]:
        raise CompileError(result["log"], result["diagnostics"])
    return result


def emit(source, stage="seq", *, target="cpu", opt_level=3, defines=None,
         mcpu=None, mattr=None, remarks=False, entry=None):
    """Returns the text of one stage of compiling `source` (a path or .seq
    text): "seq", "manifest", "linalg", "llvm-mlir", "ptx", "memory-plan",
    "llvm-ir", "asm" or "header" (as `seqc --emit`). A model with several
    entries prints each entry's module after a `// entry '<name>'` line (the
    manifest lists them under "entries"); `entry="decode"` gives that entry
    alone, as its one function (seqc's --entry)."""
    if stage not in STAGES:
        raise builtins.ValueError("stage must be one of %s, got %r" %
                                  (", ".join(STAGES), stage))
    result = _compile(source, stage, "", target, opt_level, defines, mcpu,
                      mattr, remarks, False, entry)
    return result["text"].decode("utf-8")


def compile(source, *, target="cpu", opt_level=3, defines=None, mcpu=None,
            mattr=None, remarks=False, gpu_interpret=False, entry=None):
    """Compiles `source` (a path to a .seq file or its text) to a shared
    library and returns the Module. `defines` overrides hyperparameters
    (seqc's -D); `mattr` and `mcpu` choose the CPU as seqc's flags do (the
    host by default). Every entry of a model with several (`def prefill`,
    `def decode`) is compiled, as `seqc -o lib.so` does (Model.entries,
    Model.entry); `entry="decode"` compiles that entry alone, as the model's
    one function (seqc's --entry). Raises CompileError."""
    directory = tempfile.mkdtemp(prefix="seqc-")
    path = os.path.join(directory, "libmodel.so")
    try:
        result = _compile(source, "shared-library", path, target, opt_level,
                          defines, mcpu, mattr, remarks, gpu_interpret, entry)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    module = Module(path, _owned_dir=directory)
    module.log = result["log"]
    return module


def load_library(path):
    """A Module from a shared library that `seqc -o lib.so` or
    Module.save wrote."""
    return Module(os.fspath(path))


ValueInfo = collections.namedtuple("ValueInfo", "name dtype shape")
ValueInfo.__doc__ = ("A declared input, output, parameter or state: dtype as "
                     "the manifest spells it, shape with ints and symbolic "
                     "names.")


class Module:
    """A compiled model: a shared library. `load` makes instances."""

    def __init__(self, path, _owned_dir=None):
        self.path = path
        self.log = ""
        self._owned_dir = _owned_dir
        self._api = _runtime.Api(path)
        # The same library's functions, for the per-call path.
        self._runtime = _instance.Runtime(self._api.lib._handle,
                                          _error_for_status, _as_array,
                                          _to_torch)

    def save(self, path):
        """Copies the library to `path` (load it back with
        seqc.load_library)."""
        shutil.copyfile(self.path, os.fspath(path))

    def load(self, weights=None, *, random_weights=None, skip_unused=False,
             skip=(), name_table=None):
        """A new instance. `weights` is a safetensors file, a sharded
        checkpoint's index or directory, a GGUF file, or a dict of arrays by
        parameter name; `random_weights=seed` fills them instead.
        `skip_unused` and `skip` (fnmatch patterns) skip tensors that are not
        parameters, as the model executable's --skip-unused and --skip do;
        `name_table` maps GGUF names (its --gguf-names). Model.clone makes
        more instances over the same weights."""
        return Model(self, weights, random_weights, skip_unused, skip,
                     name_table)

    def __del__(self):
        if getattr(self, "_owned_dir", None):
            shutil.rmtree(self._owned_dir, ignore_errors=True)


def _as_array(value):
    """A NumPy view of `value` (an array, a CPU tensor, a DLPack producer or
    a sequence), without a copy where one is not needed."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, builtins.RuntimeError, BufferError) as error:
            if type(value).__module__.startswith("torch"):
                raise InvalidArgumentError(
                    "cannot read the tensor without a copy (%s): move it to "
                    "the CPU with .cpu() (and .detach())" % error,
                    _runtime.INVALID_ARGUMENT) from None
    return np.asarray(value)


def _to_torch(array):
    """A PyTorch tensor over `array`'s memory (torch.from_numpy)."""
    try:
        import torch
    except ImportError:
        raise Error("as_torch=True needs PyTorch (import torch "
                    "failed)") from None
    return torch.from_numpy(array)


# numpy dtype -> seqc_dtype code (bf16 has no numpy type of its own).
_CODES = {np.dtype(np_dtype): code for code, (_, np_dtype) in DTYPES.items()
          if code != 3 and np_dtype}


def _dtype_code(array, what):
    code = _CODES.get(array.dtype)
    if code is None:
        raise InvalidArgumentError(
            "%s: dtype %s is not one seqc takes (float32, float64, float16, "
            "int32, int64)" % (what, array.dtype), _runtime.INVALID_ARGUMENT)
    return code


def _tensor_of(array, code):
    """`array` as a seqc_tensor."""
    if array.ndim > _runtime.MAX_RANK:
        raise InvalidArgumentError("rank %d is more than %d" %
                                   (array.ndim, _runtime.MAX_RANK))
    tensor = _runtime.Tensor()
    tensor.dtype = code
    tensor.rank = array.ndim
    tensor.shape[:array.ndim] = array.shape
    tensor.data = array.__array_interface__["data"][0] if array.size else None
    return tensor


class _Runs:
    """The calls of one entry of a model instance: `self._model` is the
    Model, `self._entry` the entry's name."""

    def set_input(self, name, value):
        """Binds input `name`; the data is used in place when it is
        C-contiguous, of the input's dtype and aligned to its element size
        (then the array must not change until the run returns), else copied.
        Returns True when it is used in place."""
        return self._bind(name, value)

    def input_pointer(self, name):
        """The address of the data bound to input `name` (to check that an
        array is used in place)."""
        model = self._model
        tensor = _runtime.Tensor()
        with model._lock:
            handle = model._select(self._entry)
            model._api.check(model._api.model_get_input(
                handle, name.encode(), ctypes.byref(tensor)))
        return tensor.data or 0

    def run(self):
        """Runs the entry on the inputs bound with set_input."""
        self._run()

    def output(self, name, as_torch=False):
        """Output `name` of the entry's last run as a NumPy array (a PyTorch
        tensor with as_torch) that owns the runtime's storage: no copy, and
        the next run does not change it."""
        array = self._output(name)
        return _to_torch(array) if as_torch else array


class Entry(_Runs, _instance.Instance):
    """One entry of a model instance (Model.entry): `def decode` of a
    decoder. It runs over its Model's weights and state (the KV caches, the
    recurrent state that `prefill` fills and `decode` extends), so that the
    Model and its entries are one instance, and one call runs at a time.

    entry(*args, as_torch=False, **inputs) runs it as calling a Model runs
    the selected entry; `inputs`, `outputs` and `dims` are the entry's, the
    others the Model's (`entry.model`)."""

    def __init__(self, model, name):
        self.model = model
        self._model = model
        self._entry = name
        self.name = name
        self.inputs, self.outputs, self.Outputs, self.dims = (
            model._entry_info(name))
        self._attach(model._module._runtime, model._handle.value,
                     "%s.%s" % (model.name, name),
                     name if len(model.entries) > 1 else "",
                     [i.name for i in self.inputs],
                     [o.name for o in self.outputs], self.Outputs,
                     model._lock, self.dims._sizes)

    def __repr__(self):
        return "<seqc.Entry %s.%s>" % (self.model.name, self.name)


class Model(_Runs, _instance.Instance):
    """An instance of a compiled model: bound weights, inputs, state and the
    last outputs. Instances run in parallel from threads; one instance runs
    one call at a time.

    model(*args, as_torch=False, **inputs) runs the selected entry of the
    model (with the GIL released) on `inputs` by name (or `args`, in
    manifest order) and returns the outputs as a named tuple of NumPy arrays
    (PyTorch tensors with as_torch). The call is the extension's
    (seqc._instance.Instance): inputs used in place as set_input binds them,
    outputs as `output` returns them.

    A model with several entries (`def forward`, `def prefill`, `def
    decode`; `entries` lists them, the default first) runs each over the
    same weights and state: `model.entry("decode")` (or `model.decode`, when
    no attribute of the Model has the entry's name) is that entry, called as
    the model is; `select_entry` chooses the one that calling the model
    itself runs (and that `inputs`, `outputs` and `dims` describe)."""

    def __init__(self, module, weights, random_weights, skip_unused, skip,
                 name_table=None, _handle=None):
        self._module = module
        self._api = module._api
        handle = _handle
        if handle is None:
            handle = ctypes.c_void_p()
            self._api.check(self._api.model_load(ctypes.byref(handle)))
        self._handle = handle
        # One call at a time: runs, binds and generation hold it.
        self._lock = threading.Lock()
        self._model = self
        self.name = self._api.model_name(handle).decode()
        self.entries = tuple(
            self._api.model_entry_name(handle, i).decode()
            for i in range(self._api.model_num_entries(handle)))
        # The views of the entries (Model.entry), made when first asked
        # for, and what describes each entry (_entry_info).
        self._views = {}
        self._info = {}
        self._entry = None
        self.params = self._infos(_runtime.VALUE_PARAM)
        self.state = self._infos(_runtime.VALUE_STATE)
        self.skipped = []
        self.dequantized = []
        self._attach_entry(self.entries[0])
        if weights is not None and random_weights is not None:
            raise builtins.ValueError(
                "give weights or random_weights, not both")
        if random_weights is not None:
            self._api.check(self._api.model_random_weights(
                handle, int(random_weights)))
        elif isinstance(weights, dict):
            self.set_params(weights)
        elif weights is not None:
            self.load_weights(weights, skip_unused=skip_unused, skip=skip,
                              name_table=name_table)

    def _attach_entry(self, name):
        """Makes calls of the Model run entry `name` (the per-call path:
        binding, running, the output arrays)."""
        self.inputs, self.outputs, self.Outputs, self.dims = (
            self._entry_info(name))
        # A call in progress on another thread keeps the entry it began
        # with (the extension keeps every entry's path it attached).
        self._attach(self._module._runtime, self._handle.value,
                     self.name if name == self.entries[0] else
                     "%s.%s" % (self.name, name),
                     name if len(self.entries) > 1 else "",
                     [i.name for i in self.inputs],
                     [o.name for o in self.outputs], self.Outputs,
                     self._lock, self.dims._sizes)
        self._entry = name

    def _entry_info(self, name):
        """(inputs, outputs, the named tuple of the outputs, dims) of entry
        `name`, shared by its view and the Model: `dims` are the sizes set
        for the entry (seqc_model_set_dim before each of its calls)."""
        info = self._info.get(name)
        if info is None:
            inputs, outputs = self._describe(name)
            info = self._info[name] = (
                inputs, outputs,
                collections.namedtuple("Outputs", [o.name for o in outputs],
                                       rename=True),
                _Dims())
        return info

    def _select(self, name):
        """Selects entry `name` of the open instance (with the lock held);
        returns the handle. Raises InvalidArgumentError for an unknown
        name, listing the entries."""
        handle = self._ensure_open()
        self._api.check(self._api.model_select_entry(handle, name.encode()))
        return handle

    def _describe(self, name):
        """(inputs, outputs) of entry `name`."""
        with self._lock:
            self._select(name)
            return (self._infos(_runtime.VALUE_INPUT),
                    self._infos(_runtime.VALUE_OUTPUT))

    def entry(self, name):
        """Entry `name` of the model (a seqc.Entry): calling it runs that
        entry over this instance's weights and state, as calling the Model
        runs the selected entry. Raises InvalidArgumentError naming the
        entries when the model has no entry `name`."""
        view = self._views.get(name)
        if view is None:
            if not isinstance(name, str):
                raise TypeError("an entry is named by a str, not %s" %
                                type(name).__name__)
            view = self._views[name] = Entry(self, name)
        return view

    @property
    def selected_entry(self):
        """The entry that calling the model runs (select_entry)."""
        return self._entry

    def select_entry(self, name):
        """Makes calls of the model (`model(...)`, set_input, run, output)
        run entry `name`; `inputs`, `outputs` and `dims` become its own.
        Each entry keeps its bound inputs and last outputs. Raises
        InvalidArgumentError naming the entries when the model has no entry
        `name`."""
        view = self.entry(name)
        self._attach_entry(view.name)

    def __getattr__(self, name):
        # model.decode(...): an entry, when nothing else has its name.
        entries = self.__dict__.get("entries", ())
        if name in entries:
            return self.entry(name)
        raise AttributeError("%r object has no attribute %r (entries: %s)" %
                             (type(self).__name__, name,
                              ", ".join(entries) or "none"))

    def __dir__(self):
        return sorted(set(super().__dir__()) |
                      set(self.__dict__.get("entries", ())))

    def clone(self):
        """A new instance that shares this one's bound weights (the same
        bytes, seqc_model_clone) with its own inputs, outputs and state: one
        copy of the weights for an instance per thread. It runs the entry
        this one has selected."""
        handle = ctypes.c_void_p()
        with self._lock:
            self._api.check(self._api.model_clone(self._ensure_open(),
                                                  ctypes.byref(handle)))
        clone = Model(self._module, None, None, False, (), _handle=handle)
        if self._entry != clone._entry:
            clone.select_entry(self._entry)
        return clone

    @property
    def manifest(self):
        return self._api.model_manifest(self._ensure_open()).decode()

    def _ensure_open(self):
        if not self._handle:
            raise RuntimeError("the model is closed")
        return self._handle

    def _infos(self, kind):
        infos = []
        for i in range(self._api.model_count(self._handle, kind)):
            info = _runtime.ValueInfo()
            self._api.check(self._api.model_info(self._handle, kind, i,
                                                 ctypes.byref(info)))
            shape = tuple(
                info.shape[d] if info.shape[d] >= 0 else
                info.dim_names[d].decode() for d in range(info.rank))
            infos.append(ValueInfo(info.name.decode(),
                                   DTYPES[info.dtype][0], shape))
        return infos

    # Weights

    def load_weights(self, path, *, skip_unused=False, skip=(),
                     name_table=None):
        """Binds every parameter from a checkpoint (see Module.load).
        `name_table` maps a GGUF file's tensor names to the parameters
        (the text of the model executable's --gguf-names file). Tensors
        skipped and GGUF tensors dequantized on load are listed in
        `skipped` and `dequantized`."""
        options = _runtime.WeightsOptions()
        options.skip_unused = 1 if skip_unused else 0
        patterns = [p.encode() for p in skip]
        array = (ctypes.c_char_p * max(1, len(patterns)))(*patterns)
        options.skip_patterns = ctypes.cast(array,
                                            ctypes.POINTER(ctypes.c_char_p))
        options.num_skip_patterns = len(patterns)
        skipped = []

        def on_skipped(_, name, dtype, rank, shape):
            skipped.append((name.decode(), dtype.decode(),
                            tuple(shape[i] for i in range(rank))))

        options.on_skipped = _runtime.SKIPPED_FN(on_skipped)
        options.name_table = name_table.encode() if name_table else None
        dequantized = []

        def on_dequantized(_, tensor, param, ggml_type, dtype):
            dequantized.append((tensor.decode(), param.decode(),
                                ggml_type.decode(), DTYPES[dtype][0]))

        options.on_dequantized = _runtime.DEQUANTIZED_FN(on_dequantized)
        self._api.check(self._api.model_load_weights_with(
            self._ensure_open(), os.fsencode(path), ctypes.byref(options)))
        self.skipped = skipped
        self.dequantized = dequantized

    def set_params(self, params):
        """Binds parameters from a dict of arrays (copied)."""
        for name, value in params.items():
            array = np.ascontiguousarray(_as_array(value))
            what = "parameter '%s'" % name
            code = _dtype_code(array, what)
            self._api.check(self._api.model_set_param(
                self._ensure_open(), name.encode(),
                ctypes.byref(_tensor_of(array, code))))

    def save_weights(self, path):
        self._api.check(self._api.model_save_weights(self._ensure_open(),
                                                      os.fsencode(path)))

    # Running

    def param_pointer(self, name):
        """The address of parameter `name`'s bytes (clones share them)."""
        tensor = _runtime.Tensor()
        self._api.check(self._api.model_get_param(
            self._ensure_open(), name.encode(), ctypes.byref(tensor)))
        return tensor.data or 0

    # State

    def reset_state(self):
        self._api.check(self._api.model_reset_state(self._ensure_open()))

    def copy_state_row(self, src, dst):
        self._api.check(self._api.model_copy_state_row(
            self._ensure_open(), int(src), int(dst)))

    def generate(self, input_ids, max_new_tokens=16, *, temperature=0.0,
                 top_k=0, top_p=1.0, repetition_penalty=1.0, seed=0,
                 stop=(), stream=None):
        """Continues each prompt in `input_ids` (a list of id lists, or one
        list) with the runtime's seqc_generate; returns the new ids per
        prompt (one list for one prompt). A model with `prefill` and
        `decode` entries runs the prompts through prefill once and each new
        token through decode (`last_generate_stats["cached"]`); else the
        selected entry's whole prefix per token. `stream(row, token)` is
        called for each token as it is chosen; returning True stops that
        row."""
        single = len(input_ids) > 0 and np.isscalar(input_ids[0])
        prompts = [input_ids] if single else list(input_ids)
        if not prompts:
            raise InvalidArgumentError("no prompts", _runtime.INVALID_ARGUMENT)
        arrays = [np.ascontiguousarray(np.asarray(p, dtype=np.int32))
                  for p in prompts]
        pointers = (ctypes.POINTER(ctypes.c_int32) * len(arrays))(*[
            a.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)) for a in arrays])
        lengths = (ctypes.c_int64 * len(arrays))(*[a.size for a in arrays])
        options = _runtime.GenerateOptions()
        self._api.generate_options_init(ctypes.byref(options))
        options.max_new_tokens = int(max_new_tokens)
        options.temperature = float(temperature)
        options.top_k = int(top_k)
        options.top_p = float(top_p)
        options.repetition_penalty = float(repetition_penalty)
        options.seed = int(seed)
        stops = (ctypes.c_int32 * max(1, len(stop)))(*stop)
        options.stop_ids = ctypes.cast(stops, ctypes.POINTER(ctypes.c_int32))
        options.num_stop_ids = len(stop)
        errors = []

        def callback(row, token, _):
            try:
                return 1 if stream(row, token) else 0
            except BaseException as error:  # stop everything, re-raise below
                errors.append(error)
                return 1

        if stream is not None:
            options.callback = _runtime.TOKEN_FN(callback)
        width = max(0, int(max_new_tokens))
        out = (ctypes.c_int32 * max(1, len(arrays) * width))()
        out_lengths = (ctypes.c_int64 * len(arrays))()
        stats = _runtime.GenerateStats()
        with self._lock:
            self._api.check(self._api.generate(
                self._select(self._entry), len(arrays), pointers, lengths,
                ctypes.byref(options), out, out_lengths, ctypes.byref(stats)))
        if errors:
            raise errors[0]
        self.last_generate_stats = {
            field: getattr(stats, field) for field, _ in stats._fields_}
        rows = [list(out[r * width:r * width + out_lengths[r]])
                for r in range(len(arrays))]
        return rows[0] if single else rows

    def close(self):
        """Frees the instance (after a call in progress on another thread
        returns); later calls raise seqc.RuntimeError."""
        if not getattr(self, "_handle", None):
            return
        with self._lock:
            for view in self.__dict__.get("_views", {}).values():
                view._close()
            self._close()
            self._api.model_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _Dims(collections.abc.MutableMapping):
    """Sizes of symbolic dimensions set before a run when no input fixes
    them (seqc_model_set_dim): `model.dims["n"] = 128`. Each call of the
    model sets them (seqc._instance.Instance reads the dict)."""

    def __init__(self):
        self._sizes = {}

    def __getitem__(self, name):
        return self._sizes[name]

    def __setitem__(self, name, size):
        self._sizes[name] = int(size)

    def __delitem__(self, name):
        del self._sizes[name]

    def __iter__(self):
        return iter(self._sizes)

    def __len__(self):
        return len(self._sizes)


from . import hf  # noqa: E402  (seqc.hf uses the names above)
