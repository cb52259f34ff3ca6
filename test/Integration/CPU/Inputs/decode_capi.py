"""The C API of a compiled model's shared library through ctypes, as the
decode tests use it (kv_decode.py, recurrent_decode.py, linear_decode.py):
`open_library` declares the functions; `status_text` and `check` read a
status of the library opened last; `set_input` and `get_output` move numpy
arrays in and out of a model of it."""
import ctypes
import sys

import numpy as np

vp, cp, i64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64
MAX_RANK = 8


class Tensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK),
                ("data", ctypes.c_void_p)]


_lib = None


def open_library(path):
    global _lib
    lib = ctypes.CDLL(path)
    for name, args in {
            "seqc_model_load": [ctypes.POINTER(vp)],
            "seqc_model_random_weights": [vp, ctypes.c_uint64],
            "seqc_model_save_weights": [vp, cp],
            "seqc_model_set_input": [vp, cp, ctypes.POINTER(Tensor)],
            "seqc_model_run": [vp],
            "seqc_model_get_output": [vp, cp, ctypes.POINTER(Tensor)],
            "seqc_model_reset_state": [vp],
            "seqc_model_copy_state_row": [vp, i64, i64],
            "seqc_status_message": [vp],
            "seqc_status_free": [vp]}.items():
        getattr(lib, name).argtypes = args
        getattr(lib, name).restype = vp
    lib.seqc_status_message.restype = cp
    lib.seqc_status_free.restype = None
    lib.seqc_model_reset_inputs.argtypes = [vp]
    lib.seqc_model_reset_inputs.restype = None
    lib.seqc_model_num_state.argtypes = [vp]
    lib.seqc_model_num_state.restype = i64
    lib.seqc_model_free.argtypes = [vp]
    lib.seqc_model_free.restype = None
    _lib = lib
    return lib


def status_text(status):
    """The message of `status` (then freed), None for success."""
    if not status:
        return None
    text = _lib.seqc_status_message(status).decode()
    _lib.seqc_status_free(status)
    return text


def check(status, what):
    text = status_text(status)
    if text:
        sys.exit(f"{what}: {text}")


# seqc_dtype codes (runtime/include/seqc_runtime.h) of the arrays the tests
# pass.
_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.int32): 4}


def set_input(model, name, array, keep, dtype=np.int32):
    """Binds `array`, converted to `dtype` (i32 or f32), to the input `name`
    of `model`; `keep` holds the converted copy until the run. Returns the
    error text, or None."""
    array = np.ascontiguousarray(array, dtype=dtype)
    keep.append(array)
    t = Tensor()
    t.dtype = _DTYPES[array.dtype]
    t.rank = array.ndim
    for d, size in enumerate(array.shape):
        t.shape[d] = size
    t.data = array.ctypes.data
    return status_text(_lib.seqc_model_set_input(model, name.encode(),
                                                  ctypes.byref(t)))


def get_output(model, name):
    """A copy of the f32 output `name` of the last run of `model`."""
    t = Tensor()
    check(_lib.seqc_model_get_output(model, name.encode(), ctypes.byref(t)),
          name)
    shape = tuple(t.shape[d] for d in range(t.rank))
    n = int(np.prod(shape))
    return np.ctypeslib.as_array(
        (ctypes.c_float * n).from_address(t.data)).reshape(shape).copy()
