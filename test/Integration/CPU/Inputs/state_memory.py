"""state_memory.py LIBDECODE.so: the state of a compiled
examples/gpt_decode.seq (its KV caches) counts against the memory limit
(seqc_set_memory_limit). A batch whose caches do not fit is refused before
the run with SEQC_STATUS_OUT_OF_MEMORY naming the state member and its
size; the instance stays usable: a smaller batch runs under the same
limit, and the large one once the limit is raised."""
import ctypes
import sys

import numpy as np

from decode_capi import check, open_library, set_input, status_text, vp

lib = open_library(sys.argv[1])
lib.seqc_set_memory_limit.argtypes = [ctypes.c_uint64]
lib.seqc_set_memory_limit.restype = None
lib.seqc_status_get_code.argtypes = [vp]
lib.seqc_status_get_code.restype = ctypes.c_int

model = vp()
check(lib.seqc_model_load(ctypes.byref(model)), "load")
check(lib.seqc_model_random_weights(model, 5), "random weights")
keep = []


def bind(name, array):
    check(set_input(model, name, array, keep), name)


def run(batch):
    """(status code, message) of one decode step of `batch` rows at 0."""
    lib.seqc_model_reset_inputs(model)
    keep.clear()
    bind("tokens", np.ones((batch, 1)))
    bind("pos", np.zeros(batch))
    status = lib.seqc_model_run(model)
    if not status:
        return 0, "ok"
    code = lib.seqc_status_get_code(status)
    return code, status_text(status)


# Each cache of a 64-row batch is 64 x 2 x 256 x 16 f32 = 2 MiB; four of
# them do not fit 5 MiB.
lib.seqc_set_memory_limit(5 << 20)
code, text = run(64)
print("big batch:", code, text)
print("small batch:", *run(2))
lib.seqc_set_memory_limit(0)
print("no limit:", *run(64))
lib.seqc_model_free(model)
