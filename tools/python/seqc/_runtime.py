"""ctypes declarations of the runtime's C API (runtime/include/seqc_runtime.h).

Every model shared library that seqc links carries the whole runtime, so a
library is bound through its own copy of these functions: `Api(path)` opens
the library (RTLD_LOCAL: two models never share a runtime's globals by
accident) and declares the functions the package calls. ctypes releases the
GIL around each foreign call, so instances run in parallel from threads.
A model call (bind, run, outputs) goes through the extension instead
(seqc._instance.Instance), which resolves the same library's functions from
`Api.lib._handle`.
"""

import ctypes

MAX_RANK = 8

# seqc_status_code
OK = 0
INVALID_ARGUMENT = 1
NOT_FOUND = 2
IO_ERROR = 3
INVALID_FILE = 4
INVALID_MANIFEST = 5
FAILED_PRECONDITION = 6
OUT_OF_MEMORY = 7
MODEL_ERROR = 8
UNAVAILABLE = 9

# seqc_value_kind
VALUE_INPUT = 0
VALUE_OUTPUT = 1
VALUE_PARAM = 2
VALUE_STATE = 3

# seqc_dtype -> (manifest name, numpy dtype string); bf16 has no numpy type
# and is exchanged as its bits (uint16); the block formats of quantized
# weights (`weight_format=`) have none.
DTYPES = {
    0: ("f32", "<f4"),
    1: ("f64", "<f8"),
    2: ("f16", "<f2"),
    3: ("bf16", "<u2"),
    4: ("i32", "<i4"),
    5: ("i64", "<i8"),
    6: ("q8_0", None),
    7: ("q4_0", None),
    8: ("q4_1", None),
    9: ("int8", None),
}


class Tensor(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("data", ctypes.c_void_p),
    ]


class ValueInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * MAX_RANK),
        ("dim_names", ctypes.c_char_p * MAX_RANK),
    ]


SKIPPED_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p,
                              ctypes.c_char_p, ctypes.c_int32,
                              ctypes.POINTER(ctypes.c_int64))


DEQUANTIZED_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p,
                                  ctypes.c_char_p, ctypes.c_char_p,
                                  ctypes.c_int32)


class WeightsOptions(ctypes.Structure):
    _fields_ = [
        ("skip_unused", ctypes.c_int32),
        ("skip_patterns", ctypes.POINTER(ctypes.c_char_p)),
        ("num_skip_patterns", ctypes.c_size_t),
        ("on_skipped", SKIPPED_FN),
        ("user_data", ctypes.c_void_p),
        ("name_table", ctypes.c_char_p),
        ("on_dequantized", DEQUANTIZED_FN),
    ]


TOKEN_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64, ctypes.c_int32,
                            ctypes.c_void_p)


class GenerateOptions(ctypes.Structure):
    _fields_ = [
        ("max_new_tokens", ctypes.c_int64),
        ("temperature", ctypes.c_double),
        ("top_k", ctypes.c_int64),
        ("top_p", ctypes.c_double),
        ("repetition_penalty", ctypes.c_double),
        ("seed", ctypes.c_uint64),
        ("stop_ids", ctypes.POINTER(ctypes.c_int32)),
        ("num_stop_ids", ctypes.c_size_t),
        ("callback", TOKEN_FN),
        ("user_data", ctypes.c_void_p),
    ]


class GenerateStats(ctypes.Structure):
    _fields_ = [
        ("cached", ctypes.c_int32),
        ("prefill_tokens", ctypes.c_int64),
        ("prefill_seconds", ctypes.c_double),
        ("decode_tokens", ctypes.c_int64),
        ("decode_seconds", ctypes.c_double),
    ]


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_STATUS = ctypes.c_void_p

# name: (result type, argument types)
_FUNCTIONS = {
    "seqc_status_get_code": (ctypes.c_int, [_STATUS]),
    "seqc_status_message": (ctypes.c_char_p, [_STATUS]),
    "seqc_status_free": (None, [_STATUS]),
    "seqc_model_load": (_STATUS, [ctypes.POINTER(_P)]),
    "seqc_model_clone": (_STATUS, [_P, ctypes.POINTER(_P)]),
    "seqc_model_free": (None, [_P]),
    "seqc_model_name": (ctypes.c_char_p, [_P]),
    "seqc_model_manifest": (ctypes.c_char_p, [_P]),
    "seqc_model_count": (ctypes.c_size_t, [_P, ctypes.c_int]),
    "seqc_model_info": (_STATUS, [_P, ctypes.c_int, ctypes.c_size_t,
                                  ctypes.POINTER(ValueInfo)]),
    "seqc_model_set_dim": (_STATUS, [_P, _S, ctypes.c_int64]),
    "seqc_model_get_dim": (_STATUS, [_P, _S, ctypes.POINTER(ctypes.c_int64)]),
    "seqc_model_load_weights_with": (_STATUS, [_P, _S,
                                               ctypes.POINTER(WeightsOptions)]),
    "seqc_model_random_weights": (_STATUS, [_P, ctypes.c_uint64]),
    "seqc_model_set_param": (_STATUS, [_P, _S, ctypes.POINTER(Tensor)]),
    "seqc_model_get_param": (_STATUS, [_P, _S, ctypes.POINTER(Tensor)]),
    "seqc_model_save_weights": (_STATUS, [_P, _S]),
    "seqc_model_set_input": (_STATUS, [_P, _S, ctypes.POINTER(Tensor)]),
    "seqc_model_set_input_view": (_STATUS, [_P, _S, ctypes.POINTER(Tensor),
                                            ctypes.POINTER(ctypes.c_int32)]),
    "seqc_model_get_input": (_STATUS, [_P, _S, ctypes.POINTER(Tensor)]),
    "seqc_model_reset_inputs": (None, [_P]),
    "seqc_model_num_state": (ctypes.c_int64, [_P]),
    "seqc_model_reset_state": (_STATUS, [_P]),
    "seqc_model_copy_state_row": (_STATUS, [_P, ctypes.c_int64,
                                            ctypes.c_int64]),
    "seqc_model_num_entries": (ctypes.c_int64, [_P]),
    "seqc_model_entry_name": (ctypes.c_char_p, [_P, ctypes.c_int64]),
    "seqc_model_selected_entry": (ctypes.c_char_p, [_P]),
    "seqc_model_select_entry": (_STATUS, [_P, _S]),
    "seqc_model_run": (_STATUS, [_P]),
    "seqc_model_retain_output": (_STATUS, [_P, _S, ctypes.POINTER(Tensor),
                                           ctypes.POINTER(_P)]),
    "seqc_buffer_ref_release": (None, [_P]),
    "seqc_set_num_threads": (_STATUS, [ctypes.c_int32]),
    "seqc_max_threads": (ctypes.c_int32, []),
    "seqc_generate_options_init": (None, [ctypes.POINTER(GenerateOptions)]),
    "seqc_generate": (_STATUS, [_P, ctypes.c_int64,
                                ctypes.POINTER(ctypes.POINTER(ctypes.c_int32)),
                                ctypes.POINTER(ctypes.c_int64),
                                ctypes.POINTER(GenerateOptions),
                                ctypes.POINTER(ctypes.c_int32),
                                ctypes.POINTER(ctypes.c_int64),
                                ctypes.POINTER(GenerateStats)]),
}


class Api:
    """The runtime functions of one model library."""

    def __init__(self, path):
        self.path = path
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        for name, (restype, argtypes) in _FUNCTIONS.items():
            function = getattr(self.lib, name)
            function.restype = restype
            function.argtypes = argtypes
            setattr(self, name[len("seqc_"):], function)

    def check(self, status):
        """Raises the exception of a non-NULL status (and frees it)."""
        if not status:
            return
        code = self.status_get_code(status)
        message = self.status_message(status).decode("utf-8", "replace")
        self.status_free(status)
        from . import _error_for_status
        raise _error_for_status(code, message)
